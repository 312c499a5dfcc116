"""Every case docs/rules.md states under "Wasted or fragile", for every rule: a capture of that case, and
the outcome its finding gets is the one documented (the rule's ``cases``)."""

from __future__ import annotations

import pytest

from a2a_capture.analyze.engine import analyze
from a2a_capture.analyze.findings import RULES
from tests.builders import block, card, error, fetch_card, http_request, http_response, message, rpc, write
from tests.test_rules import CASES, DONE, SECURED, SEND, STREAMING, TENANT, WORKING


def timed(text: str, start: str) -> str:
    """A block with its start time (``start``: seconds past 07:40 as "SS.ffffff")."""
    head, _, rest = text.partition("\n")
    return f"{head}\n#@ start: 2026-11-30T07:40:{start}Z\n{rest}"


ETAG = ['ETag: W/"v1"']
CARD_0_2 = card(supportedInterfaces=None, url="http://localhost:9001/rpc")  # no protocolVersion: 0.2 or before
IMMEDIATE = {**SEND, "configuration": {"returnImmediately": True}}
PUSH_CONFIG = {"taskId": "t-1", "url": "http://h/x"}
ENDED_EVENTS = [{"task": WORKING}, {"statusUpdate": {"taskId": "t-1", "contextId": "ctx-1",
                                                      "status": {"state": "TASK_STATE_COMPLETED"}}}]
IMAGE = {"message": message(parts=[{"url": "http://x/a.png", "mediaType": "image/png"}])}

#: (rule, case) -> (blocks, the exchange the finding is on): one capture of every case documented
SAMPLES = {
    ("auth-missing", "refused"): (
        [fetch_card(1, SECURED), rpc(2, "SendMessage", SEND, error=error(-31999, message_text="unauthenticated"))],
        "2"),
    ("capability-extended-card", "answered"): (
        [fetch_card(1), rpc(2, "GetExtendedAgentCard", {}, result=card())], "2"),
    ("capability-push", "answered"): (
        [fetch_card(1), rpc(2, "CreateTaskPushNotificationConfig", PUSH_CONFIG, result=PUSH_CONFIG)], "2"),
    ("capability-push", "inline"): (
        [fetch_card(1), rpc(2, "SendMessage", {**SEND, "configuration": {"taskPushNotificationConfig": PUSH_CONFIG}},
                            result={"task": WORKING})], "2"),
    ("capability-streaming", "answered"): (
        [fetch_card(1), rpc(2, "SendStreamingMessage", SEND, events=[{"task": DONE}])], "2"),
    ("card-path", "answered"): (
        [fetch_card(1, path="/.well-known/agent.json")], "1"),
    ("card-path", "prefix"): (
        [fetch_card(1), fetch_card(2, path="/a2a/jsonrpc/.well-known/agent-card.json", status=404)], "2"),
    ("card-path", "0.2 held"): (
        [fetch_card(1, CARD_0_2, path="/.well-known/agent.json"), fetch_card(2, status=404)], "2"),
    ("card-refetch", "fresh"): (
        [timed(fetch_card(1, response_headers=["Cache-Control: max-age=60"]), "01.000000"),
         timed(fetch_card(2), "02.000000")], "2"),
    ("card-refetch", "no expiry"): (
        [fetch_card(1), fetch_card(2)], "2"),
    ("card-refetch", "other path"): (
        [fetch_card(1), fetch_card(2, path="/agent/.well-known/agent-card.json")], "2"),
    ("card-refetch", "changed"): (
        [fetch_card(1, response_headers=ETAG), fetch_card(2, card(version="1.0.1"), response_headers=['ETag: W/"v2"'])],
        "2"),
    ("cancel-terminal", "unseen"): (
        [fetch_card(1), rpc(2, "CancelTask", {"id": "t-1"}, error=error(-32002, "TASK_NOT_CANCELABLE"))], "2"),
    ("input-mode", "answered"): (
        [fetch_card(1), rpc(2, "SendMessage", IMAGE, result={"task": DONE})], "2"),
    ("interface-undeclared", "refused"): (
        [fetch_card(1), rpc(2, "SendMessage", SEND, path="/", error=error(-32601))], "2"),
    ("list-past-last-page", "page size refused"): (
        [fetch_card(1), rpc(2, "ListTasks", {"pageSize": 500}, error=error(-32602, message_text="bad pageSize"))], "2"),
    ("list-past-last-page", "page size answered"): (
        [fetch_card(1), rpc(2, "ListTasks", {"pageSize": 500}, result={"tasks": [], "nextPageToken": ""})], "2"),
    ("message-terminal", "answered"): (
        [fetch_card(1), rpc(2, "SendMessage", SEND, result={"task": DONE}),
         rpc(3, "SendMessage", {"message": message(task_id="t-1", message_id="m-2")}, result={"task": DONE})], "3"),
    ("message-terminal", "unseen"): (
        [fetch_card(1), rpc(2, "SendMessage", {"message": message(task_id="t-1", message_id="m-2")},
                            error=error(-32004, "UNSUPPORTED_OPERATION", "Task t-1 is in terminal state"))], "2"),
    ("method-version-mismatch", "answered"): (
        [fetch_card(1), rpc(2, "message/send", SEND, headers=["Content-Type: application/json"],
                            result={"kind": "task", "id": "t-1", "status": {"state": "completed"}})], "2"),
    ("return-immediately-poll", "loop"): (
        [fetch_card(1), rpc(2, "SendMessage", IMMEDIATE, result={"task": WORKING}),
         rpc(3, "GetTask", {"id": "t-1"}, result=WORKING), rpc(4, "GetTask", {"id": "t-1"}, result=DONE)], "4"),
    ("subscribe-terminal", "unseen"): (
        [fetch_card(1, STREAMING), rpc(2, "SubscribeToTask", {"id": "t-1"},
                                       error=error(-32004, "UNSUPPORTED_OPERATION", "Task t-1 is in terminal state"))],
        "2"),
    ("tenant-not-echoed", "refused"): (
        [fetch_card(1, TENANT), rpc(2, "SendMessage", SEND, error=error(-32001, message_text="unknown tenant"))], "2"),
    ("version-header-missing", "answered"): (
        [fetch_card(1), rpc(2, "SendMessage", SEND, headers=["Content-Type: application/json"],
                            result={"task": DONE})], "2"),
}
#: the other cases: test_rules' firing case of the rule, whose outcome test_outcomes states
FIRING = {"card-refetch": "unconditional", "card-path": "refused", "auth-missing": "answered",
          "interface-undeclared": "answered", "tenant-not-echoed": "answered", "list-past-last-page": "past last",
          "message-terminal": "refused", "cancel-terminal": "held", "subscribe-terminal": "held"}
