"""Decode one exchange as A2A: which agent, which operation, which task, what went wrong.

Pure functions over the capture model. Unknown or broken traffic is classified as such
(kind "other", an unparseable body noted), never a crash.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass, field
from functools import lru_cache
from operator import attrgetter
from typing import Any
from urllib.parse import parse_qs, urlsplit

from orjson import loads as _loads

from a2a_capture import nesting
from a2a_capture.a2a import grpc, spec
from a2a_capture.a2a.cards import Card, parse_card
from a2a_capture.capture.encoding import decode_content
from a2a_capture.capture.grpc import is_grpc_type as grpc_type
from a2a_capture.capture.models import Exchange

#: the recorder's note on an HTTPS exchange (docs/capture-format.md)
_TLS_NOTE = re.compile(r"over TLS to (\S+)\Z")
_VERSION_HEADER = spec.VERSION_HEADER.lower()
_EVENT_STREAM = "text/event-stream"
#: members of a task or event that hold no further tasks
_NOT_TASKS = frozenset({"history", "artifacts", "message", "metadata", "parts", "status"})
#: the kinds of call that are A2A operations (``Call.is_a2a``; a rule's ``on=("a2a",)``)
A2A_KINDS = frozenset({"jsonrpc", "rest", "grpc"})


@dataclass(slots=True)
class CallError:
    """What the server said was wrong."""

    name: str | None = None  # TaskNotFoundError, ... or Unauthenticated / HTTP 503
    code: int | None = None  # JSON-RPC code
    http_status: int | None = None
    reason: str | None = None  # ErrorInfo reason
    message: str = ""
    #: the message or data says the task had already ended, whatever the code
    task_ended: bool = False


@dataclass(slots=True)
class Call:
    """One exchange, read as A2A: small facts, fixed once decoded (``decode`` fills a call in; nothing
    changes it after: a frozen dataclass's ``__init__`` stores each of its 45 fields by a call of
    ``object.__setattr__``, which took as long as the rest of decoding a small call).

    The parsed bodies are here for the rules that judge this call; whatever later calls need
    from them is extracted into the facts below (a page token, a returnImmediately flag, an
    extended card), so that an analysis keeps facts, never bodies.
    """

    number: int
    label: str
    file: str = ""
    title: str = ""
    line: int | None = None
    flow: int | None = None  # the flow's place in a mitmproxy flow file (which has no lines)
    #: "card", "jsonrpc", "rest", "grpc", "webhook" or "other"
    kind: str = "other"
    agent: str | None = None  # scheme://host:port, as the client addressed it
    #: the origin of the server that answered, where it is not ``agent``: the upstream of a
    #: reverse-proxy listener, or the address behind a host name
    upstream: str | None = None
    method: str = ""
    path: str = ""
    query: dict[str, list[str]] = field(default_factory=dict)
    binding: str | None = None  # JSONRPC, HTTP+JSON or GRPC
    #: the base path of the interface the call went to (REST: what precedes the route)
    base_path: str | None = None
    tenant: str | None = None
    operation: str | None = None
    rpc_method: str | None = None  # the JSON-RPC method as sent
    #: the version the request's own spelling implies (method name or route): "1.0", "0.3", "0.1"
    spelled_version: str | None = None
    version_header: str | None = None
    request_json: Any = None
    request_json_error: bool = False
    params: dict = field(default_factory=dict)
    task_id: str | None = None
    context_id: str | None = None
    message_id: str | None = None
    part_media_types: list[str] = field(default_factory=list)
    inline_push: bool = False
    status: int | None = None
    response_json: Any = None
    error: CallError | None = None
    #: (task id, canonical state) in the order the response and its frames showed them
    states: list[tuple[str, str]] = field(default_factory=list)
    #: a response streamed as SSE: when the frame that showed each of ``states`` arrived, in
    #: seconds after the call started (None where not recorded); None for any other response
    state_offsets: list[float | None] | None = None
    #: frames of exchange ``late_stream``'s stream that this block shows, and their states
    late_stream: int | None = None
    late_states: list[tuple[str, str]] = field(default_factory=list)
    streamed: bool = False
    events: int = 0
    card: Card | None = None
    card_bytes: int = 0
    #: the card a GetExtendedAgentCard call returned
    extended_card: Card | None = None
    #: ListTasks: its answer was the last page (an empty nextPageToken)
    last_page: bool = False
    started: float | None = None  # seconds since the epoch, where recorded
    duration: float | None = None
    notes: list[str] = field(default_factory=list)
    headers: list[tuple[str, str]] = field(default_factory=list)
    response_headers: list[tuple[str, str]] = field(default_factory=list)

    def header(self, name: str) -> str | None:
        wanted = name.lower()
        return next((value for key, value in self.headers if key.lower() == wanted), None)

    def response_header(self, name: str) -> str | None:
        wanted = name.lower()
        return next((value for key, value in self.response_headers if key.lower() == wanted), None)

    @property
    def is_a2a(self) -> bool:
        return self.kind in A2A_KINDS

    @property
    def ok(self) -> bool:
        """Answered with what was asked: a redirect (other than 304) did no work by itself."""
        return self.error is None and (self.status is None or self.status < 300 or self.status == 304)


def decode(exchange: Exchange, file: str = "") -> Call:
    """Read an exchange as A2A.

    Frames this block shows for an earlier stream become ``late_states``, so a session can
    apply them where they happened.
    """
    call = Call(exchange.number, exchange.label, file)
    _read(call, exchange)
    if call.operation in _FACT_OPERATIONS:
        _read_facts(call)
    return call


def _read(call, exchange: Exchange) -> None:
    request, response = exchange.request, exchange.response
    scheme, netloc, path, query = _split_target(request.target)
    sent = _first_values(request.headers)
    answer = _first_values(response.headers) if response is not None else {}
    call.title, call.line, call.method = exchange.title, exchange.line, request.method.upper()
    call.flow = exchange.flow
    call.path, call.query = path or "/", parse_qs(query) if query else {}
    call.version_header = sent.get(_VERSION_HEADER)
    call.status = response.status if response is not None else None
    call.notes = notes = [*exchange.notes, *exchange.response_notes, *exchange.trailing_notes]
    call.headers = list(request.headers)
    call.response_headers = list(response.headers) if response is not None else []
    meta = exchange.meta
    tls = next((match.group(1).lower() for note in notes if (match := _TLS_NOTE.match(note))),
               None) if notes else None
    call.agent, call.upstream = _origins(scheme, netloc, sent.get("host"), meta.server, tls)
    if meta.start:
        call.started, call.duration = meta.times()
    encoding = sent.get("content-encoding")
    call.request_json, call.request_json_error = _json(decode_content(request.body, encoding)
                                                       if encoding else request.body)
    content_type = answer.get("content-type")
    streamed = response is not None and content_type is not None and _media_type(content_type) == _EVENT_STREAM
    if response is not None:
        encoding = answer.get("content-encoding")
        content = decode_content(response.body, encoding) if encoding else response.body
        if not streamed:
            call.response_json, _ = _json(content)
    else:
        content = b""
    if streamed:
        events = response.events
        frames = [frame for frame in events if not frame.is_ping] if None in map(_DATA, events) else events
    else:
        frames = []
    call.streamed = streamed
    call.events = len(frames)
    if exchange.late_stream is not None:
        call.late_stream = exchange.late_stream
        for frame in exchange.late_events:
            if _may_name(frame.data, '"status"'):
                call.late_states += task_states(_frame_json(frame))

    if exchange.webhook:
        call.kind = "webhook"
        _read_payload(call, call.request_json)
        return
    if (_is_grpc(sent.get("content-type")) or _is_grpc(content_type)) and _read_grpc(call, exchange):
        return
    if _is_card_fetch(call):
        call.kind = "card"
        if isinstance(call.response_json, dict) and call.status == 200:
            call.card = card_of(call.response_json, content)
            call.card_bytes = len(content)
        _read_error(call)
        return
    if _read_jsonrpc(call, frames, content) or _read_rest(call, frames, content):
        return
    _read_error(call)


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


_CARDS: dict[bytes | tuple[str, bytes], Card] = {}


def card_of(data: dict, raw: bytes = b"") -> Card:
    """A parsed card; the same bytes served again are the same card, parsed once."""
    if not raw:
        return parse_card(data)
    # the bytes themselves are the key (their hash is quick), a digest of a card past 16 KB
    key = raw if len(raw) <= _CARD_KEY_BYTES else ("blake2b", hashlib.blake2b(raw, digest_size=16).digest())
    card = _CARDS.get(key)
    if card is None:
        if len(_CARDS) > 256:
            _CARDS.clear()
        card = _CARDS[key] = parse_card(data, raw)
    return card


_CARD_KEY_BYTES = 1 << 14  # at most 4 MB of keys held (256 cards)


# -- what kind of call ----------------------------------------------------------------------------


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


def _read_jsonrpc(call: Call, frames: list, content: bytes) -> bool:
    body = call.request_json
    if call.method != "POST":
        return False
    if isinstance(body, dict):
        if "jsonrpc" not in body and ("method" not in body or "params" not in body):
            return False
    elif not (isinstance(body, list) or (call.request_json_error and isinstance(call.response_json, dict)
                                         and "jsonrpc" in call.response_json)):
        return False
    call.kind, call.binding = "jsonrpc", "JSONRPC"
    if isinstance(body, dict):
        method = body.get("method")
        call.rpc_method = method = method if isinstance(method, str) else None
        call.operation, call.spelled_version, path = _SPELLINGS.get(method, _UNSPELLED)
        params = body.get("params")
        call.params = params = params if isinstance(params, dict) else {}
        call.tenant = _str(params.get("tenant"))
        call.task_id = _str(_dig(params, path))
        _read_message(call, params)
    _read_error(call)
    _read_results(call, call.response_json, frames, content)
    return True


#: a JSON-RPC method name -> (operation, the version its spelling implies, where its params name
#: the task: by the method's own name, as 0.1 names it `id`)
_SPELLINGS = {method: (*spelled, spec.METHOD_TASK_ID_PARAM.get(method, ())) for method, spelled in
              {**spec.LEGACY_METHODS, **{name: (name, "1.0") for name in spec.OPERATIONS}}.items()}
_UNSPELLED = (None, None, ())


def _read_rest(call: Call, frames: list, content: bytes) -> bool:
    match = rest_route(call.method, call.path)
    if match is None:
        return False
    route, found, base = match
    call.kind, call.binding = "rest", "HTTP+JSON"
    call.operation, call.spelled_version, call.base_path = route.operation, route.version, base
    call.task_id = found.get("id")
    if isinstance(call.request_json, dict):
        call.params = call.request_json
        _read_message(call, call.request_json)
    call.params = {**call.params, **{key: values[-1] for key, values in call.query.items()}}
    _read_error(call)
    _read_results(call, call.response_json, frames, content)
    return True


def _read_grpc(call: Call, exchange: Exchange) -> bool:
    """A gRPC call: the rpc names the operation and its package the version; messages are read
    with the A2A types, and the status (with its ErrorInfo) says what went wrong."""
    read = grpc.read_call(exchange)
    if read is None:
        return False
    call.kind, call.binding = "grpc", "GRPC"
    call.operation, call.spelled_version = read.rpc.operation, read.rpc.version
    call.request_json = read.request[0].json if read.request else None
    call.request_json_error = any(message.problem == "broken" for message in read.request)
    if isinstance(call.request_json, dict):
        call.params = call.request_json
        call.tenant = _str(call.params.get("tenant"))
        call.task_id = grpc.task_id_of(call.operation, call.params)
        _read_message(call, call.params)
    answers = [message.json for message in read.response if message.json is not None]
    call.streamed = call.operation in spec.STREAMING_OPERATIONS
    call.events = len(read.response) if call.streamed else 0
    if not call.streamed and answers:
        call.response_json = answers[0]
    call.states = [state for answer in answers for state in task_states(answer)]
    if call.task_id is None and call.states:
        call.task_id = call.states[0][0]
    status = read.status
    if status is not None and status.code != 0:
        kind = grpc.error_kind(status)
        name = spec.GRPC_STATUS_ERRORS.get(status.name or "", f"gRPC {status.name or status.code}")
        call.error = CallError(name=kind.name if kind else name, reason=status.reason, message=status.message,
                               task_ended=bool(spec.TASK_ENDED_WORDS.search(status.message)))
    call.notes += [f"gRPC {problem}" for problem in read.problems]
    return True


def rest_route(method: str, path: str, bases: list[str] | None = None):
    """(route, its placeholders, the base path before it) for a REST path, or None.

    With ``bases`` (interface paths from a card) the route must follow one of them, maybe
    after a tenant segment; without, the longest route that ends the path wins.
    """
    path = path.rstrip("/") or "/"
    candidates = []
    for route in spec.ROUTES:
        text, at_end = route.needs
        if not (path.endswith(text) if at_end else text in path):
            continue  # the regex cannot find this route here
        found = route.regex.search(path)
        if found is None:
            continue
        base = path[:found.start()]
        candidates.append((len(route.pattern), route, found.groupdict(), base))
    if bases is not None:
        candidates = [c for c in candidates if _base_matches(c[3], bases)]
    if not candidates:
        return None
    verb_ok = [c for c in candidates if method in c[1].verbs]
    if not verb_ok:
        # the wrong verb on a route with its own suffix (`:subscribe`, `/pushNotificationConfigs`) is
        # still that operation; on a route that ends in a placeholder (`/tasks/{id}`) the path only
        # looks like it: `POST /tasks/send` is no GetTask
        verb_ok = [c for c in candidates if not c[1].pattern.endswith("}")]
        if not verb_ok:
            return None
    _, route, groups, base = max(verb_ok, key=lambda c: c[0])
    return route, groups, base


def _base_matches(base: str, bases: list[str]) -> bool:
    base = base.rstrip("/")
    for known in bases:
        known = known.rstrip("/")
        if base == known or (base.startswith(known + "/") and base[len(known) + 1:].count("/") == 0):
            return True  # the interface path, maybe followed by one tenant segment
    return False


# -- reading payloads ------------------------------------------------------------------------------


def _read_message(call: Call, params: dict) -> None:
    if "message" in params or "request" in params:
        (call.message_id, call.task_id, call.context_id, call.part_media_types,
         call.inline_push) = _message_facts(params, call.task_id)


def _message_facts(params: dict, task_id: str | None) -> tuple[str | None, str | None, str | None, list[str], bool]:
    """(message id, task id, context id, media types of its parts, whether it asks for pushes inline)
    of the message a send carries; ``task_id`` is the one found before, which the message's does not override."""
    message = params.get("message") or params.get("request")
    if not isinstance(message, dict):
        return None, task_id, None, [], False
    media_types = []
    parts = message.get("parts")
    if not isinstance(parts, list):
        parts = message.get("content")
    if isinstance(parts, list):
        for part in parts:
            if isinstance(part, dict):
                media = part_media_type(part)
                if media:
                    media_types.append(media)
    configuration = params.get("configuration")
    if isinstance(configuration, dict):
        push = configuration.get("taskPushNotificationConfig") or configuration.get("pushNotificationConfig")
        inline_push = isinstance(push, dict) and bool(push)
    else:
        inline_push = False
    return (_str(message.get("messageId") or message.get("message_id")),
            task_id or _str(message.get("taskId") or message.get("task_id")),
            _str(message.get("contextId") or message.get("context_id")), media_types, inline_push)


