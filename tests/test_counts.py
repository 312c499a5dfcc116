"""One count, everywhere: every output states the round trips and findings the analysis's summary
counts (a round trip is an exchange, a finding is a claim about one), on every capture of the tests."""

from __future__ import annotations

import sys

import pytest

from a2a_capture.analyze.engine import analyze
from tests.builders import card, error, fetch_card, message, rpc, task, write
from tests.conftest import DATA, ROOT
from tests.counts import assert_counts_agree, every_output, expected
from tests.test_rules import CASES

sys.path.insert(0, str(ROOT / "bench"))
CAPTURES = sorted((ROOT / "captures").glob("*.http"))
V03 = [{"url": "http://localhost:9001/rpc", "protocolBinding": "JSONRPC", "protocolVersion": "0.3"}]


def several_findings_an_exchange(tmp_path):
    """Exchanges with two and three findings each: wasted ones, ones that worked only because the agent
    was lenient, one that failed for another reason (ContentTypeNotSupported: it did not work, lenient or not)."""
    done = task("t-1", "TASK_STATE_COMPLETED")
    unversioned = ["Content-Type: application/json"]
    return write(
        tmp_path,
        fetch_card(1, card(supportedInterfaces=V03)),
        rpc(2, "SendMessage", {"message": message()}, headers=unversioned, result={"task": done}),  # 1.0 name, 0.3 card
        rpc(3, "GetTask", {"id": "t-1"}, headers=unversioned, path="/other", result=done),  # 3 findings, worked
        rpc(4, "SendMessage", {"message": message(message_id="m-2")}, headers=unversioned, path="/other",
            error=error(-32005, "CONTENT_TYPE_NOT_SUPPORTED")),  # taken at the address, failed for another reason
        rpc(5, "CreateTaskPushNotificationConfig", {"taskId": "t-1", "url": "http://h/x"}, headers=unversioned,
            error=error(-32003, "PUSH_NOTIFICATION_NOT_SUPPORTED")),
        fetch_card(6, card(supportedInterfaces=V03)),
        name="several.http")


def test_an_exchange_with_several_findings_is_one_round_trip(tmp_path):
    path = several_findings_an_exchange(tmp_path)
    analysis = analyze([path])
    by_exchange: dict[str, list] = {}
    for finding in analysis.findings:
        by_exchange.setdefault(finding.exchange, []).append(finding)
    assert max(map(len, by_exchange.values())) >= 2, by_exchange  # the session holds what it is for
    summary = analysis.summary
    assert summary.findings == len(analysis.findings) > summary.flagged_round_trips == len(by_exchange)
    worked = {call.exchange for call in analysis.calls if call.error is None}
    fragile = {label for label, found in by_exchange.items() if label in worked
               and any(f.outcome == "fragile" for f in found) and not any(f.wasted for f in found)}
    assert summary.fragile_round_trips == len(fragile)
    assert summary.wasted_round_trips == sum(any(f.wasted for f in found) for found in by_exchange.values())
    failed = [f for f in by_exchange["4"] if f.outcome == "fragile"]  # lenient about the address, then failed
    assert failed and not any(f.wasted for f in by_exchange["4"]) and "4" not in fragile
    assert_counts_agree([path], tmp_path)


def test_a_failed_call_is_never_among_those_that_worked(tmp_path):
    path = several_findings_an_exchange(tmp_path)
    said = every_output([path], tmp_path)
    records = {call.exchange: call.round_trip for call in analyze([path]).calls}
    assert records["4"] != "fragile"
    assert said["html"]["fragile_round_trips"] == expected([path])["fragile_round_trips"]


@pytest.mark.parametrize("capture", CAPTURES + sorted(DATA.glob("*.http")), ids=lambda path: path.name)
def test_every_output_counts_as_the_summary_on_the_shipped_captures(tmp_path, capture):
    assert_counts_agree([capture], tmp_path)


def test_every_output_counts_as_the_summary_on_a_session_of_files(tmp_path):
    assert_counts_agree(CAPTURES, tmp_path)


def test_every_output_counts_as_the_summary_on_the_kit(tmp_path, kit):
    for capture in sorted(kit.glob("*.http")):
        assert_counts_agree([capture], tmp_path)


@pytest.mark.parametrize("rule_id", sorted(CASES))
def test_every_output_counts_as_the_summary_on_each_rules_cases(tmp_path, rule_id):
    bad, _, good = CASES[rule_id]
    assert_counts_agree([write(tmp_path, *bad, name="bad.http")], tmp_path)
    assert_counts_agree([write(tmp_path, *good, name="good.http")], tmp_path)


@pytest.mark.parametrize("shape", ["new", "recurring"])
def test_every_output_counts_as_the_summary_on_generated_sessions(tmp_path, shape):
    from analyze import generate  # bench/analyze.py's sessions: streams, webhooks, cards, polls, sends

    path = tmp_path / f"{shape}.http"
    generate(shape, path, tmp_path / "index", 150_000, seed=5)
    assert_counts_agree([path], tmp_path)
