"""The bytes of a capture file under a reader: a sliding buffer that knows each position's line.

A capture may be larger than memory, so the reader never holds the file: it looks at a buffer that
moves on a chunk at a time, and keeps only what a caller still needs (a ``tell`` it may come back to).
A body longer than the buffer is not read into memory: it stays in the file, and the reader hands on
where it is (a ``FileBody``: capture/body.py), its lines counted a piece at a time as it is passed.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from typing import BinaryIO

from a2a_capture.capture.body import FileBody, Spill, opened, whole
from a2a_capture.errors import CaptureFormatError

CHUNK = 1 << 20
_BLANK_LINE = re.compile(rb"(?:\A|\n)\r?\n")

#: how a reader says what it expected where the source stands (or at ``line``), and what it ``found``
Error = Callable[..., CaptureFormatError]


class Source:
    """A buffered byte source that knows the line number of its position."""

    chunk_size = CHUNK

    def __init__(self, stream: BinaryIO) -> None:
        self.stream = stream
        self.buf = b""
        self.pos = 0
        self.line = 1
        self.eof = False
        self.dropped = 0  # bytes of the file before the buffer
        self.kept: int | None = None  # where in the file a ``tell`` asks the buffer to keep from
        #: where the stream stood when the reader began, if it can seek: a body longer than the buffer
        #: is then left in the file (``take``), never copied through the buffer
        self.origin = _seekable_at(stream)
        self._file = None  # what the bodies left in the file read it by (made for the first of them)
        #: a pipe's: where the bodies too long for the buffer are copied as they are read (made for the first)
        self._spill: Spill | None = None
        self._spilled = (0, 0)  # where the last body ``take`` copied there starts, in the stream and in the spill

    def fill(self) -> bool:
        """Read one more chunk; False at the end of the file."""
        if self.eof:
            return False
        # (a mark before the buffer, where ``take`` read a body past it, keeps nothing: ``back_to`` seeks)
        cut = self.pos if self.kept is None else max(0, min(self.pos, self.kept - self.dropped))
        # past a chunk of kept bytes (a line longer than a chunk), as many again: each byte is copied
        # a bounded number of times, not once per chunk (a 200 MB line: 200 copies of 100 MB on average)
        kept = len(self.buf) - cut
        chunk = self.stream.read(kept if kept > CHUNK else self.chunk_size)
        if not chunk:
            self.eof = True
            return False
        if cut:  # what was read is dropped as the chunk is added: one copy
            self.buf = b"".join((memoryview(self.buf)[cut:], chunk))
            self.dropped += cut
            self.pos -= cut
        else:
            self.buf += chunk
        return True

    def peek_line(self) -> bytes:
        """The next line with its line end; b"" at the end of the file."""
        while True:
            end = self.buf.find(b"\n", self.pos)
            if end >= 0:
                return self.buf[self.pos:end + 1]
            if not self.fill():
                return self.buf[self.pos:]

    def peek_past_blank_lines(self) -> tuple[bytes, int]:
        """The first line that is not blank, and how many bytes of blank lines precede it."""
        offset = 0
        while True:
            end = self.buf.find(b"\n", self.pos + offset)
            if end < 0:
                if self.fill():
                    continue
                return self.buf[self.pos + offset:], offset
            line = self.buf[self.pos + offset:end + 1]
            if line not in (b"\n", b"\r\n"):
                return line, offset
            offset += len(line)

    def next_line(self) -> bytes:
        line = self.peek_line()
        self.skip(len(line))
        return line

    def skip(self, size: int) -> None:
        self.line += self.buf.count(b"\n", self.pos, self.pos + size)
        self.pos += size

    def tell(self) -> tuple[int, int]:
        """Where the position is in the file, and its line, to come back to after reading on:
        the buffer keeps what follows until ``back_to`` or ``let_go``."""
        self.kept = self.dropped + self.pos
        return self.kept, self.line

    def back_to(self, mark: tuple[int, int]) -> None:
        if mark[0] < self.dropped:  # ``take`` read past the buffer from there: read again from the file
            if self.origin is not None:
                self._restart_at(mark[0])
            else:  # a pipe: what ``take`` copied to the spill file since the mark, back in the buffer
                file_start, spill_start = self._spilled
                self.buf = self._spill.read(spill_start + mark[0] - file_start, self.dropped - mark[0]) + self.buf
                self.dropped = mark[0]
        self.pos, self.line = mark[0] - self.dropped, mark[1]
        self.kept = None

    def let_go(self) -> None:
        self.kept = None

    def take(self, size: int) -> bytes | FileBody | None:
        """Exactly ``size`` bytes, or None if the file ends first."""
        if size - (len(self.buf) - self.pos) > self.chunk_size:
            return self._take_from_file(size) if self.origin is not None else self._take_to_spill(size)
        while len(self.buf) - self.pos < size:
            if not self.fill():
                return None
        data = self.buf[self.pos:self.pos + size]
        self.skip(size)
        return data

    def _take_from_file(self, size: int) -> bytes | FileBody | None:
        """``take`` for more than the buffer holds: the body left in the file, its lines counted a piece at a time
        (bytes in memory, a stream with no file under it: read in one read, into the one object that keeps them;
        filling the buffer on would copy it once for each time it grew); the buffer starts again after it. At the
        end of the file first, the buffer holds what is left of it, as ``take`` would leave it."""
        start = self.dropped + self.pos
        body = self._in_file(start, size)
        if body is not None:
            self.line += sum(piece.count(b"\n") for piece in body.pieces())
            self._restart_at(start + size)
            return body
        self._restart_at(start)
        data = self.stream.read(size)
        if len(data) < size:
            self.buf, self.eof = data, True
            return None
        self.line += data.count(b"\n")
        self.dropped += size
        return data

    def _take_to_spill(self, size: int) -> FileBody | None:
        """``take`` for more than the buffer holds from a pipe, which cannot be read again: the body copied to the
        spill file a chunk at a time as it is read (its lines counted), and left there; the buffer starts again
        after it. At the end of the file first, the buffer holds what is left of it, as ``take`` would leave it."""
        spill = self._spill = self._spill or Spill()
        start, line = spill.start(), self.line
        self._spilled = (self.dropped + self.pos, start)  # where a mark before the body finds its bytes
        held = self.buf[self.pos:]
        spill.write(held)
        self.line += held.count(b"\n")
        self.dropped += len(self.buf)
        self.buf, self.pos = b"", 0
        left = size - len(held)
        while left:
            chunk = self.stream.read(min(left, self.chunk_size))
            if not chunk:  # the end of the file first (a broken capture): what there is, back in the buffer
                self.eof, self.line = True, line
                self.buf = spill.read(start, size - left)
                self.dropped -= len(self.buf)
                return None
            spill.write(chunk)
            self.line += chunk.count(b"\n")
            self.dropped += len(chunk)
            left -= len(chunk)
        return spill.body(start)

    def _in_file(self, start: int, size: int) -> FileBody | None:
        """The ``size`` bytes at ``start`` (in the file, from where the reader began) as a body left there, if the
        stream is a file's and holds them all; else None."""
        if self._file is None:
            self._file = opened(self.stream) or False
        if not self._file:
            return None
        body = FileBody(self._file, self.origin + start, size)
        return body if _size_of(self._file.fd) >= body.offset + size else None

    def _restart_at(self, offset: int) -> None:
        """An empty buffer at ``offset`` in the file, the stream moved there."""
        self.stream.seek(self.origin + offset)
        self.buf, self.pos, self.dropped, self.eof = b"", 0, offset, False

    def take_until(self, pattern: re.Pattern[bytes],
                   trim: Callable[[bytes, bool], int | None]) -> tuple[bytes | FileBody, bool]:
        """The bytes from the position to the first match of ``pattern`` on (reading on until found), the match
        consumed too, and whether there was one; else the bytes to the end of the file, all consumed, up to
        where ``trim(bytes, whether they are all there is)`` says they end (None: it cannot tell from those).

        A run longer than the buffer (a body without a length) is looked through as the buffer moves on, its
        bytes dropped once searched, then read from the file in one piece (as ``take`` reads one), so it is
        held once, not copied each time the buffer grows."""
        start = self.dropped + self.pos  # where the run starts in the file
        offset = 0  # where to search from, relative to the position (the buffer may move)
        spilled = None  # from a pipe: where the run starts in the spill file, once it is written there
        while True:
            match = pattern.search(self.buf, self.pos + offset)
            if match is not None:
                # the line after the match must be whole to be sure of what it is
                if self.eof or self.buf.find(b"\n", match.end()) >= 0:
                    break
                offset = match.start() - self.pos
            else:
                offset = max(0, len(self.buf) - self.pos - 64)
                while offset and self.buf[self.pos + offset - 1] in b"\r\n":
                    offset -= 1  # a match starts at the first line end of a run (syntax._ends)
            if offset > 2 * self.chunk_size and self.kept is None:
                # searched: the buffer may let it go (the two bytes before, for the pattern's look behind); from a
                # pipe, which cannot be read again, to the spill file
                if self.origin is None:
                    if spilled is None:
                        self._spill = self._spill or Spill()
                        spilled = self._spill.start()
                    self._spill.write(memoryview(self.buf)[self.pos:self.pos + offset - 2])
                self.skip(offset - 2)
                offset = 2
            if not self.fill():
                match = pattern.search(self.buf, self.pos + offset)
                break
        end, after = (len(self.buf),) * 2 if match is None else match.span()
        if start >= self.dropped:  # the run is all in the buffer
            run = self.buf[start - self.dropped:end]
            self.skip(after - self.pos)
            if match is None:
                run = run[:trim(run, True)]
            return run, match is not None
        # read from where it starts, in one piece, or left in the file (at the end of the file, to where the
        # buffer's tail says)
        cut = None if match is not None else trim(self.buf, False)
        if spilled is not None:  # from a pipe: the rest of it to the spill file, and left there
            self._spill.write(memoryview(self.buf)[self.pos:end if cut is None else cut])
            self.skip(after - self.pos)
            run = self._spill.body(spilled)
            if match is None and cut is None:
                run = whole(run)
                run = run[:trim(run, True)]
            return run, match is not None
        self.skip(after - self.pos)  # its lines counted
        end, after = self.dropped + (end if cut is None else cut), self.dropped + after
        run = self._in_file(start, end - start)
        if run is None:
            self._restart_at(start)
            run = self.stream.read(end - start)
        self._restart_at(after)
        if match is None and cut is None:  # the run of line ends reaches before the buffer's bytes
            run = whole(run)
            run = run[:trim(run, True)]
        return run, match is not None

    def take_run(self, pattern: re.Pattern[bytes]) -> bytes:
        """What ``pattern`` matches at the position, read on while the match may grow."""
        while True:
            match = pattern.match(self.buf, self.pos)
            # what stops the match must be a whole line, or the run may go on in the next chunk
            if self.buf.find(b"\n", match.end()) >= 0 or not self.fill():
                run = self.buf[self.pos:match.end()]
                self.skip(len(run))
                return run

    def take_head(self) -> bytes:
        """The lines up to the first blank one (consumed too), without that blank line."""
        while True:
            match = _BLANK_LINE.search(self.buf, self.pos)
            if match is not None:
                head = self.buf[self.pos:match.start()]
                self.skip(match.end() - self.pos)
                return head
            if not self.fill():
                head = self.buf[self.pos:]
                self.skip(len(head))
                return head



def _size_of(fd: int) -> int:
    return os.fstat(fd).st_size


def _seekable_at(stream: BinaryIO) -> int | None:
    """Where ``stream`` stands, if it can seek (a file, bytes in memory); None for a pipe."""
    try:
        return stream.tell() if stream.seekable() else None
    except (AttributeError, OSError, ValueError):
        return None

