"""Turn a proxied HTTP flow into a capture exchange: exact bodies, every header, timing.

Works on mitmproxy's flow objects by duck typing, so the library does not import
mitmproxy; the addon and the flow-file converter both call it.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from datetime import UTC, datetime

from a2a_capture.a2a import spec
from a2a_capture.a2a.decode import decode, looks_like_card, rest_route
from a2a_capture.capture.models import Exchange, ExchangeMeta, Request, Response
from a2a_capture.capture.sse import parse as parse_sse
from a2a_capture.record.redact import Redactor


@dataclass
class StreamCopy:
    """What the addon kept of a streamed response: the chunks and when each arrived."""

    chunks: list[tuple[float, bytes]] = field(default_factory=list)

    def __call__(self, data: bytes) -> bytes:
        if data:
            self.chunks.append((_now(), data))
        return data

    @property
    def body(self) -> bytes:
        return b"".join(chunk for _, chunk in self.chunks)

    def event_times(self, start: float) -> list[float | None]:
        """Arrival time of each SSE frame: when the chunk that completed it came."""
        times: list[float | None] = []
        offset = 0
        ends = []
        for when, chunk in self.chunks:
            offset += len(chunk)
            ends.append((offset, when))
        for event in parse_sse(self.body):
            arrived = next((when for end, when in ends if end >= event.end), None)
            times.append(round(arrived - start, 6) if arrived is not None else None)
        return times


def _now() -> float:
    import time

    return time.time()


def timestamp(value: float | None) -> str | None:
    if not value:
        return None
    return datetime.fromtimestamp(value, UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def _address(peer) -> str | None:
    if not peer:
        return None
    host, port = peer[0], peer[1]
    return f"[{host}]:{port}" if ":" in str(host) else f"{host}:{port}"


def _headers(fields) -> list[tuple[str, str]]:
    return [(name.decode("latin-1"), value.decode("utf-8", "surrogateescape")) for name, value in fields]


def exchange_from_flow(flow, number: int, *, webhook: bool = False, stream: StreamCopy | None = None,
                       redactor: Redactor | None = None, notes: list[str] | None = None) -> Exchange:
    """The exchange a flow was, as the client saw it."""
    request = flow.request
    notes = list(notes or [])
    version = request.http_version
    if version not in ("HTTP/1.1", "HTTP/1.0"):
        notes.append(f"recorded over {version}; written as HTTP/1.1 text")
    headers = _headers(request.headers.fields)
    if not any(name.lower() == "host" for name, _ in headers):
        headers.insert(0, ("Host", request.host_header or request.pretty_host))
    target = request.path
    if flow.request.scheme == "https":
        notes.append(f"over TLS to {request.pretty_host}:{request.port}")
    body = request.raw_content or b""
    redacted: list[str] = []
    if redactor is not None:
        headers, removed = redactor.headers(headers)
        redacted += removed
        target, removed = redactor.target(target)
        redacted += removed
        body, removed = redactor.body(body, _content_type(headers))
        redacted += removed
    start = request.timestamp_start
    meta = ExchangeMeta(
        start=timestamp(start), client=_address(getattr(flow.client_conn, "peername", None)),
        server=_address(getattr(flow.server_conn, "peername", None) or getattr(flow.server_conn, "address", None)),
    )
    exchange_request = Request(method=request.method, target=target, headers=headers, body=body,
                               http_version="1.1" if version not in ("HTTP/1.0",) else "1.0")
    response = None
    if flow.response is not None:
        response, removed, end = _response(flow, stream, redactor, start)
        redacted += removed
        meta.end = timestamp(end)
    if flow.error is not None:
        notes.append(f"error: {flow.error.msg}")
        if meta.end is None:
            meta.end = timestamp(getattr(flow.error, "timestamp", None))
    meta.redacted = list(dict.fromkeys(redacted))
    exchange = Exchange(number=number, webhook=webhook, request=exchange_request, response=response,
                        meta=meta, notes=notes)
    exchange.title = title_for(exchange)
    return exchange


def _response(flow, stream: StreamCopy | None, redactor: Redactor | None, start: float):
    response = flow.response
    headers = _headers(response.headers.fields)
    body = stream.body if stream is not None else (response.raw_content or b"")
    times = stream.event_times(start) if stream is not None else []
    removed: list[str] = []
    if redactor is not None:
        headers, removed_headers = redactor.headers(headers)
        body, removed_body = redactor.body(body, _content_type(headers))
        removed = removed_headers + removed_body
    end = response.timestamp_end or (stream.chunks[-1][0] if stream and stream.chunks else None)
    result = Response(status=response.status_code, reason=response.reason or "", headers=headers, body=body,
                      http_version="1.1", event_times=times if _content_type(headers) == "text/event-stream" else [])
    return result, removed, end


def _content_type(headers: list[tuple[str, str]]) -> str:
    for name, value in headers:
        if name.lower() == "content-type":
            return value.split(";")[0].strip().lower()
    return ""


def title_for(exchange: Exchange) -> str:
    """A title that says what the exchange was: `discover test-runner`, `SendMessage`, `GET /tasks/{id}`."""
    if exchange.webhook:
        return "webhook"
    call = decode(exchange)
    if call.kind == "card":
        name = call.card.name if call.card is not None and call.card.name else call.agent or "agent"
        if not call.path.rstrip("/").endswith(spec.CARD_PATH):
            return f"discover {name} at {call.path}"
        return f"discover {name}"
    if call.kind == "jsonrpc":
        return call.rpc_method or "JSON-RPC (unreadable body)"
    if call.kind == "rest":
        found = rest_route(call.method, call.path)
        route = found[0].pattern if found else call.path
        return f"{call.method} {route}"
    return f"{call.method} {call.path}"


def is_webhook(request_headers: list[tuple[str, str]], body: bytes, push_urls: set[str], url: str) -> bool:
    """A request an agent sends to a client's push endpoint."""
    if url in push_urls:
        return True
    if any(name.lower() == "x-a2a-notification-token" for name, _ in request_headers):
        return True
    try:
        payload = json.loads(body) if body else None
    except (ValueError, UnicodeDecodeError):
        return False
    return (isinstance(payload, dict) and len(payload) == 1
            and next(iter(payload)) in ("task", "message", "statusUpdate", "artifactUpdate")
            and not looks_like_card(payload))


def push_urls_in(body: bytes) -> set[str]:
    """Push endpoints a request registers (inline in a message or as a push config)."""
    try:
        payload = json.loads(body) if body else None
    except (ValueError, UnicodeDecodeError):
        return set()
    found: set[str] = set()
    stack = [payload]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            for key, value in item.items():
                config = key in ("taskPushNotificationConfig", "pushNotificationConfig")
                if config and isinstance(value, dict) and isinstance(value.get("url"), str):
                    found.add(value["url"])
                if isinstance(value, (dict, list)):
                    stack.append(value)
            if "taskId" in item and isinstance(item.get("url"), str):  # a TaskPushNotificationConfig
                found.add(item["url"])
        elif isinstance(item, list):
            stack.extend(item)
    return found
