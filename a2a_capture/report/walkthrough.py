"""The report's content: an annotated walkthrough of a session, ready for a template.

Plain data built from the captures and the analysis; the templates only lay it out. The
verdict comes first (what went wrong, what it cost), then the evidence: the findings by
rule, the agents, the pictures, and every exchange cut to what matters.
"""

from __future__ import annotations

import heapq
import itertools
import os
import re
from collections import Counter
from collections.abc import Callable, Iterator
from typing import NamedTuple

from pydantic import BaseModel, ConfigDict, Field

from a2a_capture import __version__, nesting
from a2a_capture.a2a import spec
from a2a_capture.a2a.cards import Card
from a2a_capture.a2a.grpc import response_status
from a2a_capture.a2a.states import may_name
from a2a_capture.analyze.config import Config
from a2a_capture.analyze.engine import Analysis, Analyzer, Summary, round_trip_of
from a2a_capture.analyze.facts import ExchangeFacts, exchange_facts
from a2a_capture.analyze.findings import Finding
from a2a_capture.batch.analysis import join
from a2a_capture.capture.models import Exchange, parse_time
from a2a_capture.errors import SameFileTwice
from a2a_capture.redact.mask import Masker
from a2a_capture.report import svg
from a2a_capture.report.excerpt import LEGEND, RULE_FOCUS, listing
from a2a_capture.report.facts import MENTION, cut_stream, explain, outcome, short_id, silent_stream
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
    #: what its exchange's round trip was, as the analysis counts it: "wasted", "fragile" or None
    round_trip: str | None = None
    operation: str = ""  # its exchange's A2A operation, what a run of alike findings is named by


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
    #: what the round trip was, as the analysis counts it: "wasted", "fragile" (worked only by leniency) or None
    round_trip: str | None = None
    #: the outcome as a sentence, where the word alone would mislead (a stream with no event), with its time
    outcome_said: str = ""
    listing: str
    note: str
    findings: list[FindingView] = Field(default_factory=list)
    duration_ms: float | None = None
    webhook: bool = False
    #: the agent answered with an error (HTTP >= 400, a JSON-RPC or gRPC error, an A2A error type)
    failed: bool = False
    previous_flagged: str | None = None
    next_flagged: str | None = None


class AgentView(BaseModel):
    name: str
    origin: str  # the agent's own, where the capture says which server the recorder passed calls to
    listener: str = ""  # the recorder's address the client called instead, when it had one
    interfaces: list[str]
    capabilities: list[str]
    skills: list[str]
    security: list[str]
    anchor: str


class FindingLine(BaseModel):
    """A line of the findings list: one finding, or a run of alike ones (the same rule and message
    on the same operation, one after another), each still a finding with its own anchor."""

    finding: FindingView
    alike: list[FindingView] = Field(default_factory=list)  # the rest of the run
    said: str = ""  # a run's name: "GetTask ×10, all wasted"

    @property
    def count(self) -> int:
        return 1 + len(self.alike)


#: the fewest alike findings in a row that the findings list gives one line
MIN_RUN = 3


class RuleGroup(BaseModel):
    rule: str
    severity: str
    title: str
    count: int  # its findings
    new: int = 0
    wasted: int = 0  # the round trips it wasted, as the analysis's summary counts them
    fragile: int = 0  # the round trips that worked only because the agent was lenient about it
    cost: float | None = None  # the time its wasted round trips took; a call that worked cost nothing
    #: its part of the waste, in percent: of the wasted seconds where the capture has times, else of the
    #: wasted round trips (an exchange two rules wasted is in both rules' parts)
    share: int | None = None
    first: str  # anchor of the first exchange
    findings: list[FindingView]
    lines: list[FindingLine] = Field(default_factory=list)  # the findings as the list shows them


class TaskView(BaseModel):
    id: str
    short: str
    agent: str
    state: str
    anchor: str
    took: str = ""  # from its first state seen to its last, where recorded: "2.3 s"


class Share(BaseModel):
    """A rule's part of the waste, as the first screen says it."""

    rule: str
    amount: str  # "57.700 s" or "10 round trips"
    percent: int


class Verdict(BaseModel):
    headline: str
    by_severity: list[tuple[str, int]]
    #: round trips, as the analysis's summary counts them (an exchange once, whatever its findings)
    wasted: int
    fragile: int
    advice: int  # findings of advice
    findings: int = 0
    flagged: int = 0  # exchanges with a finding
    new: int | None = None  # findings the baseline has not accepted, when a baseline was given
    cost: float | None = None
    #: the costliest wasted round trip (its most serious finding), by the seconds it took: never a fragile or
    #: advice finding
    worst: FindingView | None = None
    most_fragile: FindingView | None = None  # when nothing was wasted, the most serious call that worked by leniency
    #: the rules that hold the most of the waste, most first
    shares: list[Share] = Field(default_factory=list)
    troubled: list[TaskView]
    tasks: int
    longest: list[TaskView] = Field(default_factory=list)  # a long session's overview: the tasks that ran longest


