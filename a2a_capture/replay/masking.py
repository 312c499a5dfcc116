"""Mask what changes from run to run (ids, times, tokens, ETags), so sessions can be compared.

The server makes up task, context and config ids; clients make up message and request ids;
times and ETags move; a task still working has as much of its artifacts as it had made when
it was asked. Two recordings of the same behaviour differ in exactly these, so comparison,
matching and baselines look at bodies with them replaced by placeholders.
"""

from __future__ import annotations

import json
import re

from a2a_capture import nesting
from a2a_capture.a2a import spec

#: JSON members whose values are made up per run
VOLATILE_KEYS = frozenset({
    "id", "taskId", "contextId", "messageId", "artifactId", "referenceTaskIds", "timestamp", "pageToken",
    "nextPageToken", "statusTimestampAfter", "token", "credentials", "etag",
})

_UUID = re.compile(r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}")
_TIME = re.compile(r"\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}:\d{2}(?:\.\d+)?(?:Z|[+-]\d{2}:?\d{2})?")
_MARKER = re.compile(r"\[redacted:[ +][^\]]*\]")
_ORIGIN = re.compile(r"https?://[^/\s\"']+")
_HTTP_DATE = re.compile(r"[A-Z][a-z]{2}, \d{2} [A-Z][a-z]{2} \d{4} \d{2}:\d{2}:\d{2} GMT")


def mask_text(text: str) -> str:
    text = _MARKER.sub("<redacted>", text)
    text = _ORIGIN.sub("<origin>", text)  # agents move between hosts and ports from run to run
    text = _UUID.sub("<uuid>", text)
    text = _TIME.sub("<time>", text)
    return _HTTP_DATE.sub("<date>", text)


def mask_json(value, keys: frozenset[str] = VOLATILE_KEYS):
    if isinstance(value, dict):
        masked = {key: (f"<{key}>" if key in keys and isinstance(value[key], (str, int, list)) and value[key] != ""
                        else mask_json(value[key], keys)) for key in value}
        if "id" in value and _in_progress(value):  # a task still working: none yet is as good as some
            masked["artifacts"] = "<in progress>"
        return masked
    if isinstance(value, list):
        return [mask_json(item, keys) for item in value]
    if isinstance(value, str):
        return mask_text(value)
    return value


def _in_progress(task: dict) -> bool:
    """A task still submitted or working: its artifacts are as far as they got when it was asked."""
    status = task.get("status")
    state = spec.canonical_state(status.get("state")) if isinstance(status, dict) else None
    return state is not None and spec.STATE_PROGRESS.get(state, 0) < spec.STATE_PROGRESS["TASK_STATE_INPUT_REQUIRED"]


def mask_body(body: bytes, keys: frozenset[str] = VOLATILE_KEYS) -> str:
    """A body as canonical text with volatile values masked (JSON by structure, else by pattern)."""
    if not body:
        return ""
    try:
        return json.dumps(mask_json(nesting.loads(body), keys), sort_keys=True, ensure_ascii=False)
    except (ValueError, UnicodeDecodeError):
        return mask_text(body.decode("utf-8", "replace"))


def mask_frames(events, keys: frozenset[str] = VOLATILE_KEYS) -> list[str]:
    return [mask_body((event.data or "").encode(), keys) for event in events if not event.is_ping]


def mask_path(path: str) -> str:
    """A request target with ids in its segments masked: /tasks/<uuid>:cancel."""
    base = path.split("?", 1)[0]
    return re.sub(r"/[^/:?]*[0-9][^/:?]*(?=[:/]|$)", lambda m: "/{id}" if len(m.group(0)) > 8 else m.group(0),
                  mask_text(base))
