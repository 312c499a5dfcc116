"""A per-message value (a Date, a trace id) the remembered parse of a head did not see is checked as
h11 checks it: the quick test of what h11 refuses takes and refuses exactly the values h11 does."""

from __future__ import annotations

import h11
import pytest
from hypothesis import given
from hypothesis import strategies as st

from a2a_capture.capture import http11, read_capture_bytes
from a2a_capture.errors import CaptureFormatError

_BYTES = st.binary(max_size=12) | st.lists(st.sampled_from(
    [b"a", b" ", b"\t", b"\x00", b"\x01", b"\x0b", b"\x0c", b"\r", b"\n", b"\x7f", b"\xe2\x80\xa6", b"GMT"]),
    max_size=8).map(b"".join)


def _h11_takes(value: bytes) -> bool:
    try:
        h11.Response(status_code=200, headers=[(b"date", value)])
    except h11.LocalProtocolError:
        return False
    return True


def _fail(expected: str, offset: int, found: str | None) -> CaptureFormatError:
    return CaptureFormatError(expected, found=found)


@given(_BYTES.map(lambda value: value.strip(b" \t")), st.sampled_from(http11.PER_MESSAGE))  # as the reader strips
def test_a_per_message_value_is_taken_exactly_when_h11_takes_it(value, name):
    try:
        http11._check_value(name.decode(), value, _fail, set())
    except CaptureFormatError as error:
        assert not _h11_takes(value)
        assert error.expected.startswith(f"a valid {name.decode()} header value")
    else:
        assert _h11_takes(value)


_FRAMED = (b"### 1 \xc2\xb7 x\nPOST / HTTP/1.1\nHost: a\n\xe2\x80\xa6\n%s\n\n{}\n\n"
           b"HTTP/1.1 200 OK\nContent-Length: 0\n\n")


@pytest.mark.parametrize("line", [b"Content-Length:\x00 2", b"Content-Length: 2\x00", b"Transfer-Encoding: chun\x00ked",
                                  b"Content-Length: 2\x0c2"])
def test_a_framing_value_h11_never_sees_is_refused_where_it_is_written(line):
    """The file frames the body, so h11 is not shown a framing header's value: the reader refuses
    what no HTTP message (and no HAR written from it) can carry, at that header's line."""
    data = _FRAMED % line
    with pytest.raises(CaptureFormatError) as raised:
        read_capture_bytes(data, "framed.http")
    assert raised.value.line == 5  # the block header, the request line, Host, the cut, then this
    assert "without NUL or line breaks" in str(raised.value)
    first = _FRAMED % b"Content-Length: 2"  # a head of this shape read first: its parse is remembered
    with pytest.raises(CaptureFormatError) as raised:
        read_capture_bytes(first + _FRAMED % line.replace(b"2", b"9"), "framed.http")
    assert raised.value.line == first.count(b"\n") + 5


_DATED = (b"### %d \xc2\xb7 x\nGET / HTTP/1.1\nHost: a\n\nHTTP/1.1 200 OK\nDate: %s\nContent-Length: 2\n\n{}\n\n")


@pytest.mark.parametrize("end", [b"\x0b", b"\x0c", b"\x00"])
def test_a_per_message_value_h11_refuses_is_refused_whether_its_head_came_first_or_later(end):
    """A Date that ends in a form feed is refused by h11 when its head is parsed: a head of a shape
    seen before is refused the same, not accepted with the byte stripped off."""
    odd = b"Wed, 18 Nov 2026 11:06:41 GMT" + end
    alone = _DATED % (1, odd)
    with pytest.raises(CaptureFormatError) as first:
        read_capture_bytes(alone, "dated.http")
    before = _DATED % (1, b"Wed, 18 Nov 2026 11:06:40 GMT")
    with pytest.raises(CaptureFormatError) as later:
        read_capture_bytes(before + _DATED % (2, odd), "dated.http")
    assert later.value.line == before.count(b"\n") + first.value.line
