"""Reverse mode: point the card's interfaces at the recorder, so later calls are recorded too.

Behind a reverse proxy the card still names the real server, and a client that follows it
would call the agent directly, past the recording. A response is a card by what it holds,
not where it was served (older well-known paths, custom paths, the extended card, a
JSON-RPC result). The interface URLs that name a recorded upstream are rewritten to its
listener, in place, keeping the card's bytes otherwise as they were; the ones no listener
fronts are reported, since calls there escape the recording.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from urllib.parse import urlsplit, urlunsplit

from a2a_capture.a2a.decode import looks_like_card

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


def _moves(card: object, upstream: str, public: str) -> list[tuple[str, str]]:
    """(old URL, new URL) for each interface of the card on ``upstream``."""
    changes = []
    target = urlsplit(public)
    for url in dict.fromkeys(interface_urls(card)):
        if "://" not in url:  # a gRPC interface is `host:port` (the proto's AgentInterface.url)
            if _same_server(f"{urlsplit(upstream).scheme}://{url}", upstream) and url != target.netloc:
                changes.append((url, target.netloc))
            continue
        if _same_server(url, upstream):
            parts = urlsplit(url)
            new = urlunsplit((target.scheme, target.netloc, parts.path, parts.query, parts.fragment))
            if new != url:
                changes.append((url, new))
    return changes


def _apply(body: bytes, changes: list[tuple[str, str]]) -> bytes:
    """Replace the URLs as JSON strings, leaving every other byte of the card as it was."""
    text = body.decode("utf-8", "surrogateescape")
    for old, new in changes:
        text = text.replace(json.dumps(old), json.dumps(new)).replace(json.dumps(old, ensure_ascii=False),
                                                                      json.dumps(new))
    return text.encode("utf-8", "surrogateescape")


def rewrite_card(body: bytes, upstream: str, public: str) -> tuple[bytes, list[tuple[str, str]]]:
    """The card body with interface URLs on ``upstream`` moved to ``public``, and what changed."""
    return rewrite_card_routes(body, [(upstream, public)])


def rewrite_card_routes(body: bytes, routes: list[tuple[str, str]],
                        card: object = None) -> tuple[bytes, list[tuple[str, str]]]:
    """The card body with interface URLs on each route's upstream moved to its listener, and
    what changed (a card may name another recorded agent's server)."""
    if card is None:
        try:
            card = card_in(json.loads(body))
        except (ValueError, UnicodeDecodeError, RecursionError):
            return body, []
    changes: list[tuple[str, str]] = []
    for upstream, public in routes:
        moved = {old for old, _ in changes}
        changes += [(old, new) for old, new in _moves(card, upstream, public) if old not in moved]
    return (_apply(body, changes), changes) if changes else (body, [])


def parse_routes(items: list[str]) -> list[tuple[str, str]]:
    """`UPSTREAM=PUBLIC` items, as `a2a-capture record` passes them to the addon."""
    routes = []
    for item in items:
        upstream, sep, public = item.strip().partition("=")
        if not (sep and origin_of(upstream) and origin_of(public)):
            raise ValueError(f"a route {item!r} should be UPSTREAM=LISTENER, both http(s) URLs")
        routes.append((upstream, public))
    return routes


def card_in(document: object) -> dict | None:
    """The agent card a JSON body is or carries: a card itself (at any path, the extended
    card's HTTP+JSON answer included), or the result of a JSON-RPC call that returns one
    (`GetExtendedAgentCard`, 0.3's `agent/getAuthenticatedExtendedCard`)."""
    if looks_like_card(document):
        return document
    if isinstance(document, dict) and looks_like_card(document.get("result")):
        return document["result"]
    return None


def origin_of(url: str) -> str | None:
    """`scheme://host:port` of an http(s) URL, or None for anything else."""
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        return None
    host = f"[{parts.hostname}]" if ":" in parts.hostname else parts.hostname
    return f"{parts.scheme}://{host}:{parts.port or _default(parts.scheme)}"


@dataclass
class RelayedCard:
    """What relaying one card did: its new body (None when unchanged), the rewrites, and the
    interface origins that no listener of the recording fronts (calls there escape it)."""

    body: bytes | None = None
    changes: list[tuple[str, str]] = field(default_factory=list)
    unfronted: list[str] = field(default_factory=list)


def relay_card(body: bytes, routes: list[tuple[str, str]]) -> RelayedCard | None:
    """Point a relayed card at the recorder; None when the body is not a card.

    ``routes`` pairs each recorded upstream with the listener that fronts it. The body is
    parsed only when it could be a card, since every response passes here.
    """
    if b'"skills"' not in body or body.lstrip()[:1] != b"{":
        return None
    try:
        card = card_in(json.loads(body))
    except (ValueError, UnicodeDecodeError, RecursionError):
        return None
    if card is None:
        return None
    relayed = RelayedCard()
    new_body, relayed.changes = rewrite_card_routes(body, routes, card)
    if relayed.changes:
        relayed.body = new_body
    moved = dict(relayed.changes)
    listeners = [public for _, public in routes]
    for url in dict.fromkeys(interface_urls(card)):
        url = moved.get(url, url)
        origin = origin_of(url)
        if origin and not any(_same_server(url, public) for public in listeners) and origin not in relayed.unfronted:
            relayed.unfronted.append(origin)
    return relayed
