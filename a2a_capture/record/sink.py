"""Append exchanges to a capture file, one whole block per write, flushed at once.

The file is a valid capture at every moment: a block is written with a single write and
flushed before the next, so a killed recorder leaves every completed exchange readable and
no torn one. A recording appended to an existing capture continues its numbering and says
where it starts, so the file stays one readable capture with unique numbers.
"""

from __future__ import annotations

import os
import threading

from a2a_capture import __version__
from a2a_capture.capture.models import Exchange
from a2a_capture.capture.writer import CaptureWriter
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


class CaptureSink:
    def __init__(self, path: str | os.PathLike, *, fsync: bool = False, recorder: str = "") -> None:
        self.path = os.fspath(path)
        self.fsync = fsync
        self.count = 0
        self._lock = threading.Lock()
        existing = os.path.getsize(self.path) if os.path.exists(self.path) else 0
        #: where numbering continues: the last numbers of the capture appended to
        self.numbers = last_numbers(self.path) if existing else {"exchange": 0, "webhook": 0}
        self._start_note = APPENDED_NOTE.format(last=self.numbers["exchange"]) if existing else None
        # O_APPEND: each write lands at the end even if something else appends too
        self._fd = os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
        # a body safe to write bare after a stream is safe anywhere, and an appended file
        # may already hold streams the writer did not see
        self._writer = CaptureWriter(assume_stream=True)
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

    def write(self, exchange: Exchange) -> None:
        with self._lock:
            if self._start_note is not None:
                exchange.notes.insert(0, self._start_note)
                self._start_note = None
            self._write(self._writer.block(exchange))
            self.count += 1

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
