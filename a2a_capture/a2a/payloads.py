"""What a call's params and results hold: the message, its parts, the task and its states."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from a2a_capture.a2a import spec
from a2a_capture.a2a.answers import before_1_0, error_from
from a2a_capture.a2a.bodies import frame_json, nonempty
from a2a_capture.a2a.call import Call
from a2a_capture.a2a.states import task_states
from a2a_capture.capture.sse import Event


def read_message(call: Call, params: dict) -> None:
    if "message" in params or "request" in params:
        (call.message_id, call.task_id, call.context_id, call.part_media_types,
         call.inline_push) = _message_facts(params, call.task_id)


def _message_facts(params: dict, task_id: str | None) -> tuple[str | None, str | None, str | None, list[str], bool]:
    """(message id, task id, context id, media types of its parts, whether it asks for pushes inline)
    of the message a send carries; ``task_id`` is the one found before, which the message's does not override."""
    message = params.get("message") or params.get("request")
    if not isinstance(message, dict):
        return None, task_id, None, [], False
    media_types = []
    parts = message.get("parts")
    if not isinstance(parts, list):
        parts = message.get("content")
    if isinstance(parts, list):
        for part in parts:
            if isinstance(part, dict):
                media = part_media_type(part)
                if media:
                    media_types.append(media)
    configuration = params.get("configuration")
    if isinstance(configuration, dict):
        push = configuration.get("taskPushNotificationConfig") or configuration.get("pushNotificationConfig")
        inline_push = isinstance(push, dict) and bool(push)
    else:
        inline_push = False
    return (nonempty(message.get("messageId") or message.get("message_id")),
            task_id or nonempty(message.get("taskId") or message.get("task_id")),
            nonempty(message.get("contextId") or message.get("context_id")), media_types, inline_push)


def part_media_type(part: dict) -> str | None:
    """The media type of a 1.0 or 0.3 part; text and data parts imply theirs."""
    # ``in`` before a lookup: a part has neither member, usually (a text part), and a test is quicker than a get
    if "mediaType" in part:
        media = part["mediaType"]
        if isinstance(media, str) and media:
            return media.split(";")[0].strip().lower()
    if "file" in part:
        file = part["file"]
        if isinstance(file, dict):  # 0.3 file part
            media = file.get("mimeType") or file.get("mediaType")
            return media.lower() if isinstance(media, str) else None
    kind = part.get("kind")
    for member, implied in _IMPLIED_PART_TYPES:
        if member in part or kind == member:
            return implied
    return None


_IMPLIED_PART_TYPES = tuple(spec.IMPLIED_PART_TYPES.items())


def read_payload(call: Call, payload: object) -> None:
    """A webhook body is one StreamResponse (1.0) or a Task (0.3)."""
    call.states = task_states(payload)
    if call.states:
        call.task_id = call.states[0][0]
    elif isinstance(payload, dict):
        for member in payload.values():
            if isinstance(member, dict) and isinstance(member.get("taskId"), str):
                call.task_id = member["taskId"]


@dataclass(slots=True)
class StreamFacts:
    """What a stream's frames showed, read as they passed and none kept: how many (pings aside),
    the states they named and when each of those frames arrived, and the first error one carried
    (its payload: what the error is called depends on the call's version, read later)."""

    events: int = 0
    states: list[tuple[str, str]] = field(default_factory=list)
    offsets: list[float | None] = field(default_factory=list)
    errored: bool = False
    error: object = None


def read_frames(frames: Iterable[Event]) -> StreamFacts:
    """One pass over a stream's frames: only a frame that may name a status or carry an error is
    parsed (most frames of a stream are neither). A state a frame shows again (a stream of status
    updates) is kept as the one tuple, so a long stream's states cost a reference each."""
    facts = StreamFacts()
    states, offsets = facts.states, facts.offsets
    last = None
    for frame in frames:
        text, event = frame.data, frame.event
        if text is None:
            if event is None and frame.id is None:
                continue  # a ping: no event
            facts.events += 1
            if event != "error":
                continue
            has_states = False
        else:
            facts.events += 1
            has_states = "\\u" in text or '"status"' in text  # a key may be spelled with escapes: parse it
            if not (has_states or event == "error" or '"error"' in text):
                continue  # nothing below would read it: not parsed at all
        data = frame_json(frame)
        if not facts.errored:
            if isinstance(data, dict) and isinstance(data.get("error"), dict):
                facts.errored, facts.error = True, data["error"]  # a JSON-RPC envelope, any event
            elif event == "error":
                facts.errored, facts.error = True, data
        if has_states:
            for state in task_states(data):
                if state != last:
                    last = state
                states.append(last)
                offsets.append(frame.at)
    return facts


def read_results(call: Call, result: object, stream: StreamFacts | None) -> None:
    """The states the response and its frames show, and an error a frame carries."""
    states = task_states(result)
    offsets = None
    if stream is not None and stream.events:
        if stream.errored and call.error is None:
            call.error = error_from(stream.error, None, before_1_0(call.version_header or call.spelled_version))
        offsets = [None] * len(states) + stream.offsets if states else stream.offsets
        states = states + stream.states if states else stream.states
    call.states = states
    if call.streamed:
        call.state_offsets = offsets if offsets is not None else [None] * len(states)
    if call.task_id is None and states:
        call.task_id = states[0][0]
