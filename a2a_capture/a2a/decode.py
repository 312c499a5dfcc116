"""Decode one exchange as A2A: which agent, which operation, which task, what went wrong.

Pure functions over the capture model. Unknown or broken traffic is classified as such
(kind "other", an unparseable body noted), never a crash.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import MISSING, dataclass, field, fields
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
from a2a_capture.capture.http11 import first_values
from a2a_capture.capture.models import Exchange, ExchangeMeta, Response

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


@dataclass(frozen=True)
class Call:
    """One exchange, read as A2A: small facts, fixed once decoded.

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
    #: a card fetch read by the plain path: the first value of each header of its request and of its response
    #: by lower-case name, framing and per-message ones left out (``http11.first_values``: a known head's,
    #: shared, so read only), else None; never copied by ``replace`` (headers given anew are read again)
    first_values: tuple[dict[str, str], dict[str, str]] | None = field(default=None, init=False, repr=False,
                                                                      compare=False)

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


def fixed(values: dict[str, Any]) -> Call:
    """The call with these values (every field's): what ``Call(**values)`` makes, without its
    one ``object.__setattr__`` per field, which is most of the cost of decoding a small call."""
    call = Call.__new__(Call)
    object.__setattr__(call, "__dict__", values)
    return call


#: the fields whose default is made fresh for each call (a list or dict that decoding fills in)
_FACTORIES = tuple((f.name, f.default_factory) for f in fields(Call) if f.default_factory is not MISSING)
#: every field's default (those made fresh last, filled in by ``_defaults``): a draft starts as
#: one copy of this
_DEFAULTS = {**{f.name: f.default for f in fields(Call) if f.default is not MISSING},
             **{name: None for name, _ in _FACTORIES}}
#: what ``_decode_plain`` starts from: the fields of a plain JSON-RPC call that are the same for all,
#: every other field (in ``decode``'s order) set after
_PLAIN = {**_DEFAULTS, "kind": "jsonrpc", "method": "POST", "binding": "JSONRPC", "number": None, "label": None}
_times = ExchangeMeta.times  # called on the class's function: an attribute of a model is slow to find
_PLAIN_CARD = {**_DEFAULTS, "kind": "card", "method": "GET", "number": None, "label": None}
#: list and dict fields that ``_read`` always sets
_SET_BY_READ = ("query", "notes", "headers", "response_headers")


class _Draft:
    """A call while ``decode`` fills it in; ``fixed(vars(draft))`` fixes it."""

    header = Call.header
    response_header = Call.response_header
    is_a2a = Call.is_a2a
    ok = Call.ok


def decode(exchange: Exchange, file: str = "") -> Call:
    """Read an exchange as A2A.

    Frames this block shows for an earlier stream become ``late_states``, so a session can
    apply them where they happened.
    """
    call = _decode_plain(exchange, file)
    return _decode(exchange, file) if call is None else call


def _decode(exchange: Exchange, file: str) -> Call:
    """``decode`` by the general path, whatever the exchange."""
    # every field's default, each list or dict that decoding may fill in its own (``_read``
    # sets the other list and dict fields first thing)
    values = _DEFAULTS.copy()
    values["params"], values["part_media_types"], values["states"], values["late_states"] = {}, [], [], []
    values["number"], values["label"], values["file"] = exchange.number, exchange.label, file
    call = _new(_Draft)
    call.__dict__ = values
    _read(call, exchange)
    if call.operation in _FACT_OPERATIONS:
        _read_facts(call)
    call = _new(Call)
    _set(call, "__dict__", values)  # as ``fixed``
    return call


