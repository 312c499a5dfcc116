"""The recorder's copy of a body as it passes: in memory while it is small, then in a temporary
file, so a body of any size is kept whole without being held whole.

The copy remembers when each chunk came (for the arrival time of each SSE frame or gRPC message)
and whether the body is UTF-8 text without NUL, which decides how the capture writes it. Past an
optional cut size it keeps nothing more, only the count of what it left out.
"""

from __future__ import annotations

import codecs
import tempfile
import time
from array import array

from a2a_capture.capture.writer import SpooledBody

#: a body up to this size is kept in memory; a larger one goes to a temporary file
IN_MEMORY = 4 * 1024 * 1024

#: how much of a spilled body stays in memory, for titles and for telling what it is
HEAD = 64 * 1024

#: how much of a spilled body is read, redacted or written at once
PIECE = 1024 * 1024


class BodyCopy:
    """A mitmproxy stream callable that passes each chunk on and keeps a copy of it."""

    def __init__(self, cut: int | None = None, in_memory: int = IN_MEMORY) -> None:
        self.cut = cut if cut and cut > 0 else None
        self.in_memory = in_memory
        self.size = 0  #: bytes that passed
        self.kept = 0  #: bytes kept (all of them, but past the cut size)
        self._chunks: list[bytes] = []
        self._file = None
        self.head = b""
        self._times = array("d")
        self._ends = array("q")
        self._utf8 = codecs.getincrementaldecoder("utf-8")()
        self.text = True  #: UTF-8 without NUL so far
        self._joined: bytes | None = None

    def __call__(self, data: bytes) -> bytes:
        if data:
            self.keep(data)
        return data

    def keep(self, data: bytes) -> None:
        self.size += len(data)
        self._times.append(time.time())
        self._ends.append(self.size)
        if self.cut is not None and self.kept >= self.cut:
            return
        if self.cut is not None:
            data = data[:self.cut - self.kept]
        self.kept += len(data)
        self._joined = None
        if self.text:
            self._check_text(data)
        if self._file is None and self.kept > self.in_memory:
            self._spill()
        if self._file is not None:
            self._file.write(data)
        else:
            self._chunks.append(data)

    def _check_text(self, data: bytes) -> None:
        try:
            self._utf8.decode(data)
        except UnicodeDecodeError:
            self.text = False
            return
        if b"\x00" in data:
            self.text = False

    def _spill(self) -> None:
        self._file = tempfile.TemporaryFile(prefix="a2a-capture-body-")  # noqa: SIM115 - lives as long as the copy
        held = b"".join(self._chunks)
        self.head = held[:HEAD]
        self._file.write(held)
        self._chunks = []

    @property
    def spilled(self) -> bool:
        return self._file is not None

    @property
    def left_out(self) -> int:
        return self.size - self.kept

    @property
    def body(self) -> bytes:
        """The kept body, for one kept in memory; a spilled body gives its head (see ``spooled``)."""
        if self._file is not None:
            return self.head
        if self._joined is None:
            self._joined = b"".join(self._chunks)
        return self._joined

    def spooled(self) -> SpooledBody | None:
        """The spilled body as the capture writer streams it, or None for one in memory."""
        if self._file is None:
            return None
        self._file.flush()
        text = self.text
        if text:
            try:
                self._utf8.decode(b"", final=True)
            except UnicodeDecodeError:
                text = False
        return SpooledBody(self._file, self.kept, text)

    def pieces(self, boundary: bytes | None = None):
        """The kept body in pieces of about PIECE bytes, each cut after the last ``boundary`` in it
        (so what is looked at piece by piece is not cut mid-item)."""
        if self._file is None:
            yield self.body
            return
        self._file.seek(0)
        carry = b""
        while True:
            data = self._file.read(PIECE)
            if not data:
                break
            data = carry + data
            at = data.rfind(boundary) + len(boundary) if boundary else len(data)
            if at <= 0:
                at = len(data)
            yield data[:at]
            carry = data[at:]
        if carry:
            yield carry

    def redact(self, clean, boundary: bytes | None) -> list[str]:
        """Redact a spilled body a piece at a time (``clean(piece)`` gives the piece redacted and
        the places it redacted), into a new file that takes the old one's place if anything was
        redacted. Returns the places."""
        replacement = tempfile.TemporaryFile(prefix="a2a-capture-body-")  # noqa: SIM115 - becomes the copy's
        size, decoder, text, places = 0, codecs.getincrementaldecoder("utf-8")(), True, []
        for piece in self.pieces(boundary):
            piece, found = clean(piece)
            places += found
            replacement.write(piece)
            size += len(piece)
            if text:
                try:
                    decoder.decode(piece)
                    text = b"\x00" not in piece
                except UnicodeDecodeError:
                    text = False
        if not places:
            replacement.close()
            return []
        self.close()
        self._file, self.kept, self.text, self._utf8 = replacement, size, text, decoder
        return places

    def arrival_times(self, ends: list[int], start: float) -> list[float | None]:
        """When the chunk that completed each unit came, given where the units end in the body
        (SSE frames, gRPC messages), in seconds after ``start``."""
        times: list[float | None] = []
        index, count = 0, len(self._ends)
        for end in ends:  # units and chunks both in order: one pass over each
            while index < count and self._ends[index] < end:
                index += 1
            times.append(round(self._times[index] - start, 6) if index < count else None)
        return times

    @property
    def last_time(self) -> float | None:
        return self._times[-1] if self._times else None

    def close(self) -> None:
        if self._file is not None:
            self._file.close()
            self._file = None


def size_from_option(value: str) -> int | None:
    """`--set a2a_body_limit=` as a size: bytes, or with k, m or g; empty or 0 for no limit."""
    text = value.strip().lower()
    if not text or text == "0":
        return None
    units = {"k": 1024, "m": 1024 ** 2, "g": 1024 ** 3}
    factor = units.get(text[-1:], 1)
    number = text[:-1] if text[-1:] in units else text
    if text[-1:] == "b":
        number = text[:-1]
    if not number.isdigit() or len(number) > 15:
        raise ValueError(f"a body size limit should be a size such as 1048576, 512k or 10m, not {value!r}")
    return int(number) * factor
