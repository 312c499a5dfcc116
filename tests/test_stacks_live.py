"""The analyzer's verdicts on real traffic from A2A stacks other than a2a-sdk 1.3.0.

Each session is recorded through our recorder (real mitmdump) in front of a real agent, with
that stack's own client and, where a library will not make a mistake, raw httpx calls that
make it on purpose. The stacks (a2a-sdk 0.3, fasta2a, python-a2a; the JavaScript SDK @a2a-js/sdk)
are installed on their own (venvs; npm ci), from tests/stacks/. Every session asserts the exact set
of (exchange, rule, wasted) triples.

The rules of judgment (issue #9): a finding is wasted when the call failed the way the card or
an earlier exchange predicted, or was redundant (the client already held the answer); a call
that worked only because the agent is lenient is still reported, with wasted false.
"""

from __future__ import annotations

import asyncio

import httpx
import pytest

from a2a_capture.analyze.engine import analyze
from a2a_capture.capture import read_capture
from a2a_capture.report import walkthrough
from a2a_capture.report.facts import outcome
from a2a_capture.report.render import render
from tests import stacks
from tests.conftest import require
from tests.counts import assert_counts_agree
from tests.live import Recorder, agent, free_port

pytestmark = pytest.mark.live

RPC = {"content-type": "application/json"}
V1 = {**RPC, "A2A-Version": "1.0"}


@pytest.fixture(scope="session")
def stack():
    """Makes a stack's venv once per run; skips when pip cannot (offline), fails under CI."""
    failed: dict[str, stacks.StackUnavailable] = {}

    def ensure(name: str) -> str:
        try:
            if name in failed:
                raise failed[name]
            stacks.environment(name)
        except stacks.StackUnavailable as error:
            failed[name] = error
            require(f"the {name} stack could not be installed: {error}")
        return name
    return ensure


def triples(output, wasted: int | None = None, fragile: int | None = None) -> set[tuple[int, str, bool]]:
    """The findings as (exchange, rule, wasted); checks the summary's round trip counts when given, and
    that every output states the summary's counts."""
    assert_counts_agree([output], output.parent)
    analysis = analyze([output])
    if wasted is not None:
        summary = analysis.summary
        assert (summary.wasted_round_trips, summary.fragile_round_trips) == (wasted, fragile), summary
    for finding in analysis.findings:  # a lenient success (or a failure for another cause) says so, never waste
        lenient = "it worked because" in finding.message or "not refused for this" in finding.message
        assert (finding.outcome == "fragile") == lenient, finding
        assert finding.wasted == (finding.outcome == "wasted"), finding
    return {(finding.number, finding.rule, finding.wasted) for finding in analysis.findings}


def rpc(method: str, params: dict, id: int = 1) -> dict:
    return {"jsonrpc": "2.0", "id": id, "method": method, "params": params}


def message_03(text: str, message_id: str) -> dict:
    return {"kind": "message", "messageId": message_id, "role": "user", "parts": [{"kind": "text", "text": text}]}


def message_10(text: str, message_id: str) -> dict:
    return {"messageId": message_id, "role": "ROLE_USER", "parts": [{"text": text}]}


def assert_triples(session: str, found: set, expected: set) -> None:
    wrong = found ^ expected
    assert not wrong, f"{session}: missing {sorted(expected - found)}, unexpected {sorted(found - expected)}"


