"""`record --otel`: each exchange's span exported as soon as the recorder has written it.

This runs in the `a2a-capture record` process, beside mitmdump, never inside it: it follows the
growing capture (``capture.growing``) as `record --live` does, so the traffic never waits for it.
Spans go to a bounded queue that a thread exports from; when the collector cannot keep up, spans
are dropped, counted, and a note at the end says how many. The recording's root span, started when
recording starts, ends when it stops, with the session's summary.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from a2a_capture.analyze.config import Config
from a2a_capture.capture import iter_exchanges
from a2a_capture.capture.growing import GrowingCapture
from a2a_capture.otel import conventions as names
from a2a_capture.otel import sinks
from a2a_capture.otel.emit import Emitter
from a2a_capture.otel.planner import Planner

#: spans waiting for the collector at most; past that, dropped
QUEUE = 2048
#: seconds the end of a recording waits at most for the collector to take what is queued
FLUSH_WAIT = 10.0


class LiveExport:
    """A watcher of the recorder's loop (``poll``): exports what was appended since the last look."""

    def __init__(self, path: str, endpoint: str, echo: Callable[[str], None], config: Config | None = None,
                 redact: bool = True, service_name: str = names.SERVICE_NAME, max_queue: int = QUEUE) -> None:
        sinks.require()
        self.path, self.endpoint, self.echo = path, endpoint, echo
        self.processor = sinks.QueuedExport(sinks.otlp_http(endpoint, timeout=5.0), max_queue=max_queue,
                                            block=False, wait=FLUSH_WAIT)
        self.emitter = Emitter(self.processor, service_name)
        self.planner = Planner(config, [path], redact=redact)
        self.tally = self.planner.start_file(path)
        self.growing = GrowingCapture(path, from_end=True)
        if self.growing.offset:  # an earlier recording in the same file: what the client knew already
            for exchange in iter_exchanges(path):
                self.planner.analyzer.feed(exchange)
        self.root = self.emitter.open_root(time.time_ns(), {names.FILE: path})
        self.closed = False
        self._told = 0  # drops already said

    def poll(self, final: bool = False) -> int:
        appended = self.growing.poll(final)
        for exchange, _ in appended:
            self.emitter.emit(self.planner.plan(exchange), self.root)
        if self.processor.dropped and not self._told:  # said once as it starts; the count at the end
            self._told = self.processor.dropped
            self.echo(f"otel: the collector at {self.endpoint} does not keep up: spans are being dropped "
                      f"(the recording is not slowed)")
        if final:
            self.close()
        return len(appended)

    def close(self) -> None:
        if self.closed:
            return
        self.closed = True
        self.planner.end_file()
        end = max(time.time_ns(), self.tally.end_ns or 0)
        self.emitter.close_root(self.root, end, self.tally.attributes)
        self.emitter.shutdown()
        processor = self.processor
        note = f"otel: {processor.sent} spans exported to {self.endpoint}"
        if processor.dropped:
            note += (f"; {processor.dropped} dropped: the collector did not keep up and the queue of "
                     f"{processor.max_queue} spans was full")
        if processor.failed:
            note += f"; {processor.failed} not accepted (is a collector listening there?)"
        self.echo(note)
