"""gRPC calls read as A2A: the same operations, facts and findings as the other bindings."""

from __future__ import annotations

import json

from a2a.compat.v0_3 import a2a_v0_3_pb2
from a2a.types import a2a_pb2

from a2a_capture.a2a.decode import decode
from a2a_capture.analyze.engine import analyze
from a2a_capture.capture import Capture, Exchange, Request, Response, capture_bytes
from a2a_capture.capture.grpc import frame
from tests import builders
from tests import grpc_builders as gb


def card_fetch(number: int, **capabilities) -> Exchange:
    """The card, fetched over HTTP, declaring one gRPC interface at host:port as the proto says."""
    data = builders.card(capabilities=capabilities, supportedInterfaces=[
        {"url": gb.HOST, "protocolBinding": "GRPC", "protocolVersion": "1.0"}])
    return Exchange(number=number, title="discover", request=Request(
        method="GET", target="/.well-known/agent-card.json", headers=[("Host", gb.HOST)]),
        response=Response(status=200, headers=[("Content-Type", "application/json")], body=json.dumps(data).encode()))


def _session() -> Capture:
    push = a2a_pb2.TaskPushNotificationConfig(task_id="t-1", url="http://127.0.0.1:9/hook", token="s3cret")
    streamed = [a2a_pb2.StreamResponse(task=gb.task("t-2", "TASK_STATE_WORKING")),
                a2a_pb2.StreamResponse(status_update=a2a_pb2.TaskStatusUpdateEvent(
                    task_id="t-2", context_id="ctx-1", status=a2a_pb2.TaskStatus(state="TASK_STATE_COMPLETED")))]
    return Capture(exchanges=[
        card_fetch(1, streaming=True),
        gb.call(2, "SendMessage", gb.send(), [a2a_pb2.SendMessageResponse(task=gb.task("t-1"))]),
        gb.call(3, "GetTask", a2a_pb2.GetTaskRequest(id="t-1"), [gb.task("t-1")]),
        gb.call(4, "CreateTaskPushNotificationConfig", push, status=9, message="Push notifications not supported",
                reason="PUSH_NOTIFICATION_NOT_SUPPORTED"),
        gb.call(5, "SendStreamingMessage", gb.send(message_id="m-2"), streamed, version=None),
        gb.call(6, "GetTask", a2a_v0_3_pb2.GetTaskRequest(name="tasks/nope"), status=5, message="Task not found",
                reason="TASK_NOT_FOUND", service="/a2a.v1.A2AService", version="0.3"),
    ])


def test_grpc_calls_decode_to_the_operations_and_facts_of_other_bindings():
    calls = [decode(exchange) for exchange in _session().exchanges]
    send, poll, push, stream, missing = calls[1:]
    assert [c.kind for c in calls[1:]] == ["grpc"] * 5 and {c.binding for c in calls[1:]} == {"GRPC"}
    assert (send.operation, send.spelled_version, send.version_header) == ("SendMessage", "1.0", "1.0")
    assert send.message_id == "m-1" and send.part_media_types == ["text/plain"]
    assert send.states == [("t-1", "TASK_STATE_COMPLETED")] and send.ok
    assert (poll.operation, poll.task_id) == ("GetTask", "t-1")
    assert push.task_id == "t-1" and push.error.name == "PushNotificationNotSupportedError"
    assert push.error.reason == "PUSH_NOTIFICATION_NOT_SUPPORTED" and push.error.message.startswith("Push")
    assert stream.streamed and stream.events == 2 and stream.version_header is None
    assert stream.states == [("t-2", "TASK_STATE_WORKING"), ("t-2", "TASK_STATE_COMPLETED")]
    assert (missing.spelled_version, missing.task_id, missing.error.name) == ("0.3", "nope", "TaskNotFoundError")


def test_unknown_rpcs_broken_and_unreadable_messages_are_classified():
    broken = gb.call(1, "GetTask", a2a_pb2.GetTaskRequest(id="t-1"), [gb.task("t-1")])
    broken.request.body = frame(b"\x0a\xff\xff")  # a length running past the message
    broken.response.body = broken.response.body[:-2]  # the stream cut inside a message
    other = gb.call(2, "Check", a2a_pb2.GetTaskRequest(id="x"), service="/grpc.health.v1.Health")
    unknown_rpc = gb.call(3, "Frobnicate", a2a_pb2.GetTaskRequest(id="x"), status=12)
    broken_call, other_call, unknown_call = (decode(e) for e in (broken, other, unknown_rpc))
    assert broken_call.operation == "GetTask" and broken_call.request_json_error
    assert any("does not divide into whole gRPC messages" in note for note in broken_call.notes)
    assert (other_call.kind, other_call.operation, other_call.spelled_version) == ("grpc", None, None)
    assert unknown_call.operation is None and unknown_call.error.name == "gRPC UNIMPLEMENTED"


