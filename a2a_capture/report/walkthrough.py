"""The report's content: an annotated walkthrough of a session, ready for a template.

Plain data built from the captures and the analysis; the templates only lay it out. The
verdict comes first (what went wrong, what it cost), then the evidence: the findings by
rule, the agents, the pictures, and every exchange cut to what matters.
"""

from __future__ import annotations

import itertools
import os
import re
from collections import Counter, defaultdict

from pydantic import BaseModel, Field

from a2a_capture import __version__
from a2a_capture.a2a.cards import Card
from a2a_capture.a2a.grpc import response_status
from a2a_capture.analyze.engine import Analysis, analyze
from a2a_capture.analyze.facts import ExchangeFacts
from a2a_capture.analyze.findings import Finding
from a2a_capture.errors import A2ACaptureError
from a2a_capture.report import svg
from a2a_capture.report.excerpt import RULE_FOCUS, listing
from a2a_capture.report.facts import cut_stream, explain, outcome, short_id, silent_stream
from a2a_capture.report.mask import Masker
from a2a_capture.sources import exchanges as read_exchanges

#: a session longer than this is shown as a dense index with every exchange folded
LONG_SESSION = 200
#: findings of one rule shown before the rest are folded
FIRST_FEW = 3
#: task states that stand out in the verdict
TROUBLE = {"failed", "rejected", "canceled", "auth-required", "input-required"}
_SEVERITY_ORDER = {"error": 0, "warning": 1, "info": 2}
#: the words before a finding's earlier exchanges: only a wasted call was answered already; a
#: call that worked by leniency, or advice, rests on what those exchanges showed
RELATED_SAYS = {"wasted": "Already answered by", "fragile": "Known from", "advice": "Known from"}


class SameFileTwice(A2ACaptureError):
    """A session names one capture twice: its exchanges would be counted and anchored twice."""


class FindingView(BaseModel):
    id: str  # its own anchor: finding-3
    rule: str
    severity: str
    title: str
    message: str
    spec: str
    anchor: str  # the exchange it concerns
    exchange: str
    where: str  # "Exchange 6", or "09-mistakes #6" when a session has several files
    outcome: str = "advice"  # wasted, fragile or advice
    wasted: bool = False
    new: bool = False  # not accepted by the baseline
    cost: float | None = None
    related: list[tuple[str, str]] = Field(default_factory=list)  # (label, anchor)
    #: what the related exchanges were to this call, as the sentence before their links says it
    related_says: str = "Already answered by"


class ExchangeView(BaseModel):
    anchor: str
    file: str
    name: str  # what a link to it says: "Exchange 6" or "09-mistakes #6"
    label: str
    heading: str
    method: str
    target: str
    status: int | None
    grpc_status: str | None = None  # `NOT_FOUND (5)`: a gRPC call's own status, shown for its HTTP one
    events: int
    request_bytes: int
    response_bytes: int | None
    outcome: str
    #: the outcome as a sentence, where the word alone would mislead (a stream with no event), with its time
    outcome_said: str = ""
    listing: str
    note: str
    findings: list[FindingView] = Field(default_factory=list)
    duration_ms: float | None = None
    webhook: bool = False
    previous_flagged: str | None = None
    next_flagged: str | None = None


class AgentView(BaseModel):
    name: str
    origin: str
    interfaces: list[str]
    capabilities: list[str]
    skills: list[str]
    security: list[str]
    anchor: str


class RuleGroup(BaseModel):
    rule: str
    severity: str
    title: str
    count: int
    new: int = 0
    wasted: int = 0
    fragile: int = 0
    cost: float | None = None  # the time its wasted findings took; a call that worked cost nothing
    first: str  # anchor of the first exchange
    findings: list[FindingView]


class TaskView(BaseModel):
    id: str
    short: str
    agent: str
    state: str
    anchor: str


class Verdict(BaseModel):
    headline: str
    by_severity: list[tuple[str, int]]
    wasted: int
    fragile: int
    advice: int
    new: int | None = None  # findings the baseline has not accepted, when a baseline was given
    cost: float | None = None
    worst: FindingView | None = None  # the worst wasted round trip: never a fragile or advice finding
    most_fragile: FindingView | None = None  # when nothing was wasted, the most serious call that worked by leniency
    troubled: list[TaskView]
    tasks: int


