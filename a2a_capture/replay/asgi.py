"""What the replay's small ASGI servers (mock agents, the webhook receiver) read from a request."""

from __future__ import annotations


async def request_body(receive) -> bytes:
    body = b""
    while True:
        message = await receive()
        body += message.get("body", b"")
        if not message.get("more_body"):
            return body


def request_target(scope) -> str:
    """The path and query as the client sent them."""
    target = scope["raw_path"].decode("latin-1")
    if scope.get("query_string"):
        target += "?" + scope["query_string"].decode("latin-1")
    return target