class ReportModel(BaseModel):
    model_config = ConfigDict(arbitrary_types_allowed=True)

    title: str
    files: list[str]
    files_label: str
    files_note: str = ""  # ", each a session of its own": prose after the files, never a path
    tool: str = f"a2a-capture {__version__}"
    whole: bool = False
    legend: str = ""  # what every listing's note would say, said once above them
    #: what a Markdown link to an anchor starts with: "#" in the report itself, the report's address
    #: and "#" in a summary given one (--link-base), None in a summary read apart (plain text)
    links: str | None = "#"
    long: bool = False
    only_flagged: bool = False
    masked: bool = True
    summary: dict
    verdict: Verdict
    findings: list[FindingView]
    rules: list[RuleGroup]
    agents: list[AgentView]
    #: the exchanges listed (all, or the flagged ones), each view made as it is iterated
    exchanges: Exchanges
    shown: int  # exchanges listed (all, or the flagged ones)
    sequence_svg: str
    timeline_svg: str
    #: the timeline as wide as a phone, shown instead on a narrow screen
    timeline_narrow_svg: str
    #: the sequence diagram as wide as a phone, for the HTML to show instead on a narrow screen
    sequence_narrow_svg: str
    sequence_mermaid: str
    #: the sequence diagram cut into the parts a printed page holds, each under the lifelines' names
    sequence_pages: list[str] = Field(default_factory=list)
    timeline_text: list[str]
    operations: list[tuple[str, int]]
    calls_by_agent: list[tuple[str, int]] = Field(default_factory=list)  # the overview of a long session
    #: the overview of a long session: each agent's calls by operation, most first
    operations_by_agent: list[tuple[str, list[tuple[str, int]]]] = Field(default_factory=list)
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


class Exchanges:
    """The walkthrough's exchanges, made as they are read: each time it is iterated, the captures
    are read and analyzed again and each exchange's view is made, handed over and let go, so a
    report's memory follows its largest exchange, not their number. ``len`` is the number listed."""

    def __init__(self, make: Callable[[], Iterator[ExchangeView]], count: int) -> None:
        self._make, self._count = make, count

    def __iter__(self) -> Iterator[ExchangeView]:
        return self._make()

    def __len__(self) -> int:
        return self._count

    def __getitem__(self, index: int) -> ExchangeView:
        """One view by its position (for a test or a template that wants one): read up to it."""
        if index < 0:
            index += self._count
        view = next(itertools.islice(iter(self), index, None), None)
        if view is None:
            raise IndexError(index)
        return view


class _Entry(NamedTuple):
    """An exchange as the report reads it: masked for showing, its facts and findings from the
    analysis of the unmasked one, and the later blocks that carry more frames of its stream."""

    file: str
    exchange: Exchange
    facts: ExchangeFacts
    found: list[Finding]
    late: list[tuple[Exchange, ExchangeFacts]]  # blocks whose frames continue this exchange's stream
    own_late: bool  # its frames continue a stream that is not listed with them: listed here
    owner: int | None  # the stream its late frames belong to, where that stream is listed


#: exchanges held at most after a stream, waiting for blocks that show more of its frames (a
#: documentation capture writes them after the exchange that happened meanwhile); past this, the
#: stream is listed with the frames seen so far and later ones with the block that carries them
MAX_HELD = 1024


class _Session:
    """What a report knows of the captures it reads: the files, how it names and anchors their
    exchanges, the masker and the baseline, and how it reads them (``entries``: once for the
    overview, again for the walkthrough)."""

    def __init__(self, files: list[str], sessions: list[list[str]], config: Config | None, masker: Masker | None,
                 accepted) -> None:
        self.files, self.sessions, self.config, self.masker, self.accepted = files, sessions, config, masker, accepted
        self.several = len(files) > 1
        self.index_of = {file: position for position, file in enumerate(files)}
        self.by_base = {os.path.basename(path): path for path in files}  # the files a message may name, indexed once
        self.stems = {file: _stem(file) for file in files}
        self.summaries: list[Summary] = []

    def anchor(self, file: str, label: str) -> str:
        return anchor_for(self.index_of.get(file, 0), label)

    def name(self, file: str, label: str) -> str:
        webhook = label.startswith("webhook ")
        if self.several:
            stem = self.stems.get(file) or _stem(file)
            return f"{stem} {label}" if webhook else f"{stem} #{label}"
        return label.capitalize() if webhook else f"Exchange {label}"

    def finding_views(self) -> Callable[[list[Finding]], list[FindingView]]:
        """A pass's maker of finding views: numbered in the order found, marked new as the
        baseline judges them (a finding is new once the baseline's count for its key is spent)."""
        from a2a_capture.replay import baseline

        remaining = Counter(self.accepted) if self.accepted is not None else None
        number = 0

        def views(found: list[Finding]) -> list[FindingView]:
            nonlocal number
            made = []
            for finding in found:
                number += 1
                new = False
                if remaining is not None:
                    key = baseline.key(finding, True)
                    if remaining[key] > 0:
                        remaining[key] -= 1
                    else:
                        new = True
                view = _finding_view(finding, number, self.anchor, self.name, new)
                if self.several:
                    view.message = _named_mentions(view.message, finding.file, self.by_base, self.name)
                made.append(view)
            return made

        return views

    def entries(self, summaries: bool = False) -> Iterator[tuple[int, _Entry]]:
        """Every exchange of every session, in order, with its session's index; ``summaries``:
        keep each session's summary of counts (the overview's pass does)."""
        for index, session in enumerate(self.sessions):
            analyzer = Analyzer(self.config, keep_calls=False, keep_findings=False)
            for file in session:
                analyzer.start_file(file)
                for entry in _with_late_frames(file, self._analyzed(file, analyzer)):
                    yield index, entry
                analyzer.end_file()
            if summaries:
                self.summaries.append(analyzer.summary())

    def _analyzed(self, file: str, analyzer: Analyzer) -> Iterator[tuple[Exchange, ExchangeFacts, list[Finding]]]:
        masker = self.masker
        for exchange in read_exchanges(file):
            call = analyzer.decode(exchange)
            found = analyzer.feed(exchange, call)
            facts = exchange_facts(exchange, call, round_trip_of(found, call.ok))
            yield (masker.exchange(exchange) if masker else exchange), facts, found


