"""card-insecure-transport and a card's gRPC interface: a bare `host:port` names no scheme.

The rule judges the channel the card itself came over, as the capture shows it (the request's
Host, the recorder's `over TLS to` note). A gRPC interface url such as `agents.example.com:443`
says nothing about TLS, so it must not read as plain HTTP: a card fetched over TLS that declares
one gets no finding, and a card fetched in the clear gets one finding about that fetch.
"""

from __future__ import annotations

import json

from a2a.types import a2a_pb2

from a2a_capture.analyze.engine import analyze
from a2a_capture.capture import Capture, Exchange, Request, Response, capture_bytes
from tests import builders
from tests import grpc_builders as gb

REMOTE = "agents.example.com"


def _session(tls: bool) -> Capture:
    card = builders.card(capabilities={"streaming": True}, supportedInterfaces=[
        {"url": f"{REMOTE}:443", "protocolBinding": "GRPC", "protocolVersion": "1.0"}])
    fetch = Exchange(number=1, title="discover", request=Request(
        method="GET", target="/.well-known/agent-card.json", headers=[("Host", REMOTE)]),
        response=Response(status=200, headers=[("Content-Type", "application/json")], body=json.dumps(card).encode()))
    call = gb.call(2, "SendMessage", gb.send(), [a2a_pb2.SendMessageResponse(task=gb.task("t-1"))])
    call.request.headers[0] = ("Host", f"{REMOTE}:443")
    if tls:
        fetch.notes.append(f"over TLS to {REMOTE}:443")
        call.notes.append(f"over TLS to {REMOTE}:443")
    return Capture(exchanges=[fetch, call])


def _findings(tmp_path, tls: bool):
    path = tmp_path / f"remote-{tls}.http"
    path.write_bytes(capture_bytes(_session(tls)))
    return analyze([path]).findings


def test_a_card_over_tls_declaring_a_bare_grpc_host_port_is_not_called_insecure(tmp_path):
    findings = _findings(tmp_path, tls=True)
    assert not any(f.rule == "card-insecure-transport" for f in findings), [f.message for f in findings]
    assert not any(f.rule == "interface-undeclared" for f in findings), [f.message for f in findings]


def test_a_card_fetched_in_the_clear_is_one_finding_about_that_fetch(tmp_path):
    insecure = [f for f in _findings(tmp_path, tls=False) if f.rule == "card-insecure-transport"]
    assert [(f.exchange, f.message) for f in insecure] == [
        ("1", f"the card of http://{REMOTE}:80 came over plain HTTP")]
