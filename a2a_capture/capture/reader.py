"""Read capture files into exchanges, one block at a time.

The reader walks the file through a sliding buffer (capture/source.py), so memory follows the
largest exchange, not the file. A block is its header, its preamble (capture/preamble.py), then
a request and a response: each head is parsed by h11 (capture/http11.py) once its body is framed
(capture/bodies.py: by a `#@ …-body` length, by `Content-Length`, or by the layout a documentation
capture uses), and notes among a stream's frames are set apart (capture/frame_notes.py). The
blocks a recorder writes are read a quicker way (capture/quick.py) that gives the same exchanges.
Anything that breaks the format raises one `CaptureFormatError` naming the file, line and column.
"""

from __future__ import annotations

import io
import os
import re
from collections.abc import Iterator
from typing import BinaryIO

from a2a_capture import shortcuts
from a2a_capture.capture import http11, syntax
from a2a_capture.capture.bodies import read_body, read_grpc_messages, read_grpc_status, read_until
from a2a_capture.capture.body import whole
from a2a_capture.capture.frame_notes import FRAME_LINE, check_frames, split_notes
from a2a_capture.capture.models import Capture, Exchange, Request, Response, built
from a2a_capture.capture.preamble import Framing, Preamble, parse_preamble, read_block_preamble
from a2a_capture.capture.quick import (
    COMMON_PREAMBLE,
    CR,
    FOUR_PRAGMAS,
    LF,
    MORE,
    UNFRAMED_REQUEST_BODY,
    UNFRAMED_RESPONSE_BODY,
    USUAL_START,
    block_exchange,
    body_at,
    common_message,
    make_meta,
    next_block_at,
    quiet_failure,
    request_head,
)
from a2a_capture.capture.source import Source
from a2a_capture.errors import CaptureFormatError


