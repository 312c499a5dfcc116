"""The recorder with real parts: mitmdump + the addon in front of a2a-sdk agents, real clients."""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
import time

import httpx
import pytest
from a2a.client import ClientConfig, create_client
from a2a.types import GetTaskRequest, Message, Part, Role, SendMessageRequest

from a2a_capture.capture import read_capture
from tests.live import Recorder, agent, free_port, mitmproxy_trust, serve

pytestmark = pytest.mark.live


def send(text: str, message_id: str) -> SendMessageRequest:
    return SendMessageRequest(message=Message(message_id=message_id, role=Role.ROLE_USER, parts=[Part(text=text)]))


class Wire:
    """What the client itself sent and received, to compare with the capture."""

    def __init__(self) -> None:
        self.sent: list[tuple[str, str, bytes]] = []
        self.received: list[bytes] = []

    async def on_request(self, request: httpx.Request) -> None:
        self.sent.append((request.method, request.url.path, request.content))

    async def on_response(self, response: httpx.Response) -> None:
        if not response.headers.get("content-type", "").startswith("text/event-stream"):
            self.received.append(await response.aread())

    def client(self, **options) -> httpx.AsyncClient:
        return httpx.AsyncClient(event_hooks={"request": [self.on_request], "response": [self.on_response]},
                                 **options)


def test_reverse_mode_records_an_sdk_session_exactly(tmp_path):
    output = tmp_path / "session.http"
    listen = free_port()
    wire = Wire()
    with agent("test-runner", streaming=True) as upstream, Recorder(output, [(upstream, listen)]):
        async def session():
            async with wire.client() as http:
                client = await create_client(f"http://127.0.0.1:{listen}", ClientConfig(httpx_client=http))
                events = [event async for event in client.send_message(send("run", "m-1"))]
                task_id = events[0].task.id
                await client.get_task(GetTaskRequest(id=task_id))
                blocking = await create_client(f"http://127.0.0.1:{listen}",
                                               ClientConfig(httpx_client=http, streaming=False))
                [event async for event in blocking.send_message(send("run again", "m-2"))]
                return events
        events = asyncio.run(session())
    capture = read_capture(output)
    exchanges = capture.exchanges
    # every exchange once, in the order the client sent them, with the bytes it sent
    assert [(e.request.method, e.request.target.split("?")[0], e.request.body) for e in exchanges] == wire.sent
    assert [e.number for e in exchanges] == list(range(1, len(wire.sent) + 1))
    plain = [e.response.body for e in exchanges if not e.response.is_event_stream]
    assert plain == wire.received
    # the card pointed the client back at the recorder, so the calls after it were recorded
    rpc = [e for e in exchanges if e.request.target == "/a2a/jsonrpc"]
    assert len(rpc) == 3 and all(e.request.header("host") == f"127.0.0.1:{listen}" for e in rpc)
    assert any("rewrote the card's interface" in note for note in exchanges[0].notes)
    stream = next(e for e in exchanges if e.response.is_event_stream)
    assert len(stream.response.events) == len(events)
    times = [event.at for event in stream.response.events]
    assert all(t is not None for t in times) and times == sorted(times)
    assert stream.meta.start and stream.meta.end and stream.meta.client and stream.meta.server
    assert stream.title == "SendStreamingMessage" and exchanges[0].title == "discover test-runner"


def test_sse_frames_reach_the_client_while_the_stream_runs(tmp_path):
    """Recording must not hold a stream back: the first frame arrives long before the last."""
    output = tmp_path / "stream.http"
    listen = free_port()
    body = {"jsonrpc": "2.0", "id": 1, "method": "SendStreamingMessage",
            "params": {"message": {"messageId": "m-1", "role": "ROLE_USER", "parts": [{"text": "run"}]}}}
    arrivals = []
    with agent("slow", streaming=True, step=0.15) as upstream, Recorder(output, [(upstream, listen)]):
        with httpx.Client(timeout=30) as http, http.stream(
                "POST", f"http://127.0.0.1:{listen}/a2a/jsonrpc", json=body,
                headers={"A2A-Version": "1.0", "Accept": "text/event-stream"}) as response:
            started = time.monotonic()
            for line in response.iter_lines():
                if line.startswith("data:"):
                    arrivals.append(time.monotonic() - started)
    assert len(arrivals) == 6
    assert arrivals[-1] - arrivals[0] > 0.4, arrivals  # frames came one by one, not at the end
    recorded = read_capture(output).exchanges[0].response.events
    assert len(recorded) == 6
    gaps = [b.at - a.at for a, b in itertools.pairwise(recorded)]
    assert all(gap >= 0 for gap in gaps) and recorded[-1].at - recorded[0].at > 0.4


