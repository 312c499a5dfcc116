"""A card fetched again unchanged from the same URL takes the new fetch in place (Session._refreshed):
every finding and every call's held card are what the general path (a new held card, the indexes
rebuilt) gives, on sessions that vary what the shortcut must leave to the general path."""

from __future__ import annotations

from pathlib import Path

import pytest

from a2a_capture.analyze.engine import analyze
from a2a_capture.analyze.session import Session
from tests.builders import ORIGIN, block, card, fetch_card, http_request, http_response, rpc, task, write

DONE = task("t-1", "TASK_STATE_COMPLETED")
AUTH = ["Content-Type: application/json", "A2A-Version: 1.0", "Authorization: Bearer a"]
#: a card fetched from another host that declares its interface here, beside this host's own card
ELSEWHERE = card(name="elsewhere", supportedInterfaces=[{"url": f"{ORIGIN}/rpc", "protocolBinding": "JSONRPC",
                                                         "protocolVersion": "1.0"}])
UPSTREAM = "10.0.0.7:9000"
#: interfaces on a host no call goes to: a card of them is held for its agent by origin alone
AWAY = {"supportedInterfaces": [{"url": "http://away:9003/rpc", "protocolBinding": "JSONRPC",
                                 "protocolVersion": "1.0"}]}


def _poll(number: int, **options) -> str:
    return rpc(number, "GetTask", {"id": "t-1"}, result=DONE, **options)


def _sessions(tmp_path: Path) -> list[list[Path]]:
    def session(name: str, *blocks: str) -> list[Path]:
        return [write(tmp_path, *blocks, name=f"{name}.http")]

    fronted = block(4, "GetTask", f"#@ server: {UPSTREAM}\n"
                    + http_request("POST", "/rpc", ["Content-Type: application/json", "A2A-Version: 1.0"],
                                   {"jsonrpc": "2.0", "id": 4, "method": "GetTask", "params": {"id": "t-1"}}),
                    http_response(200, {"jsonrpc": "2.0", "id": 4, "result": DONE}))
    not_modified = block(5, "discover", http_request("GET", "/.well-known/agent-card.json", ['If-None-Match: W/"a"']),
                         http_response(304, reason="Not Modified"))
    return [
        session("etags", fetch_card(1, response_headers=['ETag: W/"a"']), _poll(2),
                fetch_card(3, response_headers=['ETag: W/"b"', "Cache-Control: max-age=60"]), _poll(4),
                fetch_card(5), fetch_card(6, response_headers=["Cache-Control: no-store"]), _poll(7)),
        session("not-modified", fetch_card(1, response_headers=['ETag: W/"a"']), _poll(2),
                fetch_card(3, response_headers=['ETag: W/"a"']), _poll(4), not_modified, _poll(6),
                fetch_card(7, request_headers=['If-None-Match: W/"a"'])),
        session("vary", fetch_card(1, response_headers=["Vary: A2A-Version"]), fetch_card(2), _poll(3),
                fetch_card(4, response_headers=["Vary: A2A-Version"]),
                fetch_card(5, request_headers=["A2A-Version: 1.0"]), _poll(6)),
        session("changed", fetch_card(1), _poll(2), fetch_card(3, card(name="renamed")), _poll(4), fetch_card(5),
                _poll(6)),
        session("paths", fetch_card(1), fetch_card(2, path="/.well-known/agent.json"), _poll(3), fetch_card(4),
                fetch_card(5, path="/.well-known/agent.json"), _poll(6)),
        session("shared-origin", fetch_card(1), block(2, "discover", http_request(
                    "GET", "/.well-known/agent-card.json", [], host="other:9002"), http_response(200, ELSEWHERE)),
                _poll(3), fetch_card(4), _poll(5), block(6, "discover", http_request(
                    "GET", "/.well-known/agent-card.json", [], host="other:9002"), http_response(200, ELSEWHERE)),
                _poll(7), fetch_card(8), _poll(9)),
        # refreshed (found alone where its interfaces are), then another card declares an interface there
        session("alone-then-shared", fetch_card(1), fetch_card(2), _poll(3), block(4, "discover", http_request(
                    "GET", "/.well-known/agent-card.json", [], host="other:9002"), http_response(200, ELSEWHERE)),
                _poll(5), fetch_card(6), _poll(7), fetch_card(8), _poll(9)),
        session("fronts", fetch_card(1, card(supportedInterfaces=[{
                    "url": f"http://{UPSTREAM}/rpc", "protocolBinding": "JSONRPC", "protocolVersion": "1.0"}])),
                _poll(2), _poll(3), fronted, fetch_card(5, card(supportedInterfaces=[{
                    "url": f"http://{UPSTREAM}/rpc", "protocolBinding": "JSONRPC", "protocolVersion": "1.0"}])),
                _poll(6), fetch_card(7, card(supportedInterfaces=[{
                    "url": f"http://{UPSTREAM}/rpc", "protocolBinding": "JSONRPC", "protocolVersion": "1.0"}])),
                _poll(8)),
        session("extended", fetch_card(1, card(capabilities={"extendedAgentCard": True})),
                rpc(2, "GetExtendedAgentCard", {}, headers=AUTH, result=card(name="probe+")), _poll(3),
                rpc(4, "GetExtendedAgentCard", {}, headers=AUTH, result=card(name="probe+")),
                rpc(5, "GetExtendedAgentCard", {}, headers=[*AUTH[:2], "Authorization: Bearer b"],
                    result=card(name="probe+")), _poll(6)),
        session("agent-latest", fetch_card(1, ELSEWHERE, path="/x/card"), fetch_card(2, card(name="latest", **AWAY)),
                _poll(3), fetch_card(4, ELSEWHERE, path="/x/card"), _poll(5)),
        [write(tmp_path, fetch_card(1), _poll(2), name="client-a.http"),
         write(tmp_path, fetch_card(1), _poll(2), name="client-b.http")],
        sorted(Path(__file__).resolve().parent.parent.joinpath("captures").glob("*.http")),
    ]