class ReportModel(BaseModel):
    title: str
    files: list[str]
    files_label: str
    files_note: str = ""  # ", each a session of its own": prose after the files, never a path
    tool: str = f"a2a-capture {__version__}"
    whole: bool = False
    long: bool = False
    only_flagged: bool = False
    masked: bool = True
    summary: dict
    verdict: Verdict
    findings: list[FindingView]
    rules: list[RuleGroup]
    agents: list[AgentView]
    exchanges: list[ExchangeView]
    shown: int  # exchanges listed (all, or the flagged ones)
    sequence_svg: str
    timeline_svg: str
    #: the timeline as wide as a phone, shown instead on a narrow screen
    timeline_narrow_svg: str
    #: the sequence diagram as wide as a phone, for the HTML to show instead on a narrow screen
    sequence_narrow_svg: str
    sequence_mermaid: str
    timeline_text: list[str]
    operations: list[tuple[str, int]]
    several: bool = False
    sessions: int = 1  # independent sessions (--each-file): the title says so, no session spans them


def anchor_for(file_index: int, label: str) -> str:
    """`ex-6` for the first file; `f2-ex-6` for the second, so every exchange has its own."""
    base = "ex-" + label.replace(" ", "-")
    return base if file_index == 0 else f"f{file_index + 1}-{base}"


def refuse_repeats(files: list[str]) -> None:
    """The same capture named twice would double every exchange under one set of anchors."""
    seen: dict[str, str] = {}
    for file in files:
        real = os.path.realpath(file)
        if real in seen:
            twice = file if file == seen[real] else f"{seen[real]} and {file}"
            raise SameFileTwice(f"{twice}: the same capture is given twice; name each file once")
        seen[real] = file


