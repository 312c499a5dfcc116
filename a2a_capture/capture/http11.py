"""Turn a written request or response (head lines and body bytes) into model objects.

h11 does the HTTP parsing. The capture file has already framed the body (by length or by
the layout of the file), so h11 is handed a consistent head: the head as written with
its framing headers replaced by the true `Content-Length` (the body it frames is not given:
h11 would only count it). Documentation captures may cut a head with `…`; those lines are set
aside and the exchange marked as cut.

A recorded session repeats the same heads over and over (one client, a few agents), so
the result of parsing a head is remembered by its bytes in the reader's ``Heads``: h11 sees
every distinct head once.
"""

from __future__ import annotations

import re
from collections.abc import Callable

import h11

from a2a_capture.capture import grpc
from a2a_capture.capture.models import CUT_MARK, Request, Response, built, maker
from a2a_capture.capture.syntax import HEADER_LINE, REQUEST_LINE, STATUS_LINE

_CUT = CUT_MARK.encode()
_PLACEHOLDER = b"_a2a-capture-cut_"
_FRAMING = (b"content-length", b"transfer-encoding")
#: headers whose value changes from one message to the next while h11 only checks it as a value
#: (it acts on framing, Host, Connection, Expect and Upgrade, never on these): `Date`, and the ids
#: tracing and request-id middleware put on every call. A head's shape leaves their values out, so a
#: client that sends a fresh `traceparent` with each call still repeats its heads.
PER_MESSAGE = (b"date", b"traceparent", b"tracestate", b"baggage", b"x-request-id", b"x-correlation-id",
               b"request-id", b"x-amzn-trace-id", b"x-cloud-trace-context", b"sentry-trace", b"b3",
               b"x-b3-traceid", b"x-b3-spanid", b"x-b3-parentspanid", b"x-b3-sampled", b"idempotency-key")
_VOLATILE = (*_FRAMING, *PER_MESSAGE)
_NO_BODY_STATUS = (204, 304)
_CACHE_SIZE = 4096

#: (what was expected, line offset within the head, what was found) -> exception
Fail = Callable[[str, int, str | None], Exception]

#: a header line after the first whose name is volatile: (line end and name, value)
_VOLATILE_LINE = re.compile(rb"(\n(?:%s):)([^\n]*)" % b"|".join(map(re.escape, _VOLATILE)), re.IGNORECASE)


class Shape:
    """What every head of one shape shares: the facts that frame its body, known before it is
    parsed, and (once h11 has parsed one) its parse.

    A head's shape is the head with the values of its volatile headers taken out: framing
    headers are the file's business, and `Date` changes every second; the rest of a recorded
    session's heads repeat, so their facts and parse are worked out once.
    """

    __slots__ = ("chunked", "content_type", "event_stream", "grpc", "lengths", "odd", "parsed", "sightings",
                 "status_line")

    def __init__(self, head: bytes) -> None:
        lines = head.split(b"\n")
        self.status_line = STATUS_LINE.match(lines[0]) is not None  # the start line is part of the shape
        self.content_type = head_facts(lines)[0]  # content types are never volatile
        self.chunked = self.odd = False
        lengths: list[int] = []
        slot = 0
        for line in lines[1:]:
            name, colon, _ = line.partition(b":")
            volatile = bool(colon) and name.lower() in _VOLATILE
            if line[:1] in b"CcTt \t":  # as head_facts reads names
                known = name.strip().lower()
                if known == b"transfer-encoding":
                    self.chunked = True
                elif known == b"content-length" and volatile:
                    lengths.append(slot)
                elif known == b"content-length":  # spaces around the name: h11 refuses the head later
                    self.odd = True
            slot += volatile
        self.lengths = tuple(lengths)
        self.event_stream = is_event_stream(self.content_type)
        self.grpc = self.content_type is not None and grpc.is_grpc_type(self.content_type)
        self.parsed: tuple | None = None
        self.sightings = 0  # heads of this shape parsed by a reader's quick way (KnownHeads.learn)

    def length(self, values: list[bytes], head: bytes) -> int | None:
        """The Content-Length that frames the body: None when there is none, or when a
        Transfer-Encoding says the length is not the framing."""
        if self.odd:
            return head_facts(head.split(b"\n"))[1]
        if self.chunked:
            return None
        length = None
        for slot in self.lengths:
            value = values[slot]
            if value.isdigit() and len(value) <= 15:
                length = int(value)
        return length