def test_sdk03_client_and_mistakes_on_an_sdk03_agent(tmp_path, stack):
    """a2a-sdk 0.3's client on its own agent, then raw calls it would not make."""
    name = stack("a2a_sdk_03")
    output = tmp_path / "sdk03.http"
    with stacks.agent(name, free_port()) as upstream, Recorder(output, [(upstream, listen := free_port())]):
        base = f"http://127.0.0.1:{listen}"
        task = stacks.client(name, base)["task"]                      # 1-5: card, stream, poll, card, send
        with httpx.Client(base_url=base, timeout=30) as http:
            http.get("/.well-known/agent.json")                        # 6: legacy path, served (0.3 does)
            http.post("/", headers=RPC, json=rpc("tasks/pushNotificationConfig/set", {
                "taskId": task, "pushNotificationConfig": {"url": "http://127.0.0.1:9/hook"}}))  # 7: no push
            http.post("/", headers=RPC, json=rpc("tasks/cancel", {"id": task}))                # 8: it ended
            http.post("/", headers=RPC, json=rpc("tasks/send", {                               # 9: a 0.2 name
                "id": "t-9", "message": {"role": "user", "parts": [{"type": "text", "text": "run"}]}}))
            http.post("/", headers=V1, json=rpc("SendMessage", {"message": message_10("run", "m-10")}))  # 10
    assert_triples("sdk03", triples(output), {
        (3, "poll-terminal", True),        # the stream had shown the task completed
        (4, "card-refetch", True),         # a second client fetched the same card again
        (6, "card-path", False),           # the 0.2 path worked: this agent still serves it
        (6, "card-refetch", True),         # ... and the client already held that card
        (7, "capability-push", True),      # the card says no push; the agent refused
        (8, "cancel-terminal", True),      # the client had seen the task complete
        (9, "method-version-mismatch", True),   # tasks/send is 0.2's; the 0.3 agent: method not found
        (10, "method-version-mismatch", True),  # a 1.0 name to a 0.3 interface: method not found
    })


def test_fasta2a_client_and_mistakes_on_a_fasta2a_agent(tmp_path, stack):
    """fasta2a's client speaks 0.3 names to the 1.0 interface its own agent declares; the agent
    accepts them. Lenient successes are reported, not counted as waste."""
    name = stack("fasta2a")
    output = tmp_path / "fasta2a.http"
    with stacks.agent(name, free_port()) as upstream, Recorder(output, [(upstream, listen := free_port())]):
        base = f"http://127.0.0.1:{listen}"
        task = stacks.client(name, base)["task"]                      # 1-4: card, stream, send, poll
        with httpx.Client(base_url=base, timeout=30) as http:
            http.post("/", headers=RPC, json=rpc("SendMessage", {"message": message_10("run", "m-5")}))  # 5
            http.post("/", headers=V1, json=rpc("CreateTaskPushNotificationConfig", {                     # 6
                "taskId": task, "url": "http://127.0.0.1:9/hook"}))
            http.post("/", headers=V1, json=rpc("GetTask", {"id": task}))                                 # 7
            http.post("/", headers=V1, json=rpc("CancelTask", {"id": task}))                              # 8
    assert_triples("fasta2a", triples(output, wasted=4, fragile=3), {
        (2, "method-version-mismatch", False),  # message/stream to a 1.0 interface: worked, the agent is lenient
        (3, "method-version-mismatch", False),  # message/send, the same
        (4, "method-version-mismatch", False),  # tasks/get, the same
        (4, "poll-terminal", True),             # ... and the stream had shown the task completed, a send before
        (5, "version-header-missing", False),   # a 1.0 call without A2A-Version: answered all the same
        (6, "capability-push", True),           # the card says no push; the agent refused
        (7, "poll-terminal", True),             # a correct 1.0 poll, of a task already seen complete
        (8, "cancel-terminal", True),           # redundant, though fasta2a "cancels" the completed task
    })
    stream = next(finding for finding in analyze([output]).findings if finding.number == 2)
    assert "(that interface calls it SendStreamingMessage)" in stream.message, stream.message


def _sdk13_session(base: str, **client_options) -> str:
    """a2a-sdk 1.3's own client: card, a streamed message to completion, and a poll of that task."""
    from a2a.client import ClientConfig, create_client
    from a2a.types import GetTaskRequest, Message, Part, Role, SendMessageRequest

    async def session() -> str:
        async with httpx.AsyncClient(timeout=30, **client_options) as http:
            client = await create_client(base, ClientConfig(httpx_client=http))
            request = SendMessageRequest(message=Message(message_id="m-1", role=Role.ROLE_USER,
                                                         parts=[Part(text="run")]))
            events = [event async for event in client.send_message(request)]
            task_id = next(event.task.id for event in events if event.HasField("task"))
            await client.get_task(GetTaskRequest(id=task_id))
            return task_id
    return asyncio.run(session())


