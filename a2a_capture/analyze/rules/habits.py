"""Habits of client libraries that cost round trips or leave work hanging, and one of agents: what a
person debugging a client with these libraries would want named."""

from __future__ import annotations

from a2a_capture.analyze.findings import Hit, ref, rule
from a2a_capture.analyze.libraries import library_fix

_INPUT_REQUIRED = "TASK_STATE_INPUT_REQUIRED"


@rule(
    id="input-required-abandoned",
    on=("SendMessage", "SendStreamingMessage"),
    severity="warning",
    title="An input-required task answered by a message without its ids",
    spec="§3.4.3, §6.3",
    why="""
A task in `input-required` waits for the client's answer in a message that names it (`taskId`, and
its `contextId`). A message that names neither starts a new task in a new context: the agent
works on the answer without the question, and the task that asked stays input-required for good.
Client libraries that keep no conversation state (they build each message from the text alone) do
this.""",
    example="SendMessage -> task t1 TASK_STATE_INPUT_REQUIRED; SendMessage {message: {parts: [...]}} (no taskId, "
            "no contextId) -> a new task t2",
    good="SendMessage -> task t1 TASK_STATE_INPUT_REQUIRED; SendMessage {message: {taskId: t1, contextId: c1, "
         "parts: [...]}}",
    fix="Answer an input-required task with a message that carries its `taskId` and `contextId`.",
    kind="advice",
    cases=(("abandoned", "advice", "the message did work (a new task), so no round trip was wasted; the task that "
                                   "asked for input is left hanging: advice"),),
)
def input_required_abandoned(call, session):
    message = call.params.get("message") or call.params.get("request")
    if not isinstance(message, dict) or any(message.get(key) for key in ("taskId", "contextId", "task_id",
                                                                         "context_id")):
        return
    last = session.last_a2a(call.agent)
    asked = session.task(last.task) if last is not None else None
    if asked is None or asked.state != _INPUT_REQUIRED:
        return
    yield Hit(f"task {last.task} asked for input ({ref(asked.call, call)}), and this message names neither its "
              "taskId nor its contextId: it starts a new task, and the task that asked stays input-required"
              f"{library_fix(call, 'input-required-abandoned', session)}", [asked.call])


@rule(
    id="connection-per-request",
    on=None,
    severity="info",
    title="A new connection for every request",
    spec="RFC 9112 §9.3 (persistent connections)",
    why="""
HTTP/1.1 keeps a connection open for the next request. A client that opens a new one for each
request (a new HTTP client object per call) pays a TCP handshake each time, and over HTTPS a TLS
handshake too: a round trip or two before every request. The capture shows it in the client's
ports: each request from a port of its own, although the one before had ended.""",
    example="three requests to one agent, one after another, from client ports 49904, 49916 and 49920",
    good="three requests to one agent from client port 49904: one connection, kept alive",
    fix="Keep one HTTP client (connection pool) for the agent and reuse it for every request.",
    kind="advice",
    cases=(("new connections", "advice", "each request worked; the handshakes are a cost beside the round trips: "
                                         "advice, said once per agent"),),
)
def connection_per_request(call, session):
    if call.kind == "webhook" or call.agent is None or call.client is None:
        return
    seen = session.connections(call.agent)
    if seen is None or seen.reused or call.client in seen.known or seen.needless != 1:
        return  # said once, at the third connection of requests that each could have reused the last
    if call.started is not None and seen.open_until is not None and call.started < seen.open_until:
        return  # an earlier request was still open: a second connection was needed
    ports = ", ".join(client.rpartition(":")[2] for client in [*seen.ports[:3], call.client])
    handshakes = "a TCP and a TLS handshake" if call.agent.startswith("https:") else "a TCP handshake"
    yield Hit(f"the first {seen.requests + 1} requests to {call.agent} each came on a new connection although the "
              f"one before had ended (client ports {ports}): {handshakes} before each (the capture does not time them)"
              f"{library_fix(call, 'connection-per-request', session)}", [seen.first])


