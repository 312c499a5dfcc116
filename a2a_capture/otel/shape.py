"""One exchange, its call and its findings as a plan of a span: plain data, no OpenTelemetry.

The plan holds what the trace says of the exchange (docs/otel.md has the table): the capture's
own times, in nanoseconds since the epoch, exact to the microsecond the capture wrote; the
attributes after the draft A2A conventions (``conventions``); each frame of a stream (an SSE
event, a gRPC stream's message) at its arrival time; each finding. ``emit`` makes SDK spans of
plans, so the shape is tested without an exporter.
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from urllib.parse import urlsplit

from a2a_capture.a2a import grpc
from a2a_capture.a2a.bodies import frame_json
from a2a_capture.a2a.call import Call
from a2a_capture.a2a.cards import Card
from a2a_capture.a2a.states import task_states
from a2a_capture.analyze.findings import Finding
from a2a_capture.capture.models import CUT_MARK, Exchange, parse_time
from a2a_capture.otel import conventions as names

_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_MICROSECOND = timedelta(microseconds=1)
#: how an exchange without recorded times is laid out: one after the other, this long each
UNTIMED_NS = 1_000_000

#: what an A2A event is, by the member that holds it (1.0) or its `kind` (0.3)
_EVENT_MEMBERS = ("statusUpdate", "artifactUpdate", "task", "message")
_EVENT_KINDS = {"status-update": "statusUpdate", "artifact-update": "artifactUpdate", "task": "task",
                "message": "message"}


@dataclass
class EventPlan:
    name: str
    time_ns: int
    attributes: dict = field(default_factory=dict)


@dataclass
class SpanPlan:
    """A span to be: its name, kind ("client", "server", "internal"), times, attributes, events."""

    name: str
    kind: str
    start_ns: int
    end_ns: int
    attributes: dict = field(default_factory=dict)
    events: list[EventPlan] = field(default_factory=list)
    #: the description of an error status: the call failed
    error: str | None = None
    #: the W3C traceparent the client sent: the span is a child of the client's span
    traceparent: str | None = None
    #: tasks the exchange was about: what a webhook's span links to
    task_ids: list[str] = field(default_factory=list)
    webhook: bool = False
    timed: bool = True
    round_trip: str | None = None


def nanoseconds(moment: str | None) -> int | None:
    """An RFC 3339 time (`#@ start:`) in whole nanoseconds since the epoch, without float rounding."""
    parsed = parse_time(moment)
    if parsed is None:
        return None
    if parsed.tzinfo is None:
        parsed = parsed.replace(tzinfo=UTC)
    return (parsed - _EPOCH) // _MICROSECOND * 1000


def after_ns(start_ns: int, seconds: float) -> int:
    """``seconds`` (to the microsecond, as captures write them) after ``start_ns``."""
    return start_ns + round(seconds * 1_000_000) * 1000


def plan_span(exchange: Exchange, call: Call, found: list[Finding], round_trip: str | None, card: Card | None,
              file: str, clock_ns: int, bodies: int | None = None) -> SpanPlan:
    """The span of one exchange. ``clock_ns``: where an exchange without recorded times goes.
    ``bodies``: put the bodies in, cut to this many characters (None: leave them out)."""
    start, end = nanoseconds(exchange.meta.start), nanoseconds(exchange.meta.end)
    timed = start is not None
    if start is None:
        start = clock_ns
    if end is None or end < start:
        end = start + (UNTIMED_NS if not timed else 0)
    plan = SpanPlan(_name(call), "server" if call.kind == "webhook" else "client", start, end,
                    webhook=call.kind == "webhook", timed=timed, round_trip=round_trip)
    plan.attributes = _attributes(call, card, file, round_trip, timed)
    if names.CONVERSATION_ID not in plan.attributes:  # the draft: the request's or the response's contextId
        frames = _stream_frames(exchange, call)
        context = context_in(call.response_json) or next(
            (shown for value, _ in frames if (shown := context_in(value))), None)
        if context:
            plan.attributes[names.CONVERSATION_ID] = context
    if bodies is not None:
        plan.attributes.update(_bodies(exchange, bodies))
    plan.traceparent = call.header("traceparent")
    plan.task_ids = list(dict.fromkeys([*([call.task_id] if call.task_id else []), *(t for t, _ in call.states)]))
    plan.events = [*_frames(exchange, call, start), *(_finding_event(finding, end) for finding in found)]
    if plan.events and plan.events[-1].time_ns > plan.end_ns:  # a frame the capture timed past the end
        plan.end_ns = max(event.time_ns for event in plan.events)
    if not call.ok or exchange.response is None:
        plan.error, plan.attributes[names.ERROR_TYPE] = _failure(call, exchange)
    return plan


def _name(call: Call) -> str:
    """The draft's span name, `{a2a.method.name}`; a card fetch or other HTTP by its method and path."""
    if call.operation:
        return call.operation
    if call.kind == "webhook":
        kind = frame_kind(call.request_json)
        return f"webhook {kind}" if kind else "webhook"
    return f"{call.method} {call.path}"


