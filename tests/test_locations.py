"""Findings print as `path:LINE: …` with the line their exchange starts on in the file, so editors and
CI annotations jump to it."""

from __future__ import annotations

import json
import re

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

