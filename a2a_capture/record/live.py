"""`record --live`: judge each exchange the moment the recorder has written it.

The recorder appends each exchange to the capture when it is complete. This follows that file
(``capture.growing``) and feeds the new exchanges to the analyzer's online engine, so a developer
sees a wasted round trip while the client is still running.
"""

from __future__ import annotations

from collections.abc import Callable

from a2a_capture.analyze.config import Config
from a2a_capture.analyze.engine import Analyzer
from a2a_capture.capture import iter_exchanges
from a2a_capture.capture.growing import GrowingCapture


class LiveAnalysis:
    """The findings of a capture that is being written, as its exchanges complete."""

    def __init__(self, path: str, echo: Callable[[str], None], config: Config | None = None) -> None:
        self.path, self.echo = path, echo
        self.analyzer = Analyzer(config, keep_calls=False, keep_findings=False)
        self.analyzer.start_file(path)
        self.growing = GrowingCapture(path, from_end=True)
        if self.growing.offset:  # an earlier recording in the same file: what the client knew already
            for exchange in iter_exchanges(path):
                self.analyzer.feed(exchange)

    def poll(self, final: bool = False) -> int:
        """Judge what was appended since the last look; how many exchanges that was."""
        appended = self.growing.poll(final)
        from a2a_capture.report.machine import line

        for exchange, _ in appended:
            for finding in self.analyzer.feed(exchange):
                self.echo(line(finding))
        return len(appended)
