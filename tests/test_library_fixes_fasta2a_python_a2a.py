"""The fixes findings name for fasta2a's and python-a2a's clients (a2a_capture/analyze/libraries.py HABITS),
each grounded as tests/test_library_fixes.py grounds the others: the stack's client (tests/stacks/NAME/client.py)
makes the mistakes and their findings carry the library's fix; each fixed script there (fixed*.py) is the
same session with a fix applied, recorded again through the real recorder in front of the same agent
(started once for all), and has no such finding. One recording per script, of a few exchanges each."""

from __future__ import annotations

import pytest

from a2a_capture.a2a.call import Call
from a2a_capture.a2a.jsonrpc import _SPELLINGS
from a2a_capture.analyze.libraries import HABITS, known_by_habits
from tests import stacks
from tests.live import agent, free_port
from tests.test_library_fixes import TYPE_LENGTH, _session
from tests.test_stacks_live import stack  # noqa: F401  (the fixture)

#: (HABITS key, rule) -> the stack whose client.py triggers it and whose fixed*.py apply the fix
VERIFIED = {
    ("fasta2a", "poll-terminal"): "fasta2a",
    ("fasta2a", "method-version-mismatch"): "fasta2a",
    ("fasta2a", "interface-undeclared"): "fasta2a",
    ("python-a2a", "card-path"): "python_a2a",
    ("python-a2a", "interface-undeclared"): "python_a2a",
    ("python-a2a", "method-version-mismatch"): "python_a2a",
    ("python-a2a", "connection-per-request"): "python_a2a",
    ("python-a2a", "card-redirect"): "python_a2a",
}
LIBRARY = {"fasta2a": "fasta2a", "python_a2a": "python-a2a"}
#: (stack, the agent its client.py and fixed scripts are recorded in front of: a stack's own, or REVIEWER,
#: a2a-sdk 1.3's reference agent of tests/agents.py) -> {fixed script: the rules it leaves no finding of}.
#: fasta2a's client is wrong on a strict agent in more ways than on its own lenient one. python-a2a's own
#: agent does not answer message/send at the url its card declares (it serves 0.1's tasks/send at
#: /tasks/send), so its client is recorded in front of a2a-sdk 0.3's, which also serves the card at 0.2's
#: path: client.py gets a card there and makes every mistake its own session makes, its guesses answered 404;
#: in front of the reference agent it finds no card (one guess redirected), so nothing after is judged
REVIEWER = "reviewer"
REVIEWER_03 = "reviewer-v03"  # with a 0.3 interface too (a2a-sdk's 0.3 compatibility): python-a2a's fixed.py speaks 0.3
RUNS = {
    ("fasta2a", "fasta2a"): {"fixed": {"poll-terminal"}, "fixed_v1": {"poll-terminal", "method-version-mismatch"}},
    ("fasta2a", REVIEWER): {"fixed_v1": {"method-version-mismatch", "interface-undeclared"}},
    ("python_a2a", "a2a_sdk_03"): {"fixed": {"card-path", "interface-undeclared", "method-version-mismatch",
                                             "connection-per-request"}},
    ("python_a2a", REVIEWER_03): {"fixed": {"card-path", "card-redirect"}},
}


def test_every_hint_is_applied_by_a_run():
    applied = {(LIBRARY[name], rule) for (name, _), scripts in RUNS.items() for rules in scripts.values()
               for rule in rules}
    assert applied == set(VERIFIED)
    assert {(LIBRARY[name], name) for (name, _) in RUNS} == {(library, name) for (library, _), name in VERIFIED.items()}


REQUESTS = [("User-Agent", "python-requests/2.34.2"), ("Accept-Encoding", "gzip, deflate"), ("Accept", "*/*"),
            ("Connection", "keep-alive"), ("Content-Type", "application/json"), ("Content-Length", "99")]
#: the calls of these clients as recorded through the recorder from their stacks' client.py
RECORDED = [
    ("python-a2a", REQUESTS, {"jsonrpc": "2.0", "id": 1}, "tasks/send", {"id": "t", "message": {}}),
    ("python-a2a", REQUESTS, {"jsonrpc": "2.0", "id": 1}, "message/send", {"message": {}}),
    (None, [*REQUESTS[:-2], *REQUESTS[:-3:-1]], {"jsonrpc": "2.0", "id": 1}, "tasks/send",
     {"id": "t", "message": {}}),  # `requests.post(json=...)` alone: Content-Length first
    ("fasta2a", TYPE_LENGTH, {"jsonrpc": "2.0", "id": "1b57ecc5-3399-42bf-9dcc-f3d05a258e73"}, "message/stream",
     {"message": {}}),
    ("fasta2a", TYPE_LENGTH, {"jsonrpc": "2.0", "id": None}, "tasks/get", {"id": "t"}),  # its polls: a null id
    (None, TYPE_LENGTH, {"jsonrpc": "2.0", "id": None}, "GetTask", {"id": "t"}),  # 1.0 names are not its
]


@pytest.mark.parametrize(("library", "headers", "envelope", "method", "params"), RECORDED)
def test_the_client_is_known_by_the_habits_recorded_from_it(library, headers, envelope, method, params):
    operation, version, _ = _SPELLINGS[method]
    call = Call(1, "1", kind="jsonrpc", headers=headers, rpc_method=method, operation=operation,
                spelled_version=version, params=params, request_json={**envelope, "method": method, "params": params})
    assert known_by_habits(call) == library


#: python-a2a's card GET, as recorded: its client's own Content-Type (and Accept) on a request without a body
CARD_GET = [("Host", "127.0.0.1:1"), ("User-Agent", "python-requests/2.34.2"), ("Accept-Encoding", "gzip, deflate"),
            ("Accept", "application/json"), ("Connection", "keep-alive"), ("Content-Type", "application/json")]


@pytest.mark.parametrize(("library", "headers"), [("python-a2a", CARD_GET), (None, CARD_GET[:-1]),
                                                  (None, [*CARD_GET[:1], ("User-Agent", "python-httpx/0.28.1"),
                                                          *CARD_GET[2:]])])
def test_a_card_fetch_is_known_by_its_headers(library, headers):
    call = Call(1, "1", kind="card", method="GET", path="/.well-known/agent.json", headers=headers)
    assert known_by_habits(call) == library


@pytest.mark.live
@pytest.mark.parametrize(("name", "upstream"), sorted(RUNS))
def test_each_hinted_change_leaves_no_finding(tmp_path, stack, name, upstream):  # noqa: F811
    name, fixes = stack(name), RUNS[(name, upstream)]
    running = agent(REVIEWER, skill_modes=True, v03=upstream == REVIEWER_03) if upstream.startswith(REVIEWER) \
        else stacks.agent(stack(upstream), free_port())
    with running as url:
        before, _ = _session(tmp_path, name, "client", [url])
        after = {script: _session(tmp_path, name, script, [url]) for script in fixes}
    fired = {finding.rule for finding in before.findings}
    for rule in set().union(*fixes.values()):
        found = [f for f in before.findings if f.rule == rule]
        assert found, f"{name}'s client.py no longer triggers {rule} in front of {upstream}"
        assert all(f"with {HABITS[LIBRARY[name]].name}: " in f.message for f in found), found
    for script, (analysis, printed) in after.items():
        assert printed.get("task") and (printed.get("answers") or printed.get("reply")), (script, printed)
        left = {finding.rule for finding in analysis.findings}
        assert not left & fixes[script], (script, [(f.number, f.rule) for f in analysis.findings])
        assert left <= fired - fixes[script], (script, left)