def _attributes(call: Call, card: Card | None, file: str, round_trip: str | None, timed: bool) -> dict:
    states = call.states
    values = {
        names.METHOD: call.operation,
        names.PROTOCOL_VERSION: call.version_header or call.spelled_version,
        names.TASK_ID: call.task_id or (states[-1][0] if states else None),
        names.TASK_STATE: states[-1][1] if states else None,
        names.MESSAGE_ID: call.message_id,
        names.CONVERSATION_ID: call.context_id,
        names.TENANT: call.tenant,
        names.AGENT_NAME: card.name if card else None,
        names.AGENT_DESCRIPTION: card.description if card else None,
        names.AGENT_VERSION: card.version if card else None,
        names.HTTP_METHOD: call.method,
        names.HTTP_STATUS: call.status,
        names.URL_FULL: f"{call.agent}{call.path}" if call.agent else call.path,
        names.EXCHANGE: call.label,
        names.FILE: file,
        names.LINE: call.line,
        names.KIND: call.kind,
        names.TITLE: call.title,
        names.BINDING: call.binding,
        names.ROUND_TRIP: round_trip,
        names.WASTED_SECONDS: call.duration if round_trip == "wasted" else None,
        names.STREAM_EVENTS: call.events if call.streamed else None,
        names.WEBHOOK: True if call.kind == "webhook" else None,
        names.TIMED: None if timed else False,
    }
    references = (call.params.get("message") or {}).get("referenceTaskIds") if isinstance(call.params, dict) else None
    if isinstance(references, list) and all(isinstance(item, str) for item in references) and references:
        values[names.REFERENCE_TASK_IDS] = references
    server = urlsplit(call.upstream or call.agent or "")
    if server.hostname:
        values[names.SERVER_ADDRESS] = server.hostname
        with contextlib.suppress(ValueError):  # a port out of range: no port said
            values[names.SERVER_PORT] = server.port or {"http": 80, "https": 443}.get(server.scheme)
    if call.error is not None:
        values[names.ERROR_NAME] = call.error.name
        values[names.ERROR_CODE] = call.error.code
        values[names.ERROR_MESSAGE] = call.error.message or None
    return {key: value for key, value in values.items() if value is not None and value != ""}


def _failure(call: Call, exchange: Exchange) -> tuple[str, str]:
    """(the status description, error.type): the draft asks for the JSON-RPC code or the protocol's
    status code as a string, else a class of error."""
    error = call.error
    if exchange.response is None:
        return "no response was recorded", "_OTHER"
    if error is not None and error.code is not None:
        kind = str(error.code)
    elif call.status is not None and call.status >= 300:
        kind = str(call.status)
    else:
        kind = (error.name if error is not None and error.name else None) or "_OTHER"
    words = [part for part in ((error.name, error.message) if error is not None else ()) if part]
    return ": ".join(words) or f"HTTP {call.status}", kind


def context_in(value: object, depth: int = 4) -> str | None:
    """The first contextId of an answer or event, looked for a few levels down (envelope, result, task)."""
    if not isinstance(value, dict) or depth == 0:
        return None
    found = value.get("contextId")
    if isinstance(found, str) and found:
        return found
    for key, child in value.items():
        if isinstance(child, dict) and key not in ("metadata", "parts"):
            found = context_in(child, depth - 1)
            if found:
                return found
    return None


def _stream_frames(exchange: Exchange, call: Call) -> list[tuple[object, float | None]]:
    """Each frame of a streamed answer as (its JSON, seconds after the start it arrived or None): the
    SSE events but pings, or the messages of a streamed gRPC call (their times the recorder's)."""
    response = exchange.response
    if response is None:
        return []
    if response.is_event_stream:
        return [(frame_json(frame), frame.at) for frame in response.events if not frame.is_ping]
    if call.kind == "grpc" and call.streamed:
        read = grpc.read_call(exchange)
        times = response.event_times
        return [(message.json, times[index] if index < len(times) else None)
                for index, message in enumerate(read.response if read else [])]
    return []


def _frames(exchange: Exchange, call: Call, start_ns: int) -> list[EventPlan]:
    """Each frame of the stream, at its arrival time (the span's start where not recorded)."""
    events = []
    for index, (value, arrived) in enumerate(_stream_frames(exchange, call)):
        attributes = {names.FRAME_INDEX: index}
        kind = frame_kind(value)
        if kind:
            attributes[names.FRAME_KIND] = kind
        states = task_states(value)
        if states:
            attributes[names.TASK_ID], attributes[names.TASK_STATE] = states[-1]
        at = after_ns(start_ns, arrived) if arrived is not None else start_ns
        events.append(EventPlan(names.FRAME_EVENT, at, attributes))
    return events


def frame_kind(value: object) -> str | None:
    """What an A2A event (an SSE frame, a webhook's payload) is: statusUpdate, artifactUpdate, task,
    message, or error for a JSON-RPC error."""
    if not isinstance(value, dict):
        return None
    result = value.get("result", value) if "jsonrpc" in value or "result" in value else value
    if not isinstance(result, dict):
        return "error" if "error" in value else None
    for member in _EVENT_MEMBERS:
        if isinstance(result.get(member), dict):
            return member
    kind = result.get("kind")
    if isinstance(kind, str):
        return _EVENT_KINDS.get(kind, kind)
    return "error" if "error" in value else None


def _finding_event(finding: Finding, at_ns: int) -> EventPlan:
    """A finding on its exchange, at the moment the answer was in (the span's end)."""
    attributes = {
        names.FINDING_RULE: finding.rule,
        names.FINDING_SEVERITY: finding.severity.value,
        names.FINDING_OUTCOME: finding.outcome,
        names.FINDING_TITLE: finding.title,
        names.FINDING_MESSAGE: finding.message,
        names.FINDING_SPEC: finding.spec,
    }
    if finding.related:
        attributes[names.FINDING_RELATED] = list(finding.related)
    return EventPlan(names.FINDING_EVENT, at_ns, attributes)


def _bodies(exchange: Exchange, limit: int) -> dict:
    values = {names.REQUEST_BODY: _text(exchange.request.content, limit)}
    if exchange.response is not None:
        values[names.RESPONSE_BODY] = _text(exchange.response.content, limit)
    return {key: value for key, value in values.items() if value}


def _text(body: bytes, limit: int) -> str:
    text = body.decode("utf-8", "backslashreplace")
    return text if len(text) <= limit else text[:limit] + CUT_MARK

