"""One row per exchange: what `a2a-capture show` prints."""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Iterator
from pathlib import Path

from pydantic import BaseModel

from a2a_capture.a2a.decode import decode
from a2a_capture.a2a.grpc import Status, response_status
from a2a_capture.analyze.facts import exchange_facts
from a2a_capture.capture.models import Exchange
from a2a_capture.report.facts import outcome
from a2a_capture.sources import CONVERTED, exchanges
from a2a_capture.terminal import json_shown, shown


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
    #: how the call ended, as the report says it: its error's name, its task's last state, the card it got
    outcome: str = ""
    #: the agent answered with an error (HTTP >= 400, a JSON-RPC or gRPC error, an A2A error type)
    failed: bool = False
    duration_ms: float | None = None


def rows(path: str | os.PathLike, masker=None) -> list[Row]:
    """Rows for one capture, read as a stream; frames shown later count with their stream."""
    return list(iter_rows(path, masker))


def iter_rows(path: str | os.PathLike, masker=None) -> Iterator[Row]:
    """Rows as they are read. Frames shown later count with their stream, so the newest stream's
    row (and those after it) wait until another stream starts: in a capture, later frames always
    belong to the newest stream. A converted HAR or flow file names any stream, and is held whole
    in memory anyway, so its rows wait to the end. ``masker`` (redact.mask.Masker): secrets in
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
            by_number[exchange.late_stream].events += _count(exchange.iter_late_events())
    yield from held


def _row(path: str, exchange: Exchange, masker=None) -> Row:
    response = exchange.response
    target, title = exchange.request.target, exchange.title
    if masker is not None:
        target, title = masker.redactor.target(target)[0], masker.text(title)
    grpc_status = response_status(response)
    facts = exchange_facts(exchange, decode(exchange, path))
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
        events=(_count(response.iter_events()) + len((response.is_grpc and response.grpc_frames) or [])
                if response else 0),
        request_bytes=exchange.request.body_size,
        response_bytes=response.body_size if response else None,
        cut=exchange.cut,
        outcome=outcome(facts, grpc_status.label if grpc_status else None),
        failed=facts.failed,
        duration_ms=round(facts.duration * 1000, 1) if facts.duration is not None else None,
    )


def _count(events) -> int:
    return sum(1 for event in events if not event.is_ping)


def json_rows(table: Iterable[Row]) -> Iterator[str]:
    """A JSON list of the rows, laid out as `json.dumps(rows, indent=2)` lays it out, in pieces
    as rows come. A row's members are all scalars, so the C encoder lays each out (the indenting
    one is written in Python and several times slower)."""
    first = True
    for row in table:
        text = json_shown(json.dumps(row.model_dump(), ensure_ascii=False, separators=(",\n    ", ": ")))
        yield ("[\n  {\n    " if first else ",\n  {\n    ") + text[1:-1] + "\n  }"
        first = False
    yield "[]" if first else "\n]"


#: the columns: heading, and whether it is right-aligned
_COLUMNS = (("#", True), ("title", False), ("method", False), ("target", False), ("status", True),
            ("outcome", False), ("time", True), ("events", True), ("req bytes", True), ("resp bytes", True))
#: what title, target and outcome are cut to at most, however wide the terminal
_ROOM = {"title": 48, "target": 56, "outcome": 40}
#: how a table is narrowed to a width, step by step until it fits: long columns narrowed to a width
#: (the widest of those named first), or a column left out; the number, method, status and
#: outcome always stay (an error's name is what a reader looks for)
_NARROWING = ((("title",), 20), (("target",), 24), "req bytes", "resp bytes", "events", (("title", "target"), 12),
              (("outcome",), 24), "time", (("title", "target"), 8), (("outcome",), 12))
_GAP = "  "
#: ANSI colours of an outcome: an error red, a task that did not simply complete yellow, a completed one green
RED, YELLOW, GREEN, BOLD, RESET = "\x1b[31m", "\x1b[33m", "\x1b[32m", "\x1b[1m", "\x1b[0m"
_TROUBLE = {"failed", "rejected", "canceled", "auth-required", "input-required", "no response"}


def text_table(table: list[Row], width: int | None = None, colour: bool = False) -> str:
    """A plain table that lines up in a terminal and in a CI log: no line longer than ``width``
    (a long title, target or outcome is cut with `…`; the byte counts, the events and the time
    go where even that is not enough), each failed call's status and outcome in red when
    ``colour``."""
    if not table:
        return "(no exchanges)"
    headings = [heading for heading, _ in _COLUMNS]
    cells = [_cells(row) for row in table]
    widths = [min(max(len(heading), *(len(line[i]) for line in cells)), _ROOM.get(heading, 1 << 30))
              for i, heading in enumerate(headings)]
    shown = list(range(len(_COLUMNS)))
    if width is not None:  # an error's name stays whole while anything else can give way
        errors = max((len(row.outcome) for row in table if row.failed), default=0)
        empty = [i for i, heading in enumerate(headings) if heading in ("time", "events")
                 and all(line[i] == "-" for line in cells)]  # nothing to say: the first to go
        _fit(shown, widths, width, min(errors, _ROOM["outcome"]), empty)

    def cut(index: int, value: str) -> str:
        room = widths[index]
        if len(value) <= room:
            return value
        if headings[index] == "target" and room > 8:  # the path's end says as much as its start
            head = (room - 1) * 2 // 3
            return value[:head] + "…" + value[len(value) - (room - 1 - head):]
        return value[: room - 1] + "…"

    def fmt(line, row: Row | None) -> str:
        parts, plain = [], []
        for index in shown:
            value = cut(index, line[index])
            text = value.rjust(widths[index]) if _COLUMNS[index][1] else value.ljust(widths[index])
            tint = _tint(row, headings[index]) if colour and row is not None else ""
            plain.append(text)
            parts.append(f"{tint}{text}{RESET}" if tint else text)
        text = _GAP.join(plain).rstrip()
        if width is not None and len(text) > width:  # narrower than the least the columns take: cut
            return text[: width - 1] + "…"
        return _GAP.join(parts).rstrip() if colour else text

    head = fmt(headings, None)
    return "\n".join([f"{BOLD}{head}{RESET}" if colour else head,
                      *(fmt(line, row) for line, row in zip(cells, table, strict=True))])


def _fit(shown: list[int], widths: list[int], width: int, errors: int, empty: list[int]) -> None:
    """Narrow the table to ``width`` in place: the ``empty`` columns left out first, then a step of
    _NARROWING at a time; the outcome column not below ``errors`` (the longest error's name) but at
    the last step."""
    index_of = {heading: i for i, (heading, _) in enumerate(_COLUMNS)}

    def total() -> int:
        return sum(widths[i] for i in shown) + len(_GAP) * (len(shown) - 1)

    wanted = list(widths)
    for index in empty:
        if total() > width:
            shown.remove(index)
    for step in _NARROWING:
        if total() <= width:
            break
        if isinstance(step, str):
            if index_of[step] in shown:
                shown.remove(index_of[step])
            continue
        names, least = step
        if names == ("outcome",) and step is not _NARROWING[-1]:
            least = max(least, errors)
        columns = [index_of[name] for name in names]
        while total() > width:
            wide = max(columns, key=lambda i: widths[i])
            if widths[wide] <= least:
                break
            widths[wide] -= 1
    for name in ("title", "target", "outcome"):  # room a step left over goes back, title first
        index = index_of[name]
        widths[index] = min(wanted[index], widths[index] + max(0, width - total()))


def _cells(row: Row) -> tuple[str, ...]:
    """A row's cells as a terminal shows them (what came from the capture with its controls escaped)."""
    return (shown(row.label), shown(row.title) + (" (cut)" if row.cut else ""), shown(row.method), shown(row.target),
            _status(row), shown(row.outcome) or "-", _duration(row.duration_ms),
            str(row.events) if row.events else "-",
            str(row.request_bytes), "-" if row.response_bytes is None else str(row.response_bytes))


def _tint(row: Row, heading: str) -> str:
    if heading == "status":  # HTTP's 200 stays plain under a JSON-RPC error: the outcome says it
        failed = row.failed if row.grpc_status is not None else (row.status or 0) >= 400
        return RED if failed else ""
    if heading == "outcome":
        if row.failed:
            return RED
        if row.outcome in _TROUBLE:
            return YELLOW
        return GREEN if row.outcome == "completed" else ""
    return ""


def _duration(ms: float | None) -> str:
    """3.4 ms, 210 ms, 2.3 s: as many figures as a reader compares at a glance."""
    if ms is None:
        return "-"
    if ms < 100:
        return f"{ms:.1f} ms"
    if ms < 10_000:
        return f"{ms:.0f} ms"
    return f"{ms / 1000:.1f} s"


def _status(row: Row) -> str:
    """The HTTP status, or for a gRPC call the status its trailers gave (`NOT_FOUND (5)`)."""
    if row.grpc_status is not None:
        return Status(code=row.grpc_status, name=row.grpc_status_name).label
    return "-" if row.status is None else str(row.status)
