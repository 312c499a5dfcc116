"""Compare two sessions exchange by exchange, after masking what changes from run to run."""

from __future__ import annotations

import difflib
from dataclasses import dataclass, field

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
        body = mask_body(exchange.request.content)
        member = next((m for m in ("statusUpdate", "artifactUpdate", "task", "message") if f'"{m}"' in body), "")
        return f"webhook {member}".strip()
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
    hooks = [sorted(signature(e) for e in capture.exchanges if e.webhook) for capture in (old, new)]
    for kind, items in (("removed", _minus(hooks[0], hooks[1])), ("added", _minus(hooks[1], hooks[0]))):
        changes += [Change(kind, item) for item in items]
    return changes


def _minus(left: list[str], right: list[str]) -> list[str]:
    rest = list(right)
    out = []
    for item in left:
        if item in rest:
            rest.remove(item)
        else:
            out.append(item)
    return out


def _details(old: Exchange, new: Exchange, keys: frozenset[str]) -> list[str]:
    details = []
    if mask_body(old.request.content, keys) != mask_body(new.request.content, keys):
        details.append("the request body differs")
    if (old.response is None) != (new.response is None):
        details.append("one has no response" if new.response is None else "a response where there was none")
        return details
    if old.response is None:
        return details
    if old.response.status != new.response.status:
        details.append(f"status {old.response.status} -> {new.response.status}")
    if old.response.is_event_stream or new.response.is_event_stream:
        before, after = mask_frames(old.response.events, keys), mask_frames(new.response.events, keys)
        if len(before) != len(after):
            details.append(f"{len(before)} -> {len(after)} stream events")
        elif before != after:
            first = next(i for i, (x, y) in enumerate(zip(before, after, strict=True)) if x != y)
            details.append(f"stream event {first + 1} differs: {_clip(before[first])} -> {_clip(after[first])}")
    else:
        before, after = mask_body(old.response.content, keys), mask_body(new.response.content, keys)
        if before != after:
            details.append(f"the response body differs: {_clip(before)} -> {_clip(after)}")
    return details


def _clip(text: str, limit: int = 160) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"
