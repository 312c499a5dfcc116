"""The reader's quick way through a common recorded block gives what the general way gives.

`CaptureReader._common_block` reads the blocks a recorder writes without the general
reader's line-by-line walk; anything else falls back to the general reader. These tests read
the same files both ways (the quick way turned off by `CaptureReader.quick`) and
compare exchanges, line numbers and errors, including with a buffer so small that every block
runs past it.
"""

from __future__ import annotations

import random
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from a2a_capture.capture import capture_bytes, http11, read_capture_bytes
from a2a_capture.capture import quick as quick_way
from a2a_capture.capture import reader as reader_module
from a2a_capture.capture.source import Source
from a2a_capture.errors import CaptureFormatError
from tests.test_roundtrip_property import captures


@pytest.fixture(autouse=True)
def _shortcuts_on(monkeypatch):
    """These tests hold a shortcut to the general way themselves: it is on for them whatever
    A2A_CAPTURE_NO_SHORTCUTS says (a test that turns it off still does)."""
    from a2a_capture import shortcuts
    from a2a_capture.capture.reader import CaptureReader

    monkeypatch.setattr(shortcuts, "ENABLED", True)
    monkeypatch.setattr(CaptureReader, "quick", True)


ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))


def _read_both(data: bytes, monkeypatch, chunk_size: int | None = None):
    """(quick, general): the capture or the error message, and each exchange's line, read both ways."""
    results = []
    for quick in (True, False):
        with monkeypatch.context() as patch:
            if not quick:
                patch.setattr(reader_module.CaptureReader, "quick", False)
            if chunk_size is not None:
                patch.setattr(Source, "chunk_size", chunk_size)
            try:
                capture = read_capture_bytes(data, "same.http")
            except CaptureFormatError as error:
                results.append(("error", str(error)))
            else:
                results.append((capture, [exchange.line for exchange in capture.exchanges]))
                for exchange in capture.exchanges:
                    for model in (exchange, exchange.meta, exchange.request, exchange.response):
                        if model is not None:  # every field (models.maker counts none), cached values aside
                            assert set(model.__dict__) - {"events"} == set(type(model).model_fields)
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
    # and the quick way did read them (else the comparison says nothing): the usual blocks in a straight line
    # (CaptureReader.__iter__), the others by _common_block, none by the general reader
    taken = _taken(monkeypatch, data)
    assert None not in taken and 0 < len(taken) < len(exchanges)


@pytest.mark.parametrize("chunk_size", [7, 64, 1 << 20])
def test_a_documentation_capture_reads_the_same_both_ways_whatever_the_buffer(monkeypatch, chunk_size):
    """Bodies without a length (pretty-printed JSON, SSE frames), ended by what starts next."""
    from analyze import SHAPES, _documentation, _timed

    from a2a_capture.capture import Capture

    rng = random.Random(7)
    exchanges = [_documentation(_timed(SHAPES[shape](number, rng), number))
                 for number, shape in enumerate(["new", "recurring"] * 20, start=1)]
    data = capture_bytes(Capture(exchanges=exchanges))
    quick, general = _read_both(data, monkeypatch, chunk_size)
    assert quick == general
    # the quick way read them, not the general reader after a quick try
    taken = _taken(monkeypatch, data)
    assert len(taken) == len(exchanges) and None not in taken