@pytest.mark.parametrize("name", ["a2a_sdk_03", "a2a_js"])
def test_sdk13_client_on_a_foreign_agent(tmp_path, stack, name):
    """The 1.3 client on a2a-sdk 0.3's agent (it reads the 0.3 card and speaks 0.3 to it) and on the
    JavaScript agent (both speak 1.0): correct, but for the poll."""
    output = tmp_path / f"sdk13-on-{name}.http"
    with stacks.agent(stack(name), free_port()) as upstream, Recorder(output, [(upstream, listen := free_port())]):
        _sdk13_session(f"http://127.0.0.1:{listen}")
    assert_triples(f"sdk13-on-{name}", triples(output), {(3, "poll-terminal", True)})


def test_fasta2a_client_on_an_sdk13_agent(tmp_path, stack):
    """fasta2a's client on a reference 1.0 agent that does not accept 0.3 names."""
    name = stack("fasta2a")
    output = tmp_path / "fasta2a-on-sdk13.http"
    with agent("reviewer", skill_modes=True) as upstream, Recorder(output, [(upstream, listen := free_port())]):
        result = stacks.client(name, f"http://127.0.0.1:{listen}")
    # fasta2a's client joins "/" to the interface URL: /a2a/jsonrpc/, which this agent does not serve
    assert result == {"task": None, "answers": [404]}
    # the 404s are the path's doing; the 0.3 names are judged by the interface the client meant
    assert_triples("fasta2a-on-sdk13", triples(output), {
        (2, "interface-undeclared", True), (2, "method-version-mismatch", True),   # message/stream
        (3, "interface-undeclared", True), (3, "method-version-mismatch", True),   # message/send
    })


def test_https_session_through_the_forward_proxy(tmp_path):
    """a2a-sdk 1.3's client over TLS through the forward proxy, trusting mitmproxy's CA: a correct
    HTTPS client is not told its calls go to undeclared interfaces or its card came over plain HTTP."""
    from tests.live import mitmproxy_trust, tls_agent

    output = tmp_path / "https.http"
    proxy = free_port()
    with tls_agent("secure", tmp_path) as url, \
            Recorder(output, proxy_port=proxy, extra=["--set", f"confdir={tmp_path}", "--set", "ssl_insecure=true"]):
        through = {"proxy": f"http://127.0.0.1:{proxy}", "verify": mitmproxy_trust(tmp_path)}
        _sdk13_session(url, **through)                                             # 1-3: card, stream, poll
        with httpx.Client(base_url=url, timeout=30, **through) as http:
            http.post("/a2a/jsonrpc", headers=RPC,                                  # 4: no A2A-Version
                      json=rpc("SendMessage", {"message": message_10("run", "m-4")}))
            http.get("/.well-known/agent-card.json")                               # 5: the card again
            http.post("/a2a/jsonrpc", headers=RPC,                                  # 6: 0.3, not served here
                      json=rpc("message/send", {"message": message_03("run", "m-6")}))
    assert_triples("https", triples(output), {
        (3, "poll-terminal", True),
        (4, "version-header-missing", True),   # this agent follows the spec: VersionNotSupportedError
        (5, "card-refetch", True),
        (6, "method-version-mismatch", True),  # what fasta2a accepts, this agent refuses
    })


def test_python_a2a_client_on_its_own_agent(tmp_path, stack):
    """python-a2a's client guesses 0.2's card path and posts tasks/send to /tasks/send; its own
    agent serves both: reported as fragile, not counted as waste."""
    name = stack("python_a2a")
    output = tmp_path / "python-a2a.http"
    with stacks.agent(name, free_port()) as upstream, Recorder(output, [(upstream, listen := free_port())]):
        assert stacks.client(name, f"http://127.0.0.1:{listen}") == {"reply": "done: run"}
    assert_triples("python-a2a", triples(output, wasted=0, fragile=2), {
        (1, "card-path", False),              # /.well-known/agent.json, served
        (2, "interface-undeclared", False),   # /tasks/send, answered though the card declares the root
        (2, "method-version-mismatch", False),  # ... and tasks/send is 0.1's name: the 0.3 card says message/send
    })


