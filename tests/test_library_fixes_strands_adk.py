"""The fixes findings name for Strands' A2AAgent, ADK's RemoteA2aAgent and pya2a's client (beyond those of
tests/test_library_fixes.py; a2a_capture/analyze/libraries.py), each grounded as there: the stack's client
(tests/stacks/NAME/client.py) makes the mistakes and each finding carries the library's fix; the same
session with the fixes applied (tests/stacks/NAME/FIXED.py), recorded again through the real recorder in
front of the same agents, has none of them. A fix that says the library has no call for it is held by a
test that reads the pinned library.

Neither Strands nor ADK says its name on the wire (both send python-httpx's User-Agent): they are known
by their habits, as recorded from these clients. nodus-a2a-wire has no client of its own (its test drives
it with a2a-sdk 1.3's client, which makes no mistake there, and raw httpx calls): no library to name.
"""

from __future__ import annotations

import contextlib
import json
import subprocess

import pytest

from a2a_capture.analyze.libraries import HABITS
from tests import stacks
from tests.live import agent, free_port
from tests.test_library_fixes import _session
from tests.test_stacks_live import stack  # noqa: F401  (the fixture)

#: (a key of HABITS, rule) -> the session that applies its fix: (the stack whose client.py triggers it, the
#: script of it that applies the fix, the agents both are run against)
APPLIED = {
    ("strands", "connection-per-request"): ("strands", "fixed", "a2a-sdk"),
    ("strands", "input-required-abandoned"): ("strands", "fixed", "a2a-sdk"),
    ("strands", "card-refetch"): ("strands", "fixed", "a2a-sdk"),
    ("strands", "card-path"): ("strands", "fixed", "a2a-sdk"),
    ("google-adk", "card-refetch"): ("google_adk", "fixed", "a2a-sdk+own"),
    ("pya2a", "connection-per-request"): ("pya2a", "fixed_connection", "own"),
    ("pya2a", "task-unknown"): ("pya2a", "fixed_v03", "a2a-sdk-0.3-stack"),
}
#: fixes that say no change to the library applies (test_pya2a_has_no_call_for_them holds what they say
#: of it), and the session whose client.py triggers them: there the finding carries them
HELD = {("pya2a", "method-version-mismatch"): ("pya2a", "fixed_v03", "a2a-sdk-0.3-stack")}
VERIFIED = {**APPLIED, **HELD}
#: the agents a session runs against: (a2a-sdk agent's name, streaming), OWN (the stack's own agent), or
#: (STACK, name): another stack's agent
OWN = ("own", None)
STACK = "stack"
AGENTS = {"a2a-sdk": [("runner", True), ("plain", False)], "a2a-sdk+own": [("runner", True), ("plain", False), OWN],
          "own": [OWN], "a2a-sdk-0.3-stack": [(STACK, "a2a_sdk_03")]}


@contextlib.contextmanager
def _agents(name: str, which: str, installed):
    """The session's agents, started once for the client's session and the fixed one."""
    with contextlib.ExitStack() as running:
        yield [running.enter_context(stacks.agent(name, free_port()) if (label, other) == OWN
                                     else stacks.agent(installed(other), free_port()) if label == STACK
                                     else agent(label, streaming=other, push=False, v03=True))
               for label, other in AGENTS[which]]


@pytest.mark.live
@pytest.mark.parametrize("session", sorted(set(VERIFIED.values())), ids="/".join)
def test_the_hinted_change_leaves_no_finding(tmp_path, stack, session):  # noqa: F811
    """strands ~10 s, google_adk ~15 s, pya2a ~5 s each (two recordings, agents started once)."""
    name, fixed, which = session
    stack(name)
    applied = {pair for pair, where in APPLIED.items() if where == session}
    held = {pair for pair, where in HELD.items() if where == session}
    rules = {rule for _, rule in applied}
    with _agents(name, which, stack) as upstreams:
        before, _ = _session(tmp_path, name, "client", upstreams)
        after, printed = _session(tmp_path, name, fixed, upstreams)
    for library, rule in applied | held:
        found = [f for f in before.findings if f.rule == rule]
        assert found, f"{name}'s client.py no longer triggers {rule}"
        said = f"; with {HABITS[library].name}: {HABITS[library].fixes[rule]}"
        assert all(said in f.message for f in found), [f.message for f in found]
    assert printed.get("answers"), printed
    assert not [f for f in after.findings if f.rule in rules], [(f.number, f.rule, f.message) for f in after.findings]
    assert {f.rule for f in after.findings} <= {f.rule for f in before.findings} - rules


