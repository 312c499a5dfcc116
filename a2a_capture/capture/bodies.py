"""The general reader's bodies: framed by a length, by the file's layout, or as gRPC paragraphs.

A recorded body is framed by a `#@ …-body` length or its Content-Length and taken exactly; a body a
person wrote (a documentation capture) has none that can be trusted, and ends where the next part of
the file starts; a gRPC body is written as readable paragraphs of its messages. Each is read here from
the ``Source``, which says where it stands for any error.
"""

from __future__ import annotations

import base64
import binascii
import re

from a2a_capture.capture import grpc, syntax
from a2a_capture.capture.body import FileBody, ends_with
from a2a_capture.capture.preamble import Framing
from a2a_capture.capture.source import Error, Source

_BASE64_LINE = 76


def read_grpc_messages(source: Source, error: Error) -> tuple[bytes, list[list[str]]]:
    """Message paragraphs: an intro line, view lines, `grpc bytes` lines, a blank line."""
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
                raise error("'grpc bytes' lines with the message's bytes in base64", found="a blank line")
            view.append(_text(syntax.strip_eol(source.next_line())))
        first_line = source.line
        encoded = []
        while grpc.is_bytes_line(source.peek_line()):
            encoded.append(syntax.strip_eol(source.next_line()))
        if not encoded:
            raise error("'grpc bytes' lines with the message's bytes in base64", found="the end of the file")
        try:
            frames.append(grpc.decode_bytes_lines(encoded))
        except ValueError as refused:
            raise error(str(refused), line=first_line, found="characters that are not base64") from None
        expect_blank(source, error)
        views.append(view)


def read_grpc_status(source: Source, error: Error) -> tuple[str | None, list[tuple[str, str]]]:
    """The `grpc status` paragraph, if there is one: its intro line and the trailers."""
    line, blanks = source.peek_past_blank_lines()
    if not grpc.is_status_intro(line):
        return None, []
    source.skip(blanks)
    intro = _text(syntax.strip_eol(source.next_line()))
    trailers: list[tuple[str, str]] = []
    while (line := source.peek_line()) and not syntax.is_blank(line):
        text = syntax.strip_eol(line)
        if not syntax.HEADER_LINE.match(text):
            raise error("a trailer line (name: value) or a blank line", found=text)
        name, _, value = text.partition(b":")
        trailers.append((_text(name), _text(value.strip())))
        source.skip(len(line))
    expect_blank(source, error)
    return intro, trailers
def read_body(source: Source, length: int | None, framing: Framing | None, empty: re.Pattern, end: re.Pattern,
              newline: str, error: Error) -> tuple[bytes | FileBody, bool]:
    """The body bytes, and whether a length (``#@`` framing, else Content-Length) framed them exactly."""
    if framing is not None:
        return read_framed(source, framing, error), True
    if length is not None:
        mark = source.tell()
        body = source.take(length)
        if body is not None and at_body_end(source):
            source.let_go()
            return body, True
        source.back_to(mark)  # a documentation capture with a stale length
    line, blanks = source.peek_past_blank_lines()
    if line == b"" or empty.match(line):
        source.skip(blanks)  # blank lines before the next part are layout, not body
        return b"", False
    return read_until(source, end, newline), False


def read_until(source: Source, end: re.Pattern, newline: str) -> bytes | FileBody:
    """Bytes up to the blank line(s) before what ``end`` looks for, or to the end of file (left in the file
    when they are more than the buffer holds)."""
    region, _ = source.take_until(end, syntax.trailing_line_ends)  # at the end of the file, without its line ends
    if newline == "\r\n" and ends_with(region, b"\r"):
        region = region[:-1] if isinstance(region, bytes) else region.part(0, len(region) - 1)
    return region


def read_framed(source: Source, framing: Framing, error: Error) -> bytes | FileBody:
    size, encoded, pragma_line = framing
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
            raise error("base64 lines for the body", line=start_line,
                              found="characters that are not base64") from None
        if len(body) != size:
            raise error(f"{size} bytes of base64 body (line {pragma_line})",
                              line=start_line, found=f"{len(body)} bytes")
        expect_blank(source, error)
        return body
    body = source.take(size)
    if body is None:
        available = len(source.buf) - source.pos
        raise error(f"{size} bytes of body (line {pragma_line})", line=start_line,
                          found=f"the end of the file after {available} bytes")
    if not at_body_end(source):
        raise error(f"a blank line after the {size}-byte body (line {pragma_line})",
                          found=syntax.strip_eol(source.peek_line()))
    return body


def at_body_end(source: Source) -> bool:
    """After an exactly framed body: a line end, then a blank line or the end of file."""
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


def expect_blank(source: Source, error: Error) -> None:
    line = source.peek_line()
    if line and not syntax.is_blank(line):
        raise error("a blank line after the body", found=syntax.strip_eol(line))
    source.skip(len(line))


def _text(value: bytes) -> str:
    return value.decode("utf-8", "surrogateescape")
