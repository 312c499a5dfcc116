"""A card is a card wherever it came from: any path, the extended card by any binding, variants by Vary."""

from __future__ import annotations

from a2a_capture.analyze.engine import analyze
from tests.builders import block, card, fetch_card, http_request, http_response, rpc, write

SECURE = {"capabilities": {"extendedAgentCard": True}}
AUTH = ["Content-Type: application/json", "A2A-Version: 1.0", "Authorization: Bearer a"]


def _found(tmp_path, *blocks):
    return sorted((f.exchange, f.rule) for f in analyze([write(tmp_path, *blocks)]).findings)


def test_a_card_at_the_legacy_path_fetched_again_is_a_refetch(tmp_path):
    blocks = [fetch_card(1, path="/.well-known/agent.json"), fetch_card(2, path="/.well-known/agent.json")]
    assert _found(tmp_path, *blocks) == [("1", "card-path"), ("2", "card-path"), ("2", "card-refetch")]


def test_a_card_at_a_custom_path_fetched_again_is_a_refetch(tmp_path):
    blocks = [fetch_card(1, path="/agents/probe/card"), fetch_card(2, path="/agents/probe/card")]
    found = _found(tmp_path, *blocks)
    assert ("2", "card-refetch") in found and ("1", "card-refetch") not in found


def test_the_extended_card_over_jsonrpc_fetched_again_by_the_same_principal(tmp_path):
    first = rpc(2, "GetExtendedAgentCard", {}, headers=AUTH, result=card(name="probe+"))
    again = rpc(3, "GetExtendedAgentCard", {}, headers=AUTH, result=card(name="probe+"))
    other = rpc(3, "GetExtendedAgentCard", {}, headers=[*AUTH[:2], "Authorization: Bearer b"],
                result=card(name="probe+"))
    assert _found(tmp_path, fetch_card(1, card(**SECURE)), first, again) == [("3", "card-refetch")]
    assert _found(tmp_path, fetch_card(1, card(**SECURE)), first, other) == []


def test_the_extended_card_over_http_json_fetched_again(tmp_path):
    rest = card(**SECURE, supportedInterfaces=[{"url": "http://localhost:9001/api", "protocolBinding": "HTTP+JSON",
                                                "protocolVersion": "1.0"}])
    get = [block(n, "extended", http_request("GET", "/api/extendedAgentCard", ["A2A-Version: 1.0",
                                                                              "Authorization: Bearer a"]),
                 http_response(200, card(name="probe+"))) for n in (2, 3)]
    assert _found(tmp_path, fetch_card(1, rest), *get) == [("3", "card-refetch")]


def test_a_card_that_varies_on_the_version_is_one_card_per_version(tmp_path):
    def fetch(number, version):
        return fetch_card(number, request_headers=[f"A2A-Version: {version}"],
                          response_headers=["Vary: A2A-Version", 'ETag: "v-' + version + '"'])
    blocks = [fetch(1, "0.3"), fetch(2, "1.0"), fetch(3, "0.3")]
    analysis = analyze([write(tmp_path, *blocks)])
    refetches = [(f.exchange, f.related) for f in analysis.findings if f.rule == "card-refetch"]
    assert refetches == [("3", ["1"])]


def test_without_vary_a_second_version_is_the_same_card_again(tmp_path):
    blocks = [fetch_card(1, request_headers=["A2A-Version: 0.3"]), fetch_card(2, request_headers=["A2A-Version: 1.0"])]
    assert _found(tmp_path, *blocks) == [("2", "card-refetch")]


def test_a_second_client_in_the_session_holds_the_first_ones_card(tmp_path):
    first = write(tmp_path, fetch_card(1), name="client-a.http")
    second = write(tmp_path, fetch_card(1), name="client-b.http")
    findings = analyze([first, second]).findings
    assert [(f.file, f.rule) for f in findings] == [(str(second), "card-refetch")]


def test_the_same_card_at_another_path_of_its_origin_is_held(tmp_path):
    blocks = [fetch_card(1), fetch_card(2, path="/.well-known/agent.json")]
    analysis = analyze([write(tmp_path, *blocks)])
    refetch = next(f for f in analysis.findings if f.rule == "card-refetch")
    assert (refetch.exchange, refetch.related, refetch.wasted) == ("2", ["1"], True)
    other = [fetch_card(1), fetch_card(2, card(name="another"), path="/.well-known/agent.json")]
    assert "card-refetch" not in {f.rule for f in analyze([write(tmp_path, *other)]).findings}


