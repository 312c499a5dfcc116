"""Every rule: a capture where it fires on the right exchange, and a near miss where it must not."""

from __future__ import annotations

import sys

import pytest

from a2a_capture.analyze.engine import analyze
from a2a_capture.analyze.findings import RULES
from a2a_capture.record import notes
from tests.builders import (
    ORIGIN,
    block,
    card,
    error,
    fetch_card,
    http_request,
    http_response,
    message,
    rpc,
    task,
    write,
)
from tests.conftest import ROOT

SEND = {"message": message()}
STREAMING = card(capabilities={"streaming": True})
PUSH = card(capabilities={"pushNotifications": True})
SECURED = card(securitySchemes={"bearer": {"httpAuthSecurityScheme": {"scheme": "Bearer"}}},
               securityRequirements=[{"schemes": {"bearer": {"list": []}}}])
TWO_JSONRPC = card(supportedInterfaces=[
    {"url": f"{ORIGIN}/rpc", "protocolBinding": "JSONRPC", "protocolVersion": "1.0"},
    {"url": f"{ORIGIN}/legacy", "protocolBinding": "JSONRPC", "protocolVersion": "1.0"},
])
TENANT = card(supportedInterfaces=[
    {"url": f"{ORIGIN}/rpc", "protocolBinding": "JSONRPC", "protocolVersion": "1.0", "tenant": "acme"}])
V03 = card(supportedInterfaces=[{"url": f"{ORIGIN}/rpc", "protocolBinding": "JSONRPC", "protocolVersion": "0.3"}])
DONE = task("t-1", "TASK_STATE_COMPLETED")
#: a 0.3 REST card whose url already ends in its routes' /v1
REST_V1 = card(supportedInterfaces=[{"url": f"{ORIGIN}/api/v1", "protocolBinding": "HTTP+JSON",
                                     "protocolVersion": "0.3"}])
REST_API = card(supportedInterfaces=[{"url": f"{ORIGIN}/api", "protocolBinding": "HTTP+JSON",
                                      "protocolVersion": "0.3"}])
REST_HEAD = ["Content-Type: application/json"]
SEND_03 = {"message": {"kind": "message", "messageId": "m-1", "role": "user",
                       "parts": [{"kind": "text", "text": "hi"}]}}
WORKING = task("t-1", "TASK_STATE_WORKING")

INPUT = task("t-1", "TASK_STATE_INPUT_REQUIRED")
REPEATED = {**DONE, "status": {"state": "TASK_STATE_COMPLETED", "message": {
    "messageId": "r-1", "role": "ROLE_AGENT", "parts": [{"text": "42"}]}},
    "artifacts": [{"artifactId": "a-1", "name": "answer", "parts": [{"text": "42"}]}]}


def _at(text: str, second: float, port: int | None = None) -> str:
    """A block recorded at a time (seconds after 07:40:00, ending 0.1 s later) from a client port."""
    header, rest = text.split("\n", 1)
    client = f"#@ client: 127.0.0.1:{port}\n" if port else ""
    return (f"{header}\n#@ start: 2026-11-30T07:40:{second:09.6f}Z\n#@ end: 2026-11-30T07:40:{second + 0.1:09.6f}Z\n"
            f"{client}{rest}")


