"""Replay's --wait-for-state never hammers an agent: an error answer ends the wait, asks have a budget and a
backoff, and the note says whether the recorded state was reached, and if not why."""

from __future__ import annotations

import json

import pytest

from a2a_capture.capture import read_capture
from a2a_capture.replay import client
from tests.builders import HOST, block, http_request, http_response, write
from tests.live import agent

JSONRPC = "/a2a/jsonrpc"
HEADERS = ["Content-Type: application/json", "A2A-Version: 1.0"]


def _rpc(number: int, method: str, params: dict, response: str) -> str:
    body = {"jsonrpc": "2.0", "id": number, "method": method, "params": params}
    return block(number, method, http_request("POST", JSONRPC, HEADERS, body), response)


def _stream(number: int, *states: str) -> str:
    frames = [{"jsonrpc": "2.0", "id": number, "result": {"statusUpdate": {
        "taskId": "t-1", "contextId": "c-1", "status": {"state": state}}}} for state in states]
    return http_response(200, "\n\n".join("data: " + json.dumps(frame) for frame in frames),
                         content_type="text/event-stream")


def _counted(monkeypatch) -> list[str]:
    sent = []
    once = client._Session._once

    def counting(self, exchange, *args):
        sent.append(exchange.title)
        return once(self, exchange, *args)

    monkeypatch.setattr(client._Session, "_once", counting)
    return sent


@pytest.mark.live
def test_a_refused_subscribe_is_sent_once_and_the_note_says_why(tmp_path, monkeypatch):
    """As replaying an Agent Framework session did: SubscribeToTask to an agent without streaming, which
    refuses it (-32004) every time; recorded, it had streamed the task to its end."""
    capture = read_capture(write(tmp_path, _rpc(1, "SubscribeToTask", {"id": "t-1"}, _stream(
        1, "TASK_STATE_WORKING", "TASK_STATE_COMPLETED"))))
    sent = _counted(monkeypatch)
    with agent("plain", streaming=False, push=False) as url:
        new = client.replay(capture, {HOST: url}, options=client.Options(speed=0, wait_for_state=5.0))
    assert sent == ["SubscribeToTask"]
    [exchange] = new.exchanges
    [note] = [n for n in exchange.notes if "reach" in n]
    assert note.startswith("the task did not reach TASK_STATE_COMPLETED, as recorded: the agent answered ")
    assert "as recorded" in note and "would answer it again" in note and "more time" not in note


@pytest.mark.live
def test_a_task_read_asks_again_within_its_budget_and_says_it_was_not_reached(tmp_path, monkeypatch):
    """A GetTask answered working each time (the agent's task stays working) asks again at most WAIT_ASKS
    times with a growing pause, and says the state was not reached."""
    monkeypatch.setattr(client, "WAIT_ASKS", 3)
    sent = _counted(monkeypatch)
    with agent("slow", streaming=False, push=False, step=0.5) as url:
        send = {"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": {
            "message": {"messageId": "m-1", "role": "ROLE_USER", "parts": [{"text": "slow"}]},
            "configuration": {"returnImmediately": True}}}
        task = {"id": "t-1", "contextId": "c-1", "status": {"state": "TASK_STATE_WORKING"}}
        done = {**task, "status": {"state": "TASK_STATE_COMPLETED"}}
        capture = read_capture(write(
            tmp_path,
            block(1, "SendMessage", http_request("POST", JSONRPC, HEADERS, send),
                  http_response(200, {"jsonrpc": "2.0", "id": 1, "result": {"task": task}})),
            _rpc(2, "GetTask", {"id": "t-1"}, http_response(200, {"jsonrpc": "2.0", "id": 2, "result": done}))))
        new = client.replay(capture, {HOST: url}, options=client.Options(speed=0, wait_for_state=30.0))
    assert sent == ["SendMessage"] + ["GetTask"] * 4  # the first ask and 3 more
    [note] = [n for n in new.exchanges[1].notes if "reach" in n]
    assert note == ("replay asked 3 more times, and the task did not reach TASK_STATE_COMPLETED, as recorded: "
                    "replay asks at most 3 more times")
