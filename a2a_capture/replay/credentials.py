"""Secrets for a replay: put back where the capture has markers, and never written out again.

A recorded capture holds a marker (`[redacted: token, sha256:5b770d]`) wherever a secret was.
A replay fills each marker from a value given for that place: a header by its name
(`Authorization`), a JSON member by its path as the capture's `#@ redacted:` line spells it
(`$.params.configuration.taskPushNotificationConfig.token`), a query parameter as `?name`; or
from `A2A_CAPTURE_SECRET_<PLACE>`. Markers with the same keyed hash stood for the same value, so
a value given for one place also fills the others that had its hash.

Replay makes up what is the client's own: the token and credentials of a push config (the agent
gives them back to the client's webhook receiver, and replay runs that receiver), and any secret
in the push config's URL get fresh values, so a default recording replays without `--secret`.

Everything the replay writes goes through :meth:`Secrets.protect` first: each value that filled
a marker becomes that same marker again (same hash), wherever it shows up (a webhook's header,
an agent's echo), so the new capture compares equal to the old one and holds no secret.
"""

from __future__ import annotations

import json
import os
import re
import secrets
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

from a2a_capture import nesting
from a2a_capture.a2a import spec
from a2a_capture.capture.models import Capture, Exchange, Message
from a2a_capture.record.redact import MARKER, Redactor

ENV_PREFIX = "A2A_CAPTURE_SECRET_"


def env_name(place: str) -> str:
    """`Authorization` -> A2A_CAPTURE_SECRET_AUTHORIZATION; `$.params.x.token` -> …_PARAMS_X_TOKEN;
    `?key` -> …_QUERY_KEY."""
    if place.startswith("?"):
        place = "query " + place[1:]
    return ENV_PREFIX + re.sub(r"[^A-Z0-9]+", "_", place.upper()).strip("_")


class _Remarker(Redactor):
    """The recorder's redactor, giving a value that filled a marker that marker's own hash."""

    def __init__(self, digests: dict[str, str]) -> None:
        super().__init__()
        self.digests = digests

    def digest(self, value: str) -> str:
        return self.digests.get(value) or super().digest(value)


