"""Property: writing a capture and reading it back gives the same capture."""

from __future__ import annotations

import os
import string

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from a2a_capture.capture import Capture, Exchange, ExchangeMeta, Request, Response, capture_bytes
from a2a_capture.capture.reader import read_capture_bytes
from tests.builders import analyze_everything

KEY = st.text(string.ascii_letters + string.digits + "-_.", min_size=1, max_size=12)
TOKEN = st.text(string.ascii_letters + string.digits + "-_.!~*'", min_size=1, max_size=12)
# one line of text: any characters but a capture's line breaks (CR, LF; VT, FF, NEL, U+2028 and
# the like are characters a line can hold), never empty after strip where that matters
LINE_BREAKS = "\r\n"
LINE = st.text(st.characters(blacklist_categories=("Cs",), blacklist_characters=LINE_BREAKS) | st.sampled_from(
    "\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029"), max_size=30)
STRIPPED = LINE.map(str.strip).filter(bool)
VISIBLE = st.text(st.characters(min_codepoint=0x21, max_codepoint=0x7E), min_size=1, max_size=30)
HEADER_VALUE = st.text(
    st.characters(min_codepoint=0x20, max_codepoint=0x7E) | st.sampled_from("é…ü世"), max_size=30
).map(str.strip)
BODY = st.one_of(
    st.binary(max_size=200),
    st.text(max_size=200).map(str.encode),
    st.lists(
        st.sampled_from(["{", "}", '  "a": 1,', "", "### 2 · x", "HTTP/1.1 200 OK", "# n", "data: x", "…"]),
        max_size=8,
    ).map(lambda lines: "\n".join(lines).encode()),
)


@st.composite
def headers(draw):
    name = TOKEN.filter(lambda t: t.lower() not in ("host", "content-length", "transfer-encoding"))
    items = draw(st.lists(st.tuples(name, HEADER_VALUE), max_size=5))
    if draw(st.booleans()):
        items.append(("Content-Length", str(draw(st.integers(0, 300)))))
    if draw(st.booleans()):
        items.append(("Transfer-Encoding", "chunked"))
    return items


@st.composite
def sse_body(draw):
    frame = st.text(string.printable.strip("\r\n\x0b\x0c"), max_size=40)
    frames = draw(st.lists(frame, min_size=1, max_size=5))
    end = draw(st.sampled_from(["\n", "\r\n"]))
    return "".join(f"data: {frame}{end}{end}" for frame in frames).encode()


@st.composite
def responses(draw):
    if draw(st.booleans()):
        body = draw(sse_body())
        times = draw(st.lists(st.floats(0, 100, allow_nan=False) | st.none(), max_size=4))
        head = [("Content-Type", "text/event-stream"), *draw(headers())]
        return Response(status=200, reason="OK", headers=head, body=body, event_times=times)
    status = draw(st.sampled_from([200, 201, 204, 304, 400, 404, 500]))
    body = b"" if status in (204, 304) else draw(BODY)
    reason = draw(st.text(string.ascii_letters + " ", max_size=12).map(str.strip))
    version = draw(st.sampled_from(["1.1", "1.0"]))
    return Response(status=status, reason=reason, headers=draw(headers()), body=body, http_version=version)


@st.composite
def exchanges(draw, number):
    headers_ = draw(headers())
    cuts = sorted(draw(st.lists(st.integers(0, len(headers_)), max_size=2)))
    request = Request(
        method=draw(st.sampled_from(["GET", "POST", "DELETE", "PUT"])),
        target=draw(VISIBLE),
        headers=headers_,
        body=draw(BODY),
        head_cuts=cuts,
    )
    response = draw(st.none() | responses())
    meta = ExchangeMeta(
        start=draw(st.none() | STRIPPED),
        client=draw(st.none() | STRIPPED),
        redacted=draw(st.lists(STRIPPED.filter(lambda s: "," not in s), max_size=2)),
        extra=draw(st.lists(st.tuples(st.sampled_from(["tls", "note-x", "http2"]), STRIPPED), max_size=2)),
    )
    return Exchange(
        number=number,
        title=draw(LINE.map(str.strip)),
        webhook=draw(st.booleans()),
        notes=draw(st.lists(LINE, max_size=2)),
        request=request,
        response_notes=draw(st.lists(LINE, max_size=2)),
        response=response,
        trailing_notes=draw(st.lists(LINE, max_size=2)) if response is not None else [],
        meta=meta,
    )


@st.composite
def captures(draw):
    count = draw(st.integers(0, 4))
    return Capture(
        notes=draw(st.lists(LINE, max_size=2)),
        meta=draw(st.lists(st.tuples(KEY, LINE), max_size=2)),
        exchanges=[draw(exchanges(number)) for number in range(1, count + 1)],
        newline=draw(st.sampled_from(["\n", "\r\n"])),
    )


EXAMPLES = int(os.environ.get("ROUNDTRIP_EXAMPLES", "400"))


@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(captures())
def test_write_then_read_is_the_identity(capture):
    data = capture_bytes(capture)
    if not data:  # an empty file has no line ending to keep
        capture = capture.model_copy(update={"newline": "\n"})
    back = read_capture_bytes(data, "generated.http")
    assert back == capture
    # and writing again gives the same bytes
    assert capture_bytes(back) == data


@settings(max_examples=150, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(captures())
def test_any_capture_can_be_analyzed_and_reported(tmp_path, capture):
    """Unknown or broken traffic is classified, never a crash: analysis and both reports."""
    analyze_everything(capture, tmp_path)


# -- reading and writing back: the bytes of a capture written as the writer spells it -------------------------

#: a line's bytes: anything but CR and LF, UTF-8 or not
LINE_BYTES = st.binary(max_size=30).filter(lambda line: b"\r" not in line and b"\n" not in line)


def _stripped(line: bytes) -> bool:
    text = line.decode("utf-8", "surrogateescape")
    return bool(text) and text.strip() == text


@settings(max_examples=EXAMPLES, deadline=None)
@given(meta=st.lists(st.tuples(KEY, LINE_BYTES), max_size=3), notes=st.lists(LINE_BYTES.filter(bool), max_size=2),
       title=LINE_BYTES.filter(_stripped), extra=st.lists(LINE_BYTES.filter(_stripped), max_size=2))
def test_read_then_write_keeps_bytes_that_are_not_utf8_or_break_other_lines(meta, notes, title, extra):
    """A file's pragmas and notes, a title and an exchange's own pragmas, with bytes that are
    not UTF-8 and characters str.splitlines breaks at (VT, FF, NEL, U+2028), come back the same."""
    data = b"".join(b"#@ %s: %s\n" % (key.encode(), value) for key, value in meta)
    data += b"".join(b"# %s\n" % note for note in notes) + (b"\n" if meta or notes else b"")
    data += b"### 1 \xc2\xb7 %s\n" % title + b"".join(b"#@ x-note: %s\n" % value for value in extra)
    data += b"GET /a HTTP/1.1\nHost: a:1\n\nHTTP/1.1 200 OK\n\n"
    assert capture_bytes(read_capture_bytes(data, "generated.http")) == data