def build(paths: list[str], analysis: Analysis | None = None, *, whole: bool = False,
          title: str | None = None, accepted=None, only_flagged: bool = False,
          show_secrets: bool = False, verbatim: bool = False,
          groups: list[list[str]] | None = None) -> ReportModel:
    """The report of one session. ``accepted``: a baseline's counts, to mark the findings it lacks.

    ``verbatim``: every kept listing line is the capture's own, as documentation listings
    need (otherwise one-line JSON bodies are laid out for reading). ``analysis``, when given,
    must keep each exchange's facts (``analyze(..., facts=True)``): the report reads the
    exchanges' text again for their listings, but never decodes them again. ``groups``: the
    files of each independent session (--each-file, --each-folder); their times are not one
    clock's, so each session's task times count from its own first request and the sequence
    keeps the sessions' order.
    """
    files = [os.fspath(path) for path in paths]
    refuse_repeats(files)
    analysis = analysis or analyze(files, facts=True)
    facts_of = _facts_by_file(analysis, files)
    sessions = len(groups) if groups else 1
    since = _session_starts(groups, facts_of) if sessions > 1 else {}
    session_of = {os.fspath(file): index for index, group in enumerate(groups or []) for file in group}
    arrow_sessions: list[int] = []  # each arrow's session, to keep independent sessions apart
    several = len(files) > 1
    index_of = {file: position for position, file in enumerate(files)}
    masker = None if show_secrets else Masker.for_files(files)

    def anchor(file: str, label: str) -> str:
        return anchor_for(index_of.get(file, 0), label)

    def name(file: str, label: str) -> str:
        webhook = label.startswith("webhook ")
        if several:
            return f"{_stem(file)} {label}" if webhook else f"{_stem(file)} #{label}"
        return label.capitalize() if webhook else f"Exchange {label}"

    new_ids = _new_findings(analysis.findings, accepted)
    by_base = {os.path.basename(path): path for path in files}  # the files a message may name, indexed once
    views_by_place: dict[tuple[str, str], list[FindingView]] = defaultdict(list)
    finding_views = []
    for number, finding in enumerate(analysis.findings, start=1):
        view = _finding_view(finding, number, anchor, name, number - 1 in new_ids)
        if several:
            view.message = _named_mentions(view.message, finding.file, by_base, name)
        views_by_place[(finding.file, finding.exchange)].append(view)
        finding_views.append(view)

    exchanges: list[ExchangeView] = []
    agents: dict[str, AgentView] = {}
    arrows: list[svg.Arrow] = []
    tasks: dict[str, list[svg.Mark]] = defaultdict(list)
    task_owner: dict[str, str] = {}
    task_anchor: dict[str, str] = {}
    order = 0  # exchange position in the session, the axis when a capture has no timestamps
    for file in files:
        blocks = [masker.exchange(e) if masker else e for e in read_exchanges(file)]
        known = _facts_for(blocks, facts_of.get(file, []), file)
        streams = {e.number: i for i, e in enumerate(blocks) if not e.webhook and e.response is not None
                   and e.response.is_event_stream}
        late_for: dict[int, list[int]] = defaultdict(list)  # a stream's position: its late blocks' positions
        for position, block in enumerate(blocks):
            if block.late_body and block.late_stream in streams:
                late_for[streams[block.late_stream]].append(position)
        for position, exchange in enumerate(blocks):
            place = anchor(file, exchange.label)
            facts = known[position]
            late = [blocks[later] for later in late_for.get(position, [])]
            here = views_by_place.get((file, exchange.label), [])
            focus = set().union(*(RULE_FOCUS.get(f.rule, set()) for f in here)) if here else None
            own_late = [exchange] if exchange.late_body and exchange.late_stream not in streams else []
            text, note = listing(exchange, whole=whole, extra_keys=focus, late=late or own_late,
                                 layout=not verbatim)
            notes = explain(facts)
            if notes:
                note = f"{note} {' '.join(notes)}"
            events = facts.events + sum(len(block.late_events) for block in late)
            response = exchange.response
            grpc_status = response_status(response)
            ending = outcome(facts, grpc_status.label if grpc_status else None)
            for later in late_for.get(position, []):  # a stream that went on later ends where its last frame says
                late_states = known[later].late_states
                if late_states:
                    ending = svg.state_name(late_states[-1][1])
            said = ""
            if streams.get(exchange.number) == position and not facts.failed:  # a stream's 200 says little
                written = [*exchange.notes, *exchange.response_notes, *exchange.trailing_notes]
                if events:
                    said = cut_stream(ending, written)
                else:
                    said, ending = silent_stream(written, facts.duration), "no event"
            view = ExchangeView(
                anchor=place, file=_relative(file), name=name(file, exchange.label), label=exchange.label,
                heading=f"{exchange.label} · {exchange.title}" if exchange.title else exchange.label,
                method=exchange.request.method, target=exchange.request.target,
                status=response.status if response is not None else None, events=events,
                grpc_status=grpc_status.label if grpc_status else None,
                request_bytes=len(exchange.request.body),
                response_bytes=len(response.body) if response is not None else None,
                outcome=ending, outcome_said=said, listing=text.text, note=note, findings=here,
                duration_ms=round(facts.duration * 1000, 1) if facts.duration is not None else None,
                webhook=exchange.webhook,
            )
            exchanges.append(view)
            if facts.card is not None and facts.agent and facts.agent not in agents:
                agents[facts.agent] = _agent_view(facts.card, facts.agent, place)
            lifeline = _lifeline(facts, agents)
            if exchange.webhook:
                lifeline = facts.task_id or ""  # resolved below, once every task's agent is known
            else:
                for task in [facts.task_id, *(t for t, _, _ in facts.states)]:
                    if task:
                        task_owner.setdefault(task, lifeline)
            arrow = svg.Arrow(anchor=place, label=_arrow_label(exchange, facts), lifeline=lifeline,
                              answer=ending, wasted=any(f.wasted for f in here), events=events,
                              webhook=exchange.webhook, name=view.name, time=facts.started,
                              file=_stem(file) if several else "")
            arrows.append(arrow)
            arrow_sessions.append(session_of.get(file, 0))
            # states: from the response (and its frames), and from frames shown late for an earlier stream
            for task, state, at in facts.states:
                at = at - since[file] if at is not None and since.get(file) is not None else at
                _mark(tasks, task, state, order, at, place, view.name)
                task_anchor[task] = place
            if exchange.late_body:
                owner = streams.get(exchange.late_stream)
                owner_anchor = anchor(file, str(exchange.late_stream)) if owner is not None else place
                owner_name = name(file, str(exchange.late_stream)) if owner is not None else view.name
                for task, state in facts.late_states:
                    _mark(tasks, task, state, order, None, owner_anchor, owner_name)
                    task_anchor[task] = owner_anchor
            order += 1
    for arrow in arrows:
        if arrow.webhook:
            arrow.lifeline = task_owner.get(arrow.lifeline, "an agent")
    _link_flagged(exchanges)
    lifelines = list(dict.fromkeys(arrow.lifeline for arrow in arrows))
    summary = analysis.summary.model_dump()
    rules = _rule_groups(finding_views, accepted is not None)
    timed = all(arrow.time is not None for arrow in arrows if not arrow.webhook) and bool(arrows)
    task_views = _task_views(tasks, task_owner)
    shown = [view for view in exchanges if view.findings] if only_flagged else exchanges
    if masker:
        for view in finding_views:
            view.message = masker.text(view.message)
    ordered = _by_session(arrows, arrow_sessions) if timed and sessions > 1 else arrows
    report = ReportModel(
        title=title or _title(files),
        files=[_relative(file) for file in files],
        files_label=_files_label(files), files_note=_sessions_label(sessions, len(files)),
        whole=whole,
        long=len(exchanges) > LONG_SESSION,
        only_flagged=only_flagged,
        masked=masker is not None,
        summary=summary,
        verdict=_verdict(finding_views, task_views, accepted is not None, summary),
        findings=finding_views,
        rules=rules,
        agents=list(agents.values()),
        exchanges=shown,
        shown=len(shown),
        sequence_svg=svg.sequence(lifelines, ordered, timed=timed and sessions == 1),
        sequence_narrow_svg=svg.sequence(lifelines, ordered, timed=timed and sessions == 1, narrow=True),
        timeline_svg=svg.timeline(dict(tasks), task_owner, timed=timed, total=order, each_session=sessions > 1),
        timeline_narrow_svg=svg.timeline(dict(tasks), task_owner, timed=timed, total=order,
                                         each_session=sessions > 1, narrow=True),
        sequence_mermaid=svg.mermaid(lifelines, arrows),
        timeline_text=svg.timeline_text(dict(tasks), task_owner, timed=timed, each_session=sessions > 1),
        operations=sorted(summary["calls_by_operation"].items(), key=lambda item: (-item[1], item[0])),
        several=several,
        sessions=sessions,
    )
    # the listings come from masked exchanges; the rest (agents, cards, diagrams) from the analysis of the raw ones
    return masker.model(report, skip=frozenset({"listing"})) if masker else report


