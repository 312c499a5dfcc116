"""Machine-readable outputs of an analysis: text lines, JSON, SARIF 2.1.0 and JUnit XML."""

from __future__ import annotations

import hashlib
import json
import os
from xml.etree import ElementTree

from a2a_capture import __version__
from a2a_capture.analyze.engine import Analysis
from a2a_capture.analyze.findings import RULES, Finding, Severity
from a2a_capture.errors import valid_utf8

_SARIF_LEVEL = {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.INFO: "note"}


def at_or_above(finding: Finding, threshold: str) -> bool:
    """True when a finding is as severe as ``threshold`` (error, warning, info; never: nothing)."""
    if threshold == "never":
        return False
    return finding.severity.rank >= Severity(threshold).rank


# -- text ---------------------------------------------------------------------------------------


def text(analysis: Analysis) -> str:
    lines = [line(f) for f in analysis.findings]
    if lines:
        lines.append("")
    lines += summary_lines(analysis)
    return "\n".join(lines)


def line(finding: Finding, judged: bool = True) -> str:
    """One finding as a text line, `file:LINE: severity rule …` with the line its exchange starts on,
    so editors and CI annotations jump there; a wasted or fragile round trip says so after the rule id."""
    outcome = f" [{finding.outcome}]" if judged and finding.outcome != "advice" else ""
    return (f"{where(finding)} {finding.severity.value} {finding.rule}{outcome} {finding.message} "
            f"(exchange {finding.exchange})")


def where(finding: Finding) -> str:
    """`file:LINE:` where the exchange's line is known; `file: exchange N:` where it is not (flow files)."""
    if finding.line is not None:
        return f"{finding.file}:{finding.line}:"
    return f"{finding.file}: exchange {finding.exchange}:"


def summary_lines(analysis: Analysis) -> list[str]:
    s = analysis.summary
    operations = ", ".join(f"{name} {count}" for name, count in sorted(s.calls_by_operation.items(),
                                                                      key=lambda item: (-item[1], item[0])))
    lines = [f"{len(s.files)} file{'s' if len(s.files) != 1 else ''}, {s.exchanges} exchanges"
             + (f": {operations}" if operations else ""),
             f"agent errors: {s.errors}; streams: {s.streams}"]
    total = sum(s.findings_by_rule.values())  # from the summary: a streamed analysis keeps no findings
    if total:
        by_severity = ", ".join(f"{s.findings_by_severity[level]} {level}" for level in ("error", "warning", "info")
                                if level in s.findings_by_severity)
        by_rule = ", ".join(f"{rule} {count}" for rule, count in sorted(s.findings_by_rule.items()))
        lines.append(f"findings: {total} ({by_severity}): {by_rule}")
    else:
        lines.append("findings: none")
    cost = f", costing {s.wasted_seconds:.3f} s" if s.wasted_seconds is not None else ""
    fragile = (f"; fragile (worked only because the agent was lenient): {s.fragile_round_trips}"
               if s.fragile_round_trips else "")
    advice = s.findings_by_outcome.get("advice", 0)
    lines.append(f"wasted round trips: {s.wasted_round_trips}{cost}{fragile}"
                 + (f"; advice: {advice}" if advice else ""))
    return lines


# -- JSON --------------------------------------------------------------------------------------------


def to_json(analysis: Analysis) -> str:
    data = {
        "tool": "a2a-capture",
        "version": __version__,
        "summary": analysis.summary.model_dump(),
        "findings": [_finding_json(f) for f in analysis.findings],
        "calls": [call.model_dump() for call in analysis.calls],
    }
    return valid_utf8(json.dumps(data, indent=2, ensure_ascii=False))


def _finding_json(finding: Finding) -> dict:
    data = finding.model_dump(mode="json", exclude={"related_locations"})
    data["related_locations"] = [{"file": file, "exchange": label, "line": line}
                                 for file, label, line in finding.related_locations]
    return data


# -- SARIF 2.1.0 -----------------------------------------------------------------------------------