#: a volatile value as a known head's template takes it: printable ASCII (so decoded as it is), no
#: white space at either end (the reader strips it), no control byte (nothing h11 or a HAR refuses):
#: any other value leaves its head to the general way, which reads (or refuses) it. Each is an atomic
#: group: a value ends its line, and only its longest match can be followed by the line end, so a
#: branch that fails after it fails at once instead of trying every shorter one
_TEMPLATE_VALUE = rb"(?>[ \t]*([!-~](?:[ !-~]*[!-~]|))[ \t]*)"
#: a Content-Length that frames the body, as ``Shape.length`` reads it
_TEMPLATE_LENGTH = rb"(?>[ \t]*([0-9]{1,15})[ \t]*)"
_TEMPLATES = 32


class Known:
    """A head parsed before, ready to make each message that has it without parsing or checking
    it again: one whole head (its headers and the body's ``length`` known), or one shape of head
    (a template's: each message's volatile values are the groups that matched, put in the
    headers at ``slots``, and the one at ``length_slot`` is the Content-Length that frames the
    body, if any). ``lines``: the line ends of the head and the blank line after it, the same for
    every head it knows (no volatile value holds one). ``repeats``: a message's only value of its own
    is the body's length (if any), so a client that makes the same call again repeats the head whole.
    """

    __slots__ = ("bodiless", "events", "fields", "headers", "length", "length_slot", "lines", "repeats", "shape",
                 "slots", "start")

    def __init__(self, shape: Shape, head: bytes, headers: tuple, length: int | None = None,
                 length_slot: int | None = None, template: bool = False) -> None:
        self.shape, self.lines = shape, head.count(b"\n") + 2
        self.start, _, volatile, self.events = shape.parsed  # start: (method or status, target or reason, ...)
        self.slots = tuple((index, name) for index, name, _, _ in volatile) if template else ()
        self.headers, self.length, self.length_slot = headers, length, length_slot
        self.repeats = len(self.slots) == (length_slot is not None)
        self.fields: dict | None = None  # a response's fields that are the same for every message with this head
        self.bodiless = False  # a response's status has no body (set with its fields)

    def length_of(self, values: tuple[bytes, ...]) -> int | None:
        """The Content-Length that frames the body of a message with this head (``Shape.length``)."""
        return self.length if self.length_slot is None else int(values[self.length_slot])

    def whole(self, head: bytes, values: tuple[bytes, ...]) -> Known:
        """The known head of ``head`` alone, a head this template matched with ``values``: its headers and
        length made once, for a client that makes the same call again (``Heads.seen``)."""
        return Known(self.shape, head, tuple(self.headers_with(values)), self.length_of(values))

    def headers_with(self, values: tuple[bytes, ...]) -> list[tuple[str, str]]:
        """The head's headers with a message's own volatile values put in their slots."""
        headers = list(self.headers)
        if values:  # none for a whole head
            for (index, name), value in zip(self.slots, values):  # noqa: B905 - as many as the template has
                headers[index] = (name, value.decode())
        return headers

    def request(self, values: tuple[bytes, ...], body: bytes) -> Request:
        """What ``parse_request`` gives for a message with this head."""
        method, target, version, _ = self.start
        headers = self.headers_with(values) if values else list(self.headers)  # a whole head's, without a call
        return _request({"headers": headers, "stored": body, "http_version": version, "head_cuts": [], "grpc_views": [],
                         "method": method, "target": target})

    def response(self, values: tuple[bytes, ...], body: bytes, event_times: list[float | None]) -> Response | None:
        """What ``parse_response`` gives for a message with this head; None where it refuses the body."""
        fields = self.fields
        if fields is None:  # the fields every message with this head has, in Response's order, made once
            status, reason, version, _ = self.start
            fields = self.fields = {
                "headers": None, "stored": b"", "http_version": version, "head_cuts": None, "grpc_views": None,
                "status": status, "reason": reason, "event_times": None, "event_notes": None, "trailers": None,
                "grpc_status_view": None}
            if not self.events:
                fields["events"] = None  # [] as parse_response: a list of each message's own
            self.bodiless = status < 200 or status in _NO_BODY_STATUS  # parse_response refuses a body
        if body and self.bodiless:
            return None
        headers = self.headers_with(values)
        fields = fields.copy()  # and each message's own values stored: quicker than a literal of them all
        fields["headers"] = headers
        fields["stored"] = body
        fields["head_cuts"] = []
        fields["grpc_views"] = []
        fields["event_times"] = event_times
        fields["event_notes"] = {}
        fields["trailers"] = []
        if not self.events:
            fields["events"] = []
        return _response(fields)


