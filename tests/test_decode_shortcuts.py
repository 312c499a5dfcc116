"""decode's shortcuts give what the general readings give: targets as urlsplit splits them, times
as the meta's datetimes say, JSON as the careful check-then-parse reads it, and a stream's frames
read alike whether or not its body lets most of them be skipped unread."""

from __future__ import annotations

import json
from urllib.parse import urlsplit

import pytest
from hypothesis import given
from hypothesis import strategies as st

from a2a_capture import nesting
from a2a_capture.a2a import decode as decode_module
from a2a_capture.a2a.decode import _json, _json_checked, _split_target, card_of, decode, task_states
from a2a_capture.capture.models import Exchange, ExchangeMeta, Request, Response

_TARGET_CHARS = st.sampled_from([*"/?#=&%[]:@ \t\r\nab01.-_~", "é", "\x00"])


@given(st.text(_TARGET_CHARS, max_size=24))
def test_targets_split_as_urlsplit_does(target):
    try:
        expected = urlsplit(target)
    except ValueError:
        expected = urlsplit("/" + target.lstrip("/").replace("[", "%5B").replace("]", "%5D"))
    assert _split_target(target) == (expected.scheme, expected.netloc, expected.path, expected.query)


@pytest.mark.parametrize("target", ["/", "/a2a/v1/tasks/t-1?historyLength=2&x=1", "/x#frag", "//host/p",
                                    "http://h:1/p?q", "/p\tq?r", "*", "", "/tasks?", "/[::1]/x"])
def test_named_targets_split_as_urlsplit_does(target):
    expected = urlsplit(target)
    assert _split_target(target) == (expected.scheme, expected.netloc, expected.path, expected.query)


_SPELLINGS = ["2026-11-30T07:40:01.102311Z", "2026-11-30T07:40:01Z", "2026-11-30T07:40:01.123+02:00",
              "2026-11-30T07:40:01.123456", "2026-13-30T07:40:01.123456Z", "2026-11-30T24:00:00.000000Z",
              "soon", "", None]


@pytest.mark.parametrize("start", [s for s in _SPELLINGS if s])
@pytest.mark.parametrize("end", _SPELLINGS)
def test_times_are_what_the_meta_says(start, end):
    meta = ExchangeMeta(start=start, end=end)
    started, ended = meta.started_at, meta.ended_at
    duration = ((ended - started).total_seconds()
                if started and ended and (started.tzinfo is None) == (ended.tzinfo is None) else None)
    assert meta.times() == (started.timestamp() if started else None, duration)


def _deep(levels: int) -> str:
    return "[" * levels + "]" * levels


@pytest.mark.parametrize("body", [
    b"", b"  \n", b"{}", b'{"a": [1, 2, {"b": null}]}', b"NaN", b'{"n": 1e999}', b"[1, 2", b"not json",
    b'{"big": 123456789012345678901234567890}', _deep(100).encode(), _deep(101).encode(), _deep(150).encode(),
    ("[" * 150).encode(), b'"' + b"[" * 300 + b'"', ("{" + '"a":' * 120).encode(), " [1] ", _deep(101), "\n",
    b"\xff\xfe", '{"k": "\\u00e9"}', b"[" + b"1," * 600_000 + b"1]",
])
def test_json_is_read_as_the_careful_reading_reads_it(body):
    assert _json(body) == _json_checked(body)


def test_json_nested_past_the_limit_is_not_decoded_however_short():
    assert _json(_deep(nesting.MAX_DEPTH + 1).encode()) == (None, True)
    assert _json(_deep(nesting.MAX_DEPTH).encode())[1] is False


def test_task_states_in_document_order_up_to_the_limit():
    value = {"result": {"tasks": [
        {"id": "a", "status": {"state": "TASK_STATE_WORKING"},
         "history": [{"taskId": "h", "status": {"state": "completed"}}]},
        {"taskId": "b", "status": {"state": "completed"}, "nested": {"id": "c", "status": {"state": "failed"}}},
    ]}, "status": {"state": "canceled"}}
    assert task_states(value) == [("a", "TASK_STATE_WORKING"), ("b", "TASK_STATE_COMPLETED"),
                                  ("c", "TASK_STATE_FAILED")]
    many = [{"id": str(n), "status": {"state": "working"}} for n in range(10)]
    assert [task for task, _ in task_states(many, limit=3)] == ["0", "1", "2"]


