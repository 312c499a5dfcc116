"""Independent sessions analyzed in parallel and put back together as one analysis.

Each session is analyzed by ``analyze`` (the one entry point of the analyzer) wherever the
engine runs it, and comes back as plain data; the analyses are joined in the sessions' order,
so every output format renders the same bytes as a serial run. `analyze` writes each session's
findings out as its analysis comes back, and keeps only the summaries to join.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence

from a2a_capture.analyze.config import Config
from a2a_capture.analyze.engine import Analysis, CallRecord, Summary, analyze
from a2a_capture.analyze.findings import Finding
from a2a_capture.batch import engines
from a2a_capture.batch.fetch import local_copies, renamed
from a2a_capture.batch.sessions import Grouping, group, is_url


def analyze_session(files: list[str], config: Config | None, facts: bool = False, calls: bool = True) -> dict:
    """One session's analysis as plain data (what a worker sends back); ``facts`` as ``analyze`` has it;
    without ``calls``, no call records (the larger part of it) cross back to be read."""
    with local_copies(files) as (local, originals):
        analysis = analyze(local, config, facts=facts)
        return renamed(analysis.model_dump(mode="json", exclude=None if calls else {"calls"}), originals)


def analyze_many(paths: Sequence[str], config: Config | None = None, *, grouping: Grouping = "all",
                 jobs: int | None = None, engine: engines.Engine = "local", scheduler: str | None = None,
                 on_finding: Callable[[Finding], None] | None = None,
                 on_call: Callable[[CallRecord], None] | None = None,
                 on_failure: Callable[[str], None] | None = None) -> Analysis:
    """Analyze the sessions the paths form and join them, in order, into one analysis.

    With ``on_finding`` (and ``on_call``), as ``analyze`` has them: findings and calls handed
    over in order as each session's analysis comes back, and only the summary kept. With
    ``on_failure`` too, a session that cannot be read hands over its one-line error there and
    the others are still analyzed (without it, the first such session in order raises).
    """
    sessions = group(paths, grouping)
    if on_finding is None:
        return analyze_sessions(sessions, config, jobs=jobs, engine=engine, scheduler=scheduler)
    if _one_local(sessions, engine):  # its error, if any, is the one error
        return analyze(sessions[0], config, on_finding=on_finding, on_call=on_call)
    total = _SummaryTotal()
    for result in engines.stream(analyze_session, sessions, config, False, on_call is not None, jobs=jobs,
                                 engine=engine, scheduler=scheduler, on_failure=on_failure):
        analysis = Analysis.model_validate(result)
        for finding in analysis.findings:
            on_finding(finding)
        for record in analysis.calls if on_call is not None else ():
            on_call(record)
        total.add(analysis.summary)
    # each session named its agents itself: none is left to name across sessions
    return Analysis(summary=total.summary())


def analyze_sessions(sessions: list[list[str]], config: Config | None = None, *, jobs: int | None = None,
                     engine: engines.Engine = "local", scheduler: str | None = None,
                     facts: bool = False) -> Analysis:
    """Each session (a list of files) analyzed on its own; the analyses joined in order.
    ``facts``: keep each exchange's facts, for a report."""
    if _one_local(sessions, engine):
        return analyze(sessions[0], config, facts=facts)  # one local session: nothing to spread
    results = engines.run(analyze_session, sessions, config, facts, jobs=jobs, engine=engine,
                          scheduler=scheduler)
    return join([Analysis.model_validate(result) for result in results])


def _one_local(sessions: list[list[str]], engine: engines.Engine) -> bool:
    return len(sessions) == 1 and engine == "local" and not any(map(is_url, sessions[0]))


def join(analyses: list[Analysis]) -> Analysis:
    """Sessions side by side: findings, calls and exchange facts in order, summary counts added up."""
    if len(analyses) == 1:
        return analyses[0]
    return Analysis(findings=[f for a in analyses for f in a.findings],
                    calls=[c for a in analyses for c in a.calls],
                    summary=_join_summaries([a.summary for a in analyses]),
                    exchanges=[e for a in analyses for e in a.exchanges],
                    agent_names={k: v for a in reversed(analyses) for k, v in a.agent_names.items()})


def _join_summaries(summaries: list[Summary]) -> Summary:
    total = _SummaryTotal()
    for summary in summaries:
        total.add(summary)
    return total.summary()


class _SummaryTotal:
    """Sessions' summaries added up as they come, field by field, by the kind of value: lists
    concatenate, counts add, seconds add. One session's summary is itself."""

    def __init__(self) -> None:
        self.values: dict = {}
        self.first: Summary | None = None
        self.count = 0

    def add(self, summary: Summary) -> None:
        self.count += 1
        if self.first is None:
            self.first = summary
        for name in Summary.model_fields:
            value, joined = getattr(summary, name), self.values.get(name)
            if value is None:
                continue
            if joined is None:
                joined = self.values[name] = list(value) if isinstance(value, list) else \
                    Counter(value) if isinstance(value, dict) else value
            elif isinstance(joined, list):
                joined += value
            elif isinstance(joined, Counter):
                joined.update(value)
            else:
                self.values[name] = joined + value

    def summary(self) -> Summary:
        if self.count == 0:  # no session could be read: nothing found in nothing
            return Summary(files=[], exchanges=0, calls_by_operation={}, errors=0, streams=0, findings_by_rule={},
                           findings_by_severity={}, wasted_round_trips=0)
        if self.count == 1:
            return self.first
        values = {name: self.values.get(name) for name in Summary.model_fields}
        for name, value in values.items():
            if isinstance(value, Counter):  # seconds by rule added up: rounded as one session's are
                values[name] = {key: round(count, 6) if isinstance(count, float) else count
                                for key, count in value.items()}
            elif isinstance(value, float):
                values[name] = round(value, 6)
        return Summary(**values)
