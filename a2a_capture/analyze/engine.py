"""Run the rules over a session of captures: decode, replay the client's knowledge, judge."""

from __future__ import annotations

import heapq
import os
from collections import Counter
from collections.abc import Callable, Iterable, Iterator

from pydantic import BaseModel, Field

from a2a_capture import shortcuts
from a2a_capture.a2a import spec
from a2a_capture.a2a.decode import Call, Cards, decode
from a2a_capture.analyze import rules as _rules  # noqa: F401  (registers the rules)
from a2a_capture.analyze.config import Config, ignored_in_notes
from a2a_capture.analyze.depends import Key
from a2a_capture.analyze.facts import ExchangeFacts, exchange_facts
from a2a_capture.analyze.findings import Finding, Rule, Severity
from a2a_capture.analyze.libraries import known_by_habits
from a2a_capture.analyze.places import Places
from a2a_capture.analyze.session import Session, without_bodies
from a2a_capture.capture.models import Exchange
from a2a_capture.sources import exchanges

#: calls at most that wait, unlearned, for the client to know of them: more than any client has
#: in flight at once; a capture whose times stand still (copied ``#@ start`` lines) must not hold
#: every call of the file
MAX_PENDING = 4096


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
    #: what the round trip was, by its findings: "wasted", "fragile" (it worked, only because the agent was
    #: lenient) or None: what the summary counts (``round_trip``)
    round_trip: str | None = None


class Cause(BaseModel):
    """One fact of the card or the client behind findings of several exchanges, named once: ``cause``
    says both halves (the card's field and the client's habit); the round trips are those counted
    already, never again."""

    cause: str
    rules: list[str]
    findings: int
    round_trips: int  # the exchanges it covers
    wasted_round_trips: int
    #: the exchanges it covers as {"file", "exchange"}, the first ``CAUSE_EXCHANGES`` of them
    exchanges: list[dict[str, str]]


#: exchanges a cause lists at most (its count says how many it covers)
CAUSE_EXCHANGES = 100


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
    #: exchanges that worked only because the agent was lenient (and are not also wasted): a call that
    #: failed never counts here, whatever its findings say
    fragile_round_trips: int = 0
    #: findings in all: a finding is a claim about one exchange, and an exchange may have several
    findings: int = 0
    #: exchanges with at least one finding
    flagged_round_trips: int = 0
    #: by rule: the exchanges its findings wasted, those that worked only by its leniency, and the seconds
    #: its wasted exchanges took (an exchange two rules wasted counts for both)
    wasted_round_trips_by_rule: dict[str, int] = Field(default_factory=dict)
    fragile_round_trips_by_rule: dict[str, int] = Field(default_factory=dict)
    wasted_seconds_by_rule: dict[str, float] = Field(default_factory=dict)
    #: findings of two or more exchanges that one fact explains, by that fact (``Finding.cause``)
    causes: list[Cause] = Field(default_factory=list)


class Analysis(BaseModel):
    findings: list[Finding] = Field(default_factory=list)
    calls: list[CallRecord] = Field(default_factory=list)
    summary: Summary
    #: each exchange's facts for a report, in order (kept when asked: ``analyze(..., facts=True)``)
    exchanges: list[ExchangeFacts] = Field(default_factory=list)
    #: agents by origin, named by their cards: what names a streamed finding's agent at the end
    agent_names: dict[str, str] = Field(default_factory=dict)


def analyze(paths: Iterable[str | os.PathLike], config: Config | None = None,
            on_finding: Callable[[Finding], None] | None = None, facts: bool = False,
            on_call: Callable[[CallRecord], None] | None = None) -> Analysis:
    """Files given together form one session, in the order given.

    With ``on_finding``, each finding is handed over as it is found and the analysis returned
    keeps only the summary: memory stays flat however long the session (``on_call`` is handed
    each call's record the same way). With ``facts``, it keeps each exchange's facts too,
    which a report shows without decoding again.
    """
    streaming = on_finding is not None
    analyzer = Analyzer(config, keep_calls=not streaming, keep_findings=not streaming, keep_facts=facts,
                        on_call=on_call)
    for path in paths:
        file = os.fspath(path)
        analyzer.start_file(file)
        for batch in _decoded(file, analyzer.cards):
            for exchange, call in batch:
                found = analyzer.feed(exchange, call)
                if on_finding is not None:
                    for finding in found:
                        on_finding(finding)
        analyzer.end_file()
    return analyzer.finish()


