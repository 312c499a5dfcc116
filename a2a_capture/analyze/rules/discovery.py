"""Discovery: where the card was asked for, and whether it had to be asked for again."""

from __future__ import annotations

from a2a_capture.a2a import spec
from a2a_capture.analyze.depends import CARD_FETCH
from a2a_capture.analyze.findings import Hit, ref, rule
from a2a_capture.analyze.libraries import library_fix
from a2a_capture.analyze.session import asked_with


@rule(
    id="card-path",
    on=("card",),
    severity="warning",
    title="Card requested at the wrong path",
    spec="§8.2",
    why="""
A2A 0.3 and 1.0 agents serve their card at `/.well-known/agent-card.json`. A request for
`/.well-known/agent.json` (the 0.2 path), `/.well-known/agent-card` or any other guess costs a
round trip that usually ends in 404, and then a second request at the right path. A card of 0.2
or before (no `protocolVersion`) answered at `/.well-known/agent.json` is not flagged: that was
its path, and once such a card is held, a probe of `/.well-known/agent-card.json` that finds
nothing is a wasted call: the agent serves 0.2. An agent may mount its card under a path prefix
(`/a2a/.well-known/agent-card.json`):
a card found there is fine; one asked for under a prefix and not found there (a client given an
interface URL, `/a2a/jsonrpc`, as its agent's address looks for the card under it), where the
origin's card had been found at the root, is this rule's.""",
    example="GET /.well-known/agent.json HTTP/1.1  ->  404, then GET /.well-known/agent-card.json; "
            "GET /.well-known/agent-card.json -> 200, then GET /a2a/jsonrpc/.well-known/agent-card.json -> 404",
    good="GET /.well-known/agent-card.json -> 200; or GET /a2a/.well-known/agent-card.json -> 200 where the "
         "agent mounts its card under /a2a",
    fix="Request `/.well-known/agent-card.json` at the agent's origin (its base URL, not an interface URL), "
        "and only that.",
    lenient="this agent also serves its card at this path; an agent that follows 0.3 or 1.0 answers 404",
    depends=(*CARD_FETCH, "root card", "root card 0.2"),
    more_cases=(("prefix", "wasted", "a card asked for under a path prefix and not found there (404, or an "
                                     "answer that is not a card) where the origin's card at the root was held"),
                ("0.2 held", "wasted", f"a card asked for at {spec.CARD_PATH} and not found there where the agent's "
                                       f"card of 0.2 or before had been found at {spec.CARD_PATH_0_2}: its agent "
                                       "serves 0.2, and the client held its card")),
)
def card_path(call, session):
    if call.kind != "card":
        return
    path = call.path.rstrip("/")
    if path.endswith(spec.CARD_PATH):
        if path == spec.CARD_PATH and call.card is None:
            yield from _probe_past_0_2(call, session)
        if path == spec.CARD_PATH or call.card is not None:
            return  # at the root, or served under its prefix: where the agent mounts it
        root = session.root_card(call.agent)
        if root is None:
            return  # nothing yet says the card is at the root
        outcome = (f"answered {call.status}" if call.status and call.status >= 300
                   else "answered with no card" if call.status else "unanswered")
        yield Hit(f"card requested under a path prefix, at {call.path} ({outcome}), where {ref(root.fetch, call)} "
                  f"had found the card of this origin at {spec.CARD_PATH}; ask the agent's base URL, not an "
                  f"interface URL, for its card{library_fix(call, 'card-path', session)}", [root.fetch],
                  kind="redundant")
        return
    if path.endswith(spec.LEGACY_EXTENDED_CARD_PATH):
        return  # the 0.2 extended card route, judged by the capability rules
    if call.card is not None and call.card.before_0_3 and path.endswith(spec.CARD_PATH_0_2):
        return  # the agent's card is of 0.2 or before, whose path this is: the client asked where it should
    outcome = f"answered {call.status}" if call.status else "unanswered"
    right = session.card_at_right_path(call.agent)
    related = [right] if right else []
    yield Hit(f"card requested at {call.path} ({outcome}); A2A 0.3 and 1.0 serve it at {spec.CARD_PATH}"
              f"{library_fix(call, 'card-path', session)}", related)