#: a known head's messages, each made from a literal of its fields
_request, _response = maker(Request), maker(Response)


#: a head longer than this is never made a branch: a branch's expression is compiled from the head's text,
#: so a 20 MB header value would take a minute to compile (and a normal head is a few hundred bytes)
_TEMPLATE_HEAD = 1 << 14
_NOTHING = re.compile(b"(?!)")


class KnownHeads:
    """The shapes of one kind of head that a session repeats, as one expression: it finds in
    one step which of them the head in the buffer has, and that head's volatile values.

    Each shape is a branch: its head with each volatile value replaced by a group that takes
    only plain values (`_TEMPLATE_VALUE`, `_TEMPLATE_LENGTH`), then the blank line after the
    head. A head that matches a branch has that branch's shape (its text and names are the
    shape's) and values that need no check, so it is neither split, looked up nor checked
    again. Only shapes seen twice are taken (a head with a per-request id never repeats), at
    most ``_TEMPLATES``.
    """

    def __init__(self) -> None:
        self._branches: list[bytes] = []
        #: the branches, one expression (none at first: it matches nothing), and each branch's last group -> its
        #: head and where its values are in groups() (a reader may read them without ``match``'s call)
        self.pattern = _NOTHING
        self.found: dict[int, tuple[Known, slice]] = {}
        self._groups = 0

    def match(self, buf: bytes, at: int) -> tuple[Known, tuple[bytes, ...], int] | None:
        """(its head, its volatile values, where the body starts) for a known head at ``at``, or None."""
        found = self.pattern.match(buf, at)
        if found is None:
            return None
        known, values = self.found[found.lastindex]  # the branch's (empty) last group closes last
        return known, found.groups()[values], found.end()  # those of the other branches are None

    def learn(self, shape: Shape, head: bytes) -> None:
        """Take the shape of ``head`` (parsed, a plain head: LF, no cut) once it is seen twice."""
        shape.sightings += 1
        if (shape.sightings != 2 or len(self._branches) >= _TEMPLATES or len(head) > _TEMPLATE_HEAD
                or shape.parsed is None or shape.odd
                or shape.grpc or shape.parsed[0][3] or len(shape.lengths) > 1 or b"\r" in head or _CUT in head):
            return
        parts = _VOLATILE_LINE.split(head)  # text, name, value, ..., text: the shape's text and names
        first = self._groups + 1  # the group of the branch's first value
        values = len(parts) // 3
        last = first + values  # an empty group that ends the branch: it tells which branch matched
        length = None if shape.chunked or not shape.lengths else shape.lengths[0]
        self._branches.append(b"%s()" % b"".join(
            re.escape(part) if index % 3 != 2 else _TEMPLATE_LENGTH if index // 3 == length else _TEMPLATE_VALUE
            for index, part in enumerate(parts)))
        # its values: a slice of all the groups (``groups()`` reads no group numbers, and a branch of one value
        # or none needs no extra group to be given a tuple)
        self.found[last] = (Known(shape, head, shape.parsed[1], length_slot=length, template=True),
                             slice(first - 1, last - 1))
        self._groups = last
        self.pattern = re.compile(b"(?:%s)\n\n" % b"|".join(self._branches))