def part_media_type(part: dict) -> str | None:
    """The media type of a 1.0 or 0.3 part; text and data parts imply theirs."""
    # ``in`` before a lookup: a part has neither member, usually (a text part), and a test is quicker than a get
    if "mediaType" in part:
        media = part["mediaType"]
        if isinstance(media, str) and media:
            return media.split(";")[0].strip().lower()
    if "file" in part:
        file = part["file"]
        if isinstance(file, dict):  # 0.3 file part
            media = file.get("mimeType") or file.get("mediaType")
            return media.lower() if isinstance(media, str) else None
    kind = part.get("kind")
    for member, implied in _IMPLIED_PART_TYPES:
        if member in part or kind == member:
            return implied
    return None


_IMPLIED_PART_TYPES = tuple(spec.IMPLIED_PART_TYPES.items())


def _read_payload(call: Call, payload: object) -> None:
    """A webhook body is one StreamResponse (1.0) or a Task (0.3)."""
    call.states = task_states(payload)
    if call.states:
        call.task_id = call.states[0][0]
    elif isinstance(payload, dict):
        for member in payload.values():
            if isinstance(member, dict) and isinstance(member.get("taskId"), str):
                call.task_id = member["taskId"]


def _read_results(call: Call, result: object, frames: list, content: bytes) -> None:
    """The states the response and its frames show, and an error a frame carries."""
    states = task_states(result)
    if frames:
        offsets: list[float | None] = [None] * len(states)
        if _ESCAPE.search(content) is None and b'"error"' not in content and "error" not in map(_EVENT, frames):
            # no frame's text has an escape or an error (a frame's text is part of the body): only
            # frames that name a status are read
            for frame in frames:
                text = frame.data
                if text is not None and '"status"' in text:
                    shown = task_states(_frame_json(frame))
                    states += shown
                    offsets += [frame.at] * len(shown)
        else:
            _read_frames(call, frames, states, offsets)
    call.states = states
    if call.streamed:
        call.state_offsets = offsets if frames else [None] * len(states)
    if call.task_id is None and states:
        call.task_id = states[0][0]


