"""Discovery: where the card was asked for, and whether it had to be asked for again."""

from __future__ import annotations

from a2a_capture.a2a import spec
from a2a_capture.analyze.depends import CARD_FETCH
from a2a_capture.analyze.findings import Hit, ref, rule
from a2a_capture.analyze.session import asked_with


@rule(
    id="card-path",
    on=("card",),
    depends=CARD_FETCH,
    severity="warning",
    title="Card requested at the wrong path",
    spec="§8.2",
    why="""
A2A 0.3 and 1.0 agents serve their card at `/.well-known/agent-card.json`. A request for
`/.well-known/agent.json` (the 0.2 path), `/.well-known/agent-card` or any other guess costs a
round trip that usually ends in 404, and then a second request at the right path. A card of 0.2
or before (no `protocolVersion`) answered at `/.well-known/agent.json` is not flagged: that was
its path.""",
    example="GET /.well-known/agent.json HTTP/1.1  ->  404, then GET /.well-known/agent-card.json",
    fix="Request `/.well-known/agent-card.json` first, and only that.",
    lenient="this agent also serves its card at this path; an agent that follows 0.3 or 1.0 answers 404",
)
def card_path(call, session):
    if call.kind != "card" or call.path.rstrip("/").endswith(spec.CARD_PATH):
        return
    if call.path.rstrip("/").endswith(spec.LEGACY_EXTENDED_CARD_PATH):
        return  # the 0.2 extended card route, judged by the capability rules
    if call.card is not None and call.card.before_0_3 and call.path.rstrip("/").endswith(spec.CARD_PATH_0_2):
        return  # the agent's card is of 0.2 or before, whose path this is: the client asked where it should
    outcome = f"answered {call.status}" if call.status else "unanswered"
    right = session.card_at_right_path(call.agent)
    related = [right] if right else []
    yield Hit(f"card requested at {call.path} ({outcome}); A2A 0.3 and 1.0 serve it at {spec.CARD_PATH}", related)


@rule(
    id="card-refetch",
    on=("card", "GetExtendedAgentCard"),
    severity="warning",
    title="Card fetched again without need",
    spec="§8.6.2",
    why="""
A client should cache the card as HTTP says (RFC 9111): within `max-age` it needs no request at
all, and after that it should revalidate with `If-None-Match` or `If-Modified-Since`, which costs
a 304 with no body. Fetching the whole card again, often before every message, doubles the round
trips of a session.""",
    example="GET /.well-known/agent-card.json (ETag: W/\"a1\") ... GET /.well-known/agent-card.json",
    fix="Keep the card; when it is stale, send `If-None-Match` with its ETag.",
    kind="redundant",
)
def card_refetch(call, session):
    if call.agent is None or not (call.kind == "card" or call.operation == "GetExtendedAgentCard"):
        return  # a card at any path, the extended card by any binding
    held = session.held_copy(call)
    if held is None:
        return  # never held, or another variant
    asked = asked_with(call)
    if held.extended and held.credentials != asked.get("authorization"):
        return  # an extended card for another principal
    what = "extended card" if held.extended else "card"
    if held.fetch.path != call.path and not held.extended:
        yield Hit(f"the card at {call.path} is the card {ref(held.fetch, call)} had already fetched at "
                  f"{held.fetch.path}", [held.fetch])
        return
    fresh = held.fresh_at(call.started)
    conditional = asked.get("if-none-match") or asked.get("if-modified-since")
    if fresh:
        yield Hit(f"{what} fetched again while the copy from {ref(held.fetch, call)} was fresh "
                  f"(max-age={held.max_age})", [held.fetch])
    elif (held.etag or held.last_modified) and not conditional:
        validator = f"ETag {held.etag}" if held.etag else f"Last-Modified {held.last_modified}"
        yield Hit(f"{what} fetched again unconditionally although {ref(held.fetch, call)} gave "
                  f"{validator}; revalidate with If-None-Match / If-Modified-Since", [held.fetch])
    elif fresh is None and not conditional and held.max_age is None and not held.no_cache:
        yield Hit(f"{what} fetched again although {ref(held.fetch, call)} had already fetched it and the "
                  "server set no expiry", [held.fetch])
