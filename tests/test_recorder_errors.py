"""Faithful under errors: an agent answers an error and closes its kept-alive connection.

A real client makes its calls on one kept-alive connection, first straight to the agent and
then through mitmdump with the addon (reverse and forward mode). What it receives through
the recorder must be what it received directly: the agent's error answers byte for byte and
no answer the agent never gave (no 502 of mitmproxy's in the agent's name). The capture says
which side closed and never writes a proxy's answer as the agent's. After an error answer
that does not say the connection closes, the agent's next call comes on a new connection.
"""

from __future__ import annotations

import json

import httpx
import pytest

from a2a_capture.analyze.engine import analyze
from a2a_capture.capture import read_capture
from a2a_capture.record import notes
from tests.closing_agent import HOW, ClosingAgent
from tests.live import Recorder, free_port

pytestmark = pytest.mark.live


def _send(index: int, message_id: str) -> dict:
    return {"jsonrpc": "2.0", "id": index, "method": "SendMessage", "params": {
        "message": {"messageId": message_id, "role": "ROLE_USER", "parts": [{"text": "run"}]}}}


def client_session(base: str, proxy: str | None = None) -> tuple[list[tuple], list]:
    """Three SendMessage calls on one kept-alive connection (the pool holds one); a call that
    failed in transit is sent again with its messageId, as a careful client retries.

    Returns what each call got (the answer, or the kind of failure) and the local address
    each answer came in on."""
    outcomes, connections = [], []
    limits = httpx.Limits(max_connections=1, max_keepalive_connections=1)

    def where(response: httpx.Response) -> None:  # while the connection is open, before the body is read
        connections.append(response.extensions["network_stream"].get_extra_info("client_addr"))

    with httpx.Client(proxy=proxy, limits=limits, timeout=10, event_hooks={"response": [where]}) as http:
        message_id = "m-1"
        for index in (1, 2, 3):
            try:
                response = http.post(f"{base}/a2a/jsonrpc", json=_send(index, message_id),
                                     headers={"A2A-Version": "1.0"})
            except httpx.TransportError as error:
                outcomes.append(("failed", type(error).__name__))
                connections.append(None)
                continue  # the same message again
            outcomes.append(("answer", response.status_code,
                             {name: response.headers.get(name) for name in ("connection", "server", "content-length")},
                             response.content))
            message_id = f"m-{index + 1}"
    return outcomes, connections


def sent_answers(agent: ClosingAgent) -> list[tuple[int, bytes]]:
    """The status and body of every answer the agent wrote."""
    answers = []
    for data in agent.sent:
        head, _, body = data.partition(b"\r\n\r\n")
        answers.append((int(head.split(b" ", 2)[1]), body))
    return answers


@pytest.mark.parametrize("mode", ["reverse", "forward"])
@pytest.mark.parametrize("how", HOW)
def test_the_client_gets_through_the_recorder_what_the_agent_sent(tmp_path, how, mode):
    with ClosingAgent(how) as direct:
        expected, _ = client_session(direct.url)
    if how == "kept-open":  # straight to the agent, all three calls on the one connection
        assert direct.connections == [1, 1, 1]
    output = tmp_path / "errors.http"
    with ClosingAgent(how) as upstream:
        if mode == "reverse":
            listen = free_port()
            with Recorder(output, [(upstream.url, listen)]):
                got, connections = client_session(f"http://127.0.0.1:{listen}")
        else:
            proxy = free_port()
            with Recorder(output, proxy_port=proxy):
                got, connections = client_session(upstream.url, proxy=f"http://127.0.0.1:{proxy}")
    # what the client got through the recorder is what it got from the agent directly
    assert got == expected
    answers = sent_answers(upstream)
    assert [(o[1], o[3]) for o in got if o[0] == "answer"] == answers
    assert json.loads(answers[0][1])["error"]["message"] == f"the agent failed ({how})"
    if how == "unanswered":  # the second call went on the kept-alive connection the first answer came on
        assert upstream.unanswered == 1

    exchanges = read_capture(output).exchanges
    assert [e.number for e in exchanges] == [1, 2, 3]
    recorded = [(e.response.status, e.response.body) for e in exchanges if e.response is not None]
    assert recorded == answers  # the agent's answers, and nothing else written as a response
    for exchange in exchanges:
        assert not notes.proxy_answered(exchange.notes), exchange.notes
    first = exchanges[0]
    if how == "close-header":
        assert first.response.header("connection") == "close"
    if how == "until-close":
        assert notes.BODY_UNTIL_CLOSE in first.notes
    if how in ("silent-close", "silent-close-4xx", "kept-open", "until-close"):
        # an error answer: the agent may close without saying so
        assert notes.NEW_CONNECTION_AFTER_ERROR in first.notes
        # the agent got the next call on a new connection of its own (for kept-open only the
        # recorder's retiring of the agent's connection makes it: mitmproxy's internal state)
        assert upstream.connections == [1, 2, 2]
    else:
        assert notes.NEW_CONNECTION_AFTER_ERROR not in first.notes
    if how in ("silent-close", "silent-close-4xx", "kept-open"):
        # the client kept its connection (each of its calls was answered on it)
        assert connections[0] == connections[1] == connections[2]
    if how == "unanswered":
        second = exchanges[1]
        assert second.response is None
        assert second.notes[0].startswith("error: the agent closed the connection (")
        assert notes.CLOSED_LIKE_AGENT in second.notes
        # the retry of a message the agent never answered is no duplicate, and nothing is
        # said about an answer that never came
        findings = analyze([output]).findings
        assert not [f for f in findings if f.number == 2 or f.rule == "duplicate-message-id"], findings