def test_python_a2a_client_on_an_sdk13_agent(tmp_path, stack):
    """python-a2a's client on a reference 1.0 agent: every card path it guesses fails, so it holds
    no card, and its tasks/send posts to guessed endpoints all fail."""
    name = stack("python_a2a")
    output = tmp_path / "python-a2a-on-sdk13.http"
    with agent("reviewer", skill_modes=True) as upstream, Recorder(output, [(upstream, listen := free_port())]):
        reply = stacks.client(name, f"http://127.0.0.1:{listen}")["reply"]
    assert reply.startswith("Failed to communicate with agent"), reply
    assert_triples("python-a2a-on-sdk13", triples(output), {
        (1, "card-path", True),        # /.well-known/agent.json: 404
        (2, "card-path", True),        # /agent.json: 307 to /agent.json/ ...
        (2, "card-redirect", False),
        (3, "card-path", True),        # ... which is 404
        (4, "card-path", True),        # /a2a/agent.json: 404
    })                                 # 5-13: guessed endpoints, no card held to judge them by


def test_js_client_and_mistakes_on_a_js_agent(tmp_path, stack):
    """The JavaScript SDK's client on its own 1.0 agent over JSON-RPC: the mistakes the library lets
    through, then raw calls it would not make."""
    name = stack("a2a_js")
    output = tmp_path / "js.http"
    with stacks.agent(name, free_port()) as upstream, Recorder(output, [(upstream, listen := free_port())]):
        base = f"http://127.0.0.1:{listen}"
        result = stacks.client(name, base)                            # 1-6: card, stream, then mistakes
        with httpx.Client(base_url=base, timeout=30) as http:
            http.post("/a2a/jsonrpc", headers=RPC, json=rpc("SendMessage", {"message": message_10("run", "m-7")}))
            http.post("/a2a/jsonrpc", headers=V1, json=rpc("message/send", {"message": message_03("run", "m-8")}))
            http.get("/.well-known/agent.json")                                                            # 9
    # the SDK refuses the push config itself (the card says no push): it never reaches the wire
    assert result["refused"] == ["JsonRpcUnsupportedOperationError", "JsonRpcTaskNotCancelableError",
                                 "PushNotificationNotSupportedError", "JsonRpcTaskNotFoundError"], result
    assert len(read_capture(output).exchanges) == 9
    assert_triples("js", triples(output), JS_CLIENT_MISTAKES | {
        (7, "version-header-missing", True),   # no A2A-Version means 0.3, which this agent does not serve
        (8, "method-version-mismatch", True),  # a 0.3 name to the 1.0 interface: method not found
        (9, "card-path", True),                # 0.2's card path: 404
    })


#: what the JavaScript SDK's client session (tests/stacks/a2a_js/client.mjs) gets on the wire
JS_CLIENT_MISTAKES = {
    (3, "poll-terminal", True),          # the stream had shown the task completed
    (4, "get-before-subscribe", False),  # ... and it subscribes right after polling it
    (4, "subscribe-terminal", True),     # to a task it had seen end: UnsupportedOperationError
    (5, "cancel-terminal", True),        # TaskNotCancelableError
    (6, "task-unknown", True),           # TaskNotFoundError
}


def test_js_client_over_rest_on_a_js_agent(tmp_path, stack):
    """The same session over HTTP+JSON: the same verdicts, read from REST routes and statuses."""
    name = stack("a2a_js")
    output = tmp_path / "js-rest.http"
    with stacks.agent(name, free_port()) as upstream, Recorder(output, [(upstream, listen := free_port())]):
        result = stacks.client(name, f"http://127.0.0.1:{listen}", "--rest")
    assert result["refused"] == ["RestUnsupportedOperationError", "RestTaskNotCancelableError",
                                 "PushNotificationNotSupportedError", "RestTaskNotFoundError"], result
    assert_triples("js-rest", triples(output), JS_CLIENT_MISTAKES)


