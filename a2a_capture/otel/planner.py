"""A session's exchanges, judged as `analyze` judges them, each shaped into the plan of its span.

One analyzer runs over every file given (one session, as `analyze` reads them), so a finding is
the one `analyze` reports; each file keeps a tally of its own for its root span. Secrets are masked
by the redaction policy before anything becomes an attribute (``redact.mask``, as every output).
"""

from __future__ import annotations

import time
from dataclasses import dataclass

from a2a_capture.a2a.decode import decode
from a2a_capture.analyze.config import Config
from a2a_capture.analyze.engine import Analyzer, round_trip_of
from a2a_capture.capture.models import Exchange
from a2a_capture.otel import conventions as names
from a2a_capture.otel.shape import SpanPlan, plan_span


@dataclass
class Tally:
    """What a capture file's root span says of it."""

    file: str
    exchanges: int = 0
    findings: int = 0
    wasted: int = 0
    wasted_seconds: float = 0.0
    fragile: int = 0
    start_ns: int | None = None
    end_ns: int | None = None

    def add(self, plan: SpanPlan, findings: int, duration: float | None) -> None:
        self.exchanges += 1
        self.findings += findings
        if plan.round_trip == "wasted":
            self.wasted += 1
            self.wasted_seconds += duration or 0.0
        elif plan.round_trip == "fragile":
            self.fragile += 1
        self.start_ns = plan.start_ns if self.start_ns is None else min(self.start_ns, plan.start_ns)
        self.end_ns = plan.end_ns if self.end_ns is None else max(self.end_ns, plan.end_ns)

    @property
    def attributes(self) -> dict:
        return {names.FILE: self.file, names.EXCHANGES: self.exchanges, names.FINDINGS: self.findings,
                names.WASTED_ROUND_TRIPS: self.wasted, names.WASTED_SECONDS: round(self.wasted_seconds, 6),
                names.FRAGILE_ROUND_TRIPS: self.fragile}


class Planner:
    """Feeds exchanges to the analyzer and makes each one's span plan, with its findings."""

    def __init__(self, config: Config | None, files: list[str], redact: bool = True,
                 bodies: int | None = None) -> None:
        self.analyzer = Analyzer(config, keep_calls=False, keep_findings=False)
        if redact:
            from a2a_capture.redact.mask import Masker

            self.masker = Masker.for_files(files)
        else:
            self.masker = None
        self.bodies = bodies
        self.file = ""
        self.tally = Tally("")
        #: where the next exchange without recorded times goes: after the last one
        self.clock_ns = time.time_ns()

    def start_file(self, file: str) -> Tally:
        self.analyzer.start_file(file)
        self.file, self.tally = file, Tally(file)
        return self.tally

    def plan(self, exchange: Exchange) -> SpanPlan:
        call = self.analyzer.decode(exchange)
        found = self.analyzer.feed(exchange, call)
        round_trip = round_trip_of(found, call.ok) if found else None
        held = self.analyzer.session.held_card(call) if call.kind != "card" else None
        shown, shown_call = exchange, call
        if self.masker is not None:
            masked = self.masker.exchange(exchange)
            if masked is not exchange:
                shown, shown_call = masked, decode(masked, self.file)
            found = [self.masker.finding(finding) for finding in found]
        card = shown_call.card if call.kind == "card" else held.card if held is not None else None
        if card is not None and self.masker is not None:
            card = card.model_copy(update={"name": self.masker.text(card.name),
                                           "description": self.masker.text(card.description)})
        plan = plan_span(shown, shown_call, found, round_trip, card, self.file, self.clock_ns, self.bodies)
        if not plan.timed:
            self.clock_ns = plan.end_ns
        self.tally.add(plan, len(found), call.duration)
        return plan

    def end_file(self) -> None:
        self.analyzer.end_file()