class CaptureReader:
    """Iterate over the exchanges of one capture file.

    The file-level notes, pragmas and line ending are read when the reader is made, so
    they are known before the first exchange is.
    """

    #: common blocks read the quick way (``_common_block``); False: every block the general way,
    #: which tests and bench/read.py compare it with (``A2A_CAPTURE_NO_SHORTCUTS``: False for all)
    quick = shortcuts.ENABLED

    def __init__(self, stream: BinaryIO, path: str | None = None) -> None:
        self.path = path
        self._source = Source(stream)
        self._heads = http11.Heads()  # what this reader learns of the heads it reads
        self.notes: list[str] = []
        self.meta: list[tuple[str, str]] = []
        self.newline = "\n"
        self._last_stream: int | None = None
        self._next_start: re.Match[bytes] | None = None
        self._read_preamble()

    def __iter__(self) -> Iterator[Exchange]:
        source = self._source
        if not (self.quick and self.newline == "\n"):
            while source.pos < len(source.buf) or source.fill():  # up to the end of the file
                yield self._read_exchange()
            return
        # the usual blocks of a recorded session are read here in a straight line, without a call for the block:
        # the recorder's four pragmas alone, a request head seen whole before or of a known shape, a response
        # head of a known shape, each body framed by its length then a blank line (or no request body at all), the next
        # block's usual start right after; any other block the quick way (``_common_block``), else the
        # general way. Nothing is consumed until the block is taken, so any step may leave it to the others.
        heads = self._heads
        usual_start, responses = USUAL_START.match, heads.responses
        usual = None  # the usual start of the block at the position, matched where the block before ended
        while source.pos < len(source.buf) or source.fill():
            buf = source.buf
            if usual is None:
                usual = usual_start(buf, source.pos)
            while usual is not None and usual.lastindex == FOUR_PRAGMAS:  # no body length, no event times
                at = usual.end()
                if (stop := buf.find(b"\n\n", at)) <= at:
                    break  # the head goes on past the buffer
                if (found := request_head(heads, buf, at, stop)) is None:
                    break
                request_known, request_values = found
                at = stop + 2
                # the line ends of the header and the pragmas, and the request head's with its blank line
                lines = 5 + request_known.lines
                length = (request_known.length if request_known.length_slot is None
                          else int(request_values[request_known.length_slot]))  # length_of
                if length is None:  # no body: the response follows the blank line
                    request_body = b""
                else:
                    end = at + length
                    if buf[end:end + 2] != b"\n\n":
                        break
                    request_body, at = buf[at:end], end + 2  # the body, then a blank line
                    lines += (request_body.count(b"\n") if LF in request_body else 0) + 2
                if (found := responses.pattern.match(buf, at)) is None:  # as responses.match, without its call
                    break
                response_known, values = responses.found[found.lastindex]
                values, at = found.groups()[values], found.end()
                length = (response_known.length if response_known.length_slot is None
                          else int(values[response_known.length_slot]))  # length_of
                if length is None:
                    break
                end = at + length
                if (buf[end:end + 2] != b"\n\n" or (next_usual := usual_start(buf, end + 2)) is None
                        or (response := response_known.response(values, body := buf[at:end], [])) is None):
                    break
                webhook, number, title, start, stamp, client, server, _, _, _ = usual.groups()
                exchange = block_exchange(
                    number, title, webhook, [], request_known.request(request_values, request_body), response,
                    make_meta({"start": start.decode(), "end": stamp.decode(), "client": client.decode(),
                           "server": server.decode(), "redacted": [], "extra": []}), source.line)
                # and the response head's with its blank line, its body's, the blank line after it
                source.line += lines + response_known.lines + 2 + (body.count(b"\n") if LF in body else 0)
                source.pos, usual = end + 2, next_usual
                if response_known.shape.event_stream and webhook is None:
                    self._last_stream = exchange.number
                yield exchange
            # another block (or one that goes on past the buffer)
            self._next_start = usual
            while (exchange := self._common_block(source, source.buf, source.pos, source.eof)) is MORE:
                source.fill()  # the block goes on past the buffer; at the end of the file, eof is known
            yield self._read_exchange() if exchange is None else exchange
            usual = self._next_start  # the next block's, if _common_block read this one and is where it was made
            if usual is not None and (usual.pos != source.pos or usual.string is not source.buf):
                usual = None

    def close(self) -> None:
        self._source.stream.close()

    # -- the file head -----------------------------------------------------------------

    def _read_preamble(self) -> None:
        source = self._source
        first = source.peek_line()
        if first.startswith(b"\xef\xbb\xbf"):
            source.skip(3)
            first = source.peek_line()
        if first.endswith(b"\r\n"):
            self.newline = "\r\n"
        while True:
            line = source.peek_line()
            text = syntax.strip_eol(line)
            if line == b"" or syntax.BLOCK_HEADER.match(text):
                return
            if syntax.is_blank(line):
                source.skip(len(line))
            elif pragma := syntax.PRAGMA.match(text):
                self.meta.append((_text(pragma.group(1)), _text(pragma.group(2))))
                source.skip(len(line))
            elif syntax.is_note(line):
                self.notes.append(syntax.note_text(line))
                source.skip(len(line))
            else:
                raise self._error("a block header (### N · title) or a # note", found=text)

    # -- one block ---------------------------------------------------------------------

    def _read_exchange(self) -> Exchange:
        """The next block, the general way (the quick way is tried first, by ``__iter__``)."""
        source = self._source
        start_line = source.line
        header_line = syntax.strip_eol(source.next_line())
        header = syntax.BLOCK_HEADER.match(header_line)
        if header is None:
            raise self._error("a block header (### N · title)", line=start_line, found=header_line)
        webhook, number, title = header.groups()
        preamble = read_block_preamble(self._source, self._error)
        request = self._read_request(preamble.framing.get("request-body"))
        response_notes = self._read_notes()
        response, trailing = None, []
        line = syntax.strip_eol(source.peek_line())
        if syntax.STATUS_LINE.match(line):
            response, trailing = self._read_response(preamble)
        elif line and not syntax.BLOCK_HEADER.match(line):
            raise self._error("a status line (HTTP/1.1 200 OK) or the next block", found=line)
        exchange = built(Exchange, {
            "number": int(number), "title": _text(title or b""), "webhook": bool(webhook), "notes": preamble.notes,
            "request": request, "response_notes": response_notes, "response": response, "late_stream": None,
            "late_body": b"", "late_event_notes": {}, "trailing_notes": trailing, "meta": preamble.meta,
            "line": start_line, "flow": None,
        })
        self._read_tail(exchange)
        if response is not None and response.is_event_stream and not webhook:
            self._last_stream = exchange.number
        return exchange

    # -- the common block, the quick way -------------------------------------------------

    def _common_block(self, source: Source, buf: bytes, pos: int, eof: bool):
        """A block as a recorder writes it, read in a few steps: the exchange (``source`` moved past
        it), None (read it the general way) or ``MORE`` (the buffer ends first: read on).

        A long recorded session is made of blocks of one shape: pragmas, a request, a response,
        bodies framed by a length (a `#@ …-body` pragma or a Content-Length that ends exactly)
        or absent, LF line ends, the next block right after. Those are read here from the buffer
        without consuming it until the block is whole; anything else (notes between the parts,
        gRPC, cut heads, unframed bodies, frames of an earlier stream, and anything the general
        reader would refuse) is left to the general reader, which gives the same exchange.
        """
        heads = self._heads
        usual = self._next_start  # the match that ended the block before, if this is where it was made
        if usual is None or usual.pos != pos or usual.string is not buf:
            usual = USUAL_START.match(buf, pos)
        if usual is not None:  # the header and the recorder's pragmas, in one match
            webhook, number, title, start, end, client, server, request_size, response_size, times = usual.groups()
            meta = make_meta({"start": start.decode(), "end": end.decode(), "client": client.decode(),
                          "server": server.decode(), "redacted": [], "extra": []})
            notes, at = [], usual.end()
            # its line ends: the header's, the four pragmas', each further pragma's (no value holds one)
            lines = 5 + (request_size is not None) + (response_size is not None) + (times is not None)
            request_framing = None if request_size is None else (int(request_size), False, 0)
            response_framing = None if response_size is None else (int(response_size), False, 0)
            if times is not None:
                times = [None if item == b"-" else float(item) for item in times.split(b" ")]
        else:
            end = buf.find(b"\n", pos)
            if end < 0:
                return None if eof else MORE
            header = syntax.BLOCK_HEADER.match(buf, pos, end)
            if header is None or buf[end - 1] == CR:
                return None
            at = COMMON_PREAMBLE.match(buf, end + 1).end()
            try:
                preamble = parse_preamble(buf[end + 1:at], source.line + 1, self._error)
            except CaptureFormatError:
                return None
            webhook, number, title = header.groups()
            times, notes, meta, framing = preamble.times, preamble.notes, preamble.meta, preamble.framing
            request_framing, response_framing = framing.get("request-body"), framing.get("response-body")
            lines = None  # the block's lines are counted at its end
        # the request: a head seen whole before or of a known shape, or another
        stop = buf.find(b"\n\n", at)
        if stop > at and (found := request_head(heads, buf, at, stop)) is not None:
            (known, values), at = found, stop + 2
            length = known.length if known.length_slot is None else int(values[known.length_slot])  # length_of
            end = -1 if length is None or request_framing is not None else at + length
            if end >= 0 and buf[end:end + 2] == b"\n\n":  # the usual body, as body_at takes it, without a call
                body, next_at = buf[at:end], end + 2
            elif not isinstance(found := body_at(buf, at, eof, length, request_framing, UNFRAMED_REQUEST_BODY), tuple):
                return found
            else:
                body, next_at = found
            request_end, at = at + len(body), next_at
            request = known.request(values, body)
            if lines is not None and (length is not None or request_framing is not None):
                # a body framed by a length is followed by line ends alone (those up to the response too)
                # the body's line ends: most have none, which a search for the byte's value (memchr, no method
                # call) finds quicker than a count
                lines += known.lines + (body.count(b"\n") if LF in body else 0)
            else:  # one without: blank lines with CRs may end it
                lines = None
        else:
            lines = None
            found = common_message(heads, buf, at, eof, b"request", request_framing,
                                   lambda stream: UNFRAMED_REQUEST_BODY)
            if not isinstance(found, tuple):
                return found
            head, shape, values, body, at = found
            try:
                request = heads.parse_request(shape, values, head, body, quiet_failure)
            except CaptureFormatError:
                return None
            heads.requests.learn(shape, head)
            if shape.sightings > 1:  # a shape that repeats (not one made unique by a per-request id)
                heads.seen_request(shape, values, head, request)
        size = len(buf)
        while at < size and buf[at] == LF:  # blank lines before the response
            at += 1
        if at == size:
            return None if eof else MORE
        # the response: a head of a known shape, or another
        if (found := heads.responses.match(buf, at)) is not None:
            if lines is not None:  # the line ends since the request's body, then the response's head
                lines += at - request_end + found[0].lines
            known, values, at = found
            length = known.length if known.length_slot is None else int(values[known.length_slot])  # length_of
            end = -1 if length is None or response_framing is not None else at + length
            if length is None and response_framing is None:
                lines = None  # blank lines with CRs may end it
            if end >= 0 and buf[end:end + 2] == b"\n\n":  # the usual body, as body_at takes it, without a call
                body, next_at = buf[at:end], end + 2
            elif not isinstance(found := body_at(buf, at, eof, length, response_framing, UNFRAMED_RESPONSE_BODY[
                    known.shape.event_stream, self._last_stream is not None]), tuple):
                return found
            else:
                body, next_at = found
            if lines is not None:  # the body's line ends, then the line ends alone after it
                lines += (body.count(b"\n") if LF in body else 0) + next_at - at - len(body)
            at = next_at
            shape = known.shape
        else:
            known = lines = None
            found = common_message(heads, buf, at, eof, b"response", response_framing,
                                    lambda stream: UNFRAMED_RESPONSE_BODY[stream, self._last_stream is not None])
            if not isinstance(found, tuple):
                return found
            head, shape, values, body, at = found
            if not shape.status_line:
                return None
        self._next_start = USUAL_START.match(buf, at)  # the next block, as the next call looks for it
        if self._next_start is None and (next_header := next_block_at(buf, at, eof)) is not True:
            return next_header
        if known is not None:
            response = known.response(values, body, times or [])
            if response is None:
                return None
        else:
            try:
                response = heads.parse_response(shape, values, head, body, quiet_failure, times or [])
            except CaptureFormatError:
                return None
            heads.responses.learn(shape, head)
        exchange = block_exchange(number, title, webhook, notes, request, response, meta, source.line)
        # the lines of a block of known heads are worked out above: a count of them here would read
        # every byte, bodies included
        source.line += buf.count(b"\n", pos, at) if lines is None else lines
        source.pos = at
        if shape.event_stream and webhook is None:
            self._last_stream = exchange.number
        return exchange


    def _read_notes(self) -> list[str]:
        notes = []
        source = self._source
        while True:
            line = source.peek_line()
            if syntax.is_note(line):
                notes.append(syntax.note_text(line))
            elif not (syntax.is_blank(line) and line):
                return notes
            source.skip(len(line))

    # -- messages ----------------------------------------------------------------------

    def _read_head(self, what: str) -> tuple[bytes, int]:
        """The head's lines joined by LF (whatever line ends the file uses), and its first line."""
        source = self._source
        first_line = source.line
        lines = source.take_head().splitlines()
        if not lines:
            raise self._error(what, line=first_line, found="the end of the file")
        return b"\n".join(lines), first_line

    def _read_request(self, framing: Framing | None) -> Request:
        head, first_line = self._read_head("a request line (METHOD target HTTP/1.1)")
        shape, values = self._heads.shape(b"request", head)
        views: list[list[str]] = []
        if framing is None and shape.grpc:
            body, views = read_grpc_messages(self._source, self._error)
        else:
            body, _ = read_body(self._source, shape.length(values, head), framing, syntax.REQUEST_BODY_EMPTY,
                                syntax.REQUEST_BODY_END, self.newline, self._error)
        request = self._heads.parse_request(shape, values, head, body, self._head_failure(first_line))
        request.grpc_views = views
        return request

    def _read_response(self, preamble: Preamble) -> tuple[Response, list[str]]:
        """The response, and the notes a stream shows after its last frame."""
        framing = preamble.framing.get("response-body")
        head, first_line = self._read_head("a status line (HTTP/1.1 200 OK)")
        shape, values = self._heads.shape(b"response", head)
        stream = shape.event_stream
        if stream:
            empty, end = syntax.STREAM_BODY_EMPTY, syntax.STREAM_BODY_END
        elif self._last_stream is not None:
            empty, end = syntax.RESPONSE_BODY_EMPTY_BEFORE_FRAMES, syntax.RESPONSE_BODY_END_BEFORE_FRAMES
        else:
            empty, end = syntax.RESPONSE_BODY_EMPTY, syntax.RESPONSE_BODY_END
        is_grpc = shape.grpc
        views: list[list[str]] = []
        if framing is None and is_grpc:
            body, views = read_grpc_messages(self._source, self._error)
            exact = True
        else:
            body, exact = read_body(self._source, shape.length(values, head), framing, empty, end, self.newline,
                                    self._error)
        notes: dict[int, list[str]] = {}
        trailing: list[str] = []
        if stream and not exact:
            body, notes, trailing = split_notes(body)
        response = self._heads.parse_response(shape, values, head, body, self._head_failure(first_line))
        response.event_times = preamble.times
        response.event_notes = notes
        response.grpc_views = views
        if is_grpc:
            response.grpc_status_view, response.trailers = read_grpc_status(self._source, self._error)
        return response, trailing

    # -- after the response ------------------------------------------------------------

    def _read_tail(self, exchange: Exchange) -> None:
        """Notes, and frames of an earlier stream, up to the next block."""
        source = self._source
        line = source.peek_line()
        if line == b"" or syntax.BLOCK_HEADER.match(syntax.strip_eol(line)):
            return
        if not (FRAME_LINE.match(line) or syntax.is_note(line)):
            raise self._error("a # note, SSE frames or the next block (### N · title)",
                              found=syntax.strip_eol(line))
        first_line = source.line
        region = whole(read_until(self._source, syntax.STREAM_BODY_END, self.newline))  # late frames are held
        frames, notes, after = split_notes(region)
        if not frames.strip():
            exchange.trailing_notes += [note for group in notes.values() for note in group] + after
            return
        check_frames(region, first_line, self._error)
        if self._last_stream is None:
            raise self._error("the next block: these SSE frames follow a response, but no "
                              "earlier exchange is an event stream", line=first_line)
        exchange.late_stream = self._last_stream
        exchange.late_body = frames
        exchange.late_event_notes = notes
        exchange.trailing_notes += after


    # -- errors ------------------------------------------------------------------------

    def _error(self, expected: str, *, line: int | None = None, found=None) -> CaptureFormatError:
        if isinstance(found, bytes):
            if (long := syntax.LONG_BLOCK_NUMBER.match(found)) is not None:  # whatever else might stand there
                expected, found = "a block number of at most 100 digits", f"one of {len(long.group(1))} digits"
            else:
                found = repr(found.decode("utf-8", "replace")[:60])
        return CaptureFormatError(expected, path=self.path,
                                  line=self._source.line if line is None else line, found=found)

    def _head_failure(self, first_line: int):
        def fail(expected: str, offset: int, found: str | None) -> CaptureFormatError:
            return CaptureFormatError(expected, path=self.path, line=first_line + offset, found=found)
        return fail


