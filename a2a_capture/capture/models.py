"""The capture data model: plain pydantic data, no I/O.

A capture is a list of exchanges. Each exchange holds a request, usually a response, and
the notes a person or the recorder wrote around them. Bodies are kept as exact bytes; the
SSE events of a stream are parsed from the response body on demand, so the body stays the
one source of truth and a write-then-read cycle cannot drift.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from functools import cached_property
from typing import TypeVar

from pydantic import BaseModel, ConfigDict, Field

from a2a_capture.capture import grpc, sse
from a2a_capture.capture.body import PIECE, FileBody, contains, pieces, whole
from a2a_capture.capture.encoding import decode_content

CUT_MARK = "…"
_CUT_BYTES = CUT_MARK.encode()


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", ignored_types=(cached_property,), arbitrary_types_allowed=True,
                              populate_by_name=True)

    def __eq__(self, other: object) -> bool:
        """Equal data, whatever was cached or where it was read from."""
        if type(other) is not type(self):
            return NotImplemented
        return self.model_dump() == other.model_dump()

    __hash__ = None  # type: ignore[assignment]


class Message(_Model):
    """What a request and a response share: ordered headers (case kept) and a body."""

    headers: list[tuple[str, str]] = Field(default_factory=list)
    #: the body as it is kept: its bytes, or where they stand in the capture file when they are many
    #: (capture/body.py); given as ``body=``, read as ``body`` (whole) or in ``body_pieces``
    stored: bytes | FileBody = Field(default=b"", validation_alias="body")
    http_version: str = "1.1"
    #: positions in ``headers`` before which a documentation capture had a `…` line.
    head_cuts: list[int] = Field(default_factory=list)
    #: gRPC only: the readable view of each message as the file showed it (intro line, then
    #: JSON lines); words for people, not data, so equality ignores them.
    grpc_views: list[list[str]] = Field(default_factory=list, exclude=True)

    @property
    def body(self) -> bytes:
        """The body's bytes, all of them (read from the file for a body kept there: ``body_pieces``
        reads it in the memory of a piece)."""
        return whole(self.stored)

    @body.setter
    def body(self, value: bytes) -> None:
        self.stored = value

    @property
    def body_size(self) -> int:
        return len(self.stored)

    def body_pieces(self, piece: int = PIECE) -> Iterator[bytes]:
        """The body's bytes a piece at a time, wherever it is kept."""
        return pieces(self.stored, piece)

    def model_copy(self, *, update: dict | None = None, deep: bool = False):
        """A copy; a ``body`` in ``update`` is the body given (as to the constructor)."""
        if update and "body" in update:
            update = {**update}
            update["stored"] = update.pop("body")
        return super().model_copy(update=update, deep=deep)

    def header(self, name: str, default: str | None = None) -> str | None:
        """The first value of a header, looked up without regard to case."""
        wanted = name.lower()
        for key, value in self.headers:
            if key.lower() == wanted:
                return value
        return default

    def header_values(self, name: str) -> list[str]:
        wanted = name.lower()
        return [value for key, value in self.headers if key.lower() == wanted]

    @property
    def content(self) -> bytes:
        """The body with any Content-Encoding (gzip, deflate, br, zstd) undone."""
        return decode_content(self.body, self.header("content-encoding"))

    @property
    def content_type(self) -> str:
        """The media type alone, lower case, without parameters."""
        value = self.header("content-type") or ""
        return value.split(";", 1)[0].strip().lower()

    @property
    def is_grpc(self) -> bool:
        return grpc.is_grpc_type(self.header("content-type"))

    @property
    def grpc_frames(self) -> list[bytes] | None:
        """The body's length-prefixed gRPC messages, or None when it does not divide into them."""
        return grpc.split_frames(self.body)

    @property
    def cut(self) -> bool:
        """True when a documentation capture left something out of this message (`…`)."""
        if self.head_cuts or contains(self.stored, _CUT_BYTES):
            return True
        return any(CUT_MARK in key or CUT_MARK in value for key, value in self.headers)


class Request(Message):
    method: str
    target: str

    @property
    def cut(self) -> bool:
        return CUT_MARK in self.target or super().cut


