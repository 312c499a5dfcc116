"""`a2a-capture otel`: captures (any input the other commands read) exported as traces.

One analyzer over all files, one root span per file. Exporting waits for room in the queue: a
file's spans are never dropped, and what the collector refused is counted and said.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass

from a2a_capture.analyze.config import Config
from a2a_capture.otel import conventions as names
from a2a_capture.otel.emit import Emitter
from a2a_capture.otel.planner import Planner
from a2a_capture.otel.sinks import QueuedExport
from a2a_capture.sources import exchanges


@dataclass
class Exported:
    files: int = 0
    exchanges: int = 0
    findings: int = 0
    spans: int = 0
    sent: int = 0
    failed: int = 0


def export_files(paths: Sequence[str | os.PathLike], exporter, *, config: Config | None = None, redact: bool = True,
                 bodies: int | None = None, service_name: str = names.SERVICE_NAME) -> Exported:
    """Each file's exchanges as spans under its root span, handed to ``exporter`` (a SpanExporter)."""
    files = [os.fspath(path) for path in paths]
    planner = Planner(config, files, redact=redact, bodies=bodies)
    processor = QueuedExport(exporter, block=True)
    emitter = Emitter(processor, service_name)
    done = Exported()
    try:
        for file in files:
            tally = planner.start_file(file)
            plans = [planner.plan(exchange) for exchange in exchanges(file)]  # the root's times come first
            planner.end_file()
            done.files += 1
            done.exchanges += tally.exchanges
            done.findings += tally.findings
            if not plans:
                continue
            root = emitter.open_root(tally.start_ns, {names.FILE: file})
            for plan in sorted(plans, key=lambda plan: plan.webhook):  # a webhook links to its task's spans
                emitter.emit(plan, root)
            emitter.close_root(root, tally.end_ns, tally.attributes)
    finally:
        emitter.shutdown()
    done.spans, done.sent, done.failed = emitter.spans, processor.sent, processor.failed
    return done