def _taken(monkeypatch, data: bytes, chunk_size: int = 1 << 20) -> list:
    """What _common_block gave for each block it read (not those read in a straight line); the general
    reader must not be called."""
    taken = []
    original = reader_module.CaptureReader._common_block
    with monkeypatch.context() as patch:
        patch.setattr(Source, "chunk_size", chunk_size)
        patch.setattr(reader_module.CaptureReader, "_common_block",
                      lambda self, *args: taken.append(original(self, *args)) or taken[-1])
        patch.setattr(reader_module.CaptureReader, "_read_exchange", None)  # not called
        read_capture_bytes(data)
    return [found for found in taken if found is not quick_way.MORE]  # read on, then taken


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
    # bodies without a length, ended by the next block, a note, frames of an earlier stream or the end of the file
    b"### 1 \xc2\xb7 a\nGET / HTTP/1.1\nHost: a\n\nHTTP/1.1 200 OK\n\n{\n\n}\n\n### 2 \xc2\xb7 b\nGET / HTTP/1.1\n"
    b"Host: a\n\nHTTP/1.1 200 OK\n\n{\"a\": 1}\n\n\n",
    b"### 1 \xc2\xb7 a\nGET / HTTP/1.1\nHost: a\n\nHTTP/1.1 200 OK\n\n{}\n\n# a note\n\n### 2 \xc2\xb7 b\n"
    b"GET / HTTP/1.1\nHost: a\n\nHTTP/1.1 200 OK\n\n{}",
    b"### 1 \xc2\xb7 a\nGET / HTTP/1.1\nHost: a\n\nHTTP/1.1 200 OK\ncontent-type: text/event-stream\n\n"
    b"data: 1\n\n# between frames\n\ndata: 2\n\n### 2 \xc2\xb7 b\nGET / HTTP/1.1\nHost: a\n\nHTTP/1.1 200 OK\n\n"
    b"{}\n\ndata: 3\n\n### 3 \xc2\xb7 c\nGET / HTTP/1.1\nHost: a\n\nHTTP/1.1 200 OK\n\n\r\n{}\n\r\n\n### 4\n",
    b"### 1 \xc2\xb7 a\nGET / HTTP/1.1\nHost: a\n\nHTTP/1.1 200 OK\ncontent-type: text/event-stream\n\n"
    b"data: 1\n\ndata: 2\n\n# after the last frame\n",
    b"### 1 \xc2\xb7 a\nGET / HTTP/1.1\nHost: a\n\nHTTP/1.1 200 OK\ncontent-length: 1\n\n{}\n\n### 2 \xc2\xb7 b\n",
    b"### 1 \xc2\xb7 a\nGET / HTTP/1.1\nHost: a\n\nHTTP/1.1 204 No Content\n\n{}\n\n### 2 \xc2\xb7 b\n",
    # line ends inside bodies and between the parts, counted without reading the bodies twice
    b"### 1 \xc2\xb7 a\nPOST / HTTP/1.1\nHost: a\n\n{\"a\":\n1}\n\r\n\nHTTP/1.1 200 OK\ncontent-length: 3\n\na\nb\n\n"
    b"### 2 \xc2\xb7 b\nPOST / HTTP/1.1\nHost: a\nContent-Length: 4\n\n\n\r\n\n\n\n\nHTTP/1.1 204 No Content\n\n\n\n"
    b"### 3 \xc2\xb7 c\nGET / HTTP/1.1\nHost: a\n\nHTTP/1.1 200 OK\ncontent-length: 1\n\n\n\n\n### 4 \xc2\xb7 d\n"
    b"GET / HTTP/1.1\nHost: a\n\n\n\n\nHTTP/1.1 200 OK\ncontent-length: 1\n\nx\n\n### 5 \xc2\xb7 e\nBad\n",
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


# -- known heads: a repeated head's shape and values in one match ------------------------------

class _Seen(dict):
    """``Heads.seen`` that counts the heads it gives."""

    given = 0

    def get(self, key, default=None):
        found = super().get(key, default)
        self.given += found is not None
        return found


def _readers_heads(monkeypatch) -> list[http11.Heads]:
    """The ``Heads`` each reader made from now on makes, in order, their remembered request heads counting
    what they give."""
    made = []

    class Counted(http11.Heads):
        def __init__(self) -> None:
            super().__init__()
            self.seen = _Seen()
            made.append(self)

    monkeypatch.setattr(http11, "Heads", Counted)
    return made


def _known(heads: http11.Heads, kind: bytes) -> http11.KnownHeads:
    return heads.requests if kind == b"request" else heads.responses


def _fail(expected, offset, found):
    return CaptureFormatError(expected, found=found)


_BASES = {
    b"response": [b"HTTP/1.1 200 OK\ndate: Wed, 18 Nov 2026 11:06:40 GMT\nserver: uvicorn\ncontent-length: 2\n"
                  b"content-type: application/json",
                  b"HTTP/1.1 200 OK\nserver: uvicorn\ncontent-type: application/json",
                  b"HTTP/1.1 200 OK\nDate: Wed, 18 Nov 2026 11:06:40 GMT\nContent-Type: text/event-stream\n"
                  b"Transfer-Encoding: chunked",
                  b"HTTP/1.1 200 OK\ndate: Wed, 18 Nov 2026 11:06:40 GMT\nx-request-id: 7f3a\ncontent-length: 2\n"
                  b"content-type: application/json"],
    b"request": [b"POST / HTTP/1.1\nHost: 127.0.0.1:41241\nContent-Type: application/json\nContent-Length: 2",
                 b"POST / HTTP/1.1\nHost: 127.0.0.1:41242\nContent-Type: application/json\nContent-Length: 2",
                 b"GET /.well-known/agent-card.json HTTP/1.1\nHost: 127.0.0.1:41241",
                 b"POST /message:send HTTP/1.1\nHost: 127.0.0.1:41243\n"
                 b"traceparent: 00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01\n"
                 b"Content-Type: application/json\nContent-Length: 2"],
}
_PIECES = [b"a", b" ", b"\t", b"\x00", b"\x01", b"\x0b", b"\x0c", b"\x7f", b"\xe2\x80\xa6", b"\xc3\xa9", b"\xff",
           b"GMT", b"12", b"0", b"12345678", b":", b"\xe2"]