# rule -> (blocks where it fires, the exchange it fires on, blocks of a near miss)
CASES = {
    "input-required-abandoned": (
        [fetch_card(1), rpc(2, "SendMessage", SEND, result={"task": INPUT}),
         rpc(3, "SendMessage", {"message": message("main", message_id="m-2")},
             result={"task": task("t-2", "TASK_STATE_COMPLETED")})], "3",
        [fetch_card(1), rpc(2, "SendMessage", SEND, result={"task": INPUT}),
         rpc(3, "SendMessage", {"message": {**message("main", task_id="t-1", message_id="m-2"), "contextId": "ctx-1"}},
             result={"task": DONE})],
    ),
    "connection-per-request": (
        [_at(fetch_card(1), 1.0, 40001), _at(rpc(2, "SendMessage", SEND, result={"task": DONE}), 2.0, 40002),
         _at(rpc(3, "SendMessage", {"message": message(message_id="m-2")}, result={"task": DONE}), 3.0, 40003)], "3",
        [_at(fetch_card(1), 1.0, 40001), _at(rpc(2, "SendMessage", SEND, result={"task": DONE}), 2.0, 40001),
         _at(rpc(3, "SendMessage", {"message": message(message_id="m-2")}, result={"task": DONE}), 3.0, 40001)],
    ),
    "card-not-fetched": (
        [_at(rpc(1, "SendMessage", SEND, result={"task": DONE}), 1.0),
         _at(rpc(2, "SendMessage", {"message": message(message_id="m-2")}, result={"task": DONE}), 2.0)], "1",
        [_at(fetch_card(1), 1.0), _at(rpc(2, "SendMessage", SEND, result={"task": DONE}), 2.0)],
    ),
    "answer-repeated": (
        [fetch_card(1), rpc(2, "SendMessage", SEND, result={"task": REPEATED})], "2",
        [fetch_card(1), rpc(2, "SendMessage", SEND, result={"task": {**REPEATED, "status": {
            "state": "TASK_STATE_COMPLETED"}}})],
    ),
    "card-path": (
        [fetch_card(1, path="/.well-known/agent.json", status=404), fetch_card(2)], "1",
        [fetch_card(1)],
    ),
    "card-refetch": (
        [fetch_card(1, response_headers=['ETag: W/"v1"']), fetch_card(2)], "2",
        [fetch_card(1, response_headers=['ETag: W/"v1"']),
         fetch_card(2, request_headers=['If-None-Match: W/"v1"'])],
    ),
    "capability-push": (
        [fetch_card(1), rpc(2, "CreateTaskPushNotificationConfig", {"taskId": "t-1", "url": "http://h/x"},
                            error=error(-32003, "PUSH_NOTIFICATION_NOT_SUPPORTED"))], "2",
        [fetch_card(1, PUSH), rpc(2, "CreateTaskPushNotificationConfig", {"taskId": "t-1", "url": "http://h/x"})],
    ),
    "capability-streaming": (
        [fetch_card(1), rpc(2, "SendStreamingMessage", SEND, error=error(-32004, "UNSUPPORTED_OPERATION"))], "2",
        [fetch_card(1, STREAMING), rpc(2, "SendStreamingMessage", SEND, events=[{"task": DONE}])],
    ),
    "capability-extended-card": (
        [fetch_card(1), rpc(2, "GetExtendedAgentCard", {}, error=error(-32004, "UNSUPPORTED_OPERATION"))], "2",
        [fetch_card(1, card(capabilities={"extendedAgentCard": True})),
         rpc(2, "GetExtendedAgentCard", {}, result=card())],
    ),
    "auth-missing": (
        [fetch_card(1, SECURED), rpc(2, "SendMessage", SEND, result={"task": DONE})], "2",
        [fetch_card(1, SECURED), rpc(2, "SendMessage", SEND, result={"task": DONE},
                                     headers=["A2A-Version: 1.0", "Authorization: Bearer x"])],
    ),
    "version-header-missing": (
        [fetch_card(1), rpc(2, "SendMessage", SEND, headers=["Content-Type: application/json"],
                            error=error(-32009, "VERSION_NOT_SUPPORTED"))], "2",
        [fetch_card(1), rpc(2, "SendMessage", SEND, result={"task": DONE})],
    ),
    "method-version-mismatch": (
        [fetch_card(1), rpc(2, "message/send", SEND, error=error(-32601))], "2",
        [fetch_card(1, V03), rpc(2, "message/send", SEND, headers=["Content-Type: application/json"],
                                 result={"kind": "task", "id": "t-1", "status": {"state": "completed"}})],
    ),
    "interface-undeclared": (
        [fetch_card(1), rpc(2, "SendMessage", SEND, path="/", result={"task": DONE})], "2",
        [fetch_card(1), rpc(2, "SendMessage", SEND, result={"task": DONE})],
    ),
    "interface-not-preferred": (
        [fetch_card(1, TWO_JSONRPC), rpc(2, "SendMessage", SEND, path="/legacy", result={"task": DONE})], "2",
        [fetch_card(1, TWO_JSONRPC), rpc(2, "SendMessage", SEND, result={"task": DONE})],
    ),
    "tenant-not-echoed": (
        [fetch_card(1, TENANT), rpc(2, "SendMessage", SEND, result={"task": DONE})], "2",
        [fetch_card(1, TENANT), rpc(2, "SendMessage", {**SEND, "tenant": "acme"}, result={"task": DONE})],
    ),
    "input-mode": (
        [fetch_card(1), rpc(2, "SendMessage", {"message": message(parts=[{"url": "http://x/a.png",
                                                                        "mediaType": "image/png"}])},
                            error=error(-32005, "CONTENT_TYPE_NOT_SUPPORTED"))], "2",
        [fetch_card(1, card(defaultInputModes=["text/plain", "image/*"])),
         rpc(2, "SendMessage", {"message": message(parts=[{"url": "http://x/a.png", "mediaType": "image/png"}])},
             result={"task": DONE})],
    ),
    "malformed-request": (
        [fetch_card(1), rpc(2, "SendMessage", {"message": {"role": "ROLE_USER", "parts": []}},
                            error=error(-32602, message_text="Invalid parameters"))], "2",
        [fetch_card(1), rpc(2, "SendMessage", SEND, error=error(-32603, message_text="Internal error"))],
    ),
    "task-unknown": (
        [fetch_card(1), rpc(2, "GetTask", {"id": "nope"}, error=error(-32001, "TASK_NOT_FOUND"))], "2",
        [fetch_card(1), rpc(2, "GetTask", {"id": "t-1"}, result=WORKING)],
    ),
    "poll-terminal": (
        [fetch_card(1), rpc(2, "SendMessage", SEND, result={"task": DONE}), rpc(3, "GetTask", {"id": "t-1"},
                                                                                 result=DONE)], "3",
        [fetch_card(1), rpc(2, "GetTask", {"id": "t-1"}, result=DONE),
         rpc(3, "GetTask", {"id": "t-1", "historyLength": 1}, result=DONE)],
    ),
    "cancel-terminal": (
        [fetch_card(1), rpc(2, "SendMessage", SEND, result={"task": DONE}),
         rpc(3, "CancelTask", {"id": "t-1"}, error=error(-32002, "TASK_NOT_CANCELABLE"))], "3",
        [fetch_card(1), rpc(2, "SendMessage", SEND, result={"task": WORKING}),
         rpc(3, "CancelTask", {"id": "t-1"}, result=task("t-1", "TASK_STATE_CANCELED"))],
    ),
    "message-terminal": (
        [fetch_card(1), rpc(2, "SendMessage", SEND, result={"task": DONE}),
         rpc(3, "SendMessage", {"message": message(task_id="t-1", message_id="m-2")},
             error=error(-32004, "UNSUPPORTED_OPERATION"))], "3",
        [fetch_card(1), rpc(2, "SendMessage", SEND, result={"task": task("t-1", "TASK_STATE_INPUT_REQUIRED")}),
         rpc(3, "SendMessage", {"message": message(task_id="t-1", message_id="m-2")}, result={"task": DONE})],
    ),
    "subscribe-terminal": (
        [fetch_card(1, STREAMING), rpc(2, "SendStreamingMessage", SEND, events=[{"task": WORKING}, {"statusUpdate": {
            "taskId": "t-1", "contextId": "ctx-1", "status": {"state": "TASK_STATE_COMPLETED"}}}]),
         rpc(3, "SubscribeToTask", {"id": "t-1"}, error=error(-32004, "UNSUPPORTED_OPERATION"))], "3",
        [fetch_card(1, STREAMING), rpc(2, "SendStreamingMessage", SEND, events=[{"task": WORKING}]),
         rpc(3, "SubscribeToTask", {"id": "t-1"}, events=[{"task": DONE}])],
    ),
    "poll-while-push-or-stream": (
        [fetch_card(1, STREAMING), rpc(2, "GetTask", {"id": "t-1"}, result=WORKING),
         rpc(3, "GetTask", {"id": "t-1"}, result=WORKING)], "3",
        [fetch_card(1), rpc(2, "GetTask", {"id": "t-1"}, result=WORKING),
         rpc(3, "GetTask", {"id": "t-1"}, result=WORKING)],
    ),
    "return-immediately-poll": (
        [fetch_card(1), rpc(2, "SendMessage", {**SEND, "configuration": {"returnImmediately": True}},
                            result={"task": WORKING}), rpc(3, "GetTask", {"id": "t-1"}, result=DONE)], "3",
        [fetch_card(1), rpc(2, "SendMessage", SEND, result={"task": WORKING}),
         rpc(3, "GetTask", {"id": "t-1"}, result=DONE)],
    ),
    "duplicate-message-id": (
        [fetch_card(1), rpc(2, "SendMessage", SEND, result={"task": DONE}),
         rpc(3, "SendMessage", SEND, result={"task": task("t-2", "TASK_STATE_COMPLETED")})], "3",
        [fetch_card(1), rpc(2, "SendMessage", SEND, result={"task": DONE}),
         rpc(3, "SendMessage", {"message": message(message_id="m-2")}, result={"task": DONE})],
    ),
    "list-past-last-page": (
        [fetch_card(1), rpc(2, "ListTasks", {}, result={"tasks": [], "nextPageToken": ""}),
         rpc(3, "ListTasks", {"pageToken": "abc"}, result={"tasks": [], "nextPageToken": ""})], "3",
        [fetch_card(1), rpc(2, "ListTasks", {}, result={"tasks": [], "nextPageToken": "abc"}),
         rpc(3, "ListTasks", {"pageToken": "abc"}, result={"tasks": [], "nextPageToken": ""})],
    ),
    "get-before-subscribe": (
        [fetch_card(1, STREAMING), rpc(2, "GetTask", {"id": "t-1"}, result=WORKING),
         rpc(3, "SubscribeToTask", {"id": "t-1"}, events=[{"task": WORKING}])], "3",
        [fetch_card(1, STREAMING), rpc(2, "SubscribeToTask", {"id": "t-1"}, events=[{"task": WORKING}])],
    ),
    "subscribe-verb": (
        [fetch_card(1, STREAMING), block(2, "subscribe", http_request("POST", "/tasks/t-1:subscribe",
                                                                       ["A2A-Version: 1.0"]),
                                         http_response(405, None, reason="Method Not Allowed"))], "2",
        [fetch_card(1, STREAMING), block(2, "subscribe", http_request("GET", "/tasks/t-1:subscribe",
                                                                       ["A2A-Version: 1.0"]),
                                         http_response(200, 'data: {"task": {"id": "t-1"}}',
                                                       content_type="text/event-stream"))],
    ),
    "interface-url-doubled": (
        [fetch_card(1, REST_V1), block(2, "send", http_request("POST", "/api/v1/v1/message:send", REST_HEAD, SEND_03),
                                       http_response(404, None, reason="Not Found"))], "2",
        [fetch_card(1, REST_API), block(2, "send", http_request("POST", "/api/v1/message:send", REST_HEAD, SEND_03),
                                        http_response(200, {"kind": "task", **DONE}))],
    ),
    "card-insecure-transport": (
        [block(1, "discover", http_request("GET", "/.well-known/agent-card.json", [], host="agents.example.com"),
               http_response(200, card()))], "1",
        [fetch_card(1)],
    ),
    "card-redirect": (
        [block(1, "discover", http_request("GET", "/.well-known/agent-card.json", []),
               http_response(301, None, ["Location: https://x/.well-known/agent-card.json"], "Moved"))], "1",
        [fetch_card(1)],
    ),
    "card-oversized": (
        [fetch_card(1, card(description="x" * 300_000))], "1",
        [fetch_card(1, card(description="x" * 3_000))],
    ),
    "card-schema": (
        [fetch_card(1, card(supportedInterfaces=None, skills=None))], "1",
        [fetch_card(1)],
    ),
    "card-secret": (
        [fetch_card(1, card(metadata={"apiKey": "sk-live-0123456789abcdefghijklmnop"}))], "1",
        [fetch_card(1, card(signatures=[{"protected": "eyJhbGciOiJIUzI1NiJ9", "signature": "abc"}]))],
    ),
    "unrecorded-origin": (
        [fetch_card(1), rpc(2, "GetExtendedAgentCard", {}, notes=[
            notes.UNRECORDED_ORIGIN.format(origin="http://10.0.0.7:9000")])], "2",
        [fetch_card(1), rpc(2, "GetExtendedAgentCard", {}, notes=[
            notes.CARD_REWRITTEN.format(old="http://10.0.0.7:9000/rpc", new="http://127.0.0.1:5000/rpc")])],
    ),
}


