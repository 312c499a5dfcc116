"""The report's content: an annotated walkthrough of a session, ready for a template.

Plain data built from the captures and the analysis; the templates only lay it out.
"""

from __future__ import annotations

import os
from collections import defaultdict

from pydantic import BaseModel, Field

from a2a_capture import __version__
from a2a_capture.a2a.cards import Card
from a2a_capture.a2a.decode import decode
from a2a_capture.analyze.engine import Analysis, analyze
from a2a_capture.analyze.findings import Finding
from a2a_capture.report import svg
from a2a_capture.report.excerpt import RULE_FOCUS, listing
from a2a_capture.sources import exchanges as read_exchanges


class FindingView(BaseModel):
    rule: str
    severity: str
    title: str
    message: str
    spec: str
    anchor: str  # the exchange it concerns
    exchange: str
    where: str  # "Exchange 6", with the file when a session has several
    related: list[tuple[str, str]] = Field(default_factory=list)  # (label, anchor)
    wasted: bool = False
    outcome: str = "advice"  # wasted, fragile or advice, as the analysis judged it


class ExchangeView(BaseModel):
    anchor: str
    file: str
    label: str
    heading: str
    outcome: str
    listing: str
    note: str
    findings: list[FindingView] = Field(default_factory=list)
    duration_ms: float | None = None
    webhook: bool = False


class AgentView(BaseModel):
    name: str
    origin: str
    interfaces: list[str]
    capabilities: list[str]
    skills: list[str]
    security: list[str]
    anchor: str


class RuleCount(BaseModel):
    rule: str
    severity: str
    title: str
    count: int
    first: str  # anchor


class ReportModel(BaseModel):
    title: str
    files: list[str]
    tool: str = f"a2a-capture {__version__}"
    whole: bool = False
    summary: dict
    findings: list[FindingView]
    rules: list[RuleCount]
    agents: list[AgentView]
    exchanges: list[ExchangeView]
    sequence_svg: str
    timeline_svg: str
    operations: list[tuple[str, int]]


def anchor_for(file_index: int, label: str) -> str:
    """`ex-6` for the first file; `f2-ex-6` for the second, so every exchange has its own."""
    base = "ex-" + label.replace(" ", "-")
    return base if file_index == 0 else f"f{file_index + 1}-{base}"


def build(paths: list[str], analysis: Analysis | None = None, *, whole: bool = False,
          title: str | None = None) -> ReportModel:
    files = [os.fspath(path) for path in paths]
    analysis = analysis or analyze(files)
    index_of = {file: position for position, file in enumerate(files)}

    def anchor(file: str, label: str) -> str:
        return anchor_for(index_of.get(file, 0), label)

    views_by_place: dict[tuple[str, str], list[FindingView]] = defaultdict(list)
    finding_views = []
    for finding in analysis.findings:
        view = _finding_view(finding, anchor, len(files) > 1)
        views_by_place[(finding.file, finding.exchange)].append(view)
        finding_views.append(view)
    exchanges, agents, arrows = [], {}, []
    tasks: dict[str, list[tuple[int, str, str]]] = defaultdict(list)
    task_owner: dict[str, str] = {}  # task id -> the lifeline of the agent that has it
    position = 0
    for file in files:
        for exchange in read_exchanges(file):
            place = anchor(file, exchange.label)
            call = decode(exchange, file)
            here = views_by_place.get((file, exchange.label), [])
            focus = set().union(*(RULE_FOCUS.get(f.rule, set()) for f in here)) if here else None
            text, note = listing(exchange, whole=whole, extra_keys=focus)
            exchanges.append(ExchangeView(
                anchor=place, file=file, label=exchange.label,
                heading=f"{exchange.label} · {exchange.title}" if exchange.title else exchange.label,
                outcome=_outcome(call), listing=text.text, note=note, findings=here,
                duration_ms=round(exchange.meta.duration * 1000, 1) if exchange.meta.duration is not None else None,
                webhook=exchange.webhook,
            ))
            if call.card is not None and call.agent and call.agent not in agents:
                agents[call.agent] = _agent_view(call.card, call.agent, place)
            if exchange.webhook:  # an agent calls the client back: drawn from the agent that has the task
                lifeline = call.task_id or ""  # resolved below, once every task's agent is known
            else:
                lifeline = (agents[call.agent].name if call.agent in agents else call.agent) or "agent"
                if call.task_id:
                    task_owner.setdefault(call.task_id, lifeline)
                for task, _ in call.states:
                    task_owner.setdefault(task, lifeline)
            wasted = any(f.wasted for f in here)
            label = f"{exchange.label} {call.operation or exchange.title}"
            if exchange.webhook:
                label = exchange.label + (f": {_outcome(call)}" if call.states else "")
            arrows.append(svg.Arrow(anchor=place, label=label,
                                    lifeline=lifeline, answer=_outcome(call), wasted=wasted, events=call.events,
                                    webhook=exchange.webhook))
            for task, state in [*call.states, *call.late_states]:
                seen = tasks[task]
                if not seen or seen[-1][1] != state:
                    seen.append((position, state, place))
            position += 1
    for arrow in arrows:
        if arrow.webhook:
            arrow.lifeline = task_owner.get(arrow.lifeline, "an agent")
    lifelines = list(dict.fromkeys(arrow.lifeline for arrow in arrows))
    summary = analysis.summary.model_dump()
    return ReportModel(
        title=title or _title(files),
        files=files,
        whole=whole,
        summary=summary,
        findings=finding_views,
        rules=_rule_counts(finding_views),
        agents=list(agents.values()),
        exchanges=exchanges,
        sequence_svg=svg.sequence(lifelines, arrows),
        timeline_svg=svg.timeline(dict(tasks), position),
        operations=sorted(summary["calls_by_operation"].items(), key=lambda item: (-item[1], item[0])),
    )


