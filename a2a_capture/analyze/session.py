"""What the client knew at each moment: the cards it held, the tasks it had seen.

The session walks calls in order. Rules look at a call against the session *before* the
call is applied, which is exactly what the client knew when it made the call. What a rule
may ask is the `Knowledge` protocol; the session answers each question from an index kept
by key (no scan of earlier calls), and keeps small records of earlier exchanges (`Seen`),
never their bodies, so its memory follows the tasks and cards of a session, not its length.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, fields, replace
from typing import NamedTuple, Protocol
from urllib.parse import urlunsplit

from a2a_capture.a2a import spec
from a2a_capture.a2a.cards import Card, Interface, split_url, url_origin
from a2a_capture.a2a.decode import Call

#: routes whose interfaces a session remembers at most (a session has a few; hostile input, any number)
_MAX_ROUTES = 1024
#: client addresses a session remembers per agent at most (a client opens a few; hostile input, any number)
_MAX_CLIENTS = 1024
_MAX_AGE = re.compile(r"(?:^|[,\s])(?:s-)?max-age\s*=\s*\"?(\d+)")
#: the recorder's note on a card it pointed at its listener (docs/capture-format.md)
_REWROTE = re.compile(r"a2a-capture rewrote the card's interface (\S+) to (\S+) ")


@dataclass(frozen=True, slots=True)
class Seen:
    """An earlier exchange as findings cite it: where it is and what it was, not its bodies.

    One is kept for every exchange a later call may cite (every task's latest, every message sent),
    so it is a slotted frozen record of what the rules read and no more: its exchange's number, not
    the label made of it (``label``), which a record would keep as a string of its own."""

    file: str
    #: the exchange's number in its file (``label``: how findings name it)
    number: int
    line: int | None
    agent: str | None
    #: the A2A operation, else the call's kind (``"webhook"``: an exchange the client received)
    operation: str | None
    path: str
    method: str
    started: float | None
    ok: bool
    answered: bool
    #: GetTask: the view of the task it asked for (historyLength)
    view: object = None

    @property
    def label(self) -> str:
        """The exchange as findings name it (``Exchange.label``)."""
        return f"webhook {self.number}" if self.operation == "webhook" else str(self.number)


def seen(call: Call) -> Seen:
    operation = call.operation
    return Seen(call.file, call.number, call.line, call.agent, operation or call.kind, call.path, call.method,
                call.started, call.ok, call.status is not None, view_of(call) if operation == "GetTask" else None)


#: what `Session.apply` reads of a call's parameters (ListTasks: all of them, its filters)
_LEARNED_PARAMS = ("historyLength", "configuration")


def without_bodies(call: Call) -> Call:
    """The call as the session will learn from it later, its parsed bodies let go: a call waits,
    unlearned, until a later call starts after it ended, and many may wait at once."""
    params = call.params if call.operation == "ListTasks" else {
        name: call.params[name] for name in _LEARNED_PARAMS if name in call.params}
    return replace(call, request_json=None, response_json=None, params=params)


def view_of(call: Call) -> object:
    """Which view of a task a GetTask asks for: its historyLength, as a dictionary key."""
    return _hashable(call.params.get("historyLength"))


@dataclass(slots=True)
class HeldCard:
    """A card the client held, and how it got it."""

    card: Card
    fetch: Seen
    etag: str | None = None
    last_modified: str | None = None
    max_age: int | None = None
    no_cache: bool = False
    extended: bool = False
    #: request headers the response varies on (RFC 9111 §4.1), lower case; "*" matches nothing
    vary: tuple[str, ...] = ()
    #: an extended card's fetch's Authorization: an extended card is per principal (None for a public card,
    #: the same for all: card-refetch reads it of an extended card only)
    credentials: str | None = None
    #: where it was fetched from (``card_url``: its fetch's ``_fetch_url``): the agent a call under it went to
    #: (``Session.agent_key``)
    url: str = field(default="", repr=False, compare=False)
    #: the first values of the headers of the answer it was held by (``Session._hold``): a refetch answered by
    #: the very same (decode hands over a known head's) says what it said of caching
    answer: dict[str, str] | None = field(default=None, repr=False, compare=False)
    #: how many fronts the session knew when it was held: the origins its interfaces are indexed under
    fronts: int = field(default=0, repr=False, compare=False)
    #: the session's ``_order`` when it was last found alone where its card's interfaces are indexed
    #: (``Session._refreshed``): the index only grows by entries that each take a new ``_order``
    alone: int = field(default=-1, repr=False, compare=False)

    def fresh_at(self, when: float | None) -> bool | None:
        """True or False where the capture's times and the card's max-age tell; else None."""
        if self.max_age is None or self.no_cache or when is None or self.fetch.started is None:
            return None
        return when - self.fetch.started < self.max_age

    def refetched(self, again: HeldCard, alone: int) -> None:
        """Take what a refetch of the same card from the same URL says, in place, so every index that
        holds this card stays right (``Session._refreshed`` says when it may); ``alone``: the order
        it was found alone at."""
        for member in fields(self):
            setattr(self, member.name, getattr(again, member.name))
        self.alone = alone

    @property
    def provenance(self) -> dict:
        return {"agent": self.fetch.agent, "file": self.fetch.file, "exchange": self.fetch.label,
                "etag": self.etag, "fingerprint": self.card.fingerprint, "extended": self.extended}


@dataclass(frozen=True, slots=True)
class HeldCopy:
    """A card held, as the session remembers it by origin and content for the rest of the session:
    how it was held, without the card. A later fetch that brings the same content (the same
    fingerprint: a digest of its bytes) brings the same card, so ``held`` pairs the two again; a
    session that saw many cards keeps no more than this of each."""

    fetch: Seen
    etag: str | None
    last_modified: str | None
    max_age: int | None
    no_cache: bool
    extended: bool
    vary: tuple[str, ...]
    credentials: str | None
    url: str
    answer: dict[str, str] | None
    fronts: int
    alone: int

    @classmethod
    def of(cls, held: HeldCard) -> HeldCopy:
        return cls(fetch=held.fetch, etag=held.etag, last_modified=held.last_modified, max_age=held.max_age,
                   no_cache=held.no_cache, extended=held.extended, vary=held.vary, credentials=held.credentials,
                   url=held.url, answer=held.answer, fronts=held.fronts, alone=held.alone)

    def held(self, card: Card) -> HeldCard:
        """The held card again, with ``card``: the same content as the one held."""
        return HeldCard(card=card, fetch=self.fetch, etag=self.etag, last_modified=self.last_modified,
                        max_age=self.max_age, no_cache=self.no_cache, extended=self.extended, vary=self.vary,
                        credentials=self.credentials, url=self.url, answer=self.answer, fronts=self.fronts,
                        alone=self.alone)


@dataclass(frozen=True, slots=True)
class TaskSeen:
    """A state the client saw a task in: one is kept for every task seen, so a slotted frozen record
    (a third smaller than a named tuple of the same two)."""

    state: str
    call: Seen  # the exchange that showed this state

    @property
    def agent(self) -> str | None:
        return self.call.agent


@dataclass(slots=True)
class Polls:
    """The GetTask calls on one task to one agent."""

    count: int = 0
    last: Seen | None = None
    #: the latest of them by the view of the task each asked for (historyLength)
    views: dict[object, Seen] = field(default_factory=dict)


class TaskPolls:
    """The GetTask calls on one task: how many, to any agent, and those to each agent."""

    __slots__ = ("agents", "count")

    def __init__(self) -> None:
        self.count = 0
        self.agents: dict[str | None, Polls] = {}


class Connections:
    """The requests to one agent and the client addresses (connections) they came from."""

    __slots__ = ("closed", "first", "known", "needless", "open_until", "ports", "requests", "reused")

    def __init__(self, first: Seen) -> None:
        self.first = first  # the first request
        self.requests = 0
        self.known: set[str] = set()  # the client addresses seen (at most _MAX_CLIENTS)
        self.ports: list[str] = []  # the first few, for a message
        #: a connection was used for a second request: the client keeps its connections
        self.reused = False
        #: requests on a new connection that started after every earlier one had ended
        self.needless = 0
        self.open_until: float | None = None  # when the latest-ending request so far ended
        self.closed = False  # the agent ended the connection of the latest request: a new one was needed

    def add(self, call: Call) -> None:
        client = call.client
        if self.requests:
            if client in self.known:
                self.reused = True
            elif not self.closed and (call.started is None or self.open_until is None
                                      or call.started >= self.open_until):
                self.needless += 1
        self.requests += 1
        if len(self.known) < _MAX_CLIENTS:
            self.known.add(client)
        if len(self.ports) < 4:
            self.ports.append(client)
        self.closed = call.closed_by_agent
        if call.started is not None:
            ended = call.started + (call.duration or 0.0)
            self.open_until = ended if self.open_until is None else max(self.open_until, ended)


class Send(NamedTuple):
    """The latest SendMessage on a task, and how it asked to be answered (fixed once made). Kept only
    while a rule may ask of it (``Session.sends``)."""

    call: Seen
    return_immediately: bool
    inline_push: bool


class LastCall(NamedTuple):
    """The latest A2A call to an agent, and the task it named."""

    call: Seen
    task: str | None


class ListPage(NamedTuple):
    """The latest ListTasks with some filters, and whether its answer was the last page."""

    call: Seen
    last: bool


class _Route:
    """What a held card says of calls to one address: the interfaces it declares on the call's
    origin, the ones the call went to (exactly; loosely, a trailing slash apart) and their versions."""

    __slots__ = ("card", "exact", "loose", "on_origin", "versions")

    def __init__(self, card: Card | None, on_origin: list[Interface], exact: list[Interface]) -> None:
        self.card, self.on_origin, self.exact = card, on_origin, exact
        self.loose: list[Interface] | None = None
        self.versions: frozenset[str] | None = None


_NO_ROUTE = _Route(None, [], [])
_NO_ROUTE.loose, _NO_ROUTE.versions = [], frozenset()


class Knowledge(Protocol):
    """What a rule may ask of the session: the client's knowledge just before the call."""

    def held_card(self, call: Call) -> HeldCard | None: ...
    def held_copy(self, call: Call) -> HeldCard | None: ...
    def interfaces_for(self, call: Call) -> list[Interface]: ...
    def interfaces_called(self, call: Call, loosely: bool = False) -> list[Interface]: ...
    def declared_versions(self, call: Call) -> frozenset[str]: ...
    def address_of(self, interface: Interface) -> str: ...
    def fronts_learned(self) -> int: ...
    def agent_key(self, call: Call) -> str | None: ...
    def task(self, task_id: str | None) -> TaskSeen | None: ...
    def ended(self, task_id: str | None) -> TaskSeen | None: ...
    def polls(self, task_id: str | None, agent: str | None) -> Polls: ...
    def poll_count(self, task_id: str | None) -> int: ...
    def last_poll(self, task_id: str | None, agent: str | None, history: object) -> Seen | None: ...
    def last_send(self, task_id: str | None, agent: str | None) -> Send | None: ...
    def card_at_right_path(self, agent: str | None) -> Seen | None: ...
    def root_card(self, agent: str | None) -> HeldCard | None: ...
    def root_card_0_2(self, agent: str | None) -> HeldCard | None: ...
    def sent_message(self, call: Call) -> Seen | None: ...
    def list_page(self, call: Call) -> ListPage | None: ...
    def refused_verb(self, agent: str | None, method: str) -> Seen | None: ...
    def last_a2a(self, agent: str | None) -> LastCall | None: ...
    def connections(self, agent: str | None) -> Connections | None: ...
    def card_asked(self, agent: str | None) -> Seen | None: ...
    def client_library(self, agent: str | None) -> str | None: ...


@dataclass
class Session:
    """The client's knowledge, updated call by call."""

    cards: dict[str, HeldCard] = field(default_factory=dict)  # agent origin -> the latest card from it
    #: the card fetched at each URL (one host may serve several agents, each its own card)
    card_urls: dict[str, HeldCard] = field(default_factory=dict)
    #: the card of each variant of a URL whose response varies on request headers
    variants: dict[tuple[str, tuple[str | None, ...]], HeldCard] = field(default_factory=dict)
    #: every card held, by origin and content: the same card at another path is the same card
    same_cards: dict[tuple[str | None, str], HeldCopy] = field(default_factory=dict)
    #: origin -> (path, order, card) for every interface a held card declares there
    interfaces: dict[str, list[tuple[str, int, HeldCard]]] = field(default_factory=dict)
    tasks: dict[str, TaskSeen] = field(default_factory=dict)
    #: a task's first terminal sighting, once a later sighting took its place in ``tasks`` (until then it is the
    #: task's latest: ``ended`` finds it there, and a task seen once, ended, takes one slot, not two)
    ended_tasks: dict[str, TaskSeen] = field(default_factory=dict)
    streams: dict[tuple[str, int], Seen] = field(default_factory=dict)
    #: an upstream's origin -> the origin the client addresses it by (a reverse-proxy listener)
    fronts: dict[str, str] = field(default_factory=dict)
    # indexes answering the rules' questions about earlier calls, each by key
    #: task id -> the GetTask calls on it (by task first: a poll looks its task up by its id alone)
    task_polls: dict[str, TaskPolls] = field(default_factory=dict)
    #: (task id, agent) -> the latest SendMessage on it, where that asked to return immediately with no push
    #: config inline and the task had not ended: return-immediately-poll asks of no other (a send that did not
    #: ask so, or one on an ended task, answers it as no send does), so no other is kept
    sends: dict[tuple[str, str | None], Send] = field(default_factory=dict)
    right_path_cards: dict[str | None, Seen] = field(default_factory=dict)
    #: agent_key -> messageId -> the first send of it (by agent first: a key per message costs no tuple)
    sent_messages: dict[str | None, dict[str, Seen]] = field(default_factory=dict)
    list_pages: dict[tuple[str | None, tuple], ListPage] = field(default_factory=dict)
    refused_verbs: dict[tuple[str | None, str], Seen] = field(default_factory=dict)
    last_a2a_calls: dict[str | None, LastCall] = field(default_factory=dict)
    #: agent -> the requests to it and the connections they came on (calls whose client address is recorded)
    agent_connections: dict[str, Connections] = field(default_factory=dict)
    #: agent -> its latest card fetch, whatever it got
    card_asks: dict[str | None, Seen] = field(default_factory=dict)
    #: agent -> the client library (libraries.HABITS key) its latest A2A call's habits showed
    client_libraries: dict[str | None, str] = field(default_factory=dict)
    _order: int = 0
    #: the call ``held_card`` last answered, and its answer (forgotten when a call is learned)
    _memo_call: Call | None = None
    _memo_held: HeldCard | None = None
    _route_memo: tuple[Call | None, _Route | None] = (None, None)
    #: interface URL -> the origins a call to it may have (cleared when a front is learned)
    _origins: dict[str, tuple[str, ...]] = field(default_factory=dict)
    #: (card, agent, path, binding, base path) -> what the card says of calls there: a pure function
    #: of them and the fronts (cleared when a front is learned)
    _routes: dict[tuple, _Route] = field(default_factory=dict)
    #: agent origin -> path -> the card held for a call there (dropped for the origins a new card touches)
    _held: dict[str | None, dict[str, HeldCard | None]] = field(default_factory=dict)

    # -- questions rules ask (Knowledge) ---------------------------------------------------------

    def held_card(self, call: Call) -> HeldCard | None:
        """The card the client held for the agent this call went to: the one whose interface
        the call's URL is under, else the latest card fetched from that host, else the latest
        card that names an interface on it."""
        if self._memo_call is call:
            return self._memo_held
        by_path = self._held.get(call.agent)
        if by_path is None:
            by_path = self._held[call.agent] = {}
        if call.path in by_path:
            held = by_path[call.path]
        else:
            if len(by_path) >= _MAX_ROUTES:
                by_path.clear()
            held = by_path[call.path] = self._held_card(call)
        self._memo_call, self._memo_held = call, held
        return held

    def _held_card(self, call: Call) -> HeldCard | None:
        if call.agent is None:
            return None
        path = call.path.rstrip("/")
        declared = self.interfaces.get(call.agent, ())
        under = [(len(interface_path), order, held) for interface_path, order, held in declared
                 if path == interface_path or path.startswith(interface_path + "/")]
        if under:
            return max(under, key=lambda entry: entry[:2])[2]  # the longest path; the latest card of equals
        if call.agent in self.cards:
            return self.cards[call.agent]
        # a card fetched from one host may send the client to another
        return max(declared, key=lambda entry: entry[1])[2] if declared else None

    def held_copy(self, call: Call) -> HeldCard | None:
        """The copy of the card this fetch asks for that the client already held, if any.

        A card is held from the moment its fetch (or extended-card call) completed, for the rest
        of the session, by the URL it came from: the agent's origin as the client addresses it and
        the path (the extended card: the agent's origin). A response with ``Vary`` is held per
        variant: a request with other values in those headers asks for another card (RFC 9111 §4.1).
        """
        key = card_url(call)
        held = self.card_urls.get(key)
        if held is None and call.card is not None:  # the same card, from another path of its origin
            copy = self.same_cards.get((call.agent, call.card.fingerprint))
            return copy.held(call.card) if copy is not None else None
        if held is None or not held.vary:
            return held
        if "*" in held.vary:
            return None
        return self.variants.get((key, _variant(call, held.vary)))

    def interfaces_for(self, call: Call) -> list[Interface]:
        """The interfaces the held card declares on the origin this call went to."""
        return self._route(call).on_origin

    def origin_of(self, interface: Interface) -> str:
        """An interface's origin as the client addresses it: a listener stands for its upstream."""
        return self._front(_origin_text(interface))

    def interfaces_called(self, call: Call, loosely: bool = False) -> list[Interface]:
        """The declared interfaces a call went to; ``loosely``: the one it meant, a trailing slash apart."""
        route = self._route(call)
        if not loosely:
            return route.exact
        if route.loose is None:
            route.loose = self._interfaces_called(call, route.on_origin, True)
        return route.loose

    def declared_versions(self, call: Call) -> frozenset[str]:
        """The protocol versions the interfaces this call went to declare (else the one it meant,
        a trailing slash apart): the names the agent expects."""
        route = self._route(call)
        if route.versions is None:
            route.versions = frozenset(interface.version for interface in
                                       route.exact or self.interfaces_called(call, loosely=True) if interface.version)
        return route.versions

    def _route(self, call: Call) -> _Route:
        """What the held card says of the address this call went to, worked out once per address
        and card: the same route under the same card goes to the same interfaces, call after call."""
        memo = self._route_memo
        if memo[0] is call:
            return memo[1]
        held = self.held_card(call)
        if held is None or call.agent is None:
            route = _NO_ROUTE
        else:
            key = (id(held.card), call.agent, call.path, call.binding, call.base_path)
            route = self._routes.get(key)
            if route is None or route.card is not held.card:
                on_origin = [i for i in held.card.interfaces if call.agent in self.origins_of(i)]
                route = _Route(held.card, on_origin, self._interfaces_called(call, on_origin, False))
                if len(self._routes) >= _MAX_ROUTES:
                    self._routes.clear()
                self._routes[key] = route
        self._route_memo = (call, route)
        return route

    def _interfaces_called(self, call: Call, interfaces: list[Interface], loosely: bool) -> list[Interface]:
        base = call.path if call.binding == "JSONRPC" else (call.base_path or "")
        result = []
        for interface in interfaces:
            if interface.binding.upper() != (call.binding or "").upper():
                continue
            if call.binding == "JSONRPC":
                exact = (call.path or "/") == (interface.url_path or "/")  # many agents 404 on /rpc/
                if exact or (loosely and call.path.rstrip("/") == interface.path):
                    result.append(interface)
            elif _under(base.rstrip("/"), interface.path):
                result.append(interface)
        return result

    def origins_of(self, interface: Interface) -> tuple[str, ...]:
        """Every origin a call to this interface may have: a gRPC `host:port` names no scheme (the
        channel, plaintext or TLS, decides), so it stands for both."""
        origins = self._origins.get(interface.url)
        if origins is None:
            urls = [interface.url] if "://" in interface.url else [f"{s}://{interface.url}" for s in ("http", "https")]
            origins = self._origins[interface.url] = tuple(self._front(_url_origin(url)) for url in urls)
        return origins

    def _front(self, origin: str) -> str:
        return self.fronts.get(origin, origin)

    def address_of(self, interface: Interface) -> str:
        """An interface's URL in the client's terms, so that messages compare like with like."""
        origin = _origin_text(interface)
        front = self.fronts.get(origin)
        if front is None:
            return interface.url
        parts = split_url(interface.url)
        return urlunsplit((*split_url(front)[:2], parts.path, parts.query, parts.fragment))

    def fronts_learned(self) -> int:
        """How many listeners are known as the fronts of their upstreams: what the interfaces and
        addresses above follow from, besides the held card and the call's address (fronts are
        only ever added)."""
        return len(self.fronts)

    def agent_key(self, call: Call) -> str | None:
        """Which agent a call went to: its card's URL where the client held one (a host may serve
        several agents), else its origin."""
        held = self.held_card(call)
        return held.url if held is not None else call.agent  # _fetch_url(held.fetch, held.extended)

    def task(self, task_id: str | None) -> TaskSeen | None:
        """The latest state the client had seen the task in."""
        return self.tasks.get(task_id) if task_id else None

    def ended(self, task_id: str | None) -> TaskSeen | None:
        """The first sighting of the task in a terminal state, if any."""
        if not task_id:
            return None
        first = self.ended_tasks.get(task_id)
        if first is None:
            latest = self.tasks.get(task_id)
            if latest is not None and latest.state in _TERMINAL:
                return latest  # no later sighting took its place: the first end is the latest
        return first

    def polls(self, task_id: str | None, agent: str | None) -> Polls:
        on_task = self.task_polls.get(task_id or "")
        polls = on_task.agents.get(agent) if on_task is not None else None
        return polls if polls is not None else Polls()

    def poll_count(self, task_id: str | None) -> int:
        """GetTask calls on the task, to any agent."""
        on_task = self.task_polls.get(task_id or "")
        return on_task.count if on_task is not None else 0

    def last_poll(self, task_id: str | None, agent: str | None, history: object) -> Seen | None:
        """The latest GetTask on the task to the agent that asked for the same view (historyLength)."""
        on_task = self.task_polls.get(task_id or "")
        polls = on_task.agents.get(agent) if on_task is not None else None
        return polls.views.get(history) if polls is not None else None

    def last_send(self, task_id: str | None, agent: str | None) -> Send | None:
        return self.sends.get((task_id or "", agent))

    def card_at_right_path(self, agent: str | None) -> Seen | None:
        """The latest card fetch from the agent at the well-known path that worked."""
        return self.right_path_cards.get(agent)

    def root_card(self, agent: str | None) -> HeldCard | None:
        """The card held from the agent's origin at the root's well-known path, if any."""
        return self.card_urls.get(f"{agent}{spec.CARD_PATH}") if agent else None

    def root_card_0_2(self, agent: str | None) -> HeldCard | None:
        """The card held from the agent's origin at 0.2's well-known path (`agent.json`), if any."""
        return self.card_urls.get(f"{agent}{spec.CARD_PATH_0_2}") if agent else None

    def sent_message(self, call: Call) -> Seen | None:
        """The first earlier send of this call's messageId to the same agent."""
        by_id = self.sent_messages.get(self.agent_key(call))
        return by_id.get(call.message_id or "") if by_id is not None else None

    def list_page(self, call: Call) -> ListPage | None:
        """The latest ListTasks to the agent with the same filters, and whether it was the last page."""
        return self.list_pages.get((call.agent, _list_filters(call)))

    def refused_verb(self, agent: str | None, method: str) -> Seen | None:
        """The latest SubscribeToTask with this verb that the agent answered 405."""
        return self.refused_verbs.get((agent, method))

    def last_a2a(self, agent: str | None) -> LastCall | None:
        """The latest A2A call to the agent, and its task."""
        return self.last_a2a_calls.get(agent)

    def connections(self, agent: str | None) -> Connections | None:
        """The requests to the agent so far and the connections they came on, where recorded."""
        return self.agent_connections.get(agent) if agent else None

    def card_asked(self, agent: str | None) -> Seen | None:
        """The latest card fetch from the agent, whatever it got."""
        return self.card_asks.get(agent)

    def client_library(self, agent: str | None) -> str | None:
        """The client library the latest A2A call to the agent was known by (its habits), if one."""
        return self.client_libraries.get(agent)

    # -- learning from a call -------------------------------------------------------------------

    def apply(self, call: Call) -> None:
        """Learn from a call: the cards and task states it showed, and the indexes the rules' questions
        are answered from."""
        self._memo_call = None
        self._route_memo = (None, None)
        if call.upstream is not None or call.notes:
            self._learn_fronts(call)
        kind, operation, agent, status = call.kind, call.operation, call.agent, call.status
        record = seen(call)
        if kind == "card":
            key = card_url(call)
            if call.card is not None and agent:
                self._hold(call, record, call.card, key.endswith("#extended"), key)
            elif status == 304 and key in self.card_urls:
                held = self.card_urls[key]  # revalidated: the same card, fresh from now
                self._hold(call, record, held.card, held.extended, key)
        elif call.extended_card is not None and agent:
            self._hold(call, record, call.extended_card, True, card_url(call))
        self._see(call.states, record)
        if call.late_states:
            stream = self.streams.get((call.file, call.late_stream or -1))
            self._see(call.late_states, stream or record)
        if call.streamed:
            self.streams[(call.file, call.number)] = record
        # the indexes the rules' questions are answered from, by key
        task = call.task_id or ""
        if operation == "GetTask" and task:
            on_task = self.task_polls.get(task)
            if on_task is None:
                on_task = self.task_polls[task] = TaskPolls()
            polls = on_task.agents.get(agent)
            if polls is None:
                polls = on_task.agents[agent] = Polls()
            on_task.count += 1
            polls.count += 1
            polls.last = polls.views[record.view] = record
        elif operation == "SendMessage" and task:
            configuration = call.params.get("configuration")
            immediate = isinstance(configuration, dict) and configuration.get("returnImmediately") is True
            if immediate and not call.inline_push and self.ended(task) is None:
                self.sends[(task, agent)] = Send(record, True, False)
            elif self.sends:
                self.sends.pop((task, agent), None)  # the latest send is one the rule passes over: as none
        elif operation == "ListTasks":
            self.list_pages[(agent, _list_filters(call))] = ListPage(record, call.last_page)
        elif operation == "SubscribeToTask" and status == 405:
            self.refused_verbs[(agent, call.method)] = record
        elif kind == "card" and record.ok and call.path.endswith(spec.CARD_PATH):
            self.right_path_cards[agent] = record
        if call.message_id and operation in ("SendMessage", "SendStreamingMessage"):
            key = self.agent_key(call)
            by_id = self.sent_messages.get(key)
            if by_id is None:
                by_id = self.sent_messages[key] = {}
            by_id.setdefault(call.message_id, record)
        if call.is_a2a:
            self.last_a2a_calls[agent] = LastCall(record, call.task_id)
            if call.client_library is not None:  # as the engine named it (analyze/libraries.py)
                self.client_libraries[agent] = call.client_library
        elif kind == "card":
            self.card_asks[agent] = record
        if call.client is not None and agent is not None and kind != "webhook":
            connections = self.agent_connections.get(agent)
            if connections is None:
                connections = self.agent_connections[agent] = Connections(record)
            connections.add(call)

    def _learn_fronts(self, call: Call) -> None:
        if call.agent is None or call.kind == "webhook":
            return  # a webhook goes the other way: its server is the client's receiver
        if call.upstream is not None and call.upstream not in self.fronts:
            self._learn_front(call.upstream, call.agent)
        for note in call.notes:
            match = _REWROTE.match(note)
            if match:
                old, new = (_url_origin(url) for url in match.groups())
                if old not in self.fronts:
                    self._learn_front(old, new)

    def _learn_front(self, upstream: str, front: str) -> None:
        self.fronts[upstream] = front
        self._routes.clear()
        self._held.clear()
        self._origins.clear()  # the origins worked out so far may go through the new front

    def _hold(self, call: Call, record: Seen, card: Card, extended: bool, key: str) -> None:
        """Hold ``card`` as fetched by ``call`` from ``key`` (its ``card_url``)."""
        answer = _first_values(call.response_headers, _CACHING_HEADERS)
        previous = self.card_urls.get(key)
        cache_control = (answer.get("cache-control") or "").lower()
        match = _MAX_AGE.search(cache_control) if cache_control else None
        vary = answer.get("vary")
        held = HeldCard(card=card, fetch=record, etag=answer.get("etag"), last_modified=answer.get("last-modified"),
                        max_age=int(match.group(1)) if match else None,
                        no_cache="no-cache" in cache_control or "no-store" in cache_control, extended=extended,
                        vary=tuple(name.strip().lower() for name in vary.split(",") if name.strip()) if vary else (),
                        credentials=asked_with(call).get("authorization") if extended else None, url=key,
                        answer=answer, fronts=len(self.fronts))
        if previous is not None and self._refreshed(previous, held, call.agent):
            previous.refetched(held, self._order)  # a refetch: the held card takes its new fields
            self.same_cards[(call.agent, card.fingerprint)] = HeldCopy.of(previous)
            return
        self.card_urls[key] = held
        if held.vary:
            self.variants[(key, _variant(call, held.vary))] = held
        self.same_cards[(call.agent, card.fingerprint)] = HeldCopy.of(held)
        self.cards[call.agent] = held
        self._held.pop(call.agent, None)
        if previous is not None:
            for origin in {o for interface in previous.card.interfaces for o in self.origins_of(interface)}:
                self.interfaces[origin] = [entry for entry in self.interfaces.get(origin, ())
                                           if entry[2] is not previous]
                self._held.pop(origin, None)
        for interface in card.interfaces:
            self._order += 1
            for origin in self.origins_of(interface):
                self.interfaces.setdefault(origin, []).append((interface.path, self._order, held))
                self._held.pop(origin, None)

    def _refreshed(self, previous: HeldCard, fetched: HeldCard, agent: str | None) -> bool:
        """Whether ``previous`` may take this fetch of the same card from the same URL (a refetch, a
        304) in place (``fetched``: the card as this fetch would hold it, see ``_hold``): when nothing
        but ``previous`` is indexed where its card's interfaces are, and it is the agent's latest card; then every index
        and every held-card answer worked out stays as the general path would make it, none has to
        be dropped and worked out again. Not with ``Vary`` (variants keep their own copy) nor once
        fronts were learned since. Found alone once, it stays alone while no entry is indexed (the
        ``_order`` it was found alone at stands): a refetch does not look again."""
        if (previous.card is not fetched.card or previous.vary or fetched.vary or previous.fronts != len(self.fronts)
                or self.cards.get(agent) is not previous):
            return False
        if previous.alone == self._order:
            return True
        for interface in previous.card.interfaces:
            for origin in self.origins_of(interface):
                for entry in self.interfaces.get(origin, ()):
                    if entry[2] is not previous:
                        return False
        return True

    def _see(self, states: list[tuple[str, str]], record: Seen) -> None:
        """Tasks in the states an exchange (``record``) showed them in, all in one call: most show one."""
        tasks, ended = self.tasks, self.ended_tasks
        last = None
        for shown in states:
            if shown is last:
                continue  # a stream's state shown again (``read_frames`` keeps it as one tuple): learned already
            last = shown
            task, state = shown
            previous = tasks.get(task)
            if previous is not None and previous.state in _TERMINAL and task not in ended:
                ended[task] = previous  # its first end, which this sighting takes the place of
            tasks[task] = TaskSeen(state, record)


_TERMINAL = spec.TERMINAL_STATES
#: the response headers that say how a card may be cached (RFC 9111)
_CACHING_HEADERS = frozenset({"cache-control", "etag", "last-modified", "vary"})
#: the request headers a card fetch is held and judged by: its credentials, the validators it revalidates with
_ASKED_WITH = frozenset({"authorization", "if-none-match", "if-modified-since"})


def asked_with(call: Call) -> dict[str, str]:
    """A card fetch's first Authorization, If-None-Match and If-Modified-Since (as ``Call.header``
    finds each), in one pass over its headers instead of one ``header`` each."""
    return _first_values(call.headers, _ASKED_WITH)


def _first_values(headers: list[tuple[str, str]], names: frozenset[str]) -> dict[str, str]:
    """The first value of each of these headers (names in lower case), as ``Call.response_header``
    finds them, in one pass over the headers."""
    found: dict[str, str] = {}
    for key, value in headers:
        name = key.lower()
        if name in names and name not in found:
            found[name] = value
    return found


def _under(base: str, interface_path: str) -> bool:
    """A REST call's base path is the interface's, maybe followed by one tenant segment."""
    if base == interface_path:
        return True
    rest = base[len(interface_path):] if base.startswith(interface_path + "/") else None
    return rest is not None and rest.count("/") == 1


def card_url(call: Call) -> str:
    """Where a card came from: its fetch URL, or the agent's extended card (by any binding)."""
    return _fetch_url(call, call.kind != "card" or call.path.rstrip("/").endswith(spec.LEGACY_EXTENDED_CARD_PATH))


def _fetch_url(fetch: Call | Seen, extended: bool) -> str:
    return f"{fetch.agent}#extended" if extended else f"{fetch.agent}{fetch.path}"


def _variant(call: Call, vary: tuple[str, ...]) -> tuple[str | None, ...]:
    """The values a request has in the headers a response varies on, normalised (RFC 9111 §4.1)."""
    return tuple(" ".join(value.split()).lower() if (value := call.header(name)) is not None else None
                 for name in vary)


def _list_filters(call: Call) -> tuple:
    return tuple(sorted((key, _hashable(value)) for key, value in call.params.items()
                        if key not in ("pageToken", "tenant")))


def _hashable(value: object) -> object:
    if isinstance(value, dict):
        return tuple(sorted((key, _hashable(item)) for key, item in value.items()))
    if isinstance(value, list):
        return tuple(_hashable(item) for item in value)
    return value


def _origin_text(interface: Interface) -> str:
    return _url_origin(interface.url)


def _url_origin(url: str) -> str:
    scheme, host, port = url_origin(url)
    return f"{scheme}://{host}:{port}"