def _stream(frames: list[str]) -> Exchange:
    send = {"jsonrpc": "2.0", "id": 1, "method": "SendStreamingMessage",
            "params": {"message": {"messageId": "m", "role": "ROLE_USER", "parts": [{"text": "hi"}]}}}
    body = "".join(frame + "\n\n" for frame in frames).encode()
    return Exchange(number=1, meta=ExchangeMeta(start="2026-11-30T07:40:01.102311Z"),
                    request=Request(method="POST", target="/", body=json.dumps(send).encode(),
                                    headers=[("Host", "a:1"), ("Content-Type", "application/json")]),
                    response=Response(status=200, body=body, event_times=[n / 10 for n in range(len(frames))],
                                      headers=[("content-type", "text/event-stream")]))


def _envelope(result: dict) -> str:
    return "data: " + json.dumps({"jsonrpc": "2.0", "id": 1, "result": result})


_WORKING = _envelope({"task": {"id": "t", "status": {"state": "TASK_STATE_WORKING"}}})
_ARTIFACT = _envelope({"artifactUpdate": {"taskId": "t", "artifact": {"parts": [{"text": "a line"}]}}})
_ESCAPED = _envelope({"artifactUpdate": {"taskId": "t", "artifact": {"parts": [{"text": "caf\u00e9"}]}}})
_DONE = _envelope({"statusUpdate": {"taskId": "t", "status": {"state": "TASK_STATE_COMPLETED"}}})
_BOTH = [("t", "TASK_STATE_WORKING"), ("t", "TASK_STATE_COMPLETED")]


@pytest.mark.parametrize(("frames", "states", "offsets", "error", "every_frame"), [
    ([_WORKING, _ARTIFACT, _DONE], _BOTH, [0.0, 0.2], None, False),
    ([_WORKING, _ESCAPED, _DONE], _BOTH, [0.0, 0.2], None, True),
    ([": ping", _WORKING, ": ping", _DONE], _BOTH, [0.1, 0.3], None, False),
    # a status key spelled with escapes is read (the body has `\u`: every frame is looked at)
    ([_WORKING, 'data: {"result": {"statusUpdate": {"taskId": "t", "st\\u0061tus": {"state": "TASK_STATE_FAILED"}}}}'],
     [("t", "TASK_STATE_WORKING"), ("t", "TASK_STATE_FAILED")], [0.0, 0.1], None, True),
    # an error as a JSON-RPC envelope in any frame, and as an `event: error` frame
    ([_WORKING, 'data: {"jsonrpc": "2.0", "id": 1, "error": {"code": -32001, "message": "gone"}}'],
     [("t", "TASK_STATE_WORKING")], [0.0], "TaskNotFoundError", True),
    ([_WORKING, "event: error\ndata: {\"code\": -32603, \"message\": \"boom\"}", _DONE], _BOTH, [0.0, 0.2],
     "InternalError", True),
])
def test_stream_frames_are_read_whichever_way_the_body_allows(monkeypatch, frames, states, offsets, error,
                                                              every_frame):
    looked = []
    read_frames = decode_module._read_frames
    monkeypatch.setattr(decode_module, "_read_frames", lambda *args: looked.append(1) or read_frames(*args))
    call = decode(_stream(frames))
    assert (call.states, call.state_offsets) == (states, offsets)
    assert (call.error.name if call.error else None) == error
    assert call.events == sum(1 for frame in frames if not frame.startswith(":"))
    assert bool(looked) == every_frame


@pytest.mark.parametrize("padding", [0, 40_000])  # a small card is its own key, a large one its digest's
def test_the_same_card_bytes_are_the_same_card(padding):
    data = {"name": "probe", "description": "x" * padding, "skills": [], "url": "http://a:1/"}
    raw = json.dumps(data).encode()
    first = card_of(data, raw)
    assert card_of(json.loads(raw), bytes(bytearray(raw))) is first
    other = json.dumps({**data, "name": "other"}).encode()
    assert card_of(json.loads(other), other).name == "other"