def _finding_view(finding: Finding, anchor, several: bool) -> FindingView:
    where = f"Exchange {finding.exchange}" + (f" of {os.path.basename(finding.file)}" if several else "")
    return FindingView(
        where=where,
        rule=finding.rule, severity=finding.severity.value, title=finding.title, message=finding.message,
        spec=finding.spec, anchor=anchor(finding.file, finding.exchange), exchange=finding.exchange,
        wasted=finding.wasted, outcome=finding.outcome,
        related=[(f"exchange {label}" + (f" of {os.path.basename(file)}" if file != finding.file else ""),
                  anchor(file, label)) for file, label, _ in finding.related_locations],
    )


def _outcome(call) -> str:
    if call.error is not None:
        code = f" {call.error.code}" if call.error.code else ""
        return f"{call.error.name}{code}"
    if call.states:
        return call.states[-1][1].removeprefix("TASK_STATE_").lower().replace("_", "-")
    if call.status is None:
        return "no response" if call.kind != "webhook" else ""
    return str(call.status)


def _agent_view(card: Card, origin: str, place: str) -> AgentView:
    capabilities = [name for name, on in (("streaming", card.streaming), ("push notifications",
                                                                         card.push_notifications),
                                          ("extended card", card.extended_card)) if on]
    security = [f"{scheme.name} ({scheme.kind}{' ' + scheme.scheme if scheme.scheme else ''})"
                for scheme in card.security_schemes]
    if card.requires_auth:
        security.append("required: " + " or ".join(" + ".join(req) for req in card.security_requirements if req))
    return AgentView(
        name=card.name or origin, origin=origin,
        interfaces=[f"{i.binding} {i.version or ''} {i.url}".replace("  ", " ") for i in card.interfaces],
        capabilities=capabilities or ["none declared"], skills=[skill.name or skill.id for skill in card.skills],
        security=security or ["none"], anchor=place,
    )


def _rule_counts(findings: list[FindingView]) -> list[RuleCount]:
    counts: dict[str, RuleCount] = {}
    for finding in findings:
        if finding.rule not in counts:
            counts[finding.rule] = RuleCount(rule=finding.rule, severity=finding.severity, title=finding.title,
                                             count=0, first=finding.anchor)
        counts[finding.rule].count += 1
    order = {"error": 0, "warning": 1, "info": 2}
    return sorted(counts.values(), key=lambda c: (order[c.severity], c.rule))


def _title(files: list[str]) -> str:
    names = [os.path.basename(file) for file in files]
    return names[0] if len(names) == 1 else f"{names[0]} and {len(names) - 1} more"