for _rule_id, (_blocks, _exchange, _near) in CASES.items():
    _case = FIRING.get(_rule_id) or RULES[_rule_id].cases[0].name
    SAMPLES.setdefault((_rule_id, _case), (_blocks, _exchange))  # one written here for the case stands


def _documented():
    return sorted((rule.id, case.name) for rule in RULES.values() for case in rule.cases)


def test_every_documented_case_has_a_capture():
    assert sorted(SAMPLES) == _documented()


@pytest.mark.parametrize(("rule_id", "case"), _documented())
def test_each_documented_case_gets_its_documented_outcome(tmp_path, rule_id, case):
    blocks, exchange = SAMPLES[(rule_id, case)]
    found = [f for f in analyze([write(tmp_path, *blocks)]).findings if f.rule == rule_id and f.exchange == exchange]
    assert len(found) == 1, [(f.rule, f.exchange, f.message) for f in analyze([write(tmp_path, *blocks)]).findings]
    documented = next(c for c in RULES[rule_id].cases if c.name == case)
    assert found[0].outcome == documented.outcome, found[0].message
    assert found[0].wasted == (documented.outcome == "wasted")


def _findings(tmp_path, *blocks):
    return {(f.exchange, f.rule): f for f in analyze([write(tmp_path, *blocks)]).findings}


def test_a_changed_card_refetched_is_advice_to_revalidate_and_the_same_card_still_wasted(tmp_path):
    changed = _findings(tmp_path, fetch_card(1, response_headers=ETAG),
                        fetch_card(2, card(version="1.0.1"), response_headers=['ETag: W/"v2"']))
    advice = changed[("2", "card-refetch")]
    assert (advice.outcome, advice.wasted, advice.cost) == ("advice", False, None)
    assert "it had changed since exchange 1" in advice.message and 'If-None-Match: W/"v1"' in advice.message
    same = _findings(tmp_path, fetch_card(1, response_headers=ETAG), fetch_card(2, response_headers=ETAG))
    assert same[("2", "card-refetch")].outcome == "wasted"
    conditional = _findings(tmp_path, fetch_card(1, response_headers=ETAG),
                            fetch_card(2, card(version="1.0.1"), request_headers=['If-None-Match: W/"v1"']))
    assert ("2", "card-refetch") not in conditional  # revalidated, and the card had changed: as it should be


