"""Converters between captures and the formats other tools write: HAR 1.2 and mitmproxy flows."""

from __future__ import annotations

from pathlib import Path

from a2a_capture.capture import capture_bytes, read_capture
from a2a_capture.capture.models import Capture
from a2a_capture.convert.har import ConvertError, capture_to_har, har_to_capture
from a2a_capture.convert.mitm import capture_to_flows, flows_to_capture

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
    try:
        data = Path(path).read_bytes()
    except OSError as error:
        raise ConvertError(f"cannot read {path}: {error.strerror or error}") from None
    return har_to_capture(data, path) if kind == "har" else flows_to_capture(data, path)


def dump(capture: Capture, kind: str) -> bytes:
    return {"http": capture_bytes, "har": capture_to_har, "mitm": capture_to_flows}[kind](capture)


def convert(source: str, target: str, source_kind: str | None = None, target_kind: str | None = None,
            *, redact: bool = True) -> Capture:
    """Convert a file; every secret the policy finds is masked unless ``redact`` is False."""
    kind = format_of(source, source_kind)
    capture = load(source, kind)
    if redact:
        from a2a_capture.report.mask import Masker

        masker = Masker.for_files([source])
        capture = capture.model_copy(update={"exchanges": [masker.exchange(e) for e in capture.exchanges],
                                             "notes": [masker.text(note) for note in capture.notes]})
    data = dump(capture, format_of(target, target_kind))
    try:
        Path(target).write_bytes(data)
    except OSError as error:
        raise ConvertError(f"cannot write {target}: {error.strerror or error}") from None
    return capture