@pytest.mark.live
def test_pya2a_has_no_call_for_them(stack):  # noqa: F811
    """What its connection-per-request and method-version-mismatch fixes say of it, in the pinned version:
    pya2a's A2AClient and A2ACardResolver take no HTTP client, and its request types fix 0.1's names. ~1 s."""
    name = stack("pya2a")
    probe = ("import inspect, json; from a2a.client import A2ACardResolver, A2AClient; "
             "from a2a.types import SendTaskRequest, SendTaskStreamingRequest; print(json.dumps("
             "[[list(inspect.signature(c.__init__).parameters) for c in (A2AClient, A2ACardResolver)], "
             "[t.model_fields['method'].annotation.__args__ for t in (SendTaskRequest, SendTaskStreamingRequest)], "
             "sorted(n for n in vars(A2AClient) if not n.startswith('_'))]))")
    done = subprocess.run([str(stacks.environment(name)), "-c", probe], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr[-2000:]
    assert json.loads(done.stdout) == [
        [["self", "agent_card", "url"], ["self", "base_url", "agent_card_path"]],
        [["tasks/send"], ["tasks/sendSubscribe"]],
        ["cancel_task", "get_task", "get_task_callback", "send_task", "send_task_streaming", "set_task_callback"]]
    fixes = HABITS["pya2a"].fixes
    assert "take no HTTP client" in fixes["connection-per-request"]
    assert "no change to its calls reaches" in fixes["method-version-mismatch"]


#: sends as these libraries' clients made them (recorded through the recorder): the envelope, the method,
#: the params; every one with httpx's headers, Content-Length first
STRANDS_SEND = ({"id": "26f57779-b891-4ef6-9adb-2006f40987ac", "jsonrpc": "2.0"}, "message/stream", {
    "configuration": {"acceptedOutputModes": [], "blocking": True},
    "message": {"kind": "message", "messageId": "fe894a88b2664312b51eeea19a9015c4", "role": "user",
                "parts": [{"kind": "text", "text": "run the tests"}]}})
SDK03_SEND = ({"id": "9cc326a9-c5f2-4390-a115-5339d6a43235", "jsonrpc": "2.0"}, "message/stream", {
    "configuration": {"acceptedOutputModes": [], "blocking": True},
    "message": {"kind": "message", "messageId": "90ba6117-d5e4-4e7a-9ed6-a79b69b8ae97", "role": "user",
                "parts": [{"kind": "text", "text": "run"}]}})
ADK_SEND = ({"method": "SendStreamingMessage"}, "SendStreamingMessage", {
    "message": {"messageId": "855f64b6-c1fc-4ff5-9e85-1456c9735eb5", "role": "ROLE_USER",
                "parts": [{"text": "run the tests", "metadata": {"is_user_input": True}}]}, "configuration": {}})
#: a2a-sdk 1.3's own client: the same envelope as ADK's, parts unmarked; and its poll, which no send precedes
SDK13_SEND = ({"method": "SendMessage"}, "SendMessage", {
    "message": {"messageId": "e066301c-21c4-4461-9b85-81d8bac8c5a5", "role": "ROLE_USER", "parts": [{"text": "run"}]},
    "configuration": {}})
SDK13_POLL = ({"method": "GetTask"}, "GetTask", {"id": "t-1"})


@pytest.mark.parametrize(("library", "sent"), [("strands", STRANDS_SEND), ("a2a-sdk-0.3", SDK03_SEND),
                                                ("google-adk", ADK_SEND), (None, SDK13_SEND), (None, SDK13_POLL)])
def test_strands_and_adk_are_known_by_their_sends(library, sent):
    from a2a_capture.a2a.call import Call
    from a2a_capture.a2a.jsonrpc import _SPELLINGS
    from a2a_capture.analyze.libraries import known_by_habits
    from tests.test_library_fixes import LENGTH_TYPE

    first, method, params = sent
    operation, version, _ = _SPELLINGS[method]
    envelope = {**first, "params": params, "id": "1200be0f-ec8b-4188-a830-9d1bf0c71051", "jsonrpc": "2.0",
                "method": method} if "method" in first else {**first, "method": method, "params": params}
    call = Call(1, "1", kind="jsonrpc", headers=LENGTH_TYPE, rpc_method=method, operation=operation,
                spelled_version=version, params=params, request_json=envelope)
    assert known_by_habits(call) == library
