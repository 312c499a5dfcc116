"""Hand-written edge cases for the reader and writer."""

from __future__ import annotations

import base64
import io

import pytest
from hypothesis import given
from hypothesis import strategies as st

from a2a_capture.capture import (
    Capture,
    Exchange,
    Request,
    Response,
    capture_bytes,
    iter_exchanges,
    read_capture_bytes,
    sse,
)
from a2a_capture.errors import CaptureFormatError

SIMPLE = b"""### 1 \xc2\xb7 SendMessage
POST /rpc HTTP/1.1
Host: localhost:9999
Content-Type: application/json

{"jsonrpc": "2.0", "id": 1, "method": "SendMessage"}

HTTP/1.1 200 OK
Content-Type: application/json

{"jsonrpc": "2.0", "id": 1, "result": {}}
"""


def roundtrip(data: bytes) -> Capture:
    capture = read_capture_bytes(data, "edge.http")
    assert capture_bytes(capture) == data
    return capture


def test_lf_file():
    capture = roundtrip(SIMPLE)
    exchange = capture.exchanges[0]
    assert (exchange.number, exchange.title) == (1, "SendMessage")
    assert exchange.request.body == b'{"jsonrpc": "2.0", "id": 1, "method": "SendMessage"}'
    assert exchange.response.status == 200
    assert exchange.response.reason == "OK"


def test_crlf_file_gives_the_same_exchanges():
    crlf = SIMPLE.replace(b"\n", b"\r\n")
    capture = roundtrip(crlf)
    assert capture.newline == "\r\n"
    lf = read_capture_bytes(SIMPLE)
    assert capture.exchanges == lf.exchanges


def test_empty_file_has_no_exchanges():
    assert read_capture_bytes(b"").exchanges == []
    assert capture_bytes(read_capture_bytes(b"")) == b""


def test_file_notes_and_pragmas_before_the_first_block():
    data = b"#@ format: a2a-capture/1\n# recorded by hand\n\n" + SIMPLE
    capture = roundtrip(data)
    assert capture.meta == [("format", "a2a-capture/1")]
    assert capture.notes == ["recorded by hand"]


def test_chunked_body_kept_dechunked_with_its_header():
    exchange = Exchange(
        number=1,
        title="chunked",
        request=Request(method="GET", target="/x", headers=[("Host", "a")]),
        response=Response(
            status=200,
            reason="OK",
            headers=[("Content-Type", "application/json"), ("Transfer-Encoding", "chunked")],
            body=b'{"a": 1}\n',
        ),
    )
    data = capture_bytes(Capture(exchanges=[exchange]))
    assert b"#@ response-body: 9 bytes" in data
    assert b"Transfer-Encoding: chunked" in data
    assert read_capture_bytes(data).exchanges == [exchange]


def test_content_length_frames_a_body_exactly():
    body = b"line one\n\n### 2 \xc2\xb7 not a block\n\nHTTP/1.1 200 OK\n\n# not a note"
    data = (
        b"### 1 \xc2\xb7 tricky\nPOST /x HTTP/1.1\nHost: a\nContent-Length: %d\n\n" % len(body)
        + body
        + b"\n\nHTTP/1.1 204 No Content\n\n"
    )
    capture = roundtrip(data)
    assert capture.exchanges[0].request.body == body
    assert capture.exchanges[0].response.status == 204
    assert len(capture.exchanges) == 1


@pytest.mark.parametrize(
    "body",
    [
        b"### 2 \xc2\xb7 looks like a block\nmore",
        b"first\n\n### 7 \xc2\xb7 looks like a block",
        b"first\n\nHTTP/1.1 200 OK\n\nsecond",
        b"HTTP/1.1 200 OK",
        b"first\n\n# looks like a note",
        b"ends with a newline\n",
        b"\n\nstarts with blank lines",
        b"data: x\r\n\r\ndata: y\r\n\r\n",
    ],
)
def test_bodies_that_look_like_structure_are_written_unambiguously(body):
    exchange = Exchange(
        number=1,
        request=Request(method="POST", target="/x", headers=[("Host", "a")], body=body),
        response=Response(status=200, headers=[("Content-Type", "text/plain")], body=body),
    )
    capture = Capture(exchanges=[exchange, exchange.model_copy(update={"number": 2})])
    data = capture_bytes(capture)
    assert read_capture_bytes(data).exchanges == capture.exchanges