_VOLATILE_VALUES = st.lists(st.sampled_from(_PIECES), max_size=6).map(b"".join)


def _learned(heads: http11.Heads, kind: bytes) -> http11.KnownHeads:
    """The known heads of ``kind`` in ``heads``, each of its bases learned."""
    known = _known(heads, kind)
    for head in _BASES[kind]:
        shape, values = heads.shape(kind, head)
        parse = heads.parse_request if kind == b"request" else heads.parse_response
        parse(shape, values, head, b"" if b"chunked" in head or b"Length" not in head.title() else b"{}", _fail)
        known.learn(shape, head)
        known.learn(shape, head)  # taken on its second sighting
    return known


def _variant(head: bytes, values: list[bytes]) -> bytes:
    """``head`` with its volatile values replaced by ``values`` (as many as it has), in order."""
    parts = http11._VOLATILE_LINE.split(head)
    for index, value in zip(range(2, len(parts), 3), values, strict=False):
        parts[index] = value
    return b"".join(parts)


def _message(kind: bytes, head: bytes, body: bytes):
    """The message the general way makes of ``head`` and ``body``, or the error it refuses them with."""
    heads = http11.Heads()  # a reader's that has seen no other head
    shape, values = heads.shape(kind, head)
    try:
        if kind == b"request":
            return heads.parse_request(shape, values, head, body, _fail)
        return heads.parse_response(shape, values, head, body, _fail)
    except CaptureFormatError as error:
        return error.expected


def _plain(head: bytes) -> bytes:
    """``head`` with other plain values: another second, another length."""
    return (head.replace(b"11:06:40", b"10:00:00").replace(b"ength: 2", b"ength: 31")
            .replace(b"4bf92f35", b"0af76519").replace(b"7f3a", b"9c01"))


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.sampled_from([b"request", b"response"]), st.integers(0, 3), st.lists(_VOLATILE_VALUES, min_size=2,
                                                                                  max_size=2))
def test_a_known_head_makes_the_message_the_general_way_makes(monkeypatch, kind, which, values):
    heads = http11.Heads()
    known_heads = _learned(heads, kind)
    for head in (_variant(_BASES[kind][which], values), _plain(_BASES[kind][which])):
        found = known_heads.match(b"x\n" + head + b"\n\n{}", 2)
        shape, general = heads.shape(kind, head)
        if found is None:
            assert head != _plain(_BASES[kind][which])  # a plain value is always taken
            continue
        known, taken, end = found
        assert (known.shape, taken, end) == (shape, tuple(general), 2 + len(head) + 2)
        assert known.length_of(taken) == shape.length(general, head)
        for body in (b"", b"{}"):
            made = known.request(taken, body) if kind == b"request" else known.response(taken, body, [])
            assert made == _message(kind, head, body)


def test_a_known_head_is_only_one_that_ends_with_its_blank_line(monkeypatch):
    known = _learned(http11.Heads(), b"response")
    head = _BASES[b"response"][1]
    assert known.match(head + b"\n\n", 0) is not None
    for cut in (head, head + b"\n", head + b"\nx-more: 1\n\n", head[:-1] + b"\n\n", b"\n" + head + b"\n\n"):
        assert known.match(cut, 0) is None


@pytest.mark.parametrize("chunk_size", [7, 1 << 20])
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.tuples(st.integers(0, 3), st.integers(0, 1), _VOLATILE_VALUES, _VOLATILE_VALUES),
                min_size=1, max_size=6))
