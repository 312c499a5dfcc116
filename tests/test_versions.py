"""Every protocol version in the tables: 0.1/0.2 names, errors read per version, the card's own field names."""

from __future__ import annotations

import json

import pytest

from a2a_capture.a2a import spec
from a2a_capture.analyze.engine import analyze
from tests.builders import ORIGIN, block, card, error, fetch_card, http_request, http_response, message, rpc, write

PLAIN = ["Content-Type: application/json"]  # a 0.x client sends no A2A-Version
CARD_03 = {"name": "old", "description": "A 0.3 agent.", "url": f"{ORIGIN}/rpc", "protocolVersion": "0.3.0",
           "preferredTransport": "JSONRPC", "version": "1", "capabilities": {"streaming": True},
           "defaultInputModes": ["text/plain"], "defaultOutputModes": ["text/plain"], "skills": []}
SEND = {"message": {**message(), "role": "user", "kind": "message"}}
TASK_03 = {"kind": "task", "id": "t-1", "contextId": "c", "status": {"state": "completed"}}


def _findings(tmp_path, *blocks):
    return [(f.exchange, f.rule) for f in analyze([write(tmp_path, *blocks)]).findings]


def test_a_01_name_on_a_03_interface_is_a_version_mismatch_that_names_the_right_one(tmp_path):
    analysis = analyze([write(tmp_path, fetch_card(1, CARD_03),
                              rpc(2, "tasks/send", SEND, headers=PLAIN, error=error(-32601)))])
    finding = next(f for f in analysis.findings if f.rule == "method-version-mismatch")
    assert "tasks/send is a 0.1 name" in finding.message and "declares protocolVersion 0.3" in finding.message
    assert "(that interface calls it message/send)" in finding.message
    assert finding.outcome == "wasted"


def test_names_0_3_shares_with_older_versions_pass(tmp_path):
    blocks = [fetch_card(1, CARD_03), rpc(2, "message/send", SEND, headers=PLAIN, result=TASK_03),
              rpc(3, "tasks/get", {"id": "t-2"}, headers=PLAIN, result={**TASK_03, "id": "t-2"}),
              rpc(4, "message/send", {"message": {**SEND["message"], "messageId": "m-2"}},
                  headers=[*PLAIN, "A2A-Version: 0.3"], result={**TASK_03, "id": "t-3"})]
    assert _findings(tmp_path, *blocks) == []


def test_a_01_name_under_a_03_header_is_a_mismatch(tmp_path):
    blocks = [rpc(1, "tasks/sendSubscribe", SEND, headers=[*PLAIN, "A2A-Version: 0.3"], error=error(-32601))]
    assert _findings(tmp_path, *blocks) == [("1", "method-version-mismatch")]


def test_resubscribe_answered_invalid_params_on_a_finished_task_is_subscribe_terminal(tmp_path):
    ended = error(-32602, message_text="Task t-1 is in terminal state: completed")
    unseen = [fetch_card(1, CARD_03), rpc(2, "tasks/resubscribe", {"id": "t-1"}, headers=PLAIN, error=ended)]
    assert _findings(tmp_path, *unseen) == [("2", "subscribe-terminal")]
    seen = [fetch_card(1, CARD_03), rpc(2, "message/send", SEND, headers=PLAIN, result=TASK_03),
            rpc(3, "tasks/resubscribe", {"id": "t-1"}, headers=PLAIN, error=ended)]
    assert _findings(tmp_path, *seen) == [("3", "subscribe-terminal")]
    invalid = [fetch_card(1, CARD_03), rpc(2, "tasks/resubscribe", {}, headers=PLAIN,
                                           error=error(-32602, message_text="Invalid params: id is required"))]
    assert _findings(tmp_path, *invalid) == [("2", "malformed-request")]


@pytest.mark.parametrize("said, ended", [
    ("Task cannot be canceled - current state: TaskState.completed", True),  # a2a-sdk 0.3 (gRPC and JSON-RPC)
    ("Task t-1 is in terminal state: completed", True),
    ("Task is not cancelable", True),
    ("current state: TaskState.working", False),
    ("Invalid params: id is required", False),
])
def test_the_words_that_say_a_task_has_ended(said, ended):
    assert bool(spec.TASK_ENDED_WORDS.search(said)) is ended


def test_cancel_answered_with_sdk_03_wording_is_cancel_terminal(tmp_path):
    """The code says nothing (an internal error); the words say the task had ended."""
    said = error(-32603, message_text="Task cannot be canceled - current state: TaskState.completed")
    blocks = [fetch_card(1, CARD_03), rpc(2, "tasks/cancel", {"id": "t-1"}, headers=PLAIN, error=said)]
    assert _findings(tmp_path, *blocks) == [("2", "cancel-terminal")]


def test_a_03_card_is_quoted_with_its_own_field_names(tmp_path):
    analysis = analyze([write(tmp_path, fetch_card(1, CARD_03),
                              rpc(2, "agent/getAuthenticatedExtendedCard", {}, headers=PLAIN,
                                  error=error(-32007, message_text="not configured")))])
    finding = next(f for f in analysis.findings if f.rule == "capability-extended-card")
    assert "has no supportsAuthenticatedExtendedCard" in finding.message
    assert "capabilities.extendedAgentCard" not in finding.message
    assert "AuthenticatedExtendedCardNotConfiguredError" in finding.message