class Heads:
    """What one reader has learned of the heads it read, held by that reader: each shape of head (its
    parse, made by h11 once), the request heads a client repeats whole, the shapes a session repeats
    (``KnownHeads``, one expression each kind) and the per-message values already checked.

    A recorded session repeats the same heads over and over (one client, a few agents), so each is
    parsed once; the memory is the reader's, gone with it, and bounded (``_CACHE_SIZE`` a table).
    """

    def __init__(self) -> None:
        self._shapes: dict[bytes, dict[bytes, Shape]] = {b"request": {}, b"response": {}}
        #: a client repeats its request heads whole (same call, same length): each one's shape and values,
        #: and its headers once parsed
        self._requests: dict[bytes, tuple[Shape, list[bytes]]] = {}
        self._request_headers: dict[bytes, tuple[tuple[str, str], ...]] = {}
        #: per-message values (a Date, a trace id) h11 was asked about and took
        self._checked: set[bytes] = set()
        #: the shapes of head a session repeats, each kind's as one expression
        self.requests, self.responses = KnownHeads(), KnownHeads()
        #: request heads the quick way read, whole (a client repeats its calls, lengths too): each one's
        #: known head and its volatile values, as ``KnownHeads.match`` gives them (none for a head parsed whole)
        self.seen: dict[bytes, tuple[Known, tuple[bytes, ...]]] = {}

    def shape(self, kind: bytes, head: bytes) -> tuple[Shape, list[bytes]]:
        """The shape of a ``kind`` (b"request" or b"response") head, its lines joined by LF, and
        the values of its volatile headers (a list the caller only reads)."""
        if kind == b"request" and (seen := self._requests.get(head)) is not None:
            return seen
        parts = _VOLATILE_LINE.split(head)  # text, name, value, text, name, value, ..., text
        # a framing value as _kept_headers reads it (the file frames the body: any white space goes); a
        # per-message one as h11 does (spaces and tabs only: a value that ends in a form feed is refused)
        values = [value.strip() if name[1:-1].lower() in _FRAMING else value.strip(b" \t")
                  for name, value in zip(parts[1::3], parts[2::3], strict=True)]
        del parts[2::3]
        key = b"".join(parts)
        shapes = self._shapes[kind]
        found = shapes.get(key)
        if found is None:
            if len(shapes) >= _CACHE_SIZE:
                shapes.clear()
            found = shapes[key] = Shape(head)
        if kind == b"request":
            if len(self._requests) >= _CACHE_SIZE:
                self._requests.clear()
            self._requests[head] = found, values
        return found, values

    def seen_request(self, shape: Shape, values: list[bytes], head: bytes, request: Request) -> None:
        """Remember a plain request head (LF, no cut) the quick way parsed into ``request``."""
        self.seen_head(head, Known(shape, head, tuple(request.headers), shape.length(values, head)), ())

    def seen_head(self, head: bytes, known: Known, values: tuple[bytes, ...]) -> None:
        """Remember a request head (what a known head matched, up to its blank line) whole."""
        if len(self.seen) >= _CACHE_SIZE:
            self.seen.clear()
        self.seen[head] = known, values

    def parse_request(self, shape: Shape, values: list[bytes], head: bytes, body: bytes, fail: Fail) -> Request:
        """Parse a request head (lines joined by LF) of this shape, with its framed body."""
        (method, target, version, cuts), headers, volatile, _ = shape.parsed or _parse(shape, head, body, fail,
                                                                                      _parse_request_head)
        if volatile:
            known = self._request_headers.get(head)
            if known is None:
                if len(self._request_headers) >= _CACHE_SIZE:
                    self._request_headers.clear()
                known = self._request_headers[head] = tuple(_with_values(headers, volatile, values, fail,
                                                                          self._checked))
            headers = known
        return built(Request, {"headers": list(headers), "stored": body, "http_version": version,
                               "head_cuts": list(cuts) if cuts else [], "grpc_views": [], "method": method,
                               "target": target})

    def parse_response(self, shape: Shape, values: list[bytes], head: bytes, body: bytes, fail: Fail,
                       event_times: list[float | None] | None = None) -> Response:
        """Parse a response head (lines joined by LF) of this shape, with its framed body.

        A response that is no event stream has no events: the (empty) list is known already, so
        ``Response.events`` is not worked out again from its headers for every exchange.
        """
        (status, reason, version, cuts), headers, volatile, events = shape.parsed or _parse(shape, head, body, fail,
                                                                                            _parse_response_head)
        if body and (status < 200 or status in _NO_BODY_STATUS):
            raise fail(f"no body after a {status} response", 0, f"{len(body)} bytes of body")
        response = built(Response, {
            "headers": _with_values(headers, volatile, values, fail, self._checked) if volatile else list(headers),
            "stored": body, "http_version": version, "head_cuts": list(cuts) if cuts else [], "grpc_views": [],
            "status": status, "reason": reason, "event_times": [] if event_times is None else event_times,
            "event_notes": {}, "trailers": [], "grpc_status_view": None})
        if not events:
            response.__dict__["events"] = []  # what the cached property gives for these headers
        return response


