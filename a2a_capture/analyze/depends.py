"""What a rule's findings depend on, declared by the rule (``rule(..., depends=...)``) so that the
engine, not the rule, remembers a call it found nothing for.

A declaration names fields of the call (``Call``'s) and facts of the session from ``FACTS``. Two
calls that agree on every name declared get the same findings from the rule; once it found
nothing for one, the engine skips it for the other. Only calls with no error and no notes are
skipped so, and the engine keeps what it remembers per plan (one operation and kind), so a
declaration leaves those out. tests/test_rule_memo.py fails when a rule reads anything of a call
or of the session that its declaration does not name.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import fields
from operator import attrgetter

from a2a_capture.a2a.decode import Call

#: a value that is never equal to one remembered: a call whose findings cannot be told by a key
UNKNOWN = object()


def has_credentials(call, card) -> bool:
    """Whether a call carries credentials of any kind the card's schemes name (auth-missing's question)."""
    if call.header("authorization") or call.header("cookie"):
        return True
    for scheme in card.security_schemes:
        if scheme.kind == "apiKey" and scheme.parameter:
            if scheme.location == "query" and scheme.parameter in call.query:
                return True
            if scheme.location in (None, "header") and call.header(scheme.parameter):
                return True
    return False


def _held_card(call, session) -> tuple | None:
    """The card held for the call, by identity (a card refetched whole is another object), and
    whether it is an extended card."""
    held = session.held_card(call)
    return None if held is None else (Same(held.card), held.extended)


def _fronts(call, session) -> int:
    """How many fronts (reverse-proxy listeners) the session knows: they are only ever added, and
    decide which interfaces a call went to."""
    return len(session.fronts)


def _credentials(call, session) -> bool | None:
    """Whether the call carries credentials the held card's schemes name, where that card requires some."""
    held = session.held_card(call)
    if held is None or not held.card.requires_auth:
        return None
    return has_credentials(call, held.card)


def _own_card(call, session) -> object:
    """The card the call fetched, by identity, and so its body (the same bytes served again are read as
    the same card object); a body that is an object but no card tells nothing a key could hold."""
    card, body = call.card, call.response_json
    if card is None:
        return UNKNOWN if isinstance(body, dict) else None
    return Same(card)


def _root_card(call, session) -> object:
    """The card held from the call's origin at the root's well-known path, by identity (card-path: a card
    asked for under a prefix when the root's was held)."""
    held = session.root_card(call.agent)
    return None if held is None else Same(held.card)


def _root_card_0_2(call, session) -> object:
    """The card held from the call's origin at 0.2's path, by identity (card-path: a probe of the 0.3 path
    when a 0.2 card was held)."""
    held = session.root_card_0_2(call.agent)
    return None if held is None else Same(held.card)


#: the session's facts a rule may declare, each a function of the call and the session
FACTS: dict[str, Callable[[Call, object], object]] = {
    "held card": _held_card,
    "fronts": _fronts,
    "credentials": _credentials,
    "own card": _own_card,
    "root card": _root_card,
    "root card 0.2": _root_card_0_2,
}
CALL_FIELDS = frozenset(f.name for f in fields(Call))
#: the call's fields that hold lists: a key holds them as tuples
_LISTS = frozenset(f.name for f in fields(Call) if str(f.type).startswith("list"))


def check_declared(rule_id: str, names: tuple[str, ...]) -> None:
    unknown = [name for name in names if name not in CALL_FIELDS and name not in FACTS]
    if unknown:
        raise ValueError(f"rule {rule_id} depends on {', '.join(unknown)}: neither a field of a call nor one of "
                         f"the session's facts ({', '.join(FACTS)})")


class Key:
    """A declaration made ready to key calls by: its call fields read together, its facts each asked."""

    __slots__ = ("facts", "lists", "names", "read")

    def __init__(self, names: tuple[str, ...]) -> None:
        self.names = names
        fields = [name for name in names if name not in FACTS and name not in _LISTS]
        #: the call's fields of the declaration, but its lists, read together (a tuple, or one value)
        self.read = attrgetter(*fields) if fields else None
        #: the fields that hold lists: a key holds them as tuples
        self.lists = [name for name in names if name in _LISTS]
        self.facts = [FACTS[name] for name in names if name in FACTS]

    def of(self, call, session) -> tuple | None:
        """The declared values for this call, as a key; None where one of them cannot be told
        (``UNKNOWN``)."""
        values = [self.read(call) if self.read is not None else None]
        for name in self.lists:
            values.append(tuple(getattr(call, name)))
        for fact in self.facts:
            value = fact(call, session)
            if value is UNKNOWN:
                return None
            values.append(value)
        return tuple(values)


def key_of(names: tuple[str, ...], call, session) -> tuple | None:
    """``Key(names).of(call, session)``."""
    return Key(names).of(call, session)


class Same:
    """An object in a key, equal only to itself (a card: pydantic models are not hashable, and an
    equal card of another fetch is still another card to the session)."""

    __slots__ = ("value",)

    def __init__(self, value: object) -> None:
        self.value = value

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Same) and other.value is self.value

    def __hash__(self) -> int:
        return id(self.value)


#: what the rules that judge a call by the card held for it read (the interface rules, input-mode,
#: capability-push): the held card, the fronts (which decide the interfaces the call went to), how the
#: call is addressed and spelled, whether it carries the credentials the card asks for, its parts' media
#: types and whether it carries a push config
INTERFACE = ("held card", "fronts", "agent", "path", "binding", "base_path", "tenant", "rpc_method",
             "spelled_version", "version_header", "credentials", "inline_push", "part_media_types")
#: what the rules that judge a card fetch by itself read (transport, redirect, size, schema, secrets,
#: path): where it went, how it was answered, and the card it fetched
CARD_FETCH = ("agent", "status", "path", "card_bytes", "own card")
