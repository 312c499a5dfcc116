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
}
#: the agents each stack's client is run against, as client.py's own test runs it: (a2a-sdk agent's name,
#: streaming), or OWN: the stack's own agent
OWN = ("own", None)
AGENTS = {"agent_framework": [("runner", True), ("plain", False)], "a2a_js": [("runner", True)],
          "a2a_sdk_03": [OWN]}


def _named(library: str) -> str:
    return LIBRARIES[library][0] if library in LIBRARIES else HABITS[library].name


def test_every_hint_in_the_table_is_applied_by_a_test():
    hinted = {(product, rule) for product, (_, fixes) in LIBRARIES.items() for rule in fixes}
    hinted |= {(key, rule) for key, known in HABITS.items() for rule in known.fixes}
    assert hinted == set(VERIFIED)


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
    rules = {rule for (_, rule), where in VERIFIED.items() if where == name}
    [library] = {_named(library) for (library, _), where in VERIFIED.items() if where == name}
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