def _by_session(arrows: list[svg.Arrow], sessions: list[int]) -> list[svg.Arrow]:
    """The arrows session by session, in the order the sessions were given, each session's in
    the order its requests were sent (``sessions``: each arrow's session)."""
    order = sorted(range(len(arrows)), key=lambda i: (sessions[i], arrows[i].time))
    return [arrows[i] for i in order]


def _session_starts(groups: list[list[str]], facts_of: dict[str, list[ExchangeFacts]]) -> dict[str, float | None]:
    """Each file's session's first recorded request, where its times count from."""
    starts: dict[str, float | None] = {}
    for group in groups:
        first = min((f.started for file in group for f in facts_of.get(os.fspath(file), [])
                     if f.started is not None), default=None)
        starts.update({os.fspath(file): first for file in group})
    return starts


def _facts_by_file(analysis: Analysis, files: list[str]) -> dict[str, list[ExchangeFacts]]:
    by_file: dict[str, list[ExchangeFacts]] = defaultdict(list)
    for facts in analysis.exchanges:
        by_file[facts.file].append(facts)
    if analysis.summary.exchanges and not analysis.exchanges:
        raise ValueError("a report needs the analysis's exchange facts: analyze(files, facts=True)")
    return by_file


def _facts_for(blocks: list, facts: list[ExchangeFacts], file: str) -> list[ExchangeFacts]:
    """The analysis's facts of a file's exchanges, checked to be of those very exchanges."""
    if [f.label for f in facts] != [block.label for block in blocks]:
        raise ValueError(f"{file}: the analysis given is not of this capture's exchanges")
    return facts


