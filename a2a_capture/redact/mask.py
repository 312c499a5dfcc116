"""Keep secrets out of what the tool writes: mask an exchange by the policy, as the recorder does.

A capture can hold secrets in clear (recorded with --no-redact, written by hand, a HAR from
a browser, a mitmproxy flow). Every output shows the policy's markers instead
(a2a_capture.redact), with the same keyed hashes, so equal secrets stay recognisable within
one output. Every value masked is also remembered, so text built from the raw capture
elsewhere (a finding's message, a note) can be scrubbed of it, besides what the policy finds
in that text by shape.
"""

from __future__ import annotations

import hashlib

from pydantic import BaseModel

from a2a_capture.capture.models import Exchange, Message
from a2a_capture.redact import Redactor
from a2a_capture.redact import grpc as redact_grpc

#: secrets shorter than this are not searched for in free text (too likely to be ordinary words)
_MIN_SCRUB = 6
#: distinct finding and call words a masker remembers masked, at most (``Masker.words``): a session
#: has a few agents and most of its findings' sentences recur; past this, words are masked each time
MAX_WORDS = 4096


class Masker:
    """Masks exchanges with one session key and remembers each value it hid."""

    def __init__(self, key: bytes | None = None, files: list[str] | None = None) -> None:
        self.redactor = _Remembering(key, files)
        #: each finding or call word masked (``words``), while the secrets remembered were ``_words_seen``
        self._words: dict[str, str] = {}
        self._words_seen = 0

    @classmethod
    def for_files(cls, files: list[str]) -> Masker:
        """A masker keyed by the captures themselves, so the same input makes the same output.

        The key cannot be had without the captures, and whoever has them has the secrets. It is
        worked out when the first secret is found: most outputs of most captures need none.
        """
        return cls(files=[str(file) for file in files])

    def exchange(self, exchange: Exchange) -> Exchange:
        """A copy with secrets masked; its ``meta.redacted`` names what was, as the recorder's does.
        An exchange with nothing to mask is given back as it is."""
        removed: list[str] = []
        notes: list[str] = []
        redactor = self.redactor
        request = self._message(exchange.request, removed, notes, exchange.request.target, "request")
        target, gone = redactor.target(exchange.request.target)
        removed += gone
        update: dict = {}
        if request is not exchange.request or target != exchange.request.target:
            update["request"] = request.model_copy(update={"target": target})
        if exchange.response is not None:
            response = self._message(exchange.response, removed, notes, exchange.request.target, "response")
            if response is not exchange.response:
                update["response"] = response
        if exchange.late_body:
            body, gone = redactor.body(exchange.late_body, "text/event-stream", notes)
            if gone:
                removed += gone
                update["late_body"] = body
        for field in ("notes", "response_notes", "trailing_notes"):
            written = getattr(exchange, field)
            cleaned = [self.text(note) for note in written]
            if cleaned != written:
                update[field] = cleaned
        title = self.text(exchange.title) if exchange.title else exchange.title
        if title != exchange.title:
            update["title"] = title
        if not update:
            return exchange
        if notes:
            update["notes"] = [*update.get("notes", exchange.notes), *notes]
        if removed:
            names = list(dict.fromkeys([*exchange.meta.redacted, *removed]))
            update["meta"] = exchange.meta.model_copy(update={"redacted": names})
        masked = exchange.model_copy(update=update)
        masked.__dict__.pop("late_events", None)  # parsed from the body before masking: parse again
        masked.line = exchange.line
        return masked

    def _message(self, message: Message, removed: list[str], notes: list[str], target: str,
                 direction: str) -> Message:
        redactor = self.redactor
        headers, gone = redactor.headers(list(message.headers))
        removed += gone
        update: dict = {}
        if gone:
            update["headers"] = headers
        if message.body_size and message.is_grpc:
            body, gone = redact_grpc.redact(redactor, target, direction, message.body)
            if gone:
                removed += gone
                update["body"], update["grpc_views"] = body, []
        elif message.body_size:  # a body kept in its file is passed as it is: a stream is masked in windows
            new_headers, body, gone = redactor.message(headers, message.stored, notes)
            if gone:
                removed += gone
                update["headers"], update["body"] = new_headers, body
        trailers = getattr(message, "trailers", None)
        if trailers:
            cleaned, gone = redactor.headers(list(trailers))
            if gone:
                removed += gone
                update["trailers"] = cleaned
        if not update:
            return message
        copy = message.model_copy(update=update)
        copy.__dict__.pop("events", None)
        return copy

    def finding(self, finding):
        """A finding with secrets masked in its words (they quote the raw capture: a card's URL, a
        header); the finding itself when there are none."""
        update = self._masked_fields(finding, ("message", "agent", "agent_name"))
        return finding.model_copy(update=update) if update else finding

    def call(self, record):
        """An analysis's call record (analyze --format json) with secrets masked in its strings."""
        update = self._masked_fields(record, ("agent", "error", "task_id"))
        if record.card:
            card = self.document(record.card)
            if card != record.card:
                update["card"] = card
        return record.model_copy(update=update) if update else record

    def _masked_fields(self, record, fields: tuple[str, ...]) -> dict[str, str]:
        """The string ``fields`` of ``record`` whose masked text differs: a model_copy update."""
        update = {}
        for field in fields:
            value = getattr(record, field)
            if value:
                cleaned = self.words(value)
                if cleaned != value:
                    update[field] = cleaned
        return update

    def words(self, text: str) -> str:
        """``text`` (a finding's or a call record's words: its message, agent, name) masked, each
        distinct one masked once while the secrets remembered stay the same: a session's findings
        name the same few agents, and most of their sentences recur. Masking is a function of the
        text and the secrets remembered (the key, once worked out, stays), so a secret remembered
        since makes every word be masked again."""
        self._forget_words_if_new_secrets()
        masked = self._words.get(text)
        if masked is None:
            masked = self.text(text)
            self._forget_words_if_new_secrets()  # it found a secret: the words held may hold it
            if len(self._words) < MAX_WORDS:
                self._words[text] = masked
        return masked

    def _forget_words_if_new_secrets(self) -> None:
        """Drop the words masked so far once a secret has been remembered since: they were masked without it."""
        if len(self.redactor.seen) != self._words_seen:
            self._words.clear()
            self._words_seen = len(self.redactor.seen)

    def model(self, value, skip: frozenset[str] = frozenset()):
        """``value`` (a pydantic model, list, tuple, dict or string: a report's view of a session)
        with every string masked, fields named in ``skip`` left as they are; what holds no secret
        is given back as it is."""
        if isinstance(value, str):
            return self.text(value)
        if isinstance(value, BaseModel):
            update = {}
            for name in type(value).model_fields:
                if name not in skip:
                    old = getattr(value, name)
                    new = self.model(old, skip)
                    if new is not old:
                        update[name] = new
            return value.model_copy(update=update) if update else value
        if isinstance(value, (list, tuple)):
            items = [self.model(item, skip) for item in value]
            changed = any(new is not old for new, old in zip(items, value, strict=True))
            return (items if isinstance(value, list) else tuple(items)) if changed else value
        if isinstance(value, dict):
            items = {key: self.model(item, skip) for key, item in value.items()}
            return items if any(items[key] is not value[key] for key in value) else value
        return value

    def document(self, value):
        """Plain data (a dict made from the capture) with secrets masked by name and shape."""
        cleaned, places = self.redactor.document(value)
        return cleaned if places else value

    def text(self, text: str) -> str:
        """``text`` with every secret this masker has seen, and every one the policy finds in
        it by shape, replaced by its marker."""
        if not text:
            return text
        for secret, marker in self.redactor.seen.items():
            if secret in text:
                text = text.replace(secret, marker)
        cleaned, _ = self.redactor.text(text)
        return cleaned


class _Remembering(Redactor):
    """The policy's redactor, remembering each value it hid; keyed by ``files`` (worked out at its
    first marker) when no key is given."""

    def __init__(self, key: bytes | None = None, files: list[str] | None = None) -> None:
        super().__init__(key)
        self._files = files if key is None and files is not None else None
        self.seen: dict[str, str] = {}

    def digest(self, value: str) -> str:
        if self._files is not None:
            self.key, self._files = _key_of(self._files), None
        return super().digest(value)

    def marker(self, what: str, value: str) -> str:
        marker = super().marker(what, value)
        if len(value) >= _MIN_SCRUB:
            self.seen.setdefault(value, marker)
        return marker


def _key_of(files: list[str]) -> bytes:
    digest = hashlib.sha256(b"a2a-capture report masking\0")
    for file in files:
        try:
            with open(file, "rb") as stream:
                for chunk in iter(lambda: stream.read(1 << 20), b""):
                    digest.update(chunk)
        except OSError:  # not a local file (an object-store URL): its name keys it
            digest.update(file.encode("utf-8", "surrogateescape"))
        digest.update(b"\0")
    return digest.digest()[:16]