def _text(value: bytes) -> str:
    return value.decode("utf-8", "surrogateescape")


# -- public entry points -------------------------------------------------------------------

def open_capture(source: str | os.PathLike | BinaryIO) -> CaptureReader:
    """A streaming reader over a path or a binary file object."""
    if isinstance(source, (str, os.PathLike)):
        path = os.fspath(source)
        try:
            stream = open(path, "rb")  # noqa: SIM115 - closed with the generator's owner
        except OSError as error:
            raise CaptureFormatError("a readable capture file", path=path,
                                     found=error.strerror or str(error)) from None
        return CaptureReader(stream, path)
    name = getattr(source, "name", None)  # a pipe's is its descriptor's number: no path
    return CaptureReader(source, name if isinstance(name, str) else None)


def iter_exchanges(source: str | os.PathLike | BinaryIO) -> Iterator[Exchange]:
    """Stream the exchanges of a capture without holding the file in memory."""
    reader = open_capture(source)
    try:
        yield from reader
    finally:
        if isinstance(source, (str, os.PathLike)):
            reader._source.stream.close()


def read_capture(source: str | os.PathLike | BinaryIO) -> Capture:
    """Read a whole capture into memory."""
    reader = open_capture(source)
    try:
        exchanges = list(reader)
    finally:
        if isinstance(source, (str, os.PathLike)):
            reader._source.stream.close()
    return Capture(notes=reader.notes, meta=reader.meta, exchanges=exchanges, newline=reader.newline)


def read_capture_bytes(data: bytes, path: str | None = None) -> Capture:
    stream = io.BytesIO(data)
    stream.name = path  # type: ignore[attr-defined]
    return read_capture(stream)