class Response(Message):
    status: int
    reason: str = ""
    #: arrival time of each SSE event (or gRPC message), seconds after the exchange started; None
    #: where unknown.
    event_times: list[float | None] = Field(default_factory=list)
    #: notes written just before the SSE event with that index.
    event_notes: dict[int, list[str]] = Field(default_factory=dict)
    #: gRPC: the trailers that ended the stream (`grpc-status`, `grpc-message`, …)
    trailers: list[tuple[str, str]] = Field(default_factory=list)
    #: gRPC: the intro line of the status paragraph as the file showed it (words for people)
    grpc_status_view: str | None = Field(default=None, exclude=True)

    def grpc_value(self, name: str) -> str | None:
        """A gRPC status field from the trailers, or from the head of a trailers-only answer."""
        wanted = name.lower()
        for key, value in [*self.trailers, *self.headers]:
            if key.lower() == wanted:
                return value
        return None

    @property
    def is_event_stream(self) -> bool:
        return self.content_type == "text/event-stream"

    @cached_property
    def events(self) -> list[sse.Event]:
        """The SSE events of the body, with arrival times and notes; empty for non-streams."""
        if not self.is_event_stream:
            return []
        return sse.parse(self._stream_body(), self.event_times, self.event_notes)

    def iter_events(self) -> Iterator[sse.Event]:
        """The SSE events of the body one at a time, none kept (``events`` keeps them all): for a
        reader that passes over a stream once, in the memory of one frame (a body kept in its file is
        read a piece at a time)."""
        if "events" in self.__dict__:  # parsed already: not again
            return iter(self.events)
        if not self.is_event_stream:
            return iter(())
        return sse.events(self._stream_body(), self.event_times, self.event_notes)

    def _stream_body(self) -> bytes | FileBody:
        """The body the events are read from: as it is kept, or its content, if it was encoded."""
        encoding = self.header("content-encoding")
        return decode_content(whole(self.stored), encoding) if encoding else self.stored


class ExchangeMeta(_Model):
    """Recorded-capture facts about an exchange, kept as written so they round-trip."""

    start: str | None = None
    end: str | None = None
    client: str | None = None
    server: str | None = None
    #: what redaction removed from this exchange (header names, JSON paths).
    redacted: list[str] = Field(default_factory=list)
    #: any other `#@ key: value` lines, in order, for tools newer than this one.
    extra: list[tuple[str, str]] = Field(default_factory=list)

    @property
    def started_at(self) -> datetime | None:
        return parse_time(self.start)

    @property
    def ended_at(self) -> datetime | None:
        return parse_time(self.end)

    @property
    def duration(self) -> float | None:
        """Seconds from request start to response end, where both are known."""
        return self.times()[1]

    def times(self) -> tuple[float | None, float | None]:
        """(start in seconds since the epoch, duration): ``started_at.timestamp()`` and
        ``duration``, each time read once (decode asks them of every exchange)."""
        # as ``parse_time`` reads them, written out: a call and an attribute of a model cost as much
        # as a third of the rest
        fields = self.__dict__
        start, end = fields["start"], fields["end"]
        if not start:
            return None, None
        try:
            started = _from_iso(start.replace("Z", "+00:00"))
        except ValueError:
            return None, None
        if end:
            try:
                ended = _from_iso(end.replace("Z", "+00:00"))
            except ValueError:
                return started.timestamp(), None
            try:
                return started.timestamp(), (ended - started).total_seconds()
            except TypeError:  # naive and aware do not mix
                pass
        return started.timestamp(), None


class Exchange(_Model):
    """One numbered block: `### N · title` or `### webhook N · title`."""

    number: int
    title: str = ""
    webhook: bool = False
    #: `# ` lines between the block header and the request.
    notes: list[str] = Field(default_factory=list)
    request: Request
    #: `# ` lines between the request and the response.
    response_notes: list[str] = Field(default_factory=list)
    response: Response | None = None
    #: SSE frames of an earlier exchange's stream that the file shows after this response,
    #: as the kit does when a stream goes on while another exchange happens.
    late_stream: int | None = None
    late_body: bytes = b""
    late_event_notes: dict[int, list[str]] = Field(default_factory=dict)
    #: `# ` lines after everything else in the block.
    trailing_notes: list[str] = Field(default_factory=list)
    meta: ExchangeMeta = Field(default_factory=ExchangeMeta)
    #: where the block starts in its file (1-based line), when it was read from one.
    line: int | None = Field(default=None, exclude=True)
    #: its flow's place in a mitmproxy flow file (1-based, as mitmproxy lists them), which has no lines
    flow: int | None = Field(default=None, exclude=True)

    @property
    def label(self) -> str:
        return f"webhook {self.number}" if self.webhook else str(self.number)

    @property
    def cut(self) -> bool:
        return self.request.cut or bool(self.response and self.response.cut)

    @cached_property
    def late_events(self) -> list[sse.Event]:
        """The frames this block shows for the stream of exchange ``late_stream``."""
        return sse.parse(self.late_body, None, self.late_event_notes)

    def iter_late_events(self) -> Iterator[sse.Event]:
        """``late_events`` one at a time, none kept."""
        if "late_events" in self.__dict__:  # parsed already: not again
            return iter(self.late_events)
        return sse.events(self.late_body, None, self.late_event_notes)