def _read_frames(call: Call, frames: list, states: list, offsets: list) -> None:
    """Each frame that may name a status or carry an error, read (adding to ``states``)."""
    for frame in frames:
        text = frame.data
        if text is None:
            if frame.event != "error":
                continue
            has_states = False
        else:
            has_states = "\\u" in text or '"status"' in text  # a key may be spelled with escapes: parse it
            if not (has_states or frame.event == "error" or '"error"' in text):
                continue  # nothing below would read it (most frames of a stream): not parsed at all
        data = _frame_json(frame)
        pre_1 = _pre_1(call.version_header or call.spelled_version)
        if isinstance(data, dict) and isinstance(data.get("error"), dict) and call.error is None:
            call.error = _error_from(data["error"], None, pre_1)  # a JSON-RPC envelope, any event
        elif frame.event == "error" and call.error is None:
            call.error = _error_from(data, None, pre_1)
        if has_states:
            shown = task_states(data)
            states += shown
            offsets += [frame.at] * len(shown)


_DATA, _EVENT = attrgetter("data"), attrgetter("event")
#: `\u` (a JSON escape), found by re about three times quicker than by `in` (whose search
#: stops at every `u` of a text)
_ESCAPE = re.compile(rb"\\u")


def task_states(value: object, limit: int = 500) -> list[tuple[str, str]]:
    """(task id, canonical state) for every task or status update in a JSON value."""
    # the usual answer is a chain of objects, each holding at most one more that may hold a task
    # (envelope, result, task): read straight down it; anything that branches is walked
    found: list[tuple[str, str]] = []
    item = value
    while isinstance(item, dict):
        if "status" in item and (shown := _shown_state(item)):
            found.append(shown)
            if len(found) >= limit:
                return found
        below = None
        for key, child in item.items():
            kind = type(child)  # a parsed JSON value's objects and lists are dicts and lists, never subclasses
            if (kind is dict or kind is list) and key not in _NOT_TASKS:
                if below is not None or kind is list:
                    return _walk_states(value, limit)
                below = child
        if below is None:
            return found
        item = below
    return _walk_states(value, limit) if isinstance(item, list) else found


