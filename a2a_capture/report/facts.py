"""What a report says about one exchange beyond its listing: its outcome, the states it showed
and when, and the one fact that stops a wrong reading of it ("The request has no A2A-Version
header.").

Read from the decoded call; until the analyzer hands over its own per-exchange facts, the few
the report needs beyond ``decode`` are read here.
"""

from __future__ import annotations

import json

from a2a_capture.a2a import spec
from a2a_capture.a2a.decode import Call, task_states
from a2a_capture.capture.models import Exchange


def short_id(task: str) -> str:
    """The manual's 8-character short id, for prose and figures (listings keep ids whole)."""
    return task[:8] if len(task) > 8 else task


def outcome(call: Call) -> str:
    if call.error is not None:
        code = f" {call.error.code}" if call.error.code else ""
        return f"{call.error.name}{code}"
    if call.states:
        return call.states[-1][1].removeprefix("TASK_STATE_").lower().replace("_", "-")
    if call.status is None:
        return "no response" if call.kind != "webhook" else ""
    return str(call.status)


def frame_states(exchange: Exchange, call: Call, *, late: bool = False) -> list[tuple[str, str, float | None]]:
    """(task, state, seconds since the epoch or None) in the order the exchange showed them.

    Frames carry their own arrival times where the recorder kept them; a plain response is
    placed where it ended.
    """
    start = call.started
    if late:
        return [(task, state, None) for event in exchange.late_events
                for task, state in task_states(_json(event.data))]
    response = exchange.response
    if response is None or not response.is_event_stream:
        end = exchange.meta.ended_at
        at = end.timestamp() if end is not None else start
        return [(task, state, at) for task, state in call.states]
    found = []
    for event in response.events:
        at = start + event.at if start is not None and event.at is not None else None
        found += [(task, state, at) for task, state in task_states(_json(event.data))]
    return found


def explain(call: Call) -> list[str]:
    """Facts that explain why the exchange looks as it does, as the manual's notes give them."""
    facts = []
    if call.is_a2a and call.version_header is None:
        facts.append(f"The request has no {spec.VERSION_HEADER} header.")
    if call.kind == "jsonrpc" and call.error is not None and call.status == 200:
        facts.append("The JSON-RPC error arrives with HTTP 200.")
    return facts


def _json(data: str | None):
    if not data:
        return None
    try:
        return json.loads(data)
    except ValueError:
        return None
