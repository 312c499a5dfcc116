"""`@pytest.mark.a2a_capture` and `--a2a-record-mode`, as a project's test suite uses them (pytester,
in a pytest process of its own): a real a2a-sdk client against a real a2a-sdk agent, recorded
once into captures/<module>/<test>.http, then passing offline in `none` mode with the agent gone
and the network blocked; the assertion helper's failure names the finding."""

from __future__ import annotations

import textwrap

import pytest

from a2a_capture.capture import read_capture
from tests.live import agent, free_port

pytestmark = pytest.mark.live

CLIENT = '''
import asyncio
import os

import httpx
import pytest
from a2a.client import ClientConfig, create_client
from a2a.types import GetTaskRequest, Message, Part, Role, SendMessageRequest

AGENT = "{agent}"


def send(text, message_id):
    return SendMessageRequest(message=Message(message_id=message_id, role=Role.ROLE_USER, parts=[Part(text=text)]))


async def run(base, texts, poll=False):
    async with httpx.AsyncClient() as http:
        client = await create_client(base, ClientConfig(httpx_client=http, streaming=False))
        for number, text in enumerate(texts):
            answers = [answer async for answer in client.send_message(send(text, f"m-{{number}}"))]
        if poll:
            await client.get_task(GetTaskRequest(id=answers[0].task.id))
        if os.environ.get("STRAY"):  # past the recorder, straight to the agent
            await http.get(AGENT + "/.well-known/agent-card.json")
        return answers


@pytest.mark.a2a_capture(AGENT)
def test_clean(a2a_capture):
    texts = ["run the tests"] + (["and once more"] if os.environ.get("EXTRA") else [])
    answers = asyncio.run(run(a2a_capture.url, texts))
    assert answers[0].task.status.state == 3  # TASK_STATE_COMPLETED
    a2a_capture.assert_operations(["card"] + ["SendMessage"] * len(texts))
    a2a_capture.assert_no_new_findings()


@pytest.mark.a2a_capture("agent_url")
def test_polls_a_finished_task(a2a_capture):
    asyncio.run(run(a2a_capture.url, ["run the tests"], poll=True))
    with pytest.raises(AssertionError) as raised:
        a2a_capture.assert_no_new_findings()
    assert "1 new finding(s), not in a2a-baseline.json" in str(raised.value)
    assert ": warning poll-terminal exchange 2 had already shown task " in str(raised.value)


@pytest.fixture
def agent_url():
    return AGENT


@pytest.mark.a2a_capture(AGENT)
def test_fails_on_its_finding(a2a_capture):
    asyncio.run(run(a2a_capture.url, ["run the tests"], poll=True))
    a2a_capture.assert_no_new_findings()
'''


def _run(pytester, mode: str, monkeypatch, **env):
    for name in ("STRAY", "EXTRA"):
        monkeypatch.delenv(name, raising=False)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    return pytester.runpytest_subprocess(f"--a2a-record-mode={mode}", "-p", "no:cacheprovider", "-q")


def test_record_once_then_pass_offline_with_the_network_blocked(pytester, monkeypatch):
    port = free_port()
    pytester.makepyfile(test_client=CLIENT.format(agent=f"http://127.0.0.1:{port}"))
    folder = pytester.path / "captures" / "test_client"

    with agent("test-runner", port=port, streaming=False):
        recorded = _run(pytester, "once", monkeypatch)
    recorded.assert_outcomes(passed=2, failed=1)
    # the helper's failure: the finding's line, where the session has it
    recorded.stdout.fnmatch_lines(["*1 new finding(s), not in a2a-baseline.json*",
                                   "*test_fails_on_its_finding.http:*: warning poll-terminal exchange 2 had already "
                                   "shown task *"])
    # a test that failed leaves no capture; the others are kept beside the module
    assert sorted(path.name for path in folder.iterdir()) == ["test_clean.http", "test_polls_a_finished_task.http"]
    clean = read_capture(folder / "test_clean.http")
    assert [e.title for e in clean.exchanges] == ["discover test-runner", "SendMessage"]
    assert any(note.startswith("a2a-capture pytest: agent 1 was reached at http://127.0.0.1:") for note in clean.notes)
    kept = {path.name: path.read_bytes() for path in folder.iterdir()}

    # the agent is gone: none answers from the captures; the test with none fails, saying so
    offline = _run(pytester, "none", monkeypatch)
    offline.assert_outcomes(passed=2, errors=1)
    offline.stdout.fnmatch_lines(["*no capture at *test_fails_on_its_finding.http to answer from "
                                  "(--a2a-record-mode=none); record it once with --a2a-record-mode=once*"])
    assert {path.name: path.read_bytes() for path in folder.iterdir()} == kept
    assert _run(pytester, "once", monkeypatch, STRAY="").ret == 1  # once: as none, where the capture is
    # any other connection fails the test, with a message that says why, though the client got an error
    stray = _run(pytester, "none", monkeypatch, STRAY="1")
    stray.stdout.fnmatch_lines([f"*a2a-capture: the test tried the network in --a2a-record-mode=none: "
                                f"127.0.0.1:{port}; only the capture's agents answer (a2a_capture.urls)*"])
    assert stray.parseoutcomes()["failed"] == 2

    with agent("test-runner", port=port, streaming=False):
        # new_episodes: nothing new, the file stays; a call the capture lacks, it is written again
        assert _run(pytester, "new_episodes", monkeypatch).ret == 1
        assert (folder / "test_clean.http").read_bytes() == kept["test_clean.http"]
        _run(pytester, "new_episodes", monkeypatch, EXTRA="1")
        assert [e.title for e in read_capture(folder / "test_clean.http").exchanges] == [
            "discover test-runner", "SendMessage", "SendMessage"]
        # all: recorded again whatever it holds
        _run(pytester, "all", monkeypatch).assert_outcomes(passed=2, failed=1)
        assert len(read_capture(folder / "test_clean.http").exchanges) == 2
    _run(pytester, "none", monkeypatch).assert_outcomes(passed=2, errors=1)


def test_the_fixture_without_the_marker_says_how_to_mark(pytester):
    pytester.makepyfile(test_plain=textwrap.dedent("""
        def test_unmarked(a2a_capture):
            pass
    """))
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "-q")
    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines(["*mark the test with @pytest.mark.a2a_capture(AGENT, ...)*"])
