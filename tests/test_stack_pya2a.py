"""A2A 0.1 on the wire: pya2a (Google's first A2A sample server and client, packaged), recorded
through the recorder with its own client and raw calls that make mistakes on purpose.

Its card sits at /.well-known/agent.json without protocolVersion (a card of 0.2 or before), lists
its input modes as 0.1's samples did (["text"], a kind of part rather than a media type), and its
server knows 0.1's method names only: anything else fails its request validation (-32600, HTTP 400).
"""

from __future__ import annotations

import httpx
import pytest

from a2a_capture.analyze.engine import analyze
from tests import stacks
from tests.live import Recorder, free_port
from tests.test_stacks_live import RPC, V1, assert_triples, message_03, message_10, rpc, stack, triples

pytestmark = pytest.mark.live
__all__ = ["stack"]  # the fixture, shared with the other stacks' tests


def test_pya2a_client_and_mistakes_on_a_pya2a_agent(tmp_path, stack):
    name = stack("pya2a")
    output = tmp_path / "pya2a.http"
    with stacks.agent(name, free_port()) as upstream, Recorder(output, [(upstream, listen := free_port())]):
        base = f"http://127.0.0.1:{listen}"
        result = stacks.client(name, base)                                      # 1-6: card .. card again
        with httpx.Client(base_url=base, timeout=30) as http:
            http.get("/.well-known/agent-card.json")                            # 7: 0.3's path: 404 here
            http.post("/", headers=RPC, json=rpc("message/send", {"message": message_03("run", "m-8")}))  # 8
            http.post("/", headers=V1, json=rpc("SendMessage", {"message": message_10("run", "m-9")}))    # 9
            http.post("/", headers=RPC, json=rpc("tasks/get", {"id": "no-such-task"}))                    # 10
            http.post("/", headers=RPC, json=rpc("tasks/pushNotification/set", {                          # 11
                "id": "t-1", "pushNotificationConfig": {"url": "http://127.0.0.1:9/hook"}}))
            http.post("/", headers=RPC, json=rpc("tasks/resubscribe", {"id": "t-1"}))                     # 12
            more = {"role": "user", "parts": [{"type": "text", "text": "more"}]}
            restart = http.post("/", headers=RPC, json=rpc("tasks/send", {                                  # 13
                "id": "t-1", "sessionId": "s-1", "message": more}))
    assert result == {"task": "t-1", "answers": ["TaskStatusUpdateEvent", "TaskArtifactUpdateEvent",
                                                 "TaskStatusUpdateEvent", "completed", "completed", -32002, "pya2a"]}
    statuses = [int(line.split()[1]) for line in output.read_text().splitlines()
                if line.startswith(("HTTP/1.1 ", "HTTP/1.0 "))]
    assert statuses == [200, 200, 200, 200, 200, 200, 404, 400, 400, 200, 200, 200, 200], statuses
    assert restart.json()["result"]["status"]["state"] == "completed"  # t-1 restarted: its message appended, done again
    # 2 and 4: text parts to a card whose input modes are ["text"]: accepted, no input-mode finding
    assert_triples("pya2a", triples(output, wasted=8, fragile=1), {
        (1, "card-schema", False),             # a 0.1 card: its skill has no tags, which 0.2 requires (advice)
        (6, "card-schema", False),
        (3, "connection-per-request", False),  # its client opens a connection per call (1-6: six ports)
        (3, "poll-terminal", True),            # the stream had shown t-1 completed
        (5, "cancel-terminal", True),          # tasks/send had answered t-2 completed (the agent: -32002)
        (6, "card-refetch", True),             # a second resolver, and the server set no expiry
        (7, "card-path", True),                # the 0.3 card path, when the 0.2 card was held: this agent has none
        (8, "method-version-mismatch", True),  # 0.2's name; the agent refused it, so it speaks 0.1
        (9, "method-version-mismatch", True),  # 1.0's name: no agent of 0.2 or before knows it
        (10, "task-unknown", True),
        (11, "capability-push", False),        # the card says no push; this agent took the config anyway
        (12, "subscribe-terminal", True),      # t-1 had ended (the agent: -32004, not supported)
        # 13: tasks/send naming t-1, which had completed: 0.1 lets a client restart a task by its id, and this
        # agent did: no message-terminal
    })
    schema = next(finding for finding in analyze([output]).findings if finding.rule == "card-schema")
    assert schema.message == ("the card of pya2a: `skills[0].tags` is missing or not a list, which A2A 0.2 requires "
                              "(0.1 did not): a 0.2 client refuses this card"), schema.message


def test_pya2a_client_on_an_sdk03_agent(tmp_path, stack):
    """The 0.1 client on a 0.3 agent: it finds the card at 0.2's path (served there too), and every
    0.1 name it sends is refused; its poll and cancel then name tasks that never came to be."""
    name = stack("pya2a")
    output = tmp_path / "pya2a-on-sdk03.http"
    with stacks.agent(stack("a2a_sdk_03"), free_port()) as upstream, \
            Recorder(output, [(upstream, listen := free_port())]):
        result = stacks.client(name, f"http://127.0.0.1:{listen}")
    assert result["answers"][1:4] == [-32001, -32601, -32001], result  # TaskNotFound, MethodNotFound, TaskNotFound
    assert_triples("pya2a-on-sdk03", triples(output, wasted=5, fragile=1), {
        (1, "card-path", False),               # 0.3 serves agent.json too: it worked
        (2, "method-version-mismatch", True),  # tasks/sendSubscribe: 0.3 calls it message/stream
        (3, "connection-per-request", False),  # as on its own agent
        (3, "task-unknown", True),             # the stream never made t-1
        (4, "method-version-mismatch", True),  # tasks/send: 0.3 calls it message/send
        (5, "task-unknown", True),
        (6, "card-path", False),
        (6, "card-refetch", True),
    })


def test_pya2a_over_https_through_the_forward_proxy(tmp_path, stack):
    """The 0.1 client over TLS through the forward proxy (HTTPS_PROXY, trusting mitmproxy's CA):
    its card's https url is the interface it calls, so no call is undeclared and the card did not
    come over plain HTTP; what it does needlessly is what it does over plain HTTP."""
    from tests.live import self_signed

    name = stack("pya2a")
    output = tmp_path / "pya2a-https.http"
    port, proxy = free_port(), free_port()
    with stacks.agent(name, port, "--tls", *map(str, self_signed(tmp_path))), \
            Recorder(output, proxy_port=proxy, extra=["--set", f"confdir={tmp_path}", "--set", "ssl_insecure=true"]):
        result = stacks.client(name, f"https://127.0.0.1:{port}", env={
            "HTTPS_PROXY": f"http://127.0.0.1:{proxy}", "SSL_CERT_FILE": str(tmp_path / "mitmproxy-ca-cert.pem")})
    assert result["answers"][3:] == ["completed", "completed", -32002, "pya2a"], result
    assert f"https://127.0.0.1:{port}/" in output.read_text()  # the card, as the client read it
    assert_triples("pya2a-https", triples(output, wasted=3, fragile=0), {
        (1, "card-schema", False), (3, "poll-terminal", True), (5, "cancel-terminal", True),
        (3, "connection-per-request", False),  # a TLS handshake, too, before each of its calls
        (6, "card-refetch", True), (6, "card-schema", False)})
