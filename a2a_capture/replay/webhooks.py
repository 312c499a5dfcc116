"""The webhooks of a replay: a receiver of the replay's own, and the push configs pointed at it.

During a replay the agents send webhooks again, to the URL in each push config the client
sends. The recorded URL belonged to the recorded client's endpoint, which is not running now,
so replay listens on 127.0.0.1 (a free port, or where `--webhook-listen` says) and rewrites
each push config's URL to that address, keeping its path; each delivery becomes a webhook
block in the new capture.
"""

from __future__ import annotations

import json
import threading
import time
from urllib.parse import urlsplit, urlunsplit

import uvicorn

from a2a_capture import nesting
from a2a_capture.a2a import spec
from a2a_capture.capture.models import Exchange, ExchangeMeta, Request, Response, format_time
from a2a_capture.errors import WebhookError
from a2a_capture.replay.asgi import RequestStalled, answer_stalled, request_body, request_target


def point_push_configs(body: bytes, operation: str | None, receiver: str) -> tuple[bytes, list[tuple[str, str]]]:
    """``body`` with every push config's URL moved to ``receiver`` (scheme://host:port), path kept;
    and the (old, new) URLs it moved."""
    if b'"url"' not in body:
        return body, []
    try:
        data = nesting.loads(body)
    except (ValueError, UnicodeDecodeError):
        return body, []
    moved: list[tuple[str, str]] = []
    configs = list(_configs(data))
    if operation == "CreateTaskPushNotificationConfig" and isinstance(data, dict):
        configs.append(data.get("params", data) if "jsonrpc" in data else data)
    for config in configs:
        url = config.get("url") if isinstance(config, dict) else None
        if isinstance(url, str) and "://" in url:
            new = _moved(url, receiver)
            if new != url:
                config["url"] = new
                moved.append((url, new))
    if not moved:
        return body, []
    return json.dumps(data, ensure_ascii=False, separators=(",", ":")).encode(), moved


def _configs(value, depth: int = 0):
    if depth > 16:
        return
    if isinstance(value, dict):
        for key, child in value.items():
            if key in spec.PUSH_CONFIG_MEMBERS and isinstance(child, dict):
                yield child
            else:
                yield from _configs(child, depth + 1)
    elif isinstance(value, list):
        for child in value:
            yield from _configs(child, depth + 1)


def _moved(url: str, receiver: str) -> str:
    parts, base = urlsplit(url), urlsplit(receiver)
    return urlunsplit(parts._replace(scheme=base.scheme, netloc=base.netloc))


class Receiver:
    """Takes webhooks on 127.0.0.1 in a thread and keeps each as an exchange; answers as the
    recorded client's endpoint did (its first recorded answer), or 200. A webhook whose
    X-A2A-Notification-Token is not one of ``tokens`` (those replay gave the agents) gets a note."""

    def __init__(self, host: str = "127.0.0.1", port: int = 0, answer: Response | None = None,
                 tokens: set[str] | None = None) -> None:
        self.host, self.port = host, port
        self.answer = answer
        self.tokens = tokens if tokens is not None else set()
        self.received: list[Exchange] = []
        self._lock = threading.Lock()
        self._server: uvicorn.Server | None = None
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.port}"

    def __enter__(self) -> Receiver:
        config = uvicorn.Config(self._app, host=self.host, port=self.port, log_level="error", lifespan="off",
                                interface="asgi3")
        self._server = uvicorn.Server(config)
        self._server.install_signal_handlers = lambda: None  # a thread: the main one keeps Ctrl-C
        self._thread = threading.Thread(target=self._server.run, name="a2a-capture-webhooks", daemon=True)
        self._thread.start()
        deadline = time.monotonic() + 10
        while not self._server.started:
            if not self._thread.is_alive() or time.monotonic() > deadline:
                raise WebhookError(f"the webhook receiver cannot listen on {self.host}:{self.port or 'a free port'}")
            time.sleep(0.02)
        self.port = self._server.servers[0].sockets[0].getsockname()[1]
        return self

    def __exit__(self, *exc) -> None:
        if self._server is not None:
            self._server.should_exit = True
        if self._thread is not None:
            self._thread.join(10)

    def count(self) -> int:
        with self._lock:
            return len(self.received)

    def wait_for(self, count: int, seconds: float) -> None:
        """Until ``count`` webhooks have arrived, or ``seconds`` have passed."""
        deadline = time.monotonic() + seconds
        while self.count() < count and time.monotonic() < deadline:
            time.sleep(0.02)

    async def _app(self, scope, receive, send) -> None:
        if scope["type"] != "http":
            return
        started = time.time()
        try:
            body = await request_body(receive)
        except RequestStalled as error:
            await answer_stalled(send, error)
            return
        answer = self.answer or Response(status=200, reason="OK")
        headers = [(k.encode("latin-1"), v.encode("latin-1")) for k, v in answer.headers
                   if k.lower() == "content-type"] + [(b"content-length", str(len(answer.content)).encode())]
        await send({"type": "http.response.start", "status": answer.status, "headers": headers})
        await send({"type": "http.response.body", "body": answer.content})
        request_headers = [(k.decode("latin-1"), v.decode("latin-1")) for k, v in scope["headers"]]
        client = scope.get("client") or ("", 0)
        token = next((value for name, value in request_headers if name.lower() == "x-a2a-notification-token"), None)
        notes = []
        if self.tokens and token not in self.tokens:
            notes.append("replay's receiver: this webhook's X-A2A-Notification-Token is "
                         + ("missing" if token is None else "not the token replay gave the agent"))
        exchange = Exchange(
            number=0, title="webhook", webhook=True, notes=notes,
            request=Request(method=scope["method"], target=request_target(scope), headers=request_headers,
                            body=body),
            response=Response(status=answer.status, reason=answer.reason,
                              headers=[(k, v) for k, v in answer.headers if k.lower() == "content-type"],
                              body=answer.content),
            meta=ExchangeMeta(start=format_time(started), end=format_time(time.time()),
                              client=f"{client[0]}:{client[1]}", server=f"{self.host}:{self.port}"))
        with self._lock:
            self.received.append(exchange)
