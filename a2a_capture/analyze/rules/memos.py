"""The keys the engine skips quiet rules by (``Rule.memo``) that rules of several modules share: a
module of no rules, so that importing it registers none (rules are registered, and run, in the
order of their modules)."""

from __future__ import annotations


def interface_memo(call, session) -> tuple[tuple, object]:
    """What the rules that judge a call by the card held for it read (protocol.py's interface rules
    and input-mode, and capability-push), for a call with no error and no notes: of the call, how it is
    addressed and spelled (and, where the card requires credentials, whether it carries them), the
    media types of its parts and whether it carries a push config; of the session, the held card
    (by identity: the anchor; and whether it is an extended card) and the fronts it knows (how
    many: they are only ever added), which decide the interfaces the call went to. The engine
    keeps the keys by the call's plan, whose calls share their operation and kind (and have no
    error): the key leaves those out. Equal keys, equal findings: once these rules found nothing
    for a key, the engine skips them for it (tests/test_rule_memo.py holds each rule to it)."""
    held = session.held_card(call)
    if held is None:
        card = credentials = extended = None
    else:  # the card's requirements read where pydantic keeps them (most cards have none)
        card, extended = held.card, held.extended
        credentials = (has_credentials(call, card) if card.__dict__["security_requirements"] and card.requires_auth
                       else None)
    return (id(card), extended, len(session.fronts), call.agent, call.path, call.binding, call.base_path,
            call.tenant, call.rpc_method, call.spelled_version, call.version_header, credentials, call.inline_push,
            tuple(call.part_media_types)), card


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