def test_blocks_with_known_heads_read_the_same_both_ways(monkeypatch, chunk_size, variants):
    """Blocks of heads learned from the first ones, then the same heads with other values (plain
    ones, and ones the general way refuses or reads another way): the same exchanges or error."""
    def block(number: int, request: bytes, response: bytes) -> bytes:
        body = b"" if b"GET" in request else b"{}"
        answer = b"data: 1\n\n" if b"chunked" in response else b"" if b"Length" not in response.title() else b"{}"
        framing = b"#@ response-body: 9 bytes\n" if b"chunked" in response else b""  # as a recorder frames a stream
        return (b"### %d \xc2\xb7 t\n" % number + _PRAGMAS + framing + request + b"\n\n" + body
                + (b"\n\n" if body else b"")
                + response + b"\n\n" + answer + (b"\n\n" if answer else b""))

    blocks = [block(number, _BASES[b"request"][which], _BASES[b"response"][which])
              for number, which in enumerate([0, 1, 2, 3, 0, 1, 2, 2, 1, 3, 0], start=1)]  # learned, then known
    for number, (which, kind, first, second) in enumerate(variants, start=12):
        request, response = _BASES[b"request"][which], _BASES[b"response"][which]
        if kind:
            response = _variant(response, [first, second])
        else:
            request = _variant(request, [first, second])
        blocks.append(block(number, request, response))
    with monkeypatch.context() as patch:
        made = _readers_heads(patch)
        taken = []  # the responses made from a known head (in a straight line or by _common_block)
        original = http11.Known.response
        patch.setattr(http11.Known, "response", lambda *args: taken.append(original(*args)) or taken[-1])
        quick, general = _read_both(b"".join(blocks), patch, chunk_size)
        seen = made[0].seen.given  # the quick way's reader (read first)
    assert quick == general
    # the quick way took the three plain blocks so: requests seen whole, responses of known shapes
    assert seen >= 3 and sum(found is not None for found in taken) >= 3


def test_a_trace_id_on_every_call_leaves_the_heads_repeating(monkeypatch):
    """Tracing middleware puts a fresh `traceparent` on each request and a fresh `x-request-id` on
    each response: those values are per message (``http11.PER_MESSAGE``), so h11 parses each
    shape of head once, not every head, and each message keeps its own value."""
    request, response = _BASES[b"request"][3], _BASES[b"response"][3]
    blocks = [b"### %d \xc2\xb7 t\n" % number + _PRAGMAS
              + request.replace(b"4bf92f3577b34da6", b"%016x" % number) + b"\n\n{}\n\n"
              + response.replace(b"7f3a", b"%04x" % number) + b"\n\n{}\n\n" for number in range(1, 41)]
    parsed = []
    for name in ("_parse_request_head", "_parse_response_head"):
        original = getattr(http11, name)
        monkeypatch.setattr(http11, name, lambda *args, original=original: parsed.append(1) or original(*args))
    capture = read_capture_bytes(b"".join(blocks), "traced.http")
    assert len(parsed) == 2  # one request head, one response head: the rest are of their shapes
    assert [exchange.request.header("traceparent")[3:19] for exchange in capture.exchanges] == [
        f"{number:016x}" for number in range(1, 41)]
    assert [exchange.response.header("x-request-id") for exchange in capture.exchanges] == [
        f"{number:04x}" for number in range(1, 41)]


@pytest.mark.parametrize("chunk_size", [7, 1 << 20])
def test_a_head_a_template_took_is_found_whole_when_it_comes_again(monkeypatch, chunk_size):
    """A client repeats its calls: a request head that a known shape took (its only own value the
    body's length) is remembered whole, and the next one like it is found so, reading what the
    general way reads; a head with a trace id of its own never repeats, and is not remembered."""
    plain, traced = _BASES[b"request"][0], _BASES[b"request"][3]
    heads = [plain, plain]  # parsed, the second remembered whole (its shape's second sighting)
    for number in range(14):
        heads.append(traced.replace(b"4bf92f3577b34da6", b"%016x" % number))  # two parsed, then a template's
    for number in range(12):
        heads.append(plain.replace(b"ength: 2", b"ength: %d" % (2 + number % 3)))  # 3 heads, 4 times each
    blocks = [b"### %d \xc2\xb7 t\n" % number + _PRAGMAS + head + b"\n\n" + b"{}".ljust(int(head.rsplit(b" ", 1)[1]))
              + b"\n\n" + _BASES[b"response"][1] + b"\n\n" for number, head in enumerate(heads, start=1)]
    with monkeypatch.context() as patch:
        made = _readers_heads(patch)
        quick, general = _read_both(b"".join(blocks), patch, chunk_size)
        seen = made[0].seen  # the quick way's reader (read first)
        assert quick == general and len(quick[0].exchanges) == len(heads)
        # the plain heads of lengths 3 and 4 that a template took first; of the traced ones, only those parsed
        assert {head for head in seen if b"traceparent" in head} <= set(heads[2:4]) and plain in seen
        # length 2 every time, 3 and 4 from their second block (a block that runs past the buffer is looked at
        # again: the heads may be given more often)
        assert seen.given >= 4 + 3 + 3
        for head in heads[-2:]:  # remembered whole once given again: the template's headers and length, made
            known, values, end = made[0].requests.match(head + b"\n\n", 0)
            whole, none = seen[head]
            assert none == () and whole is not known and end == len(head) + 2 and known.repeats
            assert whole.headers_with(()) == known.headers_with(values) and whole.length == known.length_of(values)
            assert (whole.start, whole.lines, whole.events) == (known.start, known.lines, known.events)


