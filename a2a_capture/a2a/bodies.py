"""Bodies as JSON, each parsed once (orjson; the standard parser only for what orjson refuses), and header helpers."""

from __future__ import annotations

import json
from typing import Any

from orjson import loads as _loads

from a2a_capture import nesting
from a2a_capture.capture.grpc import is_grpc_type as grpc_type


def frame_json(frame):
    return json_of(frame.data or "")[0]  # orjson and json read the text as it is


def first_values(headers: list[tuple[str, str]]) -> dict[str, str]:
    """Each header's first value by its lower-case name (as ``Message.header`` finds it)."""
    values: dict[str, str] = {}
    for key, value in headers:
        values.setdefault(key.lower(), value)
    return values


def is_grpc(content_type: str | None) -> bool:
    return content_type is not None and "grpc" in content_type.lower() and grpc_type(content_type)


def media_type(value: str | None) -> str:
    """As ``Message.content_type``: the media type alone, lower case."""
    return (value or "").split(";", 1)[0].strip().lower()


def json_of(body: bytes | str) -> tuple[Any, bool]:
    """(value, True when the body is there but is not JSON)."""
    if not body:
        return None, False
    size = len(body)
    # the usual body: shallow (as nesting.check_json counts), parsed by orjson; one too short to
    # close what it opens past the limit would not parse (nor pass the check), as below. The
    # brackets that open are counted by what deleting them takes away: a delete finds them by
    # memchr, a few times quicker than a pass over every byte (translate, count); at most one past
    # the limit of each, the sum is past the limit exactly when their count is
    if size < _LARGE_BODY and (size < _SHORT_BODY or size - len(
            body.replace("{", "", _PAST_LIMIT).replace("[", "", _PAST_LIMIT) if isinstance(body, str)
            else body.replace(b"{", b"", _PAST_LIMIT).replace(b"[", b"", _PAST_LIMIT)) <= nesting.MAX_DEPTH):
        try:
            return _loads(body), False
        except (ValueError, UnicodeDecodeError):
            pass  # blank, or what only json reads, or not JSON: as below
    return _json_checked(body)


def _json_checked(body: bytes | str) -> tuple[Any, bool]:
    """``json_of`` the careful way: a blank body, one nested too deep, a large one, or JSON only the
    standard parser reads."""
    if not body.strip():
        return None, False
    try:
        nesting.check_json(body)
    except nesting.TooDeep:
        return None, True  # shown as it is, not decoded
    try:
        # orjson holds about 13 bytes per byte of a long string while it parses; the standard
        # parser 2: a multi-megabyte body (a file part in base64) is read by the latter
        return (_loads(body) if len(body) < _LARGE_BODY else json.loads(body)), False
    except (ValueError, UnicodeDecodeError):
        try:  # orjson is stricter (NaN, integers past 64 bits): what json reads still counts
            return json.loads(body), False
        except (ValueError, UnicodeDecodeError):
            return None, True


_LARGE_BODY = 1 << 20


_PAST_LIMIT = nesting.MAX_DEPTH + 1


#: a body too short to nest past the limit and close what it opens
_SHORT_BODY = 2 * _PAST_LIMIT


def dig(value: object, path: tuple[str, ...]) -> object:
    for key in path:
        if not isinstance(value, dict):
            return None
        value = value.get(key)
    return value


def nonempty(value: object) -> str | None:
    return value if isinstance(value, str) and value else None
