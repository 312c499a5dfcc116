"""A HAR file's exchanges read an entry at a time: the memory of its largest entry, not of the file.

A HAR is one JSON document, and what a reader needs of it comes in no set order: the entries are
converted in the order they started (``startedDateTime``), and the creator that says whether the
file is a2a-capture's own may follow them. So it is read twice: once to check it and note each
entry's start, line and place, keeping none of them, then again to convert each entry as it is
decoded. Each entry is parsed by the same C decoder as ``json.loads`` (so numbers, duplicate keys
and escapes read as they always have), from a window of the file that holds one entry at a time.

Anything out of the ordinary in the first reading (bad JSON, bytes that are not UTF-8, nesting
near the limit, a shape that is not HAR's, a member given twice) sends the file to the whole-
document reader (``har.har_to_capture``), which says what is wrong as it always has.
"""

from __future__ import annotations

import codecs
import json
from collections.abc import Iterator
from typing import NamedTuple

from pydantic import ValidationError

from a2a_capture import nesting
from a2a_capture.capture.models import Exchange
from a2a_capture.convert.har import ENTRY, HAR, ConvertError, _exchange, har_to_capture
from a2a_capture.convert.shape import ShapeError
from a2a_capture.errors import one_line

_CHUNK = 1 << 20
_SPACE = " \t\n\r"
#: the levels above an entry (the document, log, entries): an entry may nest this many fewer
_ABOVE_ENTRY = 3


class _Unusual(Exception):
    """The first reading met something only the whole-document reader words right."""


class _Place(NamedTuple):
    started: str  # its startedDateTime, as the whole-document reader sorts by it
    index: int
    line: int  # the line it starts on
    offset: int  # its first byte in the file
    length: int  # its bytes


class _Window:
    """The file's text from a moving start, read a chunk at a time; ``line`` counts the newlines
    before ``pos`` and ``offset`` its byte in the file, as the window's start moves on."""

    def __init__(self, stream) -> None:
        self._stream = stream
        self._decoder = codecs.getincrementaldecoder("utf-8")("strict")
        self.text, self.pos, self.ended = "", 0, False
        self.line, self.offset = 1, 0  # at self.pos
        if stream.read(3) == codecs.BOM_UTF8:
            self.offset = 3
        else:
            stream.seek(0)

    def _more(self) -> bool:
        """Read on: as much again as the window holds, so a long entry is read in linear time."""
        if self.ended:
            return False
        raw = self._stream.read(max(_CHUNK, len(self.text) - self.pos))
        try:
            text = self._decoder.decode(raw, final=not raw)
        except UnicodeDecodeError:
            raise _Unusual from None
        self.ended = not raw
        self.text = self.text[self.pos:] + text
        self.pos = 0
        return True

    def advance(self, to: int) -> None:
        """Move ``pos`` to ``to``, counting the lines and bytes passed."""
        passed = self.text[self.pos:to]
        self.line += passed.count("\n")
        self.offset += len(passed.encode("utf-8"))
        self.pos = to

    def skip_space(self) -> str:
        """The next character after white space ('' at the end of the file)."""
        while True:
            text, pos = self.text, self.pos
            while pos < len(text) and text[pos] in _SPACE:
                pos += 1
            self.advance(pos)
            if pos < len(self.text):
                return self.text[pos]
            if not self._more():
                return ""

    def expect(self, char: str) -> None:
        if self.skip_space() != char:
            raise _Unusual
        self.advance(self.pos + 1)

    def value(self, decoder: json.JSONDecoder, above: int) -> object:
        """The JSON value at ``pos`` (after white space), ``above`` levels deep in the document;
        more is read until it ends, and ``pos`` moved past it."""
        self.skip_space()
        while True:
            try:
                value, end = decoder.raw_decode(self.text, self.pos)
            except json.JSONDecodeError:
                if self._more():
                    continue
                raise _Unusual from None
            except (ValueError, RecursionError):
                raise _Unusual from None
            if end == len(self.text) and not self.ended and self._more():
                continue  # a number may go on in the next chunk
            try:  # as deep as the whole document nests it
                nesting.check_json("[" * above + self.text[self.pos:end] + "]" * above)
            except nesting.TooDeep:
                raise _Unusual from None
            self.advance(end)
            return value

    def key(self) -> str:
        key = self.value(json.JSONDecoder(), 2)
        if not isinstance(key, str):
            raise _Unusual
        self.expect(":")
        return key


