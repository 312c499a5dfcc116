"""Decode one exchange as A2A: which agent, which operation, which task, what went wrong.

Pure functions over the capture model. Unknown or broken traffic is classified as such
(kind "other", an unparseable body noted), never a crash.
"""

from __future__ import annotations

import hashlib
import sys
from urllib.parse import parse_qs

from a2a_capture.a2a import spec
from a2a_capture.a2a.addresses import TLS_NOTE, origins, split_target
from a2a_capture.a2a.answers import read_ending, read_error
from a2a_capture.a2a.bodies import first_values, frame_json, is_grpc, json_of, media_type
from a2a_capture.a2a.call import A2A_KINDS, Call, CallError
from a2a_capture.a2a.cards import Card, parse_card
from a2a_capture.a2a.grpc_call import read_grpc
from a2a_capture.a2a.jsonrpc import read_jsonrpc
from a2a_capture.a2a.payloads import part_media_type, read_frames, read_payload
from a2a_capture.a2a.rest import read_rest, rest_route
from a2a_capture.a2a.states import may_name, task_states
from a2a_capture.capture.encoding import decode_content
from a2a_capture.capture.models import Exchange

#: what other modules take from here: the call and its parts' readers, by the names they had
__all__ = ["A2A_KINDS", "Call", "CallError", "Cards", "card_of", "decode", "looks_like_card", "part_media_type",
           "rest_route", "task_states"]

_VERSION_HEADER = spec.VERSION_HEADER.lower()
_EVENT_STREAM = "text/event-stream"


def decode(exchange: Exchange, file: str = "", cards: Cards | None = None) -> Call:
    """Read an exchange as A2A.

    Frames this block shows for an earlier stream become ``late_states``, so a session can
    apply them where they happened. ``cards``: the session's cards by their bytes (``Cards``), so a
    card served again is the card held; without, every card fetched is parsed as a new one.
    """
    call = Call(exchange.number, exchange.label, file)
    _read(call, exchange, cards)
    read_ending(call)
    if call.operation in _FACT_OPERATIONS:
        _read_facts(call)
    return call


def closes_connection(http_version: str, connection: str | None) -> bool:
    """Whether an answer ends its connection (RFC 9112 §9.3): `close` in HTTP/1.1, no `keep-alive` in 1.0."""
    if connection is None:  # most answers: no header, so the version's default
        return http_version == "1.0"
    options = {option.strip().lower() for option in connection.split(",")}
    return "close" in options or (http_version == "1.0" and "keep-alive" not in options)


def _read(call, exchange: Exchange, cards: Cards | None) -> None:
    request, response = exchange.request, exchange.response
    scheme, netloc, path, query = split_target(request.target)
    sent = first_values(request.headers)
    answer = first_values(response.headers) if response is not None else {}
    # the method's one string, not a copy per call: a session keeps it for every task (``Seen``)
    call.title, call.line, call.method = exchange.title, exchange.line, sys.intern(request.method.upper())
    call.flow = exchange.flow
    call.path, call.query = path or "/", parse_qs(query) if query else {}
    call.version_header = sent.get(_VERSION_HEADER)
    call.status = response.status if response is not None else None
    call.notes = notes = [*exchange.notes, *exchange.response_notes, *exchange.trailing_notes]
    call.headers = list(request.headers)
    call.response_headers = list(response.headers) if response is not None else []
    call.closed_by_agent = response is not None and closes_connection(response.http_version, answer.get("connection"))
    meta = exchange.meta
    tls = next((match.group(1).lower() for note in notes if (match := TLS_NOTE.match(note))),
               None) if notes else None
    call.agent, call.upstream = origins(scheme, netloc, sent.get("host"), meta.server, tls)
    if meta.start:
        call.started, call.duration = meta.times()
    call.client = meta.client
    encoding = sent.get("content-encoding")
    call.request_json, call.request_json_error = json_of(decode_content(request.body, encoding)
                                                       if encoding else request.body)
    content_type = answer.get("content-type")
    streamed = response is not None and content_type is not None and media_type(content_type) == _EVENT_STREAM
    if response is not None and not streamed:  # a stream's frames are read as they pass, not its whole body
        encoding = answer.get("content-encoding")
        content = decode_content(response.body, encoding) if encoding else response.body
        call.response_json, _ = json_of(content)
    else:
        content = b""
    stream = read_frames(response.iter_events()) if streamed else None  # the frames pass, their facts stay
    call.streamed = streamed
    call.events = stream.events if stream is not None else 0
    if exchange.late_stream is not None:
        call.late_stream = exchange.late_stream
        for frame in exchange.iter_late_events():
            if may_name(frame.data, '"status"'):
                call.late_states += task_states(frame_json(frame))

    if exchange.webhook:
        call.kind = "webhook"
        read_payload(call, call.request_json)
        return
    if (is_grpc(sent.get("content-type")) or is_grpc(content_type)) and read_grpc(call, exchange):
        return
    if _is_card_fetch(call):
        call.kind = "card"
        if isinstance(call.response_json, dict) and call.status == 200:
            call.card = cards.card(call.response_json, content) if cards is not None else card_of(
                call.response_json, content)
            call.card_bytes = len(content)
        read_error(call)
        return
    if read_jsonrpc(call, stream) or read_rest(call, stream):
        return
    read_error(call)


