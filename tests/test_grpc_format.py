"""gRPC exchanges in the `.http` format: readable messages and status, exact bytes, round trips."""

from __future__ import annotations

import os

import pytest
from a2a.types import a2a_pb2
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from a2a_capture import capture_bytes
from a2a_capture.capture import Capture, Exchange, Request, Response, writer
from a2a_capture.capture.grpc import frame
from a2a_capture.capture.reader import read_capture_bytes
from a2a_capture.errors import CaptureFormatError
from tests import grpc_builders as gb
from tests.test_roundtrip_property import HEADER_VALUE, TOKEN, exchanges


def _session() -> Capture:
    unknown = a2a_pb2.StreamResponse(task=gb.task("t-1")).SerializeToString() + b"\xa0\x06\x01"  # field 100
    streamed = a2a_pb2.StreamResponse(task=gb.task("t-1", "TASK_STATE_WORKING"))
    send = gb.call(1, "SendStreamingMessage", gb.send(), [streamed, a2a_pb2.StreamResponse(task=gb.task("t-1"))],
                   times=[0.012, 0.5])
    send.response.body += frame(b"\x08\x01junk") + frame(unknown)
    send.response.event_times += [0.6, 0.7]
    missing = gb.call(2, "GetTask", a2a_pb2.GetTaskRequest(id="nope"), status=5, message="Task not found",
                      reason="TASK_NOT_FOUND")
    return Capture(exchanges=[send, missing])


def test_messages_read_as_json_status_by_name_and_bytes_kept():
    capture = _session()
    data = capture_bytes(capture)
    text = data.decode()
    assert "POST /lf.a2a.v1.A2AService/SendStreamingMessage HTTP/2\n" in text
    assert "grpc message 1 · lf.a2a.v1.SendMessageRequest · " in text
    assert '"role": "ROLE_USER"' in text and '"state": "TASK_STATE_WORKING"' in text
    assert "grpc message 3 · lf.a2a.v1.StreamResponse · 6 bytes · not a valid lf.a2a.v1.StreamResponse" in text
    assert "1 field(s) the schema does not know" in text
    assert "grpc status · OK (0)\ngrpc-status: 0\n" in text
    assert "grpc status · NOT_FOUND (5) · TASK_NOT_FOUND\n" in text
    assert "#@ event-times: 0.012 0.5 0.6 0.7" in text
    back = read_capture_bytes(data, "grpc.http")
    assert back == capture
    assert back.exchanges[0].response.body == capture.exchanges[0].response.body
    assert back.exchanges[0].response.trailers == [("grpc-status", "0"), ("grpc-message", "")]
    assert capture_bytes(back) == data


def test_the_layout_alone_names_a_message_by_its_size_and_reads_back_the_same():
    """Below the protocol the writer knows no A2A: without views it shows sizes, and a capture so
    written reads back to the same exchanges (the views are the caller's, a2a.grpc.VIEWS)."""
    capture = _session()
    data = writer.capture_bytes(capture)
    text = data.decode()
    assert "grpc message 1 · message · " in text and "SendMessageRequest" not in text
    assert text.endswith("\n\ngrpc status\n") and "grpc status ·" not in text
    assert read_capture_bytes(data) == capture
    assert capture_bytes(read_capture_bytes(data)) == data  # views read are kept, whoever made them


def test_a_view_written_by_hand_is_kept_and_a_cut_stream_is_framed_by_length():
    capture = _session()
    cut = capture.exchanges[0].model_copy(deep=True)
    cut.number = 3
    cut.response.body = cut.response.body[:-3]  # the stream broke inside a message
    capture.exchanges.append(cut)
    data = capture_bytes(capture).replace(b"grpc message 1 \xc2\xb7 lf.a2a.v1.SendMessageRequest",
                                          b"grpc message 1 \xc2\xb7 my words", 1)
    assert b"#@ response-body: " in data
    back = read_capture_bytes(data)
    assert back == capture
    assert back.exchanges[0].request.grpc_views[0][0].startswith("grpc message 1 · my words")
    assert capture_bytes(back) == data


