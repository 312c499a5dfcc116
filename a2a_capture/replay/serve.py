"""Server replay: answer as the agents of a capture did, as a mock agent on 127.0.0.1.

A request is matched to a recorded exchange of the same agent by operation (or method and
path, ids masked) and by body with volatile values masked; recorded exchanges are used in
order, once each while unused ones remain. A JSON-RPC answer carries the caller's own request
id. Streams are paced as recorded (or faster, or at once). A request that matches nothing gets
an A2A-shaped error that names the nearest recorded exchange and what differed.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from dataclasses import dataclass, field

from a2a_capture import nesting
from a2a_capture.a2a.decode import decode
from a2a_capture.capture.models import Capture, Exchange
from a2a_capture.record.rewrite import rewrite_card
from a2a_capture.replay.agents import recorded_agents
from a2a_capture.replay.asgi import STALL, RequestStalled, answer_stalled, request_body, request_target
from a2a_capture.replay.diff import signature
from a2a_capture.replay.grpc import refuse_grpc
from a2a_capture.replay.masking import mask_body

#: response headers the server sets itself
_HOP = frozenset({"content-length", "transfer-encoding", "connection", "keep-alive", "date", "server"})


@dataclass
class Recorded:
    exchange: Exchange
    signature: str
    body: str
    used: bool = False


@dataclass
class MockAgent:
    """The recorded side of one agent."""

    origin: str
    name: str
    recorded: list[Recorded] = field(default_factory=list)
    public: str = ""  # where this mock listens, for the cards it serves
    speed: float = 1.0  # 0: no delay
    #: what the mock's own words go through before they are sent or shown (a Masker's text: secrets masked)
    mask: Callable[[str], str] = str
    #: seconds a request's body may pause before the mock answers 408 (asgi.STALL)
    stall: float = STALL

    def match(self, method: str, target: str, body: bytes) -> tuple[Recorded | None, str]:
        """The recorded exchange for a request, or None and what the nearest one differed in."""
        probe = Exchange(number=0, request=_request(method, target, body, self.origin))
        wanted, masked = signature(probe), mask_body(body)
        same = [r for r in self.recorded if r.signature == wanted]
        for pool in ([r for r in same if not r.used], same):
            for candidate in pool:
                if candidate.body == masked:
                    return candidate, ""
        if same:
            nearest = same[0]
            difference = _first_difference(nearest.body, masked)
            return None, f"exchange {nearest.exchange.label} ({wanted}) has another body: {difference}"
        if self.recorded:
            recorded = ", ".join(sorted({r.signature for r in self.recorded}))
            return None, f"no recorded {wanted}; recorded here: {recorded}"
        return None, "nothing was recorded for this agent"

    async def __call__(self, scope, receive, send) -> None:
        if scope["type"] != "http":
            return
        try:
            body = await request_body(receive, self.stall)
        except RequestStalled as error:
            await answer_stalled(send, error)
            return
        target = request_target(scope)
        found, why = self.match(scope["method"], target, body)
        if found is None:
            await self._unmatched(send, scope["method"], target, body, why)
            return
        found.used = True
        await self._answer(send, found.exchange, body)

    async def _answer(self, send, exchange: Exchange, request_body: bytes) -> None:
        response = exchange.response
        if response is None:
            await _send(send, 502, [(b"content-type", b"text/plain")], b"the recorded call had no response")
            return
        request_id = _rpc_id(request_body)
        # the mock answers uncompressed, whatever the recording had
        headers = [(name.lower().encode("latin-1"), value.encode("utf-8", "surrogateescape"))
                   for name, value in response.headers if name.lower() not in _HOP | {"content-encoding"}]
        content = response.content
        if response.is_event_stream:
            await send({"type": "http.response.start", "status": response.status, "headers": headers})
            previous = 0.0
            for event in response.events:
                when = event.at if event.at is not None else previous
                if self.speed and when > previous:
                    await asyncio.sleep((when - previous) / self.speed)
                previous = max(previous, when)
                frame = content[event.start:event.end]
                await send({"type": "http.response.body", "body": _with_id(frame, request_id, sse=True),
                            "more_body": True})
            await send({"type": "http.response.body", "body": b"", "more_body": False})
            return
        body = content
        if decode(exchange).kind == "card" and self.public:
            body, _ = rewrite_card(body, _card_origin(body) or self.origin, self.public)
        await _send(send, response.status, headers, _with_id(body, request_id))

    async def _unmatched(self, send, method: str, target: str, body: bytes, why: str) -> None:
        message = self.mask(f"a2a-capture serve: no recorded exchange matches {method} {target}: {why}")
        request_id = _rpc_id(body)
        if request_id is not _NO_ID or b'"jsonrpc"' in body:
            payload = {"jsonrpc": "2.0", "id": None if request_id is _NO_ID else request_id,
                       "error": {"code": -32603, "message": message, "data": [{
                           "@type": "type.googleapis.com/google.rpc.ErrorInfo", "reason": "NO_RECORDED_MATCH",
                           "domain": "a2a-capture"}]}}
            await _send(send, 200, [(b"content-type", b"application/json")], json.dumps(payload).encode())
            return
        payload = {"error": {"code": 404, "status": "NOT_FOUND", "message": message, "details": [{
            "@type": "type.googleapis.com/google.rpc.ErrorInfo", "reason": "NO_RECORDED_MATCH",
            "domain": "a2a-capture"}]}}
        await _send(send, 404, [(b"content-type", b"application/json")], json.dumps(payload).encode())


_NO_ID = object()


def _rpc_id(body: bytes):
    try:
        data = nesting.loads(body) if body else None
    except (ValueError, UnicodeDecodeError):
        return _NO_ID
    return data.get("id", _NO_ID) if isinstance(data, dict) and "jsonrpc" in data else _NO_ID


def _with_id(body: bytes, request_id, sse: bool = False) -> bytes:
    """Put the caller's JSON-RPC id into a recorded answer (or each recorded frame)."""
    if request_id is _NO_ID:
        return body
    if not sse:
        try:
            data = nesting.loads(body)
        except (ValueError, UnicodeDecodeError):
            return body
        if isinstance(data, dict) and "jsonrpc" in data:
            data["id"] = request_id
            return json.dumps(data).encode()
        return body
    lines = []
    for line in body.split(b"\n"):
        if line.startswith(b"data:"):
            ending = b"\r" if line.endswith(b"\r") else b""
            try:
                data = nesting.loads(line[5:].strip())
                if isinstance(data, dict) and ("jsonrpc" in data or "result" in data):
                    data["id"] = request_id
                    line = b"data: " + json.dumps(data).encode() + ending
            except (ValueError, UnicodeDecodeError):
                pass
        lines.append(line)
    return b"\n".join(lines)