def _with_late_frames(file: str, analyzed) -> Iterator[_Entry]:
    """Each exchange with the later blocks that show more frames of its stream: frames after a
    response that is not a stream belong to the latest stream before them, so a stream's entry
    waits (with those after it) until the next stream starts, the file ends or MAX_HELD pass."""
    held: list[list] = []  # [exchange, facts, found, late, own_late, owner] in order, the first a stream
    stream: int | None = None  # the held stream's number
    listed: set[int] = set()  # numbers of the file's streams listed with their frames

    def flush() -> Iterator[_Entry]:
        for item in held:
            yield _Entry(file, *item)
        held.clear()

    for exchange, facts, found in analyzed:
        is_stream = not exchange.webhook and exchange.response is not None and exchange.response.is_event_stream
        if is_stream:
            yield from flush()
            stream = exchange.number
            listed.add(stream)
        late = bool(exchange.late_body)
        attach = late and held and exchange.late_stream == stream
        owner = exchange.late_stream if late and exchange.late_stream in listed else None
        item = [exchange, facts, found, [], late and not attach, owner]
        if attach:
            held[0][3].append((exchange, facts))
        if held or is_stream:
            held.append(item)
            if len(held) > MAX_HELD:
                yield from flush()
                stream = None
        else:
            yield _Entry(file, *item)
    yield from flush()


def _ending(entry: _Entry) -> tuple[str, str, int, str | None]:
    """How an exchange ended, as a word and (where the word would mislead) a sentence; its events,
    with its stream's later frames; and a gRPC call's own status."""
    exchange, facts = entry.exchange, entry.facts
    events = facts.events + sum(len(block.late_events) for block, _ in entry.late)
    grpc_status = response_status(exchange.response)
    grpc_label = grpc_status.label if grpc_status else None
    ending = outcome(facts, grpc_label)
    for _, later in entry.late:  # a stream that went on later ends where its last frame says
        if later.late_states:
            ending = svg.state_name(later.late_states[-1][1])
    said = ""
    response = exchange.response
    is_stream = not exchange.webhook and response is not None and response.is_event_stream
    if is_stream and not facts.failed:  # a stream's 200 says little
        written = [*exchange.notes, *exchange.response_notes, *exchange.trailing_notes]
        if events:
            said = cut_stream(ending, written)
        else:
            said, ending = silent_stream(written, facts.duration), "no event"
    return ending, said, events, grpc_label


