"""Converters between captures and the formats other tools write: HAR 1.2 and mitmproxy flows."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

from a2a_capture.a2a.grpc import VIEWS
from a2a_capture.capture import capture_bytes, open_capture, read_capture
from a2a_capture.capture.models import Capture, Exchange
from a2a_capture.convert.har import ConvertError, capture_to_har, har_to_capture, write_har
from a2a_capture.convert.mitm import capture_to_flows, flows_to_capture
from a2a_capture.errors import open_output, remove_partial

FORMATS = {".http": "http", ".har": "har", ".mitm": "mitm", ".flow": "mitm", ".flows": "mitm", ".dump": "mitm"}


def format_of(path: str, given: str | None) -> str:
    if given:
        return given
    suffix = Path(path).suffix.lower()
    if suffix not in FORMATS:
        raise ConvertError(f"cannot tell the format of {path} from its suffix; give --from/--to "
                           f"(http, har, or mitm or flow for a mitmproxy flow file)")
    return FORMATS[suffix]


def load(path: str, kind: str) -> Capture:
    if kind == "http":
        return read_capture(path)
    if kind == "har":
        from a2a_capture.convert.har_stream import HarReader

        reader = HarReader(path)
        return Capture(notes=reader.notes, meta=reader.meta, exchanges=list(reader))
    try:
        data = Path(path).read_bytes()
    except OSError as error:
        raise ConvertError(f"cannot read {path}: {error.strerror or error}") from None
    return har_to_capture(data, path) if kind == "har" else flows_to_capture(data, path)


def dump(capture: Capture, kind: str) -> bytes:
    if kind == "http":  # a gRPC message from HAR or a flow has no view yet: it is read as A2A
        return capture_bytes(capture, views=VIEWS)
    return {"har": capture_to_har, "mitm": capture_to_flows}[kind](capture)


def convert(source: str, target: str, source_kind: str | None = None, target_kind: str | None = None,
            *, redact: bool = True) -> int:
    """Convert a file; every secret the policy finds is masked unless ``redact`` is False. Answers
    the number of exchanges converted. A capture to HAR is converted an exchange at a time."""
    kind, to = format_of(source, source_kind), format_of(target, target_kind)
    masker = None
    if redact:
        from a2a_capture.redact.mask import Masker

        masker = Masker.for_files([source])
    if kind == "http" and to == "har" and not _same_file(source, target):
        return _capture_to_har_file(source, target, masker)
    capture = load(source, kind)
    if masker is not None:
        capture = capture.model_copy(update={"exchanges": [masker.exchange(e) for e in capture.exchanges],
                                             "notes": [masker.text(note) for note in capture.notes]})
    data = dump(capture, to)
    try:
        with open_output(target, binary=True) as out:
            out.write(data)
    except BrokenPipeError:  # the reader of standard output stopped reading: not an error
        raise
    except OSError as error:
        raise ConvertError(f"cannot write {target}: {error.strerror or error}") from None
    return len(capture.exchanges)


def _capture_to_har_file(source: str, target: str, masker) -> int:
    """A capture written to HAR as it is read, an entry per exchange: the memory of its largest
    exchange, whatever its length. A conversion that fails half-way leaves no file behind."""
    reader = open_capture(source)
    count = 0

    def exchanges() -> Iterator[Exchange]:
        nonlocal count
        for exchange in reader:
            count += 1
            yield masker.exchange(exchange) if masker is not None else exchange

    notes = [masker.text(note) for note in reader.notes] if masker is not None else reader.notes
    try:
        with open_output(target, binary=True) as out:
            write_har(notes, reader.meta, exchanges(), out)
    except BrokenPipeError:  # the reader of standard output stopped reading: not an error
        raise
    except OSError as error:
        remove_partial(target)
        raise ConvertError(f"cannot write {target}: {error.strerror or error}") from None
    except BaseException:
        remove_partial(target)
        raise
    finally:
        reader.close()
    return count


def _same_file(source: str, target: str) -> bool:
    try:
        return os.path.samefile(source, target)
    except OSError:
        return False