def test_binary_body_is_written_as_base64():
    body = bytes(range(256)) * 3
    exchange = Exchange(
        number=1,
        request=Request(method="POST", target="/upload", headers=[("Host", "a")], body=body),
    )
    data = capture_bytes(Capture(exchanges=[exchange]))
    assert b"#@ request-body: 768 bytes base64" in data
    assert base64.b64encode(body)[:76] in data
    assert read_capture_bytes(data).exchanges[0].request.body == body


def test_utf8_and_invalid_utf8():
    text = "Grüße, 世界 …".encode()
    invalid = b"caf\xe9 \xff"
    for body in (text, invalid):
        exchange = Exchange(
            number=1,
            request=Request(method="POST", target="/x", headers=[("Host", "a")], body=body),
            response=Response(status=200, headers=[("X-Name", "Grüße")], body=body),
        )
        back = read_capture_bytes(capture_bytes(Capture(exchanges=[exchange])))
        assert back.exchanges == [exchange]


def test_sse_frames_notes_comments_and_multiline_data():
    data = b"""### 1 \xc2\xb7 stream
POST /rpc HTTP/1.1
Host: a

{}

HTTP/1.1 200 OK
Content-Type: text/event-stream

# the first frame

: ping
event: update
id: 7
data: {"a":
data: 1}

data: two

# the client closes the connection
"""
    capture = roundtrip(data)
    exchange = capture.exchanges[0]
    events = exchange.response.events
    assert [e.data for e in events] == ['{"a":\n1}', "two"]
    assert events[0].event == "update" and events[0].id == "7" and events[0].comments == ("ping",)
    assert events[0].notes == ("the first frame",)
    assert exchange.trailing_notes == ["the client closes the connection"]
    # a note written right above its frame, with no blank line, reads the same
    tight = read_capture_bytes(data.replace(b"frame\n\n: ping", b"frame\n: ping"))
    assert tight.exchanges == capture.exchanges


def test_recorded_metadata_and_event_times():
    exchange = Exchange(
        number=3,
        title="SendStreamingMessage",
        request=Request(method="POST", target="/rpc", headers=[("Host", "127.0.0.1:41241")], body=b"{}"),
        response=Response(
            status=200,
            reason="OK",
            headers=[("content-type", "text/event-stream"), ("transfer-encoding", "chunked")],
            body=b"data: 1\r\n\r\ndata: 2\r\n\r\n",
            event_times=[0.0391, 0.0782],
        ),
    )
    exchange.meta.start = "2026-11-30T07:40:01.123456Z"
    exchange.meta.end = "2026-11-30T07:40:01.250000Z"
    exchange.meta.client = "127.0.0.1:50312"
    exchange.meta.server = "127.0.0.1:41241"
    exchange.meta.redacted = ["header Authorization"]
    data = capture_bytes(Capture(exchanges=[exchange]))
    back = read_capture_bytes(data).exchanges[0]
    assert back == exchange
    assert [e.at for e in back.response.events] == [0.0391, 0.0782]
    assert back.meta.duration == pytest.approx(0.126544)


def test_documentation_cuts_are_read_and_marked():
    data = """### 6 · CreateTaskPushNotificationConfig: not supported
POST /a2a/jsonrpc HTTP/1.1
Host: localhost:41242
…

{
  "jsonrpc": "2.0",
  …
  "method": "CreateTaskPushNotificationConfig",
  "params": {"taskId": "0000…0000"}
}

HTTP/1.1 200 OK
Content-Type: application/json

…
""".encode()
    capture = roundtrip(data)
    exchange = capture.exchanges[0]
    assert exchange.cut
    assert exchange.request.head_cuts == [1]
    assert exchange.response.body == "…".encode()


