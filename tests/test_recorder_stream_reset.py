"""Who reset an HTTP/2 stream: mitmproxy says "stream reset by client" for a reset from either
side, so the recorder tells the side from the two connections' protocols and the code. (The
agent's reset is tested live in tests/test_recorder_http2.py.)"""

from __future__ import annotations

import pytest
from mitmproxy import flow as mitmproxy_flow
from mitmproxy.test import tflow

from a2a_capture import flow_exchange
from a2a_capture.record import flows, notes


def _reset(code: str, client: bytes | None = b"h2", server: bytes | None = b"h2", answered: bool = False):
    flow = tflow.tflow(resp=answered)
    flow.client_conn.alpn, flow.server_conn.alpn = client, server
    flow.error = mitmproxy_flow.Error(f"stream reset by client ({code})")
    return flow


@pytest.mark.parametrize(("code", "client", "server", "by_agent"), [
    ("INTERNAL_ERROR", b"h2", b"h2", True),
    ("REFUSED_STREAM", b"h2", b"h2", True),
    ("CANCEL", b"h2", b"h2", None),  # clients cancel the streams they stop waiting for; agents may
    ("CANCEL", b"http/1.1", b"h2", True),  # an HTTP/1 client has no stream to reset
    ("INTERNAL_ERROR", b"h2", b"http/1.1", False),  # nor has an HTTP/1 agent
])
def test_the_side_that_reset(code, client, server, by_agent):
    assert flow_exchange.stream_reset(_reset(code, client, server)) == (code, by_agent)


def test_other_errors_are_no_reset():
    flow = tflow.tflow()
    flow.error = mitmproxy_flow.Error("server closed connection")
    assert flow_exchange.stream_reset(flow) is None
    assert flows.passed_on(flow) == notes.CLOSED_LIKE_AGENT


def test_what_the_client_is_told_of_an_agents_reset():
    assert flows.passed_on(_reset("REFUSED_STREAM")) == notes.RESET_LIKE_AGENT.format(
        passed="stream was reset too, with INTERNAL_ERROR in place of REFUSED_STREAM")
    assert flows.passed_on(_reset("INTERNAL_ERROR", client=b"http/1.1")) == notes.RESET_LIKE_AGENT.format(
        passed="connection was closed (HTTP/1 has no stream to reset)")
    assert flows.passed_on(_reset("CANCEL")) is None  # perhaps the client's own: nothing to pass on
    assert flows.passed_on(_reset("CANCEL", server=b"http/1.1")) is None  # the client's own
    assert flows.passed_on(_reset("INTERNAL_ERROR", answered=True)) is None  # mitmproxy resets it itself


def test_the_capture_names_the_side_where_it_is_known_and_no_proxy_answer_for_a_clients_reset():
    exchange = flow_exchange.exchange_from_flow(_reset("CANCEL", server=b"http/1.1"), 1)
    assert "error: the client reset the stream (RST_STREAM CANCEL)" in exchange.notes
    assert not notes.proxy_answered(exchange.notes)
    exchange = flow_exchange.exchange_from_flow(_reset("CANCEL"), 1)
    assert ("error: the stream was reset by the client or the agent (mitmproxy does not say which) "
            "(RST_STREAM CANCEL)") in exchange.notes


@pytest.mark.parametrize(("message", "client", "server", "note"), [
    ("peer closed connection", b"h2", b"h2", notes.CLOSED_H2_LIKE_AGENT),
    ("HTTP/2 connection closed: <ConnectionTerminated error_code:2>", b"h2", b"h2", notes.CLOSED_H2_LIKE_AGENT),
    ("peer closed connection", b"http/1.1", b"h2", notes.CLOSED_LIKE_AGENT),  # the kill closes it
    ("peer closed connection", b"h2", None, None),  # not the agent's HTTP/2 connection
])
def test_an_agents_http2_connection_that_ended_under_a_stream(message, client, server, note):
    flow = tflow.tflow()
    flow.client_conn.alpn, flow.server_conn.alpn = client, server
    flow.error = mitmproxy_flow.Error(message)
    assert flows.passed_on(flow) == note
