"""Client libraries, named by their User-Agent or known by their wire habits, and the fix each rule's habit
has in their own API.

Tables, not code: a finding on a call whose User-Agent names a library below adds that library's way
to the rule's fix. Libraries that send a generic User-Agent (python-httpx, python-requests) are known by
the habits their clients were recorded with (tests/stacks/): the JSON-RPC envelope's key order and id
shape, the order of the body headers, and in the messages they send, the messageIds' shape and the marks
on their parts; such a name says "likely". A card fetch has no envelope: it is named by its headers where
a library's are its own (``Habits.card_headers``), else by the latest A2A call to the same agent
(``Session.client_library``).
Each fix is grounded: tests/test_library_fixes.py (and tests/test_library_fixes_strands_adk.py,
tests/test_library_fixes_fasta2a_python_a2a.py) applies it to the library's client in tests/stacks/ and
shows the finding gone; a rule no test has applied a fix for keeps its generic fix.
"""

from __future__ import annotations

import re
from typing import NamedTuple

#: a User-Agent's first product name -> (the library, {rule id: the fix in its API})
LIBRARIES: dict[str, tuple[str, dict[str, str]]] = {
    "agent-framework-python": ("Agent Framework (agent-framework-a2a)", {
        "card-not-fetched": "give A2AAgent the card (`A2AAgent(agent_card=await A2ACardResolver(http, base)"
                            ".get_agent_card())`) instead of `A2AAgent(url=...)`, which guesses a card from the URL",
        "return-immediately-poll": "`await agent.run(...)` without `background=True` waits for the result in one "
                                   "round trip (or `run(..., stream=True)` where the card offers streaming)",
    }),
    # Node's fetch says `node` and nothing more: any Node.js client; the fixes are in @a2a-js/sdk's calls
    "node": ("a Node.js client such as @a2a-js/sdk's (User-Agent: node)", {
        "poll-terminal": "the last event of `client.sendMessageStream(...)` (or the task `client.sendMessage` "
                         "returns) holds the final state; call `client.getTask` only while that is not terminal",
        "subscribe-terminal": "call `client.resubscribeTask({id})` only for a task whose last state was not terminal",
        "cancel-terminal": "call `client.cancelTask({id})` only while the task's last state is submitted, working "
                           "or input-required",
        "get-before-subscribe": "drop the `client.getTask` before `client.resubscribeTask`: its first event is the "
                                "task",
        "task-unknown": "pass the id a `task` event of the same client gave (`event.payload.value.id`)",
    }),
}


class Habits(NamedTuple):
    """How one library's client writes a JSON-RPC call, as recorded from it; None: any."""

    user_agent: str  # the User-Agent's first product name (generic: the HTTP library's)
    first_key: str  # the envelope's first member: "id" or "jsonrpc"
    ids: frozenset[str]  # the shapes of the ids it makes (``id_shape``)
    body_headers: str  # "length, type" (Content-Length first) or "type, length"
    versions: frozenset[str] | None = None  # the versions its method names spell
    #: whether its messages sent carry `params.configuration` (a2a-sdk 0.3's always do, 0.2's when asked)
    configuration: bool | None = None
    #: the shapes of the messageIds its sends make (Strands': `uuid4().hex`)
    message_ids: frozenset[str] | None = None
    #: the metadata keys it puts on every part of the user's it sends (ADK's: `is_user_input`): only its sends
    #: tell them (a poll of a2a-sdk 1.x's, with no parts, is not ADK's); None: none needed
    part_marks: frozenset[str] | None = None
    #: the request headers its card fetches send, by name in order (Host left out); None: not known by them
    card_headers: tuple[str, ...] | None = None


class KnownByHabits(NamedTuple):
    """A library its habits tell: its name with the version they show, the habits, {rule id: the fix in its API}."""

    name: str
    habits: Habits
    fixes: dict[str, str]