def test_forward_proxy_with_a_plain_httpx_client(tmp_path):
    output = tmp_path / "proxy.http"
    proxy = free_port()
    with agent("test-runner", streaming=False) as upstream, Recorder(output, proxy_port=proxy):
        with httpx.Client(proxy=f"http://127.0.0.1:{proxy}") as http:  # explicit: loopback is not bypassed
            card = http.get(f"{upstream}/.well-known/agent-card.json")
            answer = http.post(f"{upstream}/a2a/jsonrpc", headers={"A2A-Version": "1.0"},
                               content=b'{"jsonrpc":"2.0","id":7,"method":"GetTask","params":{"id":"nope"}}')
    exchanges = read_capture(output).exchanges
    assert [e.title for e in exchanges] == ["discover test-runner", "GetTask"]
    assert exchanges[0].response.body == card.content
    assert exchanges[1].response.body == answer.content
    assert json.loads(answer.content)["error"]["code"] == -32001


def test_secrets_are_redacted_in_headers_bodies_frames_and_webhooks(tmp_path):
    output = tmp_path / "secrets.http"
    listen, proxy = free_port(), free_port()
    received = []

    async def hook(scope, receive, send):  # the client's push endpoint
        message = await receive()
        received.append(message.get("body", b""))
        await send({"type": "http.response.start", "status": 200, "headers": [(b"content-type", b"text/plain")]})
        await send({"type": "http.response.body", "body": b"ok"})

    body = {"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": {
        "message": {"messageId": "m-1", "role": "ROLE_USER", "parts": [{"text": "run"}]},
        "configuration": {"taskPushNotificationConfig": {
            "url": "", "token": "push-token-123", "authentication": {"scheme": "Bearer", "credentials": "cred-456"}}}}}
    push_proxy = f"http://127.0.0.1:{proxy}"  # the agent's webhooks pass the recorder
    with serve(hook) as hook_url, agent("pusher", streaming=True, push=True, push_proxy=push_proxy) as upstream, \
            Recorder(output, [(upstream, listen)], proxy_port=proxy):
        body["params"]["configuration"]["taskPushNotificationConfig"]["url"] = f"{hook_url}/a2a-events"
        with httpx.Client(timeout=30) as http:
            for _ in range(2):
                http.post(f"http://127.0.0.1:{listen}/a2a/jsonrpc?api_key=query-secret-789", json=body,
                          headers={"A2A-Version": "1.0", "Authorization": "Bearer bearer-secret-000",
                                   "Cookie": "session=cookie-secret-111"})
                body["params"]["message"]["messageId"] = "m-2"
        deadline = time.monotonic() + 10
        while len(received) < 4 and time.monotonic() < deadline:
            time.sleep(0.1)
    assert received, "the agent delivered webhooks"
    text = output.read_text()
    for secret in ("push-token-123", "cred-456", "query-secret-789", "bearer-secret-000", "cookie-secret-111"):
        assert secret not in text, secret
    capture = read_capture(output)
    webhooks = [e for e in capture.exchanges if e.webhook]
    assert webhooks, "the webhooks passed the recorder"
    assert all("[redacted: " in e.request.header("x-a2a-notification-token") for e in webhooks)
    assert all(e.request.header("authorization").startswith("Bearer [redacted: ") for e in webhooks)
    calls = [e for e in capture.exchanges if not e.webhook]
    first, second = calls[0].request.header("authorization"), calls[1].request.header("authorization")
    assert first == second  # the same secret, the same marker
    assert "header Authorization" in calls[0].meta.redacted
    assert any(item.startswith("body $.params.configuration") for item in calls[0].meta.redacted)