def _mark(tasks, task: str, state: str, order: int, at: float | None, place: str, where: str) -> None:
    seen = tasks[task]
    if seen and seen[-1].state == state:  # a poll that finds the same state draws no new bar
        return
    seen.append(svg.Mark(order=order, at=at, state=state, anchor=place, where=where))


def _lifeline(facts: ExchangeFacts, agents: dict[str, AgentView]) -> str:
    if facts.agent in agents:
        return agents[facts.agent].name
    return (facts.agent or "agent").removeprefix("http://").removeprefix("https://")


def _arrow_label(exchange, facts: ExchangeFacts) -> str:
    """The capture's title when it has one (it says what the call was for), else operation and path."""
    if exchange.webhook:
        said = exchange.title if exchange.title and exchange.title.lower() != "webhook" else ""
        return f"webhook {exchange.number}" + (f": {said}" if said else "")
    what = exchange.title or facts.operation or f"{exchange.request.method} {facts.path}"
    if facts.kind == "card" or (not facts.operation and not exchange.title):
        what = f"{what} {facts.path}" if facts.path not in what else what
    return f"{exchange.label} {what}"


def _finding_view(finding: Finding, number: int, anchor, name, new: bool) -> FindingView:
    return FindingView(
        id=f"finding-{number}", where=name(finding.file, finding.exchange),
        rule=finding.rule, severity=finding.severity.value, title=finding.title, message=finding.message,
        spec=finding.spec, anchor=anchor(finding.file, finding.exchange), exchange=finding.exchange,
        outcome=finding.outcome, wasted=finding.wasted, new=new, cost=finding.cost,
        related=[(name(file, label), anchor(file, label)) for file, label, _ in finding.related_locations],
        related_says=RELATED_SAYS[finding.outcome],
    )


#: how a finding's message names an exchange: "exchange 7", "exchange 7 of 01-discovery.http"
_MENTION = re.compile(r"\bexchange ((?:webhook )?\d+)(?: of ([^\s,;:()]+))?", re.IGNORECASE)


def _named_mentions(message: str, file: str, by_base: dict[str, str], name) -> str:
    """In a report of several files a bare "exchange 7" could be any file's: each mention is
    named as the report names exchanges ("09-mistakes #7"), in the finding's own file unless
    the message names another (``by_base``: the session's files by their base names, made once
    a report: a message's mention is one lookup, whatever the number of files)."""

    def named(match: re.Match) -> str:
        label, of = match.group(1), match.group(2) or ""
        base = of.rstrip(".")  # a sentence may end on the file's name
        if base in by_base:
            return name(by_base[base], label) + of[len(base):]
        return name(file, label) + (f" of {of}" if of else "")

    return _MENTION.sub(named, message)


def _new_findings(findings: list[Finding], accepted) -> set[int]:
    if accepted is None:
        return set()
    from a2a_capture.replay import baseline

    verdict = baseline.judge(findings, accepted)
    new = {id(f) for f in verdict.new}
    return {index for index, finding in enumerate(findings) if id(finding) in new}


def _link_flagged(exchanges: list[ExchangeView]) -> None:
    flagged = [view for view in exchanges if view.findings]
    for before, after in itertools.pairwise(flagged):
        before.next_flagged = after.anchor
        after.previous_flagged = before.anchor


