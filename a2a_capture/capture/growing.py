"""A capture that is still being written: what was appended since the last look, and where each block is.

The recorder appends each exchange when it is complete. A reader that follows it (`record --live`,
`record --view`) reads only what was appended: while the file grows, the blocks before the newest
block's header (those are whole), and the newest once the file stopped growing for one look; each
exchange's line counted in the whole file.
"""

from __future__ import annotations

import io
import os
from collections.abc import Iterator
from typing import BinaryIO

from a2a_capture.capture.models import Exchange
from a2a_capture.capture.reader import CaptureReader, iter_exchanges
from a2a_capture.capture.syntax import STREAM_BODY_END as BLOCK_START
from a2a_capture.errors import A2ACaptureError


class LineOffsets:
    """Byte offsets of lines, found by reading a stream forward once as the lines asked for grow."""

    def __init__(self, stream: BinaryIO) -> None:
        self.stream = stream
        self.line = 1  # the line that starts at ``base + position``
        self.base, self.position, self.buffer = 0, 0, b""

    def of(self, line: int | None) -> int:
        """Where ``line`` (1-based, not before the last one asked for) starts; None: where the last one did."""
        if line is None:
            return self.base + self.position
        buffer, position = self.buffer, self.position
        while self.line < line:
            newline = buffer.find(b"\n", position)
            if newline < 0:
                chunk = self.stream.read(1 << 20)
                if not chunk:
                    break
                self.base += position  # keep only what is not read yet: no copy of what was
                buffer, position = buffer[position:] + chunk, 0
                continue
            position = newline + 1
            self.line += 1
        self.buffer, self.position = buffer, position
        return self.base + position


def exchanges_with_offsets(path: str | os.PathLike) -> Iterator[tuple[Exchange, int]]:
    """The exchanges of a capture, each with the byte offset of its block, in one pass over the file."""
    with open(path, "rb") as stream:
        offsets = LineOffsets(stream)
        for exchange in iter_exchanges(path):
            yield exchange, offsets.of(exchange.line)


class GrowingCapture:
    """The blocks appended to a capture since the last ``poll``."""

    def __init__(self, path: str, *, from_end: bool = False) -> None:
        """``from_end``: only what is appended from now on (what the file holds already is not read)."""
        self.path = path
        self.offset = os.path.getsize(path) if from_end and os.path.exists(path) else 0
        #: lines before ``offset``: appended blocks are read alone, and their lines count from here
        self.lines = _line_ends(path, self.offset) if self.offset else 0
        self._size: int | None = None

    def poll(self, final: bool = False) -> list[tuple[Exchange, int]]:
        """The whole blocks appended since the last look, with their offsets in the file; ``final``: all
        that is there now (the recorder stopped)."""
        try:
            size = os.path.getsize(self.path)
        except OSError:
            return []
        if size <= self.offset:
            return []
        with open(self.path, "rb") as stream:
            stream.seek(self.offset)
            data = stream.read(size - self.offset)
        growing = size != self._size and not final
        self._size = size
        if growing:  # the blocks before the newest block's header are whole: the recorder appends block by block
            newest = _newest_block(data)
            if newest is None:
                return []
            data = data[:newest]
        try:
            exchanges = list(CaptureReader(io.BytesIO(data), self.path))
        except A2ACaptureError:
            return []  # not whole yet (a framed body holding what looks like a block's start): at the next look
        offsets = LineOffsets(io.BytesIO(data))
        placed = []
        for exchange in exchanges:
            at = self.offset + offsets.of(exchange.line)
            if exchange.line is not None:  # the line in the whole file, for `path:LINE:`
                exchange.line += self.lines
            placed.append((exchange, at))
        self.offset, self.lines = self.offset + len(data), self.lines + data.count(b"\n")
        return placed


def _newest_block(data: bytes) -> int | None:
    """Where the newest block's header starts: after a blank line, as the writer starts every block (a body
    written without a length never holds one; one framed by its length that does fails to read cut, and waits)."""
    newest = None
    for match in BLOCK_START.finditer(data):
        newest = match.end()
    return newest


def _line_ends(path: str, size: int) -> int:
    count = 0
    with open(path, "rb") as stream:
        while size > 0:
            chunk = stream.read(min(size, 1 << 20))
            if not chunk:
                break
            count, size = count + chunk.count(b"\n"), size - len(chunk)
    return count