def _walk_states(value: object, limit: int) -> list[tuple[str, str]]:
    """``task_states`` of any value: every object and list in it, depth first, in order."""
    found: list[tuple[str, str]] = []
    stack = [value]
    pop, push = stack.pop, stack.append
    while stack:
        item = pop()
        kind = type(item)  # as in ``task_states``
        if kind is dict:
            if "status" in item and (shown := _shown_state(item)):
                found.append(shown)
                if len(found) >= limit:
                    break
            for key, child in reversed(item.items()):  # pushed last first: read depth first, in order
                kind = type(child)
                if (kind is dict or kind is list) and key not in _NOT_TASKS:
                    push(child)
        elif kind is list:
            for child in reversed(item):
                kind = type(child)
                if kind is dict or kind is list:
                    push(child)
    return found


def _shown_state(item: dict) -> tuple[str, str] | None:
    """(task id, canonical state) of an object with a status: a task or a status update."""
    status = item["status"]
    if isinstance(status, dict):
        state = spec.canonical_state(status.get("state"))
        task = item.get("taskId") or item.get("id")
        if state and isinstance(task, str):
            return task, state
    return None


def _may_name(text: str | None, key: str) -> bool:
    """False when a JSON text cannot have this (quoted) key: it is not there, not even spelled
    with escapes (a key's letters can only be escaped as \\uXXXX). A task state needs `"status"`."""
    return text is not None and (key in text or "\\u" in text)


