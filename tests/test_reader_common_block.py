"""The reader's quick way through a common recorded block gives what the general way gives.

`CaptureReader._read_common_block` reads the blocks a recorder writes without the general
reader's line-by-line walk; anything else falls back to the general reader. These tests read
the same files both ways (the quick way disabled by patching it to decline every block) and
compare exchanges, line numbers and errors, including with a buffer so small that every block
runs past it.
"""

from __future__ import annotations

import random
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings

from a2a_capture.capture import capture_bytes, read_capture_bytes
from a2a_capture.capture import reader as reader_module
from a2a_capture.errors import CaptureFormatError
from tests.test_roundtrip_property import captures

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))


def _read_both(data: bytes, monkeypatch, chunk_size: int | None = None):
    """(quick, general): the capture or the error message, and each exchange's line, read both ways."""
    results = []
    for quick in (True, False):
        with monkeypatch.context() as patch:
            if not quick:
                patch.setattr(reader_module.CaptureReader, "_read_common_block", lambda self: None)
            if chunk_size is not None:
                patch.setattr(reader_module._Source, "chunk_size", chunk_size)
            try:
                capture = read_capture_bytes(data, "same.http")
            except CaptureFormatError as error:
                results.append(("error", str(error)))
            else:
                results.append((capture, [exchange.line for exchange in capture.exchanges]))
    return results


SAMPLES = sorted((ROOT / "captures").glob("*.http")) + sorted((ROOT / "tests" / "data").glob("*.http"))


@pytest.mark.parametrize("path", SAMPLES, ids=lambda path: path.name)
def test_sample_captures_read_the_same_both_ways(path, monkeypatch):
    quick, general = _read_both(path.read_bytes(), monkeypatch)
    assert quick == general


@pytest.mark.kit
def test_kit_captures_read_the_same_both_ways(kit, monkeypatch):
    for path in sorted(kit.glob("*.http")):
        quick, general = _read_both(path.read_bytes(), monkeypatch)
        assert quick == general, path.name


@pytest.mark.parametrize("chunk_size", [7, 64, 1 << 20])
def test_a_generated_session_reads_the_same_both_ways_whatever_the_buffer(tmp_path, monkeypatch, chunk_size):
    from analyze import SHAPES, _timed  # bench/analyze.py's sessions: streams, webhooks, cards, polls

    from a2a_capture.capture import Capture

    rng = random.Random(5)
    exchanges = [_timed(SHAPES[shape](number, rng), number)
                 for number, shape in enumerate(["new", "recurring"] * 20, start=1)]
    data = capture_bytes(Capture(meta=[("format", "a2a-capture/1")], exchanges=exchanges))
    quick, general = _read_both(data, monkeypatch, chunk_size)
    assert quick == general
    assert quick[0].exchanges == exchanges
    # and the quick way did read them (else the comparison says nothing)
    taken = []
    original = reader_module.CaptureReader._read_common_block
    monkeypatch.setattr(reader_module.CaptureReader, "_read_common_block",
                        lambda self: taken.append(original(self)) or taken[-1])
    read_capture_bytes(data)
    assert len(taken) == len(exchanges) and None not in taken