def test_a_refetch_soon_after_with_no_max_age_says_keep_the_card_and_reuse_the_client(tmp_path):
    soon = _findings(tmp_path, timed(fetch_card(1, response_headers=ETAG), "01.000000"),
                     timed(fetch_card(2), "01.001000"))[("2", "card-refetch")]
    assert "1 ms later" in soon.message and "keep the card and reuse the client (or agent) object" in soon.message
    assert "revalidate with If-None-Match / If-Modified-Since only to look for a change" in soon.message
    stale = _findings(tmp_path, timed(fetch_card(1, response_headers=[*ETAG, "Cache-Control: max-age=5"]),
                                      "01.000000"),
                      timed(fetch_card(2), "09.000000"))[("2", "card-refetch")]
    assert "went stale (max-age=5)" in stale.message and "revalidate with If-None-Match" in stale.message
    assert "keep the card" not in stale.message


def test_a_card_fetched_before_each_call_says_the_client_object_is_rebuilt(tmp_path):
    blocks = [fetch_card(1), rpc(2, "SendMessage", SEND, result={"task": DONE}), fetch_card(3),
              rpc(4, "SendMessage", {"message": message(message_id="m-2")}, result={"task": DONE})]
    refetch = _findings(tmp_path, *blocks)[("3", "card-refetch")]
    assert "exchange 2 used the card in between: the client (or agent) object is rebuilt per call" in refetch.message
    assert refetch.message.endswith("build it once and reuse it") and refetch.wasted
    twice = _findings(tmp_path, fetch_card(1), fetch_card(2))[("2", "card-refetch")]
    assert "rebuilt" not in twice.message


def test_return_immediately_to_an_agent_with_neither_streaming_nor_push_wastes_nothing(kit):
    analysis = analyze([kit / "04-polling.http"])
    assert analysis.summary.wasted_round_trips == 0
    [loop] = analysis.findings
    assert (loop.rule, loop.outcome, loop.exchange) == ("return-immediately-poll", "advice", "3")
    assert "ended after 2 GetTask polls" in loop.message
    assert loop.message.endswith("a blocking SendMessage would have carried the result as it came, saving 2 round "
                                 "trips")  # the card offers neither streaming nor push: only the blocking call


def test_a_loop_that_has_not_ended_is_not_judged_yet(tmp_path):
    blocks = [fetch_card(1), rpc(2, "SendMessage", IMMEDIATE, result={"task": WORKING}),
              rpc(3, "GetTask", {"id": "t-1"}, result=WORKING)]
    assert ("3", "return-immediately-poll") not in _findings(tmp_path, *blocks)


def test_a_prefixed_card_path_is_judged_by_the_root_card_held(tmp_path):
    prefixed = "/a2a/jsonrpc/.well-known/agent-card.json"
    missed = _findings(tmp_path, fetch_card(1), fetch_card(2, path=prefixed, status=404))[("2", "card-path")]
    assert (missed.outcome, missed.related) == ("wasted", ["1"])
    assert missed.message.startswith(f"card requested under a path prefix, at {prefixed} (answered 404), where "
                                     "exchange 1 had found the card of this origin at /.well-known/agent-card.json")
    not_a_card = block(2, "discover", http_request("GET", prefixed, []), http_response(200, "<html>no</html>",
                                                                                       content_type="text/html"))
    assert _findings(tmp_path, fetch_card(1), not_a_card)[("2", "card-path")].outcome == "wasted"
    mounted = _findings(tmp_path, fetch_card(1), fetch_card(2, path="/a2a/.well-known/agent-card.json"))
    assert ("2", "card-path") not in mounted  # the agent mounts a card under the prefix: fine
    alone = _findings(tmp_path, fetch_card(1, path=prefixed, status=404))
    assert ("1", "card-path") not in alone  # nothing held says the card is at the root
