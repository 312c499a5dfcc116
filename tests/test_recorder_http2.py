"""HTTP/2 recorded live: an a2a-sdk agent served over HTTP/2 with TLS and ALPN (hypercorn), an
HTTP/2 client (httpx, http2=True), in forward and in reverse mode, with an SSE stream whose
frames reach the client while it runs. The capture reads back as ordinary exchanges with a note.
An agent that resets a stream (RST_STREAM), or closes its connection under it, has the client's
stream reset too, not answered with a 502 of mitmproxy's, and the capture says what the agent did.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
import ssl
import threading
import time

import httpx
import pytest

from a2a_capture.capture import read_capture
from a2a_capture.record import notes
from tests.agents import build_app
from tests.live import Recorder, free_port, mitmproxy_trust, self_signed, wait_for_port
from tests.reset_agent import FIRST_EVENT, HOW, ResetAgent

pytestmark = pytest.mark.live

H2_NOTE = "recorded over HTTP/2.0; written as HTTP/1.1 text"


@contextlib.contextmanager
def h2_agent(name: str, directory, **options):
    """The a2a-sdk agent served by hypercorn over TLS, offering h2 by ALPN; yields its https URL."""
    from hypercorn.asyncio import serve
    from hypercorn.config import Config

    port = free_port()
    key_file, cert_file = self_signed(directory)
    config = Config()
    config.bind = [f"127.0.0.1:{port}"]
    config.certfile, config.keyfile = str(cert_file), str(key_file)
    config.alpn_protocols = ["h2"]  # HTTP/2 only: a fall back to HTTP/1.1 would fail the test
    config.loglevel = "WARNING"
    app = build_app(name, port, public_base=f"https://127.0.0.1:{port}", step=0.15, **options)
    loop = asyncio.new_event_loop()
    stopped = asyncio.Event()

    def run() -> None:
        loop.run_until_complete(serve(app, config, shutdown_trigger=stopped.wait))

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    wait_for_port(port)
    try:
        yield f"https://127.0.0.1:{port}"
    finally:
        loop.call_soon_threadsafe(stopped.set)
        thread.join(10)


STREAM = {"jsonrpc": "2.0", "id": 1, "method": "SendStreamingMessage",
          "params": {"message": {"messageId": "m-1", "role": "ROLE_USER", "parts": [{"text": "run"}]}}}


def _session(http: httpx.Client, base: str) -> tuple[httpx.Response, list[float]]:
    card = http.get(f"{base}/.well-known/agent-card.json")
    assert card.http_version == "HTTP/2", card.http_version
    arrivals = []
    with http.stream("POST", f"{base}/a2a/jsonrpc", json=STREAM,
                     headers={"A2A-Version": "1.0", "Accept": "text/event-stream"}) as response:
        assert response.http_version == "HTTP/2"
        started = time.monotonic()
        for line in response.iter_lines():
            if line.startswith("data:"):
                arrivals.append(time.monotonic() - started)
    return card, arrivals


def _assert_recorded(output, card: httpx.Response, arrivals: list[float]) -> None:
    assert len(arrivals) == 6 and arrivals[-1] - arrivals[0] > 0.4, arrivals  # frames came one by one
    exchanges = read_capture(output).exchanges
    assert [e.title for e in exchanges] == ["discover h2", "SendStreamingMessage"]
    assert all(H2_NOTE in e.notes and e.request.http_version == "1.1" for e in exchanges)
    assert exchanges[0].response.body == card.content
    events = exchanges[1].response.events
    assert len(events) == 6
    assert all(b.at >= a.at for a, b in itertools.pairwise(events)) and events[-1].at - events[0].at > 0.4


def test_http2_through_the_forward_proxy(tmp_path):
    output, proxy = tmp_path / "h2-forward.http", free_port()
    with h2_agent("h2", tmp_path) as upstream, \
            Recorder(output, proxy_port=proxy, extra=["--set", f"confdir={tmp_path}", "--set", "ssl_insecure=true"]):
        with httpx.Client(proxy=f"http://127.0.0.1:{proxy}", verify=mitmproxy_trust(tmp_path), http2=True,
                          timeout=30) as http:
            card, arrivals = _session(http, upstream)
    _assert_recorded(output, card, arrivals)


def test_http2_in_reverse_mode_with_a_tls_listener(tmp_path):
    output, listen = tmp_path / "h2-reverse.http", free_port()
    trust = ["--set", f"confdir={tmp_path}", "--set", "ssl_insecure=true"]
    with h2_agent("h2", tmp_path) as upstream, Recorder(output, [(upstream, listen)], extra=trust):
        with httpx.Client(verify=mitmproxy_trust(tmp_path), http2=True, timeout=30) as http:
            card, arrivals = _session(http, f"https://127.0.0.1:{listen}")
    _assert_recorded(output, card, arrivals)
    interfaces = [i["url"] for i in json.loads(card.content)["supportedInterfaces"]]
    assert interfaces == [f"https://127.0.0.1:{listen}/a2a/jsonrpc", f"https://127.0.0.1:{listen}/a2a/rest"]


def _calls(base: str, **client) -> tuple[list[tuple], list[str]]:
    """Two streaming calls on one HTTP/2 connection; what each got (the status and the bytes
    that came, and the stream reset that ended it, if one did) and its HTTP version."""
    outcomes, versions = [], []
    with httpx.Client(http2=True, timeout=10, **client) as http:
        for index in (1, 2):
            request = {**STREAM, "id": index}
            body, status = b"", None
            try:
                with http.stream("POST", f"{base}/a2a/jsonrpc", json=request,
                                 headers={"A2A-Version": "1.0", "Accept": "text/event-stream"}) as response:
                    status = response.status_code
                    versions.append(response.http_version)
                    for chunk in response.iter_bytes():
                        body += chunk
                outcomes.append((status, body, None))
            except httpx.RemoteProtocolError as error:  # httpx names h2's StreamReset event
                outcomes.append((status, body, str(error)))
    return outcomes, versions


@pytest.mark.parametrize("mode", ["reverse", "forward"])
@pytest.mark.parametrize("how", HOW)
def test_an_agent_that_resets_a_stream_or_ends_its_connection_resets_the_clients_stream(tmp_path, how, mode):
    tls = self_signed(tmp_path)
    with ResetAgent(how, tls) as direct:
        expected, _ = _calls(direct.url, verify=ssl.create_default_context(cafile=str(tls[1])))
    assert expected[0][2] is not None and expected[1][0] == 200  # the first call failed, the second not

    output = tmp_path / "reset.http"
    trust = ["--set", f"confdir={tmp_path}", "--set", "ssl_insecure=true"]
    with ResetAgent(how, tls) as upstream:
        if mode == "reverse":
            listen = free_port()
            with Recorder(output, [(upstream.url, listen)], extra=trust):
                got, versions = _calls(f"https://127.0.0.1:{listen}", verify=mitmproxy_trust(tmp_path))
        else:
            proxy = free_port()
            with Recorder(output, proxy_port=proxy, extra=trust):
                got, versions = _calls(upstream.url, proxy=f"http://127.0.0.1:{proxy}",
                                       verify=mitmproxy_trust(tmp_path))
    assert set(versions) == {"HTTP/2"}
    if how in ("goaway", "hang-up"):
        # the agent's connection ended: directly the client's did too; through the recorder its
        # stream is reset (no 502 of mitmproxy's), and its next call reaches a new agent connection
        assert expected[0][2] in ("<ConnectionTerminated error_code:2, last_stream_id:0, additional_data:None>",
                                  "Server disconnected")
        assert got[0] == (None, b"", "<StreamReset stream_id:1, error_code:2, remote_reset:True>")
        assert got[1] == expected[1]
        assert upstream.connections == [1, 2]
    else:
        # the client's stream was reset as the agent's was (no 502 of mitmproxy's), and the
        # connection lived on: the next call went on it, on the agent's side too
        assert expected[0][2] == "<StreamReset stream_id:1, error_code:2, remote_reset:True>"
        assert got == expected
        assert upstream.connections == [1, 1]

    first, second = read_capture(output).exchanges
    assert second.response.status == 200 and not second.notes[2:]
    if how in ("goaway", "hang-up"):
        assert first.response is None
        assert first.notes[2].startswith("error: the agent closed the connection (")
        assert notes.CLOSED_H2_LIKE_AGENT in first.notes
    elif how == "before-answer":
        assert first.response is None
        assert "error: the agent reset the stream (RST_STREAM INTERNAL_ERROR)" in first.notes
        assert notes.RESET_LIKE_AGENT.format(passed="stream was reset too (RST_STREAM INTERNAL_ERROR)") \
            in first.notes
    else:  # what came before the reset is kept
        assert first.response.status == 200 and first.response.body == FIRST_EVENT
        assert "error: the agent reset the stream after part of the response (RST_STREAM INTERNAL_ERROR)" \
            in first.notes
    assert not notes.proxy_answered(first.notes), first.notes
