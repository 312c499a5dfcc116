"""nodus-a2a-wire: an independent A2A 1.0 server (HTTP+JSON only, on the standard library),
recorded through the recorder with a2a-sdk 1.3's client and raw calls that make mistakes on purpose.

What this agent does that the others do not: it answers SendMessage with a message (never a
task), serves nothing but the card and POST /message:send (501 for the rest), writes errors as
`{"error": {"code": "UNSUPPORTED_OPERATION", ...}}` (the reason as `code`), refuses the 0.3 card
path, and declares its bearer requirement in 0.3's shape under 1.0's `securityRequirements`.
"""

from __future__ import annotations

import asyncio

import httpx
import pytest

from tests import stacks
from tests.live import Recorder, free_port
from tests.test_stacks_live import RPC, V1, assert_triples, message_10, rpc, stack, triples

pytestmark = pytest.mark.live
__all__ = ["stack"]  # the fixture, shared with the other stacks' tests

TOKEN = "nodus-secret-0123456789"
AUTH = {"Authorization": f"Bearer {TOKEN}"}


def _sdk13_send(base: str) -> str:
    """a2a-sdk 1.3's own client over HTTP+JSON with the bearer token: the card, then one message."""
    from a2a.client import ClientConfig, create_client
    from a2a.types import Message, Part, Role, SendMessageRequest

    async def session() -> str:
        async with httpx.AsyncClient(timeout=30, headers=AUTH) as http:
            client = await create_client(base, ClientConfig(httpx_client=http, streaming=False,
                                                            supported_protocol_bindings=["HTTP+JSON"]))
            message = Message(message_id="m-2", role=Role.ROLE_USER, parts=[Part(text="run")])
            events = [event async for event in client.send_message(SendMessageRequest(message=message))]
            return events[0].message.parts[0].text
    return asyncio.run(session())


def send(number: int) -> dict:
    return {"message": message_10("run", f"m-{number}")}


def test_sdk13_client_and_mistakes_on_a_nodus_agent(tmp_path, stack):
    name = stack("nodus_a2a_wire")
    output = tmp_path / "nodus.http"
    with stacks.agent(name, free_port(), "--token", TOKEN) as upstream, \
            Recorder(output, [(upstream, listen := free_port())]):
        base = f"http://127.0.0.1:{listen}"
        assert _sdk13_send(base) == "done"                                          # 1-2: card, send
        with httpx.Client(base_url=base, timeout=30) as http:
            http.get("/.well-known/agent-card.json")                                # 3: the card again
            http.get("/.well-known/agent.json")                                     # 4: 0.3's path: 404
            http.post("/message:send", headers={**RPC, **AUTH}, json=send(5))       # 5: no A2A-Version: 200
            http.post("/message:send", headers={**RPC, **AUTH, "A2A-Version": "0.3"}, json=send(6))  # 6: 400
            http.post("/message:send", headers=V1, json=send(7))                    # 7: no token: 401
            http.post("/message:stream", headers={**V1, **AUTH}, json=send(8))      # 8: no streaming: 501
            http.post("/", headers={**V1, **AUTH}, json=rpc("SendMessage", send(9)))  # 9: JSON-RPC: 501
            http.post("/v1/message:send", headers={**V1, **AUTH}, json=send(10))     # 10: 0.3's route: 501
            http.get("/tasks/t-11", headers=V1)                                     # 11: no token, but 501
    text = output.read_text()
    assert TOKEN not in text
    statuses = [int(line.split()[1]) for line in text.splitlines() if line.startswith(("HTTP/1.1 ", "HTTP/1.0 "))]
    assert statuses == [200, 200, 200, 404, 200, 400, 401, 501, 501, 501, 501], statuses
    # fragile: 5 only; 11 failed (501), so it did not work, lenient agent or not
    assert_triples("nodus", triples(output, wasted=7, fragile=1), {
        (1, "card-schema", False),             # its bearer requirement in 0.3's shape (advice)
        (3, "card-refetch", True),              # fresh for an hour (Cache-Control: max-age=3600)
        (3, "card-schema", False),
        (4, "card-path", True),                 # a 1.0 agent need not serve 0.3's path; this one does not
        (5, "version-header-missing", False),   # it worked: this agent takes 1.0 calls without A2A-Version
        (6, "method-version-mismatch", True),   # VERSION_NOT_SUPPORTED, as the card predicted
        (7, "auth-missing", True),              # 401, as the card predicted
        (8, "capability-streaming", True),      # the card says no streaming
        (9, "interface-undeclared", True),      # the card declares HTTP+JSON only
        (10, "method-version-mismatch", True),  # 0.3's REST route, with A2A-Version 1.0
        (11, "auth-missing", False),            # refused as unsupported, not for the missing token
    })