#: each rule's pair as docs/rules.md shows it: the capture it fires on, the near miss it stays quiet on
EXAMPLES = ROOT / "docs" / "rules"


def _text(blocks: list[str]) -> str:
    """Blocks as the capture file ``write`` makes of them."""
    return "\n\n".join(b.rstrip("\n") for b in blocks) + "\n"


def example_files() -> dict[str, str]:
    """docs/rules/ as these cases make it: `ID.fires.http` and `ID.quiet.http` for every rule."""
    files = {}
    for rule_id, (blocks, _, near_miss) in CASES.items():
        files[f"{rule_id}.fires.http"] = _text(blocks)
        files[f"{rule_id}.quiet.http"] = _text(near_miss)
    return files


def test_every_rule_has_a_case():
    assert sorted(CASES) == sorted(RULES)


def test_every_rule_has_a_bad_and_a_good_example():
    """docs/rules.md shows both for every rule, as ruff keeps a bad and a good example per rule."""
    assert [rule.id for rule in RULES.values() if not (rule.example and rule.good)] == []


def test_every_module_of_rules_is_imported_so_its_rules_register():
    """A module of analyze/rules/ left out of its __init__ registers nothing, silently."""
    import pkgutil

    from a2a_capture.analyze import rules

    modules = {f"{rules.__name__}.{info.name}" for info in pkgutil.iter_modules(rules.__path__)}
    assert modules and modules <= set(sys.modules)


