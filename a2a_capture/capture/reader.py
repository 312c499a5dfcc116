"""Read capture files into exchanges, one block at a time.

The reader walks the file through a sliding buffer, so memory follows the largest exchange,
not the file. Each body is framed first (by a `#@ …-body` length, by `Content-Length`, or by
the layout a documentation capture uses), then h11 parses the head and body. Anything that
breaks the format raises one `CaptureFormatError` naming the file, line and column.
"""

from __future__ import annotations

import base64
import binascii
import io
import os
import re
from collections.abc import Iterator
from typing import BinaryIO

from a2a_capture import shortcuts
from a2a_capture.capture import grpc, http11, syntax
from a2a_capture.capture.models import _CUT_BYTES, Capture, Exchange, ExchangeMeta, Request, Response, built, maker
from a2a_capture.errors import CaptureFormatError

_CHUNK = 1 << 20
_Framing = tuple[int, bool, int]  # size, base64, line of the pragma
_BASE64_LINE = 76
_META_KEYS = ("start", "end", "client", "server")
_META_KEY_BYTES = {key.encode(): key for key in _META_KEYS}
_LATE_FRAMES = re.compile(syntax._FRAME_START)
#: the pragmas, notes and blank lines between a block header and its request
_PREAMBLE_RUN = re.compile(rb"(?:#@[^\n]*+\n|# [^\n]*+\n|#\r?\n|\r?\n)*")
_BLANK_LINE = re.compile(rb"(?:\A|\n)\r?\n")
#: the pragmas a recorder writes first, in its order (line ends inside a value are left to the loop)
_USUAL_PRAGMAS = re.compile(rb"#@ start:([^\r\n]*+)\n#@ end:([^\r\n]*+)\n"
                            rb"#@ client:([^\r\n]*+)\n#@ server:([^\r\n]*+)\n")