def test_kill_9_leaves_every_completed_exchange_readable(tmp_path):
    output = tmp_path / "killed.http"
    listen = free_port()
    with agent("slow", streaming=True, step=0.2) as upstream:
        recorder = Recorder(output, [(upstream, listen)])
        with httpx.Client(timeout=30) as http:
            for number in range(3):
                http.get(f"http://127.0.0.1:{listen}/.well-known/agent-card.json", params={"n": number})
            body = {"jsonrpc": "2.0", "id": 1, "method": "SendStreamingMessage", "params": {
                "message": {"messageId": "m-1", "role": "ROLE_USER", "parts": [{"text": "slow"}]}}}
            with http.stream("POST", f"http://127.0.0.1:{listen}/a2a/jsonrpc", json=body,
                             headers={"A2A-Version": "1.0"}) as response:
                for line in response.iter_lines():
                    if line.startswith("data:"):
                        recorder.kill()  # mid-stream
                        break
    capture = read_capture(output)
    assert [e.number for e in capture.exchanges] == [1, 2, 3]


def test_fifty_concurrent_clients_lose_no_exchange(tmp_path):
    output = tmp_path / "busy.http"
    listen = free_port()
    with agent("busy", streaming=False, step=0.01) as upstream, Recorder(output, [(upstream, listen)]):
        async def one(index: int) -> bytes:
            async with httpx.AsyncClient(timeout=60) as http:
                payload = {"jsonrpc": "2.0", "id": index, "method": "SendMessage", "params": {
                    "message": {"messageId": f"m-{index}", "role": "ROLE_USER", "parts": [{"text": "run"}]}}}
                response = await http.post(f"http://127.0.0.1:{listen}/a2a/jsonrpc", json=payload,
                                           headers={"A2A-Version": "1.0"})
                return response.content

        async def all_of_them():
            return await asyncio.gather(*(one(index) for index in range(50)))
        answers = asyncio.run(all_of_them())
    exchanges = read_capture(output).exchanges
    assert sorted(e.number for e in exchanges) == list(range(1, 51))
    ids = sorted(json.loads(e.request.body)["id"] for e in exchanges)
    assert ids == list(range(50))
    assert sorted(e.response.body for e in exchanges) == sorted(answers)


def test_a_refused_connection_is_recorded_as_such(tmp_path):
    output = tmp_path / "refused.http"
    listen, dead = free_port(), free_port()
    with Recorder(output, [(f"http://127.0.0.1:{dead}", listen)]):
        with httpx.Client() as http, contextlib.suppress(httpx.HTTPError):
            http.get(f"http://127.0.0.1:{listen}/.well-known/agent-card.json")  # mitmproxy hangs up or says 502
    exchange = read_capture(output).exchanges[0]
    assert exchange.request.target == "/.well-known/agent-card.json"
    assert any(note.startswith("error: ") and "refused" in note.lower() for note in exchange.notes), exchange.notes
    # the 502 the client got was mitmproxy's: said so, and not written as the agent's answer
    assert any("got 502 Bad Gateway from the proxy, not from the agent" in note for note in exchange.notes)
    assert exchange.response is None