#: a library known by its habits, by a key of its own
HABITS: dict[str, KnownByHabits] = {
    # a2a-sdk 0.3's JsonRpcTransport: `str(uuid4())` ids, `id` first (pydantic's field order), httpx `json=`;
    # the messageIds are the caller's (a2a-sdk's `create_text_message_object`: `str(uuid4())`)
    "a2a-sdk-0.3": KnownByHabits(
        "a2a-sdk 0.3's client (likely, by its habits: uuid ids, `id` first)",
        Habits("python-httpx", "id", frozenset({"uuid"}), "length, type", frozenset({"0.3"}), configuration=True,
               message_ids=frozenset({"uuid", "string", "int"})), {
        "poll-terminal": "the last `(task, update)` that `client.send_message(...)` yields holds the task's final "
                         "state; call `client.get_task(TaskQueryParams(id=task.id))` only while "
                         "`task.status.state` is not terminal",
        "card-refetch": "resolve the card once (`card = await A2ACardResolver(http, base).get_agent_card()`) and "
                        "make every client from it (`ClientFactory(config).create(card)`), or keep the client",
    }),
    # Strands' A2AAgent is a2a-sdk 0.3's client on the wire (it is built on it), but makes its messages itself
    # (`convert_input_to_message`): `uuid4().hex` messageIds, and never a taskId or contextId
    "strands": KnownByHabits(
        "Strands' A2AAgent (likely, by its habits: a2a-sdk 0.3's calls, `uuid4().hex` messageIds)",
        Habits("python-httpx", "id", frozenset({"uuid"}), "length, type", frozenset({"0.3"}), configuration=True,
               message_ids=frozenset({"hex"})), {
        "connection-per-request": "give every A2AAgent one `httpx.AsyncClient` you keep "
                                  "(`A2AAgent(endpoint=base, client_config=ClientConfig(httpx_client=http))`): "
                                  "without one, each call (and its card fetch) opens a client of its own",
        "input-required-abandoned": "A2AAgent makes each message from the prompt alone (no taskId, no contextId), "
                                    "so it cannot answer a task: take the task from the `(task, update)` events "
                                    "`agent.stream_async(...)` yields and answer through a2a-sdk's client of the "
                                    "same card, `ClientFactory(config).create(await agent.get_agent_card())"
                                    ".send_message(Message(..., task_id=task.id, context_id=task.context_id))`",
        "card-refetch": "make one `A2AAgent(endpoint=...)` per agent and reuse it for every call: it keeps the card "
                        "it resolved",
        "card-path": "`A2AAgent(endpoint=...)` takes the agent's base URL, under which it asks for "
                     "`/.well-known/agent-card.json`, not an interface URL of its card: call through the A2AAgent "
                     "made on the base URL",
    }),
    # ADK's RemoteA2aAgent, on a2a-sdk 1.x's JSON-RPC transport (`method` first, uuid ids, 1.0's names), marks
    # every part the user wrote with `metadata.is_user_input`
    "google-adk": KnownByHabits(
        "ADK's RemoteA2aAgent (google-adk; likely, by its habits: a2a-sdk 1.x's calls, parts marked "
        "`is_user_input`)",
        Habits("python-httpx", "method", frozenset({"uuid"}), "length, type", frozenset({"1.0"}),
               part_marks=frozenset({"is_user_input"})), {
        "card-refetch": "make one `RemoteA2aAgent(name=..., agent_card=url)` per remote agent (and one runner over "
                        "it) and keep it, rather than one per request: it resolves the card once and keeps the "
                        "client it made from it",
    }),
    # a2a-sdk 0.2's A2AClient: the ids the caller gives its requests (else `str(uuid4())`), `id` first, and
    # no `configuration` unless the caller sets one
    "a2a-sdk-0.2": KnownByHabits(
        "a2a-sdk 0.2's A2AClient (likely, by its habits: `id` first, no `configuration` in its sends)",
        Habits("python-httpx", "id", frozenset({"uuid", "string", "int"}), "length, type", frozenset({"0.3"}),
               configuration=False), {
        "poll-terminal": "the task in `(await client.send_message(request)).root.result` holds its state; call "
                         "`client.get_task(GetTaskRequest(...))` only while `task.status.state` is not terminal",
        "cancel-terminal": "call `client.cancel_task(CancelTaskRequest(...))` only while the task's last "
                           "`status.state` is submitted, working or input-required",
        "card-refetch": "resolve the card once and keep the `A2AClient(http, agent_card=card)` made from it for "
                        "every call",
    }),
    # pya2a (Google's 0.1 sample client): `uuid4().hex` ids, `jsonrpc` first, httpx `json=`
    "pya2a": KnownByHabits(
        "pya2a's A2AClient (likely, by its habits: `uuid4().hex` ids, `jsonrpc` first)",
        Habits("python-httpx", "jsonrpc", frozenset({"hex"}), "length, type"), {
        "poll-terminal": "the last event of `client.send_task_streaming(...)` (its `final` status) or the task "
                         "`client.send_task(...)` returns holds the state; call `client.get_task(...)` only while "
                         "`status.state` is not terminal",
        "cancel-terminal": "call `client.cancel_task(...)` only while the task's last `status.state` is "
                           "submitted, working or input-required",
        "card-refetch": "resolve the card once (`A2ACardResolver(base).get_agent_card()`) and keep the "
                        "`A2AClient(card)` made from it",
        "connection-per-request": "pya2a's `A2AClient` and `A2ACardResolver` take no HTTP client (each call opens "
                                  "its own), so no change to them keeps the connection: post the same requests "
                                  "(`SendTaskRequest(params=...).model_dump()`, read with `SendTaskResponse(**...)`) "
                                  "through one `httpx.AsyncClient` you keep",
        "task-unknown": "`send_task(...)` and `send_task_streaming(...)` send the task id you propose, and the "
                        "agent makes the task only if it answers with a `result` (not an `error`, nor a refused "
                        "stream): call `client.get_task(...)` and `client.cancel_task(...)` only for such a task",
        "method-version-mismatch": "pya2a speaks A2A 0.1 only: `tasks/send` and `tasks/sendSubscribe` are fixed in "
                                   "its request types (`SendTaskRequest`, `SendTaskStreamingRequest`), so no change "
                                   "to its calls reaches an agent of 0.2 or later: use a client of the agent's "
                                   "version",
    }),
    # fasta2a's A2AClient (pydantic's; recorded from 2.1.1): TypedDict dumps, `jsonrpc` first, `str(uuid4())`
    # ids but `id: null` in its polls, its own Content-Type header before httpx's Content-Length, 0.3 names
    "fasta2a": KnownByHabits(
        "fasta2a's A2AClient (likely, by its habits: `jsonrpc` first, Content-Type before Content-Length, "
        "0.3 names; as fasta2a 2.1.1 sends them)",
        Habits("python-httpx", "jsonrpc", frozenset({"uuid", "null"}), "type, length", frozenset({"0.3"})), {
        "poll-terminal": "the events `client.stream_message(...)` yields carry the task's state "
                         "(`event['result']['status_update']['status']['state']`); call `client.get_task(task_id)` "
                         "only while it is not terminal",
        "method-version-mismatch": "its methods spell every call in 0.3 whatever the card declares (`message/send`, "
                                   "`message/stream`, `tasks/get` are fixed in them): to a 1.0 interface, post the "
                                   "1.0 name with `A2A-Version: 1.0` through the client's own `http_client` "
                                   "(`client.http_client.post(url, json={'jsonrpc': '2.0', 'id': ..., 'method': "
                                   "'SendMessage', 'params': ...}, headers={'A2A-Version': '1.0'})`, `url` the "
                                   "interface's)",
        "interface-undeclared": "its methods post to `/` under the interface's url, which httpx (its base URL) "
                                "ends with a slash: `/a2a/jsonrpc/` for `/a2a/jsonrpc`; post to the url as the card "
                                "states it through the client's `http_client` (`client.http_client.post("
                                "card['supported_interfaces'][0]['url'], ...)`: an absolute URL is not joined to "
                                "the base)",
    }),
    # python-a2a's A2AClient (recorded from 0.5.10): `requests.post(json=...)` of a dict literal, `jsonrpc` first,
    # id 1, its own Content-Type header before requests' Content-Length, and that Content-Type on its card GETs
    # too; 0.1's tasks/send and, once its guesses failed, 0.3's message/send. It has no way to any of the fixes
    # below (the paths, endpoints and names are fixed in its code): each names what it does, and the way round
    "python-a2a": KnownByHabits(
        "python-a2a's A2AClient (likely, by its habits: python-requests, `jsonrpc` first, id 1, a Content-Type "
        "on its card GET; as python-a2a 0.5.10 sends them)",
        Habits("python-requests", "jsonrpc", frozenset({"int"}), "type, length", frozenset({"0.1", "0.3"}),
               card_headers=("user-agent", "accept-encoding", "accept", "connection", "content-type")), {
        "card-path": "`A2AClient(url)` asks for the card at /.well-known/agent.json, /agent.json and "
                     "/a2a/agent.json as it is made (`_fetch_agent_card`; no argument changes them): for a 0.3 or "
                     "1.0 agent make no A2AClient, and read the card at /.well-known/agent-card.json "
                     "(`requests.Session().get(f'{url}/.well-known/agent-card.json').json()`)",
        "card-redirect": "the redirect answered one of the card paths `A2AClient(url)` guesses as it is made "
                         "(`_fetch_agent_card`: /agent.json, which requests follows): for a 0.3 or 1.0 agent make "
                         "no A2AClient, and read the card at /.well-known/agent-card.json only",
        "interface-undeclared": "`client.send_message(...)` posts tasks/send to `{url}/tasks/send`, then "
                                "`{url}/a2a/tasks/send` and more guesses, before anything to the url itself, "
                                "whatever the card declares (`send_message`, `_send_task`): post to the card's `url` "
                                "(`session.post(card['url'], json=...)`)",
        "method-version-mismatch": "`client.send_message(...)` sends 0.1's `tasks/send`, and 0.3's `message/send` "
                                   "only after all its guesses failed, in its Google-format mode: send "
                                   "`message/send` to the card's `url` with the message `Message(...).to_google_a2a()` "
                                   "gives, its `metadata['message_id']` as `messageId` (as A2AClient's own "
                                   "message/send does)",
        "connection-per-request": "it calls `requests.get` and `requests.post` afresh for every request (no "
                                  "`requests.Session`, and it takes none): make the calls through one "
                                  "`requests.Session()`",
    }),
}

