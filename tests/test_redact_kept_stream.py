"""A stream kept in its file (capture/body.py) is masked a window of frames at a time: the same bytes
as masking the whole stream in memory, the memory of a window rather than of the stream (a report of
a 200 MB stream took 2.4 GB when the whole body was split and every frame parsed into one list)."""

from __future__ import annotations

import tempfile
import tracemalloc

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from a2a_capture.capture.body import PIECE, FileBody, opened
from a2a_capture.capture.models import Exchange, ExchangeMeta, Request, Response
from a2a_capture.redact import Redactor
from a2a_capture.redact.mask import Masker

_KEY = b"k" * 32
_TOKEN = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"
_SECRET_FRAME = ('data: {"result": {"statusUpdate": {"taskId": "t-%d", "status": {"state": "TASK_STATE_WORKING"}, '
                 '"metadata": {"apiKey": "key-%d-value", "note": "uses ' + _TOKEN + '"}}}}')
_PLAIN_FRAME = 'data: {"result": {"statusUpdate": {"taskId": "t-%d", "status": {"state": "TASK_STATE_WORKING"}}}}'


def _in_file(data: bytes) -> FileBody:
    with tempfile.TemporaryFile() as handle:
        handle.write(data)
        handle.flush()
        file = opened(handle)
    return FileBody(file, 0, len(data))


def _stream(frames: int, secret_every: int, eol: str = "\n") -> bytes:
    lines = [(_SECRET_FRAME % (n, n) if (n + 1) % secret_every == 0 else _PLAIN_FRAME % n) for n in range(frames)]
    return (eol + eol).join(lines).encode() + (eol + eol).encode()


def _masked(body: bytes | FileBody) -> tuple[bytes, list[str], list[str]]:
    notes: list[str] = []
    _, cleaned, removed = Redactor(_KEY).message([("Content-Type", "text/event-stream")], body, notes)
    return (cleaned.read() if isinstance(cleaned, FileBody) else cleaned), removed, notes


@pytest.mark.parametrize("eol", ["\n", "\r\n", "\r"])
def test_a_kept_stream_is_masked_as_the_whole_stream_is(eol):
    data = _stream(30_000, 7, eol)  # about 3 MB: several windows, frames cut at their edges
    assert len(data) > 2 * PIECE
    whole_bytes, whole_removed, whole_notes = _masked(data)
    kept_bytes, kept_removed, kept_notes = _masked(_in_file(data))
    assert whole_bytes != data and _TOKEN.encode() not in kept_bytes
    assert kept_bytes == whole_bytes
    assert sorted(kept_removed) == sorted(whole_removed) and kept_notes == whole_notes


@settings(max_examples=60, deadline=None)
@given(st.lists(st.sampled_from([_SECRET_FRAME % (1, 1), _PLAIN_FRAME % 2, ": ping", "event: x\ndata: not json "
                                 + _TOKEN, "data: {\"token\": \"abc-def-ghi\"}", "id: 3"]), min_size=1, max_size=40),
       st.sampled_from(["\n", "\r\n", "\r"]), st.integers(1, 700))
def test_windows_cut_anywhere_mask_as_the_whole(frames, eol, window):
    """However the windows fall (a window as short as a byte), each frame is masked as in the whole."""
    data = ((eol + eol).join(frames) + eol + eol).replace("\n", eol).encode()
    whole_bytes, whole_removed, _ = _masked(data)
    notes: list[str] = []
    redactor = Redactor(_KEY)
    cleaned, removed = redactor._kept_stream(_in_file(data), notes, piece=window)
    assert (cleaned.read() if isinstance(cleaned, FileBody) else cleaned) == whole_bytes
    assert sorted(removed) == sorted(whole_removed)  # named in the order the windows find them


def test_a_kept_stream_with_no_secret_is_given_back_as_it_was():
    body = _in_file(_stream(20_000, 10**9))
    _, cleaned, removed = Redactor(_KEY).message([("Content-Type", "text/event-stream")], body, [])
    assert cleaned is body and removed == []


def _peak_to_mask(frames: int) -> int:
    body = _in_file(_stream(frames, 50))
    exchange = Exchange(number=1, title="stream", meta=ExchangeMeta(),
                        request=Request(method="POST", target="/", headers=[("Host", "a")], body=b"{}"),
                        response=Response(status=200, reason="OK",
                                          headers=[("Content-Type", "text/event-stream")], body=body))
    tracemalloc.start()
    try:
        masked = Masker(_KEY).exchange(exchange)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert isinstance(masked.response.stored, FileBody) and masked.response.body_size > 0
    return peak


def test_masking_a_kept_stream_takes_a_windows_memory_not_the_streams():
    small, large = _peak_to_mask(20_000), _peak_to_mask(80_000)  # about 2 and 8 MB of frames
    assert large < small + 2 * PIECE, (small, large)  # the whole stream parsed took 30 times its size
    assert large < 16 * PIECE, large
