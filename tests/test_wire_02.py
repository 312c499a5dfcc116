"""The 0.2 wire as a first-class version (issue #28, point 3): card paths judged against the version
the agent serves, 0.2's extended card judged as 0.3's and 1.0's, and 0.1/0.2 method names judged
against the card's versions wherever they were sent."""

from __future__ import annotations

from a2a_capture.analyze.engine import analyze
from tests.builders import ORIGIN, block, card, error, fetch_card, http_request, http_response, rpc, write

CARD_0_2 = card(supportedInterfaces=None, url=f"{ORIGIN}/")  # no protocolVersion: a card of 0.2 or before
CARD_0_3 = card(supportedInterfaces=[{"url": f"{ORIGIN}/rpc", "protocolBinding": "JSONRPC", "protocolVersion": "0.3"}])
AT_0_2 = "/.well-known/agent.json"
RPC = ["Content-Type: application/json"]
TASKS_SEND = {"id": "t-1", "message": {"role": "user", "parts": [{"type": "text", "text": "run"}]}}
NOT_FOUND = error(-32601, message_text="Method not found")


def triples(tmp_path, *blocks) -> set[tuple[str, str, bool]]:
    return {(f.exchange, f.rule, f.wasted) for f in analyze([write(tmp_path, *blocks)]).findings}


def extended(number: int, status: int = 404) -> str:
    answer = http_response(status, card() if status == 200 else None, reason="OK" if status == 200 else "Not Found")
    return block(number, "extended card", http_request("GET", "/agent/authenticatedExtendedCard", []), answer)


def test_a_probe_of_the_0_3_card_path_once_the_0_2_card_is_held_is_wasted(tmp_path):
    assert triples(tmp_path, fetch_card(1, CARD_0_2, path=AT_0_2), fetch_card(2, status=404)) == {
        ("2", "card-path", True)}
    # before the 0.2 card was held, the probe is how a client finds out: no finding
    assert triples(tmp_path, fetch_card(1, status=404), fetch_card(2, CARD_0_2, path=AT_0_2)) == set()
    # a 0.3 card held: another agent, which serves its card at the 0.3 path anyway
    assert triples(tmp_path, fetch_card(1, CARD_0_3), fetch_card(2, CARD_0_3)) == {("2", "card-refetch", True)}


def test_0_2s_extended_card_is_judged_as_0_3s(tmp_path):
    assert triples(tmp_path, fetch_card(1, CARD_0_2, path=AT_0_2), extended(2)) == {
        ("2", "capability-extended-card", True)}
    offered = card(supportedInterfaces=None, url=f"{ORIGIN}/", supportsAuthenticatedExtendedCard=True)
    assert triples(tmp_path, fetch_card(1, offered, path=AT_0_2), extended(2)) == set()
    answered = triples(tmp_path, fetch_card(1, CARD_0_2, path=AT_0_2), extended(2, 200))
    assert not any(rule == "capability-extended-card" for _, rule, _ in answered)  # it has one, whatever the card says


def test_a_0_1_name_is_judged_where_the_card_declares_nothing(tmp_path):
    found = triples(tmp_path, fetch_card(1, CARD_0_3),
                    rpc(2, "tasks/send", TASKS_SEND, path="/", headers=RPC, error=NOT_FOUND))
    assert found == {("2", "interface-undeclared", True), ("2", "method-version-mismatch", True)}
    on_0_2 = triples(tmp_path, fetch_card(1, CARD_0_2, path=AT_0_2),
                     rpc(2, "SendMessage", {"message": {"messageId": "m", "role": "ROLE_USER", "parts": []}},
                         path="/a2a", headers=RPC, error=NOT_FOUND))
    assert ("2", "method-version-mismatch", True) in on_0_2  # a 1.0 name no agent of 0.2 knows, wherever sent
