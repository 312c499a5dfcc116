"""Write captures back out, in the layout the reader understands.

Each body is written the most readable way that still reads back to the same bytes:
as it is (a documentation capture's layout, or framed by a true `Content-Length`), as is
with a `#@ …-body: N bytes` length when its lines would otherwise be misread, or as base64
when it is not text. The writer checks this with the reader's own grammar.
"""

from __future__ import annotations

import base64
import os
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import BinaryIO

from a2a_capture.capture import grpc, sse, syntax
from a2a_capture.capture.models import Capture, Exchange, ExchangeMeta, Message, Response

_LINE_BREAK = re.compile(r"\r\n?|\n")

_BASE64_LINE = 76


@dataclass
class SpooledBody:
    """A body too large to hold, in a file: written with its length (text) or as base64, streamed."""

    file: BinaryIO
    size: int
    #: UTF-8 without NUL: written as it is; otherwise as base64
    text: bool

    def __len__(self) -> int:
        return self.size

    def pieces(self, newline: bytes, piece: int = 57 * 16 * 1024) -> Iterator[bytes]:
        """The body as the capture writes it, a piece at a time, ending with a line end."""
        self.file.seek(0)
        left = self.size
        while left > 0:
            data = self.file.read(min(piece, left))
            if not data:
                raise OSError(f"the spooled body ended {left} bytes short")
            left -= len(data)
            if self.text:
                yield data
            else:  # a piece is a whole number of 57-byte groups: 76-character lines
                text = base64.b64encode(data)
                yield newline.join(text[i:i + _BASE64_LINE] for i in range(0, len(text), _BASE64_LINE)) + newline
        if self.text:
            yield newline


class CaptureWriter:
    """Writes blocks one after another; remembers what the reader will need to know."""

    def __init__(self, newline: str = "\n", *, assume_stream: bool = False, views: grpc.Views = grpc.LAYOUT) -> None:
        self.nl = newline.encode()
        #: what a gRPC message read without a view is shown as (a2a.grpc.VIEWS reads it as A2A)
        self.views = views
        # with assume_stream, bodies are written as if an earlier exchange were a stream,
        # which is safe whatever precedes them (for appending to an existing file)
        self._last_stream: int | None = 0 if assume_stream else None
        self._started = False
        self._ended_blank = False

    def continue_after(self, tail: bytes) -> None:
        """Go on after existing content that ends with ``tail``."""
        self._started = bool(tail)
        self._ended_blank = tail.endswith(b"\n\n") or tail.endswith(b"\r\n\r\n") or tail == b"\n"

    def preamble(self, notes: Iterable[str] = (), meta: Iterable[tuple[str, str]] = ()) -> bytes:
        lines = [_pragma(key, value) for key, value in meta] + [_note(note) for note in notes]
        if not lines:
            return b""
        self._started = True
        self._ended_blank = True
        return self.nl.join(lines) + self.nl + self.nl

    def block(self, exchange: Exchange) -> bytes:
        """One exchange as bytes, with the separator the previous block needs."""
        return b"".join(self.block_parts(exchange))

    def block_parts(self, exchange: Exchange,
                    spooled: dict[str, SpooledBody] | None = None) -> list[bytes | SpooledBody]:
        """One exchange as pieces of bytes, a spooled body (``spooled``, by "request" or "response")
        read from its file as the pieces are taken."""
        out = bytearray()
        if self._started and not self._ended_blank:
            out += self.nl
        self._started = True
        block = _Block(self, exchange, out, spooled or {})
        block.write()
        if exchange.response is not None and exchange.response.is_event_stream and not exchange.webhook:
            self._last_stream = exchange.number
        self._ended_blank = not block.need_gap
        return [*block.parts, bytes(out)]

    def block_pieces(self, exchange: Exchange, spooled: dict[str, SpooledBody] | None = None) -> Iterator[bytes]:
        """``block_parts`` with each spooled body read out in pieces."""
        for part in self.block_parts(exchange, spooled):
            if isinstance(part, SpooledBody):
                yield from part.pieces(self.nl)
            else:
                yield part


