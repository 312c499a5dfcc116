"""Machine-readable outputs of an analysis: text lines, JSON, SARIF 2.1.0 and JUnit XML.

Each format is a writer that takes findings (and calls) one at a time as the analysis finds
them, then the finished analysis: a long session's findings are never all in memory. Text
and SARIF write each finding out at once; what JSON puts after its summary, and JUnit groups
by rule, waits in a temporary file until the end. The same writers make the whole document
of a finished analysis, so a streamed output is byte for byte the one-shot one.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import tempfile
from collections import Counter
from collections.abc import Iterator
from typing import TextIO

from a2a_capture import __version__
from a2a_capture.analyze.engine import Analysis, CallRecord
from a2a_capture.analyze.findings import RULES, Finding, Severity
from a2a_capture.errors import valid_utf8
from a2a_capture.terminal import json_shown, shown

_SARIF_LEVEL = {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.INFO: "note"}


def at_or_above(finding: Finding, threshold: str) -> bool:
    """True when a finding is as severe as ``threshold`` (error, warning, info; never: nothing)."""
    return at_or_above_severity(finding.severity, threshold)


def at_or_above_severity(severity: Severity, threshold: str) -> bool:
    """True when a severity is at least ``threshold`` (error, warning, info; never: nothing)."""
    if threshold == "never":
        return False
    return severity.rank >= (_LEAST_RANK.get(threshold) or Severity(threshold).rank)  # else ValueError


_LEAST_RANK = {severity.value: severity.rank for severity in Severity}


class Writer:
    """One format's document, written as the findings come: ``finding`` and ``call`` for each,
    in the order found, then ``end`` with the finished analysis (its summary)."""

    def __init__(self, out: TextIO) -> None:
        self.out = out

    def finding(self, finding: Finding) -> None:
        """A finding as it is found."""

    def flush(self) -> None:
        """Write out what waits to be written (the findings so far), where the format writes as it goes."""

    def call(self, record: CallRecord) -> None:
        """An exchange's call as it is read (only JSON lists them)."""

    def end(self, analysis: Analysis) -> None:
        """The rest of the document, once the analysis is finished."""


def writer_for(output_format: str, out: TextIO, fail_on: str = "warning", rules: list[str] | None = None,
           streamed: bool = False) -> Writer:
    """The writer of text, json, sarif or junit. ``streamed``: the findings come straight from the
    engine (JSON names late what only the end knows); JUnit fails rules at ``fail_on`` (never: error)."""
    if output_format == "json":
        return JsonWriter(out, late_names=streamed)
    if output_format == "sarif":
        return SarifWriter(out)
    if output_format == "junit":
        return JunitWriter(out, "error" if fail_on == "never" else fail_on, rules)
    return TextWriter(out)


def write(analysis: Analysis, writer: Writer) -> None:
    """A finished analysis through a writer, as if its findings and calls were coming now."""
    for finding in analysis.findings:
        writer.finding(finding)
    for record in analysis.calls:
        writer.call(record)
    writer.end(analysis)


def _whole(analysis: Analysis, make) -> str:
    out = io.StringIO()
    write(analysis, make(out))
    return out.getvalue()


class _Spool:
    """Lines kept on disk until the document reaches them (each a JSON text: no raw newline)."""

    def __init__(self) -> None:
        # closed once read (lines) or by the writer at its end
        self.file = tempfile.TemporaryFile("w+", encoding="utf-8", errors="surrogatepass", newline="\n")  # noqa: SIM115
        self.count = 0

    def add(self, line: str) -> None:
        self.file.write(line + "\n")
        self.count += 1

    def lines(self) -> Iterator[str]:
        """Each line once, in order; the spool is gone after."""
        self.file.seek(0)
        try:
            for line in self.file:
                yield line[:-1]
        finally:
            self.file.close()


# -- text ---------------------------------------------------------------------------------------


def text(analysis: Analysis) -> str:
    return _whole(analysis, TextWriter)


class TextWriter(Writer):
    """A line per finding as found, written out a few dozen lines at a time (and by ``flush``);
    the summary after a blank line."""

    #: lines that wait at most before they are written together
    LINES = 64

    def __init__(self, out: TextIO) -> None:
        super().__init__(out)
        self.any = False
        self.waiting: list[str] = []
        self._most = self.LINES  # an instance's own attribute: a class attribute is looked up anew at each line

    def finding(self, finding: Finding) -> None:
        waiting = self.waiting
        waiting.append(line(finding))
        if len(waiting) >= self._most:
            self.flush()

    def flush(self) -> None:
        if self.waiting:
            self.waiting.append("")  # the last line's end, without a copy of all of them to add it
            self.out.write("\n".join(self.waiting))
            self.waiting.clear()
            self.any = True

    def end(self, analysis: Analysis) -> None:
        self.flush()
        self.out.write(("\n" if self.any else "") + "\n".join(summary_lines(analysis)))


