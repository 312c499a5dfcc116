"""Turn a written request or response (head lines and body bytes) into model objects.

h11 does the HTTP parsing. The capture file has already framed the body (by length or by
the layout of the file), so h11 is handed a consistent message: the head as written with
its framing headers replaced by the true `Content-Length`, then the body. Documentation
captures may cut a head with `…`; those lines are set aside and the exchange marked as cut.

A recorded session repeats the same heads over and over (one client, a few agents), so
the result of parsing a head is remembered by its bytes: h11 sees every distinct head once.
"""

from __future__ import annotations

from collections.abc import Callable

import h11

from a2a_capture.capture.models import CUT_MARK, Request, Response
from a2a_capture.capture.syntax import HEADER_LINE, REQUEST_LINE, STATUS_LINE

_CUT = CUT_MARK.encode()
_PLACEHOLDER = b"_a2a-capture-cut_"
_FRAMING = (b"content-length", b"transfer-encoding")
_VOLATILE = (*_FRAMING, b"date")
_NO_BODY_STATUS = (204, 304)
_CACHE_SIZE = 4096

#: (what was expected, line offset within the head, what was found) -> exception
Fail = Callable[[str, int, str | None], Exception]

_heads: dict[tuple, tuple] = {}
_checked: set[bytes] = set()


def parse_request(lines: list[bytes], body: bytes, fail: Fail) -> Request:
    """Parse a request head (lines without line ends) and its framed body."""
    (method, target, version, cuts), headers = _remembered(b"request", lines, body, fail, _parse_request_head)
    return Request(method=method, target=target, http_version=version, body=body, head_cuts=list(cuts),
                   headers=headers)


def parse_response(lines: list[bytes], body: bytes, fail: Fail) -> Response:
    """Parse a response head (lines without line ends) and its framed body."""
    (status, reason, version, cuts), headers = _remembered(b"response", lines, body, fail, _parse_response_head)
    if body and (status < 200 or status in _NO_BODY_STATUS):
        raise fail(f"no body after a {status} response", 0, f"{len(body)} bytes of body")
    return Response(status=status, reason=reason, http_version=version, body=body, head_cuts=list(cuts),
                    headers=headers)


def _remembered(kind: bytes, lines: list[bytes], body: bytes, fail: Fail, parse_head) -> tuple:
    """The parse of a head of this shape (made now if new), and this head's own headers."""
    key, values = _shape(kind, lines)
    parsed = _heads.get(key)
    if parsed is None:
        parsed = _remember(key, parse_head(lines, body, fail))
    start, headers, volatile = parsed
    return start, _with_values(headers, volatile, values, fail)


def _shape(kind: bytes, lines: list[bytes]) -> tuple[tuple, list[bytes]]:
    """A head with the values of its volatile headers taken out, and those values.

    Framing headers are the file's business, and `Date` changes every second; the rest of
    a recorded session's heads repeat, so their parse can be remembered.
    """
    key: list[bytes] = [kind, lines[0]]
    values: list[bytes] = []
    for line in lines[1:]:
        if line[:1] in b"CcTtDd":
            name, colon, value = line.partition(b":")
            if colon and name.lower() in _VOLATILE:
                key.append(name)
                values.append(value.strip())
                continue
        key.append(line)
    return tuple(key), values


def _with_values(headers: tuple, volatile: tuple, values: list[bytes], fail: Fail) -> list[tuple[str, str]]:
    """A remembered head's headers with this message's own volatile values put back."""
    result = list(headers)
    for index, value in zip(volatile, values, strict=True):
        name, known = result[index]
        text = _text(value)
        if text != known and name.lower() == "date":
            _check_value(name, value, fail)
        result[index] = (name, text)
    return result


def _check_value(name: str, value: bytes, fail: Fail) -> None:
    """h11's own check of one header value, for a value the remembered parse did not see."""
    if value in _checked:
        return
    try:
        h11.Response(status_code=200, headers=[(name.encode("latin-1", "replace"), value)])
    except h11.LocalProtocolError as error:
        raise fail(f"a valid {name} header value ({error})", 0, repr(_text(value))) from None
    if len(_checked) >= _CACHE_SIZE:
        _checked.clear()
    _checked.add(value)


def _remember(key: tuple, parsed: tuple) -> tuple:
    """Keep (start-line facts, headers, positions of volatile headers) for this shape."""
    if len(_heads) >= _CACHE_SIZE:
        _heads.clear()
    start, headers = parsed
    volatile = tuple(i for i, (name, _) in enumerate(headers) if name.lower().encode() in _VOLATILE)
    _heads[key] = (start, headers, volatile)
    return _heads[key]


def _parse_request_head(lines: list[bytes], body: bytes, fail: Fail) -> tuple:
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
    wire += _wire_headers(headers, len(body), add_host=True)
    conn.receive_data(b"\r\n".join(wire) + b"\r\n\r\n" + body)
    event, _ = _next_message(conn, fail)
    target = _text(event.target.replace(_PLACEHOLDER, _CUT))
    return (_text(event.method), target, version.decode(), tuple(cuts)), tuple(_kept_headers(event, headers))


def _parse_response_head(lines: list[bytes], body: bytes, fail: Fail) -> tuple:
    match = STATUS_LINE.match(lines[0])
    if match is None:
        raise fail("a status line (HTTP/1.1 200 OK)", 0, _show(lines[0]))
    version, status, reason = match.groups()
    code = int(status)
    if body and (code < 200 or code in _NO_BODY_STATUS):
        raise fail(f"no body after a {code} response", 0, f"{len(body)} bytes of body")
    headers, cuts = _header_lines(lines[1:], fail)
    conn = h11.Connection(our_role=h11.CLIENT)
    conn.send(h11.Request(method="GET", target="/", headers=[("Host", "capture")]))
    conn.send(h11.EndOfMessage())
    wire = [b"HTTP/1.1 %s %s" % (status, (reason or b"").replace(_CUT, _PLACEHOLDER))]
    wire += _wire_headers(headers, len(body), add_host=False, status=code)
    conn.receive_data(b"\r\n".join(wire) + b"\r\n\r\n" + body)
    event, _ = _next_message(conn, fail)
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


def _next_message(conn: h11.Connection, fail: Fail):
    try:
        head = conn.next_event()
        if isinstance(head, h11.InformationalResponse):
            return head, b""
        chunks = []
        while True:
            event = conn.next_event()
            if isinstance(event, h11.Data):
                chunks.append(event.data)
            elif isinstance(event, h11.EndOfMessage) or event is h11.NEED_DATA:
                break
    except h11.RemoteProtocolError as error:
        raise fail(f"a valid HTTP/1.1 head ({error})", 0, None) from None
    return head, b"".join(chunks)


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