def _probe_past_0_2(call, session):
    """A fetch of the 0.3 path that brought no card, where the agent's 0.2 card was held from its path:
    the agent serves 0.2, whose card is at `agent.json` only, and the client had it already."""
    held = session.root_card_0_2(call.agent)
    if held is None or not held.card.before_0_3:
        return
    outcome = f"answered {call.status}" if call.status else "unanswered"
    yield Hit(f"card requested at {spec.CARD_PATH} ({outcome}), where {ref(held.fetch, call)} had found this "
              f"agent's card at {spec.CARD_PATH_0_2}: a card of 0.2 or before (no protocolVersion), whose agent "
              f"serves it there only", [held.fetch], kind="redundant")


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
trips of a session. Client libraries fetch the card when a client or agent object is made: a
client that builds one per request fetches the card per request.""",
    example="GET /.well-known/agent-card.json (ETag: W/\"a1\") ... GET /.well-known/agent-card.json",
    good='GET /.well-known/agent-card.json (ETag: W/"a1", max-age=300); 10 minutes later, '
         'GET /.well-known/agent-card.json with If-None-Match: W/"a1" -> 304',
    fix="Keep the card (build the client or agent object once and reuse it); when it is stale, send "
        "`If-None-Match` with its ETag.",
    kind="redundant",
    cases=(
        ("fresh", "wasted", "the same card fetched again while the copy held was fresh (within its max-age)"),
        ("unconditional", "wasted", "the same card fetched again without If-None-Match or If-Modified-Since, "
                                    "although the copy held had a validator"),
        ("no expiry", "wasted", "the same card fetched again where the server set neither an expiry nor a validator: "
                                "the client could have kept its copy"),
        ("other path", "wasted", "the same card fetched again at another path of its origin"),
        ("changed", "advice", "the refetch brought a changed card: not wasted, the client did not hold it; advice to "
                              "revalidate (a 304 costs no body when nothing changed)"),
    ),
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
    brought = call.card if call.kind == "card" else call.extended_card
    conditional = asked.get("if-none-match") or asked.get("if-modified-since")
    if brought is not None and brought.fingerprint != held.card.fingerprint:
        if not conditional:
            yield Hit(f"{what} fetched again, unconditionally, and it had changed since {ref(held.fetch, call)}: "
                      f"{_revalidate(held)}", [held.fetch], kind="advice")
        return
    if held.fetch.path != call.path and not held.extended:
        yield Hit(f"the card at {call.path} is the card {ref(held.fetch, call)} had already fetched at "
                  f"{held.fetch.path}", [held.fetch])
        return
    fresh = held.fresh_at(call.started)
    since = _since(held.fetch, call)
    rebuilt = _rebuilt(held, call, session)
    if fresh:
        yield Hit(f"{what} fetched again{since} while the copy from {ref(held.fetch, call)} was fresh "
                  f"(max-age={held.max_age}){rebuilt}; keep the card until it is stale", [held.fetch])
    elif (held.etag or held.last_modified) and not conditional:
        validator = f"ETag {held.etag}" if held.etag else f"Last-Modified {held.last_modified}"
        if fresh is False:  # the copy had gone stale: revalidating is the fix
            yield Hit(f"{what} fetched again unconditionally after the copy from {ref(held.fetch, call)} went stale "
                      f"(max-age={held.max_age}), although it gave {validator}; revalidate with "
                      "If-None-Match / If-Modified-Since", [held.fetch])
        elif held.max_age is not None:  # a max-age, but the capture has no times to tell if it had gone stale
            yield Hit(f"{what} fetched again unconditionally although {ref(held.fetch, call)} gave {validator} "
                      f"(max-age={held.max_age}); keep the card while fresh, then revalidate with "
                      "If-None-Match / If-Modified-Since", [held.fetch])
        else:  # no max-age to go stale by: keep it, and revalidate only to look for a change
            yield Hit(f"{what} fetched again{since}, unconditionally, although {ref(held.fetch, call)} gave "
                      f"{validator} and set no max-age{rebuilt}; {_keep(rebuilt, call, session)}, and revalidate with "
                      "If-None-Match / If-Modified-Since only to look for a change",
                      [held.fetch])
    elif fresh is None and not conditional and held.max_age is None and not held.no_cache:
        yield Hit(f"{what} fetched again{since} although {ref(held.fetch, call)} had already fetched it and the "
                  f"server set no expiry{rebuilt}; {_keep(rebuilt, call, session)}",
                  [held.fetch])


def _keep(rebuilt: str, call, session) -> str:
    keep = "build it once and reuse it" if rebuilt else "keep the card and reuse the client (or agent) object"
    return keep + library_fix(call, "card-refetch", session)


def _revalidate(held) -> str:
    if held.etag or held.last_modified:
        validator = f"If-None-Match: {held.etag}" if held.etag else f"If-Modified-Since: {held.last_modified}"
        return f"revalidate with {validator}, which costs no body when nothing changed"
    return "the server gave no validator (ETag, Last-Modified) to revalidate with; serve one"


def _since(fetch, call) -> str:
    """How long after the fetch held the card was asked for again ("900 ms later"), where the capture's
    times tell."""
    if fetch.started is None or call.started is None:
        return ""
    seconds = max(call.started - fetch.started, 0.0)
    said = f"{seconds * 1000:.0f} ms" if seconds < 1 else f"{seconds:.1f} s"
    return f" {said} later"


def _rebuilt(held, call, session) -> str:
    """Whether the client used the card in between (an A2A call to its agent after the fetch held):
    the card fetched again before the next call is what a client or agent object rebuilt per call
    does (client libraries fetch the card when the object is made)."""
    last = session.last_a2a(call.agent)
    if last is None or not _after(last.call, held.fetch):
        return ""
    return (f"; {ref(last.call, call)} used the card in between: the client (or agent) object is rebuilt per call "
            "(each new one fetches the card)")


def _after(seen, earlier) -> bool:
    """Whether an exchange came after another: by time where both tell, else by place in one file."""
    if seen.started is not None and earlier.started is not None:
        return seen.started > earlier.started
    if seen.file == earlier.file and seen.label.isdigit() and earlier.label.isdigit():
        return int(seen.label) > int(earlier.label)
    return False