def _load_addon():
    import importlib.util

    from a2a_capture.resources import addons_dir

    spec = importlib.util.spec_from_file_location("a2a_recorder", addons_dir() / "a2a_recorder.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_a_failure_inside_the_addon_never_reaches_the_traffic(tmp_path, monkeypatch, caplog):
    from mitmproxy.test import taddons, tflow

    module = _load_addon()
    recorder = module.A2ARecorder()
    with taddons.context(recorder) as context:
        context.configure(recorder, a2a_capture=str(tmp_path / "x.http"))
        flow = tflow.tflow(resp=True)
        recorder.request(flow)
        recorder.responseheaders(flow)

        def broken(*args, **kwargs):
            raise RuntimeError("boom")

        monkeypatch.setattr(module.flow_exchange, "exchange_from_flow", broken)
        recorder.response(flow)  # must not raise: mitmproxy would otherwise report the flow as failed
        assert "could not record an exchange" in caplog.text
        monkeypatch.undo()
        second = tflow.tflow(resp=True)
        recorder.request(second)
        recorder.response(second)
        recorder.done()
    assert [e.number for e in read_capture(tmp_path / "x.http").exchanges] == [2]


def test_a_stream_cut_by_the_agent_is_recorded_with_what_arrived(tmp_path):
    import os
    import subprocess
    import sys

    from tests.live import ROOT, wait_for_port

    output = tmp_path / "cut.http"
    port, listen = free_port(), free_port()
    server = subprocess.Popen([sys.executable, "-m", "tests.agents", "--port", str(port), "--streaming"],
                              cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)})
    try:
        wait_for_port(port)
        with Recorder(output, [(f"http://127.0.0.1:{port}", listen)]):
            body = {"jsonrpc": "2.0", "id": 1, "method": "SendStreamingMessage", "params": {
                "message": {"messageId": "m-1", "role": "ROLE_USER", "parts": [{"text": "slow"}]}}}
            with httpx.Client(timeout=30) as http, contextlib.suppress(httpx.HTTPError):
                with http.stream("POST", f"http://127.0.0.1:{listen}/a2a/jsonrpc", json=body,
                                 headers={"A2A-Version": "1.0"}) as response:
                    frames = 0
                    for line in response.iter_lines():
                        if line.startswith("data:"):
                            frames += 1
                            if frames == 3:
                                server.kill()  # the agent dies mid-stream
            time.sleep(0.5)
    finally:
        server.kill()
        server.wait(10)
    exchange = read_capture(output).exchanges[0]
    assert len(exchange.response.events) >= 3
    assert any(note.startswith("error: the agent closed the connection after part of the response")
               for note in exchange.notes), exchange.notes


def test_http2_and_tls_flows_are_written_as_http11_with_a_note():
    from mitmproxy.test import tflow

    from a2a_capture.capture import capture_bytes
    from a2a_capture.capture.models import Capture
    from a2a_capture.capture.reader import read_capture_bytes
    from a2a_capture.flow_exchange import exchange_from_flow

    flow = tflow.tflow(resp=True)
    flow.request.http_version = "HTTP/2.0"
    flow.request.scheme = "https"
    flow.request.headers.pop("host", None)
    flow.response.http_version = "HTTP/2.0"
    exchange = exchange_from_flow(flow, 1)
    assert exchange.request.http_version == "1.1" and exchange.response.http_version == "1.1"
    assert "recorded over HTTP/2.0; written as HTTP/1.1 text" in exchange.notes
    assert any(note.startswith("over TLS to ") for note in exchange.notes)
    assert exchange.request.header("host")  # :authority became a Host header
    data = capture_bytes(Capture(exchanges=[exchange]))
    assert b" HTTP/1.1\n" in data and read_capture_bytes(data).exchanges == [exchange]


def test_a_secret_inside_a_compressed_body_is_redacted():
    import gzip

    from mitmproxy.test import tflow

    from a2a_capture.flow_exchange import exchange_from_flow
    from a2a_capture.record.redact import Redactor

    flow = tflow.tflow(resp=True)
    flow.response.headers["content-type"] = "application/json"
    flow.response.headers["content-encoding"] = "gzip"
    flow.response.raw_content = gzip.compress(b'{"result": {"url": "http://h/x", "token": "push-secret-42"}}')
    exchange = exchange_from_flow(flow, 1, redactor=Redactor(b"k"))
    assert b"push-secret-42" not in exchange.response.body and b"[redacted: token" in exchange.response.body
    assert exchange.response.header("content-encoding") is None
    assert any("decoded this gzip body" in note for note in exchange.notes)


