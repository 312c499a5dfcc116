"""Live: gRPC recorded in forward mode, the client using the recorder as its HTTP proxy.

grpc honours `grpc.http_proxy` (and `http_proxy`/`https_proxy`) and tunnels each channel with
CONNECT. Inside the tunnel a plaintext agent gets HTTP/2 with prior knowledge (the h2c addon
makes that an HTTP/2 flow, as in reverse mode); a TLS agent gets TLS that mitmproxy ends with
a certificate from its own CA, which the client trusts. The a2a-sdk client fetches the card
through the proxy too, then streams a message and polls the task it saw finish.
"""

from __future__ import annotations

import socket
import threading

import grpc
import httpx
import pytest
from a2a.client import ClientConfig, create_client
from a2a.types import a2a_pb2, a2a_pb2_grpc

from a2a_capture.analyze.engine import analyze
from a2a_capture.capture import capture_bytes, read_capture
from a2a_capture.record import runner
from a2a_capture.record.process import free_port
from tests.grpc_agent import grpc_agent
from tests.live import Recorder, mitmproxy_trust, self_signed
from tests.test_grpc_live import _run, stream_then_poll

pytestmark = pytest.mark.live


async def _session(card_url: str, proxy: str, credentials: grpc.ChannelCredentials | None, verify) -> None:
    """The a2a-sdk client with every connection through ``proxy``: card, stream, a needless poll."""
    options = [("grpc.http_proxy", proxy)]

    def channel(url: str) -> grpc.aio.Channel:
        if credentials is None:
            return grpc.aio.insecure_channel(url, options=options)
        return grpc.aio.secure_channel(url, credentials, options=options)

    async with httpx.AsyncClient(proxy=proxy, verify=verify, trust_env=False) as http:
        config = ClientConfig(httpx_client=http, grpc_channel_factory=channel, supported_protocol_bindings=["GRPC"])
        client = await create_client(card_url, config)
        await stream_then_poll(client)
        await client.close()


def _check(output, grpc_port: int, *, tls: bool) -> None:
    data = output.read_bytes()
    capture = read_capture(output)
    assert capture_bytes(capture) == data  # reads back byte for byte
    card, stream, poll = capture.exchanges
    assert [e.title for e in capture.exchanges] == ["discover grpc-runner", "SendStreamingMessage", "GetTask"]
    assert card.response.status == 200 and card.request.target == "/.well-known/agent-card.json"
    for call in (stream, poll):
        assert call.request.header("host") == f"127.0.0.1:{grpc_port}" and call.request.http_version == "2"
        assert call.response.trailers[0] == ("grpc-status", "0")
        assert (f"over TLS to 127.0.0.1:{grpc_port}" in call.notes) == tls
    assert len(stream.response.event_times) >= 3
    found = {(f.rule, f.exchange) for f in analyze([output]).findings}
    assert ("poll-terminal", "3") in found, found
    assert not any(rule in ("interface-undeclared", "malformed-request", "recording-gap") for rule, _ in found), found


def test_a_plaintext_grpc_agent_is_recorded_through_the_forward_proxy(tmp_path):
    output, proxy = tmp_path / "forward.http", free_port()
    with grpc_agent() as (card_url, grpc_port):
        with Recorder(output, proxy_port=proxy):
            _run(_session(card_url, f"http://127.0.0.1:{proxy}", None, True))
    _check(output, grpc_port, tls=False)