class Secrets:
    """The values given for redacted places, and which recorded marker each one filled."""

    def __init__(self, given: dict[str, str] | None = None, environ=None) -> None:
        self.given = dict(given or {})
        self.environ = os.environ if environ is None else environ
        self.by_digest: dict[str, str] = {}  # recorded hash -> the value that filled it
        self.used: set[str] = set()  # every value sent, to keep out of what is written
        self.made: dict[str, str] = {}  # recorded hash -> the value replay made up for it (the client's own)
        self.tokens: set[str] = set()  # push tokens replay gave the agents: its receiver checks webhooks by them

    # -- filling markers -------------------------------------------------------------------------

    def _value_for(self, place: str, marker: re.Match) -> str | None:
        header = not place.startswith(("$", "?"))
        value = self.given.get(place)
        if value is None and header:
            value = next((v for k, v in self.given.items() if k.lower() == place.lower()), None)
        if value is None:
            value = self.environ.get(env_name(place))
        if value is None:
            value = self.by_digest.get(marker.group("digest"))
        return value

    def fill(self, place: str, recorded: str, own: bool = False) -> str | None:
        """``recorded`` (a header value, member or parameter holding one marker) with the secret
        for ``place`` in it, or None when none was given. ``own``: the place is the client's own
        (a push config's), so a value is made up where none was given."""
        marker = MARKER.search(recorded)
        if marker is None:
            return recorded
        value = self._value_for(place, marker)
        if value is None and own:
            filled = MARKER.sub(lambda found: self._made_up(found), recorded)
            if place.endswith(".token"):
                self.tokens.add(filled)
            return filled
        if value is None:
            return None
        before, after = recorded[:marker.start()], recorded[marker.end():]
        self.used.add(value)
        if before and value.startswith(before) and value.endswith(after):  # given whole: "Bearer abc"
            value = value[len(before):len(value) - len(after)] if after else value[len(before):]
        elif before.endswith(" ") and " " in value.strip():  # a whole value of another scheme: as given
            return value
        self.by_digest.setdefault(marker.group("digest"), value)
        self.used.add(value)
        return before + value + after

    def _made_up(self, marker: re.Match) -> str:
        """A fresh value for a marker of the client's own, the same for the same recorded hash."""
        digest = marker.group("digest")
        value = self.by_digest.get(digest) or self.made.get(digest)
        if value is None:
            value = self.made[digest] = "a2a-replay-" + secrets.token_urlsafe(12)
            self.by_digest.setdefault(digest, value)
        self.used.add(value)
        return value

    def missing(self, exchanges: list[Exchange], operations: list[str | None]) -> list[str]:
        """The redacted places of these calls that no given value (or environment variable) fills
        and replay cannot make up: credentials the agent checks. Said before anything is sent."""
        for exchange in exchanges:  # a value given for one place fills every place with its hash
            for place, recorded in _marked_places(exchange):
                marker = MARKER.search(recorded)
                value = self.given.get(place) or self.environ.get(env_name(place))
                if value is not None and marker:
                    self.by_digest.setdefault(marker.group("digest"), value)
        missing: dict[str, list[str]] = {}
        for exchange, operation in zip(exchanges, operations, strict=True):
            for place, recorded in _marked_places(exchange):
                marker = MARKER.search(recorded)
                if marker and not own_place(place, operation) and self._value_for(place, marker) is None:
                    missing.setdefault(place, []).append(exchange.label)
        return [f"{place} (exchange{'s' if len(labels) > 1 else ''} {', '.join(labels)})"
                for place, labels in missing.items()]

    def headers(self, headers: list[tuple[str, str]]) -> tuple[list[tuple[str, str]], list[str]]:
        """Headers with markers filled; a header that cannot be filled is left out, never sent as a marker."""
        kept, dropped = [], []
        for name, value in headers:
            filled = self.fill(name, value)
            if filled is None:
                dropped.append(name)
            else:
                kept.append((name, filled))
        return kept, dropped

    def target(self, target: str) -> tuple[str, list[str]]:
        parts = urlsplit(target)
        if not MARKER.search(parts.query):
            return target, []
        kept, dropped = [], []
        for name, value in parse_qsl(parts.query, keep_blank_values=True):
            filled = self.fill("?" + name, value)
            if filled is None:
                dropped.append("?" + name)
            else:
                kept.append((name, filled))
        return urlunsplit(parts._replace(query=urlencode(kept))), dropped

    def body(self, body: bytes, operation: str | None = None) -> tuple[bytes, list[str]]:
        """A JSON body with each marked member filled by its path, those of a push config (of
        ``operation``'s body) with values made up where none was given; members that cannot be
        filled are left out."""
        if not MARKER.search(body.decode("utf-8", "replace")):
            return body, []
        try:
            data = nesting.loads(body)
        except (ValueError, UnicodeDecodeError):
            return MARKER.sub("", body.decode("utf-8", "surrogateescape")).encode("utf-8", "surrogateescape"), \
                ["the body's markers"]
        dropped: list[str] = []
        self._walk(data, "$", dropped, operation)
        return json.dumps(data, ensure_ascii=False, separators=(",", ":")).encode(), dropped

    def _walk(self, value, path: str, dropped: list[str], operation: str | None = None) -> None:
        children = value.items() if isinstance(value, dict) else enumerate(value) if isinstance(value, list) else ()
        for key, child in list(children):
            where = f"{path}.{key}" if isinstance(value, dict) else f"{path}[]"
            if isinstance(child, str) and MARKER.search(child):
                filled = self.fill(where, child, own=own_place(where, operation))
                if filled is None:
                    dropped.append(where)
                    if isinstance(value, dict):
                        del value[key]
                else:
                    value[key] = filled
            else:
                self._walk(child, where, dropped, operation)
        if isinstance(value, list):
            value[:] = [item for item in value if not (isinstance(item, str) and MARKER.search(item))]

    # -- writing out -----------------------------------------------------------------------------

    def protect(self, capture: Capture, redact: bool = True) -> Capture:
        """The capture with every secret the policy finds redacted, those the replay sent with the
        recorded hashes; ``redact`` False: only what the replay sent (given or made up) is."""
        digests = {value: digest for digest, value in self.by_digest.items()}
        redactor = _Remarker(digests)
        for exchange in capture.exchanges:
            self._protect_exchange(exchange, redactor, redact)
        return capture

    def _protect_exchange(self, exchange: Exchange, redactor: _Remarker, redact: bool) -> None:
        removed: list[str] = []
        if redact:
            exchange.request.target, found = redactor.target(exchange.request.target)
            removed += found
        for message in (exchange.request, exchange.response):
            if message is None:
                continue
            if redact:
                message.headers, found = redactor.headers(message.headers)
                removed += found
                message.headers, message.body, found = redactor.message(message.headers, message.body,
                                                                        exchange.notes)
                removed += found
            self._sweep(message, redactor)
            message.__dict__.pop("events", None)  # parsed frames follow the body
        exchange.request.target = self._sweep_text(exchange.request.target, redactor)
        exchange.notes = [self._sweep_text(note, redactor) for note in exchange.notes]
        if redact:
            exchange.notes = [redactor.text(note)[0] for note in exchange.notes]
        if removed:
            exchange.meta.redacted = sorted(set(exchange.meta.redacted) | set(removed))

    def _sweep(self, message: Message, redactor: _Remarker) -> None:
        """Any sent value still in the message (an agent quoting it elsewhere) becomes a marker too."""
        message.headers = [(name, self._sweep_text(value, redactor)) for name, value in message.headers]
        body = message.body
        for value in self._longest_first():
            raw = value.encode("utf-8", "surrogateescape")
            if raw in body:
                body = body.replace(raw, redactor.marker("secret", value).encode())
        message.body = body

    def _sweep_text(self, text: str, redactor: _Remarker) -> str:
        for value in self._longest_first():
            if value in text:
                text = text.replace(value, redactor.marker("secret", value))
        return text

    def _longest_first(self) -> list[str]:
        return sorted((v for v in self.used | set(self.given.values()) if v), key=len, reverse=True)