def sarif(analysis: Analysis, base: str | None = None) -> str:
    """A SARIF log whose locations point at the capture file and the line of each exchange."""
    used = sorted({f.rule for f in analysis.findings} | set(RULES))
    index = {rule_id: position for position, rule_id in enumerate(used)}
    results = []
    for finding in analysis.findings:
        result = {
            "ruleId": finding.rule,
            "ruleIndex": index[finding.rule],
            "level": _SARIF_LEVEL[finding.severity],
            "message": {"text": f"Exchange {finding.exchange}: {finding.message}"},
            "locations": [_location(finding.file, finding.line, base)],
            "partialFingerprints": {"a2aCaptureFinding/v1": _fingerprint(finding)},
            "properties": {"wasted": finding.wasted, "outcome": finding.outcome,
                           **({"cost": finding.cost} if finding.cost is not None else {})},
        }
        related = [
            {"id": number, "message": {"text": f"exchange {label}"}, **_location(file, line, base)}
            for number, (file, label, line) in enumerate(finding.related_locations, start=1)
        ]
        if related:
            result["relatedLocations"] = related
        results.append(result)
    log = {
        "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
        "version": "2.1.0",
        "runs": [{
            "tool": {"driver": {
                "name": "a2a-capture",
                "version": __version__,
                "semanticVersion": __version__,
                "rules": [_sarif_rule(RULES[rule_id]) for rule_id in used],
            }},
            "results": results,
            "columnKind": "unicodeCodePoints",
        }],
    }
    return valid_utf8(json.dumps(log, indent=2, ensure_ascii=False))


def _sarif_rule(rule) -> dict:
    return {
        "id": rule.id,
        "name": "".join(part.capitalize() for part in rule.id.split("-")),
        "shortDescription": {"text": rule.title},
        "fullDescription": {"text": " ".join(rule.why.split())},
        "help": {"text": f"{' '.join(rule.why.split())} Fix: {rule.fix}",
                 "markdown": f"{rule.why}\n\n**Fix:** {rule.fix}\n\nSpec: {rule.spec}"},
        "defaultConfiguration": {"level": _SARIF_LEVEL[rule.severity]},
        "properties": {"tags": ["a2a", "wasted-round-trip" if rule.wasted else "advice"], "spec": rule.spec},
    }


def _location(file: str, line: int | None, base: str | None) -> dict:
    uri = file
    if not os.path.isabs(file) or base:
        uri = os.path.relpath(os.path.abspath(file), base or os.getcwd())
    return {"physicalLocation": {"artifactLocation": {"uri": uri.replace(os.sep, "/")},
                                 "region": {"startLine": max(line or 1, 1)}}}


def _fingerprint(finding: Finding) -> str:
    """Stable across re-recordings: rule, operation and agent, not ids or line numbers."""
    key = f"{finding.rule}|{finding.operation}|{finding.agent}|{os.path.basename(finding.file)}|{finding.exchange}"
    return hashlib.sha256(key.encode("utf-8", "surrogateescape")).hexdigest()[:32]


# -- JUnit XML -----------------------------------------------------------------------------------------


def junit(analysis: Analysis, fail_on: str = "warning", rules: list[str] | None = None) -> str:
    """One test case per rule: it fails when the rule found something at or above ``fail_on``."""
    rule_ids = rules if rules is not None else sorted(RULES)
    cases, failures = [], 0
    for rule_id in rule_ids:
        found = [f for f in analysis.findings if f.rule == rule_id]
        failing = [f for f in found if at_or_above(f, fail_on)]
        case = ElementTree.Element("testcase", classname="a2a-capture.rules", name=rule_id)
        if failing:
            failures += 1
            failure = ElementTree.SubElement(case, "failure", type=RULES[rule_id].severity.value,
                                             message=f"{len(failing)} finding(s): {RULES[rule_id].title}")
            failure.text = "\n".join(line(f) for f in failing)
        elif found:
            out = ElementTree.SubElement(case, "system-out")
            out.text = "\n".join(line(f) for f in found)
        cases.append(case)
    suite = ElementTree.Element("testsuite", name="a2a-capture", tests=str(len(cases)), failures=str(failures),
                                errors="0", skipped="0")
    suite.extend(cases)
    root = ElementTree.Element("testsuites", name="a2a-capture", tests=str(len(cases)), failures=str(failures))
    root.append(suite)
    ElementTree.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ElementTree.tostring(root, encoding="unicode") + "\n"
