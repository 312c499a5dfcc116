"""A block's preamble: the pragmas and notes between its header and its request.

The recorder writes when the exchange started and ended, who spoke, how long each body is and when
each event of a stream arrived; a person writes notes. Read apart from the messages, so the general
reader and the quick way (capture/quick.py) read them alike.
"""

from __future__ import annotations

import re

from a2a_capture.capture import syntax
from a2a_capture.capture.models import ExchangeMeta, built
from a2a_capture.capture.source import Error, Source

#: a body's framing by a `#@ …-body` pragma: its size, whether it is in base64, the pragma's line
Framing = tuple[int, bool, int]
_META_KEYS = ("start", "end", "client", "server")
_META_KEY_BYTES = {key.encode(): key for key in _META_KEYS}
#: the pragmas, notes and blank lines between a block header and its request
_PREAMBLE_RUN = re.compile(rb"(?:#@[^\n]*+\n|# [^\n]*+\n|#\r?\n|\r?\n)*")
#: the pragmas a recorder writes first, in its order (line ends inside a value are left to the loop)
_USUAL_PRAGMAS = re.compile(rb"#@ start:([^\r\n]*+)\n#@ end:([^\r\n]*+)\n"
                            rb"#@ client:([^\r\n]*+)\n#@ server:([^\r\n]*+)\n")


class Preamble:
    """What stands between a block header and its request."""

    def __init__(self) -> None:
        self.meta: ExchangeMeta | None = None
        self.framing: dict[str, Framing] = {}
        self.times: list[float | None] = []
        self.notes: list[str] = []


def read_block_preamble(source: Source, error: Error) -> Preamble:
    """The preamble of the block at ``source`` (past its header), consumed."""
    first_line = source.line
    return parse_preamble(source.take_run(_PREAMBLE_RUN), first_line, error)

def parse_preamble(run: bytes, first_line: int, error: Error) -> Preamble:
    """The pragmas and notes of a block's preamble (``run``, from line ``first_line``)."""
    usual = _USUAL_PRAGMAS.match(run)
    if usual is None:
        values: dict = {"start": None, "end": None, "client": None, "server": None, "redacted": [], "extra": []}
    else:  # what a recorder writes first, in one match
        start, end, client, server = usual.groups()
        values = {"start": _text(start).strip(), "end": _text(end).strip(), "client": _text(client).strip(),
                  "server": _text(server).strip(), "redacted": [], "extra": []}
        run, first_line = run[usual.end():], first_line + 4
    preamble = Preamble()
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
            raise error("a pragma line (#@ key: value)", line=first_line + offset, found=line)
        key, value = _text(pragma.group(1)), _text(pragma.group(2)).strip()
        if key in _META_KEYS:
            values[key] = value
        elif key == "redacted":
            values["redacted"].extend(v.strip() for v in value.split(",") if v.strip())
        elif key in ("request-body", "response-body"):
            preamble.framing[key] = _body_framing(value, first_line + offset, error)
        elif key == "event-times":
            preamble.times = _event_times(value, first_line + offset, error)
        else:
            values["extra"].append((key, value))
    preamble.meta = built(ExchangeMeta, values)
    return preamble

def _body_framing(value: str, line: int, error: Error) -> Framing:
    match = syntax.BODY_FRAMING.match(value)
    if match is None:
        raise error("a body length such as '812 bytes' or '96 bytes base64'",
                          line=line, found=value)
    return int(match.group(1)), bool(match.group(2)), line

def _event_times(value: str, line: int, error: Error) -> list[float | None]:
    times: list[float | None] = []
    for item in value.split():
        if item == "-":
            times.append(None)
            continue
        try:
            times.append(float(item))
        except ValueError:
            raise error("event times in seconds, such as '0.039 0.078'",
                              line=line, found=item) from None
    return times


def _text(value: bytes) -> str:
    return value.decode("utf-8", "surrogateescape")
