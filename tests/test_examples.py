"""The shipped example captures: they read, they round-trip, and the analyzer finds what they show."""

from __future__ import annotations

import json
import re
import shlex

import pytest

from a2a_capture.analyze.engine import analyze
from a2a_capture.capture import capture_bytes, read_capture
from tests.cli import run
from tests.conftest import ROOT

CAPTURES = sorted((ROOT / "captures").glob("*.http"))


def test_the_examples_are_there():
    assert [path.name for path in CAPTURES][:1] == ["01-discovery.http"] and len(CAPTURES) == 9


@pytest.mark.parametrize("path", CAPTURES, ids=lambda p: p.name)
def test_example_reads_and_round_trips(path):
    capture = read_capture(path)
    assert capture.exchanges and all(e.meta.start and e.meta.client for e in capture.exchanges)
    assert capture_bytes(capture) == path.read_bytes()


def test_the_mistakes_capture_shows_each_mistake():
    analysis = analyze([ROOT / "captures" / "01-discovery.http", ROOT / "captures" / "09-mistakes.http"])
    found = {(f.rule, f.exchange) for f in analysis.findings if f.file.endswith("09-mistakes.http")
             and f.severity.value != "info"}
    assert {rule for rule, _ in found} == {"card-path", "card-refetch", "version-header-missing",
                                           "method-version-mismatch", "poll-terminal", "capability-push",
                                           "auth-missing"}


@pytest.mark.parametrize("name", ["02-blocking-send", "03-streaming", "05-input-required", "06-cancel",
                                  "07-push-webhook"])
def test_clean_flows_have_no_finding_but_the_sdk_refetch(name):
    analysis = analyze([ROOT / "captures" / "01-discovery.http", ROOT / "captures" / f"{name}.http"])
    assert {f.rule for f in analysis.findings} <= {"card-refetch"}, [f.message for f in analysis.findings]


def test_no_secret_reached_the_examples():
    text = "".join(path.read_text() for path in CAPTURES)
    assert "hook-secret" not in text and "run-0001" not in text
    assert "[redacted: bearer credentials, sha256:" in text


def readme_command(name: str) -> list[str]:
    """The arguments README.md's first command gives `a2a-capture NAME`, its glob expanded."""
    first = (ROOT / "README.md").read_text().split("```sh\n", 1)[1].splitlines()[0]
    command = re.search(rf"a2a-capture {name} ([^&]*)", first).group(1)
    return [arg for word in shlex.split(command)
            for arg in (sorted(str(p) for p in ROOT.glob(word)) if "*" in word else [word])]


def test_the_readme_first_command_counts_what_a_reader_sees_as_waste():
    args = readme_command("analyze")
    assert "--each-file" in args  # the nine captures are nine client runs, not one session
    result = run("analyze", *args, "--format", "json")
    assert result.returncode == 0, result.stderr
    document = json.loads(result.stdout)
    outcomes = {(f["file"].rsplit("/", 1)[-1], f["exchange"], f["rule"]): f["outcome"] for f in document["findings"]}
    polls = {key: outcome for key, outcome in outcomes.items() if key[2] == "return-immediately-poll"}
    assert polls == {("04-polling.http", "12", "return-immediately-poll"): "advice"}  # the polls brought news
    assert outcomes[("09-mistakes.http", "10", "auth-missing")] == "fragile"  # the completed SendMessage does not
    assert not any(rule == "card-refetch" for _, _, rule in outcomes)  # each run fetches its card once
    assert document["summary"]["wasted_round_trips"] == 6
    assert document["summary"]["findings_by_outcome"] == {"wasted": 6, "fragile": 1, "advice": 2}


def test_the_readme_report_says_it_holds_one_session_per_file(tmp_path):
    args = readme_command("report")
    output = tmp_path / "report.md"
    result = run("report", *[arg for arg in args if arg not in ("-o", "report.html")], "-o", str(output))
    assert result.returncode == 0, result.stderr
    heading, _, files = output.read_text().splitlines()[:3]
    assert heading.startswith("# A2A sessions: ") and "each a session of its own" in files