@pytest.mark.parametrize("chunk_size", [7, 1 << 20])
def test_lines_of_known_heads_with_bodies_of_many_lines(monkeypatch, chunk_size):
    """Blocks of heads seen before, bodies framed by a length holding line ends (and blank lines
    before the response, a framed body, a stream): each block's line as the general way counts it."""
    blocks = []
    for number in range(1, 13):
        body = b'{\n  "n": %d,\n\n  "x": "\n"\n}' % number
        framing = b"#@ request-body: %d bytes\n" % len(body) if number % 3 == 0 else b""
        blocks.append(b"### %d \xc2\xb7 t\n" % number + _PRAGMAS + framing
                      + b"POST / HTTP/1.1\nHost: a\nContent-Length: %d\n\n" % len(body) + body + b"\n\n"
                      + b"\n" * (number % 2) + _BASES[b"response"][number % 2].replace(b"length: 2", b"length: 3")
                      + b"\n\n" + (b"{\n}\n\n" if number % 2 == 0 else b""))
    blocks.append(b"### 13 \xc2\xb7 t\n" + _PRAGMAS + b"#@ response-body: 9 bytes\n" + _BASES[b"request"][2] + b"\n\n"
                  + _BASES[b"response"][2] + b"\n\ndata: 1\n\n")
    with monkeypatch.context() as patch:
        quick, general = _read_both(b"".join(blocks), patch, chunk_size)
    assert quick == general
    assert quick[1] == general[1] and len(quick[1]) == 13


def _usual(number: int, request: bytes, request_body: bytes, response: bytes, body: bytes, after: bytes = b"\n\n",
           kind: bytes = b"") -> bytes:
    """A block as a recorder writes it: the four pragmas, each message's head and body (framed by its length)."""
    return (b"### %s%d \xc2\xb7 t\n" % (kind, number) + _PRAGMAS + request + b"\n\n"
            + (request_body + b"\n\n" if request_body else b"") + response + b"\n\n" + body + after)


_SENT = b"POST / HTTP/1.1\nHost: straight\nContent-Length: %d"
_CARD = b"GET /card HTTP/1.1\nHost: straight"
_JSON = b"HTTP/1.1 200 OK\ndate: Wed, 18 Nov 2026 11:06:%02d GMT\ncontent-length: %d\ncontent-type: application/json"
_EVENTS = b"HTTP/1.1 200 OK\ncontent-length: %d\ncontent-type: text/event-stream"
_NONE = b"HTTP/1.1 204 No Content\ndate: Wed, 18 Nov 2026 11:06:%02d GMT\ncontent-length: %d"


def _straight_session(last: bytes) -> bytes:
    """Usual blocks whose heads come again (so they are read in a straight line from their third time),
    then ``last``."""
    blocks = []
    for number in range(1, 21):
        sent, answer = b'{"n": %03d}' % number, b'{\n  "n": %d\n}' % number  # each request head comes again
        if number % 5 == 1:  # a card fetch: no request body
            blocks.append(_usual(number, _CARD, b"", _JSON % (number, len(answer)), answer))
        elif number % 5 == 2:  # a body with line ends, and a blank line in it
            sent = b'{\n\n"n": %03d}' % number
            blocks.append(_usual(number, _SENT % len(sent), sent, _JSON % (number, len(answer)), answer))
        elif number % 5 == 3:  # a webhook
            blocks.append(_usual(number, _SENT % len(sent), sent, _JSON % (number, len(answer)), answer,
                                 kind=b"webhook "))
        elif number % 5 == 4:  # a stream framed by its length
            blocks.append(_usual(number, _SENT % len(sent), sent, _EVENTS % 9, b"data: 1\n\n"[:9]))
        else:
            blocks.append(_usual(number, _SENT % len(sent), sent, _NONE % (number, 0), b"",
                                 after=b"\n\n" if number % 10 == 0 else b""))  # not a blank line after all
    return b"".join(blocks) + last