def _same_with_and_without_the_shortcut(sessions, monkeypatch) -> int:
    taken = []
    refreshed = Session._refreshed

    def counted(self, previous, fetched, agent):
        taken.append(refreshed(self, previous, fetched, agent))
        return taken[-1]

    monkeypatch.setattr(Session, "_refreshed", counted)
    shortcut = [analyze(paths) for paths in sessions]
    monkeypatch.setattr(Session, "_refreshed", lambda self, previous, fetched, agent: False)
    general = [analyze(paths) for paths in sessions]
    for quick, slow in zip(shortcut, general, strict=True):
        assert quick.findings == slow.findings
        assert quick.calls == slow.calls  # each call's held card: agent, fetch exchange, ETag, fingerprint
        assert quick.summary == slow.summary and quick.agent_names == slow.agent_names
    return sum(taken)


def test_a_card_fetched_again_unchanged_gives_what_a_new_held_card_gives(tmp_path, monkeypatch):
    assert _same_with_and_without_the_shortcut(_sessions(tmp_path), monkeypatch) >= 8


def test_the_shortcut_leaves_variants_changed_cards_and_shared_origins_to_the_general_path(tmp_path, monkeypatch):
    sessions = {paths[0].stem: paths for paths in _sessions(tmp_path)}
    for name in ("vary", "changed", "shared-origin", "alone-then-shared", "fronts", "agent-latest"):
        assert _same_with_and_without_the_shortcut([sessions[name]], monkeypatch) <= 1, name
        monkeypatch.undo()


@pytest.mark.kit
def test_the_kit_gives_the_same_with_the_shortcut(kit, monkeypatch):
    _same_with_and_without_the_shortcut([sorted(kit.glob("*.http"))], monkeypatch)
