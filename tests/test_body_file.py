"""A body larger than the reader's buffer stays in its file (capture/body.py): read in pieces, it is the
same body, its frames the same frames, and the memory to read a stream follows its largest frame."""

from __future__ import annotations

import io
import subprocess
import tempfile
import tracemalloc
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from a2a_capture.a2a.decode import decode
from a2a_capture.capture import iter_exchanges, read_capture, read_capture_bytes, sse
from a2a_capture.capture.body import FileBody, opened
from a2a_capture.errors import CaptureFormatError

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


def _frames(stream) -> list[int]:
    """Each exchange's SSE frames, decoded as analyze decodes them, none kept."""
    return [decode(exchange).events for exchange in iter_exchanges(stream)]


def _peak(path: Path, piped: bool) -> int:
    tracemalloc.start()
    try:
        frames = _from_pipe(path, _frames) if piped else _frames(path)
        assert frames[0] > 0
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


@pytest.mark.parametrize(("framed", "piped"), [(True, False), (False, True)], ids=["framed-file", "unframed-pipe"])
def test_reading_a_large_stream_takes_the_memory_of_a_window_not_of_the_stream(tmp_path, framed, piped):
    """A stream four times as long (4.3 MB, then 17 MB) costs the reader and decode about the same, from a file
    or a pipe, framed by its length or not: the body stays in the file (or its copy) and its frames pass a window
    at a time. What grows is decode's tally of the states the frames show (a reference each, a few bytes a
    frame); held, the body alone would add 13 MB (before bodies stayed in their file: 6.4 -> 19.8 MB)."""
    small = _peak(_stream_capture(tmp_path / "small.http", 24_000, framed), piped)
    large = _peak(_stream_capture(tmp_path / "large.http", 96_000, framed), piped)
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


def _from_pipe(path: Path, read=read_capture):
    """``read`` of the capture at ``path`` through a pipe (which cannot seek), as `cat f | a2a-capture` gives it."""
    with subprocess.Popen(["cat", str(path)], stdout=subprocess.PIPE) as cat:
        try:
            return read(cat.stdout)
        finally:
            cat.stdout.close()


def _broken(path: Path, data: bytes) -> str:
    path.write_bytes(data)
    with pytest.raises(CaptureFormatError) as refused:
        read_capture(path)
    return str(refused.value)


def _blocks(*bodies: tuple[bytes, int | None]) -> bytes:
    """Blocks answered with these bodies, each with the Content-Length given (None: its own length)."""
    blocks = []
    for number, (body, length) in enumerate(bodies, 1):
        blocks.append(b"### %d\nGET /x HTTP/1.1\nHost: a\n\nHTTP/1.1 200 OK\ncontent-type: text/plain\n"
                      b"content-length: %d\n\n%s\n" % (number, len(body) if length is None else length, body))
    return b"\n".join(blocks)


@pytest.mark.parametrize("framed", [True, False])
def test_a_large_body_from_a_pipe_is_copied_to_a_temporary_file_and_is_the_same(tmp_path, framed):
    """From a pipe, a body too long for the buffer is copied to a temporary file as it is read (the pipe cannot
    be read again) and kept there: the same exchanges as from the file."""
    path = _stream_capture(tmp_path / "stream.http", 24_000, framed)
    piped, from_file = _from_pipe(path), read_capture(path)
    assert isinstance(piped.exchanges[0].response.stored, FileBody)
    assert piped == from_file
    assert list(piped.exchanges[0].response.iter_events()) == from_file.exchanges[0].response.events


def test_a_stale_length_over_a_large_body_from_a_pipe_is_read_again_from_the_copy(tmp_path):
    """A documentation capture's Content-Length larger than its body: the reader takes that many bytes, finds
    no end there and goes back; from a pipe, to the bytes it copied. The same as from the file, and from bytes."""
    path = tmp_path / "stale.http"
    path.write_bytes(_blocks((b"x" * 3_000_000, 4_500_000), (b"y" * 2_000_000, None)))
    piped, from_file, in_memory = _from_pipe(path), read_capture(path), read_capture_bytes(path.read_bytes())
    assert piped == from_file == in_memory
    assert [exchange.response.body_size for exchange in piped.exchanges] == [3_000_000, 2_000_000]


def test_a_capture_cut_inside_a_large_body_says_so_from_a_pipe_as_from_the_file(tmp_path):
    data = _blocks((b"x" * 3_000_000, None)).replace(b"### 1\n", b"### 1\n#@ response-body: 5000000 bytes\n")
    said = _broken(tmp_path / "cut.http", data)
    assert "5000000 bytes of body" in said and "the end of the file after 3000001 bytes" in said
    with pytest.raises(CaptureFormatError) as piped:
        _from_pipe(tmp_path / "cut.http")
    assert str(piped.value).replace("<capture>", str(tmp_path / "cut.http")) == said  # a pipe has no path