class _Block:
    """Lays out one exchange; ``need_gap`` says a blank line must come before the next part."""

    def __init__(self, writer: CaptureWriter, exchange: Exchange, out: bytearray,
                 spooled: dict[str, SpooledBody] | None = None) -> None:
        self.writer = writer
        self.nl = writer.nl
        self.exchange = exchange
        self.out = out
        self.need_gap = False
        self.spooled = spooled or {}
        #: what comes before ``out``: bytes, and the spooled bodies between them
        self.parts: list = []

    def _spool_of(self, message: Message) -> SpooledBody | None:
        direction = "request" if message is self.exchange.request else "response"
        return self.spooled.get(direction)

    def write(self) -> None:
        exchange, nl = self.exchange, self.nl
        kind = "webhook " if exchange.webhook else ""
        header = f"### {kind}{exchange.number}"
        if exchange.title:
            header += f" {syntax.MIDDLE_DOT} {_one_line(exchange.title)}"
        lines = [header.encode("utf-8", "surrogateescape")]
        request, response = exchange.request, exchange.response
        request_mode = self._body_mode(request, syntax.REQUEST_BODY_EMPTY, syntax.REQUEST_BODY_END)
        response_mode = None
        if response is not None:
            response_mode = self._response_mode(response)
        sizes = {key: len(self._spool_of(message) or message.body) for key, message in
                 (("request-body", request), ("response-body", response)) if message is not None}
        lines += _meta_pragmas(exchange.meta, request, request_mode, response, response_mode, sizes)
        lines += [_note(note) for note in exchange.notes]
        self.out += nl.join(lines) + nl
        self._head(request, f"{request.method} {request.target} HTTP/{request.http_version}")
        self._body(request.body, request_mode, request, "request")
        self._notes(exchange.response_notes)
        extra_notes: list[str] = []
        if response is not None:
            self._gap()
            reason = f" {response.reason}" if response.reason else ""
            self._head(response, f"HTTP/{response.http_version} {response.status}{reason}")
            if response_mode == "bare" and response.is_event_stream:
                self._frames(response.body, response.event_notes)
            else:
                self._body(response.body, response_mode, response, "response")
                extra_notes = [n for _, group in sorted(response.event_notes.items()) for n in group]
            self._grpc_status(response)
        if exchange.late_body:
            self._gap()
            self._frames(exchange.late_body, exchange.late_event_notes)
        self._notes(extra_notes + exchange.trailing_notes)

    # -- parts -------------------------------------------------------------------------

    def _gap(self) -> None:
        if self.need_gap:
            self.out += self.nl
        self.need_gap = False

    def _head(self, message: Message, start_line: str) -> None:
        lines = [start_line.encode("utf-8", "surrogateescape")]
        for index, (name, value) in enumerate(message.headers):
            lines += [syntax.CUT_LINE] * message.head_cuts.count(index)
            lines.append(f"{name}: {value}".encode("utf-8", "surrogateescape"))
        lines += [syntax.CUT_LINE] * message.head_cuts.count(len(message.headers))
        for line in lines:
            if b"\n" in line or b"\r" in line:
                raise ValueError(f"a line break inside a message head: {line!r}")
        self.out += self.nl.join(lines) + self.nl + self.nl
        self.need_gap = False

    def _body(self, body: bytes, mode: str | None, message: Message, direction: str) -> None:
        spool = self._spool_of(message)
        if spool is not None:
            self.parts += [bytes(self.out), spool]
            self.out.clear()
            self.need_gap = True
            return
        if not body:
            return
        if mode == "grpc":
            self._grpc_messages(message, direction)
        elif mode == "base64":
            text = base64.b64encode(body)
            chunks = [text[i:i + _BASE64_LINE] for i in range(0, len(text), _BASE64_LINE)]
            self.out += self.nl.join(chunks) + self.nl
        else:
            self.out += body + self.nl
        self.need_gap = True

    def _grpc_messages(self, message: Message, direction: str) -> None:
        """Each gRPC message as a paragraph: its view (kept, or made now), then its bytes."""
        frames = message.grpc_frames or []
        views = message.grpc_views
        if len(views) != len(frames):
            views = grpc.message_views(self.exchange.request.target, direction, frames, self.writer.views)
        paragraphs = []
        for view, one in zip(views, frames, strict=True):
            lines = [line.encode("utf-8", "surrogateescape") for line in view]
            _check_view(lines)
            if not grpc.is_message_intro(lines[0]):
                raise ValueError(f"a gRPC view must start with 'grpc message', not {view[0]!r}")
            paragraphs.append(self.nl.join(lines + grpc.bytes_lines(one)) + self.nl)
        self.out += self.nl.join(paragraphs)
        self.need_gap = True

    def _grpc_status(self, response: Response) -> None:
        """The status paragraph of a gRPC answer: the status by name, then the trailers."""
        if not response.trailers and not (response.is_grpc and response.grpc_value("grpc-status") is not None):
            return
        self._gap()
        intro = response.grpc_status_view or grpc.status_view(response.headers, response.trailers, self.writer.views)
        lines = [intro.encode("utf-8", "surrogateescape")]
        _check_view(lines)
        if not grpc.is_status_intro(lines[0]):
            raise ValueError(f"a gRPC status paragraph must start with 'grpc status', not {intro!r}")
        lines += [f"{name}: {value}".encode("utf-8", "surrogateescape") for name, value in response.trailers]
        for line in lines[1:]:
            if b"\n" in line or b"\r" in line or not syntax.HEADER_LINE.match(line):
                raise ValueError(f"not a trailer line: {line!r}")
        self.out += self.nl.join(lines) + self.nl
        self.need_gap = True

    def _frames(self, body: bytes, notes: dict[int, list[str]]) -> None:
        """A run of SSE frames written as they are, with notes between them."""
        if not body:
            for group in notes.values():
                self._notes(group)
            return
        events = sse.parse(body)
        cursor = 0
        for index, event in enumerate(events):
            if index in notes:
                self.out += body[cursor:event.start]
                cursor = event.start
                self.out += b"".join(_note(n) + self.nl for n in notes[index]) + self.nl
        self.out += body[cursor:] + self.nl
        self.need_gap = True
        self._notes([n for index, group in sorted(notes.items()) if index >= len(events) for n in group])

    def _notes(self, notes: list[str]) -> None:
        if not notes:
            return
        self._gap()
        self.out += b"".join(_note(note) + self.nl for note in notes)
        self.need_gap = True

    # -- choosing how a body is written --------------------------------------------------

    def _response_mode(self, response: Response) -> str | None:
        if response.is_event_stream:
            mode = self._body_mode(response, syntax.STREAM_BODY_EMPTY, syntax.STREAM_BODY_END)
            if mode == "bare" and _has_note_paragraph(response.body):
                return "length"
            return mode
        if self.writer._last_stream is not None:
            return self._body_mode(response, syntax.RESPONSE_BODY_EMPTY_BEFORE_FRAMES,
                                   syntax.RESPONSE_BODY_END_BEFORE_FRAMES)
        return self._body_mode(response, syntax.RESPONSE_BODY_EMPTY, syntax.RESPONSE_BODY_END)

    def _body_mode(self, message: Message, empty, end) -> str | None:
        spool = self._spool_of(message)
        if spool is not None:
            return "length" if spool.text else "base64"
        body = message.body
        if message.is_grpc and body:
            # gRPC bodies are laid out as messages, or else framed by a pragma
            if message.grpc_frames is not None:
                return "grpc"
            return "base64" if b"\x00" in body or not _is_utf8(body) else "length"
        if not body:
            # an empty body under a declared length or coding must say so, or the reader
            # would take the declared length from what follows
            return "length" if _framing_header(message) == "other" else None
        if b"\x00" in body or not _is_utf8(body):
            return "base64"
        if _framing_header(message) == "true":
            return "exact"
        if _framing_header(message) is None and _reads_back_bare(body, empty, end, self.nl):
            return "bare"
        return "length"


