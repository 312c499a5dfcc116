"""Waste judged from the outcome, per finding: wasted, fragile (worked by leniency) or advice."""

from __future__ import annotations

import json

import pytest

from a2a_capture.analyze.engine import analyze
from a2a_capture.analyze.findings import RULES
from a2a_capture.report import machine
from tests.builders import error, fetch_card, message, rpc, write
from tests.conftest import ROOT
from tests.test_rules import CASES, DONE, SECURED, SEND, V03

#: what each rule's firing case in test_rules shows: every one there fails or is redundant,
#: except the advice rules and auth-missing, whose call there completed
EXPECTED = {rule_id: ("advice" if RULES[rule_id].kind == "advice" else "wasted") for rule_id in CASES}
EXPECTED["auth-missing"] = "fragile"
EXPECTED["interface-undeclared"] = "fragile"  # answered 200 at a path the card does not declare
EXPECTED["tenant-not-echoed"] = "fragile"
EXPECTED["duplicate-message-id"] = "wasted"


@pytest.mark.parametrize("rule_id", sorted(CASES))
def test_each_rule_case_is_judged_by_its_outcome(tmp_path, rule_id):
    blocks, _, _ = CASES[rule_id]
    finding = next(f for f in analyze([write(tmp_path, *blocks)]).findings if f.rule == rule_id)
    assert finding.outcome == EXPECTED[rule_id], finding.message
    assert finding.wasted == (finding.outcome == "wasted")
    assert ("it worked because" in finding.message) == (finding.outcome == "fragile")


def test_a_call_the_card_ruled_out_is_wasted_when_refused_and_fragile_when_answered(tmp_path):
    refused = [fetch_card(1, SECURED), rpc(2, "SendMessage", SEND,
                                           error=error(-31999, message_text="unauthenticated"))]
    answered = [fetch_card(1, SECURED), rpc(2, "SendMessage", SEND, result={"task": DONE})]
    wasted = next(f for f in analyze([write(tmp_path, *refused)]).findings if f.rule == "auth-missing")
    fragile = next(f for f in analyze([write(tmp_path, *answered)]).findings if f.rule == "auth-missing")
    assert (wasted.outcome, wasted.wasted) == ("wasted", True)
    assert (fragile.outcome, fragile.wasted) == ("fragile", False)
    assert "enforces its card answers 401" in fragile.message


def test_a_03_name_answered_by_a_10_interface_is_fragile_and_says_why(tmp_path):
    blocks = [fetch_card(1), rpc(2, "message/send", SEND, headers=["Content-Type: application/json"],
                                 result={"kind": "task", "id": "t-1", "status": {"state": "completed"}})]
    finding = next(f for f in analyze([write(tmp_path, *blocks)]).findings if f.rule == "method-version-mismatch")
    assert finding.outcome == "fragile"
    assert "worked because this agent accepts 0.3 names; an agent that follows its card refuses them" \
        in finding.message
    near = [fetch_card(1, V03), rpc(2, "message/send", SEND, headers=["Content-Type: application/json"],
                                    result={"kind": "task", "id": "t-1", "status": {"state": "completed"}})]
    assert [f for f in analyze([write(tmp_path, *near)]).findings if f.rule == "method-version-mismatch"] == []


def test_the_summary_counts_wasted_findings_only(tmp_path):
    blocks = [fetch_card(1, SECURED),
              rpc(2, "SendMessage", SEND, result={"task": DONE}),  # fragile: no credentials, answered
              rpc(3, "GetTask", {"id": "t-1"}, result=DONE, headers=["A2A-Version: 1.0", "Authorization: B x"]),
              rpc(4, "SendMessage", {"message": message(message_id="m-2")},
                  error=error(-31999, message_text="unauthenticated"))]
    analysis = analyze([write(tmp_path, *blocks)])
    outcomes = sorted((f.exchange, f.rule, f.outcome) for f in analysis.findings)
    assert outcomes == [("2", "auth-missing", "fragile"), ("3", "poll-terminal", "wasted"),
                        ("4", "auth-missing", "wasted")]
    summary = analysis.summary
    assert summary.wasted_round_trips == 2 and summary.fragile_round_trips == 1
    assert summary.findings_by_outcome == {"fragile": 1, "wasted": 2}
    assert machine.summary_lines(analysis)[-1] == (
        "wasted round trips: 2; fragile (worked only because the agent was lenient): 1")


def test_the_example_captures_count_the_polls_not_the_completed_send():
    analysis = analyze(sorted((ROOT / "captures").glob("*.http")))
    polls = [f for f in analysis.findings if f.file.endswith("04-polling.http") and f.wasted
             and f.operation == "GetTask"]
    assert [f.exchange for f in polls] == [str(n) for n in range(3, 13)]
    auth = next(f for f in analysis.findings if f.rule == "auth-missing")
    assert auth.outcome == "fragile" and not auth.wasted
    wasted = {(f.file, f.exchange) for f in analysis.findings if f.wasted}
    assert analysis.summary.wasted_round_trips == len(wasted)
    costs = {(f.file, f.exchange): f.cost for f in analysis.findings if f.wasted}
    assert analysis.summary.wasted_seconds == pytest.approx(sum(costs.values()), abs=1e-5)
    assert auth.cost not in costs.values() or auth.cost < analysis.summary.wasted_seconds


def test_every_output_carries_the_outcome(tmp_path):
    blocks = [fetch_card(1, SECURED), rpc(2, "SendMessage", SEND, result={"task": DONE})]
    analysis = analyze([write(tmp_path, *blocks)])
    data = json.loads(machine.to_json(analysis))
    assert {(f["rule"], f["wasted"], f["outcome"]) for f in data["findings"]} == {("auth-missing", False, "fragile")}
    sarif = json.loads(machine.sarif(analysis))["runs"][0]["results"][0]
    assert sarif["properties"]["wasted"] is False and sarif["properties"]["outcome"] == "fragile"
    assert "auth-missing [fragile]" in machine.text(analysis)
    assert "auth-missing [fragile]" in machine.junit(analysis, "error")
