"""Which names carry secrets: a header, a query or form parameter, a JSON member.

A name is cut into words (case, `-`, `_`, `.` and camelCase all separate words:
`X-Goog-Iap-Jwt-Assertion`, `refresh_token`, `bearerToken`, `API_KEY` -> `api key`) and judged by
its last word, the head, after qualifiers such as `value` or a version number: `accessToken`
is a token, `tokenCount` a count, `tokenUrl` a URL, `maxTokens` a number. A name written as one
lowercase word (`apikey`, `accesstoken`) is judged by how it ends. The tables below are the
vocabulary; `Policy` adds a user's names and the names to keep.
"""

from __future__ import annotations

import re

#: heads that name a secret wherever they stand
SECRET_HEADS = frozenset({
    "token", "secret", "secrets", "password", "passwd", "pwd", "passphrase", "key", "apikey", "auth",
    "authorization", "authentication", "credential", "credentials", "creds", "signature", "sig", "jwt",
    "assertion", "session", "cookie", "private", "privatekey", "bearer", "otp", "verifier",
})
#: heads that name a secret only in a query string or a form body (OAuth's authorization code,
#: `code=`), and in JSON only beside OAuth's own members
OAUTH_HEADS = frozenset({"code"})
#: members that make an object an OAuth request or answer, where `code` is the authorization code
OAUTH_MEMBERS = frozenset({"grant_type", "redirect_uri", "code_verifier", "client_id", "client_secret"})
#: a name written as one lowercase word is secret when it ends with one of these (`accesstoken`)
SECRET_ENDINGS = ("token", "secret", "password", "passwd", "apikey", "credential", "credentials", "signature")
#: words after the head that still name the secret itself (`token_value`, `X-Hub-Signature-256`)
QUALIFIERS = frozenset({"value", "values", "raw", "data", "string", "str", "b64", "base64", "hex", "enc",
                        "encrypted", "hash", "hashed", "header", "v1", "v2", "v3"})
#: words before `key` or `signature` that make it something public (`publicKey`, `Idempotency-Key`)
PUBLIC_BEFORE = frozenset({"public", "idempotency", "cache", "sort", "primary", "partition", "routing", "foreign",
                           "lookup", "dedup", "dedupe", "object", "map", "group", "index"})
#: names that sound secret but are not, written as words joined by `-` (the normal form)
KEEP = frozenset({
    "page-token", "next-page-token", "pagetoken", "nextpagetoken", "continuation-token", "sync-token",
    "access-control-allow-credentials", "bearer-format", "token-type",
})

_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])")
_SEPARATORS = re.compile(r"[^A-Za-z0-9]+")
_NUMBER = re.compile(r"\d+")


def words(name: str) -> tuple[str, ...]:
    """`X-Goog-Iap-Jwt-Assertion` -> (x, goog, iap, jwt, assertion); `APIKey` -> (api, key)."""
    return tuple(word.lower() for word in _SEPARATORS.split(_CAMEL.sub(" ", name)) if word)


def normal(name: str) -> str:
    """A name's normal form, its words joined by `-`: how keep lists and extra names compare."""
    return "-".join(words(name))


def head(parts: tuple[str, ...]) -> tuple[str, tuple[str, ...]]:
    """The head word and the words before it, qualifiers and numbers at the end left off."""
    end = len(parts)
    while end > 1 and (parts[end - 1] in QUALIFIERS or _NUMBER.fullmatch(parts[end - 1])):
        end -= 1
    return parts[end - 1], parts[:end - 1]


def default_kind(name: str, place: str) -> bool:
    """Whether the built-in vocabulary calls ``name`` secret in ``place`` (header, query, form, json, oauth)."""
    parts = words(name)
    if not parts or "-".join(parts) in KEEP:
        return False
    word, before = head(parts)
    if word in SECRET_HEADS:
        return not (word in ("key", "signature", "sig") and before and before[-1] in PUBLIC_BEFORE)
    if word in OAUTH_HEADS:
        return place in ("query", "form", "oauth")
    return len(parts) == 1 and any(word.endswith(ending) and word != ending for ending in SECRET_ENDINGS)