#: the operations whose answers hold facts later calls ask for
_FACT_OPERATIONS = frozenset({"GetExtendedAgentCard", "ListTasks"})


def _read_facts(call) -> None:
    """What later calls will ask of this one's bodies, taken out once."""
    call.extended_card, call.last_page = _facts(call.operation, call.ok, call.response_json)


def _facts(operation: str | None, ok: bool, response: object) -> tuple[Card | None, bool]:
    """(the extended card a GetExtendedAgentCard returned, whether a ListTasks answer was its last page)."""
    if operation == "GetExtendedAgentCard" and ok and isinstance(response, dict):
        result = response.get("result", response)
        if isinstance(result, dict) and "name" in result:
            return card_of(result), False
    elif operation == "ListTasks" and isinstance(response, dict):
        result = response.get("result", response)
        return None, isinstance(result, dict) and result.get("nextPageToken", None) == ""
    return None, False


def card_of(data: dict, raw: bytes = b"") -> Card:
    """A parsed card (``raw``: the bytes it was read from, for its fingerprint)."""
    return parse_card(data, raw) if raw else parse_card(data)


class Cards:
    """The cards of one session by the bytes they were served as: the same bytes served again are
    the same card, parsed once. A session refetches its few cards again and again, and the session
    and the engine's memo (analyze/depends.py) tell a card fetched again from another by identity.
    Whoever reads a session owns one (the engine's ``Analyzer.cards``); it holds ``MAX_CARDS`` at most."""

    __slots__ = ("_by_bytes",)

    def __init__(self) -> None:
        #: by the bytes themselves (their hash is quick), by a digest for a card past ``CARD_KEY_BYTES``
        self._by_bytes: dict[bytes | tuple[str, bytes], Card] = {}

    def card(self, data: dict, raw: bytes) -> Card:
        """The card ``raw`` (parsed as ``data``) is: the one read before from the same bytes, else parsed."""
        key = raw if len(raw) <= CARD_KEY_BYTES else ("blake2b", hashlib.blake2b(raw, digest_size=16).digest())
        card = self._by_bytes.get(key)
        if card is None:
            if len(self._by_bytes) >= MAX_CARDS:  # a session of that many cards: start over
                self._by_bytes.clear()
            card = self._by_bytes[key] = card_of(data, raw)
        return card


MAX_CARDS = 256
CARD_KEY_BYTES = 1 << 14  # at most 4 MB of keys held (256 cards)


def _is_card_fetch(call: Call) -> bool:
    if call.method != "GET":
        return False
    path = call.path.rstrip("/")
    if path.endswith(_CARD_PATHS):
        return True
    route = rest_route(call.method, path)
    if route is not None and route[0].operation == "GetExtendedAgentCard":
        return False  # the extended card by HTTP+JSON: an A2A call, read as one
    return looks_like_card(call.response_json)


_CARD_PATHS = (spec.CARD_PATH, *spec.LEGACY_CARD_PATHS, spec.LEGACY_EXTENDED_CARD_PATH)


def looks_like_card(data: object) -> bool:
    return (isinstance(data, dict) and isinstance(data.get("name"), str) and "skills" in data
            and ("supportedInterfaces" in data or "url" in data))


