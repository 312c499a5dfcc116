"""Reverse mode keeps every call in the capture: cards are rewritten by what they are, wherever
they are served, and an origin the recording cannot front is noted, warned about and reported.

Real mitmdump with the addon in front of real a2a-sdk agents and the a2a-sdk client.
"""

from __future__ import annotations

import asyncio
import json

import httpx
import pytest
from a2a.client import ClientConfig, create_client
from a2a.types import GetExtendedAgentCardRequest, GetTaskRequest

from a2a_capture.analyze.config import Config
from a2a_capture.analyze.engine import analyze
from a2a_capture.capture import read_capture
from tests.live import Recorder, agent, free_port
from tests.test_recorder_live import Wire, send

pytestmark = pytest.mark.live


def _session(listen: int, wire: Wire, card_path: str | None, streaming: bool = True) -> None:
    async def run():
        async with wire.client() as http:
            client = await create_client(f"http://127.0.0.1:{listen}", ClientConfig(httpx_client=http,
                                                                                     streaming=streaming),
                                         relative_card_path=card_path)
            events = [event async for event in client.send_message(send("run", "m-1"))]
            task = events[0].task if events[0].HasField("task") else None
            if task is not None:
                await client.get_task(GetTaskRequest(id=task.id))
    asyncio.run(run())


@pytest.mark.parametrize("card_path", ["/.well-known/agent.json", "/cards/reviewer.json"])
def test_a_card_at_any_path_is_rewritten_so_every_client_call_is_recorded(tmp_path, card_path):
    output = tmp_path / "older.http"
    listen = free_port()
    wire = Wire()
    with agent("older", card_path=card_path) as upstream, Recorder(output, [(upstream, listen)]):
        _session(listen, wire, card_path)
    exchanges = read_capture(output).exchanges
    assert wire.sent[0][:2] == ("GET", card_path)
    # every call the client made is in the capture, the ones after the card included
    assert [(e.request.method, e.request.target.split("?")[0]) for e in exchanges] == \
        [(method, path) for method, path, _ in wire.sent]
    assert len(exchanges) >= 3
    card = json.loads(exchanges[0].response.body)
    assert {i["url"] for i in card["supportedInterfaces"]} == {
        f"http://127.0.0.1:{listen}/a2a/jsonrpc", f"http://127.0.0.1:{listen}/a2a/rest"}
    assert any("rewrote the card's interface" in note for note in exchanges[0].notes)


def test_extended_cards_over_json_rpc_and_rest_and_compressed_cards_are_rewritten(tmp_path):
    output = tmp_path / "extended.http"
    listen = free_port()
    ours = {f"http://127.0.0.1:{listen}/a2a/jsonrpc", f"http://127.0.0.1:{listen}/a2a/rest"}
    with agent("extended", extended=True, gzip=True, streaming=False) as upstream, \
            Recorder(output, [(upstream, listen)]):
        async def run():
            async with httpx.AsyncClient() as http:
                client = await create_client(f"http://127.0.0.1:{listen}", ClientConfig(httpx_client=http))
                by_rpc = await client.get_extended_agent_card(GetExtendedAgentCardRequest())
                rest = await http.get(f"http://127.0.0.1:{listen}/a2a/rest/extendedAgentCard",
                                      headers={"A2A-Version": "1.0", "Accept-Encoding": "gzip"})
                return by_rpc, rest
        by_rpc, rest = asyncio.run(run())
    assert {i.url for i in by_rpc.supported_interfaces} == ours  # the client got the rewritten card
    assert rest.headers["content-encoding"] == "gzip"
    assert {i["url"] for i in rest.json()["supportedInterfaces"]} == ours
    exchanges = read_capture(output).exchanges
    assert [e.title for e in exchanges] == ["discover extended", "GetExtendedAgentCard",
                                            "GET /extendedAgentCard"]
    for exchange in exchanges:
        assert any("rewrote the card's interface" in note for note in exchange.notes), exchange.title
    assert exchanges[0].response.header("content-encoding") == "gzip"  # written as it travelled


def test_a_card_naming_an_unfronted_origin_gives_a_note_a_warning_and_a_finding(tmp_path):
    output = tmp_path / "escaped.http"
    listen, elsewhere = free_port(), free_port()
    with agent("split", public_base=f"http://127.0.0.1:{elsewhere}") as upstream:
        recorder = Recorder(output, [(upstream, listen)])
        try:
            httpx.get(f"http://127.0.0.1:{listen}/.well-known/agent-card.json")
            httpx.get(f"http://127.0.0.1:{listen}/.well-known/agent-card.json")
        finally:
            printed = recorder.stop()
    origin = f"http://127.0.0.1:{elsewhere}"
    exchange = read_capture(output).exchanges[0]
    assert any(f"the card names {origin}, which no listener of this recording fronts" in note
               for note in exchange.notes), exchange.notes
    assert printed.count(f"names {origin}") == 1, printed  # warned once, naming the flag that records it
    assert f"--agent {origin} --listen HOST:PORT" in printed
    findings = [f for f in analyze([str(output)], Config()).findings if f.rule == "unrecorded-origin"]
    assert [f.number for f in findings] == [1, 2]
    assert origin in findings[0].message and findings[0].outcome == "advice" and not findings[0].wasted
