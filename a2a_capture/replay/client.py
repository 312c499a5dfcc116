"""Client replay: send the client side of a capture again, to live agents, in the original order.

The server makes up task ids, context ids, push-config ids and page tokens, so a literal
replay fails at the second call ("Task not found"). Each new response is laid beside the
recorded one; where they differ in such a value, the new value replaces the old one in every
later request. Redacted credentials are restored only from the environment or from values the
user gives; a request never carries a redaction marker, and never goes to an agent the user
did not name.
"""

from __future__ import annotations

import json
import os
import re
import time
from dataclasses import dataclass, field

import httpx

from a2a_capture.a2a.decode import decode
from a2a_capture.capture.models import Capture, Exchange, ExchangeMeta, Request, Response, format_time
from a2a_capture.errors import A2ACaptureError
from a2a_capture.record.flows import StreamCopy
from a2a_capture.replay.agents import recorded_agents

#: values a server makes up, which later requests quote back
LEARNED_KEYS = frozenset({"id", "taskId", "contextId", "nextPageToken", "artifactId"})
#: headers the transport sets itself
TRANSPORT_HEADERS = frozenset({"host", "content-length", "transfer-encoding", "connection", "keep-alive",
                               "accept-encoding"})
_MARKER = re.compile(r"\[redacted: [^\]]*\]")


class ReplayError(A2ACaptureError):
    """Replay cannot start or go on: what is missing and how to give it."""


@dataclass
class Substitutions:
    """Recorded value -> value of this run, learned as the replay goes."""

    values: dict[str, str] = field(default_factory=dict)

    def learn(self, old, new) -> None:
        if isinstance(old, dict) and isinstance(new, dict):
            for key in old.keys() & new.keys():
                before, after = old[key], new[key]
                if key in LEARNED_KEYS and isinstance(before, str) and isinstance(after, str):
                    if before and after and before != after:
                        self.values.setdefault(before, after)
                else:
                    self.learn(before, after)
        elif isinstance(old, list) and isinstance(new, list):
            for before, after in zip(old, new, strict=False):
                self.learn(before, after)

    def apply(self, text: str) -> str:
        for old in sorted(self.values, key=len, reverse=True):  # longest first: ids may share prefixes
            text = text.replace(old, self.values[old])
        return text


def agents_of(capture: Capture) -> dict[str, str]:
    """Each recorded agent origin, with the card name the session saw for it (or the origin)."""
    return {agent.origin: agent.name for agent in recorded_agents(capture)}


def resolve_targets(capture: Capture, targets: dict[str, str]) -> dict[str, str]:
    """Recorded origin -> new base URL; every recorded agent must be named."""
    resolved, missing = {}, []
    for origin, name in agents_of(capture).items():
        host = origin.split("://", 1)[-1]
        url = targets.get(name) or targets.get(origin) or targets.get(host)
        if url is None:
            missing.append(f"{name} ({host})" if name != origin else host)
        else:
            resolved[origin] = url.rstrip("/")
    if missing:
        raise ReplayError("no --target for " + ", ".join(missing) + "; replay sends only to agents you name, "
                          "as --target NAME=URL (NAME: the card's name or the recorded host:port)")
    return resolved


def restore_secrets(headers: list[tuple[str, str]], secrets: dict[str, str]) -> tuple[list[tuple[str, str]], list[str]]:
    """Headers with redaction markers replaced from ``secrets`` or A2A_CAPTURE_SECRET_<HEADER>; the
    ones that cannot be restored are left out, never sent as markers."""
    restored, dropped = [], []
    for name, value in headers:
        if not _MARKER.search(value):
            restored.append((name, value))
            continue
        env = "A2A_CAPTURE_SECRET_" + re.sub(r"[^A-Z0-9]", "_", name.upper())
        secret = secrets.get(name) or secrets.get(name.lower()) or os.environ.get(env)
        if secret is None:
            dropped.append(name)
        else:
            restored.append((name, secret))
    return restored, dropped