def build(paths: list[str], *, config: Config | None = None, whole: bool = False,
          title: str | None = None, accepted=None, only_flagged: bool = False,
          show_secrets: bool = False, verbatim: bool = False,
          groups: list[list[str]] | None = None) -> ReportModel:
    """The report of one session. ``accepted``: a baseline's counts, to mark the findings it lacks.

    The captures are read twice: once for what comes first (the verdict, the findings, the
    agents and the figures: aggregates), then again, as the walkthrough is written, for each
    exchange's listing (``ReportModel.exchanges`` reads them each time it is iterated).
    ``verbatim``: every kept listing line is the capture's own, as documentation listings
    need (otherwise one-line JSON bodies are laid out for reading). ``groups``: the files of
    each independent session (--each-file, --each-folder); their times are not one clock's,
    so each session's task times count from its own first request and the sequence keeps the
    sessions' order.
    """
    files = [os.fspath(path) for path in paths]
    refuse_repeats(files)
    sessions = [[os.fspath(file) for file in group] for group in groups] if groups else [files]
    masker = None if show_secrets else Masker.for_files(files)
    reader = _Session(files, sessions, config, masker, accepted)
    several = reader.several
    finding_views: list[FindingView] = []
    flagged: list[str] = []  # anchors of the exchanges with findings, in order
    agents: dict[str, AgentView] = {}
    arrows = _Arrows()
    tasks = _Tasks()
    task_owner: dict[str, str] = {}
    views_of = reader.finding_views()
    order = 0  # exchange position in the session, the axis when a capture has no timestamps
    session_marks: list[svg.Mark] = []  # the drawn marks of the session being read, timed from its first request
    session_start: float | None = None
    current = 0
    recorded = False  # some exchange has its recorded time
    addresses = _Addresses()
    for session, entry in reader.entries(summaries=True):
        if session != current:
            _from_start(session_marks, session_start, len(sessions))
            session_marks, session_start, current = [], None, session
        file, exchange, facts = entry.file, entry.exchange, entry.facts
        if facts.started is not None and (session_start is None or facts.started < session_start):
            session_start = facts.started
        place = reader.anchor(file, exchange.label)
        here = views_of(entry.found)
        for view in here:  # what its round trip was, as the analysis counted it
            view.round_trip = facts.round_trip
            view.operation = facts.operation or ""
        finding_views += here
        if here:
            flagged.append(place)
        ending, _, events, _ = _ending(entry)
        name = reader.name(file, exchange.label)
        if facts.agent and exchange.meta.server:
            addresses.learn(facts.agent, exchange.meta.server)
        if facts.card is not None and facts.agent and facts.agent not in agents:
            agents[facts.agent] = addresses.agent_view(_agent_view(facts.card, facts.agent, place))
        lifeline = addresses.text(_lifeline(facts, agents))
        if exchange.webhook:
            lifeline = facts.task_id or ""  # resolved below, once every task's agent is known
        else:
            for task in [facts.task_id, *(t for t, _, _ in facts.states)]:
                if task:
                    task_owner.setdefault(task, lifeline)
        arrows.add(svg.Arrow(anchor=place, label=addresses.text(_arrow_label(exchange, facts)), lifeline=lifeline,
                             answer=ending, wasted=any(f.wasted for f in here), events=events,
                             webhook=exchange.webhook, name=name, time=facts.started,
                             file=reader.stems[file] if several else "", failed=facts.failed,
                             duration=facts.duration, alike=_alike(exchange, facts, ending)), session,
                   operation=facts.operation or facts.kind)  # as the analysis counts calls by operation
        # states: from the response (and its frames), and from frames shown late for an earlier stream
        stamps = _status_stamps(exchange) if facts.started is None and facts.states else {}
        recorded = recorded or facts.started is not None
        for task, state, at in facts.states:
            at = stamps.get((task, state)) if at is None else at  # a capture with no times: the body's
            mark = tasks.mark(task, state, order, at, place, name)
            if mark is not None:
                session_marks.append(mark)
            look = tasks.look(task, state, order, at, place, name)
            if look is not None:
                session_marks.append(look)
        if exchange.late_body:
            owner = entry.owner
            owner_anchor = reader.anchor(file, str(owner)) if owner is not None else place
            owner_name = reader.name(file, str(owner)) if owner is not None else name
            for task, state in facts.late_states:
                tasks.mark(task, state, order, None, owner_anchor, owner_name)
        order += 1
    _from_start(session_marks, session_start, len(sessions))
    if masker:
        for view in finding_views:
            view.message = masker.text(view.message)
    for arrow in arrows.kept():
        if arrow.webhook:
            arrow.lifeline = task_owner.get(arrow.lifeline, "an agent")
    lifelines = arrows.lifelines(task_owner)
    counted = reader.summaries[0] if len(reader.summaries) == 1 else join(
        [Analysis(summary=one) for one in reader.summaries]).summary  # every count the report states
    summary = counted.model_dump()
    rules = _rule_groups(finding_views, accepted is not None, counted)
    timed = arrows.timed
    troubled = tasks.troubled(task_owner)
    shown = len(flagged) if only_flagged else order

    def walk() -> Iterator[ExchangeView]:
        return _walk(reader, flagged, whole=whole, verbatim=verbatim, only_flagged=only_flagged, addresses=addresses)

    multi = len(sessions) > 1
    # the diagrams' arrows: independent sessions one after another, each in time order; one session's
    # in time order where the capture has every time (the SVG's; Mermaid lays out its first ones by time)
    by_session = arrows.earliest() if timed and multi else arrows.first
    drawn = arrows.earliest() if timed and (multi or arrows.all_times) else arrows.first
    # a big session's diagrams: what went wrong, not only how it began
    said = f"(drawn: the first {OPENING}, then those wasted or failed)"
    chosen = None if multi else arrows.what_matters(svg.MAX_ARROWS)
    drawn = chosen or drawn
    chosen_mermaid = None if multi else arrows.what_matters(svg.MAX_MERMAID)
    by_session = chosen_mermaid or by_session
    shown_tasks = tasks.timeline(past_drawn=not multi)
    # a capture with no recorded times whose every drawn state has its body's status.timestamp: the
    # timeline on that clock
    stamped = not recorded and not multi and bool(shown_tasks) and all(
        mark.at is not None for marks in [*shown_tasks.values(), *tasks.seen().values()] for mark in marks)
    clock = "status" if stamped else "recorded"
    report = ReportModel(
        title=title or _title(files),
        files=[_relative(file) for file in files],
        files_label=_files_label(files), files_note=_sessions_label(len(sessions) if groups else 1, len(files)),
        whole=whole,
        legend="" if verbatim else LEGEND,
        long=order > LONG_SESSION,
        only_flagged=only_flagged,
        masked=masker is not None,
        summary=summary,
        verdict=_verdict(finding_views, troubled, len(tasks), accepted is not None, counted, rules,
                         longest=tasks.longest(task_owner) if order > LONG_SESSION else []),
        findings=finding_views,
        rules=rules,
        agents=list(agents.values()),
        exchanges=Exchanges(walk, shown),
        shown=shown,
        sequence_svg=svg.sequence(lifelines, drawn, timed=timed and not multi, total=len(arrows),
                                  all_times=arrows.all_times, chosen=said if chosen else ""),
        sequence_narrow_svg=svg.sequence(lifelines, drawn, timed=timed and not multi, narrow=True,
                                         total=len(arrows), all_times=arrows.all_times),
        timeline_svg=svg.timeline(shown_tasks, task_owner, timed=timed or stamped, total=order, each_session=multi,
                                  clock=clock,
                                  tasks_total=len(tasks), seen=tasks.seen(), until=None if multi else arrows.until),
        timeline_narrow_svg=svg.timeline(shown_tasks, task_owner, timed=timed or stamped, total=order, clock=clock,
                                         each_session=multi, narrow=True, tasks_total=len(tasks), seen=tasks.seen(),
                                         until=None if multi else arrows.until),
        sequence_pages=svg.sequence_pages(lifelines, drawn, timed=timed and not multi, total=len(arrows),
                                          all_times=arrows.all_times, chosen=said if chosen else ""),
        sequence_mermaid=svg.mermaid(lifelines, by_session[:svg.MAX_MERMAID], timed=timed and not multi,
                                     total=len(arrows), chosen=said if chosen_mermaid else ""),
        timeline_text=svg.timeline_text(shown_tasks, task_owner, timed=timed or stamped, each_session=multi,
                                        total=len(tasks), origin=tasks.earliest_at),
        operations=sorted(summary["calls_by_operation"].items(), key=lambda item: (-item[1], item[0])),
        calls_by_agent=sorted(arrows.by_agent.items(), key=lambda item: (-item[1], item[0])),
        operations_by_agent=arrows.operations_by_agent() if order > LONG_SESSION else [],
        several=several,
        sessions=len(sessions) if groups else 1,
    )
    # the listings come from masked exchanges; the rest (agents, cards, diagrams) from the analysis of the raw ones
    return masker.model(report, skip=frozenset({"listing"})) if masker else report


