"""Origins from what the capture knows: HTTPS, absolute-form targets, HAR URLs, reverse-proxy listeners."""

from __future__ import annotations

import json

from a2a_capture.analyze.engine import analyze
from a2a_capture.convert import convert
from tests.builders import block, card, http_request, http_response, message, task, write

SECURE = "agents.example.com"
SECURE_CARD = card(supportedInterfaces=[{"url": f"https://{SECURE}/rpc", "protocolBinding": "JSONRPC",
                                         "protocolVersion": "1.0"}])
SEND = {"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": {"message": message()}}
DONE = {"jsonrpc": "2.0", "id": 1, "result": {"task": task("t-1", "TASK_STATE_COMPLETED")}}
HEADERS = ["Content-Type: application/json", "A2A-Version: 1.0"]


def _tls(text: str, host: str) -> str:
    return f"# over TLS to {host}\n{text}"


def _https_session(path: str = "/rpc") -> list[str]:
    return [
        block(1, "discover", _tls(http_request("GET", "/.well-known/agent-card.json", [], host=SECURE),
                                  f"{SECURE}:443"), http_response(200, SECURE_CARD)),
        block(2, "SendMessage", _tls(http_request("POST", path, HEADERS, SEND, host=SECURE), f"{SECURE}:443"),
              http_response(200, DONE)),
    ]


def test_a_correct_https_client_gets_no_finding(tmp_path):
    analysis = analyze([write(tmp_path, *_https_session())])
    assert analysis.findings == [], [f.message for f in analysis.findings]
    assert {call.agent for call in analysis.calls} == {f"https://{SECURE}:443"}


def test_an_https_client_off_its_interface_is_told_in_https_terms(tmp_path):
    finding = next(f for f in analyze([write(tmp_path, *_https_session("/other"))]).findings)
    assert finding.rule == "interface-undeclared"
    assert f"call to https://{SECURE}:443/other" in finding.message
    assert f"declares JSONRPC https://{SECURE}/rpc" in finding.message


def test_an_absolute_form_target_gives_its_scheme(tmp_path):
    blocks = [block(1, "discover", http_request("GET", f"https://{SECURE}/.well-known/agent-card.json", [],
                                                host=SECURE), http_response(200, SECURE_CARD)),
              block(2, "SendMessage", http_request("POST", f"https://{SECURE}/rpc", HEADERS, SEND, host=SECURE),
                    http_response(200, DONE))]
    assert analyze([write(tmp_path, *blocks)]).findings == []


def test_plain_http_to_a_remote_host_is_still_insecure(tmp_path):
    blocks = [block(1, "discover", http_request("GET", "/.well-known/agent-card.json", [], host=SECURE),
                    http_response(200, SECURE_CARD))]
    assert [f.rule for f in analyze([write(tmp_path, *blocks)]).findings] == ["card-insecure-transport"]


def test_a_har_url_gives_its_scheme(tmp_path):
    entries = []
    for method, path, body, answer, at in (("GET", "/.well-known/agent-card.json", None, SECURE_CARD, "00.000"),
                                           ("POST", "/rpc", SEND, DONE, "00.010")):  # the card came first
        request = {"method": method, "url": f"https://{SECURE}{path}", "httpVersion": "HTTP/1.1",
                   "headers": [{"name": "A2A-Version", "value": "1.0"}]}
        if body is not None:
            request["postData"] = {"mimeType": "application/json", "text": json.dumps(body)}
        entries.append({"startedDateTime": f"2026-01-01T00:00:{at}Z", "time": 5, "request": request,
                        "response": {"status": 200, "statusText": "OK", "httpVersion": "HTTP/1.1",
                                     "headers": [{"name": "Content-Type", "value": "application/json"}],
                                     "content": {"mimeType": "application/json", "text": json.dumps(answer)}}})
    har = tmp_path / "browser.har"
    har.write_text(json.dumps({"log": {"version": "1.2", "creator": {"name": "browser"}, "entries": entries}}))
    analysis = analyze([har])
    assert analysis.findings == [], [f.message for f in analysis.findings]
    capture = tmp_path / "browser.http"
    convert(str(har), str(capture))
    assert analyze([capture]).findings == []


def _reverse(path: str, rewritten: bool) -> list[str]:
    """A reverse-mode recording: the client talks to the listener :51241, the agent is :41241."""
    upstream = card(supportedInterfaces=[{"url": "http://127.0.0.1:41241/rpc", "protocolBinding": "JSONRPC",
                                          "protocolVersion": "1.0"}])
    note = ("# a2a-capture rewrote the card's interface http://127.0.0.1:41241/rpc to "
            "http://127.0.0.1:51241/rpc so later calls pass the recorder\n")
    served = card(supportedInterfaces=[{"url": "http://127.0.0.1:51241/rpc", "protocolBinding": "JSONRPC",
                                        "protocolVersion": "1.0"}]) if rewritten else upstream
    meta = "#@ server: 127.0.0.1:41241\n"
    return [
        block(1, "discover", meta + (note if rewritten else "")
              + http_request("GET", "/.well-known/agent-card.json", [], host="127.0.0.1:51241"),
              http_response(200, served)),
        block(2, "SendMessage", meta + http_request("POST", path, HEADERS, SEND, host="127.0.0.1:51241"),
              http_response(200, DONE)),
    ]


def test_a_reverse_proxy_listener_stands_for_its_upstream(tmp_path):
    for rewritten in (True, False):
        analysis = analyze([write(tmp_path, *_reverse("/rpc", rewritten))])
        assert analysis.findings == [], [f.message for f in analysis.findings]


def test_reverse_mode_messages_compare_the_listener_with_the_listener(tmp_path):
    finding = next(f for f in analyze([write(tmp_path, *_reverse("/wrong", False))]).findings)
    assert finding.rule == "interface-undeclared"
    assert "call to http://127.0.0.1:51241/wrong" in finding.message
    assert "declares JSONRPC http://127.0.0.1:51241/rpc" in finding.message
    assert "41241" not in finding.message


def test_a_jsonrpc_url_is_taken_exactly(tmp_path):
    from tests.builders import fetch_card, rpc
    blocks = [fetch_card(1), rpc(2, "SendMessage", {"message": message()}, path="/rpc/",
                                 error={"code": -32601, "message": "not found"})]
    finding = next(f for f in analyze([write(tmp_path, *blocks)]).findings)
    assert (finding.rule, finding.wasted) == ("interface-undeclared", True)


def test_a_webhook_does_not_make_its_receiver_the_front_of_an_agent(tmp_path):
    from tests.builders import fetch_card, rpc
    hook = block(2, "webhook", "#@ server: localhost:9001\n" + http_request(
        "POST", "/hook", ["Content-Type: application/json", "X-A2A-Notification-Token: t"],
        {"statusUpdate": {"taskId": "t-1", "status": {"state": "TASK_STATE_WORKING"}}}, host="127.0.0.1:7000"),
        http_response(200, {}))
    hook = hook.replace("### 2 · webhook", "### webhook 1 · webhook")
    blocks = [fetch_card(1), hook, rpc(2, "SendMessage", {"message": message()}, result=DONE["result"])]
    assert analyze([write(tmp_path, *blocks)]).findings == []