_SENT_AGAIN = _SENT % 10 + b'\n\n{"n": 099}\n\n'
STRAIGHT_ENDS = [
    b"",
    _usual(21, _CARD, b"", _JSON % (21, 2), b"{}", after=b"\n"),  # the file ends after the body's line end
    _usual(21, _CARD, b"", _JSON % (21, 2), b"{}", after=b""),
    _usual(21, _CARD, b"", _JSON % (21, 2), b"{}", after=b"\n\n\n"),  # one more blank line
    _usual(21, _CARD, b"", _JSON % (21, 2), b"{}", after=b"\n\n# a note\n"),
    _usual(21, _CARD, b"", _JSON % (21, 2), b"{}", after=b"\n\ndata: 2\n\n"),  # a frame of the stream before
    _usual(21, _CARD, b"", _JSON % (21, 2), b"{}") + b"### 22 \xc2\xb7 t\n" + _PRAGMAS + _SENT_AGAIN
    + _NONE % (22, 2) + b"\n\n{}\n\n",  # a 204 with a body: refused
    _usual(21, _CARD, b"", _JSON % (21, 2), b"{}") + b"### 22 \xc2\xb7 t\n" + _PRAGMAS + _SENT_AGAIN
    + b"\n" + _NONE % (22, 0) + b"\n\n",  # a blank line before the response
    b"### 21 \xc2\xb7 t\n" + _PRAGMAS + _SENT_AGAIN.replace(b"\n\n\n", b"\n\n") + _NONE % (21, 0) + b"\n\n",
    b"### 21 \xc2\xb7 t\n" + _PRAGMAS + _CARD + b"\n\n{}\n\n" + _JSON % (21, 2) + b"\n\n{}\n\n",  # a body unframed
    b"### 21 \xc2\xb7 t\n" + _PRAGMAS + b"#@ response-body: 2 bytes\n" + _CARD + b"\n\n" + _JSON % (21, 2)
    + b"\n\n{}\n\n",
    b"### 21 \xc2\xb7 t\n" + _PRAGMAS.replace(b"c\n", b"c \n") + _CARD + b"\n\n" + _JSON % (21, 2) + b"\n\n{}\n\n",
]


@pytest.mark.parametrize("last", STRAIGHT_ENDS)
@pytest.mark.parametrize("chunk_size", [7, 100, 1 << 20])
def test_usual_blocks_read_in_a_straight_line_the_same_both_ways(monkeypatch, chunk_size, last):
    """The usual blocks (CaptureReader.__iter__ reads them without _common_block's call) and the blocks
    around them that are not quite usual: the same exchanges, lines and errors both ways, whatever
    the buffer; and the usual ones were read so."""
    data = _straight_session(last)
    with monkeypatch.context() as patch:
        quick, general = _read_both(data, patch, chunk_size)
        assert quick == general
        if quick[0] != "error":
            assert len(quick[0].exchanges) == 20 + data.count(b"\n### ", len(_straight_session(b"")) - 1)
            assert [exchange.response.is_event_stream for exchange in quick[0].exchanges][3::5] == [True] * 4
    if chunk_size > len(data) and quick[0] != "error":  # and those of heads known by then were (not a 204's,
        # no blank line after it): requests seen whole (8), a template's (7), a template's come again (12)
        assert _straight(monkeypatch, data)[:10] == [7, 8, 11, 12, 13, 14, 16, 17, 18, 19]


def _straight(monkeypatch, data: bytes) -> list[int]:
    """The numbers of the blocks of ``data`` read in a straight line, with fresh head caches."""
    other = []
    with monkeypatch.context() as patch:
        for name in ("_common_block", "_read_exchange"):
            original = getattr(reader_module.CaptureReader, name)
            patch.setattr(reader_module.CaptureReader, name, lambda self, *args, original=original: other.append(
                original(self, *args)) or other[-1])
        try:
            exchanges = read_capture_bytes(data).exchanges
        except CaptureFormatError:
            return []
    others = {found.number for found in other if isinstance(found, reader_module.Exchange)}
    return [exchange.number for exchange in exchanges if exchange.number not in others]