def test_the_documented_examples_are_the_tested_cases():
    """docs/rules.md links each rule to its pair in docs/rules/: the very captures the two tests below
    run the rule on (docs/rules.md links them). Regenerate with `python -m tests.test_rules`."""
    assert {path.name: path.read_text() for path in EXAMPLES.glob("*.http")} == example_files()


@pytest.mark.parametrize("rule_id", sorted(CASES))
def test_rule_fires_on_the_right_exchange(rule_id):
    _, exchange, _ = CASES[rule_id]
    findings = analyze([EXAMPLES / f"{rule_id}.fires.http"]).findings
    hits = [(f.rule, f.exchange) for f in findings if f.rule == rule_id]
    assert hits == [(rule_id, exchange)], [(f.rule, f.exchange, f.message) for f in findings]
    finding = next(f for f in findings if f.rule == rule_id)
    assert finding.severity == RULES[rule_id].severity
    assert finding.spec and finding.message and finding.line


@pytest.mark.parametrize("rule_id", sorted(CASES))
def test_rule_stays_quiet_on_a_near_miss(rule_id):
    findings = analyze([EXAMPLES / f"{rule_id}.quiet.http"]).findings
    assert [f for f in findings if f.rule == rule_id] == []


def test_a_finding_names_the_exchange_that_had_answered(tmp_path):
    blocks, _, _ = CASES["capability-push"]
    finding = next(f for f in analyze([write(tmp_path, *blocks)]).findings if f.rule == "capability-push")
    assert finding.related == ["1"]
    assert "exchange 1" in finding.message


