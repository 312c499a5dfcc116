"""Turn a proxied HTTP flow into a capture exchange: exact bodies, every header, timing.

Works on mitmproxy's flow objects by duck typing, so the library does not import
mitmproxy; the recorder (record/, addons/) and the flow-file converter (convert/mitm.py)
both call it, and the HAR converter titles its exchanges with ``title_for``. It sits
below both, beside the protocol it reads: what only the recorder does with a flow (keeping
its bodies as they come, passing an agent's failure on, redacting a body too large to hold)
is record/flows.py's.
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass, field

from a2a_capture import nesting
from a2a_capture.a2a import spec
from a2a_capture.a2a.decode import decode, looks_like_card, rest_route
from a2a_capture.a2a.grpc import Rpc
from a2a_capture.capture import grpc
from a2a_capture.capture import notes as recorder_notes
from a2a_capture.capture.encoding import decode_content
from a2a_capture.capture.models import Exchange, ExchangeMeta, Request, Response, format_time
from a2a_capture.capture.sse import parse as parse_sse
from a2a_capture.redact import Redactor
from a2a_capture.redact.grpc import redact as redact_grpc

#: how a StreamResponse (a webhook body) starts
_STREAM_MEMBER = re.compile(rb'^\s*\{\s*"(?:task|message|statusUpdate|artifactUpdate)"')


@dataclass
class StreamCopy:
    """What the addon kept of a streamed response: the chunks and when each arrived."""

    chunks: list[tuple[float, bytes]] = field(default_factory=list)
    #: the body joined, and how many chunks it joined (it is asked for more than once per flow)
    _joined: tuple[int, bytes] = field(default=(0, b""), repr=False, compare=False)

    def __call__(self, data: bytes) -> bytes:
        if data:
            self.chunks.append((time.time(), data))
        return data

    @property
    def body(self) -> bytes:
        if self._joined[0] != len(self.chunks):
            self._joined = (len(self.chunks), b"".join(chunk for _, chunk in self.chunks))
        return self._joined[1]

    #: a copy kept in memory, whole (the recorder's own copy is a bodies.BodyCopy, which may spill)
    spilled = False
    left_out = 0

    @property
    def last_time(self) -> float | None:
        return self.chunks[-1][0] if self.chunks else None

    def arrival_times(self, ends: list[int], start: float) -> list[float | None]:
        """When the chunk that completed each unit came, given where the units end in the body
        (SSE frames, gRPC messages), in seconds after ``start``."""
        times: list[float | None] = []
        chunks = iter(self.chunks)
        received, when = 0, None  # bytes received so far, and when the last of them came
        for end in ends:  # units and chunks both in order: one pass over each
            while received < end:
                step = next(chunks, None)
                if step is None:
                    break
                when, received = step[0], received + len(step[1])
            times.append(round(when - start, 6) if when is not None else None)
        return times


def timestamp(value: float | None) -> str | None:
    return format_time(value) if value else None


def _address(peer) -> str | None:
    if not peer:
        return None
    host, port = peer[0], peer[1]
    return f"[{host}]:{port}" if ":" in str(host) else f"{host}:{port}"


def _headers(fields) -> list[tuple[str, str]]:
    return [(name.decode("latin-1"), value.decode("utf-8", "surrogateescape")) for name, value in fields]


def exchange_from_flow(flow, number: int, *, webhook: bool = False, stream: StreamCopy | None = None,
                       redactor: Redactor | None = None, notes: list[str] | None = None,
                       request_stream: StreamCopy | None = None, stopped: bool = False,
                       passed_on: str | None = None) -> Exchange:
    """The exchange a flow was, as the client saw it.

    ``request_stream`` holds a streamed request body as it arrived (all of it, or the part
    that came before the client went away); ``stopped`` says recording ended mid-flow;
    ``passed_on`` is the note of ``passed_on``: the recorder passed an agent's failure to answer
    on to the client as it was (a closed connection, a reset stream), so no proxy answer was sent.
    A body too large to hold (a spilled bodies.BodyCopy) is redacted apart: record.flows.redact_spilled.
    """
    request = flow.request
    notes = list(notes or [])
    version = request.http_version
    grpc_request = grpc.is_grpc_type(request.headers.get("content-type"))
    if version not in ("HTTP/1.1", "HTTP/1.0") and not grpc_request:
        notes.append(f"recorded over {version}; written as HTTP/1.1 text")
    headers = _headers(request.headers.fields)
    if not any(name.lower() == "host" for name, _ in headers):
        headers.insert(0, ("Host", request.host_header or request.pretty_host))
    target = request.path
    if flow.request.scheme == "https":
        notes.append(f"over TLS to {request.pretty_host}:{request.port}")
    body = request_stream.body if request_stream is not None else (request.raw_content or b"")
    if request_stream is not None and request_stream.left_out:
        notes.append(cut_note(request_stream, "request"))
    redacted: list[str] = []
    if redactor is not None and request_stream is not None and request_stream.spilled:
        headers, removed = redactor.headers(headers)
        redacted += removed
        target, removed = redactor.target(target)
        redacted += removed
    elif redactor is not None:
        headers, removed = redactor.headers(headers)
        redacted += removed
        target, removed = redactor.target(target)
        redacted += removed
        if grpc_request:
            body, removed = redact_grpc(redactor, request.path, "request", body)
        else:
            headers, body, removed = _redact_body(redactor, headers, body, notes)
        redacted += removed
    start = request.timestamp_start
    meta = ExchangeMeta(
        start=timestamp(start), client=_address(getattr(flow.client_conn, "peername", None)),
        server=_address(getattr(flow.server_conn, "peername", None) or getattr(flow.server_conn, "address", None)),
    )
    exchange_request = Request(method=request.method, target=target, headers=headers, body=body,
                               http_version="1.1" if version not in ("HTTP/1.0",) else "1.0")
    if grpc_request:  # gRPC is HTTP/2 only: written as what it was
        exchange_request.http_version = "2"
    response = None
    if flow.response is not None:
        response, removed, end = _response(flow, stream, redactor, start, notes)
        redacted += removed
        meta.end = timestamp(end)
    request_complete = bool(request.timestamp_end)
    if stopped:
        notes.append(recorder_notes.STOPPED.format(what=_unfinished(request_complete, flow.response)))
    elif flow.error is not None:
        notes.append(_error_note(flow, request_complete))
        if meta.end is None:
            meta.end = timestamp(getattr(flow.error, "timestamp", None))
        if passed_on:
            notes.append(passed_on)
        elif flow.response is None and request_complete and _proxy_answered(flow):
            # mitmproxy answered in the agent's place; the capture must not pass it off as the agent's
            notes.append(recorder_notes.PROXY_ANSWERED.format(status="502 Bad Gateway"))
    meta.redacted = list(dict.fromkeys(redacted))
    exchange = Exchange(number=number, webhook=webhook, request=exchange_request, response=response,
                        meta=meta, notes=notes)
    exchange.title = title_for(exchange)
    return exchange


AGENT_CLOSED = "the agent closed the connection"


#: words for mitmproxy's error messages, first match wins
ERROR_KINDS = (("errno 111", "connection refused"), ("connection refused", "connection refused"),
                ("reset", "connection reset"), ("timed out", "timed out"), ("timeout", "timed out"),
                ("client disconnected", "the client closed the connection"),
                ("server closed connection", AGENT_CLOSED),
                ("unexpected server response", AGENT_CLOSED),
                ("peer closed connection", "connection closed"),
                ("connection closed", "connection closed"), ("disconnect", "connection closed"),
                ("eof", "connection closed"))


def _error_note(flow, request_complete: bool = True) -> str:
    """Say what went wrong in plain words, naming who closed, keeping the proxy's own message
    (but for a stream reset, which mitmproxy words alike from either side)."""
    message = flow.error.msg
    lower = message.lower()
    kind = next((name for needle, name in ERROR_KINDS if needle in lower), "failed")
    if kind == "connection closed":
        kind = "the client closed the connection" if not request_complete else AGENT_CLOSED
    reset = stream_reset(flow)
    if reset is not None:
        kind, message = _RESET_BY[reset[1]], f"RST_STREAM {reset[0]}"
    if flow.response is not None:
        where = " after part of the response"
    elif not request_complete:
        where = " before the request was complete"
    else:
        where = ""
    return f"error: {kind}{where} ({message})"


#: who reset a stream, by what ``stream_reset`` could tell
_RESET_BY = {True: "the agent reset the stream", False: "the client reset the stream",
             None: "the stream was reset by the client or the agent (mitmproxy does not say which)"}


#: how mitmproxy (11 and 12) words an HTTP/2 RST_STREAM, whichever side sent it
_STREAM_RESET = re.compile(r"stream reset by \w+ \((\w+)\)")


def stream_reset(flow) -> tuple[str, bool | None] | None:
    """The error code of the HTTP/2 RST_STREAM that ended a flow, and whether the agent sent it
    (None: either side may have).

    mitmproxy says "stream reset by client" whichever side reset, so the side is told by what
    else is known: over an HTTP/1 client connection only the agent has a stream to reset, over
    an HTTP/1 agent connection only the client. Between two HTTP/2 peers, any code but CANCEL
    is taken as the agent's (a client that stops waiting cancels; servers reset with
    INTERNAL_ERROR, REFUSED_STREAM and the like); CANCEL may be either side's.
    """
    found = _STREAM_RESET.match(flow.error.msg) if flow.error is not None else None
    if found is None:
        return None
    code = found.group(1)
    if getattr(flow.server_conn, "alpn", None) != b"h2":
        return code, False
    if getattr(flow.client_conn, "alpn", None) != b"h2":
        return code, True
    return code, None if code == "CANCEL" else True


def _proxy_answered(flow) -> bool:
    """mitmproxy sends the client its own 502 when the agent side fails before answering;
    not when the client itself went away or reset its stream, nor when the flow was killed
    (no answer at all)."""
    lower = flow.error.msg.lower()
    reset = stream_reset(flow)
    return "client disconnected" not in lower and lower != "killed" and (reset is None or reset[1] is True)


def _unfinished(request_complete: bool, response) -> str:
    if not request_complete:
        return "the request was complete"
    return "the agent answered" if response is None else "the response ended"


def _redact_body(redactor: Redactor, headers: list[tuple[str, str]], body: bytes, notes: list[str]):
    """Redact a body by the policy (a compressed one decoded first: redact.Redactor.message)."""
    return redactor.message(headers, body, notes)


def frame_boundary(head: bytes) -> bytes:
    """The blank line that ends an SSE frame, as this stream writes it."""
    return b"\r\n\r\n" if b"\r\n\r\n" in head else b"\r\r" if b"\r\r" in head and b"\n" not in head else b"\n\n"


def event_times(copy, start: float) -> list[float | None]:
    """Arrival time of each SSE frame: when the chunk that completed it came (a spilled stream read
    from its file a piece at a time)."""
    if not copy.spilled:
        return copy.arrival_times([event.end for event in parse_sse(copy.body)], start)
    ends, offset = [], 0
    for piece in copy.pieces(frame_boundary(copy.head)):
        ends += [offset + event.end for event in parse_sse(piece)]
        offset += len(piece)
    return copy.arrival_times(ends, start)


def cut_note(copy, what: str) -> str:
    """The note of a body the recording's size limit cut (``copy`` a record.bodies.BodyCopy)."""
    return (f"a2a-capture kept the first {copy.kept} bytes of this {what} body and left out {copy.left_out} bytes "
            f"(the recording's body size limit)")


