"""Every output's counts of one session, read back from what each output says.

A round trip is an exchange, counted once whatever its findings; a finding is a claim about one.
The analysis's summary is the one place the counts come from: ``every_output`` reads them back from
the text summary, JSON, SARIF's run properties, JUnit's properties, the HTML and Markdown reports'
verdicts, ``--summary``, the Parquet tables' rows and ``check``, so a test can hold them equal.
"""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET

from a2a_capture.analyze.engine import analyze
from a2a_capture.batch.tables import session_rows
from a2a_capture.replay import gate
from a2a_capture.report import machine, walkthrough
from a2a_capture.report.render import render

#: the counts every output states, by the summary's names
NAMES = ("exchanges", "findings", "wasted_round_trips", "fragile_round_trips", "advice")


def expected(paths) -> dict[str, int]:
    """The counts as the JSON output's summary states them: what every other output must say."""
    summary = json.loads(machine.to_json(analyze(paths)))["summary"]
    return {"exchanges": summary["exchanges"], "findings": summary["findings"],
            "wasted_round_trips": summary["wasted_round_trips"],
            "fragile_round_trips": summary["fragile_round_trips"],
            "advice": summary["findings_by_outcome"].get("advice", 0)}


def every_output(paths, tmp_path) -> dict[str, dict[str, int]]:
    """Each output's counts, by the output's name (only those it states)."""
    paths = [str(path) for path in paths]
    analysis = analyze(paths, facts=True)
    said = {"text": _text(machine.text(analysis)),
            "sarif": _pick(json.loads(machine.sarif(analysis))["runs"][0]["properties"]),
            "junit": {name: int(value) for name, value in _pick({p.get("name"): p.get("value") for p in ET.fromstring(
                machine.junit(analysis, "info")).iter("property")}).items()}}
    model = walkthrough.build(paths)  # reads and analyzes the captures itself
    said["html"] = _html(render(model, "html"))
    said["markdown"] = _markdown(render(model, "md"))
    said["summary"] = _markdown(render(model, "summary"))
    rows = session_rows(("s", paths), None)
    session = rows["sessions"][0]
    said["parquet sessions"] = _pick(session)
    calls = rows["calls"]
    said["parquet calls"] = {"exchanges": len(calls),
                             "wasted_round_trips": sum(row["outcome"] == "wasted" for row in calls),
                             "fragile_round_trips": sum(row["outcome"] == "fragile" for row in calls)}
    said["parquet findings"] = {"findings": len(rows["findings"]),
                                "advice": sum(row["outcome"] == "advice" for row in rows["findings"])}
    baseline = tmp_path / "counts-baseline.json"
    gate.check(paths, str(baseline), update=True, fail_on="info")
    passed = gate.check(paths, str(baseline), fail_on="info").lines[-1]
    said["check"] = {"findings": int(re.fullmatch(r"check passed: (\d+) findings, all in .*", passed).group(1))}
    return said


def assert_counts_agree(paths, tmp_path) -> None:
    """Every output says what the JSON summary says."""
    want = expected(paths)
    for output, counts in every_output(paths, tmp_path).items():
        assert counts == {name: want[name] for name in counts}, f"{output}: {counts}, the summary: {want}"


def _pick(values: dict) -> dict[str, int]:
    return {name: values[name] for name in NAMES if name in values}


def _text(text: str) -> dict[str, int]:
    lines = text.splitlines()
    head = next(line for line in lines if re.match(r"\d+ files?, \d+ exchanges", line))
    counts = {"exchanges": int(re.match(r"\d+ files?, (\d+) exchanges", head).group(1))}
    found = next(line for line in lines if line.startswith("findings: "))
    counts["findings"] = 0 if found == "findings: none" else int(found.split()[1])
    wasted = next(line for line in reversed(lines) if line.startswith("wasted round trips: "))
    counts["wasted_round_trips"] = int(re.match(r"wasted round trips: (\d+)", wasted).group(1))
    fragile = re.search(r"fragile \(worked only because the agent was lenient\): (\d+)", wasted)
    counts["fragile_round_trips"] = int(fragile.group(1)) if fragile else 0
    advice = re.search(r"; advice: (\d+)", wasted)
    counts["advice"] = int(advice.group(1)) if advice else 0
    return counts


def _headline(headline: str) -> dict[str, int]:
    if headline.startswith("No findings"):
        return {"findings": 0, "wasted_round_trips": 0, "fragile_round_trips": 0, "advice": 0}
    match = re.match(r"(\d+) findings? on \d+ exchanges?: (\d+) wasted round trips?"
                     r"(?:, (\d+) that worked only because the agent was lenient)?"
                     r"(?:, (\d+) pieces? of advice)?\.", headline)
    assert match, headline
    findings, wasted, fragile, advice = (int(group or 0) for group in match.groups())
    return {"findings": findings, "wasted_round_trips": wasted, "fragile_round_trips": fragile, "advice": advice}


def _html(page: str) -> dict[str, int]:
    counts = _headline(re.search(r'<p class="headline">([^<]*)</p>', page).group(1))
    numbers = dict(re.findall(r"<dt>([^<]+)</dt><dd>(\d+)", page))
    shown = {"exchanges": int(numbers["Exchanges"]), "wasted_round_trips": int(numbers["Wasted round trips"]),
             "fragile_round_trips": int(numbers["Fragile"])}
    assert all(counts.get(name, value) == value for name, value in shown.items()), (counts, shown)
    return counts | shown


def _markdown(text: str) -> dict[str, int]:
    counts = _headline(re.search(r"^\*\*(.*)\*\*$", text, re.MULTILINE).group(1).replace("\\", ""))
    head = re.search(r"^\| Errors \|.*\|$", text, re.MULTILINE).group(0)
    row = text[text.index(head):].splitlines()[2]
    cells = dict(zip([c.strip() for c in head.strip("|").split("|")], [c.strip() for c in row.strip("|").split("|")],
                     strict=True))
    shown = {"exchanges": int(cells["Exchanges"]), "wasted_round_trips": int(cells["Wasted round trips"].split()[0]),
             "fragile_round_trips": int(cells["Fragile"])}
    assert all(counts.get(name, value) == value for name, value in shown.items()), (counts, shown)
    return counts | shown