def _decode_plain(exchange: Exchange, file: str) -> Call | None:
    """The commonest exchanges read straight through: a JSON-RPC POST answered with JSON or an SSE
    stream, and a GET of a card at a card path; neither body encoded, no gRPC, no late frames, no
    webhook. What ``_read`` makes of them, with none of the branches for other kinds of exchange;
    None for anything else (the general path reads it).

    The models' fields are read from their ``__dict__`` (where pydantic keeps them): an attribute
    of a model costs several dictionary lookups (pydantic defines ``__getattr__``), and a call
    reads some twenty of them.
    """
    fields = exchange.__dict__
    request, answer = fields["request"].__dict__, fields["response"]
    verb = request["method"]
    if answer is None or (verb != "POST" and verb != "GET") or fields["webhook"] or fields["late_stream"] is not None:
        return None
    response = answer.__dict__
    notes = [*fields["notes"], *fields["response_notes"], *fields["trailing_notes"]]
    tls = next((match.group(1).lower() for note in notes if (match := _TLS_NOTE.match(note))),
               None) if notes else None
    meta = fields["meta"].__dict__
    sent, got = first_values(request), first_values(response)  # a known head's, worked out by the reader
    target, server = request["target"], meta["server"]
    # what the heads, target, server and TLS note say: the same for every exchange of a known head pair
    key = (id(sent), id(got), verb, target, server, tls)
    head = _HEADS.get(key)
    if head is None:
        head = _head(key, sent, got, verb, target, server, tls)
    template, query, streamed = head[2]
    if template is None:
        return None
    if verb == "POST":
        values = _plain_rpc(request, response, answer, template, streamed)
        if values is None:
            return None
    else:
        values = _plain_card_fetch(request, response, template)
        values["first_values"] = sent, got  # what the session holds a card by, without reading the headers again
    if meta["start"]:
        values["started"], values["duration"] = _times(fields["meta"])
    values["file"], values["title"], values["line"] = file, fields["title"], fields["line"]
    values["flow"], values["status"] = fields["flow"], response["status"]
    values["query"], values["late_states"], values["notes"] = parse_qs(query) if query else {}, [], notes
    values["headers"], values["response_headers"] = list(request["headers"]), list(response["headers"])
    values["number"] = number = fields["number"]
    values["label"] = str(number)  # ``exchange.label``: a webhook's is not read here
    call = _new(Call)
    _set(call, "__dict__", values)
    return call


def _head(key: tuple, sent: dict, got: dict, verb: str, target: str, server: str | None,
          tls: str | None) -> tuple:
    """``_decode_plain``'s facts of a request and response head (their first values), a target, a
    server and a TLS note, held by ``key`` (the first values by identity: each held with them, so
    their ids cannot be another's while held): (sent, got, (the values every call with them starts
    from, the query, whether the answer is streamed)), the values None where the plain path does not
    read such an exchange."""
    sent_type, content_type = sent.get("content-type"), got.get("content-type")
    got_type = "" if content_type is None else content_type.lower()
    facts = None, "", False
    if not ("content-encoding" in sent or "content-encoding" in got
            or (sent_type is not None and "grpc" in sent_type.lower()) or "grpc" in got_type):
        # the media type only where it can be an event stream's (most answers are JSON)
        streamed = _EVENT_STREAM in got_type and _media_type(content_type) == _EVENT_STREAM
        scheme, netloc, path, query = _split_target(target)
        path = path or "/"
        if verb == "POST" or (not streamed and path.rstrip("/").endswith(_CARD_PATHS)):
            agent, upstream = _origins(scheme, netloc, sent.get("host"), server, tls)
            fixed = verb, agent, upstream, path, sent.get(_VERSION_HEADER)
            template = _TEMPLATES.get(fixed)
            if template is None:
                if len(_TEMPLATES) >= 256:
                    _TEMPLATES.clear()
                template = _TEMPLATES[fixed] = {**(_PLAIN if verb == "POST" else _PLAIN_CARD), "agent": agent,
                                                "upstream": upstream, "path": path, "version_header": fixed[4]}
            facts = template, query, streamed
    if len(_HEADS) >= 4096:
        _HEADS.clear()
    head = _HEADS[key] = sent, got, facts
    return head


#: ``_head``'s facts by (id of the request's first values, id of the response's, verb, target, server,
#: TLS note), at most 4096
_HEADS: dict[tuple, tuple[dict, dict, tuple]] = {}
#: the values a plain call starts from, by (verb, agent, upstream, path, version header), at most 256:
#: a few for a session (its agents), each a dict of every field, shared by the heads that give them
_TEMPLATES: dict[tuple, dict] = {}


