"""Exchanges from any file the tool reads: captures, and HAR or mitmproxy flows converted on the fly."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

from a2a_capture.a2a.grpc import VIEWS
from a2a_capture.capture import CaptureWriter, capture_bytes, iter_exchanges, open_capture, read_capture
from a2a_capture.capture.models import Capture, Exchange
from a2a_capture.errors import A2ACaptureError

#: suffixes read through a converter; everything else is read as a capture
CONVERTED = {".har": "har", ".mitm": "mitm", ".flow": "mitm", ".flows": "mitm", ".dump": "mitm"}


def capture_files(paths) -> list[str]:
    """Files as given, folders as the .http files in them (sorted)."""
    files = []
    for path in paths:
        if os.path.isdir(path):
            files += sorted(os.path.join(path, name) for name in os.listdir(path) if name.endswith(".http"))
        else:
            files.append(path)
    if not files:
        raise A2ACaptureError("no .http capture files in " + ", ".join(paths))
    return files


def exchanges(path: str | os.PathLike) -> Iterator[Exchange]:
    """Stream a capture's exchanges; a HAR file is read an entry at a time, a flow file converted (in
    memory) first. A capture's are the reader's own generator, not one more around it (each level
    costs every exchange a resume)."""
    kind = CONVERTED.get(Path(path).suffix.lower())
    return iter_exchanges(path) if kind is None else _converted(path, kind)


def _converted(path: str | os.PathLike, kind: str) -> Iterator[Exchange]:
    if kind == "har":  # an entry at a time
        from a2a_capture.convert.har_stream import HarReader

        yield from HarReader(os.fspath(path))
        return
    from a2a_capture.convert import load

    yield from load(os.fspath(path), kind).exchanges


def capture(path: str | os.PathLike) -> Capture:
    """A whole capture; a HAR or flow file is converted (in memory) first."""
    kind = CONVERTED.get(Path(path).suffix.lower())
    if kind is None:
        return read_capture(path)
    from a2a_capture.convert import load

    return load(os.fspath(path), kind)


def holds_exchange(path: str | os.PathLike) -> bool:
    """Whether the capture holds an exchange, read up to its first one."""
    return next(iter(exchanges(path)), None) is not None


def capture_chunks(path: str | os.PathLike, masker=None) -> Iterator[bytes]:
    """The capture written back out a block at a time, never held whole (a converted HAR or
    flow file is, by its converter); ``masker`` (redact.mask.Masker) masks each block's secrets."""
    if Path(path).suffix.lower() in CONVERTED:
        whole = capture(path)
        if masker is not None:
            whole = whole.model_copy(update={"exchanges": [masker.exchange(e) for e in whole.exchanges],
                                             "notes": [masker.text(note) for note in whole.notes]})
        yield capture_bytes(whole, views=VIEWS)
        return
    reader = open_capture(path)
    try:
        writer = CaptureWriter(reader.newline, views=VIEWS)
        notes = [masker.text(note) for note in reader.notes] if masker is not None else reader.notes
        yield writer.preamble(notes, reader.meta)
        for exchange in reader:
            yield writer.block(masker.exchange(exchange) if masker is not None else exchange)
    finally:
        reader.close()