def _read_error(call: Call) -> None:
    call.error = _error_in(call.response_json, call.status, call.version_header or call.spelled_version)


def _error_in(body: object, status: int | None, version: str | None) -> CallError | None:
    """What went wrong by the response body and status; ``version`` is the one the call spoke."""
    if isinstance(body, dict) and isinstance(body.get("error"), dict):
        return _error_from(body["error"], status, _pre_1(version))
    if status is not None and status >= 400:
        return _error_from(body if isinstance(body, dict) else None, status, _pre_1(version))
    return None


def _pre_1(version: str | None) -> bool:
    """Whether a call that spoke this version (its header, else its spelling) spoke one before 1.0,
    whose error names differ."""
    return version is not None and version.startswith("0.")


def _error_from(error: object, status: int | None, pre_1: bool = False) -> CallError:
    """An error from a JSON-RPC error object, a google.rpc.Status, or RFC 9457 problem JSON."""
    result = CallError(http_status=status if status and status >= 400 else None)
    if not isinstance(error, dict):
        result.name = _status_name(status)
        return result
    data = error.get("data")
    said = " ".join(text for text in (error.get("message"), error.get("detail"),
                                      data if isinstance(data, str) else
                                      json.dumps(data)[:2000] if isinstance(data, (dict, list)) else None)
                    if isinstance(text, str))
    result.task_ended = bool(spec.TASK_ENDED_WORDS.search(said))
    code = error.get("code")
    message = error.get("message") or error.get("title") or error.get("detail")
    result.message = message if isinstance(message, str) else ""
    details = error.get("data") if "data" in error else error.get("details")
    for detail in details if isinstance(details, list) else [details]:
        if isinstance(detail, dict) and isinstance(detail.get("reason"), str):
            result.reason = detail["reason"]
            break
    else:
        if isinstance(code, str) and code in spec.ERRORS_BY_REASON:  # nodus-a2a-wire: the reason as `code`
            result.reason = code
    if isinstance(code, int) and code < 0:
        result.code = code
        kind = spec.ERRORS_BY_CODE.get(code)
        result.name = (spec.ERROR_NAMES_0X.get(code) if pre_1 else None) or (
            kind.name if kind else f"JSON-RPC error {code}")
    elif result.reason in spec.ERRORS_BY_REASON:
        result.name = spec.ERRORS_BY_REASON[result.reason].name
    else:
        result.name = _status_name(status if status else code if isinstance(code, int) else None)
    return result