def test_a_tls_grpc_agent_is_recorded_through_the_forward_proxy(tmp_path):
    """The client trusts mitmproxy's CA (made in a confdir of the test's own); the recorder
    trusts the agent's self-signed certificate as `record --upstream-trust` tells it."""
    key, cert = self_signed(tmp_path)
    output, proxy, confdir = tmp_path / "forward-tls.http", free_port(), tmp_path / "mitmproxy"
    trust = runner.command(str(output), [], None, mitmdump="mitmdump", upstream_trust=str(cert))[-2:]
    with grpc_agent(tls=(key, cert)) as (card_url, grpc_port):
        with Recorder(output, proxy_port=proxy, extra=[*trust, "--set", f"confdir={confdir}"]):
            ca = (confdir / "mitmproxy-ca-cert.pem").read_bytes()
            _run(_session(card_url, f"http://127.0.0.1:{proxy}", grpc.ssl_channel_credentials(ca),
                          mitmproxy_trust(confdir)))
    _check(output, grpc_port, tls=True)


def test_a_connection_that_passes_as_raw_tcp_is_named_in_a_warning(tmp_path):
    """What the recorder cannot read as HTTP (a tunnel whose bytes are neither TLS nor HTTP)
    passes through unrecorded; the recorder says so, naming where it went."""
    with socket.create_server(("127.0.0.1", 0)) as server:
        port = server.getsockname()[1]

        def echo() -> None:
            connection, _ = server.accept()
            with connection:
                connection.sendall(connection.recv(64))

        thread = threading.Thread(target=echo, daemon=True)
        thread.start()
        proxy = free_port()
        recorder = Recorder(tmp_path / "tcp.http", proxy_port=proxy)
        with socket.create_connection(("127.0.0.1", proxy)) as tunnel:
            tunnel.sendall(f"CONNECT 127.0.0.1:{port} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n\r\n".encode())
            assert tunnel.recv(1024).startswith(b"HTTP/1.1 200")
            tunnel.sendall(b"\x00\x01\x02 not http\x00")
            assert tunnel.recv(64) == b"\x00\x01\x02 not http\x00"
        thread.join(10)
        printed = recorder.stop()
    assert (f"a2a-capture: warning: a connection to 127.0.0.1:{port} passed through as raw TCP, not HTTP: "
            f"nothing of it is recorded (if it is an agent, record it in reverse mode: --agent "
            f"http://127.0.0.1:{port} --listen HOST:PORT)") in printed, printed
    assert printed.count("raw TCP") == 1, printed


def test_an_agent_certificate_the_recorder_does_not_trust_is_named_with_the_fix(tmp_path):
    """Without --upstream-trust a self-signed gRPC agent gets no call (the client is answered
    502 by the recorder): the recorder says which agent, and which option fixes it, once."""
    key, cert = self_signed(tmp_path)
    output, proxy, confdir = tmp_path / "untrusted.http", free_port(), tmp_path / "mitmproxy"

    async def two_calls(port: int, credentials) -> list[grpc.StatusCode]:
        codes = []
        async with grpc.aio.secure_channel(f"127.0.0.1:{port}", credentials,
                                           options=[("grpc.http_proxy", f"http://127.0.0.1:{proxy}")]) as channel:
            for _ in range(2):
                with pytest.raises(grpc.aio.AioRpcError) as refused:
                    await a2a_pb2_grpc.A2AServiceStub(channel).GetTask(a2a_pb2.GetTaskRequest(id="t-1"), timeout=20)
                codes.append(refused.value.code())
        return codes

    with grpc_agent(tls=(key, cert)) as (_, grpc_port):
        recorder = Recorder(output, proxy_port=proxy, extra=["--set", f"confdir={confdir}"])
        try:
            credentials = grpc.ssl_channel_credentials((confdir / "mitmproxy-ca-cert.pem").read_bytes())
            assert _run(two_calls(grpc_port, credentials)) == [grpc.StatusCode.UNAVAILABLE] * 2
        finally:
            printed = recorder.stop()
    warning = f"warning: the agent at 127.0.0.1:{grpc_port} has a TLS certificate the recorder does not trust"
    assert printed.count(warning) == 1, printed
    assert "record with --upstream-trust CA.pem (the CA that signed it), or --upstream-insecure" in printed
    exchanges = read_capture(output).exchanges
    assert exchanges and all("Certificate verify failed" in " ".join(e.notes) for e in exchanges)
