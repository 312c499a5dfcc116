"""Checks a decoded document (HAR JSON, a mitmproxy flow record) against a table of the member types a
converter relies on, so a member of the wrong type is named by its exact JSON path, never met later
as a crash deep inside the conversion."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from a2a_capture.capture import syntax


class ShapeError(ValueError):
    """A member is missing or of the wrong type: ``path`` says which, ``expected`` what it should be."""

    def __init__(self, path: Path, expected: str, found: str, wrong_kind: bool = True) -> None:
        #: the value is not of the kind expected at all (so another choice of a OneOf may fit it)
        self.wrong_kind = wrong_kind
        self.path, self.expected, self.found = path_text(path), expected, found
        super().__init__(f"{self.path}: expected {expected}, found {found}")


#: where a value is: its JSON path as text ("$", "$.log.entries[3]"), or (the path of the object or list
#: holding it, its member's name or its index), as a check goes down: written out only when an error names it
Path = str | tuple


def path_text(path: Path) -> str:
    """A ``Path`` written out: ``$.log.entries[3].request``."""
    if isinstance(path, str):
        return path
    holder, step = path
    return f"{path_text(holder)}[{step}]" if isinstance(step, int) else member(path_text(holder), step)


@dataclass(frozen=True)
class Leaf:
    types: tuple[type, ...]
    name: str

    def check(self, value, path: Path) -> None:
        if not isinstance(value, self.types) or (isinstance(value, bool) and bool not in self.types):
            raise ShapeError(path, self.name, describe(value))


@dataclass(frozen=True)
class OneOf:
    choices: tuple

    @property
    def name(self) -> str:
        return " or ".join(choice.name for choice in self.choices)

    def check(self, value, path: Path) -> None:
        for choice in self.choices:
            if choice is NULL and value is None:
                return
        for choice in self.choices:
            try:
                choice.check(value, path)
                return
            except ShapeError as error:
                if error.path != path_text(path) or not error.wrong_kind:  # the right kind of value, wrong inside
                    raise
        raise ShapeError(path, self.name, describe(value))


@dataclass(frozen=True)
class Obj:
    members: dict = field(hash=False)
    required: frozenset = frozenset()
    name: str = "an object"

    def check(self, value, path: Path) -> None:
        if not isinstance(value, dict):
            raise ShapeError(path, self.name, describe(value))
        for key in self.required:
            if key not in value:
                raise ShapeError((path, key), self.members[key].name, "no such member")
        for key, schema in self.members.items():
            if key in value:
                schema.check(value[key], (path, key))


@dataclass(frozen=True)
class ListOf:
    item: object

    @property
    def name(self) -> str:
        return "a list"

    def check(self, value, path: Path) -> None:
        if not isinstance(value, list | tuple):
            raise ShapeError(path, f"a list, each item {self.item.name}", describe(value))
        for index, item in enumerate(value):
            self.item.check(item, (path, index))


@dataclass(frozen=True)
class Pair:
    first: object
    second: object

    @property
    def name(self) -> str:
        return f"a pair [{self.first.name}, {self.second.name}]"

    def check(self, value, path: Path) -> None:
        if not isinstance(value, list | tuple) or len(value) != 2:
            raise ShapeError(path, self.name, describe(value))
        self.first.check(value[0], (path, 0))
        self.second.check(value[1], (path, 1))


@dataclass(frozen=True)
class MapOf:
    """An object whose keys are numbers written as text (`"3"`), each holding ``value``."""

    value: object
    name: str = "an object keyed by numbers"

    def check(self, value, path: Path) -> None:
        if not isinstance(value, dict):
            raise ShapeError(path, self.name, describe(value))
        for key, item in value.items():
            if not isinstance(key, str) or not key.isascii() or not key.isdigit() or len(key) > 9:
                raise ShapeError((path, str(key)), "a key that is a number", repr(key)[:40])
            self.value.check(item, (path, key))


@dataclass(frozen=True)
class Text:
    """A string that stands for bytes: Unicode, or bytes kept as `\\udcXX` (how captures keep bytes
    that are not UTF-8); JSON can also carry a lone surrogate such as `\\ud800`, which stands for nothing."""

    name: str = "a string"

    def check(self, value, path: Path) -> None:
        if not isinstance(value, str):
            raise ShapeError(path, self.name, describe(value))
        if not value.isascii():
            try:
                value.encode("utf-8", "surrogateescape")
            except UnicodeEncodeError as error:
                raise ShapeError(path, "text", f"a lone surrogate {value[error.start]!r} at "
                                 f"character {error.start}", wrong_kind=False) from None


STRING = Text()


@dataclass(frozen=True)
class Matching:
    """Text or bytes of a given form: an HTTP method or header name (a token), a header value (no
    line break), which a capture's own reader would insist on too."""

    pattern: object  # a compiled regular expression, for str or for bytes
    name: str

    def check(self, value, path: Path) -> None:
        if not isinstance(value, type(self.pattern.pattern)):
            raise ShapeError(path, self.name, describe(value))
        if isinstance(value, str):
            STRING.check(value, path)
        if not self.pattern.fullmatch(value):
            raise ShapeError(path, self.name, describe(value), wrong_kind=False)