def _status_name(status: int | None) -> str | None:
    return {401: "Unauthenticated", 403: "PermissionDenied"}.get(status or 0,
                                                                  f"HTTP {status}" if status else None)


# -- small helpers ---------------------------------------------------------------------------------


def _frame_json(frame):
    return _json(frame.data or "")[0]  # orjson and json read the text as it is


@lru_cache(maxsize=1024)  # a session addresses a few agents, over and over
def _origins(scheme: str, netloc: str, host: str | None, server: str | None,
             tls: str | None) -> tuple[str | None, str | None]:
    """(the origin the client addressed, the server's origin where that differs).

    The scheme comes from what the capture knows: an absolute-form target says it; else the
    recorder's TLS note (``tls``: the host it names) does, when it names the host the client
    addressed (a reverse proxy in front of a TLS upstream names the upstream instead, and the
    client spoke to the listener); else plain HTTP.
    """
    if scheme and netloc:  # absolute-form target, as sent to a forward proxy
        agent = _origin(scheme.lower(), netloc)
    else:
        host = host or server
        if not host:
            return None, None
        agent = _origin("http", host)
        if tls is not None and _origin("https", tls) == _origin("https", host):
            agent = _origin("https", host)
    upstream = None
    if tls is not None and not agent.startswith("https:"):
        upstream = _origin("https", server or tls)  # a listener in front of a TLS upstream
    elif server:
        upstream = _origin(agent.split(":", 1)[0], server)
    return agent, upstream if upstream != agent else None


def _first_values(headers: list[tuple[str, str]]) -> dict[str, str]:
    """Each header's first value by its lower-case name (as ``Message.header`` finds it)."""
    values: dict[str, str] = {}
    for key, value in headers:
        values.setdefault(key.lower(), value)
    return values


