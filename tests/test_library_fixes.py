"""The fixes findings name for a client library (a2a_capture/analyze/libraries.py), each grounded: the
stack's client (tests/stacks/NAME/client.py) makes the mistake and its finding carries the library's
fix; the same session with that fix applied (tests/stacks/NAME/fixed.py), recorded again through the
real recorder in front of the same a2a-sdk agents, has no such finding. A hint no test applies is
not in the table."""

from __future__ import annotations

import contextlib
import json
import subprocess

import pytest

from a2a_capture.analyze.engine import analyze
from a2a_capture.analyze.libraries import LIBRARIES
from tests import stacks
from tests.live import Recorder, agent, free_port
from tests.test_stacks_live import stack  # noqa: F401  (the fixture)

#: (User-Agent product, rule) -> the stack whose client.py triggers it and whose fixed.py applies the fix
VERIFIED = {
    ("agent-framework-python", "card-not-fetched"): "agent_framework",
    ("agent-framework-python", "return-immediately-poll"): "agent_framework",
    ("node", "poll-terminal"): "a2a_js",
    ("node", "subscribe-terminal"): "a2a_js",
    ("node", "get-before-subscribe"): "a2a_js",
    ("node", "cancel-terminal"): "a2a_js",
    ("node", "task-unknown"): "a2a_js",
}
#: the agents each stack's client is run against, as client.py's own test runs it: (name, streaming)
AGENTS = {"agent_framework": [("runner", True), ("plain", False)], "a2a_js": [("runner", True)]}


def test_every_hint_in_the_table_is_applied_by_a_test():
    hinted = {(product, rule) for product, (_, fixes) in LIBRARIES.items() for rule in fixes}
    assert hinted == set(VERIFIED)


def _session(tmp_path, name: str, role: str) -> tuple:
    output = tmp_path / f"{name}-{role}.http"
    with contextlib.ExitStack() as running:
        upstreams = [running.enter_context(agent(label, streaming=streaming, push=False, v03=True))
                     for label, streaming in AGENTS[name]]
        listeners = [free_port() for _ in upstreams]
        running.enter_context(Recorder(output, list(zip(upstreams, listeners, strict=True))))
        done = subprocess.run([*stacks.command(name, role), *(f"http://127.0.0.1:{port}" for port in listeners)],
                              capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-3000:]
    return analyze([output]), json.loads(done.stdout.strip().splitlines()[-1])


@pytest.mark.live
@pytest.mark.parametrize("name", sorted(set(VERIFIED.values())))
def test_the_hinted_change_leaves_no_finding(tmp_path, stack, name):  # noqa: F811
    name = stack(name)
    rules = {rule for (product, rule), where in VERIFIED.items() if where == name}
    before, _ = _session(tmp_path, name, "client")
    library = {LIBRARIES[product][0] for (product, _), where in VERIFIED.items() if where == name}
    for rule in rules:
        found = [f for f in before.findings if f.rule == rule]
        assert found, f"{name}'s client.py no longer triggers {rule}"
        assert all(f"with {next(iter(library))}: " in f.message for f in found), found
    after, printed = _session(tmp_path, name, "fixed")
    assert printed.get("answers") or printed.get("task"), printed
    assert not [f for f in after.findings if f.rule in rules], [(f.number, f.rule, f.message) for f in after.findings]
    assert {f.rule for f in after.findings} <= {f.rule for f in before.findings} - rules