def _parse(shape: Shape, head: bytes, body: bytes, fail: Fail, parse_head) -> tuple:
    """The parse of the first head of this shape, remembered for the rest: its start line, its
    headers, where the volatile ones are, and whether the message may have SSE events."""
    start, headers = parse_head(head.split(b"\n"), len(body), fail)
    cuts = start[3]
    volatile = tuple((i, name, None if name.lower().encode() in _FRAMING else value,
                      i + 1 + sum(cut <= i for cut in cuts))
                     for i, (name, value) in enumerate(headers) if name.lower().encode() in _VOLATILE)
    probe = built(Response, {"headers": list(headers), "stored": b"", "http_version": "1.1", "head_cuts": [],
                             "grpc_views": [], "status": 200, "reason": "", "event_times": [], "event_notes": {},
                             "trailers": [], "grpc_status_view": None})
    parsed = shape.parsed = (start, headers, volatile, probe.is_event_stream)  # volatile names are no Content-Type
    return parsed


def head_facts(head: list[bytes]) -> tuple[bytes | None, int | None]:
    """A head's first Content-Type value, and the Content-Length that frames its body (None
    when there is none, or when a Transfer-Encoding says the length is not the framing)."""
    content_type = length = None
    for line in head[1:]:
        if line[:1] not in b"CcTt \t":  # none of the three names (h11 refuses a name after spaces)
            continue
        name, _, value = line.partition(b":")
        name = name.strip().lower()
        if name == b"content-type":
            if content_type is None:
                content_type = value
        elif name == b"transfer-encoding":
            return content_type if content_type is not None else _first_type(head), None
        elif name == b"content-length" and value.strip().isdigit() and len(value.strip()) <= 15:
            length = int(value.strip())
    return content_type, length


def _first_type(head: list[bytes]) -> bytes | None:
    for line in head[1:]:
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"content-type":
            return value
    return None


def is_event_stream(content_type: bytes | None) -> bool:
    return content_type is not None and content_type.split(b";")[0].strip().lower() == b"text/event-stream"


#: what h11 refuses in a stripped header value (its field-value: words of anything but NUL and
#: white space, parted by spaces and tabs)
_NOT_IN_VALUES = b"\x00\n\r\x0b\x0c"


def _with_values(headers: tuple, volatile: tuple, values: list[bytes], fail: Fail,
                 checked: set[bytes]) -> list[tuple[str, str]]:
    """A remembered head's headers with this message's own volatile values put back (``volatile``:
    the position and name of each, for a per-message header the value h11 saw, and its line in the head)."""
    result = list(headers)
    for (index, name, seen, line), value in zip(volatile, values, strict=True):
        text = value.decode("utf-8", "surrogateescape")
        if seen is None:  # a framing header: the file frames the body, so h11 never sees its value
            if len(value.translate(None, _NOT_IN_VALUES)) != len(value):
                raise fail(f"a {name} value without NUL or line breaks", line, repr(text))
        elif text != seen and value not in checked:
            _check_value(name, value, fail, checked)
        result[index] = (name, text)
    return result


def _check_value(name: str, value: bytes, fail: Fail, checked: set[bytes]) -> None:
    """h11's own check of a per-message value (a Date, a trace id; stripped) the remembered parse did not see."""
    if len(value.translate(None, _NOT_IN_VALUES)) != len(value):  # else h11 takes it: no need to ask
        try:
            h11.Response(status_code=200, headers=[(name.encode("latin-1", "replace"), value)])
        except h11.LocalProtocolError as error:
            raise fail(f"a valid {name} header value ({error})", 0, repr(_text(value))) from None
    if len(checked) >= _CACHE_SIZE:
        checked.clear()
    checked.add(value)


