"""Find secrets inside a string by shape: credentials, keys, URL userinfo, `name=value` pairs.

Each shape is tried on a text that holds its hint (one pass each), then
the `name=value` pairs whose name the policy calls secret (a URL's `?token=`, a form's
`password=`, `WWW-Authenticate`'s `token="…"`) and URL userinfo (`http://hook:SECRET@…`).
Markers already in the text are never looked into, so masking twice changes nothing.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from a2a_capture.redact import shapes
from a2a_capture.redact.policy import Policy

#: a marker as written in a capture (in a request target or form body its spaces are `+`);
#: ``digest`` is the keyed hash, equal for equal values in a session
MARKER = re.compile(r"\[redacted:[ +](?P<what>[^\]]*?),[ +]sha256:(?P<digest>[0-9a-f]+)\]")
_USERINFO = re.compile(r"\b[A-Za-z][A-Za-z0-9+.-]*://(?P<user>[^/\s:@?#\"'<>\[\]\\]*)"
                       r"(?::(?P<password>[^/\s@?#\"'<>\\]*))?@(?=[^\s/@]*[A-Za-z0-9\]])")
_PAIR = re.compile(r"(?<![\w.%-])(?P<name>[A-Za-z_][\w.-]{0,80})=(?:\"(?P<quoted>[^\"\r\n]*)\"|"
                   r"(?P<value>[^&\s#\"'<>,;\]\\]+))")
_LINE_PAIR = re.compile(r"(?m)^[ \t]*(?P<name>[A-Za-z][\w-]{0,80})[ \t]*:[ \t]*(?P<value>\S[^\r\n]*)")
_MEMBER = re.compile(r"\"(?P<name>[^\"\\\r\n]{1,80})\"\s*:\s*\"(?P<value>(?:[^\"\\\r\n]|\\.)*)\"")


@dataclass(frozen=True)
class Found:
    """A secret's place in a string: [start, end), what it is, and the name it stood under."""

    start: int
    end: int
    kind: str


class Scanner:
    """The policy's shapes and names, applied to strings."""

    def __init__(self, policy: Policy) -> None:
        self.policy = policy
        self.shapes = policy.shapes
        self._hints = [hint.lower().encode() for _, _, hint in self.shapes]
        #: each shape with whether its hint is looked for as written (it has capitals) or case-folded
        self._tries = _tries(self.shapes)

    def candidates(self, whole: bytes) -> list:
        """The shapes whose hint a whole body holds: the only ones worth trying on its strings
        (a body written with escapes may hide a hint, so it gets them all)."""
        if b"\\" in whole:
            return self.shapes
        folded = whole.lower()
        return [shape for shape, hint in zip(self.shapes, self._hints, strict=True) if not hint or hint in folded]

    def find(self, text: str, *, pairs: bool = True, lines: bool = False, only: list | None = None) -> list[Found]:
        """Secrets in ``text``, in order, none overlapping another or a marker. ``pairs``: also
        `name=value` pairs and URL userinfo; ``lines``: also `Name: value` lines and JSON-looking
        `"name": "value"` members (a text body); ``only``: only these shapes (``candidates``) are tried."""
        taken = [(m.start(), m.end()) for m in MARKER.finditer(text)] if "[redacted:" in text else []
        found: list[Found] = []
        folded = text.lower()
        for kind, pattern, hint, as_written in self._tries if only is None else _tries(only):
            if hint and hint not in (text if as_written else folded):
                continue
            for match in pattern.finditer(text):
                start, end = match.span("secret") if "secret" in pattern.groupindex else match.span()
                if shapes.plausible(kind, text, start, end):
                    found.append(Found(start, end, kind))
        if pairs and ("=" in text or "@" in text):
            found += self._pairs(text)
        if lines and ":" in text:
            found += self._lines(text)
        return _apart(found, taken) if found else found

    def _pairs(self, text: str) -> list[Found]:
        found = []
        if "@" in text:
            for match in _USERINFO.finditer(text):
                group = "password" if match.group("password") else "user" if match.group("user") else None
                if group:
                    found.append(Found(*match.span(group), "url password" if group == "password" else "url userinfo"))
        if "=" in text:
            for match in _PAIR.finditer(text):
                if self.policy.secret_name(match.group("name"), "query"):
                    group = "quoted" if match.group("quoted") is not None else "value"
                    if match.group(group):
                        found.append(Found(*match.span(group), "query " + match.group("name")))
        return found

    def _lines(self, text: str) -> list[Found]:
        found = []
        for match in _LINE_PAIR.finditer(text):
            if self.policy.secret_name(match.group("name"), "header"):
                found.append(Found(*match.span("value"), match.group("name")))
        if '"' in text:
            for match in _MEMBER.finditer(text):
                if match.group("value") and self.policy.secret_name(match.group("name"), "json"):
                    found.append(Found(*match.span("value"), match.group("name")))
        return found


def _tries(shapes: list) -> list[tuple]:
    """(kind, pattern, hint, as written): a hint with capitals is looked for as written, else in the
    text case-folded."""
    return [(kind, pattern, hint, hint.lower() != hint) for kind, pattern, hint in shapes]


def _apart(found: list[Found], taken: list[tuple[int, int]]) -> list[Found]:
    """The finds in order, each kept only when it overlaps no marker and no find kept before it
    (the earliest start wins; at one start, the longest)."""
    kept: list[Found] = []
    spans = sorted(taken)
    for item in sorted(found, key=lambda f: (f.start, -f.end)):
        if item.end <= item.start:
            continue
        if any(item.start < end and start < item.end for start, end in spans):
            continue
        if kept and item.start < kept[-1].end:
            continue
        kept.append(item)
    return kept
