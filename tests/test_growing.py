"""A capture followed as the recorder writes it (capture/growing.py) reads as the whole file reads.

Appended in pieces of any size and looked at after each, the blocks come out once each, whole, with
their lines counted in the whole file and their byte offsets right, whether the file is still growing
(the blocks before the newest block's header) or has stopped growing after a whole block (all of it:
the recorder writes a block at a time).
"""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from a2a_capture.capture import read_capture
from a2a_capture.capture.growing import GrowingCapture, exchanges_with_offsets
from tests.conftest import DATA, ROOT

#: captures the recorder wrote (documentation captures show a stream's frames in later blocks: the
#: recorder never does, and a follower reads the recorder's)
RECORDED = sorted((ROOT / "captures").glob("*.http")) + sorted(DATA.glob("*.http"))


def _facts(exchange) -> tuple:
    response = exchange.response
    return (exchange.label, exchange.line, exchange.title, exchange.request.body,
            response.body if response else None, response.event_times if response else None)


@pytest.mark.parametrize("path", RECORDED, ids=lambda p: p.name)
@pytest.mark.parametrize("seed", [1, 2, 3])
def test_a_capture_read_as_it_grows_is_the_whole_capture(path: Path, seed: int, tmp_path):
    source = path.read_bytes()
    whole = [(_facts(e), offset) for e, offset in exchanges_with_offsets(path)]
    assert [f for f, _ in whole] == [_facts(e) for e in read_capture(path).exchanges]
    growing_file = tmp_path / "growing.http"
    growing_file.write_bytes(b"")
    growing, seen, rng, start = GrowingCapture(str(growing_file)), [], random.Random(seed), 0
    boundaries = {offset for _, offset in whole[1:]}
    while start < len(source):
        end = min(len(source), start + rng.choice([1, 7, 100, 1000, 5000]))
        with growing_file.open("ab") as stream:
            stream.write(source[start:end])
        start = end
        seen += growing.poll()  # still growing: only the blocks before the newest header
        if start in boundaries:
            seen += growing.poll()  # not grown since, a block written whole (as the recorder writes them): it too
    seen += growing.poll(final=True)
    assert [(_facts(e), offset) for e, offset in seen] == whole
    for _, offset in whole:
        assert source[offset:offset + 4] == b"### "


def test_a_body_that_holds_a_block_header_waits_until_it_is_whole(tmp_path):
    """A body framed by its length may hold a blank line and `### 2`: cut there it fails to read, and the
    follower waits for the rest instead of taking a cut exchange."""
    body = b'{"text": "a\n\n### 2 \xc2\xb7 not a block"}'
    block = (b"### 1 \xc2\xb7 POST\n#@ request-body: " + str(len(body)).encode() + b" bytes\n"
             b"POST /a2a HTTP/1.1\nHost: 127.0.0.1:41241\nContent-Type: application/json\n\n" + body +
             b"\n\nHTTP/1.1 204 No Content\n\n")
    path = tmp_path / "framed.http"
    path.write_bytes(block[:block.index(b"### 2") + 3])
    growing = GrowingCapture(str(path))
    assert growing.poll() == []
    with path.open("ab") as stream:
        stream.write(block[block.index(b"### 2") + 3:])
    got = growing.poll() + growing.poll(final=True)
    assert [e.request.body for e, _ in got] == [body]


def test_following_from_the_end_reads_only_what_comes_after(tmp_path):
    first, second = (ROOT / "captures" / "01-discovery.http").read_bytes(), \
        (ROOT / "captures" / "02-blocking-send.http").read_bytes()
    path = tmp_path / "appended.http"
    path.write_bytes(first)
    growing = GrowingCapture(str(path), from_end=True)
    with path.open("ab") as stream:
        stream.write(second)
    got = growing.poll(final=True)
    lines = first.count(b"\n")
    assert [(e.label, e.line) for e, _ in got] == [(e.label, e.line + lines) for e in
                                                   read_capture(ROOT / "captures" / "02-blocking-send.http").exchanges]
    assert got[0][1] == len(first) + second.index(b"### 1")