def _rule_groups(findings: list[FindingView], judged: bool) -> list[RuleGroup]:
    groups: dict[str, RuleGroup] = {}
    for finding in findings:
        group = groups.get(finding.rule)
        if group is None:
            group = groups[finding.rule] = RuleGroup(rule=finding.rule, severity=finding.severity,
                                                     title=finding.title, count=0, first=finding.anchor,
                                                     findings=[])
        group.count += 1
        group.findings.append(finding)
        group.new += finding.new
        group.wasted += finding.outcome == "wasted"
        group.fragile += finding.outcome == "fragile"
        if finding.cost is not None and finding.outcome == "wasted":  # as the verdict's wasted time counts
            group.cost = (group.cost or 0.0) + finding.cost
    for group in groups.values():  # new findings first, so a reviewer sees what the baseline lacks
        group.findings.sort(key=lambda f: not f.new)
    return sorted(groups.values(), key=lambda g: (-(g.new if judged else 0), _SEVERITY_ORDER[g.severity],
                                                  -g.count, g.rule))


def _task_views(tasks: dict[str, list], owner: dict[str, str]) -> list[TaskView]:
    views = []
    for task, marks in tasks.items():
        last = marks[-1]
        views.append(TaskView(id=task, short=short_id(task), agent=owner.get(task, ""),
                              state=svg.state_name(last.state), anchor=last.anchor))
    return views


def _verdict(findings: list[FindingView], tasks: list[TaskView], judged: bool, summary: dict) -> Verdict:
    severities = Counter(f.severity for f in findings)
    outcomes = Counter(f.outcome for f in findings)
    new = sum(f.new for f in findings) if judged else None
    worst = _most_serious([f for f in findings if f.outcome == "wasted"])
    fragile = None if worst else _most_serious([f for f in findings if f.outcome == "fragile"])
    troubled = [task for task in tasks if task.state in TROUBLE]
    if not findings:
        headline = "No findings: no round trip in this session was wasted by the rules' account."
    else:
        parts = [f"{outcomes['wasted']} wasted round trip{'s' if outcomes['wasted'] != 1 else ''}"]
        if outcomes["fragile"]:
            parts.append(f"{outcomes['fragile']} that worked only because the agent was lenient")
        if outcomes["advice"]:
            parts.append(f"{outcomes['advice']} piece{'s' if outcomes['advice'] != 1 else ''} of advice")
        headline = f"{len(findings)} finding{'s' if len(findings) != 1 else ''}: " + ", ".join(parts) + "."
        if judged:
            headline += f" {new} not accepted by the baseline."
    return Verdict(
        headline=headline,
        by_severity=[(level, severities[level]) for level in ("error", "warning", "info") if severities[level]],
        wasted=outcomes["wasted"], fragile=outcomes["fragile"], advice=outcomes["advice"], new=new,
        cost=summary.get("wasted_seconds"), worst=worst, most_fragile=fragile, troubled=troubled, tasks=len(tasks),
    )


def _most_serious(findings: list[FindingView]) -> FindingView | None:
    """The one to name first: a finding the baseline lacks before an accepted one, then by
    severity, then by what it cost."""
    return min(findings, key=lambda f: (not f.new, _SEVERITY_ORDER[f.severity], -(f.cost or 0.0)), default=None)


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


def _stem(file: str) -> str:
    base = os.path.basename(file)
    return base.rsplit(".", 1)[0] if "." in base else base


def _relative(file: str) -> str:
    """A path as the person who ran the command would type it."""
    try:
        relative = os.path.relpath(file)
    except ValueError:  # another drive
        return file
    return file if relative.startswith("../../") else relative


def _files_label(files: list[str]) -> str:
    if len(files) <= 3:
        return ", ".join(_relative(file) for file in files)
    folders = {os.path.dirname(_relative(file)) for file in files}
    if len(folders) == 1:
        folder = folders.pop() or "."
        return f"{len(files)} files under {folder}"
    common = os.path.commonpath([os.path.abspath(file) for file in files])
    return f"{len(files)} files under {_relative(common)}"


def _sessions_label(sessions: int, files: int) -> str:
    if sessions <= 1:
        return ""
    return ", each a session of its own" if sessions == files else f", {sessions} sessions"


def _title(files: list[str]) -> str:
    names = [os.path.basename(file) for file in files]
    return names[0] if len(names) == 1 else f"{names[0]} and {len(names) - 1} more"