def test_a_note_in_the_capture_silences_one_rule_for_one_exchange(tmp_path):
    request = rpc(2, "CreateTaskPushNotificationConfig", {"taskId": "t-1", "url": "http://h/x"},
                  notes=["a2a-capture: ignore[capability-push]"])
    findings = analyze([write(tmp_path, fetch_card(1), request)]).findings
    assert [f.rule for f in findings] == []
    other = rpc(3, "CreateTaskPushNotificationConfig", {"taskId": "t-1", "url": "http://h/x"})
    findings = analyze([write(tmp_path, fetch_card(1), request, other)]).findings
    assert [(f.rule, f.exchange) for f in findings] == [("capability-push", "3")]


def test_cards_from_an_earlier_file_inform_the_next(tmp_path):
    first = write(tmp_path, fetch_card(1), name="cards.http")
    second = write(tmp_path, rpc(1, "SendStreamingMessage", SEND, error=error(-32004)), name="calls.http")
    findings = analyze([first, second]).findings
    assert [(f.rule, f.file, f.exchange) for f in findings] == [("capability-streaming", str(second), "1")]
    assert "exchange 1 of cards.http" in findings[0].message
    assert analyze([second]).findings == []  # without the card, nothing was ruled out


def test_broken_traffic_is_classified_not_a_crash(tmp_path):
    weird = [
        block(1, "binary", http_request("POST", "/rpc", ["Content-Type: application/octet-stream"], "\x01\x02")),
        block(2, "not json", http_request("POST", "/rpc", ["Content-Type: application/json"], "{nope"),
              http_response(500, "oops", content_type="text/plain")),
        block(3, "json array", http_request("POST", "/rpc", [], "[1, 2]"), http_response(200, "[]")),
        block(4, "card that is a list", http_request("GET", "/.well-known/agent-card.json", []),
              http_response(200, "[]")),
        block(5, "odd route", http_request("DELETE", "/tasks", []), http_response(405, None, reason="Nope")),
        rpc(6, "NoSuchMethod", {}, error=error(-32601)),
    ]
    analysis = analyze([write(tmp_path, *weird)])
    assert len(analysis.calls) == 6