#: exchanges read, then decoded, then judged together: each stage's code stays warm in the CPU's
#: caches for a batch instead of being evicted by the others' at every exchange
BATCH = 8


def _decoded(file: str, cards: Cards | None = None) -> Iterator[list[tuple[Exchange, Call]]]:
    """A file's exchanges with their calls, a batch at a time (``cards``: the session's, see ``decode``).
    An exchange that cannot be read fails only after the ones before it have been handed over, as one
    at a time they would be."""
    reader = exchanges(file)
    while True:
        batch: list[Exchange] = []
        failure = None
        try:
            for exchange in reader:
                batch.append(exchange)
                if len(batch) == BATCH:
                    break
        except Exception as error:  # raised again below, after the batch before it
            failure = error
        if batch:
            yield [(exchange, decode(exchange, file, cards)) for exchange in batch]
        if failure is not None:
            raise failure
        if len(batch) < BATCH:
            return


class Analyzer:
    """The engine, one exchange at a time: `feed` judges an exchange against what the client
    knew when it sent it and returns the findings at once (`record --live` prints them as a
    session runs); `finish` makes the analysis of everything fed.

    Each rule runs only for the operations it declares. What ended before a call started, the
    client knew when it made the call; a recorded file is in the order calls finished, so a
    long call can end after a later one started, and is learned only then.
    """

    def __init__(self, config: Config | None = None, keep_calls: bool = True, keep_findings: bool = True,
                 keep_facts: bool = False, on_call: Callable[[CallRecord], None] | None = None) -> None:
        """``keep_calls``/``keep_findings`` False: a caller that streams findings out keeps memory flat.
        ``keep_facts``: keep each exchange's facts for a report. ``on_call``: each call's record, as read."""
        self.config = config or Config()
        self.session = Session()
        #: the session's cards by their bytes: a card served again decodes as the card held (``decode``)
        self.cards = Cards()
        self.findings: list[Finding] = []
        self.records: list[CallRecord] = []
        self.facts: list[ExchangeFacts] = []
        self.keep_calls, self.keep_findings, self.keep_facts = keep_calls, keep_findings, keep_facts
        self.on_call = on_call
        #: a call's record or an exchange's facts kept or handed over (``_keep``): neither when findings stream
        self._keeping = keep_calls or on_call is not None or keep_facts
        #: findings by rule, then by outcome: the summary's counts; and each (rule, severity, outcome) counted,
        #: in the order first found: the order of the summary's counts
        self._tally: dict[str, dict[str, int]] = {}
        self._tallied: list[tuple[str, Severity, str]] = []
        #: every plan of the session, in the order made: each counts its calls
        self._plans: list[_Plan] = []
        self.files: list[str] = []
        self._file = ""
        self._active: list[Rule] = []
        self._dispatch: dict[tuple[str | None, str, bool, bool], _Plan] = {}
        self._pending: list[tuple[float, int, Call]] = []  # finished calls the client may not know of yet
        #: the latest call, while no other waits, and when it ended: learned or put with the others when the
        #: next one starts
        self._latest: Call | None = None
        self._latest_end = 0.0
        self._index = 0  # the number of the latest call put with those waiting (``_pending``: their order)
        #: the exchanges with a wasted finding, and the seconds they took (each counted once, in the order
        #: found); those with a fragile one
        self._wasted, self._fragile, self._flagged = Places(), Places(), Places()
        self._wasted_seconds: float | None = None
        #: by rule: round trips wasted and fragile, and the seconds wasted (see Summary)
        self._rule_wasted: Counter[str] = Counter()
        self._rule_fragile: Counter[str] = Counter()
        self._rule_seconds: dict[str, float] = {}
        self._causes: dict[str, Cause] = {}  # by Finding.cause, in the order first found

    def start_file(self, file: str) -> None:
        self.end_file()
        self._file = file
        self.files.append(file)
        self._active = self.config.active(file)
        for plan in self._dispatch.values():  # kept for their counts only
            plan.forget()
        self._dispatch = {}

    def feed(self, exchange: Exchange, call: Call | None = None) -> list[Finding]:
        """Judge one exchange of the current file (``call``: it decoded already); its findings, in rule order."""
        if call is None:
            call = self.decode(exchange)
        if call.client_library is None:  # named once, for the rules' fixes and the session
            call.client_library = known_by_habits(call)
        start, session, pending = call.started, self.session, self._pending
        latest = self._latest
        if latest is not None:  # no other call waits: learned now, or it waits with the others
            self._latest = None
            if start is None or self._latest_end <= start:
                session.apply(latest)
            else:  # numbered as it is put with the others: calls wait in the order they came
                self._index += 1
                heapq.heappush(pending, (self._latest_end, self._index, without_bodies(latest)))
        while pending and (start is None or pending[0][0] <= start):
            session.apply(heapq.heappop(pending)[2])
        found: list[Finding] = []
        notes, error, operation = call.notes, call.error, call.operation
        key = (operation, call.kind, error is not None, bool(notes))
        plan = self._dispatch.get(key) or self._plan_for(key)
        rules, running = plan.rules, ()
        if notes:
            silenced = ignored_in_notes(notes)
            rules = [] if silenced is None else [rule for rule in rules if rule.id not in silenced]
        elif plan.memos:  # a call with no error and no notes: skip the rules quiet before for the same key
            rules, running = plan.unskipped(call, session)
        for rule in rules:
            for hit in rule.check(call, session) or ():
                found.append(rule.finding(call, session, hit))
        plan.calls += 1
        for memo, memo_key in running:
            memo.remember(memo_key, found)
        round_trip = self._count(found, call) if found else None
        if self._keeping:
            self._keep(exchange, call, round_trip)
        duration = call.duration
        if start is None or duration is None:
            session.apply(call)
            return found
        if not pending:  # the one call waiting keeps its bodies until the next starts (most often, learned then)
            self._latest, self._latest_end = call, start + duration
            return found
        self._index += 1
        heapq.heappush(pending, (start + duration, self._index, without_bodies(call)))
        if len(pending) > MAX_PENDING:  # times that never move on: learn the earliest-ended
            session.apply(heapq.heappop(pending)[2])
        return found

    def decode(self, exchange: Exchange) -> Call:
        """An exchange of the current file read as A2A, its card read against the session's (``cards``)."""
        return decode(exchange, self._file, self.cards)

    def end_file(self) -> None:
        if self._latest is not None:  # none other waits while it does
            self.session.apply(self._latest)
            self._latest = None
        while self._pending:
            self.session.apply(heapq.heappop(self._pending)[2])

    def finish(self) -> Analysis:
        self.end_file()
        names = {origin: held.card.name for origin, held in self.session.cards.items() if held.card.name}
        _name_agents(self.findings, names)
        return Analysis(findings=self.findings, calls=self.records, summary=self.summary(), exchanges=self.facts,
                        agent_names=names)

    def _plan_for(self, key: tuple[str | None, str, bool, bool]) -> _Plan:
        """The rules for calls of an operation and kind, with an error or not, with notes or not:
        each rule's check looked up once, a rule that needs what such a call lacks left out."""
        operation, kind, error, notes = key
        has = {"error"} if error else set()
        if notes:
            has.add("notes")
        rules = [rule for rule in self._active if rule.applies_to(operation, kind) and rule.needs <= has]
        plan = self._dispatch[key] = _Plan(key, rules, memoizing=not (error or notes))
        self._plans.append(plan)
        return plan

    def _count(self, found: list[Finding], call: Call) -> str | None:
        """One call's findings, counted: by rule and outcome, and the call's place among the wasted
        and the fragile round trips (a finding's place and a wasted one's cost are the call's), in all
        and by rule; what its round trip was (``round_trip``)."""
        if self.keep_findings:
            self.findings += found
        # the rules of its wasted findings and of its fragile ones, each once; its findings by cause
        wasted: list[str] = []
        fragile: list[str] = []
        causes: dict[str, list[Finding]] = {}
        for finding in found:
            rule, outcome = finding.rule, finding.outcome
            by_outcome = self._tally.setdefault(rule, {})
            if outcome not in by_outcome:  # first found: the summary counts in this order
                self._tallied.append((rule, finding.severity, outcome))
            by_outcome[outcome] = by_outcome.get(outcome, 0) + 1
            if outcome == "wasted":
                if rule not in wasted:
                    wasted.append(rule)
            elif outcome == "fragile" and rule not in fragile:
                fragile.append(rule)
            if finding.cause:
                causes.setdefault(finding.cause, []).append(finding)
        webhook, cost = call.label.startswith("webhook"), call.duration
        self._flagged.add(call.file, webhook, call.number)
        if wasted:
            if self._wasted.add(call.file, webhook, call.number) and cost is not None:
                self._wasted_seconds = (self._wasted_seconds or 0.0) + cost
            self._rule_wasted.update(wasted)
            for rule in wasted if cost is not None else ():
                self._rule_seconds[rule] = self._rule_seconds.get(rule, 0.0) + cost
        if fragile and call.ok:  # a call that failed did not work, lenient agent or not
            self._fragile.add(call.file, webhook, call.number)
            self._rule_fragile.update(fragile)
        for said, of_cause in causes.items():
            self._caused(said, of_cause, call)
        return round_trip_of(found, call.ok)

    def _caused(self, said: str, found: list[Finding], call: Call) -> None:
        """A call's findings of one cause, counted with the cause's (their round trip wasted by them only)."""
        cause = self._causes.get(said)
        if cause is None:
            cause = self._causes[said] = Cause(cause=said, rules=[], findings=0, round_trips=0, wasted_round_trips=0,
                                               exchanges=[])
        cause.rules += [f.rule for f in found if f.rule not in cause.rules]
        cause.findings += len(found)
        cause.round_trips += 1
        cause.wasted_round_trips += any(f.outcome == "wasted" for f in found)
        if len(cause.exchanges) < CAUSE_EXCHANGES:
            cause.exchanges.append({"file": call.file, "exchange": call.label})

    def _keep(self, exchange: Exchange, call: Call, round_trip: str | None) -> None:
        """A call's record kept or handed over, its exchange's facts kept, as asked."""
        if self.keep_calls or self.on_call is not None:
            record = _record(call, self.session, round_trip)
            if self.keep_calls:
                self.records.append(record)
            if self.on_call is not None:
                self.on_call(record)
        if self.keep_facts:
            self.facts.append(exchange_facts(exchange, call, round_trip))

    def summary(self) -> Summary:
        operations: Counter[str] = Counter()
        errors = streams = 0
        for plan in self._plans:  # in the order made: the order each operation was first seen
            operation, kind, error, _ = plan.key
            if plan.calls:
                operations[operation or kind] += plan.calls
            errors += plan.calls if error else 0
            streams += plan.calls if operation in spec.STREAMING_OPERATIONS else 0
        by_rule: Counter[str] = Counter()
        by_severity: Counter[str] = Counter()
        by_outcome: Counter[str] = Counter()
        for rule, severity, outcome in self._tallied:  # in the order first found
            count = self._tally[rule][outcome]
            by_rule[rule] += count
            by_severity[severity.value] += count
            by_outcome[outcome] += count
        return Summary(
            files=list(self.files),
            exchanges=sum(operations.values()),
            calls_by_operation=dict(operations),
            errors=errors,
            streams=streams,
            findings_by_rule=dict(by_rule),
            findings_by_severity=dict(by_severity),
            findings_by_outcome=dict(by_outcome),
            wasted_round_trips=self._wasted.count,
            wasted_seconds=round(self._wasted_seconds, 6) if self._wasted_seconds is not None else None,
            fragile_round_trips=self._fragile.count_outside(self._wasted),
            findings=sum(by_rule.values()),
            flagged_round_trips=self._flagged.count,
            wasted_round_trips_by_rule=dict(self._rule_wasted),
            fragile_round_trips_by_rule=dict(self._rule_fragile),
            wasted_seconds_by_rule={rule: round(seconds, 6) for rule, seconds in self._rule_seconds.items()},
            causes=[cause.model_copy(deep=True) for cause in self._causes.values() if cause.round_trips > 1],
        )


