"""Rules the engine skips for a call like one they found nothing for (``Rule.depends``): each reads
nothing of a call or the session outside what it declared, and the findings with the engine's memory
are the findings without it, on varied sessions."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from a2a_capture.analyze.depends import CARD_FETCH, INTERFACE, key_of
from a2a_capture.analyze.engine import analyze
from a2a_capture.analyze.findings import RULES
from tests.builders import ORIGIN, block, card, fetch_card, http_request, http_response, message, rpc, write
from tests.test_rules import CASES, DONE, SECURED, TENANT, TWO_JSONRPC, V03


@pytest.fixture(autouse=True)
def _shortcuts_on(monkeypatch):
    """These tests hold a shortcut to the general way themselves: it is on for them whatever
    A2A_CAPTURE_NO_SHORTCUTS says (a test that turns it off still does)."""
    from a2a_capture import shortcuts
    from a2a_capture.capture.reader import CaptureReader

    monkeypatch.setattr(shortcuts, "ENABLED", True)
    monkeypatch.setattr(CaptureReader, "quick", True)


MEMOIZED = sorted(rule_id for rule_id, rule in RULES.items() if rule.depends is not None)
DEPENDS = {rule_id: RULES[rule_id].depends for rule_id in MEMOIZED}
#: what the session answers from the held card, the call's address and the fronts it knows: the key's
_KEYED_QUESTIONS = {"held_card", "root_card", "root_card_0_2", "interfaces_for", "interfaces_called",
                    "declared_versions", "address_of", "origin_of", "origins_of", "fronts_learned", "fronts"}
#: what a key may read for the fronts learned (their number: fronts are only ever added)
_FRONTS = {"fronts_learned", "fronts"}
#: of those, the answers that change as fronts are learned
_FRONTED = _KEYED_QUESTIONS - {"held_card", "root_card", "root_card_0_2"} - _FRONTS  # root cards: by the call's origin
#: what the engine keeps a memo's keys by (the call's plan: its operation and kind, with no error): a key
#: need not hold them
_PLANNED = {"operation", "kind", "error"}
#: a call's properties and methods, by the fields they read
_DERIVED = {"is_a2a": {"kind"}, "ok": {"error", "status"}, "header": {"headers"},
            "response_header": {"response_headers"}}
UPSTREAM = "10.0.0.7:9000"
BEHIND = card(supportedInterfaces=[{"url": f"http://{UPSTREAM}/rpc", "protocolBinding": "JSONRPC",
                                    "protocolVersion": "1.0"}])
API_KEY = card(securitySchemes={"key": {"apiKeySecurityScheme": {"location": "header", "name": "X-Api-Key"}}},
               securityRequirements=[{"schemes": {"key": {"list": []}}}])
REST = card(supportedInterfaces=[{"url": f"{ORIGIN}/api", "protocolBinding": "HTTP+JSON", "protocolVersion": "1.0",
                                  "tenant": "acme"}])
SECRET = {"apiKey": "sk-live-0123456789abcdefghijklmnop"}
LEGACY = {"name": "old", "url": f"{ORIGIN}/rpc", "version": "1", "capabilities": {}, "skills": [],
          "defaultInputModes": ["text"], "defaultOutputModes": ["text"]}


class _Reads:
    """A proxy that notes the names read through it (and hands out the real values)."""

    def __init__(self, real, names: set[str]) -> None:
        object.__setattr__(self, "_real", real)
        object.__setattr__(self, "_names", names)

    def __getattr__(self, name: str):
        self._names.add(name)
        return getattr(self._real, name)


class _SessionReads(_Reads):
    """The session, noting the questions asked of it and what is read of the held card it gives."""

    def __init__(self, real, names: set[str], held_names: set[str]) -> None:
        super().__init__(real, names)
        object.__setattr__(self, "_held_names", held_names)

    def held_card(self, call):
        self._names.add("held_card")
        held = self._real.held_card(call)
        return None if held is None else _Reads(held, self._held_names)


def _fields(names: set[str]) -> set[str]:
    return set().union(*(_DERIVED.get(name, {name}) for name in names))


def _read_by(check, call, session) -> tuple[list, set[str], set[str], set[str]]:
    call_names, session_names, held_names = set(), set(), set()
    result = check(_Reads(call, call_names), _SessionReads(session, session_names, held_names))
    return list(result or ()), _fields(call_names), session_names, held_names


def _sessions(tmp_path: Path) -> list[list[Path]]:
    """Sessions that vary everything the interface rules read: the CASES (each twice over, so that
    keys recur), addresses, spellings, tenants, credentials, cards before 0.3, fronts learned midway."""
    made = []

    def session(name: str, *blocks: str) -> None:
        made.append([write(tmp_path, *blocks, name=f"{name}.http")])

    for rule_id, (blocks, _, near_miss) in CASES.items():
        session(f"case-{rule_id}", *blocks, *near_miss, *blocks, *near_miss)
    polls = [rpc(n, "GetTask", {"id": "t-1"}, result=DONE) for n in range(3, 6)]
    session("secured", fetch_card(1, SECURED), *polls,
            rpc(6, "GetTask", {"id": "t-1"}, result=DONE, headers=["A2A-Version: 1.0", "Authorization: Bearer x"]),
            rpc(7, "GetTask", {"id": "t-1"}, result=DONE, headers=["A2A-Version: 1.0", "Cookie: s=1"]), *polls)
    session("api-key", fetch_card(1, API_KEY), *polls,
            rpc(6, "GetTask", {"id": "t-1"}, result=DONE, headers=["A2A-Version: 1.0", "X-Api-Key: k"]), *polls)
    session("spellings", fetch_card(1, TWO_JSONRPC), *polls,
            rpc(6, "tasks/get", {"id": "t-1"}, result=DONE, headers=["A2A-Version: 0.3"]),
            rpc(7, "tasks/get", {"id": "t-1"}, result=DONE),
            rpc(8, "GetTask", {"id": "t-1"}, result=DONE, headers=["A2A-Version: 0.3"]),
            rpc(9, "GetTask", {"id": "t-1"}, result=DONE, headers=[]),
            rpc(10, "GetTask", {"id": "t-1"}, result=DONE, path="/legacy"),
            rpc(11, "GetTask", {"id": "t-1"}, result=DONE, path="/rpc/"),
            rpc(12, "GetTask", {"id": "t-1"}, result=DONE, path="/other"), *polls,
            fetch_card(13, V03), rpc(14, "GetTask", {"id": "t-1"}, result=DONE),
            rpc(15, "tasks/get", {"id": "t-1"}, result=DONE, headers=[]), *polls)
    session("tenant", fetch_card(1, TENANT), *polls, rpc(6, "GetTask", {"id": "t-1", "tenant": "acme"}, result=DONE),
            rpc(7, "GetTask", {"id": "t-1", "tenant": "other"}, result=DONE), *polls)
    rest = [block(n, "GetTask", http_request("GET", f"{path}/tasks/t-1", ["A2A-Version: 1.0"]),
                  http_response(200, DONE))
            for n, path in ((2, "/api"), (3, "/api/acme"), (4, "/api/acme"), (5, "/v1"), (6, "/api/acme/x"))]
    session("rest", fetch_card(1, REST), *rest, *rest)
    session("legacy", fetch_card(1, LEGACY, path="/.well-known/agent.json"),
            *(rpc(n, method, {"id": "t-1", "message": message()}, result=DONE, headers=[])
              for n, method in enumerate(["tasks/send", "tasks/get", "message/send", "GetTask", "tasks/get"], 2)))
    behind = [rpc(n, "GetTask", {"id": "t-1"}, result=DONE) for n in range(2, 5)]
    fronted = block(5, "GetTask", f"#@ server: {UPSTREAM}\n"
                    + http_request("POST", "/rpc", ["Content-Type: application/json", "A2A-Version: 1.0"],
                                   {"jsonrpc": "2.0", "id": 5, "method": "GetTask", "params": {"id": "t-1"}}),
                    http_response(200, {"jsonrpc": "2.0", "id": 5, "result": DONE}))
    session("fronts", fetch_card(1, BEHIND), *behind, fronted,
            *(rpc(n, "GetTask", {"id": "t-1"}, result=DONE) for n in range(6, 9)))
    front = block(5, "GetTask", f"#@ server: {ORIGIN.removeprefix('http://')}\n"
                  + http_request("POST", "/rpc", ["Content-Type: application/json", "A2A-Version: 1.0"],
                                 {"jsonrpc": "2.0", "id": 5, "method": "GetTask", "params": {"id": "t-1"}},
                                 host="127.0.0.1:8000"),
                  http_response(200, {"jsonrpc": "2.0", "id": 5, "result": DONE}))
    session("fronts-late", fetch_card(1), *behind, front,  # the card's own origin turns out to be fronted
            *(rpc(n, "GetTask", {"id": "t-1"}, result=DONE) for n in range(6, 9)))
    # cards refetched whole, with and without findings of the card rules; bodies that are no card (a list;
    # an object answered 203, which only card-secret reads: never memoized), each twice
    odd = [block(n, "discover", http_request("GET", "/.well-known/agent-card.json", []), http_response(status, body))
           for n, (status, body) in enumerate([(200, [SECRET]), (203, SECRET), (203, {"name": "x"})], 2)]
    cards = [fetch_card(1), fetch_card(2, card(name="secretive", metadata=SECRET)), fetch_card(3, V03),
             fetch_card(4, LEGACY, path="/.well-known/agent.json"), fetch_card(5, card(name="other"), path="/card"),
             fetch_card(6, card(supportedInterfaces=None)), fetch_card(7, response_headers=['ETag: W/"v1"'])]
    session("cards", *cards, *odd, *cards, *odd, *cards)
    made.append(sorted(Path(__file__).resolve().parent.parent.joinpath("captures").glob("*.http")))
    return made


def _holding_to_keys(monkeypatch) -> dict[str, int]:
    """Every memoized rule replaced by one that checks, each time it finds nothing for a call the
    memo covers, that it read nothing outside the key; the count of such checks by rule."""
    checked = dict.fromkeys(MEMOIZED, 0)
    for rule_id in MEMOIZED:
        rule = RULES[rule_id]

        def check(call, session, rule=rule):
            hits, read, asked, held_read = _read_by(rule.check, call, session)
            if hits or call.error is not None or call.notes:
                return hits  # only a call with no error and no notes is memoized, and only when quiet
            _, keyed, key_asked, key_held = _read_by(lambda c, s: [key_of(rule.depends, c, s)], call, session)
            keyed |= _PLANNED
            assert read <= keyed, f"{rule.id} read {sorted(read - keyed)} of {call.label}, outside its key"
            assert asked <= _KEYED_QUESTIONS, f"{rule.id} asked the session {sorted(asked - _KEYED_QUESTIONS)}"
            assert key_asked <= _KEYED_QUESTIONS
            assert not asked & _FRONTED or key_asked & _FRONTS, "the key leaves out the fronts"
            held_keyed = {"card"} | key_held
            assert held_read <= held_keyed, f"{rule.id} read {sorted(held_read - held_keyed)} of the held card"
            checked[rule.id] += 1
            return hits

        monkeypatch.setitem(RULES, rule_id, dataclasses.replace(rule, check=check, depends=None))
    return checked


def test_the_interface_rules_and_the_card_rules_are_each_memoized_by_one_key():
    interface_rules = {"auth-missing", "interface-not-preferred", "interface-undeclared", "method-version-mismatch",
                       "tenant-not-echoed", "version-header-missing", "input-mode", "capability-push"}
    card_rules = {"card-insecure-transport", "card-oversized", "card-path", "card-redirect", "card-schema",
                  "card-secret"}
    assert set(MEMOIZED) == interface_rules | card_rules
    assert {DEPENDS[rule_id] for rule_id in interface_rules} == {INTERFACE}
    assert {DEPENDS[rule_id] for rule_id in card_rules - {"card-path"}} == {CARD_FETCH}
    # a card under a prefix: was the root's held? A probe of the 0.3 path: was the 0.2 card held?
    assert DEPENDS["card-path"] == (*CARD_FETCH, "root card", "root card 0.2")


def test_a_memoized_rule_reads_nothing_outside_its_key(tmp_path, monkeypatch):
    checked = _holding_to_keys(monkeypatch)
    for paths in _sessions(tmp_path):
        analyze(paths)
    assert all(count >= 20 for count in checked.values()), checked


@pytest.mark.kit
def test_a_memoized_rule_reads_nothing_outside_its_key_on_the_kit(kit, monkeypatch):
    checked = _holding_to_keys(monkeypatch)
    analyze(sorted(kit.glob("*.http")))
    assert all(checked.values()), checked


def test_the_memo_changes_no_finding(tmp_path, monkeypatch):
    sessions = _sessions(tmp_path)
    with_memo = [analyze(paths).findings for paths in sessions]
    calls = dict.fromkeys(MEMOIZED, 0)
    for rule_id in MEMOIZED:
        rule = RULES[rule_id]

        def counted(call, session, rule=rule):
            calls[rule.id] += 1
            return rule.check(call, session)

        monkeypatch.setitem(RULES, rule_id, dataclasses.replace(rule, check=counted, depends=None))
    assert [analyze(paths).findings for paths in sessions] == with_memo
    unmemoized = dict(calls)
    for rule_id in MEMOIZED:  # counted again, memoized: called fewer times, for the same findings
        monkeypatch.setitem(RULES, rule_id, dataclasses.replace(RULES[rule_id], depends=DEPENDS[rule_id]))
    assert [analyze(paths).findings for paths in sessions] == with_memo
    assert all(calls[rule_id] - unmemoized[rule_id] < unmemoized[rule_id] for rule_id in MEMOIZED), calls


def test_a_rule_that_reads_what_it_did_not_declare_fails(tmp_path, monkeypatch):
    """The check above can fail: tenant-not-echoed reads the call's tenant; left out of its
    declaration, the first quiet call that has one is caught."""
    rule = RULES["tenant-not-echoed"]
    narrower = tuple(name for name in rule.depends if name != "tenant")
    monkeypatch.setitem(RULES, rule.id, dataclasses.replace(rule, depends=narrower))
    monkeypatch.setitem(DEPENDS, rule.id, narrower)
    _holding_to_keys(monkeypatch)
    with pytest.raises(AssertionError, match="tenant-not-echoed read \\['tenant'\\]"):
        for paths in _sessions(tmp_path):
            analyze(paths)


def test_a_rule_may_declare_only_fields_of_a_call_and_facts_of_the_session():
    from a2a_capture.analyze.findings import rule

    with pytest.raises(ValueError, match="depends on colour: neither a field of a call nor one of the session"):
        rule(id="x-colour", severity="info", title="t", spec="s", why="w", example="e", fix="f", on=None,
             depends=("agent", "colour"))
