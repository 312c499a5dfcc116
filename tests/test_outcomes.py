"""Waste judged from the outcome, per finding: wasted, fragile (worked by leniency) or advice."""

from __future__ import annotations

import json

import pytest

from a2a_capture.analyze.engine import analyze
from a2a_capture.analyze.findings import RULES
from a2a_capture.report import machine
from tests.builders import block, card, error, fetch_card, http_request, http_response, message, rpc, write
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


def test_the_example_captures_count_no_poll_that_brought_news_and_not_the_completed_send():
    analysis = analyze(sorted((ROOT / "captures").glob("*.http")))
    polling = [f for f in analysis.findings if f.file.endswith("04-polling.http")]
    # returnImmediately, then polls: each brought a newer state
    assert not any(f.wasted for f in polling if f.operation == "GetTask")
    loop = next(f for f in polling if f.rule == "return-immediately-poll")
    assert (loop.exchange, loop.outcome) == ("12", "advice")
    assert "ended after 10 GetTask polls over 2.3 s" in loop.message and "saving 10 round trips" in loop.message
    auth = next(f for f in analysis.findings if f.rule == "auth-missing")
    assert auth.outcome == "fragile" and not auth.wasted
    wasted = {(f.file, f.exchange) for f in analysis.findings if f.wasted}
    assert wasted and analysis.summary.wasted_round_trips == len(wasted)
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


def _found(tmp_path, *blocks):
    return {(f.exchange, f.rule): f for f in analyze([write(tmp_path, *blocks)]).findings}


def test_a_call_that_failed_for_another_reason_is_not_the_refusal_a_rule_predicted(tmp_path):
    """Seen with a2a-server 0.6 and a2a-cli: a GetTask of an unknown task, sent to an address the
    card does not declare, failed because of the task; the agent had taken the address."""
    blocks = [fetch_card(1),
              rpc(2, "GetTask", {"id": "t-9"}, path="/other", error=error(-32001, message_text="no such task")),
              rpc(3, "GetTask", {"id": "t-9"}, path="/other", error=error(-32601, message_text="no method")),
              rpc(4, "GetTask", {"id": "t-8"}, path="/other",
                  error=error(-32603, message_text="Internal error: TaskNotFound: t-8"))]
    found = _found(tmp_path, *blocks)
    other = found[("2", "interface-undeclared")]
    assert (other.outcome, other.wasted) == ("fragile", False)
    assert other.message.endswith("; not refused for this (it failed with TaskNotFoundError); an agent that "
                                  "follows its card answers 404")  # nothing said of what it let through: it failed
    assert found[("2", "task-unknown")].wasted
    assert found[("3", "interface-undeclared")].wasted  # -32601: the refusal the card predicted
    assert not found[("4", "interface-undeclared")].wasted
    unknown = found[("4", "task-unknown")]  # said in words under -32603
    assert unknown.wasted and "it said so with InternalError, not TaskNotFoundError" in unknown.message


def test_an_error_whose_code_is_a_reason_names_that_cause(tmp_path):
    """nodus-a2a-wire writes `{"error": {"code": "UNSUPPORTED_OPERATION"}}` with a 501: a GetTask
    without credentials refused so failed for that, not for the credentials."""
    rest = card(supportedInterfaces=[{"url": "http://localhost:9001", "protocolBinding": "HTTP+JSON",
                                      "protocolVersion": "1.0"}],
                securitySchemes=SECURED["securitySchemes"], securityRequirements=SECURED["securityRequirements"])
    unsupported = {"error": {"code": "UNSUPPORTED_OPERATION", "message": "not here", "details": []}}
    refused = block(2, "GetTask", http_request("GET", "/tasks/t-1", ["A2A-Version: 1.0"]),
                    http_response(501, unsupported, reason="Not Implemented"))
    found = _found(tmp_path, fetch_card(1, rest), refused)
    assert list(found) == [("2", "auth-missing")]
    assert found[("2", "auth-missing")].outcome == "fragile"
    assert "(it failed with UnsupportedOperationError)" in found[("2", "auth-missing")].message


def test_an_error_message_naming_the_predicted_refusal_counts_as_it(tmp_path):
    blocks = [fetch_card(1, SECURED), rpc(2, "SendMessage", SEND, error=error(-32603, message_text="Unauthenticated"))]
    assert _found(tmp_path, *blocks)[("2", "auth-missing")].wasted


def _card_0_2(**extra) -> dict:
    """A card as a2a-server 0.6 serves it: 0.2-shaped (url), no protocolVersion, at agent.json only
    (with the fields 0.2 requires, so card-schema has nothing to say of it)."""
    from tests.builders import ORIGIN
    return {"name": "Echo", "description": "echoes", "url": f"{ORIGIN}/echo", "version": "1.0.0",
            "capabilities": {"streaming": True}, "defaultInputModes": ["text/plain"],
            "defaultOutputModes": ["text/plain"],
            "skills": [{"id": "echo", "name": "Echo", "description": "Echoes.", "tags": []}], **extra}


def test_a_card_of_0_2_at_its_own_path_and_its_0_1_names_are_not_findings(tmp_path):
    blocks = [fetch_card(1, _card_0_2(), path="/.well-known/agent.json"),
              rpc(2, "tasks/send", {"id": "t-1", "message": message()}, path="/echo", headers=[],
                  result={"id": "t-1", "status": {"state": "working"}})]
    assert _found(tmp_path, *blocks) == {}


