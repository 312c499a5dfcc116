"""What the replay's small ASGI servers (mock agents, the webhook receiver) read from a request."""

from __future__ import annotations

import asyncio

#: seconds a request's body may pause before the server stops waiting for the rest (and answers 408)
STALL = 30.0


class RequestStalled(Exception):
    """The client sent part of a request's body and then nothing for ``STALL`` seconds."""


async def request_body(receive, stall: float | None = STALL) -> bytes:
    """The request's body, its pieces joined once (``+=`` copied all of it for each piece)."""
    pieces = []
    while True:
        try:
            message = await asyncio.wait_for(receive(), stall) if stall else await receive()
        except TimeoutError:
            raise RequestStalled(f"the request's body stalled for {stall:g} s") from None
        pieces.append(message.get("body", b""))
        if not message.get("more_body"):
            return b"".join(pieces)


async def answer_stalled(send, error: RequestStalled) -> None:
    """408 Request Timeout, and the connection closed: the rest of the body will not be read."""
    body = f"{error}; the server stopped waiting for the rest\n".encode()
    await send({"type": "http.response.start", "status": 408,
                "headers": [(b"content-type", b"text/plain"), (b"content-length", str(len(body)).encode()),
                            (b"connection", b"close")]})
    await send({"type": "http.response.body", "body": body})


def request_target(scope) -> str:
    """The path and query as the client sent them."""
    target = scope["raw_path"].decode("latin-1")
    if scope.get("query_string"):
        target += "?" + scope["query_string"].decode("latin-1")
    return target