def _plain_rpc(request: dict, response: dict, answer: Response, template: dict, streamed: bool) -> dict | None:
    """``_decode_plain``'s values of a JSON-RPC call (None when the POST is no JSON-RPC call), from
    ``template`` (its head's facts: ``_head``)."""
    # an object: it was JSON (``request_json_error`` stays False); a short body (most) parsed as
    # ``_json`` parses it, without its call
    raw = request["body"]
    if 0 < len(raw) < _SHORT_BODY:
        try:
            body = _loads(raw)
        except (ValueError, UnicodeDecodeError):
            body = _json_checked(raw)[0]
    else:
        body = _json(raw)[0]
    if not isinstance(body, dict) or ("jsonrpc" not in body and ("method" not in body or "params" not in body)):
        return None
    method = body.get("method")
    if not isinstance(method, str):
        method = None
    operation, spelled, task_path = _SPELLINGS.get(method, _UNSPELLED)
    params = body.get("params")
    if not isinstance(params, dict):
        params = {}
    values = template.copy()  # a copy of a dict is quick; a literal of every field, several times slower
    # ``_str(_dig(params, task_path))``, a path of one member (most) read without either call
    task_id = params.get(task_path[0]) if len(task_path) == 1 else _dig(params, task_path)
    values["task_id"] = task_id = task_id if isinstance(task_id, str) and task_id else None
    if "message" in params or "request" in params:
        (values["message_id"], values["task_id"], values["context_id"], values["part_media_types"],
         values["inline_push"]) = _message_facts(params, task_id)
    else:
        values["part_media_types"] = []
    values["operation"], values["rpc_method"], values["spelled_version"] = operation, method, spelled
    values["request_json"], values["params"] = body, params
    tenant = params.get("tenant")
    if isinstance(tenant, str) and tenant:  # else None, as drafted (a dict write costs as much as a test)
        values["tenant"] = tenant
    status = response["status"]
    if streamed:
        answered, events = None, answer.events
        frames = [frame for frame in events if not frame.is_ping] if None in map(_DATA, events) else events
        values["streamed"], values["events"] = True, len(frames)
    else:
        answered, states = _answer(response["body"])
        values["response_json"] = answered
    error = None
    if status >= 400 or (isinstance(answered, dict) and "error" in answered):
        values["error"] = error = _error_in(answered, status, values["version_header"] or spelled)
    if streamed:
        draft = _new(_Draft)
        draft.__dict__ = values
        _read_results(draft, None, frames, response["body"])
    else:
        values["states"] = states
        if states and values["task_id"] is None:
            values["task_id"] = states[0][0]
        if operation in _FACT_OPERATIONS:
            values["extended_card"], values["last_page"] = _facts(
                operation, error is None and (status < 300 or status == 304), answered)
    return values


def _answer(body: bytes) -> tuple[Any, list[tuple[str, str]]]:
    """A JSON-RPC answer's parsed body and the task states it shows (``_json`` and ``task_states``).

    A client polling a task gets the same answer, byte for byte, until the task changes, all but the
    envelope's id: the rest after the id, seen a second time, is held by its bytes, parsed and walked
    once, and each answer made of it with its own id, as parsing the whole body makes it. An answer
    not held that names artifacts (a task's, which grow from poll to poll) is read in two parts, its
    members before them held (``_by_prefix``).
    """
    # the usual envelope, `{"jsonrpc": "2.0", "id": "...", "`, then the rest, from the name of the
    # member after the id
    if body.startswith(_SPACED):
        start = len(_SPACED)
        # where the id ends: after a UUID's 36 characters (the usual id), looked at first (a find parses
        # its arguments: it costs several times what a slice compared does); where a shorter id ends
        # there, the one taken holds a `"` (read whole, below)
        end = start + 36 if body[start + 36:start + 40] == b'", "' else body.find(b'", "', start, 160)
        rest = body[end + 3:] if end > 0 else None
    elif body.startswith(_COMPACT):
        start = len(_COMPACT)
        end = start + 36 if body[start + 36:start + 39] == b'","' else body.find(b'","', start, 160)
        rest = body[end + 2:] if end > 0 else None
    else:
        rest = None
    if rest is None or len(rest) > _HELD_REST_BYTES:
        answered = _json(body)[0]
        return answered, task_states(answered)
    held = _ANSWERS.get(rest)
    text = body[start:end]
    if text.translate(_ID_TABLE) != text:  # an id spelled with escapes: the body is parsed whole
        answered = _json(body)[0]
        return answered, task_states(answered)
    if held is not None:
        return {"jsonrpc": "2.0", "id": text.decode(), **held[0]}, list(held[1])
    prefix, named, after = rest.partition(_ARTIFACTS)  # a method of one argument: none of find's parsing
    read = _by_prefix(prefix, after) if named and prefix else None
    if read is None:
        answered = _json(body)[0]
        states = task_states(answered)
        members = None
    else:
        members, states = read
        answered = {"jsonrpc": "2.0", "id": text.decode(), **members}
    key = hash(rest)  # found already by the lookup: bytes keep their hash
    if key in _SEEN_ONCE:
        _hold(rest, members, states)
    else:
        _seen(key)
    return answered, states