_WORD = {severity: severity.value for severity in Severity}  # without the enum's property, once a finding
#: what a line says after the rule id for each outcome (advice: nothing), made once rather than once a line
_TAGS = {"wasted": " [wasted]", "fragile": " [fragile]", "advice": ""}


def line(finding: Finding, judged: bool = True) -> str:
    """One finding as a text line, `file:LINE: severity rule …` with the line its exchange starts on,
    so editors and CI annotations jump there; a wasted or fragile round trip says so after the rule id."""
    values = finding.__dict__  # where pydantic keeps the fields: its ``__getattr__`` makes each attribute slow
    tag = _TAGS[values["outcome"]] if judged else ""
    message = shown(values["message"])  # it quotes the capture: a terminal shows its controls, never runs them
    if values["line"] is not None:  # where(finding), as one f-string makes it: the common case
        return (f"{values['file']}:{values['line']}: {_WORD[values['severity']]} {values['rule']}{tag} "
                f"{message} (exchange {values['exchange']})")
    return f"{where(finding)} {_WORD[values['severity']]} {values['rule']}{tag} {message} " \
           f"(exchange {values['exchange']})"


def where(finding: Finding) -> str:
    """`file:LINE:` where the exchange's line is known; in a flow file (no lines) `file: flow N:`,
    its place as mitmproxy lists the flows; else `file: exchange N:`."""
    if finding.line is not None:
        return f"{finding.file}:{finding.line}:"
    if finding.flow is not None:
        return f"{finding.file}: flow {finding.flow}:"
    return f"{finding.file}: exchange {finding.exchange}:"


def summary_lines(analysis: Analysis) -> list[str]:
    s = analysis.summary
    operations = ", ".join(f"{name} {count}" for name, count in sorted(s.calls_by_operation.items(),
                                                                      key=lambda item: (-item[1], item[0])))
    lines = [f"{len(s.files)} file{'s' if len(s.files) != 1 else ''}, {s.exchanges} exchanges"
             + (f": {operations}" if operations else ""),
             f"agent errors: {s.errors}; streams: {s.streams}"]
    total = s.findings  # from the summary: a streamed analysis keeps no findings
    if total:
        by_severity = ", ".join(f"{s.findings_by_severity[level]} {level}" for level in ("error", "warning", "info")
                                if level in s.findings_by_severity)
        by_rule = ", ".join(f"{rule} {count}" for rule, count in sorted(s.findings_by_rule.items()))
        lines.append(f"findings: {total} ({by_severity}): {by_rule}")
    else:
        lines.append("findings: none")
    lines += [cause_line(cause, len(s.files) > 1) for cause in s.causes]
    cost = f", costing {s.wasted_seconds:.3f} s" if s.wasted_seconds is not None else ""
    fragile = (f"; fragile (worked only because the agent was lenient): {s.fragile_round_trips}"
               if s.fragile_round_trips else "")
    advice = s.findings_by_outcome.get("advice", 0)
    lines.append(f"wasted round trips: {s.wasted_round_trips}{cost}{fragile}"
                 + (f"; advice: {advice}" if advice else ""))
    return lines


def cause_line(cause, files: bool) -> str:
    """One cause as a line: both halves once, then the findings and exchanges it covers."""
    named = [f"{os.path.basename(e['file'])}:{e['exchange']}" if files else e["exchange"] for e in cause.exchanges]
    more = f" and {cause.round_trips - len(named)} more" if cause.round_trips > len(named) else ""
    return (f"cause: {cause.cause}: {cause.findings} findings ({', '.join(cause.rules)}) on exchanges "
            f"{', '.join(named)}{more}")


# -- JSON --------------------------------------------------------------------------------------------


#: a summary's causes are stated where there are some: other documents stay as they were
_NO_CAUSES = {"causes"}


def to_json(analysis: Analysis) -> str:
    return _whole(analysis, JsonWriter)


