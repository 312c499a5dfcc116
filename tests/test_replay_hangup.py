"""Replay hangs up where the recorded client did (issue #28, point 5): a client that read one event of
a stream and closed it is replayed as reading one event and closing, at the recorded time, so the
task is where the recording saw it when the next polls come. A real a2a-sdk agent, recorded through
the real recorder, replayed against a fresh one."""

from __future__ import annotations

import json
import time

import httpx
import pytest

from a2a_capture.capture import read_capture
from a2a_capture.replay import client, diff
from tests.cli import run
from tests.live import Recorder, agent, free_port

pytestmark = pytest.mark.live
HEAD = {"A2A-Version": "1.0"}


def _session(base: str) -> None:
    """Card, a stream read for one event and closed, then three polls of the task still working."""
    with httpx.Client(base_url=base, timeout=30, headers=HEAD) as http:
        http.get("/.well-known/agent-card.json")
        message = {"messageId": "m-1", "role": "ROLE_USER", "parts": [{"text": "slow"}]}
        request = {"jsonrpc": "2.0", "id": 2, "method": "SendStreamingMessage", "params": {"message": message}}
        with http.stream("POST", "/a2a/jsonrpc", json=request) as answer:
            first = next(line for line in answer.iter_lines() if line.startswith("data:"))
        task = json.loads(first[5:])["result"]["task"]["id"]  # closed after the first event: the client hung up
        for number in (3, 4, 5):
            time.sleep(0.05)
            http.post("/a2a/jsonrpc", json={"jsonrpc": "2.0", "id": number, "method": "GetTask",
                                            "params": {"id": task}})


def test_a_stream_the_client_closed_early_is_closed_after_as_many_events_on_replay(tmp_path):
    recorded = tmp_path / "hung-up.http"
    with agent("test-runner", streaming=True) as upstream, Recorder(recorded, [(upstream, listen := free_port())]):
        _session(f"http://127.0.0.1:{listen}")
    old = read_capture(recorded)
    stream = old.exchanges[1]
    events = len(stream.response.events)  # what reached the recorder before the client hung up (1 or 2)
    assert stream.response.is_event_stream and 1 <= events < 5, stream.notes
    assert client.hung_up(stream) is not None, stream.notes  # the recorder said the client closed it
    states = [json.loads(e.response.content)["result"]["status"]["state"] for e in old.exchanges[2:]]
    assert states == ["TASK_STATE_WORKING"] * 3, states
    with agent("test-runner", streaming=True) as fresh:
        new = client.replay(old, {"test-runner": fresh})
        assert [c.line() for c in diff.compare(old, new)] == []
        assert len(new.exchanges[1].response.events) == events
        assert any(f"closed the stream after {events} event" in note for note in new.exchanges[1].notes)
        # and the command a user runs: exit 0, nothing differs
        done = run("replay", str(recorded), "--target", f"test-runner={fresh}")
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.decode().strip().endswith("0 differ from the capture")