def test_a_stale_content_length_in_a_documentation_capture_falls_back():
    data = b"""### 1 \xc2\xb7 hand-written
POST /rpc HTTP/1.1
Host: a
Content-Length: 999

{"id": 1}

HTTP/1.1 200 OK

{}
"""
    exchange = read_capture_bytes(data).exchanges[0]
    assert exchange.request.body == b'{"id": 1}'


def test_streaming_reader_yields_exchanges_one_by_one():
    data = b"\n".join([SIMPLE] * 3)
    assert [e.number for e in iter_exchanges(__import__("io").BytesIO(data))] == [1, 1, 1]


# -- errors ------------------------------------------------------------------------------


def error_for(data: bytes) -> CaptureFormatError:
    with pytest.raises(CaptureFormatError) as info:
        read_capture_bytes(data, "broken.http")
    return info.value


def test_a_response_with_no_request():
    error = error_for(b"### 1 \xc2\xb7 lost\nHTTP/1.1 200 OK\nContent-Type: text/plain\n\nhi\n")
    assert (error.path, error.line) == ("broken.http", 2)
    assert "request line" in str(error) and "response with no request" in str(error)


def test_text_before_the_first_block():
    error = error_for(b"hello\n" + SIMPLE)
    assert error.line == 1
    assert str(error).startswith("broken.http:1:1: expected a block header")


def test_a_truncated_framed_body():
    data = b"### 1 \xc2\xb7 cut short\n#@ request-body: 500 bytes\nPOST /x HTTP/1.1\nHost: a\n\nonly this"
    error = error_for(data)
    assert error.line == 6
    assert "500 bytes of body" in str(error) and "end of the file" in str(error)


def test_a_file_truncated_inside_a_head_is_read_as_far_as_it_goes():
    exchange = read_capture_bytes(b"### 1 \xc2\xb7 short\nGET /x HTTP/1.1\nHost: a").exchanges[0]
    assert exchange.request.target == "/x" and exchange.response is None


def test_a_bad_header_line_names_its_line():
    error = error_for(b"### 1 \xc2\xb7 x\nGET /x HTTP/1.1\nHost: a\nnot a header\n\n")
    assert error.line == 4
    assert "header line" in str(error)


def test_a_bad_block_header():
    error = error_for(b"### one \xc2\xb7 x\nGET /x HTTP/1.1\n\n")
    assert error.line == 1


def test_a_body_after_304_is_an_error():
    error = error_for(b"### 1\nGET /x HTTP/1.1\nHost: a\n\nHTTP/1.1 304 Not Modified\n\n{}\n")
    assert error.line == 5 and "no body after a 304" in str(error)


def test_frames_with_no_stream_to_belong_to():
    data = SIMPLE.replace(b"{\"jsonrpc\": \"2.0\", \"id\": 1, \"result\": {}}\n",
                          b"{}\n\n# then\n\ndata: x\n")
    error = error_for(data)
    assert "no earlier exchange is an event stream" in str(error)


def test_unreadable_file(tmp_path):
    from a2a_capture.capture import read_capture

    with pytest.raises(CaptureFormatError) as info:
        read_capture(tmp_path / "missing.http")
    assert "missing.http" in str(info.value) and "readable capture file" in str(info.value)