def _seen(key: int) -> None:
    """A rest or a prefix seen (by its hash): held when seen again."""
    if len(_SEEN_ONCE) >= 1024:
        _SEEN_ONCE.clear()
    _SEEN_ONCE.add(key)


def _hold(rest: bytes, members: dict | None, states: list[tuple[str, str]]) -> None:
    """Hold an answer's rest (seen a second time): its members parsed, and the states they show
    (as ``_by_prefix`` read them, where it did)."""
    global _answers_held
    if members is None:
        # `{` and the rest are an object of the members after the id: JSON exactly when the body is
        # (the envelope's members are), nested as deep, and shows the states the answer shows; an
        # answer with one of these members again (the last one counts) or a status (a state named by
        # the envelope's id) is not held
        members = _json(b"{" + rest)[0]
        if not isinstance(members, dict) or "jsonrpc" in members or "id" in members or "status" in members:
            return
        states = task_states(members)
    _room()
    _ANSWERS[rest] = members, tuple(states)
    _answers_held += len(rest)


def _room() -> None:
    """Room for one more rest or prefix: none held past 512 of them, or about 2 MB."""
    global _answers_held
    if len(_ANSWERS) + len(_PREFIXES) >= 512 or _answers_held > 1 << 21:
        _ANSWERS.clear()
        _PREFIXES.clear()
        _answers_held = 0


def _by_prefix(prefix: bytes, after: bytes) -> tuple[dict, list[tuple[str, str]]] | None:
    """The members of an answer's rest (after the id) and the states they show, read in two parts:
    the prefix before the name of its artifacts, held, and the tail from that name (``after`` it),
    parsed; None where the rest is not read so (the body is parsed whole).

    A task polled while it works answers with the same prefix, and more artifacts each time. The
    prefix, seen a second time, is held where `{`, the prefix and `"artifacts": []}}` parse (orjson)
    to one member, neither the envelope's nor a status, with that member's object so far, the
    states they show and the brackets it opens. Such a prefix leaves a parser expecting a name in an
    object in an object, as the envelope's id leaves it after `{`, so the body parses exactly when
    `{` and the tail but its last `}` parse (the tail's members), and to the envelope with that
    member, its object so far updated with the tail's members, as a parser fills in a dict (a name
    again: the last value counts, at the first place). Artifacts, history and the like show no
    state (``_NOT_TASKS``): a tail of only such members shows none. Only a body whose brackets pass
    ``_json``'s quick count is read so: one past it is parsed whole, as ``_json`` parses it.
    """
    held = _PREFIXES.get(prefix)
    if held is None:
        key = hash(prefix)  # found already by the lookup
        if key not in _SEEN_ONCE:
            _seen(key)
            return None
        held = _hold_prefix(prefix)
        if held is None:
            return None
    name, before, states, opened = held
    if opened + len(after) - len(after.replace(b"{", b"", _PAST_LIMIT).replace(b"[", b"", _PAST_LIMIT)) > (
            nesting.MAX_DEPTH) or after[-1:] != b"}":
        return None
    try:
        members = _loads(_TAIL + after[:-1])
    except (ValueError, UnicodeDecodeError):
        return None  # what orjson does not read (json may): parsed whole
    stateless = members.keys() <= _STATELESS
    members = {name: {**before, **members}}
    return members, list(states) if stateless else task_states(members)


def _hold_prefix(prefix: bytes) -> tuple[str, dict, tuple[tuple[str, str], ...], int] | None:
    """``_by_prefix``'s facts of a prefix (seen a second time), held: None where it holds none."""
    global _answers_held
    try:
        value = _loads(b"{" + prefix + b'"artifacts": []}}')
    except (ValueError, UnicodeDecodeError):
        return None
    if type(value) is not dict or len(value) != 1:
        return None
    ((name, before),) = value.items()
    if name in ("jsonrpc", "id", "status") or type(before) is not dict:
        return None
    _room()
    # the brackets it opens and the envelope's
    opened = 1 + len(prefix) - len(prefix.replace(b"{", b"").replace(b"[", b""))
    held = _PREFIXES[prefix] = name, before, tuple(task_states(value)), opened
    _answers_held += len(prefix)
    return held