def restore_body_secrets(body: bytes, secrets: dict[str, str]) -> tuple[bytes, list[str]]:
    """A JSON body with redaction markers replaced from ``secrets`` (by member name) or the
    environment; members that cannot be restored are left out of the request."""
    if not _MARKER.search(body.decode("utf-8", "replace")):
        return body, []
    try:
        data = json.loads(body)
    except (ValueError, UnicodeDecodeError):
        return _MARKER.sub("", body.decode("utf-8", "surrogateescape")).encode("utf-8", "surrogateescape"), ["body"]
    dropped: list[str] = []

    def walk(value, path: str):
        if isinstance(value, dict):
            for key in list(value):
                child = value[key]
                if isinstance(child, str) and _MARKER.search(child):
                    env = "A2A_CAPTURE_SECRET_" + re.sub(r"[^A-Z0-9]", "_", key.upper())
                    secret = secrets.get(key) or os.environ.get(env)
                    if secret is None:
                        del value[key]
                        dropped.append(f"{path}.{key}")
                    else:
                        value[key] = secret
                else:
                    walk(child, f"{path}.{key}")
        elif isinstance(value, list):
            for child in value:
                walk(child, f"{path}[]")

    walk(data, "$")
    return json.dumps(data, separators=(",", ":")).encode(), dropped


def replay(capture: Capture, targets: dict[str, str], secrets: dict[str, str] | None = None, *,
           timeout: float = 30.0, echo=None) -> Capture:
    """Send the capture's calls again; returns the new session as a capture."""
    bases = resolve_targets(capture, targets)
    substitutions = Substitutions()
    exchanges: list[Exchange] = []
    with httpx.Client(timeout=timeout, trust_env=False) as http:
        for exchange in capture.exchanges:
            if exchange.webhook:
                continue  # the agents send those again by themselves
            new = _send(http, exchange, bases, substitutions, secrets or {}, echo)
            exchanges.append(new)
            _learn(substitutions, exchange, new)
    return Capture(notes=[f"replayed from a capture with {len(capture.exchanges)} exchanges"],
                   meta=[("format", "a2a-capture/1")], exchanges=exchanges)


def _send(http: httpx.Client, exchange: Exchange, bases: dict[str, str], subs: Substitutions,
          secrets: dict[str, str], echo) -> Exchange:
    call = decode(exchange)
    base = bases[call.agent]
    request = exchange.request
    target = subs.apply(request.target)
    headers = [(name, subs.apply(value)) for name, value in request.headers
               if name.lower() not in TRANSPORT_HEADERS]
    headers, dropped = restore_secrets(headers, secrets)
    body = subs.apply(request.body.decode("utf-8", "surrogateescape")).encode("utf-8", "surrogateescape")
    body, dropped_members = restore_body_secrets(body, secrets)
    dropped += dropped_members
    notes = [f"replay left out {name}: it was redacted and no secret was given for it" for name in dropped]
    if dropped and echo:
        echo(f"exchange {exchange.label}: {', '.join(dropped)} left out (redacted; give --secret NAME=VALUE)")
    started = time.time()
    copy = StreamCopy()
    try:
        with http.stream(request.method, base + target, headers=headers, content=body or None) as answer:
            for chunk in answer.iter_raw():
                copy(chunk)
            response = Response(status=answer.status_code, reason=answer.reason_phrase,
                                headers=[(k, v) for k, v in answer.headers.multi_items()], body=copy.body)
    except httpx.HTTPError as error:
        response = None
        notes.append(f"error: {type(error).__name__}: {error}")
    ended = time.time()
    if response is not None and response.is_event_stream:
        response.event_times = copy.event_times(started)
    host = base.split("://", 1)[-1]
    new_request = Request(method=request.method, target=target, body=body,
                          headers=[("Host", host), *headers])
    meta = ExchangeMeta(start=format_time(started), end=format_time(ended), server=host)
    return Exchange(number=exchange.number, title=exchange.title, request=new_request, response=response,
                    notes=notes, meta=meta)


def _learn(subs: Substitutions, old: Exchange, new: Exchange) -> None:
    if old.response is None or new.response is None:
        return
    for header in ("etag",):
        before, after = old.response.header(header), new.response.header(header)
        if before and after and before != after:
            subs.values.setdefault(before, after)
    if old.response.is_event_stream and new.response.is_event_stream:
        for before, after in zip(old.response.events, new.response.events, strict=False):
            subs.learn(_json(before.data), _json(after.data))
    else:
        subs.learn(_json(old.response.content), _json(new.response.content))


def _json(data):
    if not data:
        return None
    try:
        return json.loads(data)
    except (ValueError, TypeError):
        return None

