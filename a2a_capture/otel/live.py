"""`record --otel`: each exchange's span exported as soon as the recorder has written it.

This runs in the `a2a-capture record` process, beside mitmdump, never inside it: it follows the
growing capture (``capture.growing``) as `record --live` does, so the traffic never waits for it; and
in threads of lower priority (``NICENESS``), so on a busy machine it takes only the CPU that mitmdump
and the agents leave.
Spans go to a bounded queue that a thread exports from; when the collector cannot keep up, spans
are dropped, counted, and a note at the end says how many. The recording's root span, started when
recording starts, ends when it stops, with the session's summary.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

from a2a_capture.analyze.config import Config
from a2a_capture.capture import iter_exchanges
from a2a_capture.capture.growing import GrowingCapture
from a2a_capture.errors import one_line
from a2a_capture.otel import conventions as names
from a2a_capture.otel import sinks
from a2a_capture.otel.emit import Emitter
from a2a_capture.otel.planner import Planner

#: spans waiting for the collector at most; past that, dropped
QUEUE = 2048
#: seconds the end of a recording waits at most for the collector to take what is queued
FLUSH_WAIT = 10.0
#: how much nicer than the recording the export's threads run (Linux niceness, per thread)
NICENESS = 10


class LiveExport:
    """A watcher of the recorder's loop (``poll``): exports what was appended since the last look."""

    def __init__(self, path: str, endpoint: str, echo: Callable[[str], None], config: Config | None = None,
                 redact: bool = True, service_name: str = names.SERVICE_NAME, max_queue: int = QUEUE) -> None:
        sinks.require()
        self.path, self.endpoint, self.echo = path, endpoint, echo
        self.processor = sinks.QueuedExport(sinks.otlp_http(endpoint, timeout=5.0), max_queue=max_queue,
                                            block=False, wait=FLUSH_WAIT, niceness=NICENESS)
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
        self.exported = 0  # exchanges made into spans
        self._wake, self._final = threading.Event(), False
        self._worker = threading.Thread(target=self._work, name="a2a-capture otel spans", daemon=True)
        self._worker.start()

    def poll(self, final: bool = False) -> None:
        """The recorder's loop had a look: the worker reads what was appended (``final``: all that is there,
        then the root span ends and the last spans are sent)."""
        if final:
            self._final = True
        self._wake.set()
        if final:
            self._worker.join()
            self.close()

    def _work(self) -> None:
        sinks.lower_priority(NICENESS)
        while True:
            self._wake.wait()
            self._wake.clear()
            final = self._final
            try:
                for exchange, _ in self.growing.poll(final):
                    self.emitter.emit(self.planner.plan(exchange), self.root)
                    self.exported += 1
            except Exception as error:  # a bug of the export's: the recording goes on without it
                self.echo(f"otel: export stopped: {type(error).__name__}: {one_line(error)} (the recording goes on)")
                return
            if self.processor.dropped and not self._told:  # said once as it starts; the count at the end
                self._told = self.processor.dropped
                self.echo(f"otel: the collector at {self.endpoint} does not keep up: spans are being dropped "
                          f"(the recording is not slowed)")
            if final:
                return

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