@given(
    st.lists(st.sampled_from(["data: a", "data: b\ndata: c", ": ping", "event: x\ndata: y", "", "id: 3",
                              "data:tight", "retry: 10", "data: é", "data"]), max_size=8),
    st.sampled_from(["\n", "\r\n", "\r"]),
    st.sampled_from(["", "\n", "\n\n", "\n\n\n"]),
    st.sampled_from([None, "\r", "\n", "\r\n"]),
    st.integers(0, 400),
    st.sampled_from([{}, {1: ["a note"]}]),
)
def test_the_quick_frame_splitter_agrees_with_the_general_one(parts, eol, tail, odd, where, notes):
    body = (eol.join(parts) + tail).replace("\n", eol).encode()
    if odd is not None:  # one line end of another kind somewhere: mixed line ends
        where %= len(body) + 1
        body = body[:where] + odd.encode() + body[where:]
    times = [0.5 * i for i in range(3)]
    quick = sse.parse(body, times, notes)
    general = list(sse._general(sse._Window(body), times, notes))
    if general:  # the spans cover the body
        general[-1] = general[-1]._replace(end=len(body))
    assert quick == general


@given(st.lists(st.sampled_from(["data: a", "data:  c", "data: é…", 'data: {"x": 1}', "data: ", "data:b", ": ping",
                                 "data: x\ndata: y", ""]), max_size=6),
       st.sampled_from(["\n\n", "\n", "", "\n\n\n"]), st.lists(st.floats(0, 9) | st.none(), max_size=8),
       st.sampled_from(["\n", "\r\n"]))
def test_a_stream_of_one_line_data_frames_is_read_as_the_frame_splitter_reads_it(parts, tail, times, eol):
    body = ("\n\n".join(parts) + tail).replace("\n", eol).encode()
    quick = (list(sse._data_frames(sse._Window(body), eol.encode(), times))
             if sse._only_data_frames(body, body.count, eol.encode()) else None)
    if parts and all(part.startswith("data: ") and "\n" not in part for part in parts) and tail == "\n\n":
        assert quick is not None  # what a server streams is read the quick way
    if quick is not None:
        split = list(sse._split(sse._Window(body), len(body), eol.encode(), times, {}))
        assert quick == split == sse.parse(body, times)


@given(st.lists(st.sampled_from(["data: a", "data:b", "data:  c", "data: x\ndata: y", ": ping", "event: e",
                                 "data: é…", "id: 9\ndata: z", "data"]), max_size=6),
       st.sampled_from(["\n", "\r\n", "\r"]), st.sampled_from(["", "\n", "\n\n"]))
def test_the_quick_data_frame_path_agrees_with_the_full_field_parser(parts, eol, tail):
    body = ((eol + eol).join(part.replace("\n", eol) for part in parts) + tail.replace("\n", eol)).encode()
    for event in sse.parse(body):
        full = sse._event(body[event.start:event.end].splitlines(), None, (), event.start, event.end)
        assert event == full


@pytest.mark.parametrize("encoding", ["gzip", "deflate", "br", "zstd"])
def test_compressed_bodies_are_kept_exactly_and_read_decoded(encoding):
    import gzip
    import zlib

    import brotli
    import zstandard

    from a2a_capture.a2a.decode import decode

    payload = (b'{"jsonrpc": "2.0", "id": 1, "result": '
               b'{"task": {"id": "t-1", "status": {"state": "TASK_STATE_COMPLETED"}}}}')
    packed = {"gzip": gzip.compress, "deflate": zlib.compress, "br": brotli.compress,
              "zstd": lambda data: zstandard.ZstdCompressor().compress(data)}[encoding](payload)
    exchange = Exchange(
        number=1,
        request=Request(method="POST", target="/rpc", headers=[("Host", "a"), ("A2A-Version", "1.0")],
                        body=b'{"jsonrpc": "2.0", "id": 1, "method": "GetTask", "params": {"id": "t-1"}}'),
        response=Response(status=200, headers=[("Content-Type", "application/json"), ("Content-Encoding", encoding)],
                          body=packed),
    )
    back = read_capture_bytes(capture_bytes(Capture(exchanges=[exchange]))).exchanges[0]
    assert back.response.body == packed and back.response.content == payload
    assert decode(back).states == [("t-1", "TASK_STATE_COMPLETED")]