_SPACED, _COMPACT = b'{"jsonrpc": "2.0", "id": "', b'{"jsonrpc":"2.0","id":"'
_ARTIFACTS = b'"artifacts":'
_TAIL = b"{" + _ARTIFACTS
#: the bytes an id may hold as they are (printable ASCII but `"` and `\`) each to itself, any other
#: byte to another: an id is the same translated exactly when it holds only these (translate with a
#: table of bytes to delete builds a table of 256 first, each time)
_ID_TABLE = bytes(byte if 0x20 <= byte < 0x7F and byte not in b'"\\' else byte ^ 1 for byte in range(256))


#: answers' rests (what follows the id) -> (the members they hold, their task states): at most 512
#: and about 2 MB of rests, each at most 16 KB (a bigger body is parsed every time)
_ANSWERS: dict[bytes, tuple[dict, tuple[tuple[str, str], ...]]] = {}
#: rests' prefixes up to their artifacts -> ``_by_prefix``'s facts of them (the member they open, its
#: object so far, their states, the brackets they open), held and bounded with ``_ANSWERS``
_PREFIXES: dict[bytes, tuple[str, dict, tuple[tuple[str, str], ...], int]] = {}
#: members that show no state (those of ``_NOT_TASKS`` but a status)
_STATELESS = _NOT_TASKS - {"status"}
_answers_held = 0
_HELD_REST_BYTES = 1 << 14
#: the hashes of rests and prefixes seen once, the last 1024 or fewer
_SEEN_ONCE: set[int] = set()


def _plain_card_fetch(request: dict, response: dict, template: dict) -> dict:
    """``_decode_plain``'s values of a GET at a card path, from ``template`` (``_head``'s)."""
    values = template.copy()
    version = values["version_header"]
    values["request_json"], values["request_json_error"] = _json(request["body"])
    content, status = response["body"], response["status"]
    if status == 200:
        values["response_json"], values["card"] = answered, card = _served_card(content)
        if card is not None:
            values["card_bytes"] = len(content)
    else:
        values["response_json"] = answered = _json(content)[0]
    values["error"] = _error_in(answered, status, version)
    values["params"], values["part_media_types"], values["states"] = {}, [], []
    return values


assert {"params", "part_media_types", "states", "late_states", *_SET_BY_READ} == {name for name, _ in _FACTORIES}, (
    "a list or dict field that is neither made fresh by decode nor set by _read")
_new, _set = object.__new__, object.__setattr__


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


def _served_card(content: bytes) -> tuple[Any, Card | None]:
    """The JSON of a card served whole (200), and its card where it is an object: the same bytes
    served again give the same two, worked out once (a client refetches its cards; nothing changes
    a call's parsed bodies or its card)."""
    if len(content) > _CARD_KEY_BYTES:
        value = _json(content)[0]
        return value, card_of(value, content) if isinstance(value, dict) else None
    served = _SERVED.get(content)
    if served is _UNREAD:
        value = _json(content)[0]
        served = _SERVED.put(content, (value, card_of(value, content) if isinstance(value, dict) else None))
    return served


class _ByBytes:
    """A memo keyed by bytes (each of at most 16 KB, at most 256 of them), found without hashing
    the bytes: by their length, then compared. A fetch's body is new bytes each time, hashed anew:
    ~0.4 ns a byte (0.6 us for a 1.5 KB card), where comparing them with the ones held is a tenth."""

    def __init__(self) -> None:
        self.by_length: dict[int, list[tuple[bytes, Any]]] = {}
        self.held = 0

    def get(self, key: bytes) -> Any:
        """The value held for these bytes, else ``_UNREAD``."""
        for held, value in self.by_length.get(len(key), ()):
            if held == key:
                return value
        return _UNREAD

    def put(self, key: bytes, value: Any) -> Any:
        if self.held >= 256:
            self.by_length.clear()
            self.held = 0
        same = self.by_length.setdefault(len(key), [])
        if len(same) >= 4:  # bytes of one length compared at most four times
            del same[0]
        same.append((key, value))
        self.held += 1
        return value


_UNREAD = object()
_SERVED = _ByBytes()


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
