"""The line grammar of a capture file, shared by the reader and the writer.

Everything that decides where a block, a note or a body starts lives here, so the writer
can check that what it writes will be read back the same way.
"""

from __future__ import annotations

import re

MIDDLE_DOT = "·"

#: `### 3 · SendMessage` or `### webhook 2 · received by the client`
#: a block number has at most 100 digits (a longer one is a hostile file's; past 4,300 digits Python refuses
#: to make it an int at all)
BLOCK_HEADER = re.compile(rb"### (?:(webhook) )?(\d{1,100})(?: \xc2\xb7(?: (.*))?)?\Z")
LONG_BLOCK_NUMBER = re.compile(rb"### (?:webhook )?(\d{101,})")
#: `HTTP/1.1 200 OK` (also `HTTP/2 200`, as people write it)
STATUS_LINE = re.compile(rb"HTTP/(\d(?:\.\d)?) (\d{3})(?: (.*))?\Z")
#: `POST /a2a/jsonrpc HTTP/1.1`
REQUEST_LINE = re.compile(rb"([!#$%&'*+\-.^_`|~0-9A-Za-z]+) (\S+) HTTP/(\d(?:\.\d)?)\Z")
#: `#@ start: 2026-11-30T07:40:01.123456Z`
PRAGMA = re.compile(rb"#@ ?([A-Za-z0-9_.-]+):[ \t]?(.*)\Z")
PRAGMA_KEY = re.compile(r"[A-Za-z0-9_.-]+")
#: `#@ response-body: 812 bytes` or `#@ request-body: 96 bytes base64`
BODY_FRAMING = re.compile(r"([0-9]{1,15}) bytes?(?: (base64))?\Z")
#: a header line as h11 would take it
HEADER_LINE = re.compile(rb"[!#$%&'*+\-.^_`|~0-9A-Za-z]+:")

# What may stand after a blank line and end a body written without a length.
_HEADER_START = rb"### (?:webhook )?\d+(?: |\r?\n|\Z)"
_STATUS_START = rb"HTTP/\d(?:\.\d)? \d{3}(?: |\r?\n|\Z)"
_NOTE_START = rb"#(?: |\r?\n|\Z)"
_FRAME_START = rb"(?:data|event|id|retry)(?::|\r?\n|\Z)|:"


_RUN_START = rb"(?<!\n)(?<!\n\r)"


def _ends(*starts: bytes) -> re.Pattern[bytes]:
    """A line end, then blank lines, then one of the given line starts.

    The match starts only at the first line end of a run of blank lines (the look-behinds), so
    a search over many blank lines is linear, not quadratic in their number. The pattern starts
    with its line end, the look-behinds after it: a search then skips to each line end as a
    literal scan (on a 50 MB line, 14 ms where a pattern starting with the look-behinds takes 0.8 s).
    """
    return re.compile(rb"\n(?<!\n\n)(?<!\n\r\n)(?:\r?\n)+(?=" + b"|".join(starts) + rb")")


REQUEST_BODY_END = _ends(_HEADER_START, _STATUS_START, _NOTE_START)
RESPONSE_BODY_END = _ends(_HEADER_START, _NOTE_START)
RESPONSE_BODY_END_BEFORE_FRAMES = _ends(_HEADER_START, _NOTE_START, _FRAME_START)
STREAM_BODY_END = _ends(_HEADER_START)

REQUEST_BODY_EMPTY = re.compile(rb"(?:" + rb"|".join((_HEADER_START, _STATUS_START, _NOTE_START)) + rb")")
RESPONSE_BODY_EMPTY = re.compile(rb"(?:" + rb"|".join((_HEADER_START, _NOTE_START)) + rb")")
RESPONSE_BODY_EMPTY_BEFORE_FRAMES = re.compile(
    rb"(?:" + rb"|".join((_HEADER_START, _NOTE_START, _FRAME_START)) + rb")"
)
STREAM_BODY_EMPTY = re.compile(_HEADER_START)

TRAILING_LINE_ENDS = re.compile(_RUN_START + rb"(?:\r?\n)+\Z")


def without_trailing_line_ends(data: bytes) -> bytes:
    """``data`` without the run of line ends it ends with."""
    end = trailing_line_ends(data)
    return data if end == len(data) else data[:end]


def trailing_line_ends(data: bytes, whole: bool = True) -> int | None:
    """Where the run of line ends ``data`` ends with starts (its length if none); ``whole``: ``data`` is all
    there is, else more precedes it and None says the run may reach into that. Searched for only among its
    last bytes that are line ends (a match is made of nothing else): a search of the whole would try every
    position of a 200 MB line, seconds for nothing; nor is ``data`` copied."""
    tail = len(data)
    while tail and data[tail - 1] in b"\r\n":
        tail -= 1
    if tail < 2 and not whole:  # the look behind of a match from here would read bytes before ``data``
        return None
    match = TRAILING_LINE_ENDS.search(data, tail)
    return len(data) if match is None else match.start()


def is_blank(line: bytes) -> bool:
    return line in (b"\n", b"\r\n", b"")


def strip_eol(line: bytes) -> bytes:
    if line.endswith(b"\r\n"):
        return line[:-2]
    if line.endswith(b"\n"):
        return line[:-1]
    return line


def is_note(line: bytes) -> bool:
    """`# text` or a bare `#`; not a block header, not a pragma."""
    text = strip_eol(line)
    return text == b"#" or text.startswith(b"# ")


def note_text(line: bytes) -> str:
    return strip_eol(line)[2:].decode("utf-8", "surrogateescape")


#: a whole line a documentation capture left out
CUT_LINE = "…".encode()
