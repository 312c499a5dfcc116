"""The regression verdicts behind `diff` and `check`, as lines to print and a pass/fail."""

from __future__ import annotations

import os
from collections import Counter
from dataclasses import dataclass, field

from a2a_capture import sources
from a2a_capture.analyze.config import Config
from a2a_capture.analyze.engine import analyze
from a2a_capture.analyze.findings import Severity
from a2a_capture.errors import no_exchange
from a2a_capture.replay import baseline, diff
from a2a_capture.replay.masking import VOLATILE_KEYS
from a2a_capture.report import machine
from a2a_capture.report.machine import at_or_above


@dataclass
class Verdict:
    lines: list[str] = field(default_factory=list)
    ok: bool = True
    #: said on stderr whatever the verdict: what it rests on held no exchange (errors.no_exchange)
    warnings: list[str] = field(default_factory=list)


def compare_sessions(old: str, new: str, extra_keys=(), *, redact: bool = True) -> Verdict:
    """Exchanges and findings of two sessions, after masking what changes from run to run; with
    ``redact``, both sides' secrets masked first (a marker and a marker in the same place are equal,
    whatever their hashes, and a secret in clear on one side meets a marker)."""
    verdict = Verdict()
    sides = [sources.capture(old), sources.capture(new)]
    mask = str
    if redact:
        from a2a_capture.redact.mask import Masker

        maskers = [Masker.for_files([old]), Masker.for_files([new])]
        sides = [side.model_copy(update={"exchanges": [masker.exchange(e) for e in side.exchanges]})
                 for side, masker in zip(sides, maskers, strict=True)]
        mask = maskers[1].text
    empty = list(dict.fromkeys(path for path, side in zip((old, new), sides, strict=True) if not side.exchanges))
    if empty:
        verdict.warnings.append(no_exchange(empty, "nothing to compare"))
    changes = diff.compare(*sides, VOLATILE_KEYS | set(extra_keys))
    verdict.lines += [change.line() for change in changes]
    accepted = Counter(baseline.key(f, with_file=False) for f in analyze([old]).findings)
    findings = baseline.judge(analyze([new]).findings, accepted, with_file=False)
    verdict.lines += [f"+ finding {f.rule} at exchange {f.exchange}: {mask(f.message)}" for f in findings.new]
    verdict.lines += [f"- finding {rule} ({operation} on {agent}) is gone"
                      for rule, operation, agent, _ in findings.gone]
    verdict.ok = not (changes or findings.new or findings.gone)
    count = len(findings.new) + len(findings.gone)
    verdict.lines.append("no difference after masking" if verdict.ok
                         else f"{len(changes)} exchanges and {count} findings differ")
    return verdict


def check(paths, baseline_path: str, *, update: bool = False, fail_on: str = "warning",
          config: Config | None = None, allow_empty: bool = False, redact: bool = True, **sessions) -> Verdict:
    """Analyze and compare with the accepted findings; with ``update``, accept the current ones.
    A capture with no exchange fails (EmptyCaptureError) unless ``allow_empty``: a gate must
    not pass on nothing.

    ``sessions`` says how the files form sessions and where they run (see batch.analysis)."""
    from a2a_capture.batch.analysis import analyze_many
    from a2a_capture.batch.sessions import group
    from a2a_capture.errors import require_exchanges

    analysis = analyze_many(paths, config, **sessions)
    require_exchanges(analysis, paths, allow_empty)
    warnings = [] if analysis.summary.exchanges else [no_exchange(paths, "nothing was checked")]
    findings = [f for f in analysis.findings if at_or_above(f, fail_on)]
    # a hook checks the changed files only: what the baseline says of the others stands
    checked = {os.path.basename(file) for session in group(paths, sessions.get("grouping", "all"))
               for file in session}
    if update:
        others = Counter({k: n for k, n in baseline.load(baseline_path).items() if k[3] not in checked})
        baseline.dump(findings, baseline_path, keep=others)
        return Verdict([f"accepted {len(findings)} findings into {baseline_path}"], warnings=warnings)
    judged = baseline.judge(findings, baseline.load(baseline_path))
    verdict = Verdict(ok=judged.ok, warnings=warnings)
    new = judged.new
    if redact:  # what a finding quotes comes from the raw capture
        from a2a_capture.redact.mask import Masker

        new = list(map(Masker.for_files(sources.capture_files(paths)).finding, new))
    verdict.lines += [machine.line(f, judged=False) for f in new]
    verdict.lines += [f"fixed: {rule} ({operation} on {agent} in {file}) no longer occurs"
                      for rule, operation, agent, file in judged.gone if file in checked]
    if judged.ok:  # the count as the summary has it, of the severities checked
        counted = sum(count for level, count in analysis.summary.findings_by_severity.items()
                      if machine.at_or_above_severity(Severity(level), fail_on))
        verdict.lines.append(f"check passed: {counted} findings, all in {baseline_path}")
    else:
        verdict.lines.append(f"check failed: {len(judged.new)} new finding(s). Fix them, or accept them with:\n"
                             f"  a2a-capture check {' '.join(paths)} --baseline {baseline_path} --update-baseline")
    return verdict


def check_nearest(paths, name: str = baseline.NAME, **options) -> Verdict:
    """``check`` of each path against the baseline called ``name`` nearest to it (baseline.nearest),
    the paths that share one checked together: a hook's changed files, from any folder."""
    groups: dict[str, list[str]] = {}
    for path in paths:
        inside = os.path.join(path, name) if os.path.isdir(path) else path
        groups.setdefault(baseline.nearest(inside, name), []).append(path)
    verdict = Verdict()
    for baseline_path, group_paths in groups.items():
        part = check(group_paths, baseline_path, **options)
        verdict.lines += part.lines
        verdict.warnings += part.warnings
        verdict.ok = verdict.ok and part.ok
    return verdict