def _status_stamps(exchange) -> dict[tuple[str, str], float]:
    """Each (task, state) of an answer and its frames with the time its status says
    (`status.timestamp`), for a capture that recorded none of its own."""
    response = exchange.response
    if response is None or not response.body_size:
        return {}
    if response.is_event_stream:  # the frames as they pass: a stream kept in its file is not read whole
        texts = (event.data for event in response.iter_events() if event.data)
    else:
        texts = [response.content]
    stamps: dict[tuple[str, str], float] = {}
    for text in texts:
        if not may_name(text if isinstance(text, str) else text.decode("utf-8", "replace"), "timestamp"):
            continue
        try:
            document = nesting.loads(text)
        except (ValueError, UnicodeDecodeError):
            continue
        _stamps_in(document, stamps, 0)
    return stamps


def _stamps_in(value, stamps: dict[tuple[str, str], float], depth: int) -> None:
    if depth > 32:
        return
    if isinstance(value, dict):
        status = value.get("status")
        task = value.get("taskId") or value.get("id")
        if isinstance(status, dict) and isinstance(task, str):
            state = spec.canonical_state(status.get("state"))
            when = parse_time(status.get("timestamp")) if isinstance(status.get("timestamp"), str) else None
            if state and when is not None:
                stamps.setdefault((task, state), when.timestamp())
        for key, child in value.items():
            if key not in ("history", "artifacts") and isinstance(child, dict | list):
                _stamps_in(child, stamps, depth + 1)
    elif isinstance(value, list):
        for child in value:
            _stamps_in(child, stamps, depth + 1)


def _from_start(marks: list[svg.Mark], start: float | None, sessions: int) -> None:
    """A session's task times counted from its first request, when a report holds several."""
    if sessions > 1 and start is not None:
        for mark in marks:
            if mark.at is not None:
                mark.at -= start


def _walk(reader: _Session, flagged: list[str], *, whole: bool, verbatim: bool,
          only_flagged: bool, addresses: _Addresses) -> Iterator[ExchangeView]:
    """The walkthrough: each exchange's view with its listing, made as the captures are read again."""
    views_of = reader.finding_views()
    masker = reader.masker
    nth = 0  # flagged exchanges so far
    for _, entry in reader.entries():
        file, exchange, facts = entry.file, entry.exchange, entry.facts
        here = views_of(entry.found)
        if only_flagged and not here:
            continue
        focus = set().union(*(RULE_FOCUS.get(f.rule, set()) for f in here)) if here else None
        late = [block for block, _ in entry.late] or ([exchange] if entry.own_late else [])
        text, note = listing(exchange, whole=whole, extra_keys=focus, late=late, layout=not verbatim,
                             legend=not verbatim)
        notes = explain(facts)
        if notes:
            note = f"{note} {' '.join(notes)}"
        ending, said, events, grpc_status = _ending(entry)
        response = exchange.response
        view = ExchangeView(
            anchor=reader.anchor(file, exchange.label), file=_relative(file), name=reader.name(file, exchange.label),
            label=exchange.label,
            heading=f"{exchange.label} · {addresses.text(exchange.title)}" if exchange.title else exchange.label,
            method=exchange.request.method, target=exchange.request.target,
            status=response.status if response is not None else None, events=events,
            grpc_status=grpc_status,
            request_bytes=exchange.request.body_size,
            response_bytes=response.body_size if response is not None else None,
            outcome=ending, round_trip=facts.round_trip, outcome_said=said, listing=text.text, note=note,
            findings=here, duration_ms=round(facts.duration * 1000, 1) if facts.duration is not None else None,
            webhook=exchange.webhook, failed=facts.failed,
        )
        if here:
            view.previous_flagged = flagged[nth - 1] if nth > 0 else None
            view.next_flagged = flagged[nth + 1] if nth + 1 < len(flagged) else None
            nth += 1
        # the listing comes from the masked exchange; the rest (findings, outcome, notes) from the raw one's analysis
        yield masker.model(view, skip=frozenset({"listing"})) if masker else view


class _Addresses:
    """The recorder's listeners and the agents behind them, as each exchange's `#@ server:` says,
    so the figures, titles and agents name the agent, not the address the client was pointed at."""

    def __init__(self) -> None:
        self._agent: dict[str, str] = {}  # listener host:port -> agent host:port

    def learn(self, origin: str, server: str) -> None:
        listener = origin.split("://", 1)[-1].split("/", 1)[0]
        if listener != server and len(self._agent) < 1024:
            self._agent.setdefault(listener, server)

    def text(self, text: str) -> str:
        for listener, agent in self._agent.items():
            if listener in text:
                text = re.sub(rf"(?<![\w.]){re.escape(listener)}(?!\d)", agent, text)
        return text

    def agent_view(self, view: AgentView) -> AgentView:
        origin = self.text(view.origin)
        if origin == view.origin:
            return view
        return view.model_copy(update={"origin": origin, "listener": view.origin,
                                       "name": self.text(view.name),
                                       "interfaces": [self.text(item) for item in view.interfaces]})


#: the arrows a big session's diagram opens with before it draws only the calls wasted or failed
OPENING = 20