_SENDS = frozenset({"SendMessage", "SendStreamingMessage"})

#: the JSON-RPC id shapes ``Habits.ids`` names
_ID_SHAPES = (("uuid", re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\Z")),
              ("hex", re.compile(r"[0-9a-f]{32}\Z")))


def id_shape(value: object) -> str:
    """"uuid", "hex" (uuid4().hex), "int", "null" or "string"."""
    if value is None:
        return "null"
    if isinstance(value, int):
        return "int"
    text = str(value).lower()
    return next((shape for shape, pattern in _ID_SHAPES if pattern.match(text)), "string")


def _body_headers(call) -> str | None:
    names = [name.lower() for name, _ in call.headers]
    if "content-length" not in names or "content-type" not in names:
        return None
    return "length, type" if names.index("content-length") < names.index("content-type") else "type, length"


#: HABITS by the User-Agent product and the envelope's first key their calls send: a call whose two (or
#: whose id shape) no library has is known by none, its other habits unread
_BY_CLIENT: dict[tuple[str, str], list[tuple[str, Habits]]] = {}
for _key, _known in HABITS.items():
    _BY_CLIENT.setdefault((_known.habits.user_agent, _known.habits.first_key), []).append((_key, _known.habits))


def known_by_habits(call) -> str | None:
    """The HABITS key of the library whose habits a JSON-RPC call (or a card fetch, by its headers) shows,
    if it is one's alone (a poll by a2a-sdk 0.3 and by 0.2 look the same: the session tells them by an
    earlier send). The engine names each call's so once (``Call.client_library``), for the rules and the
    session."""
    body = call.request_json
    if call.kind == "card":
        return _known_by_card_headers(call)
    if call.kind != "jsonrpc" or not isinstance(body, dict) or not body:
        return None
    product, first_key = _product(call), next(iter(body))
    shape = id_shape(body.get("id")) if (product, first_key) in _BY_CLIENT else None
    candidates = [(key, habits) for key, habits in _BY_CLIENT.get((product, first_key), ()) if shape in habits.ids]
    if not candidates:  # the habits read first, the quickest to tell, are no library's
        return None
    message = call.params.get("message") if call.operation in _SENDS else None
    configured = "configuration" in call.params if call.operation in _SENDS else None
    message_ids = frozenset({id_shape(message.get("messageId"))}) if isinstance(message, dict) else None
    seen = Habits(product, first_key, frozenset({shape}), _body_headers(call) or "",
                  frozenset({call.spelled_version}), configured, message_ids, _part_marks(message))
    matches = [key for key, habits in candidates if _fits(habits, seen)]
    return matches[0] if len(matches) == 1 else None


#: HABITS whose card fetches are known by their headers (python-a2a's), by the User-Agent product
_BY_CARD_HEADERS: dict[tuple[str, tuple[str, ...]], list[str]] = {}
for _key, _known in HABITS.items():
    if _known.habits.card_headers is not None:
        _BY_CARD_HEADERS.setdefault((_known.habits.user_agent, _known.habits.card_headers), []).append(_key)


def _known_by_card_headers(call) -> str | None:
    """The HABITS key of the one library whose card fetches send the call's request headers, in order."""
    product = _product(call)
    names = tuple(name.lower() for name, _ in call.headers if name.lower() != "host")
    matches = _BY_CARD_HEADERS.get((product, names), ())
    return matches[0] if len(matches) == 1 else None


def _product(call) -> str:
    """The first product of the call's User-Agent, as HABITS names it (`python-httpx`), or ""."""
    return (call.header("user-agent") or "").split("/", 1)[0].lower()


def _part_marks(message) -> frozenset[str] | None:
    """The metadata keys every part of a message sent carries; None: it has no parts."""
    parts = message.get("parts") if isinstance(message, dict) else None
    if not isinstance(parts, list) or not parts:
        return None
    keys = [frozenset(part["metadata"]) if isinstance(part, dict) and isinstance(part.get("metadata"), dict)
            else frozenset() for part in parts]
    return frozenset.intersection(*keys)


def _fits(habits: Habits, seen: Habits) -> bool:
    """Whether a call's habits (``seen``: one id shape, one version; its parts' marks) are the library's."""
    return ((habits.user_agent, habits.first_key, habits.body_headers)
            == (seen.user_agent, seen.first_key, seen.body_headers)
            and seen.ids <= habits.ids and (habits.versions is None or seen.versions <= habits.versions)
            and (habits.configuration is None or seen.configuration is None
                 or habits.configuration == seen.configuration)
            and (habits.message_ids is None or seen.message_ids is None or seen.message_ids <= habits.message_ids)
            and (habits.part_marks is None or habits.part_marks <= (seen.part_marks or frozenset())))


def library_of(call) -> tuple[str, dict[str, str]] | None:
    """The library a call's User-Agent names, if it is one of the table's."""
    agent = call.header("user-agent")
    if not agent:
        return None
    for product in agent.split():
        entry = LIBRARIES.get(product.split("/", 1)[0].lower())
        if entry is not None:
            return entry
    return None


def library_fix(call, rule_id: str, session=None) -> str:
    """"; with LIBRARY: FIX" where the call's User-Agent names a library with a fix for this rule, or its habits
    (``Call.client_library``, as the engine named it) or, for a card fetch, the latest A2A call to its agent
    (``session``) show one, else ""."""
    entry = library_of(call)
    if entry is None:
        habits = call.client_library or (session.client_library(call.agent) if session is not None else None)
        entry = (HABITS[habits].name, HABITS[habits].fixes) if habits else None
    if entry is None or rule_id not in entry[1]:
        return ""
    return f"; with {entry[0]}: {entry[1][rule_id]}"