def test_js_agent_with_its_03_layer(tmp_path, stack):
    """The JavaScript agent with its v0.3 layer on: one URL serves 1.0 and 0.3 by A2A-Version, and
    the card varies by it. The JavaScript SDK's client speaks 1.0; raw calls speak 0.3 without the
    header. The SDK sends in-stream errors as `event: error` frames holding a JSON-RPC envelope:
    tasks/resubscribe always answers with a stream, so its refusals arrive that way."""
    name = stack("a2a_js")
    output = tmp_path / "js-compat.http"
    with stacks.agent(name, free_port(), "--compat") as upstream, \
            Recorder(output, [(upstream, listen := free_port())]):
        base = f"http://127.0.0.1:{listen}"
        task = stacks.client(name, base)["task"]                      # 1-6: card (1.0), stream, mistakes
        with httpx.Client(base_url=base, timeout=30) as http:
            http.get("/.well-known/agent-card.json")                  # 7: the 0.3 card: another variant
            http.post("/a2a/jsonrpc", headers=RPC, json=rpc("tasks/resubscribe", {"id": task}))           # 8
            http.post("/a2a/jsonrpc", headers=RPC, json=rpc("tasks/resubscribe", {"id": "no-such-task"}))  # 9
            http.post("/a2a/jsonrpc", headers=RPC,                    # 10: 0.3, as the 0.3 interface takes it
                      json=rpc("message/send", {"message": message_03("question", "m-10")}))
            http.post("/a2a/jsonrpc", headers=RPC, json=rpc("tasks/cancel", {"id": task}))                # 11
            http.get("/.well-known/agent-card.json")                  # 12: the 0.3 card again
    assert_triples("js-compat", triples(output), JS_CLIENT_MISTAKES | {
        # 7: no card-refetch: the card varies by A2A-Version, and 7 asked for the 0.3 one
        (8, "subscribe-terminal", True),   # refused in an `event: error` frame
        (9, "task-unknown", True),         # the same, for a task never made
        # 10: a 0.3 name without the header, to an interface the card declares at 0.3: correct
        (11, "cancel-terminal", True),
        (12, "card-refetch", True),        # the 0.3 card again, while 7's copy was fresh
    })
    # the errors in those frames are read by name and code, and the report says so
    facts = analyze([output], facts=True).exchanges
    assert [outcome(facts[number - 1]) for number in (8, 9)] == ["UnsupportedOperationError -32004",
                                                                  "TaskNotFoundError -32001"]
    page = render(walkthrough.build([str(output)]), "md")
    assert "Outcome: ✗ UnsupportedOperationError -32004" in page and "Outcome: ✗ TaskNotFoundError -32001" in page
    assert "Outcome: None" not in page


def test_js_agent_that_breaks_its_own_streams(tmp_path, stack):
    """An agent that publishes a Message into its task's stream: the SDK ends each stream with an
    `event: error` frame, in the shape of each binding and version (a JSON-RPC envelope, a REST
    google.rpc.Status, a bare 0.3 error). Each is read by name; none is the client's mistake."""
    name = stack("a2a_js")
    output = tmp_path / "js-broken-streams.http"
    with stacks.agent(name, free_port(), "--compat") as upstream, \
            Recorder(output, [(upstream, listen := free_port())]):
        with httpx.Client(base_url=f"http://127.0.0.1:{listen}", timeout=30) as http:
            http.get("/.well-known/agent-card.json", headers={"A2A-Version": "1.0"})                          # 1
            http.post("/a2a/jsonrpc", headers=V1, json=rpc("SendStreamingMessage", {
                "message": message_10("garble", "m-2")}))                                                     # 2
            # a REST SendMessage with nothing but its message: a call, not a push of a message
            http.post("/a2a/rest/message:stream", headers=V1, json={"message": message_10("garble", "m-3")})  # 3
            http.post("/a2a/jsonrpc", headers=RPC, json=rpc("message/stream", {
                "message": message_03("garble", "m-4")}))                                                     # 4
            http.post("/a2a/rest/v1/message:stream", headers=RPC, json={"message": {                          # 5
                "messageId": "m-5", "role": "ROLE_USER", "content": [{"text": "garble"}]}})
    assert not [exchange.number for exchange in read_capture(output).exchanges if exchange.webhook]
    analysis = analyze([output], facts=True)
    assert analysis.findings == []
    assert [outcome(facts) for facts in analysis.exchanges[1:]] == [
        "UnsupportedOperationError -32004", "UnsupportedOperationError",
        "UnsupportedOperationError -32004", "UnsupportedOperationError -32004"]


