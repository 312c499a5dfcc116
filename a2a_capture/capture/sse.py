"""Server-sent events, parsed from exact body bytes.

Parsing follows the WHATWG event-stream rules (CRLF, LF or CR line ends, `field: value`,
`:` comments, blank line dispatches), with one allowance for documentation captures: a
last event with no closing blank line still counts. Each event remembers the byte span it
came from, so a writer can put notes between frames without touching the body.

Events are derived from a body, never stored on their own, so they are light named
tuples rather than validated models: a long stream has thousands of them.
"""

from __future__ import annotations

import re
from typing import NamedTuple

#: blank lines, then the lines of one frame, then the blank line that ends it (or the end)
_BLOCK = re.compile(rb"(?:\r\n|\r|\n)*((?:[^\r\n]+(?:\r\n|\r|\n|\Z))+)(?:\r\n|\r|\n)?")


class Event(NamedTuple):
    """One SSE frame."""

    data: str | None = None
    event: str | None = None
    id: str | None = None
    retry: int | None = None
    comments: tuple[str, ...] = ()
    #: seconds after the exchange started that the frame arrived, if recorded.
    at: float | None = None
    #: notes a capture shows just before this frame.
    notes: tuple[str, ...] = ()
    #: byte offsets of the frame in the body it was parsed from.
    start: int = 0
    end: int = 0

    @property
    def is_ping(self) -> bool:
        """A frame with nothing but comments, such as sse-starlette's keep-alive."""
        return self.data is None and self.event is None and self.id is None


def parse(
    body: bytes,
    times: list[float | None] | None = None,
    notes: dict[int, list[str]] | None = None,
) -> list[Event]:
    """Split an event-stream body into events, with arrival times and notes by position."""
    times = times or []
    notes = notes or {}
    events: list[Event] = []
    timed = len(times)
    for start, block, end in _blocks(body):
        index = len(events)
        at = times[index] if index < timed else None
        noted = tuple(notes[index]) if notes and index in notes else ()
        line_end = block.find(b"\n")
        if block.startswith(b"data:") and (line_end < 0 or line_end == len(block) - 1) \
                and block.find(b"\r", 0, len(block) - 2) < 0:  # the common frame: one `data:` line
            data = block[6:] if block[5:6] == b" " else block[5:]
            events.append(Event(data.rstrip(b"\r\n").decode("utf-8", "replace"), None, None, None, (),
                                at, noted, start, end))
        else:
            events.append(_event(block.splitlines(), at, noted, start, end))
    if events and events[-1].end != len(body):
        # trailing blank lines belong to the last frame so the spans cover the body
        events[-1] = events[-1]._replace(end=len(body))
    return events


def _blocks(body: bytes):
    """(span start, frame lines, span end) for each frame."""
    if b"\r" not in body:
        eol = b"\n"
    elif body.count(b"\r\n") == body.count(b"\n") == body.count(b"\r"):
        eol = b"\r\n"
    else:  # mixed line ends: the general expression
        for match in _BLOCK.finditer(body):
            yield match.start(), match.group(1), match.end()
        return
    sep, step, size, pos = eol + eol, len(eol), len(body), 0
    while pos < size:
        start = pos
        while body.startswith(eol, pos):
            pos += step
        if pos >= size:
            return
        found = body.find(sep, pos)
        if found < 0:
            yield start, body[pos:], size
            return
        yield start, body[pos:found + step], found + 2 * step
        pos = found + 2 * step


def _event(lines: list[bytes], at: float | None, notes: tuple[str, ...], start: int, end: int) -> Event:
    data: list[str] = []
    comments: list[str] = []
    event = ident = retry = None
    for raw in lines:
        if not raw:
            continue
        text = raw.decode("utf-8", "replace")
        if text[0] == ":":
            comments.append(text[1:].removeprefix(" "))
            continue
        name, _, value = text.partition(":")
        if value[:1] == " ":
            value = value[1:]
        if name == "data":
            data.append(value)
        elif name == "event":
            event = value
        elif name == "id":
            ident = value
        elif name == "retry" and value.isascii() and value.isdigit() and len(value) <= 15:
            retry = int(value)
    return Event(
        data="\n".join(data) if data else None,
        event=event,
        id=ident,
        retry=retry,
        comments=tuple(comments),
        at=at,
        notes=notes,
        start=start,
        end=end,
    )
