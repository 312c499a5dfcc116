"""What the client knew at each moment: the cards it held, the tasks it had seen.

The session walks calls in order. Rules look at a call against the session *before* the
call is applied, which is exactly what the client knew when it made the call.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from urllib.parse import urlsplit, urlunsplit

from a2a_capture.a2a import spec
from a2a_capture.a2a.cards import Card, Interface
from a2a_capture.a2a.decode import Call

_MAX_AGE = re.compile(r"(?:^|[,\s])(?:s-)?max-age\s*=\s*\"?(\d+)")
#: the recorder's note on a card it pointed at its listener (docs/capture-format.md)
_REWROTE = re.compile(r"a2a-capture rewrote the card's interface (\S+) to (\S+) ")


@dataclass
class HeldCard:
    """A card the client held, and how it got it."""

    card: Card
    fetch: Call
    etag: str | None = None
    last_modified: str | None = None
    max_age: int | None = None
    no_cache: bool = False
    extended: bool = False
    #: request headers the response varies on (RFC 9111 §4.1), lower case; "*" matches nothing
    vary: tuple[str, ...] = ()
    #: the fetch's Authorization: an extended card is per principal
    credentials: str | None = None

    def fresh_at(self, when: float | None) -> bool | None:
        """True or False where the capture's times and the card's max-age tell; else None."""
        if self.max_age is None or self.no_cache or when is None or self.fetch.started is None:
            return None
        return when - self.fetch.started < self.max_age

    @property
    def provenance(self) -> dict:
        return {"agent": self.fetch.agent, "file": self.fetch.file, "exchange": self.fetch.label,
                "etag": self.etag, "fingerprint": self.card.fingerprint, "extended": self.extended}


@dataclass
class TaskSeen:
    state: str
    call: Call  # the call that showed this state
    agent: str | None


@dataclass
class Session:
    """The client's knowledge, updated call by call."""

    cards: dict[str, HeldCard] = field(default_factory=dict)  # agent origin -> the latest card from it
    #: the card fetched at each URL (one host may serve several agents, each its own card)
    card_urls: dict[str, HeldCard] = field(default_factory=dict)
    #: the card of each variant of a URL whose response varies on request headers
    variants: dict[tuple[str, tuple[str | None, ...]], HeldCard] = field(default_factory=dict)
    #: every card held, by origin and content: the same card at another path is the same card
    same_cards: dict[tuple[str | None, str], HeldCard] = field(default_factory=dict)
    #: (origin, path, card) for every interface a held card declares
    interfaces: list[tuple[str, str, HeldCard]] = field(default_factory=list)
    tasks: dict[str, TaskSeen] = field(default_factory=dict)
    ended: dict[str, TaskSeen] = field(default_factory=dict)  # first terminal sighting per task
    calls: list[Call] = field(default_factory=list)
    streams: dict[tuple[str, int], Call] = field(default_factory=dict)
    # indexes, so that every rule looks only at the calls that can matter (a session can be long)
    task_calls: dict[str, list[Call]] = field(default_factory=dict)
    by_operation: dict[tuple[str | None, str | None], list[Call]] = field(default_factory=dict)
    sent_messages: dict[tuple[str | None, str], Call] = field(default_factory=dict)  # by agent_key
    last_a2a: dict[str | None, Call] = field(default_factory=dict)
    #: an upstream's origin -> the origin the client addresses it by (a reverse-proxy listener)
    fronts: dict[str, str] = field(default_factory=dict)

    # -- questions rules ask ------------------------------------------------------------------

    def held_card(self, call: Call) -> HeldCard | None:
        """The card the client held for the agent this call went to: the one whose interface
        the call's URL is under, else the latest card fetched from that host, else the latest
        card that names an interface on it."""
        if call.agent is None:
            return None
        path = call.path.rstrip("/")
        under = [(len(interface_path), index, held)
                 for index, (origin, interface_path, held) in enumerate(self.interfaces)
                 if origin == call.agent and (path == interface_path or path.startswith(interface_path + "/"))]
        if under:
            return max(under, key=lambda entry: entry[:2])[2]  # the longest path; the latest card of equals
        if call.agent in self.cards:
            return self.cards[call.agent]
        # a card fetched from one host may send the client to another
        same_host = [held for origin, _, held in self.interfaces if origin == call.agent]
        return same_host[-1] if same_host else None

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
            return self.same_cards.get((call.agent, call.card.fingerprint))
        if held is None or not held.vary:
            return held
        if "*" in held.vary:
            return None
        return self.variants.get((key, _variant(call, held.vary)))

    def interfaces_for(self, call: Call) -> list[Interface]:
        held = self.held_card(call)
        if held is None or call.agent is None:
            return []
        return [i for i in held.card.interfaces if self.origin_of(i) == call.agent]

    def origin_of(self, interface: Interface) -> str:
        """An interface's origin as the client addresses it: a listener stands for its upstream."""
        origin = _origin_text(interface)
        return self.fronts.get(origin, origin)

    def address_of(self, interface: Interface) -> str:
        """An interface's URL in the client's terms, so that messages compare like with like."""
        origin = _origin_text(interface)
        front = self.fronts.get(origin)
        if front is None:
            return interface.url
        parts = urlsplit(interface.url)
        return urlunsplit((*urlsplit(front)[:2], parts.path, parts.query, parts.fragment))

    def previous(self, where, agent: str | None = None, among: list[Call] | None = None) -> Call | None:
        """The latest earlier call that satisfies ``where``, optionally to one agent.

        ``among`` narrows the search to an index (``task_history``, ``of_operation``).
        """
        for earlier in reversed(self.calls if among is None else among):
            if (agent is None or earlier.agent == agent) and where(earlier):
                return earlier
        return None

    def agent_key(self, call: Call) -> str | None:
        """Which agent a call went to: its card's URL where the client held one (a host may serve
        several agents), else its origin."""
        held = self.held_card(call)
        return card_url(held.fetch) if held is not None else call.agent

    def task_history(self, task_id: str | None) -> list[Call]:
        """Earlier calls about a task, in order."""
        return self.task_calls.get(task_id or "", [])

    def of_operation(self, agent: str | None, operation: str | None) -> list[Call]:
        """Earlier calls of one operation (or kind, for card fetches) to one agent."""
        return self.by_operation.get((agent, operation), [])

    # -- learning from a call -------------------------------------------------------------------

    def apply(self, call: Call) -> None:
        self._learn_fronts(call)
        if call.kind == "card" and call.card is not None and call.agent:
            self._hold(call, call.card, extended=card_url(call).endswith("#extended"))
        elif call.kind == "card" and call.status == 304 and card_url(call) in self.card_urls:
            held = self.card_urls[card_url(call)]  # revalidated: the same card, fresh from now
            self._hold(call, held.card, extended=held.extended)
        elif call.operation == "GetExtendedAgentCard" and call.ok and call.agent:
            from a2a_capture.a2a.cards import parse_card  # a card in a result

            result = call.response_json.get("result", call.response_json) if isinstance(
                call.response_json, dict) else None
            if isinstance(result, dict) and "name" in result:
                self._hold(call, parse_card(result), extended=True)
        for task, state in call.states:
            self._see(task, state, call)
        for task, state in call.late_states:
            stream = self.streams.get((call.file, call.late_stream or -1))
            self._see(task, state, stream or call)
        if call.streamed:
            self.streams[(call.file, call.number)] = call
        self.calls.append(call)
        if call.task_id:
            self.task_calls.setdefault(call.task_id, []).append(call)
        self.by_operation.setdefault((call.agent, call.operation or call.kind), []).append(call)
        if call.message_id and call.operation in ("SendMessage", "SendStreamingMessage"):
            self.sent_messages.setdefault((self.agent_key(call), call.message_id), call)
        if call.is_a2a:
            self.last_a2a[call.agent] = call

    def _learn_fronts(self, call: Call) -> None:
        if call.agent is None:
            return
        if call.upstream is not None:
            self.fronts.setdefault(call.upstream, call.agent)
        for note in call.notes:
            match = _REWROTE.match(note)
            if match:
                old, new = (_origin_text(Interface(url=url, binding="")) for url in match.groups())
                self.fronts.setdefault(old, new)

    def _hold(self, call: Call, card: Card, extended: bool) -> None:
        cache_control = (call.response_header("cache-control") or "").lower()
        match = _MAX_AGE.search(cache_control)
        held = HeldCard(
            card=card, fetch=call, etag=call.response_header("etag"),
            last_modified=call.response_header("last-modified"),
            max_age=int(match.group(1)) if match else None,
            no_cache="no-cache" in cache_control or "no-store" in cache_control, extended=extended,
            vary=tuple(name.strip().lower() for name in (call.response_header("vary") or "").split(",")
                       if name.strip()),
            credentials=call.header("authorization"),
        )
        key = card_url(call)
        previous = self.card_urls.get(key)
        self.card_urls[key] = held
        if held.vary:
            self.variants[(key, _variant(call, held.vary))] = held
        self.same_cards[(call.agent, card.fingerprint)] = held
        self.cards[call.agent] = held
        if previous is not None:
            self.interfaces = [entry for entry in self.interfaces if entry[2] is not previous]
        for interface in card.interfaces:
            self.interfaces.append((self.origin_of(interface), interface.path, held))

    def _see(self, task: str, state: str, call: Call) -> None:
        seen = TaskSeen(state=state, call=call, agent=call.agent)
        self.tasks[task] = seen
        if state in spec.TERMINAL_STATES and task not in self.ended:
            self.ended[task] = seen


def card_url(call: Call) -> str:
    """Where a card came from: its fetch URL, or the agent's extended card (by any binding)."""
    if call.kind == "card" and not call.path.rstrip("/").endswith(spec.LEGACY_EXTENDED_CARD_PATH):
        return f"{call.agent}{call.path}"
    return f"{call.agent}#extended"


def _variant(call: Call, vary: tuple[str, ...]) -> tuple[str | None, ...]:
    """The values a request has in the headers a response varies on, normalised (RFC 9111 §4.1)."""
    return tuple(" ".join(value.split()).lower() if (value := call.header(name)) is not None else None
                 for name in vary)


def _origin_text(interface: Interface) -> str:
    scheme, host, port = interface.origin
    return f"{scheme}://{host}:{port}"
