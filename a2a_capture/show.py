"""One row per exchange: what `a2a-capture show` prints."""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Iterator
from pathlib import Path

from pydantic import BaseModel

from a2a_capture.a2a.grpc import Status, response_status
from a2a_capture.capture.models import Exchange
from a2a_capture.sources import CONVERTED, exchanges


class Row(BaseModel):
    file: str
    number: int
    label: str
    title: str
    method: str
    target: str
    status: int | None  # HTTP
    #: a gRPC call's own status (its trailers'), which HTTP's 200 says nothing about
    grpc_status: int | None = None
    grpc_status_name: str | None = None
    events: int
    request_bytes: int
    response_bytes: int | None
    cut: bool


def rows(path: str | os.PathLike, masker=None) -> list[Row]:
    """Rows for one capture, read as a stream; frames shown later count with their stream."""
    return list(iter_rows(path, masker))


def iter_rows(path: str | os.PathLike, masker=None) -> Iterator[Row]:
    """Rows as they are read. Frames shown later count with their stream, so the newest stream's
    row (and those after it) wait until another stream starts: in a capture, later frames always
    belong to the newest stream. A converted HAR or flow file names any stream, and is held whole
    in memory anyway, so its rows wait to the end. ``masker`` (report.mask.Masker): secrets in
    targets and titles are masked."""
    converted = Path(path).suffix.lower() in CONVERTED
    held: list[Row] = []
    by_number: dict[int, Row] = {}
    for exchange in exchanges(path):
        row = _row(os.fspath(path), exchange, masker)
        starts_stream = (not exchange.webhook and exchange.response is not None
                         and exchange.response.is_event_stream)
        if starts_stream and not converted:
            yield from held
            held, by_number = [], {}
        if held or starts_stream or converted:
            held.append(row)
            if not exchange.webhook:
                by_number[exchange.number] = row
        else:
            yield row
        if exchange.late_stream is not None and exchange.late_stream in by_number:
            by_number[exchange.late_stream].events += _count(exchange.late_events)
    yield from held


def _row(path: str, exchange: Exchange, masker=None) -> Row:
    response = exchange.response
    target, title = exchange.request.target, exchange.title
    if masker is not None:
        target, title = masker.redactor.target(target)[0], masker.text(title)
    grpc_status = response_status(response)
    return Row(
        file=path,
        number=exchange.number,
        label=exchange.label,
        title=title,
        method=exchange.request.method,
        target=target,
        status=response.status if response else None,
        grpc_status=grpc_status.code if grpc_status else None,
        grpc_status_name=grpc_status.name if grpc_status else None,
        events=_count(response.events) + len((response.is_grpc and response.grpc_frames) or []) if response else 0,
        request_bytes=len(exchange.request.body),
        response_bytes=len(response.body) if response else None,
        cut=exchange.cut,
    )


def _count(events) -> int:
    return sum(1 for event in events if not event.is_ping)


def json_rows(table: Iterable[Row]) -> Iterator[str]:
    """A JSON list of the rows, laid out as `json.dumps(rows, indent=2)` lays it out, in pieces
    as rows come. A row's members are all scalars, so the C encoder lays each out (the indenting
    one is written in Python and several times slower)."""
    first = True
    for row in table:
        text = json.dumps(row.model_dump(), ensure_ascii=False, separators=(",\n    ", ": "))
        yield ("[\n  {\n    " if first else ",\n  {\n    ") + text[1:-1] + "\n  }"
        first = False
    yield "[]" if first else "\n]"


def text_table(table: list[Row]) -> str:
    """A plain table that lines up in a terminal and in a CI log."""
    headings = ("#", "title", "method", "target", "status", "events", "req bytes", "resp bytes")
    cells = [
        (
            row.label,
            row.title + (" (cut)" if row.cut else ""),
            row.method,
            row.target,
            _status(row),
            str(row.events) if row.events else "-",
            str(row.request_bytes),
            "-" if row.response_bytes is None else str(row.response_bytes),
        )
        for row in table
    ]
    if not cells:
        return "(no exchanges)"
    cells = [_clip(line) for line in cells]
    widths = [max(len(h), *(len(line[i]) for line in cells)) for i, h in enumerate(headings)]
    numeric = {0, 4, 5, 6, 7}

    def fmt(line) -> str:
        pairs = enumerate(zip(line, widths, strict=True))
        parts = [v.rjust(w) if i in numeric else v.ljust(w) for i, (v, w) in pairs]
        return "  ".join(parts).rstrip()

    return "\n".join([fmt(headings), *(fmt(line) for line in cells)])


def _status(row: Row) -> str:
    """The HTTP status, or for a gRPC call the status its trailers gave (`NOT_FOUND (5)`)."""
    if row.grpc_status is not None:
        return Status(code=row.grpc_status, name=row.grpc_status_name).label
    return "-" if row.status is None else str(row.status)


def _clip(line: tuple[str, ...]) -> tuple[str, ...]:
    title, target = line[1], line[3]
    if len(title) > 48:
        title = title[:47] + "…"
    if len(target) > 56:
        target = target[:55] + "…"
    return (line[0], title, line[2], target, *line[4:])