def _is_grpc(headers: list[tuple[str, str]]) -> bool:
    return grpc.is_grpc_type(next((value for name, value in headers if name.lower() == "content-type"), None))


def _message_times(stream, start: float) -> list[float | None]:
    """Arrival time of each gRPC message of a streamed answer (a StreamCopy, or a record.bodies.BodyCopy)."""
    ends, offset = [], 0
    for one in grpc.split_frames(stream.body) or []:
        offset += len(one)
        ends.append(offset)
    return stream.arrival_times(ends, start)


def _response(flow, stream, redactor: Redactor | None, start: float, notes: list[str]):
    response = flow.response
    headers = _headers(response.headers.fields)
    body = stream.body if stream is not None else (response.raw_content or b"")
    grpc_answer = _is_grpc(headers)
    times: list[float | None] = []
    if stream is not None and grpc_answer and not stream.spilled:
        times = _message_times(stream, start)
    elif stream is not None and media_type(headers) == "text/event-stream":
        times = event_times(stream, start)
    if stream is not None and stream.left_out:
        notes.append(cut_note(stream, "response"))
    removed: list[str] = []
    if redactor is not None and stream is not None and stream.spilled:
        headers, removed = redactor.headers(headers)
    elif redactor is not None:
        headers, removed_headers = redactor.headers(headers)
        if grpc_answer:
            body, removed_body = redact_grpc(redactor, flow.request.path, "response", body)
        else:
            headers, body, removed_body = _redact_body(redactor, headers, body, notes)
        removed = removed_headers + removed_body
    end = response.timestamp_end or (stream.last_time if stream is not None else None)
    if response.timestamp_end and flow.error is None and _ended_by_close(flow.request.method, response, headers):
        notes.append(recorder_notes.BODY_UNTIL_CLOSE)  # which side closed: the capture writes exact lengths
    result = Response(status=response.status_code, reason=response.reason or "", headers=headers, body=body,
                      http_version="1.0" if response.http_version == "HTTP/1.0" else "1.1",
                      event_times=times if grpc_answer or media_type(headers) == "text/event-stream" else [])
    if grpc_answer:
        result.http_version = "2"
        result.trailers = _headers(response.trailers.fields) if response.trailers else []
    return result, removed, end


