"""The shipped example captures: they read, they round-trip, and the analyzer finds what they show."""

from __future__ import annotations

import pytest

from a2a_capture.analyze.engine import analyze
from a2a_capture.capture import capture_bytes, read_capture
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