def own_place(place: str, operation: str | None = None) -> bool:
    """A JSON path inside a push config: the client's own secrets (its webhook's token, the
    credentials the agent presents to it, its URL's userinfo and query). A
    CreateTaskPushNotificationConfig's body is a push config whole."""
    if not place.startswith("$"):
        return False
    return operation == "CreateTaskPushNotificationConfig" or any(f".{member}" in place
                                                                    for member in spec.PUSH_CONFIG_MEMBERS)


def _marked_places(exchange: Exchange):
    """(place, recorded value) of each marker in a call: headers by name, query parameters as
    ?name, JSON members by path."""
    request = exchange.request
    for name, value in request.headers:
        if MARKER.search(value):
            yield name, value
    query = urlsplit(request.target).query
    if MARKER.search(query):
        for name, value in parse_qsl(query, keep_blank_values=True):
            if MARKER.search(value):
                yield "?" + name, value
    body = request.content
    if body and b"[redacted:" in body:
        try:
            data = nesting.loads(body)
        except (ValueError, UnicodeDecodeError):
            return
        yield from _marked_members(data, "$")


def _marked_members(value, path: str):
    children = value.items() if isinstance(value, dict) else enumerate(value) if isinstance(value, list) else ()
    for key, child in children:
        where = f"{path}.{key}" if isinstance(value, dict) else f"{path}[]"
        if isinstance(child, str):
            if MARKER.search(child):
                yield where, child
        else:
            yield from _marked_members(child, where)
