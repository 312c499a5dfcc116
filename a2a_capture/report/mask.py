"""Keep credentials out of reports: mask an exchange the way the recorder does.

A capture can hold secrets in clear (recorded with --no-redact, written by hand, a HAR from
a browser). Reports and `tidy` show the recorder's markers instead, with the same keyed
hashes, so equal secrets stay recognisable within one report. Every value masked is also
remembered, so text built from the raw capture elsewhere (a finding's message) can be
scrubbed of it.
"""

from __future__ import annotations

import hashlib

from a2a_capture.capture.models import Exchange, Message
from a2a_capture.record.redact import Redactor

#: secrets shorter than this are not searched for in free text (too likely to be ordinary words)
_MIN_SCRUB = 6


class Masker:
    """Masks exchanges with one session key and remembers each value it hid."""

    def __init__(self, key: bytes | None = None) -> None:
        self.redactor = _Remembering(key)

    @classmethod
    def for_files(cls, files: list[str]) -> Masker:
        """A masker keyed by the captures themselves, so the same input makes the same report.

        The key cannot be had without the captures, and whoever has them has the secrets.
        """
        digest = hashlib.sha256(b"a2a-capture report masking\0")
        for file in files:
            with open(file, "rb") as stream:
                for chunk in iter(lambda: stream.read(1 << 20), b""):
                    digest.update(chunk)
            digest.update(b"\0")
        return cls(digest.digest()[:16])

    def exchange(self, exchange: Exchange) -> Exchange:
        """A copy with credentials masked; its ``meta.redacted`` names what was, as the recorder's does."""
        removed: list[str] = []
        request = self._message(exchange.request, removed)
        target, gone = self.redactor.target(exchange.request.target)
        removed += gone
        update: dict = {"request": request.model_copy(update={"target": target})}
        if exchange.response is not None:
            update["response"] = self._message(exchange.response, removed)
        if exchange.late_body:
            body, gone = self.redactor.body(exchange.late_body, "text/event-stream")
            removed += gone
            update["late_body"] = body
        if removed:
            names = list(dict.fromkeys([*exchange.meta.redacted, *removed]))
            update["meta"] = exchange.meta.model_copy(update={"redacted": names})
        masked = exchange.model_copy(update=update)
        masked.__dict__.pop("late_events", None)  # parsed from the body before masking: parse again
        masked.line = exchange.line
        return masked

    def _message(self, message: Message, removed: list[str]) -> Message:
        headers, gone = self.redactor.headers(list(message.headers))
        removed += gone
        update: dict = {"headers": headers}
        if message.body:
            content = message.content
            body, gone = self.redactor.body(content, message.content_type)
            removed += gone
            if body is not content or content is not message.body:
                if content is not message.body:  # masked in its decoded form, so shown decoded
                    update["headers"] = [(k, v) for k, v in headers if k.lower() != "content-encoding"]
                update["body"] = body
        copy = message.model_copy(update=update)
        copy.__dict__.pop("events", None)
        return copy

    def text(self, text: str) -> str:
        """``text`` with every secret this masker has seen replaced by its marker."""
        for secret, marker in self.redactor.seen.items():
            if secret in text:
                text = text.replace(secret, marker)
        return text


class _Remembering(Redactor):
    def __init__(self, key: bytes | None = None) -> None:
        super().__init__(key)
        self.seen: dict[str, str] = {}

    def marker(self, what: str, value: str) -> str:
        marker = super().marker(what, value)
        if len(value) >= _MIN_SCRUB:
            self.seen.setdefault(value, marker)
        return marker
