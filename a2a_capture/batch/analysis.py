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


def analyze_session(files: list[str], config: Config | None, facts: bool = False) -> dict:
    """One session's analysis as plain data (what a worker sends back); ``facts`` as ``analyze`` has it."""
    with local_copies(files) as (local, originals):
        return renamed(analyze(local, config, facts=facts).model_dump(mode="json"), originals)


def analyze_many(paths: Sequence[str], config: Config | None = None, *, grouping: Grouping = "all",
                 jobs: int | None = None, engine: engines.Engine = "local", scheduler: str | None = None,
                 on_finding: Callable[[Finding], None] | None = None,
                 on_call: Callable[[CallRecord], None] | None = None) -> Analysis:
    """Analyze the sessions the paths form and join them, in order, into one analysis.

    With ``on_finding`` (and ``on_call``), as ``analyze`` has them: findings and calls handed
    over in order as each session's analysis comes back, and only the summary kept.
    """
    sessions = group(paths, grouping)
    if on_finding is None:
        return analyze_sessions(sessions, config, jobs=jobs, engine=engine, scheduler=scheduler)
    if _one_local(sessions, engine):
        return analyze(sessions[0], config, on_finding=on_finding, on_call=on_call)
    summaries = []
    for result in engines.stream(analyze_session, sessions, config, jobs=jobs, engine=engine, scheduler=scheduler):
        analysis = Analysis.model_validate(result)
        for finding in analysis.findings:
            on_finding(finding)
        for record in analysis.calls if on_call is not None else ():
            on_call(record)
        summaries.append(analysis.summary)
    # each session named its agents itself: none is left to name across sessions
    return Analysis(summary=summaries[0] if len(summaries) == 1 else _join_summaries(summaries))


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
    """Field by field, by the kind of value: lists concatenate, counts add, seconds add."""
    joined = {}
    for name in Summary.model_fields:
        values = [getattr(summary, name) for summary in summaries]
        present = [value for value in values if value is not None]
        if not present:
            joined[name] = None
        elif isinstance(present[0], list):
            joined[name] = [item for value in present for item in value]
        elif isinstance(present[0], dict):
            total: Counter = Counter()
            for value in present:
                total.update(value)
            joined[name] = dict(total)
        elif isinstance(present[0], float):
            joined[name] = round(sum(present), 6)
        else:
            joined[name] = sum(present)
    return Summary(**joined)