class _Plan:
    """The rules a kind of call gets, and, for rules that declare what their findings depend on
    (``Rule.depends``), the keys they found nothing for: rules of one declaration share a key
    (``_Memo``), worked out once a call, and are skipped for a key they were all quiet for."""

    __slots__ = ("_by_skipped", "calls", "key", "memos", "rules")

    def __init__(self, key: tuple[str | None, str, bool, bool], rules: list[Rule], memoizing: bool) -> None:
        self.key, self.rules = key, rules
        self.calls = 0  # calls judged by it: the summary counts them by operation
        #: each declaration of the plan's rules, and the ids of the rules that made it
        groups: dict[tuple[str, ...], set[str]] = {}
        for rule in rules if memoizing and shortcuts.ENABLED else ():
            if rule.depends is not None:
                groups.setdefault(rule.depends, set()).add(rule.id)
        self.memos = [_Memo(Key(depends), frozenset(ids)) for depends, ids in groups.items()]
        #: the plan's rules without those of the memos a call skips, by which it skips (a flag for each memo):
        #: worked out once for each way of skipping
        self._by_skipped: dict[tuple[bool, ...], list[Rule]] = {}

    def forget(self) -> None:
        for memo in self.memos:
            memo.quiet = set()

    def unskipped(self, call: Call, session: Session) -> tuple[list[Rule], list[tuple[_Memo, tuple]]]:
        """The plan's rules but those of a declaration whose key they were quiet for; and the memos whose
        rules run for this call, each with the key to remember if they find nothing (``remember``)."""
        skipped: list[bool] = []
        running: list[tuple[_Memo, tuple]] = []
        for memo in self.memos:
            key = memo.key.of(call, session)
            skip = key is not None and key in memo.quiet
            skipped.append(skip)
            if key is not None and not skip:
                running.append((memo, key))
        flags = tuple(skipped)
        rules = self._by_skipped.get(flags)
        if rules is None:
            left_out = {rule_id for memo, skip in zip(self.memos, flags, strict=True) if skip for rule_id in memo.ids}
            rules = self._by_skipped[flags] = [rule for rule in self.rules if rule.id not in left_out]
        return rules, running


