"""How deeply nested data may be before the tool stops reading it: one limit for JSON bodies,
HAR files and mitmproxy flow files.

Parsers, and every walk over what they return, recurse once or more per level; past Python's
recursion limit they fail with RecursionError wherever that happens to be. Data nested deeper
than MAX_DEPTH is refused up front instead: a body is shown as it is (not decoded), a HAR or
flow file gets a one-line error naming where the nesting passes the limit.
"""

from __future__ import annotations

import json
import re
from typing import Any

#: levels of lists and objects any JSON document (or flow record) may have; A2A traffic uses
#: about ten, and a walk of this many levels stays far inside Python's recursion limit
MAX_DEPTH = 100


class TooDeep(ValueError):
    """Nested deeper than MAX_DEPTH (a ValueError, as any other JSON that does not parse)."""

    def __init__(self, offset: int, path: str) -> None:
        self.offset = offset
        self.record = (1, 0)  # in a flow file: which record, starting at which byte
        self.path = _short(path)
        super().__init__(f"{self.path}: nested deeper than {MAX_DEPTH} levels")


def _short(path: str) -> str:
    """A path of a hundred levels, its start and end: `$.a.b[0]…[0][0]`."""
    parts = re.findall(r"\.[^.\[]+|\[[^\]]*\]", path[1:])
    return path if len(parts) <= 8 else "$" + "".join(parts[:5]) + "…" + "".join(parts[-2:])


def loads(data: bytes | str) -> Any:
    """json.loads, refusing a document nested deeper than MAX_DEPTH with TooDeep."""
    check_json(data)
    return json.loads(data)


def check_json(data: bytes | str) -> None:
    """Raise TooDeep where a JSON document nests deeper than MAX_DEPTH (fast for the usual)."""
    if isinstance(data, str):
        if data.count("[") + data.count("{") <= MAX_DEPTH:  # counted without a copy (SSE frames are text)
            return
        raw = data.encode("utf-8", "surrogatepass")
    else:
        raw = data
    if raw.count(b"[") + raw.count(b"{") <= MAX_DEPTH or _shallow(raw):
        return
    where = _deep_at(raw)
    if where is not None:
        raise TooDeep(*where)


_STRING = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"', re.DOTALL)
_NOT_BRACKETS = bytes(set(range(256)) - set(b"[]{}"))
_TOKEN = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"|[\[\]{},:]', re.DOTALL)


def _shallow(raw: bytes) -> bool:
    """True when the brackets surely nest no deeper than MAX_DEPTH: strings dropped, each pass
    takes innermost pairs away, at most two levels a pass (`[]` then `{}`)."""
    brackets = _STRING.sub(b"", raw).translate(None, _NOT_BRACKETS)
    for _ in range(MAX_DEPTH // 2):
        if not brackets:
            return True
        shorter = brackets.replace(b"[]", b"").replace(b"{}", b"")
        if shorter == brackets:
            return False  # unbalanced: the exact walk decides
        brackets = shorter
    return not brackets


def _deep_at(raw: bytes) -> tuple[int, str] | None:
    """(offset, JSON path) of the first list or object past MAX_DEPTH; a walk over the tokens."""
    stack: list[list] = []  # per open container: its bracket, and the key or index now being read
    last_string = b'""'
    for token in _TOKEN.finditer(raw):
        first = raw[token.start()]
        if first == 0x22:  # a string: perhaps the key of the next value
            last_string = token.group()
        elif first in b"[{":
            if len(stack) >= MAX_DEPTH:
                return token.start(), _path(stack)
            stack.append([first, 0 if first == 0x5B else None])
        elif first in b"]}":
            if stack:
                stack.pop()
        elif first == 0x2C and stack and stack[-1][0] == 0x5B:
            stack[-1][1] += 1
        elif first == 0x3A and stack and stack[-1][0] == 0x7B:
            stack[-1][1] = _key(last_string)
    return None


def _key(token: bytes) -> str:
    try:
        return json.loads(token)
    except ValueError:
        return token.decode("utf-8", "replace").strip('"')


#: a member name longer than this is cut in a path: the error stays one short line
LONGEST_NAME = 40


def _path(stack: list[list]) -> str:
    parts = ["$"]
    for bracket, member in stack:
        if bracket == 0x5B:
            parts.append(f"[{member}]")
        elif member is not None:
            name = str(member)
            if len(name) > LONGEST_NAME:
                parts.append(f'[{json.dumps(name[:LONGEST_NAME])[:-1]}…"]')
            else:
                parts.append(f".{name}" if name.isidentifier() else f"[{json.dumps(name)}]")
    return "".join(parts)


def line_and_column(data: bytes, offset: int) -> tuple[int, int]:
    """1-based line and column of ``offset``, for an error a user can jump to."""
    line_start = data.rfind(b"\n", 0, offset) + 1
    return data.count(b"\n", 0, offset) + 1, offset - line_start + 1


# -- mitmproxy flow files: tnetstrings, each value `LENGTH:PAYLOAD` and a type byte -----------

_CONTAINERS = b"]}"


def check_flows(data: bytes) -> None:
    """Raise TooDeep where a flow file's records nest deeper than MAX_DEPTH. Walked without
    recursion and without building anything: a value's length prefix says where it ends."""
    open_: list[list] = []  # per open list or dict: where its payload ends, its type, members read, key
    position, size, record = 0, len(data), (0, 0)
    while position < size:
        while open_ and position >= open_[-1][0]:
            position = open_.pop()[0] + 1
        if position >= size:
            return
        if not open_:
            record = (record[0] + 1, position)
        colon = data.find(b":", position, position + 12)
        if colon < 0 or not data[position:colon].isdigit():
            return  # not a tnetstring here: the flow reader says what is wrong
        start = colon + 1
        end = start + int(data[position:colon])
        if end >= size:
            return
        if open_:
            parent = open_[-1]
            if parent[1] == 0x7D and parent[2] % 2 == 0:  # a dict's key
                parent[3] = data[start:end].decode("utf-8", "replace")
            parent[2] += 1
        if data[end] in b"]}":
            if len(open_) >= MAX_DEPTH:
                error = TooDeep(position, _flow_path(open_))
                error.record = record
                raise error
            open_.append([end, data[end], 0, None])
            position = start
        else:
            position = end + 1


def _flow_path(open_: list[list]) -> str:
    """The member being read in each open list or dict: `$.metadata.deep[0][0]…`."""
    return "$" + "".join(f".{key}" if kind == 0x7D else f"[{members - 1}]" for _, kind, members, key in open_)