def _timed(text: str, start: float, end: float) -> str:
    """A block with recorded start and end times (seconds after 07:40:00)."""
    def stamp(seconds: float) -> str:
        return f"2026-11-30T07:40:{seconds:09.6f}Z"
    header, rest = text.split("\n", 1)
    return f"{header}\n#@ start: {stamp(start)}\n#@ end: {stamp(end)}\n{rest}"


def test_a_call_is_judged_by_what_had_finished_when_it_started(tmp_path):
    """A recording is in the order calls finished: a webhook that landed while a GetTask was in
    flight was not known when the GetTask was sent, but it is known to the GetTask after it."""
    hook = block(1, "webhook", http_request("POST", "/hook", ["Content-Type: application/a2a+json"],
                                            {"statusUpdate": {"taskId": "t-1", "contextId": "c",
                                                              "status": {"state": "TASK_STATE_COMPLETED"}}}),
                 http_response(200, "ok", content_type="text/plain")).replace("### 1 · webhook", "### webhook 1 · hook")
    blocks = [
        _timed(fetch_card(1, PUSH), 0.0, 0.1),
        _timed(rpc(2, "SendMessage", {**SEND, "configuration": {"returnImmediately": True}},
                   result={"task": WORKING}), 1.0, 1.1),
        _timed(hook, 2.1, 2.2),                                             # finished first...
        _timed(rpc(3, "GetTask", {"id": "t-1"}, result=DONE), 2.0, 2.5),   # ...but this started before it
        _timed(rpc(4, "GetTask", {"id": "t-1"}, result=DONE), 3.0, 3.1),   # this one knew
    ]
    findings = analyze([write(tmp_path, *blocks)]).findings
    polls = [(f.exchange, f.related) for f in findings if f.rule == "poll-terminal"]
    assert polls == [("4", ["webhook 1", "3"])], [(f.exchange, f.rule, f.message) for f in findings]