class _Source:
    """A buffered byte source that knows the line number of its position."""

    chunk_size = _CHUNK

    def __init__(self, stream: BinaryIO) -> None:
        self.stream = stream
        self.buf = b""
        self.pos = 0
        self.line = 1
        self.eof = False
        self.dropped = 0  # bytes of the file before the buffer
        self.kept: int | None = None  # where in the file a ``tell`` asks the buffer to keep from
        #: where the stream stood when the reader began, if it can seek: a body longer than the buffer
        #: is then read straight from the file, in one piece (``take``), never copied through the buffer
        self.origin = _seekable_at(stream)

    def fill(self) -> bool:
        """Read one more chunk; False at the end of the file."""
        if self.eof:
            return False
        # (a mark before the buffer, where ``take`` read a body past it, keeps nothing: ``back_to`` seeks)
        cut = self.pos if self.kept is None else max(0, min(self.pos, self.kept - self.dropped))
        # past a chunk of kept bytes (a line longer than a chunk), as many again: each byte is copied
        # a bounded number of times, not once per chunk (a 200 MB line: 200 copies of 100 MB on average)
        kept = len(self.buf) - cut
        chunk = self.stream.read(kept if kept > _CHUNK else self.chunk_size)
        if not chunk:
            self.eof = True
            return False
        if cut:  # what was read is dropped as the chunk is added: one copy
            self.buf = b"".join((memoryview(self.buf)[cut:], chunk))
            self.dropped += cut
            self.pos -= cut
        else:
            self.buf += chunk
        return True

    def peek_line(self) -> bytes:
        """The next line with its line end; b"" at the end of the file."""
        while True:
            end = self.buf.find(b"\n", self.pos)
            if end >= 0:
                return self.buf[self.pos:end + 1]
            if not self.fill():
                return self.buf[self.pos:]

    def peek_past_blank_lines(self) -> tuple[bytes, int]:
        """The first line that is not blank, and how many bytes of blank lines precede it."""
        offset = 0
        while True:
            end = self.buf.find(b"\n", self.pos + offset)
            if end < 0:
                if self.fill():
                    continue
                return self.buf[self.pos + offset:], offset
            line = self.buf[self.pos + offset:end + 1]
            if line not in (b"\n", b"\r\n"):
                return line, offset
            offset += len(line)

    def next_line(self) -> bytes:
        line = self.peek_line()
        self.skip(len(line))
        return line

    def skip(self, size: int) -> None:
        self.line += self.buf.count(b"\n", self.pos, self.pos + size)
        self.pos += size

    def tell(self) -> tuple[int, int]:
        """Where the position is in the file, and its line, to come back to after reading on:
        the buffer keeps what follows until ``back_to`` or ``let_go``."""
        self.kept = self.dropped + self.pos
        return self.kept, self.line

    def back_to(self, mark: tuple[int, int]) -> None:
        if mark[0] < self.dropped:  # ``take`` read past the buffer from there: read again from the file
            self._restart_at(mark[0])
        self.pos, self.line = mark[0] - self.dropped, mark[1]
        self.kept = None

    def let_go(self) -> None:
        self.kept = None

    def take(self, size: int) -> bytes | None:
        """Exactly ``size`` bytes, or None if the file ends first."""
        if size - (len(self.buf) - self.pos) > self.chunk_size and self.origin is not None:
            return self._take_from_file(size)
        while len(self.buf) - self.pos < size:
            if not self.fill():
                return None
        data = self.buf[self.pos:self.pos + size]
        self.skip(size)
        return data

    def _take_from_file(self, size: int) -> bytes | None:
        """``take`` for more than the buffer holds: the bytes read from the file in one read, into the one
        object that keeps them (filling the buffer on would copy it once for each time it grew, and h11's
        body would copy it again); the buffer starts again after them. At the end of the file first, the
        buffer holds what is left of it, as ``take`` would leave it."""
        start = self.dropped + self.pos
        self._restart_at(start)
        data = self.stream.read(size)
        if len(data) < size:
            self.buf, self.eof = data, True
            return None
        self.line += data.count(b"\n")
        self.dropped += size
        return data

    def _restart_at(self, offset: int) -> None:
        """An empty buffer at ``offset`` in the file, the stream moved there."""
        self.stream.seek(self.origin + offset)
        self.buf, self.pos, self.dropped, self.eof = b"", 0, offset, False

    def search(self, pattern: re.Pattern[bytes]) -> re.Match[bytes] | None:
        """The first match from the position on, reading on until found or at the end."""
        offset = 0  # where to search from, relative to the position (the buffer may move)
        while True:
            match = pattern.search(self.buf, self.pos + offset)
            if match is not None:
                # the line after the match must be whole to be sure of what it is
                if self.eof or self.buf.find(b"\n", match.end()) >= 0:
                    return match
                offset = match.start() - self.pos
            else:
                offset = max(0, len(self.buf) - self.pos - 64)
                while offset and self.buf[self.pos + offset - 1] in b"\r\n":
                    offset -= 1  # a match starts at the first line end of a run (syntax._ends)
            if not self.fill():
                return pattern.search(self.buf, self.pos + offset)

    def take_run(self, pattern: re.Pattern[bytes]) -> bytes:
        """What ``pattern`` matches at the position, read on while the match may grow."""
        while True:
            match = pattern.match(self.buf, self.pos)
            # what stops the match must be a whole line, or the run may go on in the next chunk
            if self.buf.find(b"\n", match.end()) >= 0 or not self.fill():
                run = self.buf[self.pos:match.end()]
                self.skip(len(run))
                return run

    def take_head(self) -> bytes:
        """The lines up to the first blank one (consumed too), without that blank line."""
        while True:
            match = _BLANK_LINE.search(self.buf, self.pos)
            if match is not None:
                head = self.buf[self.pos:match.start()]
                self.skip(match.end() - self.pos)
                return head
            if not self.fill():
                head = self.buf[self.pos:]
                self.skip(len(head))
                return head


