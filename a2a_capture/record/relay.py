"""How the recorder passes a response body on: as it comes, or held back while it may be a card.

mitmproxy holds a body whole only while it is small (`stream_large_bodies`); a larger one, or
one with no length that grows past that size, it streams. The recorder streams every such body
through its own copy from the first byte, so none is recorded empty. A card must be held whole to
be rewritten before the client reads it, so a response that may be a card (by what was asked for)
is held back whatever its size, and a small body with no length that answers a GET and starts as a
JSON object is held as mitmproxy would have held it, so a card anywhere is still rewritten. Any
other body passes on as it comes: one the agent cuts reaches the client cut, with what came.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable

from a2a_capture.a2a import spec
from a2a_capture.record.bodies import BodyCopy

#: an unframed body is held back up to this size, as mitmproxy holds a small body
HOLD = 1024 * 1024

#: where cards are asked for: the well-known paths, the extended card's routes, a path that says card
_CARD_TARGET = re.compile(r"(?i)card|/agent\.json$")

#: a JSON-RPC call that answers with a card
_CARD_METHOD = re.compile(rb'"method"\s*:\s*"[^"]*(?:ExtendedAgentCard|ExtendedCard)"')


def may_be_card(request) -> bool:
    """Whether the answer to this request may be an agent card (to be held back and rewritten)."""
    path = request.path.split("?", 1)[0]
    if request.method.upper() == "GET":
        return bool(_CARD_TARGET.search(path)) or path.rstrip("/").endswith(spec.LEGACY_CARD_PATHS)
    body = request.raw_content or b""
    return request.method.upper() == "POST" and bool(_CARD_METHOD.search(body[:4096]))


def unsized(flow) -> bool:
    """A response body with no declared length (chunked, HTTP/2 without one, or until close), which
    mitmproxy would start to stream, unwatched, once it grew large."""
    response = flow.response
    if flow.request.method.upper() == "HEAD" or response.status_code < 200 or response.status_code in (204, 304):
        return False
    return "content-length" not in response.headers


def unframe(response) -> None:
    """A held card's length changes when it is rewritten: send it chunked (HTTP/1.1) or unsized."""
    del response.headers["content-length"]
    if response.http_version == "HTTP/1.1":
        response.headers["transfer-encoding"] = "chunked"


class HeldBody:
    """The stream callable of a response body: it holds the body back while it may be a card (all of
    it, or up to HOLD bytes), then passes it on, rewritten by ``rewrite`` if that returns a new body;
    past HOLD, a body that is not held whole passes on as it comes. The copy gets what the client got."""

    def __init__(self, copy: BodyCopy, rewrite: Callable[[bytes], bytes | None] | None, *,
                 hold_all: bool, hold: bool) -> None:
        self.copy = copy
        self.rewrite = rewrite
        self.hold_all = hold_all and rewrite is not None
        self.held: list[bytes] | None = [] if (self.hold_all or hold) else None
        self.size = 0

    def __call__(self, data: bytes) -> bytes | list[bytes]:
        if self.held is None:
            return self.copy(data)
        if data:
            self.held.append(data)
            self.size += len(data)
            if self.hold_all or (self.size <= HOLD and self._may_be_card()):
                return []  # no chunk: an empty one would end a chunked body
            return self._release(None)
        body = b"".join(self.held)
        new = self.rewrite(body) if self.rewrite is not None and body else None
        return self._release(new if new is not None else body)

    def _may_be_card(self) -> bool:
        """A card is a JSON object: a body that starts otherwise passes on at once (and a cut one
        reaches the client with what came, as it would direct)."""
        start = b"".join(self.held[:8])[:64].lstrip(b" \t\r\n\xef\xbb\xbf")
        return not start or start[:1] == b"{"

    def _release(self, body: bytes | None) -> bytes:
        """Pass on what was held (``body``: in its place), and everything after it as it comes."""
        out = body if body is not None else b"".join(self.held)
        self.held = None
        return self.copy(out)



# -- validators: a rewritten card is not the agent's card, so it has an ETag of its own ------------------

_TAG = re.compile(r'\s*(W/)?"([^"]*)"\s*')
_OURS = re.compile(r"(.*)-a2a-([0-9a-f]{12})")


def _mark(tag: str, routes: list[tuple[str, str]]) -> str:
    """What ties a derived validator to the agent's and to this recording's rewrite (its routes)."""
    rewrite = "|".join(f"{upstream}={listener}" for upstream, listener in routes)
    return hashlib.sha256(f"{tag}\n{rewrite}".encode("utf-8", "surrogateescape")).hexdigest()[:12]


def derived_etag(etag: str, routes: list[tuple[str, str]]) -> str:
    """The ETag of the card as the recorder relays it: the agent's, marked with the rewrite, so a
    client that cached the agent's own card (fetched without the recorder) never gets a 304 for it."""
    found = _TAG.fullmatch(etag)
    if found is None:
        return etag
    weak, opaque = found.group(1) or "", found.group(2)
    return f'{weak}"{opaque}-a2a-{_mark(opaque, routes)}"'


def agent_validators(if_none_match: str, routes: list[tuple[str, str]]) -> str | None:
    """The If-None-Match to send the agent for a card: each tag the recorder derived (for these
    routes) as the agent's own, and no other (a client holding the agent's card, or a card rewritten
    for other listeners, must get the card again, rewritten). None: send no If-None-Match."""
    kept = []
    for part in if_none_match.split(","):
        found = _TAG.fullmatch(part)
        ours = _OURS.fullmatch(found.group(2)) if found else None
        if ours is not None and ours.group(2) == _mark(ours.group(1), routes):
            kept.append(f'{found.group(1) or ""}"{ours.group(1)}"')
    return ", ".join(kept) or None
