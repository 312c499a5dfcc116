"""One cause, one statement: findings that one fact of the card or the client explains are grouped
by it, named once with both halves and the exchanges it covers; the counts stay what they were.
And the call a spec-following client sends to a card `url` that doubles its routes' prefix (a 0.3
REST url ending in /v1: `…/v1/v1/message:send`, answered 404) is a finding of its own."""

from __future__ import annotations

import json

from a2a_capture.analyze.engine import analyze
from a2a_capture.report import machine, walkthrough
from a2a_capture.report.render import render
from tests.builders import ORIGIN, block, card, fetch_card, http_request, http_response, message, rpc, task, write
from tests.counts import assert_counts_agree

URL = f"{ORIGIN}/api/v1"
REST_V1 = card(supportedInterfaces=[{"url": URL, "protocolBinding": "HTTP+JSON", "protocolVersion": "0.3"}])
HEAD = ["Content-Type: application/json"]
DONE = {"kind": "task", "id": "t-1", "contextId": "c-1", "status": {"state": "completed"}}


def send(number: int, path: str, status: int = 200) -> str:
    body = {"message": {"kind": "message", "messageId": f"m-{number}", "role": "user",
                        "parts": [{"kind": "text", "text": "hi"}]}}
    answer = http_response(200, DONE) if status == 200 else http_response(status, None, reason="Not Found")
    return block(number, "send", http_request("POST", path, HEAD, body), answer)


def test_a_url_that_doubles_the_path_is_one_cause_naming_both_halves(tmp_path):
    """The issue's client: it adds /v1/message:send to the agent's base itself, six times."""
    path = write(tmp_path, fetch_card(1, REST_V1), *(send(n, "/api/v1/message:send") for n in range(2, 8)))
    analysis = analyze([path])
    undeclared = [f for f in analysis.findings if f.rule == "interface-undeclared"]
    assert [f.exchange for f in undeclared] == ["2", "3", "4", "5", "6", "7"]
    (cause,) = analysis.summary.causes
    assert URL in cause.cause and "ends in /v1" in cause.cause  # the card's half
    assert "adds /v1/… routes itself" in cause.cause  # the client's
    assert (cause.rules, cause.findings, cause.round_trips) == (["interface-undeclared"], 6, 6)
    assert [e["exchange"] for e in cause.exchanges] == ["2", "3", "4", "5", "6", "7"]
    # the counts are the findings', as before: grouping adds a statement, never a round trip
    summary = analysis.summary
    assert (summary.findings, summary.wasted_round_trips, summary.fragile_round_trips) == (6, 0, 6)
    text = machine.text(analysis)
    assert text.count(f"cause: {cause.cause}: 6 findings (interface-undeclared) on exchanges 2, 3, 4, 5, 6, 7") == 1
    said = json.loads(machine.to_json(analysis))["summary"]["causes"]
    assert said == [cause.model_dump()]
    results = json.loads(machine.sarif(analysis))["runs"][0]["results"]  # each result names its cause too
    assert [r["properties"].get("cause") for r in results if r["ruleId"] == "interface-undeclared"] == [cause.cause] * 6
    model = walkthrough.build([str(path)])
    for kind in ("md", "html"):  # the report's first screen says it once too
        page = render(model, kind)
        assert page.count("One cause behind 6 findings on 6 exchanges") == 1, kind
        assert URL in page.split("One cause behind", 1)[1].split("\n", 1)[0], kind
    assert_counts_agree([path], tmp_path)


def test_the_spec_following_clients_404_names_the_cards_url(tmp_path):
    """The same card, a client that adds the 0.3 routes to the url as the spec says: …/v1/v1/…, 404."""
    path = write(tmp_path, fetch_card(1, REST_V1), send(2, "/api/v1/v1/message:send", 404),
                 send(3, "/api/v1/v1/message:send", 404))
    analysis = analyze([path])
    found = [(f.rule, f.exchange, f.outcome) for f in analysis.findings]
    assert found == [("interface-url-doubled", "2", "wasted"), ("interface-url-doubled", "3", "wasted")]
    assert URL in analysis.findings[0].message and "/v1 twice" in analysis.findings[0].message
    (cause,) = analysis.summary.causes
    assert URL in cause.cause and "as the spec says" in cause.cause
    assert (cause.round_trips, cause.wasted_round_trips) == (2, 2) == (analysis.summary.wasted_round_trips, 2)
    assert_counts_agree([path], tmp_path)


def test_a_doubled_path_the_agent_answers_is_no_finding(tmp_path):
    path = write(tmp_path, fetch_card(1, REST_V1), send(2, "/api/v1/v1/message:send"))
    assert [f.rule for f in analyze([path]).findings] == []


def test_a_wrong_version_on_every_call_is_one_cause(tmp_path):
    v03 = card(supportedInterfaces=[{"url": f"{ORIGIN}/rpc", "protocolBinding": "JSONRPC", "protocolVersion": "0.3"}])
    done = task("t-1", "TASK_STATE_COMPLETED")
    path = write(tmp_path, fetch_card(1, v03),
                 *(rpc(n, "SendMessage", {"message": message(message_id=f"m-{n}")}, result={"task": done},
                       headers=["Content-Type: application/json", "A2A-Version: 1.0"]) for n in (2, 3, 4)))
    analysis = analyze([path])
    causes = {cause.cause: cause for cause in analysis.summary.causes}
    (cause,) = [c for c in causes.values() if "method-version-mismatch" in c.rules]
    assert "declare protocolVersion 0.3" in cause.cause and "spells its calls in 1.0" in cause.cause
    assert [e["exchange"] for e in cause.exchanges] == ["2", "3", "4"]
    assert_counts_agree([path], tmp_path)


def test_one_finding_is_no_cause_and_sessions_without_any_say_nothing_new(tmp_path):
    path = write(tmp_path, fetch_card(1, REST_V1), send(2, "/api/v1/message:send"))
    analysis = analyze([path])
    assert [f.rule for f in analysis.findings] == ["interface-undeclared"] and analysis.summary.causes == []
    assert "causes" not in json.loads(machine.to_json(analysis))["summary"]
    assert "cause: " not in machine.text(analysis)
