"""Task states in a body: where a task or event shows one, in document order."""

from __future__ import annotations

import re

from a2a_capture.a2a import spec

#: members of a task or event that hold no further tasks
_NOT_TASKS = frozenset({"history", "artifacts", "message", "metadata", "parts", "status"})


#: `\u` (a JSON escape), found by re about three times quicker than by `in` (whose search
#: stops at every `u` of a text)
ESCAPE = re.compile(rb"\\u")


def task_states(value: object, limit: int = 500) -> list[tuple[str, str]]:
    """(task id, canonical state) for every task or status update in a JSON value."""
    # the usual answer is a chain of objects, each holding at most one more that may hold a task
    # (envelope, result, task): read straight down it; anything that branches is walked
    found: list[tuple[str, str]] = []
    item = value
    while isinstance(item, dict):
        if "status" in item and (shown := _shown_state(item)):
            found.append(shown)
            if len(found) >= limit:
                return found
        below = None
        for key, child in item.items():
            kind = type(child)  # a parsed JSON value's objects and lists are dicts and lists, never subclasses
            if (kind is dict or kind is list) and key not in _NOT_TASKS:
                if below is not None or kind is list:
                    return _walk_states(value, limit)
                below = child
        if below is None:
            return found
        item = below
    return _walk_states(value, limit) if isinstance(item, list) else found


def _walk_states(value: object, limit: int) -> list[tuple[str, str]]:
    """``task_states`` of any value: every object and list in it, depth first, in order."""
    found: list[tuple[str, str]] = []
    stack = [value]
    pop, push = stack.pop, stack.append
    while stack:
        item = pop()
        kind = type(item)  # as in ``task_states``
        if kind is dict:
            if "status" in item and (shown := _shown_state(item)):
                found.append(shown)
                if len(found) >= limit:
                    break
            for key, child in reversed(item.items()):  # pushed last first: read depth first, in order
                kind = type(child)
                if (kind is dict or kind is list) and key not in _NOT_TASKS:
                    push(child)
        elif kind is list:
            for child in reversed(item):
                kind = type(child)
                if kind is dict or kind is list:
                    push(child)
    return found


def _shown_state(item: dict) -> tuple[str, str] | None:
    """(task id, canonical state) of an object with a status: a task or a status update."""
    status = item["status"]
    if isinstance(status, dict):
        state = spec.canonical_state(status.get("state"))
        task = item.get("taskId") or item.get("id")
        if state and isinstance(task, str):
            return task, state
    return None


def may_name(text: str | None, key: str) -> bool:
    """False when a JSON text cannot have this (quoted) key: it is not there, not even spelled
    with escapes (a key's letters can only be escaped as \\uXXXX). A task state needs `"status"`."""
    return text is not None and (key in text or "\\u" in text)
