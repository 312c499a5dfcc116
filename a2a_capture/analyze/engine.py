"""Run the rules over a session of captures: decode, replay the client's knowledge, judge."""

from __future__ import annotations

import heapq
import os
from collections import Counter
from collections.abc import Iterable

from pydantic import BaseModel, Field

from a2a_capture.a2a.decode import Call, decode
from a2a_capture.analyze import rules as _rules  # noqa: F401  (registers the rules)
from a2a_capture.analyze.config import Config, ignored_in_notes
from a2a_capture.analyze.findings import Finding
from a2a_capture.analyze.session import Session
from a2a_capture.sources import exchanges


class CallRecord(BaseModel):
    """One call as the JSON output shows it, with the card the client was acting on."""

    file: str
    exchange: str
    line: int | None
    kind: str
    agent: str | None
    operation: str | None
    binding: str | None
    version: str | None
    task_id: str | None
    status: int | None
    error: str | None
    states: list[str]
    card: dict | None = None  # provenance: agent, fetch exchange, ETag, fingerprint


class Summary(BaseModel):
    files: list[str]
    exchanges: int
    calls_by_operation: dict[str, int]
    errors: int
    streams: int
    findings_by_rule: dict[str, int]
    findings_by_severity: dict[str, int]
    #: findings by how the capture shows they turned out: wasted, fragile (worked by leniency), advice
    findings_by_outcome: dict[str, int] = Field(default_factory=dict)
    #: exchanges with at least one wasted finding, and the seconds they took
    wasted_round_trips: int
    wasted_seconds: float | None = None
    #: exchanges that worked only because the agent was lenient (and are not also wasted)
    fragile_round_trips: int = 0


class Analysis(BaseModel):
    findings: list[Finding] = Field(default_factory=list)
    calls: list[CallRecord] = Field(default_factory=list)
    summary: Summary


def analyze(paths: Iterable[str | os.PathLike], config: Config | None = None) -> Analysis:
    """Files given together form one session, in the order given."""
    config = config or Config()
    session = Session()
    findings: list[Finding] = []
    records: list[CallRecord] = []
    files = [os.fspath(path) for path in paths]
    for file in files:
        active = config.active(file)
        pending: list[tuple[float, int, Call]] = []  # finished calls the client may not know of yet
        for index, exchange in enumerate(exchanges(file)):
            call = decode(exchange, file)
            start = call.started
            # what ended before this call started, the client knew when it made the call; a
            # recorded file is in the order calls finished, so a long call can end after a
            # later one started, and is learned only then
            while pending and (start is None or pending[0][0] <= start):
                _learn(session, heapq.heappop(pending)[2])
            silenced = ignored_in_notes(call.notes)
            for rule in active:
                if silenced is None or rule.id in silenced:
                    continue
                findings.extend(rule.run(call, session))
            records.append(_record(call, session))
            end = start + call.duration if start is not None and call.duration is not None else None
            if end is None:
                _learn(session, call)
            else:
                heapq.heappush(pending, (end, index, call))
        while pending:
            _learn(session, heapq.heappop(pending)[2])
    _name_agents(findings, session)
    return Analysis(findings=findings, calls=records, summary=_summary(files, records, findings))


def _learn(session: Session, call: Call) -> None:
    session.apply(call)
    _forget_bodies(call)


def _name_agents(findings: list[Finding], session: Session) -> None:
    """Name an agent by its card even where the card came later (a call before discovery)."""
    names = {origin: held.card.name for origin, held in session.cards.items() if held.card.name}
    for finding in findings:
        if finding.agent and finding.agent_name in (None, finding.agent) and finding.agent in names:
            finding.agent_name = names[finding.agent]


def _record(call: Call, session: Session) -> CallRecord:
    held = session.held_card(call) if call.kind != "card" else None
    version = call.version_header or call.spelled_version
    return CallRecord(
        file=call.file, exchange=call.label, line=call.line, kind=call.kind, agent=call.agent,
        operation=call.operation, binding=call.binding, version=version, task_id=call.task_id,
        status=call.status, error=call.error.name if call.error else None,
        states=[state for _, state in call.states], card=held.provenance if held else None,
    )


def _forget_bodies(call: Call) -> None:
    """Later rules need a call's parsed bodies only for ListTasks paging and extended cards."""
    if call.operation not in ("ListTasks", "GetExtendedAgentCard") and call.kind != "card":
        call.response_json = None
    call.request_json = None


def _summary(files: list[str], records: list[CallRecord], findings: list[Finding]) -> Summary:
    wasted: dict[tuple[str, str], Finding] = {}
    fragile: set[tuple[str, str]] = set()
    for finding in findings:
        if finding.wasted:
            wasted.setdefault((finding.file, finding.exchange), finding)
        elif finding.outcome == "fragile":
            fragile.add((finding.file, finding.exchange))
    costs = [f.cost for f in wasted.values() if f.cost is not None]
    return Summary(
        files=files,
        exchanges=len(records),
        calls_by_operation=dict(Counter(r.operation or r.kind for r in records)),
        errors=sum(1 for r in records if r.error),
        streams=sum(1 for r in records if r.operation in ("SendStreamingMessage", "SubscribeToTask")),
        findings_by_rule=dict(Counter(f.rule for f in findings)),
        findings_by_severity=dict(Counter(f.severity.value for f in findings)),
        findings_by_outcome=dict(Counter(f.outcome for f in findings)),
        wasted_round_trips=len(wasted),
        wasted_seconds=round(sum(costs), 6) if costs else None,
        fragile_round_trips=len(fragile - wasted.keys()),
    )