@rule(
    id="card-not-fetched",
    on=("a2a",),
    severity="info",
    title="Calls to an agent whose card the client never fetched",
    spec="§8.2, §8.3",
    why="""
The card says where the agent takes calls (its interfaces), what it offers (streaming, push
notifications, an extended card) and which credentials it needs. A client that never fetched it
guesses all of that: a stream to an agent that does not stream, a URL that is not an interface.
Client libraries built from a URL alone do this. Said once per agent, at its first call, and only
of recorded exchanges (with times): a hand-written capture is an excerpt and may leave the fetch out.
A client that asked for the card and got none is not this habit: its ask is judged on its own.""",
    example="POST /a2a/jsonrpc SendMessage to an agent, with no GET /.well-known/agent-card.json in the session",
    good="GET /.well-known/agent-card.json, then SendMessage to the interface the card declares",
    fix="Fetch the agent's card first (once), and call the interface and capabilities it declares.",
    kind="advice",
)
def card_not_fetched(call, session):
    if call.agent is None or call.started is None or session.held_card(call) is not None:
        return
    if session.last_a2a(call.agent) is not None:
        return  # said at the agent's first call
    if session.card_asked(call.agent) is not None:
        return  # it asked and got none: that ask is judged on its own (card-path), not this habit
    fix = library_fix(call, "card-not-fetched", session)
    yield Hit(f"{call.operation or call.method} to {call.agent}, whose card the client had not fetched in this "
              f"session: it guesses the agent's interface and capabilities{fix}")


def _texts(parts) -> str:
    if not isinstance(parts, list):
        return ""
    return "".join(part.get("text") or "" for part in parts if isinstance(part, dict)
                   and isinstance(part.get("text"), str)).strip()


def _task_of(body):
    """The task an answer holds (1.0: result.task, or the result itself for GetTask; 0.3: kind task)."""
    result = body.get("result") if isinstance(body, dict) else None
    if not isinstance(result, dict):
        return None
    task = result.get("task") if isinstance(result.get("task"), dict) else result
    return task if isinstance(task.get("status"), dict) else None


@rule(
    id="answer-repeated",
    on=("SendMessage", "GetTask"),
    severity="info",
    title="The agent's answer says the same thing twice",
    spec="§6.1, §6.7",
    why="""
A task's result belongs in its artifacts; its status message says how it stands. An agent that
puts the same text in both (a status message that repeats the artifact) sends every answer twice
over the wire, and a client that shows both shows it twice (a finished task keeps its status
message in its history: the same there). Read of JSON answers; a stream's frames are not read.
Advice for the agent.""",
    example='{"status": {"message": {"parts": [{"text": "42"}]}}, "artifacts": [{"parts": [{"text": "42"}]}]}',
    good='{"status": {"state": "TASK_STATE_COMPLETED"}, "artifacts": [{"parts": [{"text": "42"}]}]}',
    fix="(The agent's) keep the result in the artifact; leave the status message out, or say only how the task "
        "stands.",
    kind="advice",
)
def answer_repeated(call, session):
    task = _task_of(call.response_json)
    if task is None:
        return
    said = {}  # text -> where the agent said it, besides the artifacts
    message = task["status"].get("message")
    if isinstance(message, dict) and _texts(message.get("parts")):
        said[_texts(message.get("parts"))] = "the status message"
    for entry in task.get("history") or ():  # a finished task's status message is kept in its history
        if isinstance(entry, dict) and entry.get("role") in _AGENT_ROLES and _texts(entry.get("parts")):
            said.setdefault(_texts(entry.get("parts")), "an agent message in the history")
    if not said:
        return
    for artifact in task.get("artifacts") or ():
        text = _texts(artifact.get("parts")) if isinstance(artifact, dict) else ""
        if text in said:
            name = artifact.get("name") or artifact.get("artifactId") or "an artifact"
            yield Hit(f"task {task.get('id')} says its result twice: {said[text]} repeats artifact {name} "
                      f"({len(text.encode())} bytes twice)")
            return


#: how a message's role names the agent (1.0, then 0.3)
_AGENT_ROLES = frozenset({"ROLE_AGENT", "agent"})
