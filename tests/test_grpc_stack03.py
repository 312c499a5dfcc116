"""Live: a2a-sdk 0.3's gRPC binding (`a2a.v1.A2AService`), its own agent and client, recorded.

The 0.3 agent serves its card over HTTP and the same handler over plaintext gRPC; its card
prefers gRPC at a bare `host:port`, which the recorder points at a second listener. The 0.3
client fetches the card, streams a message over gRPC, then makes three mistakes its library
lets through. Every finding is asserted as an (exchange, rule, wasted) triple.
"""

from __future__ import annotations

import pytest

from a2a_capture.a2a.decode import decode
from a2a_capture.capture import capture_bytes, read_capture
from tests import stacks
from tests.live import Recorder, free_port
from tests.test_cli_show import run
from tests.test_stacks_live import assert_triples, stack, triples  # noqa: F401 - stack is a fixture

pytestmark = pytest.mark.live


def test_sdk03_grpc_client_on_an_sdk03_grpc_agent(tmp_path, stack):  # noqa: F811 - the fixture
    name = stack("a2a_sdk_03")
    output = tmp_path / "sdk03-grpc.http"
    grpc_port, card_listener, grpc_listener = free_port(), free_port(), free_port()
    with stacks.agent(name, free_port(), "--grpc-port", str(grpc_port)) as upstream:
        with Recorder(output, [(upstream, card_listener), (f"http://127.0.0.1:{grpc_port}", grpc_listener)]):
            done = stacks.client(name, f"http://127.0.0.1:{card_listener}", "--grpc")
    assert len(done["refused"]) == 2, done  # the agent refused the push config and the cancel

    data = output.read_bytes()
    capture = read_capture(output)
    assert capture_bytes(capture) == data  # reads back byte for byte
    card, stream = capture.exchanges[:2]
    assert f'"127.0.0.1:{grpc_listener}"'.encode() in card.response.body  # the card's host:port, rewritten
    assert [e.request.target for e in capture.exchanges[1:]] == [
        f"/a2a.v1.A2AService/{rpc}" for rpc in
        ("SendStreamingMessage", "GetTask", "CreateTaskPushNotificationConfig", "CancelTask")]
    assert stream.response.trailers[0] == ("grpc-status", "0") and len(stream.response.event_times) >= 3
    assert b"push-secret-03" not in data and b"[redacted: token" in data

    shown = run("show", str(output)).stdout.decode().splitlines()[1:]
    assert [line.split()[1] for line in shown] == [
        "discover", "SendStreamingMessage", "GetTask", "CreateTaskPushNotificationConfig", "CancelTask"]
    # 0.3's handler puts no ErrorInfo in the status: the error's name leads grpc-message, or nothing does
    assert "UNKNOWN (2)" in shown[3] and "UNIMPLEMENTED (12)" in shown[4], shown
    assert [decode(e).error and decode(e).error.name for e in capture.exchanges[3:]] == [
        "gRPC UNKNOWN", "TaskNotCancelableError"]

    assert_triples("sdk03-grpc", triples(output), {
        (3, "poll-terminal", True),      # the stream had shown the task completed
        (4, "capability-push", True),    # the card says no push; the agent refused
        (5, "cancel-terminal", True),    # the client had seen the task complete
    })
