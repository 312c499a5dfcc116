"""Append exchanges to a capture file, one whole block at a time, under a lock.

The file is a valid capture at every moment: a block is written whole before the next starts
(a large body streamed from its spool file inside it), so a killed recorder leaves every
completed exchange readable and no torn one. A write that fails (a full disk, EIO, EFBIG) has
its partial block cut away and stops the recording with one line saying why; the traffic goes
on. A second recorder on the same file is refused: the file is locked while it is recorded.
A recording appended to an existing capture continues its numbering and says where it
starts, so the file stays one readable capture with unique numbers.
"""

from __future__ import annotations

import fcntl
import os
import threading

from a2a_capture import __version__
from a2a_capture.a2a.grpc import VIEWS
from a2a_capture.capture.models import Exchange
from a2a_capture.capture.writer import CaptureWriter, SpooledBody
from a2a_capture.errors import CaptureInUse
from a2a_capture.record import notes

FORMAT = "a2a-capture/1"

APPENDED_NOTE = notes.APPENDED


def last_numbers(path: str | os.PathLike) -> dict[str, int]:
    """The highest exchange and webhook numbers already in a capture (reads it through once).

    Raises CaptureFormatError when the file is not a readable capture: appending to it
    would only bury the damage deeper.
    """
    from a2a_capture.capture import iter_exchanges

    numbers = {"exchange": 0, "webhook": 0}
    for exchange in iter_exchanges(path):
        kind = "webhook" if exchange.webhook else "exchange"
        numbers[kind] = max(numbers[kind], exchange.number)
    return numbers


class RecordingStopped(Exception):
    """A write to the capture failed; ``line`` says so for the user, in one line."""

    def __init__(self, line: str) -> None:
        super().__init__(line)
        self.line = line


def in_use_message(path: str) -> str:
    return f"{path} is being recorded by another a2a-capture recorder (the file is locked); record to another file"


def lock(fd: int, path: str) -> None:
    """Hold the capture for this recorder alone, or say who has it."""
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        raise CaptureInUse(in_use_message(path)) from None


class CaptureSink:
    def __init__(self, path: str | os.PathLike, *, fsync: bool = False, recorder: str = "") -> None:
        self.path = os.fspath(path)
        self.fsync = fsync
        self.count = 0
        #: the error that stopped the recording, if one did
        self.failed: OSError | None = None
        self._lock = threading.Lock()
        # O_APPEND: each write lands at the end; the lock keeps other recorders out
        self._fd = os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
        try:
            lock(self._fd, self.path)
        except BaseException:
            os.close(self._fd)
            raise
        existing = os.fstat(self._fd).st_size
        #: where numbering continues: the last numbers of the capture appended to
        self.numbers = last_numbers(self.path) if existing else {"exchange": 0, "webhook": 0}
        self._start_note = APPENDED_NOTE.format(last=self.numbers["exchange"]) if existing else None
        # a body safe to write bare after a stream is safe anywhere, and an appended file
        # may already hold streams the writer did not see
        self._writer = CaptureWriter(assume_stream=True, views=VIEWS)
        if existing == 0:
            meta = [("format", FORMAT), ("recorder", f"a2a-capture {__version__}{recorder}")]
            self._write(self._writer.preamble(meta=meta))
        else:
            # the last body may have been written with an exact length, which needs a blank
            # line after its own line end, whatever bytes the body itself ended with
            separator = b"\n" if self._tail().endswith(b"\n") else b"\n\n"
            self._write(separator)
            self._writer.continue_after(b"\n\n")

    def _tail(self) -> bytes:
        with open(self.path, "rb") as stream:
            stream.seek(max(0, os.path.getsize(self.path) - 4))
            return stream.read()

    def write(self, exchange: Exchange, spooled: dict[str, SpooledBody] | None = None) -> bool:
        """Append the exchange whole (False once the recording has stopped). Raises
        RecordingStopped the first time a write fails, with the partial block cut away."""
        with self._lock:
            if self.failed is not None or self._fd < 0:
                return False
            if self._start_note is not None:
                exchange.notes.insert(0, self._start_note)
            start = os.lseek(self._fd, 0, os.SEEK_END)
            try:
                for piece in self._writer.block_pieces(exchange, spooled):
                    self._write(piece)
            except OSError as error:
                self.failed = error
                cut = self._cut(start)
                raise RecordingStopped(
                    f"a2a-capture: {self.path}: {error.strerror or error}: recording stopped at exchange "
                    f"{exchange.number}, with {self.count} exchange{'s' if self.count != 1 else ''} written whole"
                    f"{cut}; traffic still passes") from None
            self._start_note = None
            self.count += 1
            return True

    def _cut(self, start: int) -> str:
        """Cut a partly written block away; what to add to the line when that failed too."""
        try:
            os.ftruncate(self._fd, start)
        except OSError as error:
            return f" (its partial block could not be cut away: {error.strerror or error})"
        return ""

    def _write(self, data: bytes) -> None:
        view = memoryview(data)
        while view:
            written = os.write(self._fd, view)
            view = view[written:]
        if self.fsync:
            os.fsync(self._fd)

    def close(self) -> None:
        with self._lock:
            if self._fd >= 0:
                os.close(self._fd)
                self._fd = -1