async def _send(send, status: int, headers, body: bytes) -> None:
    headers = [*headers, (b"content-length", str(len(body)).encode())]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


def _request(method: str, target: str, body: bytes, origin: str):
    from a2a_capture.capture.models import Request

    return Request(method=method, target=target, body=body, headers=[("Host", origin.split("://", 1)[-1])])


def _card_origin(body: bytes) -> str | None:
    from a2a_capture.record.rewrite import interface_urls

    try:
        urls = interface_urls(nesting.loads(body))
    except (ValueError, UnicodeDecodeError):
        return None
    if not urls:
        return None
    scheme, rest = urls[0].split("://", 1) if "://" in urls[0] else ("http", urls[0])
    return f"{scheme}://{rest.split('/', 1)[0]}"


def _first_difference(recorded: str, given: str) -> str:
    for index, (a, b) in enumerate(zip(recorded, given, strict=False)):
        if a != b:
            start = max(0, index - 30)
            return f"recorded …{recorded[start:index + 40]}… vs sent …{given[start:index + 40]}…"
    return "one is longer than the other"


def mock_agents(capture: Capture, speed: float = 1.0, mask: Callable[[str], str] = str) -> list[MockAgent]:
    """One mock per recorded agent, in the order the capture first talks to them; ``mask`` masks
    what the mocks say of their own (the notes of answers that match no recorded exchange)."""
    refuse_grpc(capture, "serve")
    return [MockAgent(origin=agent.origin, name=agent.name, speed=speed, mask=mask,
                      recorded=[Recorded(e, signature(e), mask_body(e.request.content)) for e in agent.exchanges])
            for agent in recorded_agents(capture)]