class HarReader:
    """A HAR file's exchanges, each made as its entry is read again (``__iter__``); the notes and
    pragmas the capture carries (``notes``, ``meta``) known once it is made."""

    def __init__(self, path: str) -> None:
        self.path = path
        self._whole = None
        try:
            with open(path, "rb") as stream:
                self._places, log = self._survey(stream)
        except _Unusual:
            self._whole = self._read_whole()
            self.notes, self.meta = self._whole.notes, self._whole.meta
            return
        except OSError as error:
            raise ConvertError(f"cannot read {path}: {error.strerror or error}") from None
        creator = (log.get("creator") or {}).get("name")
        self._foreign = creator != "a2a-capture"
        self.notes = list(log.get("_a2aNotes") or [])
        given = log.get("_a2aMeta")
        self.meta = [tuple(pair) for pair in given] if given is not None else [("format", "a2a-capture/1")]
        if self._foreign:
            self.notes.append(f"converted from HAR written by {creator or 'an unknown tool'}")

    def _read_whole(self):
        try:
            with open(self.path, "rb") as stream:
                data = stream.read()
        except OSError as error:
            raise ConvertError(f"cannot read {self.path}: {error.strerror or error}") from None
        return har_to_capture(data, self.path)

    @staticmethod
    def _survey(stream) -> tuple[list[_Place], dict]:
        """The first reading: the document checked as the whole-document reader checks it, each
        entry's place noted and let go; the log's other members kept (they are small)."""
        window, decoder = _Window(stream), json.JSONDecoder()
        places: list[_Place] = []
        log: dict = {}
        seen_log = False
        window.expect("{")
        if window.skip_space() == "}":
            raise _Unusual  # no log: the whole reader says so
        while True:
            if window.key() != "log" or seen_log:
                raise _Unusual  # other top-level members are rare: left to the whole reader
            seen_log = True
            window.expect("{")
            if window.skip_space() == "}":
                raise _Unusual
            while True:
                key = window.key()
                if key in log or (key == "entries" and places):
                    raise _Unusual  # a member given twice: the last counts, as the whole reader has it
                if key == "entries":
                    log["entries"] = []
                    places = HarReader._entries(window, decoder)
                else:
                    log[key] = window.value(decoder, 2)
                following = window.skip_space()
                window.advance(window.pos + 1)
                if following == "}":
                    break
                if following != ",":
                    raise _Unusual
            following = window.skip_space()
            window.advance(window.pos + 1)
            if following == "}":
                break
            raise _Unusual
        if window.skip_space() != "":
            raise _Unusual  # extra data after the document
        try:
            HAR.check({"log": log}, "$")
        except ShapeError:
            raise _Unusual from None
        return places, log

    @staticmethod
    def _entries(window: _Window, decoder: json.JSONDecoder) -> list[_Place]:
        places: list[_Place] = []
        window.expect("[")
        if window.skip_space() == "]":
            window.advance(window.pos + 1)
            return places
        while True:
            window.skip_space()
            line, offset = window.line, window.offset
            entry = window.value(decoder, _ABOVE_ENTRY)
            index = len(places)
            try:
                ENTRY.check(entry, f"$.log.entries[{index}]")
            except ShapeError:
                raise _Unusual from None
            places.append(_Place(str(entry.get("startedDateTime", "")), index, line, offset, window.offset - offset))
            following = window.skip_space()
            window.advance(window.pos + 1)
            if following == "]":
                return places
            if following != ",":
                raise _Unusual

    def __iter__(self) -> Iterator[Exchange]:
        if self._whole is not None:
            yield from self._whole.exchanges
            return
        ordered = sorted(self._places)  # by start, then index: the whole reader's order
        counters = {False: 0, True: 0}
        with open(self.path, "rb") as stream:
            for place in ordered:
                stream.seek(place.offset)
                entry = json.loads(stream.read(place.length).decode("utf-8"))
                path = f"$.log.entries[{place.index}]"
                webhook = bool(entry.get("_a2aWebhook"))
                counters[webhook] += 1
                try:
                    exchange = _exchange(entry, entry.get("_a2aNumber") or counters[webhook], webhook,
                                         self._foreign, path)
                except ShapeError as error:
                    raise ConvertError(f"{self.path}: {error}") from None
                except ValidationError as error:
                    raise ConvertError(f"{self.path}: {path}: expected a HAR entry ({one_line(error)})") from None
                exchange.line = place.line
                yield exchange