class JsonWriter(Writer):
    """The tool, its version and the summary, then every finding and every call.

    The summary comes first and is known last: findings and calls wait in temporary files.
    ``late_names``: the findings came straight from the engine, before it knew every card,
    so an agent whose card came later is named at the end (a finished analysis names them).
    """

    def __init__(self, out: TextIO, late_names: bool = False) -> None:
        super().__init__(out)
        self.late_names = late_names
        self.findings, self.calls = _Spool(), _Spool()

    def finding(self, finding: Finding) -> None:
        self.findings.add(json.dumps(_finding_json(finding), ensure_ascii=False))

    def call(self, record: CallRecord) -> None:
        self.calls.add(json.dumps(record.model_dump(), ensure_ascii=False))

    def end(self, analysis: Analysis) -> None:
        names = analysis.agent_names if self.late_names else {}
        out = self.out
        out.write('{\n  "tool": "a2a-capture",\n  "version": ' + json.dumps(__version__)
                  + ',\n  "summary": ' + _nested(_summary_json(analysis.summary), 1) + ',\n  "findings": ')
        self._items((_named(json.loads(item), names) for item in self.findings.lines()), self.findings.count)
        out.write(',\n  "calls": ')
        self._items(map(json.loads, self.calls.lines()), self.calls.count)
        out.write("\n}")

    def _items(self, items, count: int) -> None:
        """A list member's value as ``json.dumps(..., indent=2)`` lays it out two levels in."""
        if not count:
            self.out.write("[]")
            return
        self.out.write("[\n")
        for number, item in enumerate(items, start=1):
            self.out.write("    " + _nested(item, 2) + (",\n" if number < count else "\n"))
        self.out.write("  ]")


def _summary_json(summary) -> dict:
    return summary.model_dump(exclude=_NO_CAUSES if not summary.causes else None)


def _nested(value, level: int) -> str:
    """``value`` as ``json.dumps(indent=2)`` lays it out ``level`` levels in (strings hold no raw newline,
    nor a raw control JSON's escaping leaves: terminal.json_shown)."""
    text = json_shown(valid_utf8(json.dumps(value, indent=2, ensure_ascii=False)))
    return text.replace("\n", "\n" + "  " * level)


def _named(data: dict, names: dict[str, str]) -> dict:
    agent = data.get("agent")
    if agent and data.get("agent_name") in (None, agent) and agent in names:
        data["agent_name"] = names[agent]
    return data


def _finding_json(finding: Finding) -> dict:
    # `flow` only where there is one (a flow file's findings): other documents stay as they were
    left_out = {"related_locations"} if finding.flow is not None else {"related_locations", "flow"}
    if finding.cause is None:  # `cause` only where a rule named one
        left_out.add("cause")
    data = finding.model_dump(mode="json", exclude=left_out)
    data["related_locations"] = [{"file": file, "exchange": label, "line": line}
                                 for file, label, line in finding.related_locations]
    return data


def counts(analysis: Analysis) -> dict:
    """The session's counts as every machine format states them beside its findings: the summary's own
    (a round trip is an exchange, counted once whatever its findings; a finding is a claim about one)."""
    s = analysis.summary
    return {"exchanges": s.exchanges, "findings": s.findings, "wasted_round_trips": s.wasted_round_trips,
            "wasted_seconds": s.wasted_seconds, "fragile_round_trips": s.fragile_round_trips,
            "advice": s.findings_by_outcome.get("advice", 0), "agent_errors": s.errors}


# -- SARIF 2.1.0 -----------------------------------------------------------------------------------


def sarif(analysis: Analysis, base: str | None = None) -> str:
    """A SARIF log whose locations point at the capture file and the line of each exchange."""
    return _whole(analysis, lambda out: SarifWriter(out, base))


class SarifWriter(Writer):
    """The run's tool and rules, then each result as it is found; the log's head waits for the
    first result, so a session that fails before any writes nothing."""

    def __init__(self, out: TextIO, base: str | None = None) -> None:
        super().__init__(out)
        self.base = base
        self.rules = sorted(RULES)  # every rule: a result's ruleIndex is known before the end
        self.index = {rule_id: position for position, rule_id in enumerate(self.rules)}
        self.results = 0

    def _head(self) -> str:
        driver = {"name": "a2a-capture", "version": __version__, "semanticVersion": __version__,
                  "rules": [_sarif_rule(RULES[rule_id]) for rule_id in self.rules]}
        head = {"$schema": "https://json.schemastore.org/sarif-2.1.0.json", "version": "2.1.0"}
        text = _nested(head, 0)[:-2]  # without its closing brace
        return (text + ',\n  "runs": [\n    {\n      "tool": {\n        "driver": '
                + _nested(driver, 4) + '\n      },\n      "results": ')

    def finding(self, finding: Finding) -> None:
        self.out.write((self._head() + "[\n" if not self.results else ",\n")
                       + "        " + _nested(self._result(finding), 4))
        self.results += 1

    def end(self, analysis: Analysis) -> None:
        self.out.write(self._head() + "[]" if not self.results else "\n      ]")
        self.out.write(',\n      "columnKind": "unicodeCodePoints",\n      "properties": '
                       + _nested(counts(analysis), 3) + '\n    }\n  ]\n}')

    def _result(self, finding: Finding) -> dict:
        result = {
            "ruleId": finding.rule,
            "ruleIndex": self.index[finding.rule],
            "level": _SARIF_LEVEL[finding.severity],
            "message": {"text": f"Exchange {finding.exchange}: {finding.message}"},
            "locations": [_location(finding.file, finding.line, self.base)],
            "partialFingerprints": {"a2aCaptureFinding/v1": _fingerprint(finding)},
            "properties": {"wasted": finding.wasted, "outcome": finding.outcome,
                           **({"cost": finding.cost} if finding.cost is not None else {}),
                           **({"flow": finding.flow} if finding.flow is not None else {}),
                           **({"cause": finding.cause} if finding.cause is not None else {})},
        }
        related = [
            {"id": number, "message": {"text": f"exchange {label}"}, **_location(file, line, self.base)}
            for number, (file, label, line) in enumerate(finding.related_locations, start=1)
        ]
        if related:
            result["relatedLocations"] = related
        return result


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
    return _whole(analysis, lambda out: JunitWriter(out, fail_on, rules))


