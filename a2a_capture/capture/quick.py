"""The quick way through the blocks a recorder writes: the tables and steps ``CaptureReader`` reads them by.

A long recorded session is made of blocks of one shape (the recorder's pragmas, a request and a
response of heads seen before, bodies framed by a length, LF line ends), so most blocks are read
straight from the buffer in a few steps, nothing consumed until the block is whole; anything else is
left to the general reader, which gives the same exchange (tests/test_reader_common_block.py holds
them to it). ``A2A_CAPTURE_NO_SHORTCUTS=1`` turns this way off.
"""

from __future__ import annotations

import re

from a2a_capture.capture import http11, syntax
from a2a_capture.capture.models import _CUT_BYTES, Exchange, ExchangeMeta, Request, Response, maker
from a2a_capture.capture.preamble import Framing
from a2a_capture.capture.source import CHUNK
from a2a_capture.errors import CaptureFormatError

MORE = object()  # the block goes on past the buffer: read on and look again
#: the last group of USUAL_START a block with the recorder's four pragmas alone matches
FOUR_PRAGMAS = 7
CR = ord("\r")
LF = ord("\n")
#: a block preamble without blank lines or CRLF
COMMON_PREAMBLE = re.compile(rb"(?:#@[^\n]*+\n|# [^\n]*+\n|#\n)*")
#: a block header (as syntax.BLOCK_HEADER, without CR) and the pragmas a recorder writes, in its
#: order: the four values as the general reader strips them, then a body length or two and the
#: event times, each as the general reader reads it; nothing else before the request line
USUAL_START = re.compile(
    rb"### (?:(webhook) |)(\d{1,100})(?: \xc2\xb7(?: ([^\r\n]*+)|)|)\n#@ start: ([!-~]*)\n#@ end: ([!-~]*)\n"
    rb"#@ client: ([!-~]*)\n#@ server: ([!-~]*)\n"
    rb"(?:#@ request-body: ([0-9]{1,15}) bytes?\n|)(?:#@ response-body: ([0-9]{1,15}) bytes?\n|)"
    rb"(?:#@ event-times: ((?:[0-9]+\.[0-9]+|-)(?: (?:[0-9]+\.[0-9]+|-))*)\n|)(?![#\n])")
#: the quick way's models, each made from a literal of its fields
make_meta, _exchange = maker(ExchangeMeta), maker(Exchange)
#: an Exchange's fields, in its order, as the quick way starts them: those it does not store are right
_EXCHANGE_FIELDS = {"number": 0, "title": "", "webhook": False, "notes": None, "request": None, "response_notes": None,
                    "response": None, "late_stream": None, "late_body": b"", "late_event_notes": None,
                    "trailing_notes": None, "meta": None, "line": None, "flow": None}


def request_head(heads: http11.Heads, buf: bytes, at: int, stop: int) -> tuple[http11.Known, tuple[bytes, ...]] | None:
    """The known head and volatile values of the request head at ``at`` (up to ``stop``, its first blank line:
    its body starts after it), as both quick ways read it: a head seen whole before (a client repeats its
    calls) or one of a known shape; None for any other."""
    head = buf[at:stop]
    if (seen := heads.seen.get(head)) is not None:
        known, values = seen
        if values:  # a template's head, come again: from now on its headers and length are made
            known, values = known.whole(head, values), ()
            heads.seen_head(head, known, values)
        return known, values
    if (found := heads.requests.match(buf, at)) is None:  # a known head ends at its first blank line
        return None
    known, values, _ = found
    if known.repeats:  # the call may come again: then its head is found whole
        heads.seen_head(head, known, values)
    return known, values