def _ended_by_close(method: str, response, headers: list[tuple[str, str]]) -> bool:
    """An HTTP/1 body with neither a length nor chunks: only the agent's close ended it."""
    if response.http_version not in ("HTTP/1.1", "HTTP/1.0") or method.upper() in ("HEAD", "CONNECT"):
        return False
    if response.status_code < 200 or response.status_code in (204, 304):
        return False
    framing = {name.lower(): value for name, value in headers
               if name.lower() in ("content-length", "transfer-encoding")}
    return "content-length" not in framing and "chunked" not in framing.get("transfer-encoding", "").lower()


def media_type(headers: list[tuple[str, str]]) -> str:
    for name, value in headers:
        if name.lower() == "content-type":
            return value.split(";")[0].strip().lower()
    return ""


def _plain_body(response: Response) -> bytes:
    """The body as the client read it: a compressed card is decoded (cards are small)."""
    encoding = response.header("content-encoding")
    return decode_content(response.body, encoding) if encoding else response.body


_RPC_METHOD = re.compile(rb'"method"\s*:\s*"([^"\\]{1,100})"')


_CARD_NAME = re.compile(rb'"name"\s*:\s*"([^"\\]{1,100})"')


def title_for(exchange: Exchange) -> str:
    """A title that says what the exchange was: `discover test-runner`, `SendMessage`, `GET /tasks/{id}`.

    The recorder titles every exchange on the proxy's event loop, so this reads no more of
    the bodies than it must: the JSON-RPC method and the card's name are found by pattern.
    """
    if exchange.webhook:
        return "webhook"
    request, response = exchange.request, exchange.response
    path = request.target.split("?", 1)[0]
    method = request.method.upper()
    if method == "GET" and (path.rstrip("/").endswith(spec.CARD_PATH)
                            or any(path.rstrip("/").endswith(p) for p in spec.LEGACY_CARD_PATHS)):
        found = _CARD_NAME.search(_plain_body(response)) if response is not None and response.status == 200 else None
        name = found.group(1).decode("utf-8", "replace") if found else (request.header("host") or "agent")
        where = "" if path.rstrip("/").endswith(spec.CARD_PATH) else f" at {path}"
        return f"discover {name}{where}"
    if request.is_grpc:
        rpc = Rpc.of(path)
        if rpc is not None:
            return rpc.operation or rpc.name
    if method == "POST" and b'"jsonrpc"' in request.body[:4096]:
        found = _RPC_METHOD.search(request.body)
        return found.group(1).decode("utf-8", "replace") if found else "JSON-RPC"
    route = rest_route(method, path)
    if route is not None:
        return f"{method} {route[0].pattern}"
    if method == "POST" and request.body and decode(exchange).kind == "jsonrpc":
        return "JSON-RPC (unreadable body)"
    return f"{method} {path}"


def is_webhook(request_headers: list[tuple[str, str]], body: bytes, push_urls: set[str], url: str) -> bool:
    """A request an agent sends to a client's push endpoint."""
    if url in push_urls:
        return True
    if any(name.lower() == "x-a2a-notification-token" for name, _ in request_headers):
        return True
    if not body or b'"jsonrpc"' in body[:4096] or not _STREAM_MEMBER.search(body[:200]):
        return False
    try:
        payload = nesting.loads(body) if body else None
    except (ValueError, UnicodeDecodeError):
        return False
    if not (isinstance(payload, dict) and len(payload) == 1
            and next(iter(payload)) in ("task", "message", "statusUpdate", "artifactUpdate")):
        return False
    # a SendMessage over HTTP+JSON with nothing but its message has the same shape: the message
    # is the user's there, an agent's in a push
    message = payload.get("message")
    return not looks_like_card(payload) and not (isinstance(message, dict) and message.get("role") in spec.USER_ROLES)


def push_urls_in(body: bytes) -> set[str]:
    """Push endpoints a request registers (inline in a message or as a push config)."""
    if b'"url"' not in body:
        return set()
    try:
        payload = nesting.loads(body) if body else None
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