def test_js_client_with_its_03_layer_on_an_sdk03_agent(tmp_path, stack):
    """The JavaScript client, its v0.3 layer on, reads a2a-sdk 0.3's card and speaks 0.3 to it: the
    same mistakes, judged from 0.3 answers (the finished task's resubscribe is refused with -32602
    and words that say it ended)."""
    js, sdk03 = stack("a2a_js"), stack("a2a_sdk_03")
    output = tmp_path / "js-on-sdk03.http"
    with stacks.agent(sdk03, free_port()) as upstream, Recorder(output, [(upstream, listen := free_port())]):
        result = stacks.client(js, f"http://127.0.0.1:{listen}", "--legacy")
    assert len(result["refused"]) == 4, result
    assert len(read_capture(output).exchanges) == 6
    assert_triples("js-on-sdk03", triples(output), JS_CLIENT_MISTAKES)


def test_sdk03_client_on_a_js_agent_with_its_03_layer(tmp_path, stack):
    """a2a-sdk 0.3's client reads the hybrid card the JavaScript agent serves a request without
    A2A-Version, and speaks 0.3 to the interface it declares at 0.3: correct, but for its mistakes."""
    js, sdk03 = stack("a2a_js"), stack("a2a_sdk_03")
    output = tmp_path / "sdk03-on-js.http"
    with stacks.agent(js, free_port(), "--compat") as upstream, Recorder(output, [(upstream, listen := free_port())]):
        stacks.client(sdk03, f"http://127.0.0.1:{listen}")                # card, stream, poll, card, send
    assert_triples("sdk03-on-js", triples(output), {(3, "poll-terminal", True), (4, "card-refetch", True)})


def test_03_rest_calls_on_a_js_agent_with_its_03_layer(tmp_path, stack):
    """Raw 0.3 HTTP+JSON calls (the /v1 routes) on the JavaScript agent's v0.3 layer, which answers
    refusals with an HTTP status and a bare 0.3 error: each mistake judged from that answer."""
    name = stack("a2a_js")
    output = tmp_path / "rest03-on-js.http"
    with stacks.agent(name, free_port(), "--compat") as upstream, \
            Recorder(output, [(upstream, listen := free_port())]):
        with httpx.Client(base_url=f"http://127.0.0.1:{listen}/a2a/rest", timeout=30) as http:
            http.get(f"http://127.0.0.1:{listen}/.well-known/agent-card.json")     # 1: the hybrid 0.3 card
            sent = {"message": {"messageId": "m-2", "role": "ROLE_USER", "content": [{"text": "run"}]},
                    "configuration": {"blocking": True}}
            task = http.post("/v1/message:send", headers=RPC, json=sent).json()["task"]["id"]  # 2: completed
            http.get(f"/v1/tasks/{task}")                                            # 3
            http.post(f"/v1/tasks/{task}:cancel")                                    # 4: 400, -32002
            http.post(f"/v1/tasks/{task}:subscribe")                                 # 5: 400, -32004
            http.get("/v1/tasks/no-such-task")                                       # 6: 404, -32001
            http.get("/v1/card")                                                     # 7: 400, -32004
            http.post(f"/v1/tasks/{task}/pushNotificationConfigs", headers=RPC, json={    # 8: 400, -32003
                "name": f"tasks/{task}/pushNotificationConfigs/hook", "pushNotificationConfig": {
                    "url": "http://127.0.0.1:9/hook"}})
            http.post("/v1/message:send", headers=RPC, json=sent)                   # 9: the same message again
    assert_triples("rest03-on-js", triples(output), {
        (3, "poll-terminal", True),
        (4, "cancel-terminal", True),
        (5, "subscribe-terminal", True),
        (6, "task-unknown", True),
        (7, "capability-extended-card", True),
        (8, "capability-push", True),
        (9, "duplicate-message-id", True),
    })


@pytest.mark.parametrize("binding", ["JSONRPC", "HTTP+JSON"])
def test_js_client_on_an_sdk13_agent(tmp_path, stack, binding):
    """The JavaScript client on a2a-sdk 1.3's reference agent, over either binding: the same
    mistakes, judged from the Python agent's answers (its REST refusals: google.rpc.Status)."""
    name = stack("a2a_js")
    output = tmp_path / "js-on-sdk13.http"
    with agent("reviewer", skill_modes=True) as upstream, Recorder(output, [(upstream, listen := free_port())]):
        result = stacks.client(name, f"http://127.0.0.1:{listen}", *(["--rest"] if binding == "HTTP+JSON" else []))
    assert len(result["refused"]) == 4, result
    assert_triples(f"js-on-sdk13 ({binding})", triples(output), JS_CLIENT_MISTAKES)