class _Arrows:
    """The sequence diagram's arrows as the overview's pass meets them, kept only as far as the
    diagrams draw them (the first few, and the earliest few by time), so a report's memory does
    not follow its number of exchanges; the lifelines in the order they first appear."""

    def __init__(self) -> None:
        self.first: list[svg.Arrow] = []  # the first ones, in the order met: the Mermaid diagram's, or untimed
        self._earliest: list[tuple] = []  # a heap of the earliest by (session, time, order), latest on top
        self._keep = max(svg.MAX_MERMAID, svg.MAX_ARROWS)
        self._lifelines: dict[tuple[bool, str], None] = {}  # (webhook, lifeline or task), in order
        self._count = 0
        self.all_times = True  # every arrow, a webhook's too, has its time
        self.timed = False  # every request has its time, and there is one
        self.until: float | None = None  # when the last answer ended, for an axis over the whole session
        self._troubled: list[svg.Arrow] = []  # the first wasted or failed ones after the opening ones
        self.by_agent: Counter[str] = Counter()  # calls to each agent (a webhook is the agent's call back)
        self.by_operation: Counter[tuple[str, str]] = Counter()  # calls to each agent by operation

    def operations_by_agent(self) -> list[tuple[str, list[tuple[str, int]]]]:
        """Each agent's calls by operation, the agent with most calls first, its commonest first."""
        return [(agent, sorted(((operation, count) for (one, operation), count in self.by_operation.items()
                                if one == agent), key=lambda item: (-item[1], item[0])))
                for agent, _ in sorted(self.by_agent.items(), key=lambda item: (-item[1], item[0]))]

    def add(self, arrow: svg.Arrow, session: int, operation: str = "") -> None:
        if self._count == 0:
            self.timed = True
        self._count += 1
        if len(self.first) < self._keep:
            self.first.append(arrow)
        elif (arrow.wasted or arrow.failed) and len(self._troubled) < self._keep:
            self._troubled.append(arrow)
        self._lifelines.setdefault((arrow.webhook, arrow.lifeline))
        if not arrow.webhook and len(self.by_agent) < 1024:
            self.by_agent[arrow.lifeline] += 1
        if not arrow.webhook and len(self.by_operation) < 4096:
            self.by_operation[arrow.lifeline, operation] += 1
        if arrow.time is None:
            self.all_times = False
            self.timed = self.timed and arrow.webhook
            return
        ended = arrow.time + (arrow.duration or 0.0)
        if self.until is None or ended > self.until:
            self.until = ended
        key = (-session, -arrow.time, -self._count, arrow)
        if len(self._earliest) < self._keep:
            heapq.heappush(self._earliest, key)
        elif key[:3] > self._earliest[0][:3]:
            heapq.heapreplace(self._earliest, key)

    def __len__(self) -> int:
        return self._count

    def earliest(self) -> list[svg.Arrow]:
        """The first arrows by session, then time, then the order met (a stable sort's)."""
        return [item[3] for item in sorted(self._earliest, key=lambda item: item[:3], reverse=True)]

    def kept(self) -> list[svg.Arrow]:
        """Every arrow kept, once (one may be among the first and the earliest)."""
        return list({id(arrow): arrow for arrow in [*self.first, *(item[3] for item in self._earliest),
                                                    *self._troubled]}.values())

    def what_matters(self, limit: int) -> list[svg.Arrow] | None:
        """For a session with more arrows than ``limit`` and calls wasted or failed past it: its
        first OPENING arrows, then those wasted or failed, in the order met (None: the first ones
        say it all)."""
        later = [arrow for arrow in self.first[OPENING:] if arrow.wasted or arrow.failed] + self._troubled
        if self._count <= limit or not any(arrow.wasted or arrow.failed for arrow in
                                           [*self.first[limit:], *self._troubled]):
            return None
        return [*self.first[:OPENING], *later]

    def lifelines(self, task_owner: dict[str, str]) -> list[str]:
        """Every arrow's lifeline in the order they first appear, a webhook's its task's agent."""
        return list(dict.fromkeys(task_owner.get(name, "an agent") if webhook else name
                                  for webhook, name in self._lifelines))