def _is_grpc(content_type: str | None) -> bool:
    return content_type is not None and "grpc" in content_type.lower() and grpc_type(content_type)


def _media_type(value: str | None) -> str:
    """As ``Message.content_type``: the media type alone, lower case."""
    return (value or "").split(";", 1)[0].strip().lower()


def _split_target(target: str) -> tuple[str, str, str, str]:
    """(scheme, netloc, path, query) of the request target, as ``urlsplit`` gives them; a
    malformed one (a bad IPv6 host) is read as a path."""
    if target == "/":
        return _ROOT
    if (target[:1] == "/" and target[1:2] != "/" and "#" not in target and "\t" not in target
            and "\r" not in target and "\n" not in target):  # origin form, which urlsplit keeps as it is
        path, _, query = target.partition("?")
        return "", "", path, query
    try:
        split = urlsplit(target)
    except ValueError:
        split = urlsplit("/" + target.lstrip("/").replace("[", "%5B").replace("]", "%5D"))
    return split.scheme, split.netloc, split.path, split.query


_ROOT = ("", "", "/", "")


def _safe_netloc(scheme: str, netloc: str) -> str:
    """A Host that does not parse (a malformed IPv6 address) kept with its brackets escaped."""
    try:
        urlsplit(f"{scheme}://{netloc}").port  # noqa: B018 - raises on a malformed host or port
        return netloc
    except ValueError:
        return netloc.replace("[", "%5B").replace("]", "%5D")


def _origin(scheme: str, netloc: str) -> str:
    netloc = _safe_netloc(scheme, netloc.strip().lower())
    if ":" not in netloc.rsplit("]", 1)[-1]:
        netloc += ":443" if scheme == "https" else ":80"
    return f"{scheme}://{netloc}"


def _json(body: bytes | str) -> tuple[Any, bool]:
    """(value, True when the body is there but is not JSON)."""
    if not body:
        return None, False
    size = len(body)
    # the usual body: shallow (as nesting.check_json counts), parsed by orjson; one too short to
    # close what it opens past the limit would not parse (nor pass the check), as below. The
    # brackets that open are counted by what deleting them takes away: a delete finds them by
    # memchr, a few times quicker than a pass over every byte (translate, count); at most one past
    # the limit of each, the sum is past the limit exactly when their count is
    if size < _LARGE_BODY and (size < _SHORT_BODY or size - len(
            body.replace("{", "", _PAST_LIMIT).replace("[", "", _PAST_LIMIT) if isinstance(body, str)
            else body.replace(b"{", b"", _PAST_LIMIT).replace(b"[", b"", _PAST_LIMIT)) <= nesting.MAX_DEPTH):
        try:
            return _loads(body), False
        except (ValueError, UnicodeDecodeError):
            pass  # blank, or what only json reads, or not JSON: as below
    return _json_checked(body)


def _json_checked(body: bytes | str) -> tuple[Any, bool]:
    """``_json`` the careful way: a blank body, one nested too deep, a large one, or JSON only the
    standard parser reads."""
    if not body.strip():
        return None, False
    try:
        nesting.check_json(body)
    except nesting.TooDeep:
        return None, True  # shown as it is, not decoded
    try:
        # orjson holds about 13 bytes per byte of a long string while it parses; the standard
        # parser 2: a multi-megabyte body (a file part in base64) is read by the latter
        return (_loads(body) if len(body) < _LARGE_BODY else json.loads(body)), False
    except (ValueError, UnicodeDecodeError):
        try:  # orjson is stricter (NaN, integers past 64 bits): what json reads still counts
            return json.loads(body), False
        except (ValueError, UnicodeDecodeError):
            return None, True


_LARGE_BODY = 1 << 20
_PAST_LIMIT = nesting.MAX_DEPTH + 1
#: a body too short to nest past the limit and close what it opens
_SHORT_BODY = 2 * _PAST_LIMIT



def _dig(value: object, path: tuple[str, ...]) -> object:
    for key in path:
        if not isinstance(value, dict):
            return None
        value = value.get(key)
    return value


def _str(value: object) -> str | None:
    return value if isinstance(value, str) and value else None