def test_names_of_0_3_and_1_0_to_a_card_without_protocol_version(tmp_path):
    """Seen with pya2a (0.1): a card of 0.2 or before does not say 0.1 or 0.2. A 1.0 name is
    wrong for both; message/send (0.2's and 0.3's) only when the agent refuses it, which shows 0.1."""
    v1 = ["Content-Type: application/json", "A2A-Version: 1.0"]
    refused = error(-32600, message_text="Request payload validation error")
    blocks = [fetch_card(1, _card_0_2(), path="/.well-known/agent.json"),
              rpc(2, "SendMessage", {"message": message(message_id="m-2")}, path="/echo", headers=v1, error=refused),
              rpc(3, "message/send", {"message": message(message_id="m-3")}, path="/echo", headers=[], error=refused),
              rpc(4, "message/send", {"message": message(message_id="m-4")}, path="/echo", headers=[],
                  result={"id": "t-4", "status": {"state": "working"}}),
              rpc(5, "tasks/send", {"id": "t-5", "message": message(message_id="m-5")}, path="/echo", headers=[],
                  error=refused)]
    found = _found(tmp_path, *blocks)
    assert set(found) == {("2", "method-version-mismatch"), ("3", "method-version-mismatch"),
                          ("5", "method-version-mismatch")}  # none is malformed-request: the name was the fault
    assert found[("2", "method-version-mismatch")].message == (
        "SendMessage is a 1.0 name, but the card (exchange 1) has no protocolVersion (0.2 or before): its agent "
        "speaks A2A 0.1 or 0.2 (that interface calls it tasks/send or message/send)")
    assert found[("3", "method-version-mismatch")].message == (
        "message/send is a 0.2/0.3 name, but the card (exchange 1) has no protocolVersion (0.2 or before) and the "
        "agent refused it: it speaks A2A 0.1 (that interface calls it tasks/send)")
    assert "it speaks A2A 0.2 (that interface calls it message/send)" in found[("5", "method-version-mismatch")].message
    assert all(finding.wasted for finding in found.values())


def test_a_refused_stream_or_push_name_on_a_card_without_protocol_version_tells_no_version(tmp_path):
    """A 0.1 agent may refuse tasks/sendSubscribe or tasks/pushNotification/set for want of the
    capability: only a refused SendMessage shows which version the agent speaks."""
    unknown = error(-32601, message_text="Method not found")
    blocks = [fetch_card(1, _card_0_2(capabilities={}), path="/.well-known/agent.json"),
              rpc(2, "tasks/sendSubscribe", {"id": "t-2", "message": message(message_id="m-2")}, path="/echo",
                  headers=[], error=unknown),
              rpc(3, "tasks/pushNotification/set", {"id": "t-2", "pushNotificationConfig": {"url": "http://h/x"}},
                  path="/echo", headers=[], error=unknown)]
    found = _found(tmp_path, *blocks)
    assert set(found) == {("2", "capability-streaming"), ("3", "capability-push")}


def test_input_modes_written_as_kinds_of_part_cover_their_media_types(tmp_path):
    """0.1's samples wrote input modes as ["text"]: a text part is accepted, an image is not."""
    image = [{"kind": "file", "file": {"mimeType": "image/png", "uri": "http://localhost:9001/a.png"}}]
    blocks = [fetch_card(1, _card_0_2(defaultInputModes=["text"]), path="/.well-known/agent.json"),
              rpc(2, "tasks/send", {"id": "t-2", "message": message(message_id="m-2")}, path="/echo", headers=[],
                  result={"id": "t-2", "status": {"state": "completed"}}),
              rpc(3, "tasks/send", {"id": "t-3", "message": message(message_id="m-3", parts=image)}, path="/echo",
                  headers=[], error=error(-32005, message_text="Incompatible content types"))]
    found = _found(tmp_path, *blocks)
    assert list(found) == [("3", "input-mode")] and found[("3", "input-mode")].wasted


def test_a_card_of_0_3_at_the_0_2_path_is_still_the_wrong_path(tmp_path):
    blocks = [fetch_card(1, _card_0_2(protocolVersion="0.3.0"), path="/.well-known/agent.json"),
              rpc(2, "tasks/send", {"id": "t-1", "message": message()}, path="/echo", headers=[],
                  result={"id": "t-1", "status": {"state": "working"}})]
    found = _found(tmp_path, *blocks)
    assert found[("1", "card-path")].outcome == "fragile"
    mismatch = found[("2", "method-version-mismatch")]
    assert "declares protocolVersion 0.3" in mismatch.message and mismatch.outcome == "fragile"


def test_an_error_that_names_no_cause_counts_as_the_refusal_predicted(tmp_path):
    """A bare internal error (like a2a-sdk 0.3's gRPC UNKNOWN for a push config) gives no other
    reason: the card's prediction is the likeliest one."""
    blocks = [fetch_card(1), rpc(2, "GetTask", {"id": "t-9"}, path="/other", error=error(-32603, message_text="boom"))]
    assert _found(tmp_path, *blocks)[("2", "interface-undeclared")].wasted


def test_a_method_of_another_version_refused_as_an_invalid_request_is_not_malformed(tmp_path):
    """a2a-sdk 0.2 answers a name it does not know with -32600: the name was the fault."""
    card = _card_0_2(protocolVersion="0.2.6")
    blocks = [fetch_card(1, card, path="/.well-known/agent.json"),
              rpc(2, "tasks/send", {"id": "t-1", "message": message()}, path="/echo", headers=[],
                  error=error(-32600, message_text="Request payload validation error"))]
    found = _found(tmp_path, *blocks)
    assert set(found) == {("2", "method-version-mismatch")} and found[("2", "method-version-mismatch")].wasted


def test_every_lenient_wording_says_what_a_strict_agent_does_after_a_semicolon():
    """A fragile finding on a call that failed for another reason keeps only the strict half of
    the wording (what an agent that follows its card does): each rule's wording has both halves."""
    for rule in RULES.values():
        what_it_did, _, strict = rule.lenient.partition("; ")
        assert what_it_did and strict.startswith("an agent "), rule.id