class _Tasks:
    """Each task's states as the overview's pass meets them: every mark of the tasks the timeline
    draws, only the last state and where it was seen of the others (what the verdict names)."""

    def __init__(self) -> None:
        self._drawn: dict[str, list[svg.Mark]] = {}
        self._last: dict[str, svg.Mark] = {}  # the others': their last state
        self._seen: dict[str, list[svg.Mark]] = {}  # the drawn tasks': every exchange that showed each, a tick each
        self.earliest_at: float | None = None  # the earliest time any task was seen in a state
        self._first_at: dict[str, float] = {}  # when each task was first seen in a state, where recorded

    def mark(self, task: str, state: str, order: int, at: float | None, place: str, where: str) -> svg.Mark | None:
        """A task seen in a state: the mark the timeline draws, or None (a poll that finds the same state
        draws no new bar; a task past those drawn has no mark, only its last state)."""
        drawn = self._drawn.get(task)
        if drawn is None and task not in self._last and len(self._drawn) < svg.MAX_TASKS:
            drawn = self._drawn[task] = []
        if drawn is None:
            last = self._last.get(task)
            if last is not None and last.state == state:
                return None
        elif drawn and drawn[-1].state == state:
            return None
        if at is not None and (self.earliest_at is None or at < self.earliest_at):
            self.earliest_at = at
        if at is not None and task not in self._drawn:
            self._first_at.setdefault(task, at)
        if drawn is None:  # no mark to time or draw: its last state, for the verdict and a big session's timeline
            self._last[task] = svg.Mark(order=order, at=at, state=state, anchor=place, where=where)
            return None
        mark = svg.Mark(order=order, at=at, state=state, anchor=place, where=where)
        drawn.append(mark)
        return mark

    def look(self, task: str, state: str, order: int, at: float | None, place: str, where: str) -> svg.Mark | None:
        """A drawn task shown by an exchange: one tick per exchange (None: not drawn, or this
        exchange already ticked)."""
        if task not in self._drawn:
            return None
        looks = self._seen.setdefault(task, [])
        if looks and looks[-1].anchor == place:
            return None
        look = svg.Mark(order=order, at=at, state=state, anchor=place, where=where)
        looks.append(look)
        return look

    def __len__(self) -> int:
        return len(self._drawn) + len(self._last)

    def seen(self) -> dict[str, list[svg.Mark]]:
        return self._seen

    def shown(self) -> dict[str, list[svg.Mark]]:
        return self._drawn

    def timeline(self, past_drawn: bool = True) -> dict[str, list[svg.Mark]]:
        """The tasks the timeline draws: every one where they fit; in a session with more, the
        troubled first (``past_drawn``: one past the drawn ones by its last state alone, whose time
        no session start has moved), then the others drawn."""
        if not self._last:
            return self._drawn
        rows = {task: marks for task, marks in self._drawn.items() if svg.state_name(marks[-1].state) in TROUBLE}
        for task, mark in self._last.items() if past_drawn else ():
            if len(rows) >= svg.MAX_TASKS:
                break
            if svg.state_name(mark.state) in TROUBLE:
                rows[task] = [mark]
        for task, marks in self._drawn.items():
            if len(rows) >= svg.MAX_TASKS:
                break
            rows.setdefault(task, marks)
        return rows

    def longest(self, owner: dict[str, str], count: int = 5) -> list[TaskView]:
        """The tasks that ran longest, from their first state seen to their last (recorded times only)."""
        spans = []
        for task, marks in self._drawn.items():  # their marks' times are from the session's start
            times = [mark.at for mark in marks if mark.at is not None]
            if len(times) > 1 and times[-1] > times[0]:
                spans.append((times[-1] - times[0], task, marks[-1]))
        for task, mark in self._last.items():  # theirs and the first one's are the recorded clock's
            if mark.at is not None and mark.at > self._first_at.get(task, mark.at):
                spans.append((mark.at - self._first_at[task], task, mark))
        return [TaskView(id=task, short=short_id(task), agent=owner.get(task, ""), state=svg.state_name(mark.state),
                         anchor=mark.anchor, took=svg.duration_text(took))
                for took, task, mark in heapq.nlargest(count, spans, key=lambda span: span[0])]

    def troubled(self, owner: dict[str, str]) -> list[TaskView]:
        """The tasks whose last state stands out, in the order they were first seen."""
        lasts = itertools.chain(((task, marks[-1].state, marks[-1].anchor) for task, marks in self._drawn.items()),
                                ((task, mark.state, mark.anchor) for task, mark in self._last.items()))
        return [TaskView(id=task, short=short_id(task), agent=owner.get(task, ""), state=svg.state_name(state),
                         anchor=anchor) for task, state, anchor in lasts if svg.state_name(state) in TROUBLE]


def _alike(exchange, facts: ExchangeFacts, ending: str) -> str:
    """What makes calls alike enough to fold into one loop: the same operation on the same task
    with the same outcome ("" for a webhook or a call on no task: never folded)."""
    if exchange.webhook or not facts.operation or not facts.task_id:
        return ""
    return f"{facts.operation}\n{facts.task_id}\n{ending}\n{facts.failed}"


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

    return MENTION.sub(named, message)


def _rule_groups(findings: list[FindingView], judged: bool, summary: Summary) -> list[RuleGroup]:
    """The findings by rule, each rule's round trips and seconds as the analysis's summary counts them."""
    groups: dict[str, RuleGroup] = {}
    for finding in findings:
        group = groups.get(finding.rule)
        if group is None:
            group = groups[finding.rule] = RuleGroup(
                rule=finding.rule, severity=finding.severity, title=finding.title, count=0, first=finding.anchor,
                findings=[], wasted=summary.wasted_round_trips_by_rule.get(finding.rule, 0),
                fragile=summary.fragile_round_trips_by_rule.get(finding.rule, 0),
                cost=summary.wasted_seconds_by_rule.get(finding.rule))
        group.count += 1
        group.findings.append(finding)
        group.new += finding.new
    for group in groups.values():  # new findings first, so a reviewer sees what the baseline lacks
        group.findings.sort(key=lambda f: not f.new)
        group.lines = _finding_lines(group.findings)
        group.share = _share(group, summary)
    return sorted(groups.values(), key=lambda g: (-(g.new if judged else 0), _SEVERITY_ORDER[g.severity],
                                                  -g.count, g.rule))


def _finding_lines(findings: list[FindingView]) -> list[FindingLine]:
    """The findings list's lines: a run of MIN_RUN or more alike findings in a row is one."""
    lines: list[FindingLine] = []
    for alike, run in itertools.groupby(findings, key=_alike_finding):
        run = list(run)
        if alike is None or len(run) < MIN_RUN:
            lines += [FindingLine(finding=finding) for finding in run]
            continue
        outcomes = {finding.outcome for finding in run}
        how = f", all {run[0].outcome}" if len(outcomes) == 1 and run[0].outcome != "advice" else ""
        lines.append(FindingLine(finding=run[0], alike=run[1:], said=f"{run[0].operation} ×{len(run)}{how}"))
    return lines


def _alike_finding(finding: FindingView) -> tuple | None:
    """What makes findings alike: the same message and outcome on the same operation, in the same
    file (None: a finding on no operation, never folded)."""
    if not finding.operation:
        return None
    return (finding.message, finding.outcome, finding.new, finding.operation, finding.anchor.rsplit("ex-", 1)[0])


