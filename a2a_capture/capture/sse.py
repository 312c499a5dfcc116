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
    if b"\r" not in body:
        events = _data_frames(body, b"\n", times, notes)
        if events is None:
            events = _split(body, b"\n", times, notes)
    else:  # CRLF, seen to be so frame by frame; else counted, else the general expression
        events = _data_frames(body, b"\r\n", times, notes)
        if events is None:
            events = _split(body, b"\r\n", times, notes, sure=False)
        if events is None:
            if body.count(b"\r\n") == body.count(b"\n") == body.count(b"\r"):
                events = _split(body, b"\r\n", times, notes)
            else:
                events = _general(body, times, notes)
    if events and events[-1].end != len(body):
        # trailing blank lines belong to the last frame so the spans cover the body
        events[-1] = events[-1]._replace(end=len(body))
    return events


def _data_frames(body: bytes, eol: bytes, times: list[float | None],
                 notes: dict[int, list[str]]) -> list[Event] | None:
    """The events of a body that is nothing but one-line `data: ` frames, each closed by a blank
    line, every line ending with ``eol`` (LF or CRLF), and no notes: what a server streams, so
    what a recording holds; None for any other body. The same events ``_split`` finds, in fewer
    steps."""
    pieces = body.split(eol + eol)
    if pieces.pop() or notes:
        return None
    events: list[Event] = []
    start, timed, gap = 0, len(times), 2 * len(eol)
    for index, piece in enumerate(pieces):
        if not piece.startswith(b"data: ") or b"\n" in piece or b"\r" in piece:
            return None
        end = start + len(piece) + gap
        events.append(Event(piece[6:].decode("utf-8", "replace"), None, None, None, (),
                            times[index] if index < timed else None, (), start, end))
        start = end
    return events


def _general(body: bytes, times: list[float | None], notes: dict[int, list[str]]) -> list[Event]:
    """The events of any body, frame by frame as the WHATWG rules find them (the spans are
    not stretched over trailing blank lines)."""
    events: list[Event] = []
    for match in _BLOCK.finditer(body):
        index = len(events)
        at = times[index] if index < len(times) else None
        noted = tuple(notes[index]) if index in notes else ()
        events.append(_event(match.group(1).splitlines(), at, noted, match.start(), match.end()))
    return events


def _split(body: bytes, eol: bytes, times: list[float | None], notes: dict[int, list[str]],
           sure: bool = True) -> list[Event] | None:
    """The events of a body whose line ends are all ``eol``: frames are what blank lines part.
    Not ``sure`` of that: None at the first frame that does not show it on its own (a frame of
    more than one line, blank lines around it).

    A frame's span starts where the one before it ended (blank lines before it included) and
    ends after the blank line that closes it.
    """
    events: list[Event] = []
    timed, size, gap = len(times), len(body), 2 * len(eol)
    pieces = body.split(eol + eol)
    last = len(pieces) - 1
    start = pos = 0
    for number, piece in enumerate(pieces):
        pos += len(piece) + gap
        if not piece:
            continue
        frame = piece.strip(eol)  # blank lines before it; the last one's own line end
        one_line = b"\n" not in frame and b"\r" not in frame
        if not sure and (frame is not piece or not one_line):
            return None
        if not frame:
            continue
        end = pos if number < last else size
        index = len(events)
        at = times[index] if index < timed else None
        noted = tuple(notes[index]) if notes and index in notes else ()
        if one_line and frame.startswith(b"data:"):
            data = frame[6:] if frame[5:6] == b" " else frame[5:]  # the common frame: one `data:` line
            events.append(Event(data.decode("utf-8", "replace"), None, None, None, (), at, noted, start, end))
        else:
            events.append(_event(frame.splitlines(), at, noted, start, end))
        start = end
    return events


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