def test_the_record_command_starts_says_where_and_stops_cleanly_on_sigterm(tmp_path):
    import os
    import signal
    import socket
    import subprocess
    import sys

    from tests.live import ROOT, wait_for_port

    output, listen = tmp_path / "cli.http", free_port()
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    with agent("test-runner") as upstream:
        process = subprocess.Popen([sys.executable, "-m", "a2a_capture.cli", "record", "--agent", upstream,
                                    "--listen", f"127.0.0.1:{listen}", "-o", str(output)],
                                   stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=env)
        try:
            wait_for_port(listen)
            httpx.get(f"http://127.0.0.1:{listen}/.well-known/agent-card.json")
            time.sleep(0.3)
        finally:
            process.send_signal(signal.SIGTERM)
            printed = process.communicate(timeout=30)[0].decode()
    assert process.returncode == 0, printed
    assert f"recording {upstream} at http://127.0.0.1:{listen}" in printed
    assert f"wrote 1 exchange to {output}" in printed
    assert read_capture(output).exchanges[0].title == "discover test-runner"
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        busy = subprocess.run([sys.executable, "-m", "a2a_capture.cli", "record", "--proxy", f"127.0.0.1:{port}",
                               "-o", str(tmp_path / "x.http")], capture_output=True, env=env, timeout=30)
    assert busy.returncode == 2 and f"cannot listen on 127.0.0.1:{port}".encode() in busy.stderr


def test_https_is_recorded_with_a_note(tmp_path):
    """A client going through the forward proxy to an agent over TLS (HTTP/2 is unit-tested above:
    uvicorn speaks HTTP/1.1 only, and mitmproxy follows the upstream's protocol)."""
    from tests.live import tls_agent

    proxy = free_port()
    output = tmp_path / "tls.http"
    with tls_agent("secure", tmp_path, streaming=False) as url:
        # mitmproxy makes its CA in confdir; the client trusts it, as a user would
        with Recorder(output, proxy_port=proxy, extra=["--set", f"confdir={tmp_path}", "--set", "ssl_insecure=true"]):
            with httpx.Client(proxy=f"http://127.0.0.1:{proxy}", verify=mitmproxy_trust(tmp_path), http2=True) as http:
                card = http.get(f"{url}/.well-known/agent-card.json")
        assert card.status_code == 200
    exchange = read_capture(output).exchanges[0]
    assert f"over TLS to {url.removeprefix('https://')}" in exchange.notes
    assert exchange.request.header("host") and exchange.response.body == card.content
    assert exchange.title == "discover secure"


def test_a_card_that_names_another_recorded_server_is_pointed_at_its_listener(tmp_path):
    """The card comes from one server and names another for JSON-RPC: both are recorded."""
    from tests.agents import build_app
    from tests.live import serve

    output = tmp_path / "split.http"
    card_port, rpc_port, card_listen, rpc_listen = free_port(), free_port(), free_port(), free_port()
    card_app = build_app("split", card_port, public_base=f"http://127.0.0.1:{rpc_port}")
    with serve(card_app, card_port) as card_url, agent("split", rpc_port) as rpc_url, \
            Recorder(output, [(card_url, card_listen), (rpc_url, rpc_listen)]):
        async def session():
            async with httpx.AsyncClient() as http:
                client = await create_client(f"http://127.0.0.1:{card_listen}", ClientConfig(httpx_client=http))
                [event async for event in client.send_message(send("run", "m-1"))]
        asyncio.run(session())
    exchanges = read_capture(output).exchanges
    card = json.loads(exchanges[0].response.body)
    assert card["supportedInterfaces"][0]["url"] == f"http://127.0.0.1:{rpc_listen}/a2a/jsonrpc"
    assert [e.title for e in exchanges] == ["discover split", "SendStreamingMessage"]
    assert exchanges[1].request.header("host") == f"127.0.0.1:{rpc_listen}"


def test_configure_keeps_recording_into_the_old_file_when_the_new_cannot_open(tmp_path):
    """mitmproxy's idiom: a bad option value raises OptionsError and the old value stays in force."""
    import pytest
    from mitmproxy import exceptions
    from mitmproxy.test import taddons, tflow

    recorder = _load_addon().A2ARecorder()
    with taddons.context(recorder) as context:
        context.configure(recorder, a2a_capture=str(tmp_path / "first.http"))
        with pytest.raises(exceptions.OptionsError, match="cannot record to"):
            context.configure(recorder, a2a_capture=str(tmp_path / "no-such-folder" / "x.http"))
        with pytest.raises(exceptions.OptionsError, match="UPSTREAM=LISTENER"):
            context.configure(recorder, a2a_routes=["not a route"])
        flow = tflow.tflow(resp=True)
        recorder.request(flow)
        recorder.response(flow)
        recorder.done()
    assert [e.number for e in read_capture(tmp_path / "first.http").exchanges] == [1]