class JunitWriter(Writer):
    """One test case per rule, failing when the rule found something at or above ``fail_on``.

    The suite's head counts the failing rules and each case lists its rule's findings, so the
    lines wait, by rule, in temporary files until the end. Laid out as ElementTree.indent does.
    """

    def __init__(self, out: TextIO, fail_on: str = "warning", rules: list[str] | None = None) -> None:
        super().__init__(out)
        self.fail_on = fail_on
        self.rules = rules if rules is not None else sorted(RULES)
        self.spools: dict[str, _Spool] = {}
        self.failing: Counter[str] = Counter()

    def finding(self, finding: Finding) -> None:
        spool = self.spools.get(finding.rule)
        if spool is None:
            spool = self.spools[finding.rule] = _Spool()
        failing = at_or_above(finding, self.fail_on)
        self.failing[finding.rule] += failing
        spool.add(json.dumps([failing, line(finding)], ensure_ascii=False))

    def end(self, analysis: Analysis) -> None:
        out, cases = self.out, len(self.rules)
        failures = sum(1 for rule_id in self.rules if self.failing[rule_id])
        out.write('<?xml version="1.0" encoding="UTF-8"?>\n'
                  f'<testsuites name="a2a-capture" tests="{cases}" failures="{failures}">\n'
                  f'  <testsuite name="a2a-capture" tests="{cases}" failures="{failures}" errors="0" skipped="0">\n'
                  '    <properties>\n')
        for name, value in counts(analysis).items():  # the session's counts, as every other format states them
            shown = "" if value is None else str(value)
            out.write(f"      <property name={_attribute(name)} value={_attribute(shown)} />\n")
        out.write("    </properties>\n")
        for rule_id in self.rules:
            self._case(rule_id)
        for spool in self.spools.values():  # rules found but not asked for
            spool.file.close()
        out.write("  </testsuite>\n</testsuites>\n")

    def _case(self, rule_id: str) -> None:
        out, spool = self.out, self.spools.pop(rule_id, None)
        out.write(f'    <testcase classname="a2a-capture.rules" name={_attribute(rule_id)}')
        if spool is None:
            out.write(" />\n")
            return
        failing = self.failing[rule_id]
        if failing:
            message = f"{failing} finding(s): {RULES[rule_id].title}"
            out.write(f">\n      <failure type={_attribute(RULES[rule_id].severity.value)} "
                      f"message={_attribute(message)}>")
            tag = "failure"
        else:
            out.write(">\n      <system-out>")
            tag = "system-out"
        first = True
        for kept in map(json.loads, spool.lines()):
            if failing and not kept[0]:
                continue
            out.write(("" if first else "\n") + escape(kept[1]))
            first = False
        out.write(f"</{tag}>\n    </testcase>\n")


def escape(text: str, entities: dict[str, str] | None = None) -> str:
    """``xml.sax.saxutils.escape``, without what importing it costs a command at start (urllib.request,
    http.client, ssl): &, < and > escaped, then each of ``entities``."""
    text = text.replace("&", "&amp;").replace(">", "&gt;").replace("<", "&lt;")
    for key, value in (entities or {}).items():
        text = text.replace(key, value)
    return text


def _attribute(value: str) -> str:
    """A quoted XML attribute, escaped as ElementTree escapes it."""
    return '"' + escape(value, {'"': "&quot;", "\r": "&#13;", "\n": "&#10;", "\t": "&#09;"}) + '"'
