"""`record --live`: judge each exchange the moment the recorder has written it.

The recorder appends each exchange to the capture when it is complete. This tails that file
and feeds the new exchanges to the analyzer's online engine, so a developer sees a wasted
round trip while the client is still running. It reads only what was appended since the
last look, and only once the file has stopped growing for one look (a block half-written
is read at the next).
"""

from __future__ import annotations

import io
import os
from collections.abc import Callable

from a2a_capture.analyze.config import Config
from a2a_capture.analyze.engine import Analyzer
from a2a_capture.capture import iter_exchanges
from a2a_capture.capture.reader import CaptureReader
from a2a_capture.errors import A2ACaptureError


class LiveAnalysis:
    """The findings of a capture that is being written, as its exchanges complete."""

    def __init__(self, path: str, echo: Callable[[str], None], config: Config | None = None) -> None:
        self.path, self.echo = path, echo
        self.analyzer = Analyzer(config, keep_calls=False, keep_findings=False)
        self.analyzer.start_file(path)
        self.offset = os.path.getsize(path)
        #: line ends before ``offset``: appended blocks are read alone, and their lines count from here
        self.lines = _line_ends(path, self.offset)
        self._size: int | None = None
        if self.offset:  # an earlier recording in the same file: what the client knew already
            for exchange in iter_exchanges(path):
                self.analyzer.feed(exchange)

    def poll(self, final: bool = False) -> int:
        """Judge what was appended since the last look; how many exchanges that was."""
        size = os.path.getsize(self.path)
        if size <= self.offset:
            return 0
        if size != self._size and not final:
            self._size = size  # still growing: read it at the next look
            return 0
        with open(self.path, "rb") as stream:
            stream.seek(self.offset)
            data = stream.read(size - self.offset)
        try:
            exchanges = list(CaptureReader(io.BytesIO(data), self.path))
        except A2ACaptureError:
            return 0  # not whole yet
        self.offset = size
        from a2a_capture.report.machine import line

        for exchange in exchanges:
            if exchange.line is not None:  # the line in the whole file, for `path:LINE:`
                exchange.line += self.lines
            for finding in self.analyzer.feed(exchange):
                self.echo(line(finding))
        self.lines += data.count(b"\n")
        return len(exchanges)


def _line_ends(path: str, size: int) -> int:
    count = 0
    with open(path, "rb") as stream:
        while size > 0:
            chunk = stream.read(min(size, 1 << 20))
            if not chunk:
                break
            count, size = count + chunk.count(b"\n"), size - len(chunk)
    return count
