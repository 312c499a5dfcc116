"""Keep secrets out of captures: credentials in headers, query strings and JSON bodies.

A redacted value is replaced by a marker that says what was removed, with a short keyed
hash, so equal secrets stay recognisable within a session (the same token on two calls)
while the value itself cannot be recovered or guessed offline without the session key.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import re
import secrets
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

from a2a_capture import nesting

#: headers that always carry credentials
SECRET_HEADERS = frozenset({
    "authorization", "proxy-authorization", "cookie", "set-cookie", "x-a2a-notification-token",
    "x-api-key", "api-key", "apikey", "x-auth-token", "x-access-token", "x-goog-api-key",
})
#: other header names that look like they carry credentials
SECRET_HEADER_NAME = re.compile(r"(?i)(?:^|[-_])(?:api[-_]?key|token|secret|password|credentials?)$")
#: query parameters that carry credentials
SECRET_QUERY = re.compile(r"(?i)^(?:api[-_]?key|key|token|access[-_]?token|auth|secret|password|sig|signature)$")
#: JSON members that carry credentials: push-config tokens and authentication credentials
SECRET_JSON_KEYS = frozenset({"token", "credentials", "password", "apiKey", "api_key", "accessToken",
                              "access_token", "secret", "clientSecret", "client_secret"})
#: a marker as written in a capture; ``digest`` is the keyed hash, equal for equal values in a session
MARKER = re.compile(r"\[redacted: (?P<what>[^\]]*?), sha256:(?P<digest>[0-9a-f]+)\]")
_AUTH_SCHEME = re.compile(r"^(\S+)\s+(\S.*)$")
_SECRET_KEY_BYTES = re.compile(b'"(?:' + b"|".join(re.escape(k.encode()) for k in sorted(SECRET_JSON_KEYS))
                               + rb')"\s*:')


class Redactor:
    """Redacts with one key per session, so markers match within it and nowhere else."""

    def __init__(self, key: bytes | None = None) -> None:
        self.key = key or secrets.token_bytes(16)

    def digest(self, value: str) -> str:
        return hmac.new(self.key, value.encode("utf-8", "surrogateescape"), hashlib.sha256).hexdigest()[:6]

    def marker(self, what: str, value: str) -> str:
        return f"[redacted: {what}, sha256:{self.digest(value)}]"

    # -- headers ---------------------------------------------------------------------------------

    def headers(self, headers: list[tuple[str, str]]) -> tuple[list[tuple[str, str]], list[str]]:
        result, removed = [], []
        for name, value in headers:
            lower = name.lower()
            if lower in SECRET_HEADERS or SECRET_HEADER_NAME.search(lower):
                result.append((name, self._header_value(lower, value)))
                removed.append(f"header {name}")
            else:
                result.append((name, value))
        return result, removed

    def _header_value(self, name: str, value: str) -> str:
        if name in ("authorization", "proxy-authorization"):
            match = _AUTH_SCHEME.match(value)
            if match:  # keep the scheme: "Bearer [redacted: …]" still tells how the client authenticated
                return f"{match.group(1)} {self.marker(match.group(1).lower() + ' credentials', match.group(2))}"
        if name in ("cookie", "set-cookie"):
            return "; ".join(self._cookie(part) for part in value.split(";"))
        return self.marker(name, value)

    def _cookie(self, part: str) -> str:
        name, sep, value = part.strip().partition("=")
        if not sep:
            return part.strip()
        if name.lower() in ("path", "domain", "expires", "max-age", "samesite"):
            return part.strip()
        return f"{name}={self.marker('cookie ' + name, value)}"

    # -- the request target ----------------------------------------------------------------------

    def target(self, target: str) -> tuple[str, list[str]]:
        try:
            parts = urlsplit(target)
        except ValueError:  # a malformed IPv6 host: nothing to take out of a target that is not a URL
            return target, []
        if not parts.query:
            return target, []
        pairs = parse_qsl(parts.query, keep_blank_values=True)
        removed = [f"query {name}" for name, _ in pairs if SECRET_QUERY.match(name)]
        if not removed:
            return target, []
        cleaned = [(name, self.marker("query " + name, value) if SECRET_QUERY.match(name) else value)
                   for name, value in pairs]
        return urlunsplit(parts._replace(query=urlencode(cleaned, safe="[]:,"))), removed

    # -- bodies ----------------------------------------------------------------------------------

    def body(self, body: bytes, content_type: str) -> tuple[bytes, list[str]]:
        """Replace secret JSON values in a JSON body or in the data of SSE frames, in place.

        The body keeps its own formatting: each secret's JSON text is replaced where it
        stands, so a compact body stays compact and a pretty one stays pretty.
        """
        if not body or not ("json" in content_type or content_type == "text/event-stream"):
            return body, []
        if not _SECRET_KEY_BYTES.search(body):  # most bodies hold no secret member: skip parsing them
            return body, []
        documents = []
        if content_type == "text/event-stream":
            for line in body.splitlines():
                if line.startswith(b"data:"):
                    documents.append(line[5:])
        else:
            documents.append(body)
        found: dict[str, str] = {}
        for document in documents:
            try:
                value = nesting.loads(document)
            except (ValueError, UnicodeDecodeError):
                continue
            for path, secret in _secret_values(value, "$"):
                found.setdefault(secret, path)
        if not found:
            return body, []
        text = body.decode("utf-8", "surrogateescape")
        for secret, path in found.items():
            encoded = json.dumps(secret)
            replacement = json.dumps(self.marker(path.rsplit(".", 1)[-1], secret))
            text = text.replace(encoded, replacement)
            ascii_encoded = json.dumps(secret, ensure_ascii=False)
            if ascii_encoded != encoded:
                text = text.replace(ascii_encoded, replacement)
        return text.encode("utf-8", "surrogateescape"), sorted({f"body {path}" for path in found.values()})


def _secret_values(value, path: str, depth: int = 0):
    """(JSON path, string) for every secret member, wherever it is nested."""
    if depth > 32:
        return
    if isinstance(value, dict):
        for key, child in value.items():
            where = f"{path}.{key}"
            if key in SECRET_JSON_KEYS and isinstance(child, str) and child and not child.startswith("[redacted"):
                yield where, child
            else:
                yield from _secret_values(child, where, depth + 1)
    elif isinstance(value, list):
        for child in value:
            yield from _secret_values(child, f"{path}[]", depth + 1)
