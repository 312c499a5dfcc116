"""A message body that stays where it is in its file, read in pieces.

A body is held as bytes while it is small. One larger than the reader's buffer (a stream recorded for
an hour, a 200 MB answer) is not: the reader keeps where it is in the file (``FileBody``: the file,
the offset, the length) and whoever needs it reads it in pieces (``pieces``): the SSE frames of a
stream are decoded a window at a time (capture/sse.py), ``show`` counts them, and only an output that
must hold the whole body (a JSON answer parsed, a HAR written) reads it whole (``whole``).

Both kinds are one protocol: ``len(body)``, ``pieces(body)`` and ``whole(body)``, so a reader of
bodies has one path for both. A body read from a pipe, which cannot be read again, is copied to a
temporary file as it is read (``Spill``), and kept there the same way.
"""

from __future__ import annotations

import contextlib
import os
import stat
import tempfile
from collections.abc import Iterator

#: how much of a body a piece holds
PIECE = 1 << 20


class _File:
    """A file the bodies read from hold open: a duplicate of the reader's descriptor (the reader may
    close its own, and the path may go), closed when the last body that reads from it is gone."""

    __slots__ = ("__weakref__", "fd")

    def __init__(self, fd: int) -> None:
        self.fd = fd

    def __del__(self) -> None:
        with contextlib.suppress(OSError):
            os.close(self.fd)


class FileBody:
    """``size`` bytes at ``offset`` in an open file: a body that is not held in memory."""

    __slots__ = ("file", "offset", "size")

    def __init__(self, file: _File, offset: int, size: int) -> None:
        self.file, self.offset, self.size = file, offset, size

    def __len__(self) -> int:
        return self.size

    def __bool__(self) -> bool:
        return self.size > 0

    def __repr__(self) -> str:
        return f"FileBody(offset={self.offset}, size={self.size})"

    def part(self, start: int, end: int | None = None) -> FileBody:
        """The bytes from ``start`` to ``end`` (as a slice takes them, non-negative), still in the file."""
        end = self.size if end is None else min(end, self.size)
        start = min(start, end)
        return FileBody(self.file, self.offset + start, end - start)

    def pieces(self, piece: int = PIECE) -> Iterator[bytes]:
        fd, at, left = self.file.fd, self.offset, self.size
        while left > 0:
            data = os.pread(fd, min(piece, left), at)
            if not data:
                raise OSError(f"the capture file ended {left} bytes into a body it held (was it cut since?)")
            at += len(data)
            left -= len(data)
            yield data

    def read(self) -> bytes:
        return b"".join(self.pieces(self.size or 1))

    def __eq__(self, other: object) -> bool:
        """The same bytes (a body is its bytes, wherever they are)."""
        if isinstance(other, FileBody):
            if other.size != self.size:
                return False
            return all(mine == theirs for mine, theirs in zip(self.pieces(), other.pieces(), strict=True))
        if isinstance(other, (bytes, bytearray, memoryview)):
            if len(other) != self.size:
                return False
            view, at = memoryview(other), 0
            for data in self.pieces():
                if view[at:at + len(data)] != data:
                    return False
                at += len(data)
            return True
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]

    def __reduce__(self):
        return bytes, (self.read(),)  # a copy elsewhere holds the bytes: the file is this process's

    def __deepcopy__(self, memo: dict) -> FileBody:
        return self  # nothing in it changes


def pieces(body: bytes | FileBody, piece: int = PIECE) -> Iterator[bytes]:
    """A body's bytes a piece at a time (bytes in memory: themselves, in one piece if they fit)."""
    if isinstance(body, FileBody):
        yield from body.pieces(piece)
    elif len(body) <= piece:
        if body:
            yield body
    else:
        for at in range(0, len(body), piece):
            yield body[at:at + piece]


def whole(body: bytes | FileBody) -> bytes:
    """A body's bytes, all of them in memory."""
    return body.read() if isinstance(body, FileBody) else body


def span(body: bytes | FileBody, start: int, end: int) -> bytes:
    """The bytes from ``start`` to ``end`` of a body (a frame's, say), read out of its file if it is there."""
    return body.part(start, end).read() if isinstance(body, FileBody) else body[start:end]


def contains(body: bytes | FileBody, needle: bytes) -> bool:
    """Whether ``needle`` occurs in the body (looked for piece by piece, across their joins)."""
    if not isinstance(body, FileBody):
        return needle in body
    tail = b""
    for data in body.pieces():
        if needle in tail + data[:len(needle) - 1] or needle in data:
            return True
        tail = data[-(len(needle) - 1):] if len(needle) > 1 else b""
    return False


def starts_with(body: bytes | FileBody, prefix: bytes) -> bool:
    if not isinstance(body, FileBody):
        return body.startswith(prefix)
    return body.size >= len(prefix) and os.pread(body.file.fd, len(prefix), body.offset) == prefix


def ends_with(body: bytes | FileBody, suffix: bytes) -> bool:
    if not isinstance(body, FileBody):
        return body.endswith(suffix)
    size = len(suffix)
    return body.size >= size and os.pread(body.file.fd, size, body.offset + body.size - size) == suffix


class Spill:
    """Where a body read from a pipe is written as it is read, to be read back as a ``FileBody``: one
    temporary file for the reader (deleted at once: only its descriptor names it), appended to."""

    def __init__(self) -> None:
        self._file: _File | None = None
        self._size = 0

    def start(self) -> int:
        """Where the next body starts."""
        if self._file is None:
            handle, path = tempfile.mkstemp(prefix="a2a-capture-body-")
            os.unlink(path)
            self._file = _File(handle)
        return self._size

    def write(self, data: bytes | memoryview) -> None:
        view = memoryview(data)
        while view:
            written = os.write(self._file.fd, view)
            view = view[written:]
            self._size += written

    def read(self, start: int, size: int) -> bytes:
        """What was written at ``start`` (a broken capture's tail, read back into the reader's buffer)."""
        return FileBody(self._file, start, size).read()

    def body(self, start: int) -> FileBody:
        """The body written since ``start``."""
        return FileBody(self._file, start, self._size - start)


def opened(stream) -> _File | None:
    """A ``_File`` that reads what ``stream`` reads, if it is a regular file (a file object with a
    descriptor: not bytes in memory, not a pipe), else None."""
    try:
        fd = stream.fileno()
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return None
        return _File(os.dup(fd))
    except (AttributeError, OSError, ValueError):
        return None
