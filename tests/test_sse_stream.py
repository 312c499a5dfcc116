"""SSE frames are read as they pass: a stream's memory is its largest frame's, not its length's."""

from __future__ import annotations

import tracemalloc

from hypothesis import given
from hypothesis import strategies as st

from a2a_capture.a2a.decode import decode
from a2a_capture.capture import Exchange, ExchangeMeta, Request, Response, sse

_FRAME = (b'data: {"jsonrpc": "2.0", "id": 1, "result": {"statusUpdate": {"taskId": "2fbb04b8-dd7f-4b93-b6f0-'
          b'49130185e74c", "contextId": "c", "status": {"state": "TASK_STATE_WORKING"}}}}')


def _as_split(body: bytes, eol: bytes) -> bool:
    """What ``_only_data_frames`` says, as its definition says it: every piece between blank lines a
    one-line `data: ` frame, the body ending with a blank line."""
    pieces = body.split(eol + eol)
    return not pieces.pop() and all(piece.startswith(b"data: ") and b"\n" not in piece and b"\r" not in piece
                                    for piece in pieces)


@given(st.lists(st.sampled_from(["data: a", "data: data: b", "data: ", "data:x", ": p", "", "\r", "\n", "\r\n",
                                 "\n\n", "data: a\nb", "x"]), max_size=8),
       st.sampled_from(["\n", "\r\n"]), st.sampled_from(["", "\n", "\n\n", "\n\n\n", "\n\n\n\n"]))
def test_a_body_of_data_frames_is_told_by_counts_as_a_split_tells_it(parts, eol, tail):
    body = ("\n\n".join(parts) + tail).replace("\n", eol).encode() if eol == "\r\n" else \
        ("\n\n".join(parts) + tail).encode()
    if eol == "\n" and b"\r" in body:
        return  # such a body is read the CRLF ways
    assert sse._only_data_frames(body, body.count, eol.encode()) == _as_split(body, eol.encode())


@given(st.lists(st.sampled_from(["data: a", "data: b\ndata: c", ": ping", "event: x\ndata: y", "", "id: 3"]),
                max_size=8), st.sampled_from(["\n", "\r\n", "\r"]), st.sampled_from(["", "\n", "\n\n\n"]))
def test_events_one_at_a_time_are_the_events_parsed(parts, eol, tail):
    body = ("\n\n".join(parts) + tail).replace("\n", eol).encode()
    times = [0.1 * n for n in range(4)]
    passed = sse.events(body, times, {1: ["a note"]})
    assert not isinstance(passed, list)
    assert list(passed) == sse.parse(body, times, {1: ["a note"]})


_SEND = b'{"jsonrpc": "2.0", "id": 1, "method": "SendStreamingMessage", "params": {}}'


def _stream(frames: int) -> Exchange:
    body = (_FRAME + b"\n\n") * frames
    return Exchange(number=1, meta=ExchangeMeta(start="2026-11-30T07:40:01.102311Z"),
                    request=Request(method="POST", target="/", headers=[("Host", "a:1")], body=_SEND),
                    response=Response(status=200, body=body, headers=[("content-type", "text/event-stream")]))


def _decoded_peak(exchange: Exchange) -> tuple[int, object]:
    tracemalloc.start()
    try:
        call = decode(exchange)
        return tracemalloc.get_traced_memory()[1], call
    finally:
        tracemalloc.stop()


def test_decoding_a_stream_keeps_no_frame():
    """10,000 tiny frames (1.6 MB): as a list of events they took ~6 MB besides the body; read as they
    pass, 0.2 MB: what stays is a reference per state shown and when (the same state is one tuple)."""
    exchange = _stream(10_000)
    peak, call = _decoded_peak(exchange)
    assert call.events == 10_000 and len(call.states) == 10_000
    assert peak < 1_000_000, peak
    assert "events" not in exchange.response.__dict__  # nothing parsed was left on the response
