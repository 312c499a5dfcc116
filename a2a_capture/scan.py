"""Find the secrets a capture, HAR or mitmproxy flow file still holds: for CI before artifacts
are uploaded, and for a pre-commit hook on committed captures.

Each exchange is masked by the redaction policy, as every output masks it, and every place the
policy replaced is reported (file and line, the exchange, where, what kind), never the value.
A capture recorded with the default redaction holds only markers, so it has none.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass

from a2a_capture.capture.models import Exchange
from a2a_capture.redact.mask import Masker
from a2a_capture.sources import exchanges


@dataclass(frozen=True)
class Hit:
    """One secret's place: never its value."""

    file: str
    line: int | None
    flow: int | None
    exchange: str
    place: str  # `request header X-Api-Key`, `response body $.result.token`, `note`
    kind: str  # what the policy saw: `by name`, or a shape (`jwt`, `bearer credentials`, `github token`)

    def text(self) -> str:
        where = f"{self.file}:{self.line}:" if self.line is not None else \
            f"{self.file}: flow {self.flow}:" if self.flow is not None else f"{self.file}:"
        return f"{where} exchange {self.exchange}: {self.place} ({self.kind})"


def scan(paths: list[str]) -> Iterator[Hit]:
    """Every secret the policy in force finds in these files, exchange by exchange, in order."""
    for path in paths:
        file = os.fspath(path)
        masker = Masker(b"a2a-capture scan")  # the markers are thrown away: any key does
        for exchange in exchanges(file):
            yield from _exchange_hits(masker, file, exchange)


def _exchange_hits(masker: Masker, file: str, exchange: Exchange) -> Iterator[Hit]:
    redactor = masker.redactor
    side = "webhook request" if exchange.webhook else "request"
    seen: dict[tuple[str, str], None] = {}
    parts = [(side, exchange.model_copy(update={"response": None, "late_body": b""}))]
    if exchange.response is not None or exchange.late_body:
        response_only = exchange.model_copy(update={
            "request": exchange.request.model_copy(update={"headers": [], "body": b"", "target": "/"})})
        parts.append(("response", response_only))
    for label, part in parts:
        redactor.found.clear()
        masker.exchange(part.model_copy(update={"notes": [], "response_notes": [], "trailing_notes": [],
                                                "title": ""}))
        for place, kind in redactor.found:
            name = place.rsplit(" ", 1)[-1].rsplit(".", 1)[-1].removesuffix("[]")
            by_name = kind == place or kind.lower() == name.lower()
            seen[(f"{label} {place}", "by name" if by_name else kind)] = None
    for field in ("title", "notes", "response_notes", "trailing_notes"):
        written = getattr(exchange, field)
        for text in [written] if isinstance(written, str) else written:
            for kind in redactor.text(text)[1] if text else []:
                seen[("title" if field == "title" else "note", kind)] = None
    for place, kind in seen:
        yield Hit(file, exchange.line, exchange.flow, exchange.label, place, kind)