# a documentation capture whose Content-Length does not frame the body: the reader reads the
# length, finds no blank line after it, and goes back to read the body by the layout instead
_STALE_LENGTHS = [
    b"### 1 \xc2\xb7 a\nPOST / HTTP/1.1\nHost: a\nContent-Length: 9\n\n{}\n\nHTTP/1.1 200 OK\n",
    b"### 1 \xc2\xb7 a\nPOST / HTTP/1.1\nHost: a\nContent-Length: 2\n\n{}\nHTTP/1.1 200 OK\n",
    b"### 1 \xc2\xb7 a\nGET / HTTP/1.1\nHost: a\n\nHTTP/1.1 200 OK\nContent-Length: 40\n\n{\"a\": 1}\n\n"
    b"### 2 \xc2\xb7 b\nGET / HTTP/1.1\nHost: a\n\nHTTP/1.1 200 OK\nContent-Length: 2\n\n{}\n",
]


@pytest.mark.parametrize("data", _STALE_LENGTHS)
@pytest.mark.parametrize("chunk_size", [1, 5, 7, 16, 64])
def test_going_back_after_a_stale_length_whatever_the_buffer(data, chunk_size, monkeypatch):
    from a2a_capture.capture.source import Source

    whole = read_capture_bytes(data, "doc.http")
    monkeypatch.setattr(Source, "chunk_size", chunk_size)  # the buffer moves on while reading the length
    assert read_capture_bytes(data, "doc.http") == whole
    assert whole.exchanges[0].request.body in (b"{}", b"{}\nHTTP/1.1 200 OK", b"")


class _Pipe(io.RawIOBase):
    """Bytes that cannot be sought, as stdin from a pipe gives them."""

    def __init__(self, data: bytes) -> None:
        self._data = io.BytesIO(data)

    def readable(self) -> bool:
        return True

    def readinto(self, buffer) -> int:
        return self._data.readinto(buffer)


def _read_both_ways(data: bytes) -> tuple[list, list]:
    """Exchanges read from a file that can seek (long bodies read from it in one piece) and from a pipe."""
    return list(iter_exchanges(io.BytesIO(data))), list(iter_exchanges(io.BufferedReader(_Pipe(data))))


@pytest.mark.parametrize("chunk_size", [4096, 1 << 20])
def test_bodies_longer_than_the_buffer_read_from_the_file_as_from_a_pipe(chunk_size, monkeypatch):
    from a2a_capture.capture.source import Source

    monkeypatch.setattr(Source, "chunk_size", chunk_size)
    frames = b"data: {\"n\": 1}\r\n\r\n" * 200_000  # 3.6 MB: past the buffer by more than a chunk
    blocks = [
        b"### 1 \xc2\xb7 stream\n#@ response-body: %d bytes\nPOST / HTTP/1.1\nHost: a\nContent-Length: 2\n\n{}\n\n"
        b"HTTP/1.1 200 OK\nContent-Type: text/event-stream\nTransfer-Encoding: chunked\n\n%s\n" % (len(frames), frames),
        b"### 2 \xc2\xb7 sized\nPOST / HTTP/1.1\nHost: a\nContent-Length: %d\n\n%s\n\n"
        b"HTTP/1.1 200 OK\nContent-Length: 2\n\n{}\n" % (len(frames), frames),
        # a stale Content-Length far past the buffer: read back from the file, the body found by the layout
        b"### 3 \xc2\xb7 stale\nGET / HTTP/1.1\nHost: a\n\nHTTP/1.1 200 OK\nContent-Length: 9000000\n\n{}\n",
    ]
    data = b"\n".join(blocks)
    seekable, piped = _read_both_ways(data)
    assert seekable == piped
    assert [exchange.line for exchange in seekable] == [1, 1 + blocks[0].count(b"\n") + 1,
                                                         3 + blocks[0].count(b"\n") + blocks[1].count(b"\n")]
    assert seekable[0].response.body == frames and seekable[1].request.body == frames
    assert seekable[2].response.body == b"{}"


