"""The fixes findings name for a client library (a2a_capture/analyze/libraries.py), each grounded: the
stack's client (tests/stacks/NAME/client.py) makes the mistake and its finding carries the library's
fix; the same session with that fix applied (tests/stacks/NAME/fixed.py), recorded again through the
real recorder in front of the same agents (started once for both), has no such finding. A hint no test
applies is not in the tables."""

from __future__ import annotations

import contextlib
import json
import subprocess

import pytest

from a2a_capture.analyze.engine import analyze
from a2a_capture.analyze.libraries import HABITS, LIBRARIES
from tests import stacks
from tests.live import Recorder, agent, free_port
from tests.test_stacks_live import stack  # noqa: F401  (the fixture)

#: (library: a User-Agent product of LIBRARIES or a key of HABITS, rule) -> the stack whose client.py
#: triggers it and whose fixed.py applies the fix
VERIFIED = {
    ("agent-framework-python", "card-not-fetched"): "agent_framework",
    ("agent-framework-python", "return-immediately-poll"): "agent_framework",
    ("node", "poll-terminal"): "a2a_js",
    ("node", "subscribe-terminal"): "a2a_js",
    ("node", "get-before-subscribe"): "a2a_js",
    ("node", "cancel-terminal"): "a2a_js",
    ("node", "task-unknown"): "a2a_js",
    ("a2a-sdk-0.3", "poll-terminal"): "a2a_sdk_03",
    ("a2a-sdk-0.3", "card-refetch"): "a2a_sdk_03",
    ("a2a-sdk-0.2", "poll-terminal"): "a2a_sdk_02",
    ("a2a-sdk-0.2", "cancel-terminal"): "a2a_sdk_02",
    ("a2a-sdk-0.2", "card-refetch"): "a2a_sdk_02",
    ("pya2a", "poll-terminal"): "pya2a",
    ("pya2a", "cancel-terminal"): "pya2a",
    ("pya2a", "card-refetch"): "pya2a",
}
#: the agents each stack's client is run against, as client.py's own test runs it: (a2a-sdk agent's name,
#: streaming), or OWN: the stack's own agent
OWN = ("own", None)
AGENTS = {"agent_framework": [("runner", True), ("plain", False)], "a2a_js": [("runner", True)],
          "a2a_sdk_03": [OWN], "a2a_sdk_02": [OWN], "pya2a": [OWN]}


def _named(library: str) -> str:
    return LIBRARIES[library][0] if library in LIBRARIES else HABITS[library].name


def test_every_hint_in_the_table_is_applied_by_a_test():
    from tests.test_library_fixes_fasta2a_python_a2a import VERIFIED as FASTA2A_PYTHON_A2A
    from tests.test_library_fixes_strands_adk import VERIFIED as STRANDS_ADK

    hinted = {(product, rule) for product, (_, fixes) in LIBRARIES.items() for rule in fixes}
    hinted |= {(key, rule) for key, known in HABITS.items() for rule in known.fixes}
    assert hinted == set(VERIFIED) | set(STRANDS_ADK) | set(FASTA2A_PYTHON_A2A)


#: each library's JSON-RPC calls as its stack's client sent them (recorded through the recorder): the body
#: headers in its order, the envelope, the method; and the calls that look alike, which no habit tells apart
HTTPX = [("Accept", "*/*"), ("Accept-Encoding", "gzip, deflate"), ("Connection", "keep-alive"),
         ("User-Agent", "python-httpx/0.28.1")]
LENGTH_TYPE = [*HTTPX, ("Content-Length", "99"), ("Content-Type", "application/json")]
TYPE_LENGTH = [*HTTPX, ("Content-Type", "application/json"), ("Content-Length", "99")]  # fasta2a's
SEND_03 = {"configuration": {"acceptedOutputModes": [], "blocking": True},
           "message": {"messageId": "90ba6117-d5e4-4e7a-9ed6-a79b69b8ae97"}}
RECORDED = [
    ("a2a-sdk-0.3", LENGTH_TYPE, {"id": "adb7baa4-95b2-45ed-9a24-e6b0f53fdb16", "jsonrpc": "2.0"}, "message/send",
     SEND_03),
    ("a2a-sdk-0.2", LENGTH_TYPE, {"id": "p0", "jsonrpc": "2.0"}, "tasks/get", {"id": "t"}),
    ("a2a-sdk-0.2", LENGTH_TYPE, {"id": "0b3c9ad4-95b2-45ed-9a24-e6b0f53fdb16", "jsonrpc": "2.0"}, "message/send",
     {"message": {}}),
    ("pya2a", LENGTH_TYPE, {"jsonrpc": "2.0", "id": "0409d7a8646b4b3998730392cedb28ef"}, "tasks/get", {"id": "t"}),
    (None, LENGTH_TYPE, {"id": "1eb0e73b-7929-4df9-b22e-82e106d784a2", "jsonrpc": "2.0"}, "tasks/get",
     {"id": "t"}),  # a2a-sdk 0.3's poll, and 0.2's with its own uuid id: the session tells them by the send before
]


@pytest.mark.parametrize(("library", "headers", "envelope", "method", "params"), RECORDED)
def test_a_library_is_known_by_the_habits_recorded_from_it(library, headers, envelope, method, params):
    from a2a_capture.a2a.call import Call
    from a2a_capture.a2a.jsonrpc import _SPELLINGS
    from a2a_capture.analyze.libraries import known_by_habits

    operation, version, _ = _SPELLINGS[method]
    call = Call(1, "1", kind="jsonrpc", headers=headers, rpc_method=method, operation=operation,
                spelled_version=version, params=params, request_json={**envelope, "method": method, "params": params})
    assert known_by_habits(call) == library


@contextlib.contextmanager
def _agents(name: str):
    """The stack's agents, started once for the client's session and the fixed one."""
    with contextlib.ExitStack() as running:
        yield [running.enter_context(stacks.agent(name, free_port()) if (label, streaming) == OWN
                                     else agent(label, streaming=streaming, push=False, v03=True))
               for label, streaming in AGENTS[name]]


def _session(tmp_path, name: str, role: str, upstreams: list[str]) -> tuple:
    output = tmp_path / f"{name}-{role}.http"
    listeners = [free_port() for _ in upstreams]
    with Recorder(output, list(zip(upstreams, listeners, strict=True))):
        done = subprocess.run([*stacks.command(name, role), *(f"http://127.0.0.1:{port}" for port in listeners)],
                              capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-3000:]
    return analyze([output]), json.loads(done.stdout.strip().splitlines()[-1])


@pytest.mark.live
@pytest.mark.parametrize("name", sorted(set(VERIFIED.values())))
def test_the_hinted_change_leaves_no_finding(tmp_path, stack, name):  # noqa: F811
    name = stack(name)
    applied = [pair for pair, where in VERIFIED.items() if where == name]
    rules = {rule for _, rule in applied}
    [library] = {_named(library) for library, _ in applied}
    with _agents(name) as upstreams:
        before, _ = _session(tmp_path, name, "client", upstreams)
        after, printed = _session(tmp_path, name, "fixed", upstreams)
    for rule in rules:
        found = [f for f in before.findings if f.rule == rule]
        assert found, f"{name}'s client.py no longer triggers {rule}"
        assert all(f"with {library}: " in f.message for f in found), found
    assert printed.get("answers") or printed.get("task"), printed
    assert not [f for f in after.findings if f.rule in rules], [(f.number, f.rule, f.message) for f in after.findings]
    assert {f.rule for f in after.findings} <= {f.rule for f in before.findings} - rules