def _meta_pragmas(meta: ExchangeMeta, request, request_mode, response, response_mode,
                  sizes: dict[str, int]) -> list[bytes]:
    pairs: list[tuple[str, str]] = []
    for key in ("start", "end", "client", "server"):
        value = getattr(meta, key)
        if value is not None:
            pairs.append((key, value))
    if meta.redacted:
        pairs.append(("redacted", ", ".join(meta.redacted)))
    for key, message, mode in (("request-body", request, request_mode),
                               ("response-body", response, response_mode)):
        if mode in ("length", "base64") and message is not None:
            suffix = " base64" if mode == "base64" else ""
            pairs.append((key, f"{sizes[key]} bytes{suffix}"))
    if response is not None and response.event_times:
        pairs.append(("event-times", " ".join("-" if t is None else repr(t) for t in response.event_times)))
    pairs += meta.extra
    return [_pragma(key, value) for key, value in pairs]


def _check_view(lines: list[bytes]) -> None:
    """A view is lines of words: none blank, none that the reader would take for bytes."""
    for index, line in enumerate(lines):
        if b"\n" in line or b"\r" in line or not line.strip() or (index and grpc.is_bytes_line(line)):
            raise ValueError(f"a gRPC view line must be one non-blank line of words, not {line!r}")


def _reads_back_bare(body: bytes, empty, end, nl: bytes) -> bool:
    """Would the reader find exactly this body if it were written with no length?"""
    if body.endswith((b"\n", b"\r")) or empty.match(body.lstrip(b"\r\n")):
        return False
    probe = body + nl + nl + b"### 1" + nl
    match = end.search(probe)
    return match is not None and match.start() == len(body) + len(nl) - 1


