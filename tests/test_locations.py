"""Findings print as `path:LINE: …` with the line their exchange starts on in the file, so editors and
CI annotations jump to it; a HAR file's findings point at the line of their entry."""

from __future__ import annotations

import json
import re

import pytest

from a2a_capture.capture import read_capture, write_capture
from a2a_capture.convert import convert
from tests.cli import run
from tests.conftest import DATA

FINDING = re.compile(r"^(?P<file>.+?):(?P<line>\d+): (?:error|warning|info) \S+ .* \(exchange (?P<label>[^)]+)\)$")


def printed_findings(*args: str) -> list[re.Match]:
    result = run(*args)
    assert result.returncode in (0, 1), result.stderr
    lines = [line for line in result.stdout.decode().splitlines() if not line.startswith(("fixed:", "check "))]
    found = [FINDING.match(line) for line in lines if FINDING.match(line)]
    assert found, result.stdout
    return found


def test_a_finding_names_the_line_its_exchange_starts_on():
    path = DATA / "sample-session.http"
    lines = path.read_text().splitlines()
    for match in printed_findings("analyze", str(path)):
        assert match["file"] == str(path)
        assert lines[int(match["line"]) - 1].startswith(f"### {match['label']} ")


def test_the_ci_gate_prints_the_same_lines(tmp_path):
    path = DATA / "sample-session.http"
    lines = path.read_text().splitlines()
    (tmp_path / "baseline.json").write_text(json.dumps({"version": 1, "findings": []}))
    for match in printed_findings("check", str(path), "--baseline", str(tmp_path / "baseline.json")):
        assert lines[int(match["line"]) - 1].startswith(f"### {match['label']} ")



@pytest.mark.parametrize("extra", [None, "entries"])
def test_a_har_finding_names_the_line_of_its_entry(tmp_path, extra):
    har = tmp_path / "session.har"
    convert(str(DATA / "sample-session.http"), str(har))
    if extra:  # a member of the same name elsewhere does not hide where the entries are
        har.write_text(har.read_text().rstrip()[:-1] + f',\n  "{extra}": 5\n}}\n')
    lines = har.read_text().splitlines()
    for match in printed_findings("analyze", str(har)):
        entry = int(match["line"])
        assert lines[entry - 1].strip() == "{"  # an element of log.entries starts there
        number = next(line for line in lines[entry:] if '"_a2aNumber"' in line)
        assert number.strip().rstrip(",") == f'"_a2aNumber": {match["label"]}'


def test_a_one_line_har_puts_every_entry_on_line_1_and_a_flow_file_names_the_exchange(tmp_path):
    har = tmp_path / "one-line.har"
    convert(str(DATA / "sample-session.http"), str(har))
    har.write_text(json.dumps(json.loads(har.read_text())))
    assert {match["line"] for match in printed_findings("analyze", str(har))} == {"1"}
    flows = tmp_path / "session.flow"
    convert(str(DATA / "sample-session.http"), str(flows))
    result = run("analyze", str(flows))
    assert result.stdout.decode().startswith(f"{flows}: flow 3: warning poll-terminal ")


def test_a_flow_file_finding_names_the_flow_as_mitmproxy_lists_them(tmp_path):
    """Flow files have no lines: a finding names its flow's place in the file (what mitmproxy
    shows), which need not be the exchange's number; JSON and SARIF add it as `flow`."""
    capture = read_capture(DATA / "sample-session.http")
    for exchange in capture.exchanges:  # a recording that went on from exchange 40
        exchange.number += 40
    renumbered, flows = tmp_path / "later.http", tmp_path / "later.flow"
    write_capture(capture, renumbered)
    convert(str(renumbered), str(flows))
    [text] = [line for line in run("analyze", str(flows)).stdout.decode().splitlines() if line.startswith(str(flows))]
    assert text.startswith(f"{flows}: flow 3: warning poll-terminal ") and text.endswith("(exchange 43)")
    [finding] = json.loads(run("analyze", "--format", "json", str(flows)).stdout)["findings"]
    assert (finding["exchange"], finding["line"], finding["flow"]) == ("43", None, 3)
    [result] = json.loads(run("analyze", "--format", "sarif", str(flows)).stdout)["runs"][0]["results"]
    assert result["properties"]["flow"] == 3
    [finding] = json.loads(run("analyze", "--format", "json", str(renumbered)).stdout)["findings"]
    assert "flow" not in finding and finding["line"] is not None  # a capture's documents stay as they were