def block_exchange(number: bytes, title: bytes | None, webhook: bytes | None, notes: list[str], request: Request,
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


def quiet_failure(expected: str, offset: int, found: str | None) -> CaptureFormatError:
    """A common block's head that fails is read again by the general reader, which says where."""
    return CaptureFormatError(expected, found=found)


def common_message(heads: http11.Heads, buf: bytes, at: int, eof: bool, kind: bytes, framing: Framing | None, unframed):
    """A ``kind`` (b"request", b"response") head at ``at`` and its body, framed by ``framing`` or
    its Content-Length, else read by ``unframed(is an event stream)``'s reader: (head, its shape and
    volatile values, body, where what follows starts), None or ``MORE``.

    The head is a plain one (LF, no cut, not empty) or None; a framed body ends with a line end
    then a blank line or the end of the file, as the general reader's ``_at_body_end`` takes it.
    """
    stop = buf.find(b"\n\n", at)
    if stop < 0:
        return None if eof else MORE
    head = buf[at:stop]
    if stop == at or b"\r" in head or (b"\xe2" in head and _CUT_BYTES in head):  # `…` starts with E2
        return None
    shape, values = heads.shape(kind, head)
    if shape.grpc:
        return None
    found = body_at(buf, stop + 2, eof, None if framing else shape.length(values, head), framing,
                  unframed(shape.event_stream))
    return (head, shape, values, *found) if isinstance(found, tuple) else found


def body_at(buf: bytes, at: int, eof: bool, length: int | None, framing: Framing | None, unframed):
    """The body at ``at``, framed by ``framing`` or else ``length`` (a Content-Length), else read by
    ``unframed``: (body, where what follows starts), None or ``MORE``. A framed body ends with a
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
    if end - size > CHUNK and not eof:
        return None  # a body far past the buffer: the general reader takes it from the file in one piece
    for _ in range(2):  # the body's line end, then a blank line, or the end of the file
        if end >= size:
            if not eof:
                return MORE
            return (buf[at:at + length], end) if end == size else None
        if buf[end] != LF:
            return None
        end += 1
    return buf[at:at + length], end


def _unframed(empty: re.Pattern[bytes], end: re.Pattern[bytes], *, stream: bool = False,
              to_the_end: bool = False):
    """A reader of a body without a length, as the general reader's ``_read_body`` finds it: none
    when what ``empty`` looks for (the next part) follows the blank lines, else everything up to
    the blank line before what ``end`` looks for (a documentation capture's bodies end where the
    next part starts). It gives (body, where what follows it starts), None (left to the general
    reader) or ``MORE``. ``to_the_end``: with no next part, the body runs to the end of the file,
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
            return None if eof else MORE
        if empty.match(buf, start):
            return b"", start
        found = end.search(buf, at)
        if found is not None and (eof or buf.find(b"\n", found.end()) >= 0):
            body, next_at = buf[at:found.start()], found.end()
        elif not eof:  # the body runs past the buffer, or the line after its end is not whole: read on;
            # a body longer than a chunk is left to the general reader, which searches on from where it got
            return MORE if len(buf) - at < CHUNK else None
        elif not to_the_end:
            return None
        else:
            body, next_at = syntax.without_trailing_line_ends(buf[at:]), len(buf)
        if stream and b"#" in body:
            return None
        return body, next_at
    return read


UNFRAMED_REQUEST_BODY = _unframed(syntax.REQUEST_BODY_EMPTY, syntax.REQUEST_BODY_END)
#: a response body without a length, by what may follow it: the next block or a note; frames of an
#: earlier stream too once there is one; an event stream's frames end at the next block alone
UNFRAMED_RESPONSE_BODY = {
    (False, False): _unframed(syntax.RESPONSE_BODY_EMPTY, syntax.RESPONSE_BODY_END, to_the_end=True),
    (False, True): _unframed(syntax.RESPONSE_BODY_EMPTY_BEFORE_FRAMES, syntax.RESPONSE_BODY_END_BEFORE_FRAMES,
                             to_the_end=True),
    (True, False): _unframed(syntax.STREAM_BODY_EMPTY, syntax.STREAM_BODY_END, stream=True, to_the_end=True),
    (True, True): _unframed(syntax.STREAM_BODY_EMPTY, syntax.STREAM_BODY_END, stream=True, to_the_end=True),
}


def next_block_at(buf: bytes, at: int, eof: bool):
    """True when the next block (or the end of the file) starts at ``at``; else None or ``MORE``."""
    if at >= len(buf):
        return True if eof else MORE
    end = buf.find(b"\n", at)
    if end < 0:
        if not eof:
            return MORE
        end = len(buf)
    if syntax.BLOCK_HEADER.match(buf, at, end) is None or buf[end - 1] == CR:
        return None
    return True