def _parse_request_head(lines: list[bytes], length: int, fail: Fail) -> tuple:
    match = REQUEST_LINE.match(lines[0])
    if match is None:
        if STATUS_LINE.match(lines[0]):
            raise fail("a request line (METHOD target HTTP/1.1) before the response", 0,
                       "a status line: a response with no request")
        raise fail("a request line (METHOD target HTTP/1.1)", 0, _show(lines[0]))
    method, target, version = match.groups()
    headers, cuts = _header_lines(lines[1:], fail)
    conn = h11.Connection(our_role=h11.SERVER)
    wire = [b"%s %s HTTP/1.1" % (method, target.replace(_CUT, _PLACEHOLDER))]
    wire += _wire_headers(headers, length, add_host=True)
    event = _head_event(conn, wire, fail)
    target = _text(event.target.replace(_PLACEHOLDER, _CUT))
    return (_text(event.method), target, version.decode(), tuple(cuts)), tuple(_kept_headers(event, headers))


def _parse_response_head(lines: list[bytes], length: int, fail: Fail) -> tuple:
    match = STATUS_LINE.match(lines[0])
    if match is None:
        raise fail("a status line (HTTP/1.1 200 OK)", 0, _show(lines[0]))
    version, status, reason = match.groups()
    code = int(status)
    if length and (code < 200 or code in _NO_BODY_STATUS):
        raise fail(f"no body after a {code} response", 0, f"{length} bytes of body")
    headers, cuts = _header_lines(lines[1:], fail)
    conn = h11.Connection(our_role=h11.CLIENT)
    conn.send(h11.Request(method="GET", target="/", headers=[("Host", "capture")]))
    conn.send(h11.EndOfMessage())
    wire = [b"HTTP/1.1 %s %s" % (status, (reason or b"").replace(_CUT, _PLACEHOLDER))]
    wire += _wire_headers(headers, length, add_host=False, status=code)
    event = _head_event(conn, wire, fail)
    reason = _text(event.reason.replace(_PLACEHOLDER, _CUT))
    return (event.status_code, reason, version.decode(), tuple(cuts)), tuple(_kept_headers(event, headers))


def _header_lines(lines: list[bytes], fail: Fail) -> tuple[list[bytes], list[int]]:
    """Check header lines one by one (for a precise error) and set `…` lines aside."""
    headers: list[bytes] = []
    cuts: list[int] = []
    for offset, line in enumerate(lines, start=1):
        if line.strip() == _CUT:
            cuts.append(len(headers))
            continue
        if not HEADER_LINE.match(line):
            raise fail("a header line (Name: value) or a blank line", offset, _show(line))
        headers.append(line.replace(_CUT, _PLACEHOLDER))
    return headers, cuts


def _is_framing(line: bytes) -> bool:
    start = line[:18].lower()
    if not start.startswith((b"content-length", b"transfer-encoding")):
        return False
    return line.split(b":", 1)[0].strip().lower() in _FRAMING


def _wire_headers(headers: list[bytes], length: int, *, add_host: bool, status: int = 200) -> list[bytes]:
    wire = [line for line in headers if not _is_framing(line)]
    if add_host and not any(line.split(b":", 1)[0].lower() == b"host" for line in headers):
        wire.append(b"Host: capture")
    if status >= 200 and status not in _NO_BODY_STATUS:
        wire.append(b"Content-Length: %d" % length)
    return wire


def _head_event(conn: h11.Connection, wire: list[bytes], fail: Fail):
    """h11's event for the head ``wire`` (its lines), given without its body: the Content-Length frames a
    body h11 would only count, and a body of 200 MB would be copied into its buffer and out again."""
    conn.receive_data(b"\r\n".join(wire) + b"\r\n\r\n")
    try:
        return conn.next_event()
    except h11.RemoteProtocolError as error:
        raise fail("a valid HTTP/1.1 head", 0, str(error)) from None  # h11 quotes the line: shown clipped


def _kept_headers(event, written: list[bytes]) -> list[tuple[str, str]]:
    """The headers as written (names keep their case), framing headers included."""
    parsed = iter(event.headers.raw_items())
    result = []
    for line in written:
        if _is_framing(line):
            name, _, value = line.partition(b":")
            name, value = name.strip(), value.strip()
        else:
            name, value = next(parsed)
        result.append((_text(name), _text(value.replace(_PLACEHOLDER, _CUT))))
    return result


def _text(value: bytes) -> str:
    return value.decode("utf-8", "surrogateescape")


def _show(line: bytes) -> str:
    text = line.decode("utf-8", "replace")
    if len(text) > 60:
        text = text[:57] + "..."
    return repr(text)
