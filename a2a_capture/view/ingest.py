"""Feed a view: read captures (or the growing capture of a recording), judge each exchange, make its row.

The same decoder and engine as `analyze`, one exchange at a time, so a row appears as soon as its
exchange is read and its findings as soon as the engine reaches them. Text that reaches the page
is masked first (a capture recorded with --no-redact still shows no secret unless the view was
asked for them).
"""

from __future__ import annotations

from pathlib import Path

from a2a_capture.a2a.decode import Call
from a2a_capture.analyze.config import Config
from a2a_capture.analyze.engine import Analyzer
from a2a_capture.analyze.facts import exchange_facts
from a2a_capture.analyze.findings import RULES, Finding
from a2a_capture.capture.growing import GrowingCapture, exchanges_with_offsets
from a2a_capture.capture.models import Exchange
from a2a_capture.redact.mask import Masker
from a2a_capture.report.facts import outcome
from a2a_capture.sources import CONVERTED, exchanges
from a2a_capture.view.state import FindingRow, HeldCardRow, Row, ViewState


class Feeder:
    """Turns exchanges into rows and findings of one ``ViewState``, file after file."""

    def __init__(self, state: ViewState, config: Config | None = None, *, redact: bool = True) -> None:
        self.state = state
        self.analyzer = Analyzer(config, keep_calls=False, keep_findings=False)
        self.masker = Masker() if redact else None  # a key of its own: a view need not match any report
        self._file = -1

    def start_file(self, index: int) -> None:
        self._file = index
        self.analyzer.start_file(self.state.files[index])

    def feed(self, exchange: Exchange, offset: int | None) -> None:
        """One exchange of the current file: its row, then every finding the engine gives for it."""
        call = self.analyzer.decode(exchange)
        if self.masker is not None:
            self.masker.exchange(exchange)  # learns the exchange's secrets: titles and messages are scrubbed of them
        held = self.analyzer.session.held_card(call) if call.kind != "card" else None
        findings = self.analyzer.feed(exchange, call)
        self.state.add_row(self._row(exchange, call, held), offset)
        for finding in findings:
            self._finding(finding)

    def end_file(self) -> None:
        self.analyzer.end_file()

    def _finding(self, finding: Finding) -> None:
        text, rule = self._text, RULES.get(finding.rule)
        row = FindingRow(rule=finding.rule, severity=str(finding.severity), outcome=finding.outcome,
                         title=text(finding.title), message=text(finding.message), fix=text(rule.fix if rule else ""),
                         spec=finding.spec, related=tuple(finding.related), cost=finding.cost)
        self.state.add_finding(self.state.files.index(finding.file) if finding.file in self.state.files
                               else self._file, finding.exchange, row)

    def _text(self, value: str) -> str:
        return self.masker.text(value) if self.masker is not None else value

    def _row(self, exchange: Exchange, call: Call, held) -> Row:
        facts = exchange_facts(exchange, call)
        card = None
        if held is not None:
            known = held.card
            card = self.state.card(HeldCardRow(
                name=known.name, origin=held.fetch.agent or "", fetched_by=held.fetch.label,
                fetched_in=self.state.files.index(held.fetch.file) if held.fetch.file in self.state.files else 0,
                streaming=known.streaming, push_notifications=known.push_notifications,
                extended_card=known.extended_card, stated=tuple(sorted(known.stated.items())),
                interfaces=tuple((i.binding or "", self._text(i.url or ""), i.version or "")
                                 for i in known.interfaces)))
        name = held.card.name if held is not None and held.card.name else ""
        if not name and call.card is not None and call.card.name:
            name = call.card.name
        origin = call.agent or ""
        return Row(index=len(self.state.rows), file=self._file, label=exchange.label, number=exchange.number,
                   line=exchange.line, title=self._text(exchange.title), webhook=exchange.webhook,
                   started=facts.started, duration=facts.duration, agent=name or origin, origin=origin,
                   operation=call.operation or (call.kind if call.kind in ("card", "webhook") else ""),
                   method=exchange.request.method, target=self._text(call.path or exchange.request.target),
                   task=call.task_id or "", context=call.context_id or "", status=facts.status,
                   outcome=self._text(outcome(facts)), failed=facts.failed, worked=call.ok, frames=facts.events,
                   card=card, states=tuple(facts.states))


def feed_files(feeder: Feeder) -> None:
    """Every file of the view, in order; the state is done when all are read."""
    state = feeder.state
    for index, path in enumerate(state.files):
        feeder.start_file(index)
        if Path(path).suffix.lower() in CONVERTED:
            for exchange in exchanges(path):
                feeder.feed(exchange, None)
        else:
            for exchange, offset in exchanges_with_offsets(path):
                feeder.feed(exchange, offset)
        feeder.end_file()
    state.done = True


class Tail:
    """A capture being recorded: what was appended to it, fed as it comes (``capture.growing``)."""

    def __init__(self, feeder: Feeder, file: int = 0) -> None:
        self.feeder = feeder
        feeder.start_file(file)
        self.growing = GrowingCapture(feeder.state.files[file])

    def poll(self, final: bool = False) -> int:
        """Feed what was appended since the last look; how many exchanges that was."""
        appended = self.growing.poll(final)
        for exchange, offset in appended:
            self.feeder.feed(exchange, offset)
        return len(appended)