class _Memo:
    """One declaration of a plan's rules: the key it makes of a call, the ids of its rules, and the keys
    they all found nothing for."""

    __slots__ = ("ids", "key", "quiet")

    def __init__(self, key: Key, ids: frozenset[str]) -> None:
        self.key, self.ids = key, ids
        self.quiet: set[tuple] = set()

    def remember(self, key: tuple, found: list[Finding]) -> None:
        """``key`` remembered when none of ``found`` (a call's findings) is its rules'."""
        if all(finding.rule not in self.ids for finding in found):
            if len(self.quiet) >= MAX_QUIET:
                self.quiet.clear()
            self.quiet.add(key)


#: keys a plan remembers the memoized rules were quiet for, at most (a session has a few)
MAX_QUIET = 4096


def _name_agents(findings: list[Finding], names: dict[str, str]) -> None:
    """Name an agent by its card even where the card came later (a call before discovery)."""
    for finding in findings:
        if finding.agent and finding.agent_name in (None, finding.agent) and finding.agent in names:
            finding.agent_name = names[finding.agent]


def round_trip_of(found: list[Finding], worked: bool) -> str | None:
    """What a round trip was, from its findings' outcomes and whether the call worked (``Call.ok``): wasted
    when a finding says so; fragile when one says it worked only by the agent's leniency and it did work (a
    call that failed worked for nothing, lenient or not); else nothing to count. Every count of round trips
    rests on it."""
    outcomes = {finding.outcome for finding in found}
    if "wasted" in outcomes:
        return "wasted"
    return "fragile" if "fragile" in outcomes and worked else None


def _record(call: Call, session: Session, round_trip: str | None = None) -> CallRecord:
    held = session.held_card(call) if call.kind != "card" else None
    version = call.version_header or call.spelled_version
    return CallRecord.model_construct(  # built from decoded facts of the right types: no validation
        file=call.file, exchange=call.label, line=call.line, kind=call.kind, agent=call.agent,
        operation=call.operation, binding=call.binding, version=version, task_id=call.task_id,
        status=call.status, error=call.error.name if call.error else None,
        states=[state for _, state in call.states], card=held.provenance if held else None, round_trip=round_trip,
    )
