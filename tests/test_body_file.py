"""A body larger than the reader's buffer stays in its file (capture/body.py): read in pieces, it is the
same body, its frames the same frames, and the memory to read a stream follows its largest frame."""

from __future__ import annotations

import io
import tempfile
import tracemalloc
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from a2a_capture.a2a.decode import decode
from a2a_capture.capture import iter_exchanges, read_capture, read_capture_bytes, sse
from a2a_capture.capture.body import FileBody, opened

_FRAME = (b'data: {"jsonrpc": "2.0", "id": 1, "result": {"statusUpdate": {"taskId": "2fbb04b8-dd7f-4b93-b6f0-'
          b'49130185e74c", "contextId": "c", "status": {"state": "TASK_STATE_WORKING"}}}}\r\n\r\n')
_SEND = b'{"jsonrpc": "2.0", "id": 1, "method": "SendStreamingMessage", "params": {}}'


def _in_file(data: bytes) -> FileBody:
    """``data`` as a body left in a file."""
    with tempfile.TemporaryFile() as handle:
        handle.write(data)
        handle.flush()
        file = opened(handle)  # a descriptor of its own: the file lives as long as the body
    return FileBody(file, 0, len(data))


def _stream_capture(path: Path, frames: int, framed: bool = True) -> Path:
    body = _FRAME * frames
    head = [b"### 1 \xc2\xb7 SendStreamingMessage", b"#@ start: 2026-11-30T08:13:48.205108Z",
            b"#@ end: 2026-11-30T08:23:48.416123Z", b"#@ client: 127.0.0.1:47708", b"#@ server: 127.0.0.1:41241",
            *([b"#@ response-body: %d bytes" % len(body)] if framed else []),
            b"POST / HTTP/1.1", b"Host: 127.0.0.1:41241", b"Content-Type: application/json",
            b"Content-Length: %d" % len(_SEND), b"", _SEND, b"",
            b"HTTP/1.1 200 OK", b"content-type: text/event-stream", b"", b""]
    path.write_bytes(b"\n".join(head) + body + b"\n")
    return path


_PARTS = st.lists(st.sampled_from(["data: a", "data: b\ndata: c", ": ping", "event: x\ndata: y", "", "id: 3",
                                   "data:tight", "retry: 10", "data: é", "data", "data: data: z", "\r", "\n"]),
                  max_size=10)


@settings(max_examples=300, deadline=None)
@given(_PARTS, st.sampled_from(["\n", "\r\n", "\r"]), st.sampled_from(["", "\n", "\n\n", "\n\n\n"]),
       st.sampled_from([None, "\r", "\n", "\r\n"]), st.integers(0, 400), st.sampled_from([{}, {1: ["a note"]}]),
       st.sampled_from([1, 2, 3, 5, 8, 13, 64]))
def test_a_stream_read_in_pieces_has_the_events_of_the_whole(parts, eol, tail, odd, where, notes, piece):
    """Every way through a body (one-line data frames, a split by blank lines, the WHATWG rules), a window at a
    time over a body in its file, gives the events the whole body in memory gives, spans and all."""
    body = ("\n\n".join(parts) + tail).replace("\n", eol).encode()
    if odd is not None:  # one line end of another kind somewhere: mixed line ends
        where %= len(body) + 1
        body = body[:where] + odd.encode() + body[where:]
    times = [0.5 * i for i in range(3)]
    assert list(sse.events(_in_file(body), times, notes, piece=piece)) == sse.parse(body, times, notes)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from([b"\n", b"\r", b"\r\n", b"data: ", b"x", b"data: abc", b"\n\n", b"\r\n\r\n",
                                 b"da", b"ta: ", b"abcdefgh"]), max_size=30), st.sampled_from([1, 2, 3, 7, 16]))
def test_counts_in_pieces_are_the_counts_of_the_whole(parts, piece):
    body = b"".join(parts)
    counts = sse._Counts(_in_file(body), piece)
    for needle in (b"\r", b"\n", b"\r\n", b"\n\n", b"\r\n\r\n", b"\n\ndata: ", b"\r\n\r\ndata: "):
        assert counts.count(needle) == body.count(needle), needle


def test_a_large_body_stays_in_the_file_and_is_the_body_read_in_memory(tmp_path):
    """The same capture read from its file (the body left there) and from bytes in memory (the body held):
    equal exchanges, equal bodies and frames, for a body framed by its length and for one that is not."""
    for framed in (True, False):
        path = _stream_capture(tmp_path / f"stream-{framed}.http", 24_000, framed)  # 4 MB: past the buffer
        from_file, in_memory = read_capture(path), read_capture_bytes(path.read_bytes())
        kept, held = from_file.exchanges[0].response, in_memory.exchanges[0].response
        assert isinstance(kept.stored, FileBody) and isinstance(held.stored, bytes)
        assert from_file == in_memory
        assert kept.body == held.body and kept.body_size == len(held.body)
        assert list(kept.iter_events()) == held.events and len(held.events) == 24_000


def test_a_body_left_in_the_file_outlives_the_reader_and_the_path(tmp_path):
    path = _stream_capture(tmp_path / "stream.http", 24_000)
    exchange = next(iter_exchanges(path))
    path.unlink()  # the reader closed its file too: the body keeps a descriptor of its own
    assert exchange.response.body.count(b"\r\n\r\n") == 24_000


def _decoded_peak(path: Path) -> int:
    tracemalloc.start()
    try:
        for exchange in iter_exchanges(path):
            call = decode(exchange)
        assert call.events > 0
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


@pytest.mark.parametrize("framed", [True, False])
def test_reading_a_large_stream_takes_the_memory_of_a_window_not_of_the_stream(tmp_path, framed):
    """A stream four times as long (4.4 MB, then 17.6 MB) costs the reader and decode about the same: the
    body stays in the file and its frames pass a window at a time. What grows is decode's tally of the
    states the frames show (a reference each, a few bytes a frame); held, the body alone would add 13 MB
    (as it did before bodies stayed in their file: 18 MB and 71 MB)."""
    small = _decoded_peak(_stream_capture(tmp_path / "small.http", 24_000, framed))
    large = _decoded_peak(_stream_capture(tmp_path / "large.http", 96_000, framed))
    # a few pieces of 1 MB: the reader's buffer (up to 4 as it searches for the end of an unframed body), a
    # window, the piece ahead
    assert large < 12_000_000, large
    assert large - small < 2_000_000, (small, large)


def test_a_stream_given_as_bytes_in_memory_is_read_as_before():
    """A file object with no file under it (bytes in memory) has no place to leave a body: it is held."""
    data = _FRAME * 24_000
    capture = read_capture_bytes(b"### 1\nPOST / HTTP/1.1\nHost: a\n\nHTTP/1.1 200 OK\n"
                                 b"content-type: text/event-stream\ncontent-length: %d\n\n" % len(data) + data + b"\n")
    stored = capture.exchanges[0].response.stored
    assert isinstance(stored, bytes) and stored == data
    assert opened(io.BytesIO(data)) is None
