"""Append exchanges to a capture file, one whole block per write, flushed at once.

The file is a valid capture at every moment: a block is written with a single write and
flushed before the next, so a killed recorder leaves every completed exchange readable and
no torn one.
"""

from __future__ import annotations

import os
import threading

from a2a_capture import __version__
from a2a_capture.capture.models import Exchange
from a2a_capture.capture.writer import CaptureWriter

FORMAT = "a2a-capture/1"


class CaptureSink:
    def __init__(self, path: str | os.PathLike, *, fsync: bool = False, recorder: str = "") -> None:
        self.path = os.fspath(path)
        self.fsync = fsync
        self.count = 0
        self._lock = threading.Lock()
        # O_APPEND: each write lands at the end even if something else appends too
        self._fd = os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
        existing = os.fstat(self._fd).st_size
        # a body safe to write bare after a stream is safe anywhere, and an appended file
        # may already hold streams the writer did not see
        self._writer = CaptureWriter(assume_stream=True)
        if existing == 0:
            meta = [("format", FORMAT), ("recorder", f"a2a-capture {__version__}{recorder}")]
            self._write(self._writer.preamble(meta=meta))
        else:
            self._writer.continue_after(self._tail())

    def _tail(self) -> bytes:
        with open(self.path, "rb") as stream:
            stream.seek(max(0, os.path.getsize(self.path) - 4))
            return stream.read()

    def write(self, exchange: Exchange) -> None:
        with self._lock:
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
