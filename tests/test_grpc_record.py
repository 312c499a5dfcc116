"""The recorder's part for gRPC: HTTP/2 kept, trailers, message arrival times, protobuf redaction."""

from __future__ import annotations

from a2a.types import a2a_pb2
from mitmproxy import http
from mitmproxy.test import tflow

from a2a_capture.a2a.decode import decode
from a2a_capture.capture import Capture, capture_bytes
from a2a_capture.capture.grpc import frame, split_frames
from a2a_capture.capture.reader import read_capture_bytes
from a2a_capture.flow_exchange import StreamCopy, exchange_from_flow
from a2a_capture.record.redact import Redactor
from tests import grpc_builders as gb

SECRET = "push-secret-42"


def _grpc_flow(rpc: str, request, answers, trailers=(("grpc-status", "0"), ("grpc-message", ""))):
    flow = tflow.tflow(resp=True)
    flow.request.http_version = flow.response.http_version = "HTTP/2.0"
    flow.request.method, flow.request.path = "POST", f"/lf.a2a.v1.A2AService/{rpc}"
    flow.request.headers = http.Headers([(b"content-type", b"application/grpc"), (b"te", b"trailers"),
                                         (b"a2a-version", b"1.0")])
    flow.request.content = frame(request.SerializeToString())
    flow.response.headers = http.Headers([(b"content-type", b"application/grpc")])
    flow.response.content = b"".join(frame(answer.SerializeToString()) for answer in answers)
    flow.response.trailers = http.Headers([(k.encode(), v.encode()) for k, v in trailers])
    return flow


def test_a_streamed_grpc_call_keeps_http2_trailers_and_each_message_time():
    answers = [a2a_pb2.StreamResponse(task=gb.task("t-1", "TASK_STATE_WORKING")),
               a2a_pb2.StreamResponse(task=gb.task("t-1"))]
    flow = _grpc_flow("SendStreamingMessage", gb.send(), answers)
    start = flow.request.timestamp_start
    first, second = (frame(answer.SerializeToString()) for answer in answers)
    copy = StreamCopy()
    copy.chunks = [(start + 0.1, first[:4]), (start + 0.2, first[4:] + second[:2]), (start + 0.3, second[2:])]
    flow.response.content = None  # as mitmproxy leaves it when the body was streamed
    exchange = exchange_from_flow(flow, 1, stream=copy)
    assert (exchange.request.http_version, exchange.response.http_version) == ("2", "2")
    assert not any("written as HTTP/1.1" in note for note in exchange.notes)
    assert exchange.title == "SendStreamingMessage"
    assert exchange.response.trailers == [("grpc-status", "0"), ("grpc-message", "")]
    assert exchange.response.event_times == [0.2, 0.3]
    data = capture_bytes(Capture(exchanges=[exchange]))
    assert read_capture_bytes(data).exchanges == [exchange]
    call = decode(exchange)
    assert call.streamed and call.events == 2 and call.states[-1] == ("t-1", "TASK_STATE_COMPLETED")


def test_push_tokens_and_credentials_inside_protobuf_are_redacted():
    config = a2a_pb2.TaskPushNotificationConfig(
        task_id="t-1", url="http://127.0.0.1:9/hook", token=SECRET,
        authentication=a2a_pb2.AuthenticationInfo(scheme="Bearer", credentials="cred-" + SECRET))
    flow = _grpc_flow("CreateTaskPushNotificationConfig", config, [config])
    exchange = exchange_from_flow(flow, 1, redactor=Redactor(b"k"))
    for message in (exchange.request, exchange.response):
        assert SECRET.encode() not in message.body and split_frames(message.body) is not None
    assert exchange.meta.redacted == ["body $.authentication.credentials", "body $.token"]
    call = decode(exchange)
    assert call.request_json["token"].startswith("[redacted: token, sha256:")
    assert call.request_json["url"] == "http://127.0.0.1:9/hook" and call.task_id == "t-1"
    # a message that is not the declared type is kept as it came, never a crash
    flow = _grpc_flow("CreateTaskPushNotificationConfig", config, [])
    flow.request.content = frame(b"\x0a\xff token")
    assert exchange_from_flow(flow, 2, redactor=Redactor(b"k")).request.body == flow.request.content