@pytest.mark.parametrize(("old", "new", "expected"), [
    (b"grpc bytes AAAAAAYSBG5vcGU=", b"grpc bytes ***", "expected base64 after 'grpc bytes', found characters that "
                                                      "are not base64"),
    (b"grpc-status: 0\n", b"grpc-status: 0\nnot a trailer\n", "expected a trailer line (name: value) or a blank "
                                                              "line, found 'not a trailer'"),
    (b"}\ngrpc bytes AAAAAAYSBG5vcGU=", b"}\n\n", "expected 'grpc bytes' lines with the message's bytes in base64, "
                                                 "found a blank line"),
])
def test_broken_grpc_layout_is_one_clear_error(old, new, expected):
    data = capture_bytes(_session())
    assert old in data
    data = data.replace(old, new, 1)
    line = data[:data.index(new)].count(b"\n") + 1 + new.count(b"\n") - (1 if new.endswith(b"\n") else 0)
    with pytest.raises(CaptureFormatError) as raised:
        read_capture_bytes(data, "grpc.http")
    assert str(raised.value) == f"grpc.http:{line}:1: {expected}"


PATHS = st.sampled_from(["/lf.a2a.v1.A2AService/SendMessage", "/a2a.v1.A2AService/TaskSubscription",
                         "/lf.a2a.v1.A2AService/GetTask", "/other.v1.Service/Do", "/x"])


@st.composite
def grpc_body(draw):
    payloads = draw(st.lists(st.binary(max_size=40), max_size=3))
    body = b"".join(frame(payload, draw(st.booleans())) for payload in payloads)
    if body and draw(st.integers(0, 4)) == 0:
        body = body[:draw(st.integers(0, len(body) - 1))]  # a stream cut short
    return body


@st.composite
def grpc_exchanges(draw, number):
    head = [("content-type", draw(st.sampled_from(["application/grpc", "application/grpc+proto"]))),
            *draw(st.lists(st.tuples(TOKEN, HEADER_VALUE), max_size=2))]
    request = Request(method="POST", target=draw(PATHS), http_version="2", headers=head, body=draw(grpc_body()))
    response = None
    if draw(st.booleans()):
        status_in_head = draw(st.booleans())
        status = [("grpc-status", str(draw(st.integers(0, 20))))]
        response = Response(status=200, http_version="2", body=draw(grpc_body()),
                            headers=[("content-type", "application/grpc"), *(status if status_in_head else [])],
                            trailers=draw(st.lists(st.tuples(TOKEN, HEADER_VALUE), max_size=3)),
                            event_times=draw(st.lists(st.floats(0, 100, allow_nan=False) | st.none(), max_size=3)))
    return Exchange(number=number, title="grpc", request=request, response=response)


@st.composite
def mixed_captures(draw):
    count = draw(st.integers(1, 4))
    return Capture(exchanges=[draw(grpc_exchanges(n) if draw(st.booleans()) else exchanges(n))
                              for n in range(1, count + 1)], newline=draw(st.sampled_from(["\n", "\r\n"])))


@settings(max_examples=int(os.environ.get("ROUNDTRIP_EXAMPLES", "300")), deadline=None,
          suppress_health_check=[HealthCheck.too_slow])
@given(mixed_captures())
def test_grpc_exchanges_write_then_read_is_the_identity(capture):
    data = capture_bytes(capture)
    back = read_capture_bytes(data, "generated.http")
    assert back == capture
    assert capture_bytes(back) == data


def test_har_and_flows_carry_grpc():
    from a2a_capture.convert import capture_to_flows, capture_to_har, flows_to_capture, har_to_capture

    capture = _session()
    data = capture_bytes(capture)
    assert capture_bytes(har_to_capture(capture_to_har(capture))) == data
    assert capture_bytes(flows_to_capture(capture_to_flows(capture))) == data
