"""Bounded output and memory on hostile input: a report lists a 10 MB line cut, saying how much
was left out, and neither the listing nor the work to make it grows with the line; a compression
bomb is stopped while it inflates, holding no more than a piece of it."""

from __future__ import annotations

import contextlib
import gzip
import json
import tracemalloc

import pytest

from a2a_capture.capture.encoding import MAX_DECODED, decode_content
from a2a_capture.report import render, walkthrough
from tests.builders import block, fetch_card, http_request, http_response, write

SIZE = 10_000_000
SEND = {"jsonrpc": "2.0", "id": 2, "method": "SendMessage",
        "params": {"message": {"messageId": "m-1", "role": "ROLE_USER", "parts": [{"text": "hi"}]}}}


def _text_answer(text: str) -> str:
    return block(2, "SendMessage", http_request("POST", "/rpc", ["Content-Type: application/json"], SEND),
                 http_response(200, text, content_type="text/plain"))


SHAPES = {
    "text": (lambda: _text_answer("z" * SIZE), f"A line of {SIZE} characters is cut after its first 80."),
    "json string": (lambda: _text_answer(json.dumps({"text": "y" * SIZE})).replace("text/plain", "application/json"),
                    f"The text value is cut after 61 of its {SIZE} characters."),
    "broken json": (lambda: _text_answer("{" + "q" * SIZE).replace("text/plain", "application/json"),
                    f"A line of {SIZE + 1} characters is cut after its first 80."),
}


@pytest.mark.parametrize("shape", sorted(SHAPES))
def test_a_ten_megabyte_line_is_listed_cut_and_says_how_much(tmp_path, shape):
    make, sentence = SHAPES[shape]
    path = write(tmp_path, fetch_card(1), make())
    model = walkthrough.build([str(path)])
    for kind in ("html", "md"):
        page = render.render(model, kind)
        assert len(page) < 100_000, (kind, len(page))
        assert sentence in page, kind


def test_reporting_a_ten_megabyte_line_holds_a_few_copies_of_it_at_most(tmp_path):
    path = write(tmp_path, fetch_card(1), _text_answer("z" * SIZE))
    tracemalloc.start()
    try:
        render.render(walkthrough.build([str(path)]), "html")
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 6 * SIZE, peak / SIZE


def _bombs() -> dict[str, bytes]:
    zeros = bytes(MAX_DECODED + (1 << 20))
    bombs = {"gzip": gzip.compress(zeros, 1)}
    with contextlib.suppress(ImportError):
        import brotli

        bombs["br"] = brotli.compress(zeros, quality=1)
    with contextlib.suppress(ImportError):
        import zstandard  # writes the content size in the frame header, which decoding must not trust

        bombs["zstd"] = zstandard.ZstdCompressor(level=1).compress(zeros)
    return bombs


def test_a_compression_bomb_costs_a_piece_of_memory_not_the_cap():
    for name, bomb in _bombs().items():
        tracemalloc.start()
        try:
            assert decode_content(bomb, name) == bomb, name  # too large: left as it travelled
            _, peak = tracemalloc.get_traced_memory()
        finally:
            tracemalloc.stop()
        assert peak < MAX_DECODED // 4, (name, peak)