def test_what_a_fetch_asked_with_is_what_call_header_finds():
    from a2a_capture.a2a.decode import Call
    from a2a_capture.analyze.session import _ASKED_WITH, asked_with

    heads = [[], [("Host", "h")], [("Authorization", "Bearer a"), ("authorization", "Bearer b")],
             [("IF-NONE-MATCH", ""), ("If-None-Match", 'W/"a"'), ("If-Modified-Since", "Tue, 1 Dec 2026")],
             [("if-modified-since", "x"), ("If-None-Match", 'W/"a"'), ("AUTHORIZATION", "")]]
    for headers in heads:
        call = Call(number=1, label="1", headers=headers)
        asked = asked_with(call)
        assert all(asked.get(name) == call.header(name) for name in _ASKED_WITH), headers


def _held_cards(session) -> list:
    """Every held card's fields (but the answer it was held by, shared or not), by the URL it is held under, and
    where the latest card of each agent and each card by content were held."""
    from dataclasses import fields

    from a2a_capture.analyze.session import HeldCard
    names = [f.name for f in fields(HeldCard) if f.name != "answer"]
    return [[(key, [getattr(held, name) for name in names]) for key, held in session.card_urls.items()],
            {agent: held.url for agent, held in session.cards.items()},
            {key: held.url for key, held in session.same_cards.items()}]


def _recorded(path, fetches: list[tuple[str, str, str, list, dict | None, list]]):
    """A session as the recorder writes it (its heads known to the reader after a sighting or two): a GET of
    each (host, server, target, request headers, card, response headers), a POST of a poll where the card is None."""
    import json

    from a2a_capture.capture import CaptureWriter, Exchange, ExchangeMeta, Request, Response
    writer = CaptureWriter()
    with open(path, "wb") as out:
        out.write(writer.preamble(meta=[("format", "a2a-capture/1")]))
        for number, (host, server, target, sent, data, got) in enumerate(fetches, 1):
            meta = ExchangeMeta(start=f"2026-11-30T07:{number // 60:02d}:{number % 60:02d}.1Z",
                                end=f"2026-11-30T07:{number // 60:02d}:{number % 60:02d}.2Z",
                                client="127.0.0.1:50312", server=server)
            head = [("Host", host), ("A2A-Version", "1.0"), *sent]
            if data is None:
                body = json.dumps({"jsonrpc": "2.0", "id": number, "method": "GetTask", "params": {"id": "t"}}).encode()
                request = Request(method="POST", target="/", body=body, headers=[
                    *head, ("Content-Type", "application/json"), ("Content-Length", str(len(body)))])
                body = json.dumps({"jsonrpc": "2.0", "id": number, "result": {}}).encode()
            else:
                request, body = Request(method="GET", target=target, headers=head), json.dumps(data).encode()
            response = Response(status=200, reason="OK", body=body, headers=[
                ("date", f"Mon, 30 Nov 2026 07:40:{number % 60:02d} GMT"), ("content-length", str(len(body))),
                ("content-type", "application/json"), *got])
            out.write(writer.block(Exchange(number=number, title="discover", meta=meta, request=request,
                                            response=response)))
    return path




def test_a_card_held_long_ago_and_replaced_is_still_the_same_card_at_another_path(tmp_path):
    # the session keeps how card 1 was held, not the card (issue 36): the fetch at another path brings it again
    old, new = card(version="1.0.0"), card(version="2.0.0")
    path = write(tmp_path, fetch_card(1, old), fetch_card(2, new), fetch_card(3, old, path="/agents/probe/card"))
    refetch = [f for f in analyze([path]).findings if f.rule == "card-refetch"]
    cited = [(f.exchange, [label for _, label, _ in f.related_locations]) for f in refetch]
    assert cited == [("2", ["1"]), ("3", ["1"])]
    assert "had changed since" in refetch[0].message  # advice: the second fetch brought another card
    assert "had already fetched at /.well-known/agent-card.json" in refetch[1].message