# blocks the quick way must hand over to the general reader at the right point, and errors
# it must leave for the general reader to report
ODD_BLOCKS = [
    b"### 1 \xc2\xb7 a\nGET / HTTP/1.1\nHost: a\n\nHTTP/1.1 200 OK\ncontent-length: 2\n\n{}\n\n# a note\n",
    b"### 1 \xc2\xb7 a\nGET / HTTP/1.1\nHost: a\n\n# before the response\n\nHTTP/1.1 204 No Content\n",
    b"### 1 \xc2\xb7 a\nPOST / HTTP/1.1\nHost: a\nContent-Length: 9\n\n{}\n\nHTTP/1.1 200 OK\n",
    b"### 1 \xc2\xb7 a\nPOST / HTTP/1.1\nHost: a\nContent-Length: 2\n\n{}\nHTTP/1.1 200 OK\n",
    b"### 1 \xc2\xb7 a\n#@ response-body: 5 bytes\nGET / HTTP/1.1\nHost: a\n\nHTTP/1.1 200 OK\n\n{}\n\n### 2\n",
    b"### 1 \xc2\xb7 a\n#@ response-body: x bytes\nGET / HTTP/1.1\nHost: a\n\nHTTP/1.1 200 OK\n\n{}\n",
    b"### 1 \xc2\xb7 a\n#@ bad pragma\nGET / HTTP/1.1\nHost: a\n\nHTTP/1.1 200 OK\n\n",
    b"### 1 \xc2\xb7 a\nGET / HTTP/1.1\nHost: a\n\nHTTP/1.1 204 No Content\ncontent-length: 2\n\n{}\n\n",
    b"### 1 \xc2\xb7 a\nGET / HTTP/1.1\nHost: a\n\nHTTP/1.1 200 OK\ncontent-length: 0\n\n### 2 \xc2\xb7 b\n"
    b"GET / HTTP/1.1\nHost: a\n\n",
    b"### 1 \xc2\xb7 a\nGET / HTTP/1.1\nBad header\n\nHTTP/1.1 200 OK\n\n",
    b"### 1 \xc2\xb7 a\nPOST / HTTP/1.1\nHost: a\n\n{\n\n}\n\n\nHTTP/1.1 200 OK\n\n### 2\n",
    b"### 1 \xc2\xb7 a\nPOST / HTTP/1.1\nHost: a\n\n{}\n\n# a note\n\nHTTP/1.1 200 OK\n\n",
    b"### 1 \xc2\xb7 a\nPOST / HTTP/1.1\nHost: a\n\n{}\n\n### 2 \xc2\xb7 b\nGET / HTTP/1.1\n\n",
    b"### 1 \xc2\xb7 a\nPOST / HTTP/1.1\nHost: a\n\n\n\n{}",
    b"### 1 \xc2\xb7 a\n\n#@ start: 2026-11-30T07:40:01Z\nGET / HTTP/1.1\nHost: a\n\nHTTP/1.1 200 OK\n\n",
    b"### 1 \xc2\xb7 a\nGET / HTTP/1.1\nHost: a\n\nHTTP/1.1 200 OK\ncontent-type: text/event-stream\n\n"
    b"data: 1\n\n### 2 \xc2\xb7 b\nGET / HTTP/1.1\nHost: a\n\nHTTP/1.1 200 OK\ncontent-length: 2\n\n{}\n\ndata: 2\n\n",
    b"### 1 \xc2\xb7 a\nGET / HTTP/1.1\nHost: a\n\nHTTP/1.1 200 OK\ncontent-length: 2\n\n{}\n\n\n### 2 \xc2\xb7 b\n",
]


@pytest.mark.parametrize("data", ODD_BLOCKS)
@pytest.mark.parametrize("chunk_size", [5, 1 << 20])
def test_odd_blocks_read_the_same_both_ways(data, monkeypatch, chunk_size):
    quick, general = _read_both(data, monkeypatch, chunk_size)
    assert quick == general


_PRAGMAS = b"#@ start: 2026-11-30T07:40:01.000001Z\n#@ end: 2026-11-30T07:40:01.5Z\n#@ client: c\n#@ server: s\n"
_STREAM = (b"POST / HTTP/1.1\nHost: a\ncontent-length: 2\n\n{}\n\nHTTP/1.1 200 OK\ncontent-type: text/event-stream\n"
           b"Transfer-Encoding: chunked\n\ndata: 1\n\ndata: 2\n\n\n\n")


# the pragmas a recorder writes, and their near misses: each read the quick way only as the
# general reader reads it
@pytest.mark.parametrize("pragmas", [
    b"#@ response-body: 18 bytes\n#@ event-times: 0.1 0.25\n",
    b"#@ response-body: 18 bytes\n#@ event-times: - 0.25\n",
    b"#@ response-body: 18 bytes\n#@ event-times: 1e-05 0.25\n",
    b"#@ response-body: 18 bytes\n#@ event-times: 0.1  0.25\n",
    b"#@ response-body: 18 bytes\n#@ event-times: 0.1 0.2 0.3\n",
    b"#@ response-body: 18 bytes\n#@ event-times:\n",
    b"#@ request-body: 2 bytes\n#@ response-body: 18 bytes\n",
    b"#@ request-body: 2 byte\n",
    b"#@ response-body: 18 bytes\n#@ request-body: 2 bytes\n",
    b"#@ response-body: 17 bytes\n",
    b"#@ response-body: 0 bytes\n",
    b"#@ response-body: 18 bytes\n#@ response-body: 18 bytes\n",
    b"#@ response-body: 18 bytes base64\n",
    b"#@ response-body:  18 bytes\n",
    b"#@ response-body: 18 bytes\n#@ redacted: header Authorization\n",
    b"#@ event-times: 0.1 0.25\n# a note\n",
])
@pytest.mark.parametrize("chunk_size", [5, 1 << 20])
def test_recorder_pragmas_read_the_same_both_ways(pragmas, monkeypatch, chunk_size):
    data = (b"### 1 \xc2\xb7 a\n" + _PRAGMAS + pragmas + _STREAM
            + b"### 2 \xc2\xb7 b\n" + _PRAGMAS + b"#@ response-body: 18 bytes\n#@ event-times: 0.5 -\n" + _STREAM)
    quick, general = _read_both(data, monkeypatch, chunk_size)
    assert quick == general
    if quick[0] != "error":
        assert [exchange.response.event_times for exchange in quick[0].exchanges][1] == [0.5, None]


@given(captures())
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                   HealthCheck.function_scoped_fixture])
def test_any_capture_reads_the_same_both_ways(monkeypatch, capture):
    quick, general = _read_both(capture_bytes(capture), monkeypatch)
    assert quick == general
