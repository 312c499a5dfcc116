"""Reverse mode: point the card's interfaces at the recorder, so later calls are recorded too.

Behind a reverse proxy the card still names the real server, and a client that follows it
would call the agent directly, past the recording. The interface URLs that name the
upstream are rewritten to the address the client used, in place, keeping the card's bytes
otherwise as they were.
"""

from __future__ import annotations

import json
from urllib.parse import urlsplit, urlunsplit

_LOOPBACK = {"localhost", "127.0.0.1", "::1", "[::1]"}


def _same_server(url: str, upstream: str) -> bool:
    a, b = urlsplit(url), urlsplit(upstream)
    if a.scheme != b.scheme or (a.port or _default(a.scheme)) != (b.port or _default(b.scheme)):
        return False
    host_a, host_b = (a.hostname or "").lower(), (b.hostname or "").lower()
    return host_a == host_b or (host_a in _LOOPBACK and host_b in _LOOPBACK)


def _default(scheme: str) -> int:
    return 443 if scheme == "https" else 80


def interface_urls(card: object) -> list[str]:
    """Every interface URL of a 1.0 or 0.3 card."""
    if not isinstance(card, dict):
        return []
    urls = [entry.get("url") for entry in card.get("supportedInterfaces") or [] if isinstance(entry, dict)]
    urls.append(card.get("url"))
    urls += [entry.get("url") for entry in card.get("additionalInterfaces") or [] if isinstance(entry, dict)]
    return [url for url in urls if isinstance(url, str)]


def rewrite_card(body: bytes, upstream: str, public: str) -> tuple[bytes, list[tuple[str, str]]]:
    """The card body with interface URLs on ``upstream`` moved to ``public``, and what changed."""
    try:
        card = json.loads(body)
    except (ValueError, UnicodeDecodeError):
        return body, []
    changes = []
    target = urlsplit(public)
    for url in dict.fromkeys(interface_urls(card)):
        if _same_server(url, upstream):
            parts = urlsplit(url)
            new = urlunsplit((target.scheme, target.netloc, parts.path, parts.query, parts.fragment))
            if new != url:
                changes.append((url, new))
    if not changes:
        return body, []
    text = body.decode("utf-8", "surrogateescape")
    for old, new in changes:
        text = text.replace(json.dumps(old), json.dumps(new)).replace(json.dumps(old, ensure_ascii=False),
                                                                      json.dumps(new))
    return text.encode("utf-8", "surrogateescape"), changes


def rewrite_card_routes(body: bytes, routes: list[tuple[str, str]]) -> tuple[bytes, list[tuple[str, str]]]:
    """Apply several upstream -> listener routes: a card may name another recorded agent's server."""
    changes: list[tuple[str, str]] = []
    for upstream, public in routes:
        body, changed = rewrite_card(body, upstream, public)
        changes += changed
    return body, changes


def parse_routes(text: str) -> list[tuple[str, str]]:
    """`UPSTREAM=PUBLIC;UPSTREAM=PUBLIC`, as `a2a-capture record` passes them to the addon."""
    routes = []
    for item in filter(None, (part.strip() for part in text.split(";"))):
        upstream, sep, public = item.partition("=")
        if sep and upstream and public:
            routes.append((upstream, public))
    return routes
