"""Mis-verdicts found on real traffic of the other A2A stacks (tests/stacks/), each kept as a
small hand-made capture of the same shape."""

from __future__ import annotations

import json

import pytest

from a2a_capture.analyze.engine import analyze
from a2a_capture.flow_exchange import is_webhook
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
    write,
)


def test_a_new_task_whose_stream_the_agent_breaks_is_no_message_to_an_ended_task(tmp_path):
    """The JavaScript SDK ends a stream with an `event: error` frame when its agent publishes out of
    order (a Message after the Task): UnsupportedOperationError, the error a message to an ended task
    gets. The message named no task (the task id is the answer's own), so no message-terminal; the
    error is still read, by name."""
    frames = [{"task": {"id": "t-1", "contextId": "c-1", "status": {"state": "TASK_STATE_SUBMITTED"}}},
              {"statusUpdate": {"taskId": "t-1", "contextId": "c-1", "status": {"state": "TASK_STATE_WORKING"}}}]
    body = "".join(f"data: {json.dumps({'jsonrpc': '2.0', 'id': 2, 'result': frame})}\n\n" for frame in frames)
    body += "event: error\ndata: " + json.dumps({"jsonrpc": "2.0", "id": 2, "error": {
        "code": -32004, "message": "Stream ordering violation: received message in task lifecycle stream."}}) + "\n\n"
    stream = block(2, "SendStreamingMessage", http_request(
        "POST", "/rpc", ["Content-Type: application/json", "A2A-Version: 1.0"],
        {"jsonrpc": "2.0", "id": 2, "method": "SendStreamingMessage", "params": {"message": message("run")}}),
        http_response(200, body, content_type="text/event-stream"))
    capture = write(tmp_path, fetch_card(1, card(capabilities={"streaming": True})), stream)
    analysis = analyze([capture], facts=True)
    assert analysis.findings == []
    assert (analysis.exchanges[1].error, analysis.exchanges[1].error_code) == ("UnsupportedOperationError", -32004)


def _body(payload: dict) -> bytes:
    return json.dumps(payload).encode()


@pytest.mark.parametrize("message", [
    {"messageId": "m-1", "role": "ROLE_USER", "parts": [{"text": "run"}]},                    # 1.0
    {"kind": "message", "messageId": "m-1", "role": "user", "parts": [{"kind": "text", "text": "run"}]},  # 0.3
])
def test_a_rest_send_message_with_nothing_but_its_message_is_a_call(message):
    """`POST /message:send` with body {"message": ...} (no configuration, as a client that omits
    empty fields sends it) has the shape of a push of a message; the user's role tells them apart.
    Found on the JavaScript stack: such a call was recorded as `### webhook` and never analyzed."""
    assert not is_webhook([("content-type", "application/json")], _body({"message": message}), set(), "")


def test_a_push_of_an_agents_message_or_a_task_is_still_a_webhook():
    agent_message = {"messageId": "m-2", "role": "ROLE_AGENT", "parts": [{"text": "done"}]}
    assert is_webhook([], _body({"message": agent_message}), set(), "")
    assert is_webhook([], _body({"statusUpdate": {"taskId": "t-1", "status": {"state": "TASK_STATE_WORKING"}}}),
                      set(), "")


def test_a_hybrid_card_is_quoted_by_both_its_fields(tmp_path):
    """The JavaScript agent's v0.3 layer serves a request without A2A-Version a hybrid card: 0.3's
    top-level fields (`supportsAuthenticatedExtendedCard: false`) beside 1.0's supportedInterfaces.
    A finding quotes the field of either version, not only 1.0's, which this card does not carry."""
    hybrid = card(url=f"{ORIGIN}/rpc", preferredTransport="JSONRPC", protocolVersion="0.3",
                  capabilities={"streaming": True}, supportsAuthenticatedExtendedCard=False)
    capture = write(tmp_path, fetch_card(1, hybrid), rpc(2, "GetExtendedAgentCard", {}, error=error(
        -32004, "UNSUPPORTED_OPERATION", "Agent does not support authenticated extended card.")))
    [finding] = analyze([capture]).findings
    assert finding.rule == "capability-extended-card" and finding.wasted, finding
    assert "whose card (exchange 1) says supportsAuthenticatedExtendedCard: false;" in finding.message
    del hybrid["supportsAuthenticatedExtendedCard"]  # silent: named by either version's field
    capture = write(tmp_path, fetch_card(1, hybrid), rpc(2, "GetExtendedAgentCard", {}, error=error(
        -32004, "UNSUPPORTED_OPERATION", "Agent does not support authenticated extended card.")), name="silent.http")
    [finding] = analyze([capture]).findings
    assert "has no capabilities.extendedAgentCard or supportsAuthenticatedExtendedCard;" in finding.message