def _has_note_paragraph(body: bytes) -> bool:
    previous_blank = True
    for line in body.splitlines(keepends=True):
        if previous_blank and syntax.is_note(line):
            return True
        previous_blank = syntax.is_blank(line)
    return False


def _framing_header(message: Message) -> str | None:
    """'true' when Content-Length frames the body exactly; 'other' when a length or
    transfer coding is declared that the reader must not trust; None when there is none."""
    if message.header("transfer-encoding") is not None:
        return "other"
    values = message.header_values("content-length")
    if not values:
        return None
    return "true" if all(v.strip() == str(len(message.body)) for v in values) else "other"


def _is_utf8(body: bytes) -> bool:
    try:
        body.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


def _one_line(text: str) -> str:
    """A note, title or pragma value on one line: only CR and LF break a capture's lines, so
    only they become spaces (str.splitlines would also break at VT, FF, NEL, U+2028, ...,
    which a line read from a capture can hold)."""
    return _LINE_BREAK.sub(" ", text.rstrip("\r\n"))


def _note(text: str) -> bytes:
    text = _one_line(text)
    return (f"# {text}" if text else "#").encode("utf-8", "surrogateescape")


def _pragma(key: str, value: str) -> bytes:
    if not syntax.PRAGMA_KEY.fullmatch(key):
        raise ValueError(f"a #@ key must be letters, digits, '-', '_' or '.', not {key!r}")
    return f"#@ {key}: {_one_line(value)}".encode("utf-8", "surrogateescape")


# -- public entry points -------------------------------------------------------------------

def capture_bytes(capture: Capture, *, views: grpc.Views = grpc.LAYOUT) -> bytes:
    """The whole capture as the bytes of a file; ``views`` shows gRPC messages read without one
    (``a2a_capture.capture_bytes`` passes the A2A views)."""
    writer = CaptureWriter(capture.newline, views=views)
    parts = [writer.preamble(capture.notes, capture.meta)]
    parts += [writer.block(exchange) for exchange in capture.exchanges]
    return b"".join(parts)


def write_capture(capture: Capture, target: str | os.PathLike | BinaryIO, *,
                  views: grpc.Views = grpc.LAYOUT) -> None:
    data = capture_bytes(capture, views=views)
    if isinstance(target, (str, os.PathLike)):
        with open(target, "wb") as stream:
            stream.write(data)
    else:
        target.write(data)