def test_several_agents_on_one_host_each_keep_their_own_card(tmp_path):
    def agent_card(name, streaming):
        return card(name=name, capabilities={"streaming": streaming}, supportedInterfaces=[
            {"url": f"{ORIGIN}/agents/{name}/rpc", "protocolBinding": "JSONRPC", "protocolVersion": "1.0"}])

    blocks = [
        fetch_card(1, agent_card("a", True), path="/agents/a/.well-known/agent-card.json",
                   response_headers=['ETag: W/"a"']),
        fetch_card(2, agent_card("b", False), path="/agents/b/.well-known/agent-card.json"),
        rpc(3, "SendStreamingMessage", SEND, path="/agents/a/rpc", events=[{"task": DONE}]),
        rpc(4, "SendStreamingMessage", SEND, path="/agents/b/rpc", error=error(-32004, "UNSUPPORTED_OPERATION")),
        fetch_card(5, agent_card("a", True), path="/agents/a/.well-known/agent-card.json"),
    ]
    findings = analyze([write(tmp_path, *blocks)]).findings
    assert sorted((f.exchange, f.rule, tuple(f.related)) for f in findings) == [
        ("4", "capability-streaming", ("2",)), ("5", "card-refetch", ("1",))]
    assert next(f for f in findings if f.rule == "capability-streaming").agent_name == "b"


@pytest.mark.parametrize("closing", [("HTTP/1.1 200 OK\n", "HTTP/1.1 200 OK\nConnection: close\n"),
                                     ("HTTP/1.1 200 OK\n", "HTTP/1.0 200 OK\n")], ids=["close", "http10"])
def test_a_new_connection_the_agent_forced_is_not_the_clients_habit(tmp_path, closing):
    """An agent that ends each connection (`Connection: close`, or HTTP/1.0 as Python's http.server
    answers) leaves the client no connection to reuse: the same ports are no finding."""
    blocks = [block.replace(*closing) for block in CASES["connection-per-request"][0]]
    assert all(closing[1] in block for block in blocks)
    findings = analyze([write(tmp_path, *blocks)]).findings
    assert [f.exchange for f in findings if f.rule == "connection-per-request"] == []


def test_a_client_that_asked_for_the_card_and_got_none_did_fetch(tmp_path):
    """The ask that failed is judged on its own (a wrong path: card-path); card-not-fetched is for a
    client that never asked."""
    blocks = [_at(fetch_card(1, path="/.well-known/agent.json", status=404), 1.0),
              _at(rpc(2, "SendMessage", SEND, result={"task": DONE}), 2.0)]
    rules = [(f.exchange, f.rule) for f in analyze([write(tmp_path, *blocks)]).findings]
    assert ("2", "card-not-fetched") not in rules and ("1", "card-path") in rules, rules


if __name__ == "__main__":  # python -m tests.test_rules: write docs/rules/ from CASES
    for old in EXAMPLES.glob("*.http"):
        old.unlink()
    EXAMPLES.mkdir(exist_ok=True)
    for name, text in example_files().items():
        (EXAMPLES / name).write_text(text)
    print(f"wrote {len(example_files())} files to {EXAMPLES}", file=sys.stderr)
