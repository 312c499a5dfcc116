"""Compare two sessions exchange by exchange, after masking what changes from run to run."""

from __future__ import annotations

import difflib
from dataclasses import dataclass, field

from a2a_capture import nesting
from a2a_capture.a2a import spec
from a2a_capture.a2a.decode import decode
from a2a_capture.capture.models import Capture, Exchange
from a2a_capture.replay.masking import VOLATILE_KEYS, mask_body, mask_frames, mask_path


@dataclass
class Change:
    kind: str  # added, removed, changed
    signature: str
    old: str | None = None  # exchange labels
    new: str | None = None
    details: list[str] = field(default_factory=list)

    def line(self) -> str:
        where = {"added": f"+ {self.new}", "removed": f"- {self.old}", "changed": f"~ {self.old} -> {self.new}"}
        text = f"{where[self.kind]} {self.signature}"
        return text + "".join(f"\n    {detail}" for detail in self.details)


def signature(exchange: Exchange) -> str:
    """What a call was, whatever its ids: `POST SendMessage`, `GET /tasks/{id}`, `webhook statusUpdate`."""
    if exchange.webhook:
        return webhook_signature(exchange)
    call = decode(exchange)
    if call.kind == "card":
        return f"GET card {mask_path(call.path)}"
    if call.operation:
        return f"{call.method} {call.operation}"
    return f"{call.method} {mask_path(call.path)}"


def compare(old: Capture, new: Capture, keys: frozenset[str] = VOLATILE_KEYS) -> list[Change]:
    """Added, removed and changed exchanges; webhooks are compared as a set, their order varies."""
    changes: list[Change] = []
    calls = [[e for e in capture.exchanges if not e.webhook] for capture in (old, new)]
    a, b = ([signature(e) for e in group] for group in calls)
    matcher = difflib.SequenceMatcher(None, a, b, autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            for left, right in zip(calls[0][i1:i2], calls[1][j1:j2], strict=True):
                details = _details(left, right, keys)
                if details:
                    changes.append(Change("changed", signature(left), left.label, right.label, details))
            continue
        changes += [Change("removed", a[i], old=calls[0][i].label) for i in range(i1, i2)]
        changes += [Change("added", b[j], new=calls[1][j].label) for j in range(j1, j2)]
    return changes + compare_webhooks(old, new, keys)


def webhook_signature(exchange: Exchange) -> str:
    """What a webhook said: `webhook statusUpdate TASK_STATE_WORKING`, `webhook artifactUpdate log`."""
    data = _json(exchange.request.content)
    if not isinstance(data, dict):
        return "webhook"
    member = next((m for m in ("statusUpdate", "artifactUpdate", "task", "message") if m in data), None)
    if member is None:
        return "webhook"
    payload = data[member] if isinstance(data[member], dict) else {}
    if member == "artifactUpdate":
        artifact = payload.get("artifact") if isinstance(payload.get("artifact"), dict) else {}
        detail = artifact.get("name") or artifact.get("artifactId") or ""
    else:
        status = payload.get("status") if isinstance(payload.get("status"), dict) else {}
        detail = spec.canonical_state(status.get("state")) or ""
    return f"webhook {member} {detail}".strip()


def compare_webhooks(old: Capture, new: Capture, keys: frozenset[str] = VOLATILE_KEYS) -> list[Change]:
    """Webhooks by task and what they said, after masking; their order against the calls varies.

    Tasks are told apart by the order the session's calls first name them (task 1, task 2, …),
    since their ids change from run to run."""
    sides = []
    for capture in (old, new):
        tasks = _task_order(capture)
        sides.append([(tasks.get(_webhook_task(e), "?"), mask_body(e.request.content, keys), e)
                      for e in capture.exchanges if e.webhook])
    changes = []
    for kind, left, right in (("removed", sides[0], sides[1]), ("added", sides[1], sides[0])):
        rest = [(task, body) for task, body, _ in right]
        for task, body, exchange in left:
            if (task, body) in rest:
                rest.remove((task, body))
                continue
            label = {"removed": "old", "added": "new"}[kind]
            said = signature(exchange).removeprefix("webhook").strip() or "without an A2A payload"
            changes.append(Change(kind, f"{said} (task {task})", **{label: exchange.label}))
    return changes


def _task_order(capture: Capture) -> dict[str, int]:
    order: dict[str, int] = {}
    for exchange in capture.exchanges:
        if not exchange.webhook:
            for task, _ in decode(exchange).states:
                order.setdefault(task, len(order) + 1)
    return order


def _webhook_task(exchange: Exchange) -> str | None:
    data = _json(exchange.request.content)
    if not isinstance(data, dict):
        return None
    for payload in data.values():
        if isinstance(payload, dict):
            task = payload.get("taskId") or payload.get("id")
            if isinstance(task, str):
                return task
    return None


def _json(body: bytes):
    try:
        return nesting.loads(body) if body else None
    except (ValueError, UnicodeDecodeError):
        return None


def _details(old: Exchange, new: Exchange, keys: frozenset[str]) -> list[str]:
    details = []
    if mask_body(old.request.content, keys) != mask_body(new.request.content, keys):
        details.append("the request body differs")
    if (old.response is None) != (new.response is None):
        missing = new if new.response is None else old
        why = next((note for note in missing.notes if note.startswith("error: ")), "")
        details.append(("the new one has no response" if new.response is None else "a response where there was none")
                       + (f" ({why})" if why else ""))
        return details
    if old.response is None:
        return details
    if old.response.status != new.response.status:
        details.append(f"status {old.response.status} -> {new.response.status}")
    states = [[state for _, state in decode(exchange).states] for exchange in (old, new)]
    if states[0] and states[1] and states[0][-1] != states[1][-1]:
        details.append(f"task state {states[0][-1]} -> {states[1][-1]}")
    if old.response.is_event_stream or new.response.is_event_stream:
        before, after = mask_frames(old.response.events, keys), mask_frames(new.response.events, keys)
        if len(before) != len(after):
            details.append(f"{len(before)} -> {len(after)} stream events")
        elif before != after:
            first = next(i for i, (x, y) in enumerate(zip(before, after, strict=True)) if x != y)
            details.append(f"stream event {first + 1} differs: {_clip(before[first], after[first])}")
    else:
        before, after = mask_body(old.response.content, keys), mask_body(new.response.content, keys)
        if before != after:
            details.append(f"the response body differs: {_clip(before, after)}")
    return details


def _clip(before: str, after: str, limit: int = 160) -> str:
    """Both texts from a little before where they first differ, so the difference shows."""
    index = next((i for i, (a, b) in enumerate(zip(before, after, strict=False)) if a != b),
                 min(len(before), len(after)))
    start = max(0, index - 40)

    def cut(text: str) -> str:
        text = ("…" if start else "") + text[start:]
        return text if len(text) <= limit else text[: limit - 1] + "…"

    return f"{cut(before)} -> {cut(after)}"
