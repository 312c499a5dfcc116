"""Converters: HAR 1.2 and mitmproxy flows to captures and back."""

from __future__ import annotations

import base64
import json

import httpx
import pytest

from a2a_capture.capture import capture_bytes, read_capture
from a2a_capture.convert import ConvertError, capture_to_flows, capture_to_har, flows_to_capture, har_to_capture
from a2a_capture.convert.har import LOST_IN_HAR
from tests.conftest import DATA
from tests.live import Recorder, agent, free_port
from tests.test_cli_show import run

KIT_FILES = ["05-streaming.http", "07-auth-required.http", "11-errors.http", "15-push.http", "19-planner.http"]


@pytest.mark.parametrize("name", KIT_FILES)
def test_capture_to_har_and_back_is_lossless(kit, name):
    capture = read_capture(kit / name)
    back = har_to_capture(capture_to_har(capture))
    assert capture_bytes(back) == (kit / name).read_bytes()


def test_recorded_capture_through_har_and_flows_keeps_everything():
    original = (DATA / "sample-session.http").read_bytes()
    capture = read_capture(DATA / "sample-session.http")
    assert capture_bytes(har_to_capture(capture_to_har(capture))) == original
    assert capture_bytes(flows_to_capture(capture_to_flows(capture))) == original


def test_har_from_another_tool():
    stream = "data: {\"task\": {\"id\": \"t\", \"status\": {\"state\": \"TASK_STATE_WORKING\"}}}\n\n"
    har = {"log": {"version": "1.2", "creator": {"name": "Chrome DevTools"}, "entries": [
        {"startedDateTime": "2026-11-30T07:40:01.500Z", "time": 250.5, "serverIPAddress": "203.0.113.5",
         "request": {"method": "POST", "url": "https://agents.example.com/rpc?x=1", "httpVersion": "h2",
                     "headers": [{"name": ":authority", "value": "agents.example.com"},
                                 {"name": "content-type", "value": "application/json"}],
                     "postData": {"mimeType": "application/json", "text": "{\"jsonrpc\": \"2.0\"}"}},
         "response": {"status": 200, "statusText": "", "httpVersion": "h2",
                      "headers": [{"name": "content-type", "value": "text/event-stream"}],
                      "content": {"mimeType": "text/event-stream",
                                  "text": base64.b64encode(stream.encode()).decode(), "encoding": "base64"}}},
        {"startedDateTime": "2026-11-30T07:40:01.000Z", "time": 10,
         "request": {"method": "GET", "url": "https://agents.example.com/.well-known/agent-card.json",
                     "httpVersion": "HTTP/1.1", "headers": []},
         "response": {"status": 200, "statusText": "OK", "httpVersion": "HTTP/1.1", "headers": [],
                      "content": {"mimeType": "application/json", "text": "{\"name\": \"far\"}"}}},
    ]}}
    capture = har_to_capture(json.dumps(har).encode())
    first, second = capture.exchanges
    assert (first.number, first.request.target, second.request.target) == (1, "/.well-known/agent-card.json",
                                                                           "/rpc?x=1")
    assert second.request.header("host") == "agents.example.com"
    assert second.response.body == stream.encode() and len(second.response.events) == 1
    assert LOST_IN_HAR in second.notes and any("h2" in note for note in second.notes)
    assert second.meta.start == "2026-11-30T07:40:01.500000Z" and second.meta.end == "2026-11-30T07:40:01.750500Z"
    assert "converted from HAR written by Chrome DevTools" in capture.notes


@pytest.mark.live
def test_flows_from_a_real_mitmdump(tmp_path):
    """mitmdump -w writes flows; converting them gives what the addon recorded, bodies included."""
    flows, recorded = tmp_path / "session.mitm", tmp_path / "session.http"
    listen = free_port()
    with agent("test-runner", streaming=False) as upstream, \
            Recorder(recorded, [(upstream, listen)], extra=["-w", str(flows)]):
        with httpx.Client() as http:
            http.get(f"http://127.0.0.1:{listen}/.well-known/agent-card.json")
            http.post(f"http://127.0.0.1:{listen}/a2a/jsonrpc", headers={"A2A-Version": "1.0"}, json={
                "jsonrpc": "2.0", "id": 1, "method": "SendMessage",
                "params": {"message": {"messageId": "m", "role": "ROLE_USER", "parts": [{"text": "run"}]}}})
    converted = flows_to_capture(flows.read_bytes()).exchanges
    direct = read_capture(recorded).exchanges
    assert [e.title for e in converted] == [e.title for e in direct] == ["discover test-runner", "SendMessage"]
    assert [e.response.body for e in converted] == [e.response.body for e in direct]
    assert [e.request.body for e in converted] == [e.request.body for e in direct]


