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

from a2a_capture.capture.body import PIECE, FileBody, ends_with, pieces, starts_with

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
    body: bytes | FileBody,
    times: list[float | None] | None = None,
    notes: dict[int, list[str]] | None = None,
) -> list[Event]:
    """Split an event-stream body into events, with arrival times and notes by position."""
    return list(events(body, times, notes))


def events(
    body: bytes | FileBody,
    times: list[float | None] | None = None,
    notes: dict[int, list[str]] | None = None,
    piece: int = PIECE,
) -> Iterator[Event]:
    """The events of an event-stream body one at a time, none kept: a long stream's frames pass
    in the memory of one. The body is read a window at a time (one window: the whole of a body that
    fits in a piece; a body kept in its file: a piece at a time, capture/body.py), so memory follows
    the largest frame, not the body. The way through the body is chosen before the first frame (by
    counts of its line ends), so every frame is read the same way; the last event is held back until
    the body ends, as trailing blank lines belong to it. ``piece``: how much of the body is read at a time."""
    times = times or []
    notes = notes or {}
    count = body.count if isinstance(body, bytes) else _Counts(body, piece).count
    window = _Window(body, piece)
    if count(b"\r") == 0:
        if not notes and _only_data_frames(body, count, b"\n"):
            found = _data_frames(window, b"\n", times)
        else:
            found = _split(window, len(body), b"\n", times, notes)
    elif not notes and _only_data_frames(body, count, b"\r\n"):
        found = _data_frames(window, b"\r\n", times)
    elif count(b"\r\n") == count(b"\n") == count(b"\r"):
        found = _split(window, len(body), b"\r\n", times, notes)
    else:
        found = _general(window, times, notes)
    last = None
    for event in found:
        if last is not None:
            yield last
        last = event
    if last is not None:
        # trailing blank lines belong to the last frame so the spans cover the body
        yield last if last.end == len(body) else last._replace(end=len(body))


class _Window:
    """The part of a body a decoder looks at: ``buf``, from ``base`` in the body, to the end of the body
    when ``final``. A decoder takes the frames ``buf`` holds whole and asks for more from where it got."""

    def __init__(self, body: bytes | FileBody, piece: int = PIECE) -> None:
        # bytes in memory are one window: a copy in pieces would only add to them
        self._pieces = iter((body,)) if isinstance(body, bytes) else pieces(body, piece)
        self.base = 0
        self.buf = next(self._pieces, b"")
        self._next = next(self._pieces, None)  # one piece ahead: the last is known as it is read
        self.final = self._next is None

    def advance(self, at: int) -> int:
        """The window moved on to start at ``at`` (in ``buf``), with at least one more piece, as many
        as what it kept (a frame longer than a piece is joined once per doubling, not once per piece);
        where ``at`` now is."""
        rest = memoryview(self.buf)[at:]
        self.base += at
        parts, added = [rest], 0
        while self._next is not None and (added == 0 or added < len(rest)):
            parts.append(self._next)
            added += len(self._next)
            self._next = next(self._pieces, None)
        self.final = self._next is None
        self.buf = b"".join(parts)
        return 0


class _Counts:
    """``bytes.count`` for a body kept in its file, counted a piece at a time: each piece is counted up to
    a place where no line end stands in the seven bytes before it, so none of the needles counted here
    (a run of line ends, then perhaps `data: `) can lie across it, and the counts add up."""

    def __init__(self, body: bytes | FileBody, piece: int = PIECE) -> None:
        self.body, self.piece = body, piece
        self._counted: dict[bytes, int] = {}

    def count(self, needle: bytes) -> int:
        if (known := self._counted.get(needle)) is None:
            known, carry = 0, b""
            for data in pieces(self.body, self.piece):
                window = carry + data if carry else data
                cut = _safe_cut(window)
                known += window.count(needle, 0, cut)
                carry = window[cut:]
            known = self._counted[needle] = known + carry.count(needle)
        return known


def _safe_cut(window: bytes) -> int:
    """The last place in ``window`` with no CR or LF in the seven bytes before it (0: none in its last 64 KB)."""
    end, stop = len(window), max(0, len(window) - (1 << 16))
    while end - 7 >= stop:
        eol = max(window.rfind(b"\n", end - 7, end), window.rfind(b"\r", end - 7, end))
        if eol < 0:
            return end
        end = eol
    return 0


def _only_data_frames(body: bytes | FileBody, count, eol: bytes) -> bool:
    """The body is nothing but one-line `data: ` frames, each closed by a blank line, every line
    ending with ``eol`` (LF, in a body with no CR; or CRLF): what a server streams, so what a
    recording holds. Told by counts (``count``: the body's), with no frame split: each blank line
    closes a frame (the line ends are twice the blank lines), and every one but the last is followed
    by the next `data: `."""
    if not body:
        return True
    gap = eol + eol
    closes = count(gap)
    return (starts_with(body, b"data: ") and ends_with(body, gap) and count(b"\n") == 2 * closes
            and (eol == b"\n" or count(b"\r") == 2 * closes) and count(gap + b"data: ") == closes - 1)


def _data_frames(window: _Window, eol: bytes, times: list[float | None]) -> Iterator[Event]:
    """The events of a body ``_only_data_frames`` holds true of: the same events ``_split`` finds,
    in fewer steps."""
    timed, index, frames, at = len(times), 0, _DATA_FRAME[eol].finditer, 0
    while True:
        base = window.base
        for frame in frames(window.buf, at):
            yield Event(frame.group(1).decode("utf-8", "replace"), None, None, None, (),
                        times[index] if index < timed else None, (), base + frame.start(), base + frame.end())
            index, at = index + 1, frame.end()
        if window.final:
            return
        at = window.advance(at)


def _general(window: _Window, times: list[float | None], notes: dict[int, list[str]]) -> Iterator[Event]:
    """The events of any body, frame by frame as the WHATWG rules find them (the spans are
    not stretched over trailing blank lines). A frame found two bytes or more before the window's end is
    the one the whole body has there (the pattern looks at most one byte past what it takes)."""
    timed, index, at = len(times), 0, 0
    while True:
        buf, base, final = window.buf, window.base, window.final
        for match in _BLOCK.finditer(buf, at):
            if not final and match.end() + 2 > len(buf):
                break
            noted = tuple(notes[index]) if index in notes else ()
            yield _event(match.group(1).splitlines(), times[index] if index < timed else None, noted,
                         base + match.start(), base + match.end())
            index, at = index + 1, match.end()
        if final:
            return
        at = window.advance(at)


def _pieces(window: _Window, gap: bytes) -> Iterator[tuple[bytes, bool]]:
    """What ``body.split(gap)`` gives, one piece at a time (and whether it is the last)."""
    at, step = 0, len(gap)
    while True:
        buf = window.buf
        while (cut := buf.find(gap, at)) >= 0:
            yield buf[at:cut], False
            at = cut + step
        if window.final:
            yield buf[at:], True
            return
        at = window.advance(at)


def _split(window: _Window, size: int, eol: bytes, times: list[float | None],
           notes: dict[int, list[str]]) -> Iterator[Event]:
    """The events of a body (of ``size`` bytes) whose line ends are all ``eol``: frames are what blank
    lines part.

    A frame's span starts where the one before it ended (blank lines before it included) and
    ends after the blank line that closes it.
    """
    timed, gap = len(times), 2 * len(eol)
    start = pos = index = 0
    for piece, last in _pieces(window, eol + eol):
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
