"""Undo a Content-Encoding, so compressed bodies can be read as what they carry.

Captures keep bodies exactly as they travelled (compressed too); readers of their meaning
(the analyzer, reports, masking) ask for the decoded content instead. gzip and deflate are
always understood; br and zstd when the brotli or zstandard package is installed (both
come with mitmproxy).
"""

from __future__ import annotations

import zlib


def _brotli(data: bytes) -> bytes:
    import brotli

    return brotli.decompress(data)


def _zstd(data: bytes) -> bytes:
    import zstandard

    return zstandard.ZstdDecompressor().decompress(data, max_output_size=MAX_DECODED + 1)


class _TooLarge(Exception):
    """The decoded body would pass MAX_DECODED."""


def _zlib(data: bytes, wbits: int) -> bytes:
    """Inflates with the cap applied while inflating: a gzip bomb stops at MAX_DECODED + 1 bytes."""
    inflater = zlib.decompressobj(wbits)
    out = inflater.decompress(data, MAX_DECODED + 1)
    if len(out) > MAX_DECODED:
        raise _TooLarge
    return out


_DECODERS = {
    "gzip": lambda data: _zlib(data, 16 + zlib.MAX_WBITS),
    "x-gzip": lambda data: _zlib(data, 16 + zlib.MAX_WBITS),
    "deflate": lambda data: _inflate(data),
    "br": _brotli,
    "zstd": _zstd,
    "identity": lambda data: data,
}
#: a decoded body may not be larger than this, so a hostile capture cannot blow up memory
MAX_DECODED = 64 * 1024 * 1024


def _inflate(data: bytes) -> bytes:
    try:
        return _zlib(data, zlib.MAX_WBITS)
    except zlib.error:
        return _zlib(data, -zlib.MAX_WBITS)  # raw deflate, as some servers send it


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