def test_analyze_finds_the_same_mistakes_over_grpc(tmp_path):
    path = tmp_path / "grpc.http"
    path.write_bytes(capture_bytes(_session()))
    analysis = analyze([path])
    found = {(f.rule, f.exchange) for f in analysis.findings}
    assert ("capability-push", "4") in found
    assert ("poll-terminal", "3") in found
    assert ("version-header-missing", "5") in found
    assert ("task-unknown", "6") in found and ("method-version-mismatch", "6") in found
    assert not any(rule == "interface-undeclared" for rule, _ in found)


def test_replay_and_serve_refuse_grpc_with_one_line(tmp_path):
    from tests.test_cli_show import run

    path = tmp_path / "grpc.http"
    path.write_bytes(capture_bytes(_session()))
    for args in (("replay", str(path), "--target", "probe=http://127.0.0.1:9"), ("serve", str(path))):
        result = run(*args)
        assert result.returncode == 2
        assert result.stderr.decode() == (
            f"a2a-capture: error: {args[0]} does not support gRPC yet: exchange 2 "
            "(/lf.a2a.v1.A2AService/SendMessage) and 4 more are gRPC calls; analyze and report read them\n")


def test_compressed_messages_are_read_and_missing_types_say_how_to_get_them(monkeypatch):
    import gzip

    from a2a_capture.a2a import grpc as a2a_grpc
    from a2a_capture.a2a import spec

    target = "/lf.a2a.v1.A2AService/GetTask"
    packed = frame(gzip.compress(a2a_pb2.GetTaskRequest(id="t-9").SerializeToString()), compressed=True)
    assert a2a_grpc.decode_frame(target, "request", packed, "gzip").json == {"id": "t-9"}
    assert a2a_grpc.decode_frame(target, "request", packed, "snappy").detail == "compressed (snappy)"
    monkeypatch.setitem(spec.GRPC_SCHEMAS, "lf.a2a.v1.A2AService", "not_installed.a2a_pb2")
    a2a_grpc._service.cache_clear()
    try:
        title, lines = a2a_grpc.describe_frame(target, "request", packed)
        assert title.endswith("install a2a-capture[grpc] to read gRPC messages") and lines == []
    finally:
        a2a_grpc._service.cache_clear()


def test_a_grpc_interface_at_host_port_is_the_same_agent_over_tls(tmp_path):
    """A card's gRPC `host:port` names no scheme: the channel decides, so calls over TLS to it are
    judged by that card as plaintext ones are."""
    session = _session()
    for exchange in session.exchanges:
        exchange.notes.append(f"over TLS to {gb.HOST}")
    path = tmp_path / "grpc-tls.http"
    path.write_bytes(capture_bytes(session))
    found = {(f.rule, f.exchange) for f in analyze([path]).findings}
    assert ("capability-push", "4") in found and ("poll-terminal", "3") in found
    assert not any(rule == "interface-undeclared" for rule, _ in found)


def test_a_03_status_without_error_info_is_named_by_its_message():
    """a2a-sdk 0.3's gRPC handler sends no ErrorInfo; the error's name leads grpc-message."""
    def cancel(message: str) -> Exchange:
        return gb.call(1, "CancelTask", a2a_v0_3_pb2.CancelTaskRequest(name="tasks/t-1"), status=12, message=message,
                       service="/a2a.v1.A2AService", version=None)

    named = decode(cancel("TaskNotCancelableError: Task cannot be canceled - current state: TaskState.completed"))
    assert named.error.name == "TaskNotCancelableError" and named.error.message.startswith("TaskNotCancelable")
    assert decode(cancel("SomethingElseError: no such A2A error")).error.name == "gRPC UNIMPLEMENTED"
    assert decode(cancel("cannot cancel")).error.name == "gRPC UNIMPLEMENTED"
