"""A2A 0.2 on the wire: a2a-sdk 0.2's own client and agent, recorded through the recorder.

A 0.2 agent serves its card at /.well-known/agent.json and spells methods as 0.2 did
(message/send, tasks/get): neither is a finding. What the client did needlessly is.
"""

from __future__ import annotations

import httpx
import pytest

from tests import stacks
from tests.live import Recorder, free_port
from tests.test_stacks_live import RPC, V1, assert_triples, message_03, message_10, rpc, stack, triples

pytestmark = pytest.mark.live
__all__ = ["stack"]  # the fixture, shared with the other stacks' tests


def test_sdk02_client_and_mistakes_on_an_sdk02_agent(tmp_path, stack):
    name = stack("a2a_sdk_02")
    output = tmp_path / "sdk02.http"
    with stacks.agent(name, free_port()) as upstream, Recorder(output, [(upstream, listen := free_port())]):
        base = f"http://127.0.0.1:{listen}"
        stacks.client(name, base)                                      # 1-7: card .. card again
        with httpx.Client(base_url=base, timeout=30) as http:
            http.get("/.well-known/agent-card.json")                   # 8: the 0.3 path: 404 here
            http.post("/", headers=V1, json=rpc("SendMessage", {"message": message_10("run", "m-9")}))  # 9
            http.post("/", headers=RPC, json=rpc("tasks/send", {       # 10: a 0.1 name
                "id": "t-10", "message": {"role": "user", "parts": [{"type": "text", "text": "run"}]}}))
            http.post("/", headers=RPC, json=rpc("tasks/get", {"id": "no-such-task"}))  # 11
            http.post("/", headers=RPC, json=rpc("message/send", {"message": message_03("run", "m-12")}))  # 12
            http.get("/agent/authenticatedExtendedCard")               # 13: 0.2's extended card, not offered
            http.post("/a2a", headers=RPC, json=rpc("tasks/send", {    # 14: a 0.1 name, where the card declares nothing
                "id": "t-14", "message": {"role": "user", "parts": [{"type": "text", "text": "run"}]}}))
    statuses = [line for line in output.read_text().splitlines() if line.startswith(("HTTP/1.1 ", "HTTP/1.0 "))]
    assert statuses[0] == "HTTP/1.1 200 OK" and statuses[7].startswith("HTTP/1.1 404"), statuses
    assert statuses[12].startswith("HTTP/1.1 404") and statuses[13].startswith("HTTP/1.1 40"), statuses
    assert_triples("sdk02", triples(output, wasted=10, fragile=0), {
        (3, "poll-terminal", True),        # the answer to message/send had shown the task completed
        (4, "poll-terminal", True),
        (5, "cancel-terminal", True),      # ... and a finished task cannot be canceled
        (7, "card-refetch", True),         # a second resolver fetched the same card again
        (9, "method-version-mismatch", True),   # a 1.0 name (and A2A-Version 1.0) to a 0.2 agent
        (10, "method-version-mismatch", True),  # tasks/send is 0.1's; 0.2 renamed it message/send
        (8, "card-path", True),            # the 0.3 card path, once the 0.2 card was held: a 0.2 agent has none there
        (11, "task-unknown", True),
        (13, "capability-extended-card", True),  # the card has no supportsAuthenticatedExtendedCard
        (14, "interface-undeclared", True), (14, "method-version-mismatch", True),  # 0.1's name, judged there too
    })                                     # 1 and 12: agent.json and message/send are 0.2's own
