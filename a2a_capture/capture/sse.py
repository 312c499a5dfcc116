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
from collections.abc import Iterator
from typing import NamedTuple

#: blank lines, then the lines of one frame, then the blank line that ends it (or the end)
_BLOCK = re.compile(rb"(?:\r\n|\r|\n)*((?:[^\r\n]+(?:\r\n|\r|\n|\Z))+)(?:\r\n|\r|\n)?")

#: one `data: ` line and the blank line that closes it, by line end
_DATA_FRAME = {eol: re.compile(rb"data: ([^\r\n]*)" + eol + eol) for eol in (b"\n", b"\r\n")}


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
    return list(events(body, times, notes))


def events(
    body: bytes,
    times: list[float | None] | None = None,
    notes: dict[int, list[str]] | None = None,
) -> Iterator[Event]:
    """The events of an event-stream body one at a time, none kept: a long stream's frames pass
    in the memory of one. The way through the body is chosen before the first frame (by counts of
    its line ends), so every frame is read the same way; the last event is held back until the
    body ends, as trailing blank lines belong to it."""
    times = times or []
    notes = notes or {}
    if b"\r" not in body:
        if not notes and _only_data_frames(body, b"\n"):
            found = _data_frames(body, b"\n", times)
        else:
            found = _split(body, b"\n", times, notes)
    elif not notes and _only_data_frames(body, b"\r\n"):
        found = _data_frames(body, b"\r\n", times)
    elif body.count(b"\r\n") == body.count(b"\n") == body.count(b"\r"):
        found = _split(body, b"\r\n", times, notes)
    else:
        found = _general(body, times, notes)
    last = None
    for event in found:
        if last is not None:
            yield last
        last = event
    if last is not None:
        # trailing blank lines belong to the last frame so the spans cover the body
        yield last if last.end == len(body) else last._replace(end=len(body))


def _only_data_frames(body: bytes, eol: bytes) -> bool:
    """The body is nothing but one-line `data: ` frames, each closed by a blank line, every line
    ending with ``eol`` (LF, in a body with no CR; or CRLF): what a server streams, so what a
    recording holds. Told by counts, with no frame split: each blank line closes a frame (the line
    ends are twice the blank lines), and every one but the last is followed by the next `data: `."""
    if not body:
        return True
    gap = eol + eol
    closes = body.count(gap)
    return (body.startswith(b"data: ") and body.endswith(gap) and body.count(b"\n") == 2 * closes
            and (eol == b"\n" or body.count(b"\r") == 2 * closes) and body.count(gap + b"data: ") == closes - 1)


def _data_frames(body: bytes, eol: bytes, times: list[float | None]) -> Iterator[Event]:
    """The events of a body ``_only_data_frames`` holds true of: the same events ``_split`` finds,
    in fewer steps."""
    timed = len(times)
    for index, frame in enumerate(_DATA_FRAME[eol].finditer(body)):
        yield Event(frame.group(1).decode("utf-8", "replace"), None, None, None, (),
                    times[index] if index < timed else None, (), frame.start(), frame.end())


def _general(body: bytes, times: list[float | None], notes: dict[int, list[str]]) -> Iterator[Event]:
    """The events of any body, frame by frame as the WHATWG rules find them (the spans are
    not stretched over trailing blank lines)."""
    timed = len(times)
    for index, match in enumerate(_BLOCK.finditer(body)):
        at = times[index] if index < timed else None
        noted = tuple(notes[index]) if index in notes else ()
        yield _event(match.group(1).splitlines(), at, noted, match.start(), match.end())


def _pieces(body: bytes, gap: bytes) -> Iterator[tuple[bytes, bool]]:
    """What ``body.split(gap)`` gives, one piece at a time (and whether it is the last)."""
    at, step = 0, len(gap)
    while (cut := body.find(gap, at)) >= 0:
        yield body[at:cut], False
        at = cut + step
    yield body[at:], True


def _split(body: bytes, eol: bytes, times: list[float | None], notes: dict[int, list[str]]) -> Iterator[Event]:
    """The events of a body whose line ends are all ``eol``: frames are what blank lines part.

    A frame's span starts where the one before it ended (blank lines before it included) and
    ends after the blank line that closes it.
    """
    timed, size, gap = len(times), len(body), 2 * len(eol)
    start = pos = index = 0
    for piece, last in _pieces(body, eol + eol):
        pos += len(piece) + gap
        if not piece:
            continue
        frame = piece.strip(eol)  # blank lines before it; the last one's own line end
        if not frame:
            continue
        end = size if last else pos
        at = times[index] if index < timed else None
        noted = tuple(notes[index]) if notes and index in notes else ()
        index += 1
        if b"\n" not in frame and b"\r" not in frame and frame.startswith(b"data:"):
            data = frame[6:] if frame[5:6] == b" " else frame[5:]  # the common frame: one `data:` line
            yield Event(data.decode("utf-8", "replace"), None, None, None, (), at, noted, start, end)
        else:
            yield _event(frame.splitlines(), at, noted, start, end)
        start = end


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
