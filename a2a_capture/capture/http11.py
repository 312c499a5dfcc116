"""Turn a written request or response (head lines and body bytes) into model objects.

h11 does the HTTP parsing. The capture file has already framed the body (by length or by
the layout of the file), so h11 is handed a consistent message: the head as written with
its framing headers replaced by the true `Content-Length`, then the body. Documentation
captures may cut a head with `…`; those lines are set aside and the exchange marked as cut.
"""

from __future__ import annotations

from collections.abc import Callable

import h11

from a2a_capture.capture.models import CUT_MARK, Request, Response
from a2a_capture.capture.syntax import HEADER_LINE, REQUEST_LINE, STATUS_LINE

_CUT = CUT_MARK.encode()
_PLACEHOLDER = b"_a2a-capture-cut_"
_FRAMING = (b"content-length", b"transfer-encoding")
_NO_BODY_STATUS = (204, 304)

#: (message, line offset within the head) -> exception
Fail = Callable[[str, int, str | None], Exception]


def parse_request(lines: list[bytes], body: bytes, fail: Fail) -> Request:
    """Parse a request head (lines without line ends) and its framed body."""
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
    event, data = _next_message(conn, fail)
    return Request(
        method=_text(event.method),
        target=_text(event.target.replace(_PLACEHOLDER, _CUT)),
        http_version=version.decode(),
        headers=_kept_headers(event, headers),
        body=data,
        head_cuts=cuts,
    )


def parse_response(lines: list[bytes], body: bytes, fail: Fail) -> Response:
    """Parse a response head (lines without line ends) and its framed body."""
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
    event, data = _next_message(conn, fail)
    return Response(
        status=event.status_code,
        reason=_text(event.reason.replace(_PLACEHOLDER, _CUT)),
        http_version=version.decode(),
        headers=_kept_headers(event, headers),
        body=data,
        head_cuts=cuts,
    )


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


def _wire_headers(headers: list[bytes], length: int, *, add_host: bool, status: int = 200) -> list[bytes]:
    wire = [line for line in headers if line.split(b":", 1)[0].strip().lower() not in _FRAMING]
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
    parsed = [(name, value) for name, value in event.headers.raw_items()]
    framing = {}
    for line in written:
        name, _, value = line.partition(b":")
        if name.strip().lower() in _FRAMING:
            framing.setdefault(name.strip(), []).append(value.strip())
    result = []
    by_position = iter(parsed)
    for line in written:
        name = line.split(b":", 1)[0].strip()
        if name.lower() in _FRAMING:
            value = framing[name].pop(0)
        else:
            name, value = next(by_position)
        result.append((_text(name), _text(value.replace(_PLACEHOLDER, _CUT))))
    return result


def _text(value: bytes) -> str:
    return value.decode("utf-8", "surrogateescape")


def _show(line: bytes) -> str:
    text = line.decode("utf-8", "replace")
    if len(text) > 60:
        text = text[:57] + "..."
    return repr(text)