class _Preamble:
    """What stands between a block header and its request."""

    def __init__(self) -> None:
        self.meta: ExchangeMeta | None = None
        self.framing: dict[str, _Framing] = {}
        self.times: list[float | None] = []
        self.notes: list[str] = []


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
        self._source = _Source(stream)
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
        usual_start, responses = _USUAL_START.match, _KNOWN_RESPONSES
        usual = None  # the usual start of the block at the position, matched where the block before ended
        while source.pos < len(source.buf) or source.fill():
            buf = source.buf
            if usual is None:
                usual = usual_start(buf, source.pos)
            while usual is not None and usual.lastindex == _FOUR_PRAGMAS:  # no body length, no event times
                at = usual.end()
                if (stop := buf.find(b"\n\n", at)) <= at:
                    break  # the head goes on past the buffer
                if (found := _request_head(buf, at, stop)) is None:
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
                    lines += (request_body.count(b"\n") if _LF in request_body else 0) + 2
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
                exchange = _block_exchange(
                    number, title, webhook, [], request_known.request(request_values, request_body), response,
                    _meta({"start": start.decode(), "end": stamp.decode(), "client": client.decode(),
                           "server": server.decode(), "redacted": [], "extra": []}), source.line)
                # and the response head's with its blank line, its body's, the blank line after it
                source.line += lines + response_known.lines + 2 + (body.count(b"\n") if _LF in body else 0)
                source.pos, usual = end + 2, next_usual
                if response_known.shape.event_stream and webhook is None:
                    self._last_stream = exchange.number
                yield exchange
            # another block (or one that goes on past the buffer)
            self._next_start = usual
            while (exchange := self._common_block(source, source.buf, source.pos, source.eof)) is _MORE:
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
        preamble = self._read_block_preamble()
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

    def _common_block(self, source: _Source, buf: bytes, pos: int, eof: bool):
        """A block as a recorder writes it, read in a few steps: the exchange (``source`` moved past
        it), None (read it the general way) or ``_MORE`` (the buffer ends first: read on).

        A long recorded session is made of blocks of one shape: pragmas, a request, a response,
        bodies framed by a length (a `#@ …-body` pragma or a Content-Length that ends exactly)
        or absent, LF line ends, the next block right after. Those are read here from the buffer
        without consuming it until the block is whole; anything else (notes between the parts,
        gRPC, cut heads, unframed bodies, frames of an earlier stream, and anything the general
        reader would refuse) is left to the general reader, which gives the same exchange.
        """
        usual = self._next_start  # the match that ended the block before, if this is where it was made
        if usual is None or usual.pos != pos or usual.string is not buf:
            usual = _USUAL_START.match(buf, pos)
        if usual is not None:  # the header and the recorder's pragmas, in one match
            webhook, number, title, start, end, client, server, request_size, response_size, times = usual.groups()
            meta = _meta({"start": start.decode(), "end": end.decode(), "client": client.decode(),
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
                return None if eof else _MORE
            header = syntax.BLOCK_HEADER.match(buf, pos, end)
            if header is None or buf[end - 1] == _CR:
                return None
            at = _COMMON_PREAMBLE.match(buf, end + 1).end()
            try:
                preamble = self._preamble(buf[end + 1:at], source.line + 1)
            except CaptureFormatError:
                return None
            webhook, number, title = header.groups()
            times, notes, meta, framing = preamble.times, preamble.notes, preamble.meta, preamble.framing
            request_framing, response_framing = framing.get("request-body"), framing.get("response-body")
            lines = None  # the block's lines are counted at its end
        # the request: a head seen whole before or of a known shape, or another
        stop = buf.find(b"\n\n", at)
        if stop > at and (found := _request_head(buf, at, stop)) is not None:
            (known, values), at = found, stop + 2
            length = known.length if known.length_slot is None else int(values[known.length_slot])  # length_of
            end = -1 if length is None or request_framing is not None else at + length
            if end >= 0 and buf[end:end + 2] == b"\n\n":  # the usual body, as _body takes it, without a call
                body, next_at = buf[at:end], end + 2
            elif not isinstance(found := _body(buf, at, eof, length, request_framing, _unframed_request_body), tuple):
                return found
            else:
                body, next_at = found
            request_end, at = at + len(body), next_at
            request = known.request(values, body)
            if lines is not None and (length is not None or request_framing is not None):
                # a body framed by a length is followed by line ends alone (those up to the response too)
                # the body's line ends: most have none, which a search for the byte's value (memchr, no method
                # call) finds quicker than a count
                lines += known.lines + (body.count(b"\n") if _LF in body else 0)
            else:  # one without: blank lines with CRs may end it
                lines = None
        else:
            lines = None
            found = _common_message(buf, at, eof, b"request", request_framing, lambda stream: _unframed_request_body)
            if not isinstance(found, tuple):
                return found
            head, shape, values, body, at = found
            try:
                request = http11.parse_request(shape, values, head, body, _quiet_failure)
            except CaptureFormatError:
                return None
            _KNOWN_REQUESTS.learn(shape, head)
            if shape.sightings > 1:  # a shape that repeats (not one made unique by a per-request id)
                http11.seen_request(shape, values, head, request)
        size = len(buf)
        while at < size and buf[at] == _LF:  # blank lines before the response
            at += 1
        if at == size:
            return None if eof else _MORE
        # the response: a head of a known shape, or another
        if (found := _KNOWN_RESPONSES.match(buf, at)) is not None:
            if lines is not None:  # the line ends since the request's body, then the response's head
                lines += at - request_end + found[0].lines
            known, values, at = found
            length = known.length if known.length_slot is None else int(values[known.length_slot])  # length_of
            end = -1 if length is None or response_framing is not None else at + length
            if length is None and response_framing is None:
                lines = None  # blank lines with CRs may end it
            if end >= 0 and buf[end:end + 2] == b"\n\n":  # the usual body, as _body takes it, without a call
                body, next_at = buf[at:end], end + 2
            elif not isinstance(found := _body(buf, at, eof, length, response_framing, _UNFRAMED_RESPONSE_BODY[
                    known.shape.event_stream, self._last_stream is not None]), tuple):
                return found
            else:
                body, next_at = found
            if lines is not None:  # the body's line ends, then the line ends alone after it
                lines += (body.count(b"\n") if _LF in body else 0) + next_at - at - len(body)
            at = next_at
            shape = known.shape
        else:
            known = lines = None
            found = _common_message(buf, at, eof, b"response", response_framing,
                                    lambda stream: _UNFRAMED_RESPONSE_BODY[stream, self._last_stream is not None])
            if not isinstance(found, tuple):
                return found
            head, shape, values, body, at = found
            if not shape.status_line:
                return None
        self._next_start = _USUAL_START.match(buf, at)  # the next block, as the next call looks for it
        if self._next_start is None and (next_header := _common_next_block(buf, at, eof)) is not True:
            return next_header
        if known is not None:
            response = known.response(values, body, times or [])
            if response is None:
                return None
        else:
            try:
                response = http11.parse_response(shape, values, head, body, _quiet_failure, times or [])
            except CaptureFormatError:
                return None
            _KNOWN_RESPONSES.learn(shape, head)
        exchange = _block_exchange(number, title, webhook, notes, request, response, meta, source.line)
        # the lines of a block of known heads are worked out above: a count of them here would read
        # every byte, bodies included
        source.line += buf.count(b"\n", pos, at) if lines is None else lines
        source.pos = at
        if shape.event_stream and webhook is None:
            self._last_stream = exchange.number
        return exchange

    def _read_block_preamble(self) -> _Preamble:
        first_line = self._source.line
        return self._preamble(self._source.take_run(_PREAMBLE_RUN), first_line)

    def _preamble(self, run: bytes, first_line: int) -> _Preamble:
        """The pragmas and notes of a block's preamble (``run``, from line ``first_line``)."""
        usual = _USUAL_PRAGMAS.match(run)
        if usual is None:
            values: dict = {"start": None, "end": None, "client": None, "server": None, "redacted": [], "extra": []}
        else:  # what a recorder writes first, in one match
            start, end, client, server = usual.groups()
            values = {"start": _text(start).strip(), "end": _text(end).strip(), "client": _text(client).strip(),
                      "server": _text(server).strip(), "redacted": [], "extra": []}
            run, first_line = run[usual.end():], first_line + 4
        preamble = _Preamble()
        for offset, line in enumerate(run.splitlines()):
            if not line.startswith(b"#@"):
                if line:
                    preamble.notes.append(syntax.note_text(line))
                continue
            name, colon, rest = line[3:].partition(b":")
            key = _META_KEY_BYTES.get(name) if line[2:3] == b" " and colon else None
            if key is not None:  # the usual pragmas, without a regex
                values[key] = _text(rest).strip()
                continue
            pragma = syntax.PRAGMA.match(line)
            if pragma is None:
                raise self._error("a pragma line (#@ key: value)", line=first_line + offset, found=line)
            key, value = _text(pragma.group(1)), _text(pragma.group(2)).strip()
            if key in _META_KEYS:
                values[key] = value
            elif key == "redacted":
                values["redacted"].extend(v.strip() for v in value.split(",") if v.strip())
            elif key in ("request-body", "response-body"):
                preamble.framing[key] = self._body_framing(value, first_line + offset)
            elif key == "event-times":
                preamble.times = self._event_times(value, first_line + offset)
            else:
                values["extra"].append((key, value))
        preamble.meta = built(ExchangeMeta, values)
        return preamble

    def _body_framing(self, value: str, line: int) -> tuple[int, bool, int]:
        match = syntax.BODY_FRAMING.match(value)
        if match is None:
            raise self._error("a body length such as '812 bytes' or '96 bytes base64'",
                              line=line, found=value)
        return int(match.group(1)), bool(match.group(2)), line

    def _event_times(self, value: str, line: int) -> list[float | None]:
        times: list[float | None] = []
        for item in value.split():
            if item == "-":
                times.append(None)
                continue
            try:
                times.append(float(item))
            except ValueError:
                raise self._error("event times in seconds, such as '0.039 0.078'",
                                  line=line, found=item) from None
        return times

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

    def _read_request(self, framing: _Framing | None) -> Request:
        head, first_line = self._read_head("a request line (METHOD target HTTP/1.1)")
        shape, values = http11.shape(b"request", head)
        views: list[list[str]] = []
        if framing is None and shape.grpc:
            body, views = self._read_grpc_messages()
        else:
            body, _ = self._read_body(shape.length(values, head), framing, syntax.REQUEST_BODY_EMPTY,
                                      syntax.REQUEST_BODY_END)
        request = http11.parse_request(shape, values, head, body, self._head_failure(first_line))
        request.grpc_views = views
        return request

    def _read_response(self, preamble: _Preamble) -> tuple[Response, list[str]]:
        """The response, and the notes a stream shows after its last frame."""
        framing = preamble.framing.get("response-body")
        head, first_line = self._read_head("a status line (HTTP/1.1 200 OK)")
        shape, values = http11.shape(b"response", head)
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
            body, views = self._read_grpc_messages()
            exact = True
        else:
            body, exact = self._read_body(shape.length(values, head), framing, empty, end)
        notes: dict[int, list[str]] = {}
        trailing: list[str] = []
        if stream and not exact:
            body, notes, trailing = _split_notes(body)
        response = http11.parse_response(shape, values, head, body, self._head_failure(first_line))
        response.event_times = preamble.times
        response.event_notes = notes
        response.grpc_views = views
        if is_grpc:
            response.grpc_status_view, response.trailers = self._read_grpc_status()
        return response, trailing

    # -- gRPC bodies (see capture/grpc.py) ---------------------------------------------

    def _read_grpc_messages(self) -> tuple[bytes, list[list[str]]]:
        """Message paragraphs: an intro line, view lines, `grpc bytes` lines, a blank line."""
        source = self._source
        frames: list[bytes] = []
        views: list[list[str]] = []
        while True:
            line, blanks = source.peek_past_blank_lines()
            if not grpc.is_message_intro(line):
                return b"".join(frames), views
            source.skip(blanks)
            view = [_text(syntax.strip_eol(source.next_line()))]
            while (line := source.peek_line()) and not grpc.is_bytes_line(line):
                if syntax.is_blank(line):
                    raise self._error("'grpc bytes' lines with the message's bytes in base64", found="a blank line")
                view.append(_text(syntax.strip_eol(source.next_line())))
            first_line = source.line
            encoded = []
            while grpc.is_bytes_line(source.peek_line()):
                encoded.append(syntax.strip_eol(source.next_line()))
            if not encoded:
                raise self._error("'grpc bytes' lines with the message's bytes in base64", found="the end of the file")
            try:
                frames.append(grpc.decode_bytes_lines(encoded))
            except ValueError as error:
                raise self._error(str(error), line=first_line, found="characters that are not base64") from None
            self._expect_blank()
            views.append(view)

    def _read_grpc_status(self) -> tuple[str | None, list[tuple[str, str]]]:
        """The `grpc status` paragraph, if there is one: its intro line and the trailers."""
        source = self._source
        line, blanks = source.peek_past_blank_lines()
        if not grpc.is_status_intro(line):
            return None, []
        source.skip(blanks)
        intro = _text(syntax.strip_eol(source.next_line()))
        trailers: list[tuple[str, str]] = []
        while (line := source.peek_line()) and not syntax.is_blank(line):
            text = syntax.strip_eol(line)
            if not syntax.HEADER_LINE.match(text):
                raise self._error("a trailer line (name: value) or a blank line", found=text)
            name, _, value = text.partition(b":")
            trailers.append((_text(name), _text(value.strip())))
            source.skip(len(line))
        self._expect_blank()
        return intro, trailers

    def _read_body(self, length: int | None, framing: _Framing | None, empty: re.Pattern,
                   end: re.Pattern) -> tuple[bytes, bool]:
        """The body bytes, and whether a length (``#@`` framing, else Content-Length) framed them exactly."""
        source = self._source
        if framing is not None:
            return self._read_framed(framing), True
        if length is not None:
            mark = source.tell()
            body = source.take(length)
            if body is not None and self._at_body_end():
                source.let_go()
                return body, True
            source.back_to(mark)  # a documentation capture with a stale length
        line, blanks = source.peek_past_blank_lines()
        if line == b"" or empty.match(line):
            source.skip(blanks)  # blank lines before the next part are layout, not body
            return b"", False
        return self._read_until(end), False

    def _read_until(self, end: re.Pattern) -> bytes:
        """Bytes up to the blank line(s) before what ``end`` looks for, or to the end of file."""
        source = self._source
        match = source.search(end)
        if match is None:
            region = syntax.without_trailing_line_ends(source.buf[source.pos:])
            source.skip(len(source.buf) - source.pos)
        else:
            region = source.buf[source.pos:match.start()]
            source.skip(match.end() - source.pos)
        if self.newline == "\r\n" and region.endswith(b"\r"):
            region = region[:-1]
        return region

    def _read_framed(self, framing: _Framing) -> bytes:
        size, encoded, pragma_line = framing
        source = self._source
        if size == 0:
            return b""
        start_line = source.line
        if encoded:
            text_size = 4 * ((size + 2) // 3)
            lines = []
            for _ in range((text_size + _BASE64_LINE - 1) // _BASE64_LINE):
                line = source.next_line()
                if line == b"":
                    break
                lines.append(syntax.strip_eol(line))
            try:
                body = base64.b64decode(b"".join(lines), validate=True)
            except binascii.Error:
                raise self._error("base64 lines for the body", line=start_line,
                                  found="characters that are not base64") from None
            if len(body) != size:
                raise self._error(f"{size} bytes of base64 body (line {pragma_line})",
                                  line=start_line, found=f"{len(body)} bytes")
            self._expect_blank()
            return body
        body = source.take(size)
        if body is None:
            available = len(source.buf) - source.pos
            raise self._error(f"{size} bytes of body (line {pragma_line})", line=start_line,
                              found=f"the end of the file after {available} bytes")
        if not self._at_body_end():
            raise self._error(f"a blank line after the {size}-byte body (line {pragma_line})",
                              found=syntax.strip_eol(source.peek_line()))
        return body

    def _at_body_end(self) -> bool:
        """After an exactly framed body: a line end, then a blank line or the end of file."""
        source = self._source
        line = source.peek_line()
        if line == b"":
            return True
        if not syntax.is_blank(line):
            return False
        source.skip(len(line))
        nxt = source.peek_line()
        if nxt == b"":
            return True
        if syntax.is_blank(nxt):
            source.skip(len(nxt))
            return True
        return False

    def _expect_blank(self) -> None:
        line = self._source.peek_line()
        if line and not syntax.is_blank(line):
            raise self._error("a blank line after the body", found=syntax.strip_eol(line))
        self._source.skip(len(line))

    # -- after the response ------------------------------------------------------------

    def _read_tail(self, exchange: Exchange) -> None:
        """Notes, and frames of an earlier stream, up to the next block."""
        source = self._source
        line = source.peek_line()
        if line == b"" or syntax.BLOCK_HEADER.match(syntax.strip_eol(line)):
            return
        if not (_LATE_FRAMES.match(line) or syntax.is_note(line)):
            raise self._error("a # note, SSE frames or the next block (### N · title)",
                              found=syntax.strip_eol(line))
        first_line = source.line
        region = self._read_until(syntax.STREAM_BODY_END)
        frames, notes, after = _split_notes(region)
        if not frames.strip():
            exchange.trailing_notes += [note for group in notes.values() for note in group] + after
            return
        self._check_frames(region, first_line)
        if self._last_stream is None:
            raise self._error("the next block: these SSE frames follow a response, but no "
                              "earlier exchange is an event stream", line=first_line)
        exchange.late_stream = self._last_stream
        exchange.late_body = frames
        exchange.late_event_notes = notes
        exchange.trailing_notes += after

    def _check_frames(self, region: bytes, first_line: int) -> None:
        for offset, line in enumerate(region.split(b"\n")):
            line = line.rstrip(b"\r")
            if line and not (syntax.is_note(line) or _LATE_FRAMES.match(line)):
                raise self._error("SSE frames (data: …), # notes or the next block",
                                  line=first_line + offset, found=line)

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


def _split_notes(region: bytes) -> tuple[bytes, dict[int, list[str]], list[str]]:
    """Take `# ` paragraphs out of a run of SSE frames.

    Returns the frames' bytes, the notes by the index of the frame they precede, and the
    notes after the last frame.
    """
    if b"#" not in region:
        return region, {}, []
    kept: list[bytes] = []
    notes: dict[int, list[str]] = {}
    pending: list[str] = []
    frames = 0
    in_frame = False
    skipping_blank = False
    for line in io.BytesIO(region):
        if syntax.is_blank(line):
            if in_frame:
                frames += 1
                in_frame = False
                kept.append(line)
            elif not skipping_blank:
                kept.append(line)
            skipping_blank = False
            continue
        if not in_frame and syntax.is_note(line):
            pending.append(syntax.note_text(line))
            skipping_blank = True
            continue
        if pending:
            notes.setdefault(frames, []).extend(pending)
            pending = []
        in_frame = True
        skipping_blank = False
        kept.append(line)
    body = b"".join(kept)
    if pending:
        body = syntax.without_trailing_line_ends(body)
    return body, notes, pending


_MORE = object()  # the block goes on past the buffer: read on and look again
#: the last group of _USUAL_START a block with the recorder's four pragmas alone matches
_FOUR_PRAGMAS = 7
_CR = ord("\r")
_LF = ord("\n")
#: a block preamble without blank lines or CRLF
_COMMON_PREAMBLE = re.compile(rb"(?:#@[^\n]*+\n|# [^\n]*+\n|#\n)*")
#: a block header (as syntax.BLOCK_HEADER, without CR) and the pragmas a recorder writes, in its
#: order: the four values as the general reader strips them, then a body length or two and the
#: event times, each as the general reader reads it; nothing else before the request line
_USUAL_START = re.compile(
    rb"### (?:(webhook) |)(\d{1,100})(?: \xc2\xb7(?: ([^\r\n]*+)|)|)\n#@ start: ([!-~]*)\n#@ end: ([!-~]*)\n"
    rb"#@ client: ([!-~]*)\n#@ server: ([!-~]*)\n"
    rb"(?:#@ request-body: ([0-9]{1,15}) bytes?\n|)(?:#@ response-body: ([0-9]{1,15}) bytes?\n|)"
    rb"(?:#@ event-times: ((?:[0-9]+\.[0-9]+|-)(?: (?:[0-9]+\.[0-9]+|-))*)\n|)(?![#\n])")
#: the quick way's models, each made from a literal of its fields
_meta, _exchange = maker(ExchangeMeta), maker(Exchange)
#: an Exchange's fields, in its order, as the quick way starts them: those it does not store are right
_EXCHANGE_FIELDS = {"number": 0, "title": "", "webhook": False, "notes": None, "request": None, "response_notes": None,
                    "response": None, "late_stream": None, "late_body": b"", "late_event_notes": None,
                    "trailing_notes": None, "meta": None, "line": None, "flow": None}
_KNOWN_REQUESTS, _KNOWN_RESPONSES = http11.known_heads[b"request"], http11.known_heads[b"response"]


def _request_head(buf: bytes, at: int, stop: int) -> tuple[http11.Known, tuple[bytes, ...]] | None:
    """The known head and volatile values of the request head at ``at`` (up to ``stop``, its first blank line:
    its body starts after it), as both quick ways read it: a head seen whole before (a client repeats its
    calls) or one of a known shape; None for any other."""
    head = buf[at:stop]
    if (seen := http11.seen_requests.get(head)) is not None:
        known, values = seen
        if values:  # a template's head, come again: from now on its headers and length are made
            known, values = known.whole(head, values), ()
            http11.seen_head(head, known, values)
        return known, values
    if (found := _KNOWN_REQUESTS.match(buf, at)) is None:  # a known head ends at its first blank line
        return None
    known, values, _ = found
    if known.repeats:  # the call may come again: then its head is found whole
        http11.seen_head(head, known, values)
    return known, values


def _block_exchange(number: bytes, title: bytes | None, webhook: bytes | None, notes: list[str], request: Request,
                    response: Response, meta: ExchangeMeta, line: int) -> Exchange:
    """The Exchange of a block read the quick way (either of them), from its header's groups: a copy of
    every field's (with the three that are always the same) and a store for each of the rest, quicker
    than a literal of 14 (``_exchange`` is given every field)."""
    fields = _EXCHANGE_FIELDS.copy()
    fields["number"] = int(number)
    fields["title"] = title.decode("utf-8", "surrogateescape") if title else ""
    fields["webhook"] = webhook is not None
    fields["notes"] = notes
    fields["request"] = request
    fields["response_notes"] = []
    fields["response"] = response
    fields["late_event_notes"] = {}
    fields["trailing_notes"] = []
    fields["meta"] = meta
    fields["line"] = line
    return _exchange(fields)


def _quiet_failure(expected: str, offset: int, found: str | None) -> CaptureFormatError:
    """A common block's head that fails is read again by the general reader, which says where."""
    return CaptureFormatError(expected, found=found)


def _common_message(buf: bytes, at: int, eof: bool, kind: bytes, framing: _Framing | None, unframed):
    """A ``kind`` (b"request", b"response") head at ``at`` and its body, framed by ``framing`` or
    its Content-Length, else read by ``unframed(is an event stream)``'s reader: (head, its shape and
    volatile values, body, where what follows starts), None or ``_MORE``.

    The head is a plain one (LF, no cut, not empty) or None; a framed body ends with a line end
    then a blank line or the end of the file, as the general reader's ``_at_body_end`` takes it.
    """
    stop = buf.find(b"\n\n", at)
    if stop < 0:
        return None if eof else _MORE
    head = buf[at:stop]
    if stop == at or b"\r" in head or (b"\xe2" in head and _CUT_BYTES in head):  # `…` starts with E2
        return None
    shape, values = http11.shape(kind, head)
    if shape.grpc:
        return None
    found = _body(buf, stop + 2, eof, None if framing else shape.length(values, head), framing,
                  unframed(shape.event_stream))
    return (head, shape, values, *found) if isinstance(found, tuple) else found


def _body(buf: bytes, at: int, eof: bool, length: int | None, framing: _Framing | None, unframed):
    """The body at ``at``, framed by ``framing`` or else ``length`` (a Content-Length), else read by
    ``unframed``: (body, where what follows starts), None or ``_MORE``. A framed body ends with a
    line end then a blank line or the end of the file, as the general reader's ``_at_body_end``
    takes it."""
    if framing is not None:
        length, encoded, _ = framing
        if encoded or length == 0:  # left to the general reader
            return None
    elif length is None:
        return unframed(buf, at, eof)
    end = at + length
    if buf[end:end + 2] == b"\n\n":
        return buf[at:end], end + 2
    size = len(buf)
    if end - size > _CHUNK and not eof:
        return None  # a body far past the buffer: the general reader takes it from the file in one piece
    for _ in range(2):  # the body's line end, then a blank line, or the end of the file
        if end >= size:
            if not eof:
                return _MORE
            return (buf[at:at + length], end) if end == size else None
        if buf[end] != _LF:
            return None
        end += 1
    return buf[at:at + length], end


def _unframed(empty: re.Pattern[bytes], end: re.Pattern[bytes], *, stream: bool = False,
              to_the_end: bool = False):
    """A reader of a body without a length, as the general reader's ``_read_body`` finds it: none
    when what ``empty`` looks for (the next part) follows the blank lines, else everything up to
    the blank line before what ``end`` looks for (a documentation capture's bodies end where the
    next part starts). It gives (body, where what follows it starts), None (left to the general
    reader) or ``_MORE``. ``to_the_end``: with no next part, the body runs to the end of the file,
    its last line ends left out; ``stream``: an event stream's frames, left to the general reader
    when they hold `#` notes (it takes them out)."""
    def read(buf: bytes, at: int, eof: bool):
        start = at
        while buf.startswith(b"\n", start):
            start += 1
        if start == len(buf) and eof:
            return b"", start
        if buf.startswith(b"\r", start):
            return None  # a blank line with a CR: left to the general reader
        if buf.find(b"\n", start) < 0:
            return None if eof else _MORE
        if empty.match(buf, start):
            return b"", start
        found = end.search(buf, at)
        if found is not None and (eof or buf.find(b"\n", found.end()) >= 0):
            body, next_at = buf[at:found.start()], found.end()
        elif not eof:  # the body runs past the buffer, or the line after its end is not whole: read on;
            # a body longer than a chunk is left to the general reader, which searches on from where it got
            return _MORE if len(buf) - at < _CHUNK else None
        elif not to_the_end:
            return None
        else:
            body, next_at = syntax.without_trailing_line_ends(buf[at:]), len(buf)
        if stream and b"#" in body:
            return None
        return body, next_at
    return read


_unframed_request_body = _unframed(syntax.REQUEST_BODY_EMPTY, syntax.REQUEST_BODY_END)
#: a response body without a length, by what may follow it: the next block or a note; frames of an
#: earlier stream too once there is one; an event stream's frames end at the next block alone
_UNFRAMED_RESPONSE_BODY = {
    (False, False): _unframed(syntax.RESPONSE_BODY_EMPTY, syntax.RESPONSE_BODY_END, to_the_end=True),
    (False, True): _unframed(syntax.RESPONSE_BODY_EMPTY_BEFORE_FRAMES, syntax.RESPONSE_BODY_END_BEFORE_FRAMES,
                             to_the_end=True),
    (True, False): _unframed(syntax.STREAM_BODY_EMPTY, syntax.STREAM_BODY_END, stream=True, to_the_end=True),
    (True, True): _unframed(syntax.STREAM_BODY_EMPTY, syntax.STREAM_BODY_END, stream=True, to_the_end=True),
}


def _common_next_block(buf: bytes, at: int, eof: bool):
    """True when the next block (or the end of the file) starts at ``at``; else None or ``_MORE``."""
    if at >= len(buf):
        return True if eof else _MORE
    end = buf.find(b"\n", at)
    if end < 0:
        if not eof:
            return _MORE
        end = len(buf)
    if syntax.BLOCK_HEADER.match(buf, at, end) is None or buf[end - 1] == _CR:
        return None
    return True


def _text(value: bytes) -> str:
    return value.decode("utf-8", "surrogateescape")


def _seekable_at(stream: BinaryIO) -> int | None:
    """Where ``stream`` stands, if it can seek (a file, bytes in memory); None for a pipe."""
    try:
        return stream.tell() if stream.seekable() else None
    except (AttributeError, OSError, ValueError):
        return None


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
    return CaptureReader(source, getattr(source, "name", None))


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