class Capture(_Model):
    """A whole capture file."""

    #: `# ` lines before the first block.
    notes: list[str] = Field(default_factory=list)
    #: `#@ key: value` lines before the first block (format version, recorder settings).
    meta: list[tuple[str, str]] = Field(default_factory=list)
    exchanges: list[Exchange] = Field(default_factory=list)
    #: the line ending the file uses for its own structure.
    newline: str = "\n"

    def stream_events(self, number: int) -> list[sse.Event]:
        """Every event of exchange ``number``'s stream, including frames shown later."""
        events: list[sse.Event] = []
        for exchange in self.exchanges:
            if exchange.webhook:
                continue
            if exchange.number == number and exchange.response is not None:
                events.extend(exchange.response.events)
            if exchange.late_stream == number:
                events.extend(exchange.late_events)
        return events


M = TypeVar("M", bound=BaseModel)


def built(cls: type[M], values: dict) -> M:
    """A ``cls`` (a pydantic model) made from values already checked, every field given with its
    right type: what validated construction gives, without validating again (5x quicker: the
    reader makes four models per exchange, the engine a finding per wasted call). The plain form,
    ``cls.model_construct(**values)``, reads recurring exchanges in 32 us, not 11 (bench/read.py
    --size-mb 20: 3.8x the baseline, not 1.3x); the way past both is plain records (msgspec Structs)
    in place of these models, issue 29."""
    make = maker(cls)
    if len(values) != len(fields := _FIELDS[cls]):
        raise TypeError(f"{cls.__name__}: every field is needed, missing {fields - set(values)}")
    return make(values)


def maker(cls: type[M]) -> Callable[[dict], M]:
    """``built`` for ``cls`` alone, for a caller that gives every field in a literal of them (the
    reader's four models a block): its field set found once, and no count of the fields for each
    model (a test checks each such model's fields). One per class, made once."""
    make = _MAKERS.get(cls)
    if make is None:
        make = _MAKERS[cls] = _maker(cls)
    return make


def _maker(cls: type[M]) -> Callable[[dict], M]:
    fields = _fields(cls)
    new, store = cls.__new__, object.__setattr__

    def make(values: dict) -> M:
        """What ``cls.model_construct(**values)`` makes (its own stores, as it makes them), without its
        look at each field for a default to fill in: every field is given."""
        model = new(cls)
        store(model, "__dict__", values)
        store(model, "__pydantic_fields_set__", fields)
        store(model, "__pydantic_extra__", None)
        store(model, "__pydantic_private__", None)
        return model
    return make


def _fields(cls: type) -> set[str]:
    fields = _FIELDS.get(cls)
    if fields is None:
        fields = _FIELDS[cls] = set(cls.model_fields)
    return fields


#: each model's fields: the set pydantic keeps of those given (all of them), one set shared by every
#: model ``built``: pydantic only ever adds a field's name to it (a field set), which it holds
#: already, and copies it for a copy of the model
_FIELDS: dict[type, set[str]] = {}
#: ``maker(cls)`` for each class
_MAKERS: dict[type, Callable[[dict], BaseModel]] = {}


def format_time(moment: datetime | float) -> str:
    """A time as recorded captures write it: RFC 3339, UTC, microseconds (`#@ start:`)."""
    if not isinstance(moment, datetime):  # the recorder's case, twice an exchange: without datetime
        whole = math.floor(moment)
        micro = round((moment - whole) * 1e6)
        if micro == 1_000_000:
            whole, micro = whole + 1, 0
        return f"{time.strftime('%Y-%m-%dT%H:%M:%S', time.gmtime(whole))}.{micro:06d}Z"
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


_from_iso = datetime.fromisoformat


def parse_time(value: str | None) -> datetime | None:
    """A `#@ start:`/`#@ end:` time (RFC 3339, `Z` allowed), or None where it is absent or not a time."""
    if not value:
        return None
    try:
        return datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None
