"""Undo a Content-Encoding, so compressed bodies can be read as what they carry.

Captures keep bodies exactly as they travelled (compressed too); readers of their meaning
(the analyzer, reports, masking) ask for the decoded content instead. gzip and deflate are
always understood; br and zstd when the brotli or zstandard package is installed (both
come with mitmproxy).
"""

from __future__ import annotations

import io
import zlib
from collections.abc import Callable, Iterator

#: a decoded body may not be larger than this, so a hostile capture cannot blow up memory
MAX_DECODED = 64 * 1024 * 1024
_PIECE = 1 << 20


class _TooLarge(Exception):
    """The decoded body would pass MAX_DECODED."""


def _capped(pieces: Callable[[], Iterator[bytes]]) -> bytes:
    """The decoded body, with the cap applied while decoding. The pieces are counted first and
    dropped, and only joined on a second pass when they fit: a bomb costs one piece of memory,
    never MAX_DECODED (bodies that fit are small, so decoding twice is cheap)."""
    total = 0
    for piece in pieces():
        total += len(piece)
        if total > MAX_DECODED:
            raise _TooLarge
    return b"".join(pieces())


def _zlib_pieces(data: bytes, wbits: int) -> Iterator[bytes]:
    inflater = zlib.decompressobj(wbits)
    while data and not inflater.eof:
        yield inflater.decompress(data, _PIECE)
        data = inflater.unconsumed_tail
    yield inflater.flush()


def _brotli_pieces(data: bytes) -> Iterator[bytes]:
    import brotli

    decompressor = brotli.Decompressor()  # no output limit: fed a few bytes at a time instead,
    for start in range(0, len(data), 16):  # which one step can only inflate to a few windows
        yield decompressor.process(data[start:start + 16])


def _zstd_pieces(data: bytes) -> Iterator[bytes]:
    import zstandard  # its decompress() trusts the size a frame header claims: read as a stream

    with zstandard.ZstdDecompressor().stream_reader(io.BytesIO(data), read_across_frames=True) as reader:
        while piece := reader.read(_PIECE):
            yield piece


def _inflate(data: bytes) -> bytes:
    try:
        return _capped(lambda: _zlib_pieces(data, zlib.MAX_WBITS))
    except zlib.error:
        return _capped(lambda: _zlib_pieces(data, -zlib.MAX_WBITS))  # raw deflate, as some servers send it


_DECODERS: dict[str, Callable[[bytes], bytes]] = {
    "gzip": lambda data: _capped(lambda: _zlib_pieces(data, 16 + zlib.MAX_WBITS)),
    "x-gzip": lambda data: _capped(lambda: _zlib_pieces(data, 16 + zlib.MAX_WBITS)),
    "deflate": _inflate,
    "br": lambda data: _capped(lambda: _brotli_pieces(data)),
    "zstd": lambda data: _capped(lambda: _zstd_pieces(data)),
    "identity": lambda data: data,
}


def decode_content(body: bytes, content_encoding: str | None) -> bytes:
    """The body with its encodings undone (last applied, first undone); the body as it is
    when an encoding is unknown or the data does not decode."""
    if not body or not content_encoding:
        return body
    data = body
    for name in reversed([part.strip().lower() for part in content_encoding.split(",") if part.strip()]):
        decoder = _DECODERS.get(name)
        if decoder is None:
            return body
        try:
            data = decoder(data)
        except Exception:
            return body
        if len(data) > MAX_DECODED:
            return body
    return data