@pytest.mark.parametrize("capabilities, says", [
    ({}, "has no capabilities.streaming"),
    ({"streaming": False}, "says capabilities.streaming: false"),
    ({"streaming": None}, "says capabilities.streaming: null"),
    ({"streaming": "true"}, 'says capabilities.streaming: "true"'),  # a string is not true either
    ({"streaming": ["x" * 60]}, "says capabilities.streaming: …"),
])
def test_a_capability_is_worded_as_the_card_states_it(tmp_path, capabilities, says):
    """A card silent about streaming and one that declines it (`streaming: false`) are told apart."""
    blocks = [fetch_card(1, card(capabilities=capabilities)),
              rpc(2, "SendStreamingMessage", {"message": message()}, error=error(-32004, "UNSUPPORTED_OPERATION"))]
    [finding] = analyze([write(tmp_path, *blocks)]).findings
    assert finding.rule == "capability-streaming" and finding.wasted
    assert finding.message == f"SendStreamingMessage on probe, whose card (exchange 1) {says}; the agent answered " \
                              "UnsupportedOperationError"
    inline = {"message": message(), "configuration": {"pushNotificationConfig": {"url": "http://127.0.0.1:9/h"}}}
    pushed = [fetch_card(1, card(capabilities={"pushNotifications": False})), rpc(2, "SendMessage", inline)]
    [advice] = analyze([write(tmp_path, *pushed, name="push.http")]).findings
    assert "(exchange 1) says capabilities.pushNotifications: false: no webhook will come" in advice.message


def test_an_sse_error_event_with_a_jsonrpc_envelope_is_read_as_the_error(tmp_path):
    envelope = {"jsonrpc": "2.0", "id": 2, "error": {"code": -32001, "message": "Task not found"}}
    frames = "event: error\ndata: " + json.dumps(envelope)
    request = http_request("POST", "/rpc", PLAIN, {"jsonrpc": "2.0", "id": 2, "method": "tasks/resubscribe",
                                                   "params": {"id": "nope"}})
    streamed = block(2, "resubscribe", request, http_response(200, frames, content_type="text/event-stream"))
    analysis = analyze([write(tmp_path, fetch_card(1, CARD_03), streamed)])
    call = analysis.calls[1]
    assert call.error == "TaskNotFoundError"
    assert [(f.exchange, f.rule) for f in analysis.findings] == [("2", "task-unknown")]


SEND_01 = {"id": "t-1", "sessionId": "s-1", "message": {"role": "user", "parts": [{"type": "text", "text": "run"}]}}
TASK_01 = {"id": "t-1", "sessionId": "s-1", "status": {"state": "completed"}}


def test_0_1_calls_name_their_task_in_params_id(tmp_path):
    """0.1's params call the task `id` (TaskSendParams, TaskPushNotificationConfig); later versions put a
    send's in message.taskId and a push config's in taskId: each is read where its own version puts it."""
    from a2a_capture.a2a.decode import decode
    from a2a_capture.capture import read_capture

    push = {"url": "http://127.0.0.1:9/hook"}
    path = write(tmp_path,
                 rpc(1, "tasks/send", {**SEND_01, "id": "t-9"}, headers=PLAIN, error=error(-32601)),
                 rpc(2, "tasks/sendSubscribe", {**SEND_01, "id": "t-8"}, headers=PLAIN, error=error(-32601)),
                 rpc(3, "tasks/pushNotification/set", {"id": "t-7", "pushNotificationConfig": push}, headers=PLAIN,
                     error=error(-32601)),
                 rpc(4, "tasks/pushNotification/get", {"id": "t-6"}, headers=PLAIN, error=error(-32601)),
                 rpc(5, "message/send", {"id": "not-the-task", "message": {**SEND["message"], "taskId": "t-5"}},
                     headers=PLAIN, error=error(-32601)),
                 rpc(6, "tasks/pushNotificationConfig/set", {"taskId": "t-4", "pushNotificationConfig": push},
                     headers=PLAIN, error=error(-32601)),
                 rpc(7, "SendMessage", {"message": message(task_id="t-3")}, error=error(-32601)))
    calls = [decode(exchange, str(path)) for exchange in read_capture(path).exchanges]
    assert [call.task_id for call in calls] == ["t-9", "t-8", "t-7", "t-6", "t-5", "t-4", "t-3"]


def test_the_task_id_table_by_method_is_the_operations_but_for_0_1():
    """Decode looks the task id up by the method's name: for every name but 0.1's, where its operation's is."""
    names = {**{op: (op, "1.0") for op in spec.OPERATIONS}, **spec.LEGACY_METHODS}
    for method, (operation, version) in names.items():
        expected = spec.TASK_ID_PARAM_0_1[method] if version == "0.1" and method in spec.TASK_ID_PARAM_0_1 else \
            spec.TASK_ID_PARAM.get(operation)
        assert spec.METHOD_TASK_ID_PARAM.get(method) == expected, method
    assert set(spec.TASK_ID_PARAM_0_1) <= {m for m, (_, v) in spec.LEGACY_METHODS.items() if v == "0.1"}


def test_a_0_1_send_naming_a_finished_task_restarts_it(tmp_path):
    """0.1's TaskSendParams "create, continue, or restart a task": tasks/send with the id of a task that
    had completed is a restart there, not message-terminal; 0.3's message.taskId of an ended task is."""
    restart = [rpc(1, "tasks/send", SEND_01, headers=PLAIN, result=TASK_01),
               rpc(2, "tasks/send", SEND_01, headers=PLAIN, result=TASK_01),
               rpc(3, "tasks/sendSubscribe", SEND_01, headers=PLAIN, result=TASK_01)]
    assert _findings(tmp_path, *restart) == []
    again = {"message": {**SEND["message"], "messageId": "m-2", "taskId": "t-1"}}
    later = [fetch_card(1, CARD_03), rpc(2, "message/send", SEND, headers=PLAIN, result=TASK_03),
             rpc(3, "message/send", again, headers=PLAIN, result=TASK_03)]
    assert _findings(tmp_path, *later) == [("3", "message-terminal")]
