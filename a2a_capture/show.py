"""One row per exchange: what `a2a-capture show` prints."""

from __future__ import annotations

import os
from collections.abc import Iterable

from pydantic import BaseModel

from a2a_capture.a2a.grpc import Status, response_status
from a2a_capture.capture.models import Exchange
from a2a_capture.sources import exchanges


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


def rows(path: str | os.PathLike) -> list[Row]:
    """Rows for one capture, read as a stream; frames shown later count with their stream."""
    result: list[Row] = []
    by_number: dict[int, Row] = {}
    for exchange in exchanges(path):
        row = _row(os.fspath(path), exchange)
        result.append(row)
        if not exchange.webhook:
            by_number[exchange.number] = row
        if exchange.late_stream is not None and exchange.late_stream in by_number:
            by_number[exchange.late_stream].events += _count(exchange.late_events)
    return result


def _row(path: str, exchange: Exchange) -> Row:
    response = exchange.response
    grpc_status = response_status(response)
    return Row(
        file=path,
        number=exchange.number,
        label=exchange.label,
        title=exchange.title,
        method=exchange.request.method,
        target=exchange.request.target,
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


def json_rows(table: Iterable[Row]) -> list[dict]:
    return [row.model_dump() for row in table]


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