def _share(group: RuleGroup, summary: Summary) -> int | None:
    """A rule's part of the waste in percent: of the seconds where they are known, else of the round trips."""
    if summary.wasted_seconds:
        return round(100 * (group.cost or 0.0) / summary.wasted_seconds) if group.wasted else None
    if summary.wasted_round_trips and group.wasted:
        return round(100 * group.wasted / summary.wasted_round_trips)
    return None


def _verdict(findings: list[FindingView], troubled: list[TaskView], tasks: int, judged: bool, summary: Summary,
             rules: list[RuleGroup], longest: list[TaskView] | None = None) -> Verdict:
    """What went wrong and what it cost: every count as the analysis's summary has it."""
    severities = Counter(f.severity for f in findings)
    new = sum(f.new for f in findings) if judged else None
    worst = _costliest([f for f in findings if f.outcome == "wasted"])
    fragile = None if worst else _most_serious([f for f in findings if f.round_trip == "fragile"
                                                and f.outcome == "fragile"])
    wasted, lenient = summary.wasted_round_trips, summary.fragile_round_trips
    advice = summary.findings_by_outcome.get("advice", 0)
    if not summary.findings:
        headline = "No findings: no round trip in this session was wasted by the rules' account."
    else:
        parts = [f"{wasted} wasted round trip{'s' if wasted != 1 else ''}"]
        if lenient:
            parts.append(f"{lenient} that worked only because the agent was lenient")
        if advice:
            parts.append(f"{advice} piece{'s' if advice != 1 else ''} of advice")
        headline = (f"{_count(summary.findings, 'finding')} on {_count(summary.flagged_round_trips, 'exchange')}: "
                    + ", ".join(parts) + ".")
        if judged:
            headline += f" {new} not accepted by the baseline."
    return Verdict(
        headline=headline,
        by_severity=[(level, severities[level]) for level in ("error", "warning", "info") if severities[level]],
        wasted=wasted, fragile=lenient, advice=advice, findings=summary.findings,
        flagged=summary.flagged_round_trips, new=new, cost=summary.wasted_seconds, worst=worst,
        most_fragile=fragile, troubled=troubled, tasks=tasks, shares=_shares(rules, summary), longest=longest or [],
    )


def _count(number: int, noun: str) -> str:
    return f"{number} {noun}{'s' if number != 1 else ''}"


#: rules the first screen names with their part of the waste, at most
SHARES = 3


def _shares(rules: list[RuleGroup], summary: Summary) -> list[Share]:
    """The rules that hold the most of the waste, most first: by seconds where the capture has them."""
    timed = bool(summary.wasted_seconds)
    held = sorted((rule for rule in rules if rule.share is not None),
                  key=lambda rule: (-(rule.cost or 0.0) if timed else -rule.wasted, rule.rule))
    return [Share(rule=rule.rule, percent=rule.share,
                  amount=f"{rule.cost or 0.0:.3f} s" if timed else _count(rule.wasted, "round trip"))
            for rule in held[:SHARES]]


def _costliest(findings: list[FindingView]) -> FindingView | None:
    """The wasted round trip to name first: one the baseline lacks before an accepted one, then the one
    that took longest, then the most serious."""
    return min(findings, key=lambda f: (not f.new, -(f.cost or 0.0), _SEVERITY_ORDER[f.severity]), default=None)


def _most_serious(findings: list[FindingView]) -> FindingView | None:
    """The one to name first: a finding the baseline lacks before an accepted one, then by
    severity, then by what it cost."""
    return min(findings, key=lambda f: (not f.new, _SEVERITY_ORDER[f.severity], -(f.cost or 0.0)), default=None)


#: the capabilities a card may declare, as the report names them
_CAPABILITIES = (("streaming", "streaming"), ("push notifications", "pushNotifications"),
                 ("extended card", "extendedAgentCard"))


def _capability(card: Card, name: str, capability: str) -> str:
    """What the card declares of a capability: true, false (as it wrote it), or nothing, which the spec
    reads as false (the AgentCapabilities fields are optional booleans)."""
    stated = card.stated.get(capability)
    if stated is None:
        return f"{name}: not declared (read as false)"
    if card.capability(capability):
        return f"{name}: true"
    value = stated.rpartition(": ")[2]
    return f"{name}: false" if value == "false" else f"{name}: {value} (read as false)"


def _agent_view(card: Card, origin: str, place: str) -> AgentView:
    capabilities = [_capability(card, name, capability) for name, capability in _CAPABILITIES]
    security = [f"{scheme.name} ({scheme.kind}{' ' + scheme.scheme if scheme.scheme else ''})"
                for scheme in card.security_schemes]
    if card.requires_auth:
        security.append("required: " + " or ".join(" + ".join(req) for req in card.security_requirements if req))
    return AgentView(
        name=card.name or origin, origin=origin,
        interfaces=[f"{i.binding} {i.version or ''} {i.url}".replace("  ", " ") for i in card.interfaces],
        capabilities=capabilities, skills=[skill.name or skill.id for skill in card.skills],
        security=security or ["none"], anchor=place,
    )


def _stem(file: str) -> str:
    base = os.path.basename(file)
    return base.rsplit(".", 1)[0] if "." in base else base


def _relative(file: str) -> str:
    """A path relative to the working directory, as the person who ran the command would open it (never
    the machine's absolute path, which says nothing to the reader of a report sent on)."""
    try:
        return os.path.relpath(file)
    except ValueError:  # another drive
        return file


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