def test_convert_command_and_its_errors(tmp_path, kit):
    har = tmp_path / "out.har"
    result = run("convert", str(kit / "05-streaming.http"), "-o", str(har))
    assert result.returncode == 0 and b"wrote 1 exchanges" in result.stderr
    back = tmp_path / "back.http"
    assert run("convert", str(har), "-o", str(back)).returncode == 0
    assert back.read_bytes() == (kit / "05-streaming.http").read_bytes()
    broken = tmp_path / "broken.har"
    broken.write_text("{}")
    result = run("convert", str(broken), "-o", str(tmp_path / "x.http"))
    assert result.returncode == 2 and b"not a HAR 1.2 file" in result.stderr
    result = run("convert", str(kit / "05-streaming.http"), "-o", str(tmp_path / "x.unknown"))
    assert result.returncode == 2 and b"give --from/--to" in result.stderr
    with pytest.raises(ConvertError):
        flows_to_capture(b"this is not a flow file")


def test_analyze_report_and_show_read_har_and_flows_directly(kit, tmp_path):
    from a2a_capture.analyze.engine import analyze

    har, flows = tmp_path / "11.har", tmp_path / "11.mitm"
    capture = read_capture(kit / "11-errors.http")
    har.write_bytes(capture_to_har(capture))
    flows.write_bytes(capture_to_flows(capture))
    cards = kit / "01-agent-cards.http"
    expected = [(f.exchange, f.rule) for f in analyze([cards, kit / "11-errors.http"]).findings]
    assert [(f.exchange, f.rule) for f in analyze([cards, har]).findings] == expected
    assert [(f.exchange, f.rule) for f in analyze([cards, flows]).findings] == expected
    assert run("report", str(cards), str(har), "-o", str(tmp_path / "r.md")).returncode == 0
    assert json.loads(run("show", "--format", "json", str(flows)).stdout)[5]["title"] == capture.exchanges[5].title


#: captures the reader takes that the converters once could not write, or wrote and could not read
#: back (found by the fuzzer in tests/test_fuzz_converters.py)
ODD_CAPTURES = {
    "port-not-a-number": b"### 1 \xc2\xb7 x\nGET /a HTTP/1.1\nHost: a:xyz\n\nHTTP/1.1 200 OK\n\n",
    "client-port-past-65535": b"### 1 \xc2\xb7 x\n#@ client: 127.0.0.1:99999999999999\nGET /a HTTP/1.1\nHost: a:1\n\n"
                              b"HTTP/1.1 200 OK\n\n",
    "event-time-past-a-billion-seconds": b"### 1 \xc2\xb7 x\n#@ event-times: 1e31\nGET /a HTTP/1.1\nHost: a:1\n\n"
                                         b"HTTP/1.1 200 OK\ncontent-type: text/event-stream\n\ndata: {}\n\n",
    "number-past-10-to-the-18": b"### 99999999999999999999999 \xc2\xb7 x\nGET /a HTTP/1.1\nHost: a:1\n\n"
                                b"HTTP/1.1 200 OK\n\n",
    "ipv6-host-unclosed": b"### 1 \xc2\xb7 x\nGET /a HTTP/1.1\nHost: [::1\n\nHTTP/1.1 200 OK\n\n",
    "ipv6-host-without-port": b"### 1 \xc2\xb7 x\nGET /a HTTP/1.1\nHost: [::1]\n\nHTTP/1.1 200 OK\n\n",
    "bytes-not-utf8-in-meta-and-notes": b"#@ format:\x80a2a-capture/1\n# a note \xff\n\n### 1 \xc2\xb7 t\xfe\n"
                                        b"GET /a HTTP/1.1\nHost: h\xfd:1\n\nHTTP/1.1 200 OK\n\n",
}


@pytest.mark.parametrize("name", sorted(ODD_CAPTURES))
@pytest.mark.parametrize("suffix", ["har", "flow"])
def test_odd_captures_convert_and_read_back(tmp_path, name, suffix):
    source = tmp_path / f"{name}.http"
    source.write_bytes(ODD_CAPTURES[name])
    target = tmp_path / f"{name}.{suffix}"
    result = run("convert", str(source), "-o", str(target))
    assert result.returncode == 0, result.stderr
    back = read_capture(source).exchanges[0]
    converted = __import__("a2a_capture.sources", fromlist=["capture"]).capture(target).exchanges[0]
    assert converted.request.headers == back.request.headers and converted.request.target == back.request.target
    if suffix == "har":  # HAR keeps the bytes that were not UTF-8 exactly (as JSON escapes)
        assert capture_bytes(har_to_capture(target.read_bytes())) == capture_bytes(read_capture(source))