def test_a_framed_body_cut_short_far_past_the_buffer_names_what_arrived():
    data = b"### 1 \xc2\xb7 cut short\n#@ request-body: 5000000 bytes\nPOST /x HTTP/1.1\nHost: a\n\n" + b"x" * 3_000_000
    for stream in (io.BytesIO(data), io.BufferedReader(_Pipe(data))):
        with pytest.raises(CaptureFormatError) as info:
            list(iter_exchanges(stream))
        assert info.value.line == 6
        assert "5000000 bytes of body" in str(info.value) and "end of the file after 3000000 bytes" in str(info.value)


def _read_one_traced(path):
    """The one exchange in ``path``, and the most memory Python held while reading it."""
    import tracemalloc

    tracemalloc.start()
    try:
        (exchange,) = iter_exchanges(path)
        return exchange, tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_a_long_framed_body_is_held_once_while_it_is_read(tmp_path):
    frames = b"data: {\"n\": 1}\r\n\r\n" * 1_000_000  # 18 MB
    path = tmp_path / "stream.http"
    path.write_bytes(b"### 1 \xc2\xb7 stream\n#@ response-body: %d bytes\nGET / HTTP/1.1\nHost: a\n\n"
                     b"HTTP/1.1 200 OK\nContent-Type: text/event-stream\n\n%s\n" % (len(frames), frames))
    exchange, peak = _read_one_traced(path)
    assert exchange.response.body == frames
    assert peak < 1.3 * len(frames)  # the buffer grown a chunk at a time, then sliced and given to h11: 5x


@pytest.mark.parametrize(("chunk_size", "tail"), [
    (16384, b"\n" * 80_000),  # line ends past the buffer at the end of the file
    (65536, b"\n\r\n\n"), (65536, b"\r\n" * 9_000 + b"\n"),
    (1 << 20, b"\n"),  # the body all in the buffer
])
def test_bodies_without_a_length_longer_than_the_buffer_read_from_the_file_as_from_a_pipe(chunk_size, tail,
                                                                                          monkeypatch):
    """A documentation capture's body ends where the next block starts, or at the end of the file without
    its last line ends: searched for through the buffer, then read from the file in one piece."""
    from a2a_capture.capture.source import Source

    monkeypatch.setattr(Source, "chunk_size", chunk_size)
    frames = b"data: {\"n\": 1}\n\n" * 100_000  # 1.6 MB
    stream = b"GET / HTTP/1.1\nHost: a\n\nHTTP/1.1 200 OK\nContent-Type: text/event-stream\n\n"
    data = (b"### 1 \xc2\xb7 stream\n" + stream + frames + b"\n### 2 \xc2\xb7 next\n" + stream + frames[:-2] + tail)
    seekable, piped = _read_both_ways(data)
    assert seekable == piped
    assert [exchange.response.body for exchange in seekable] == [frames[:-2], frames[:-2]]
    assert seekable[1].line == 1 + (b"### 1 \xc2\xb7 stream\n" + stream + frames).count(b"\n") + 1


def test_a_long_body_without_a_length_is_held_once_while_it_is_read(tmp_path):
    frames = b"data: {\"n\": 1}\r\n\r\n" * 1_000_000  # 18 MB, to the end of the file
    path = tmp_path / "stream.http"
    path.write_bytes(b"### 1 \xc2\xb7 stream\nGET / HTTP/1.1\nHost: a\n\n"
                     b"HTTP/1.1 200 OK\nContent-Type: text/event-stream\n\n%s\n" % frames)
    exchange, peak = _read_one_traced(path)
    assert exchange.response.body == frames[:-4]
    assert peak < 1.3 * len(frames)  # the buffer grown to hold it, sliced, then its line ends cut off: 3x