BYTES = Leaf((bytes,), "bytes")
INTEGER = Leaf((int,), "an integer")
NUMBER = Leaf((int, float), "a number")
BOOLEAN = Leaf((bool,), "true or false")
NULL = Leaf((type(None),), "null")
ANY = Leaf((object,), "anything")
STRINGS = ListOf(STRING)


def optional(schema) -> OneOf:
    return OneOf((schema, NULL))


def obj(members: dict, required: str = "", name: str = "an object") -> Obj:
    """An object with these members, of which those named in ``required`` (space separated) must be there."""
    return Obj(members, frozenset(required.split()), name)


def member(path: str, key: str) -> str:
    if key.isidentifier():
        return f"{path}.{key}"
    return f"{path}[{key!r}]".replace("'", '"') if '"' not in key else f"{path}[{key!r}]"


def describe(value) -> str:
    """What a value is, in the words of JSON, with a short view of it."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int) and value.bit_length() > 64:
        return "a huge number"
    if isinstance(value, int | float):
        return f"a number ({value!r})"
    if isinstance(value, str):
        return f"a string ({_short(value)})"
    if isinstance(value, bytes):
        return f"bytes ({_short(value)})"
    if isinstance(value, dict):
        return "an object"
    if isinstance(value, list | tuple):
        return "a list"
    return type(value).__name__


def _short(value) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "…"


@dataclass(frozen=True)
class Range:
    """A number from ``low`` to ``high``: a timestamp a calendar can hold, a port, a status."""

    low: float
    high: float
    name: str
    integer: bool = False

    def check(self, value, path: Path) -> None:
        kinds = int if self.integer else int | float
        if isinstance(value, bool) or not isinstance(value, kinds) or not self.low <= value <= self.high:
            raise ShapeError(path, self.name, describe(value))


@dataclass(frozen=True)
class Address:
    """A network address as mitmproxy keeps it: [host, port], or [host, port, flowinfo, scope] for IPv6."""

    name: str = "an address [host, port]"

    def check(self, value, path: Path) -> None:
        if not isinstance(value, list | tuple) or len(value) not in (2, 4):
            raise ShapeError(path, self.name, describe(value))
        STRING.check(value[0], (path, 0))
        PORT.check(value[1], (path, 1))
#: the N of `### N` (the capture's reader takes any digits; 0 included)
EXCHANGE_NUMBER = Range(0, float("inf"), "an exchange number (an integer, 0 or more)", integer=True)
PORT = Range(0, 65535, "a port (0 to 65535)")


#: the forms a capture's reader insists on (h11's), so what a converter reads it can also write
_TOKEN = r"[-!#$%&'*+.^_`|~0-9A-Za-z]+"
#: a request line that starts with '#' reads as a note in a capture
METHOD = Matching(re.compile("(?!#)" + _TOKEN), "an HTTP method (a token such as POST, not starting with '#')")
HEADER_NAME = Matching(re.compile(":?" + _TOKEN), "a header name (a token)")
HEADER_VALUE = Matching(re.compile(r"[^\x00\n\r\x0b\x0c]*"), "a header value (no line break or NUL)")
REASON = Matching(HEADER_VALUE.pattern, "a reason phrase (no line break or NUL)")
PRAGMA_PAIRS = ListOf(Pair(Matching(syntax.PRAGMA_KEY, "a #@ key (letters, digits, '-', '_' or '.')"), STRING))
METHOD_BYTES, HEADER_NAME_BYTES, HEADER_VALUE_BYTES, REASON_BYTES = (
    Matching(re.compile(text.pattern.pattern.encode()), text.name.replace(" (", " as bytes (", 1))
    for text in (METHOD, Matching(re.compile(_TOKEN), HEADER_NAME.name), HEADER_VALUE, REASON))
