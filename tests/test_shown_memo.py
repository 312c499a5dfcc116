"""The sentences of findings on an ended task, remembered per task and form (rules/tasks.py ``_shown``), are
the sentences made afresh: on the kit, the example captures, both bench sessions and sessions where a task
ends in one file and is asked about in another, or ends again in a later session."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from a2a_capture.analyze.engine import analyze
from a2a_capture.analyze.rules import tasks
from tests.builders import message, rpc, task, write

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))


class _Forgetful(dict):
    """A memo that never answers: every sentence made afresh, as without it."""

    def get(self, key, default=None):
        return default


def _both(monkeypatch, sessions: list[list[Path]]) -> list:
    """Each session's findings with the memo (twice: the second finds the first's sentences), and
    without it; the sessions' findings on ended tasks, to show the memo was used."""
    with_memo = [analyze(paths).findings for paths in sessions]
    assert [analyze(paths).findings for paths in sessions] == with_memo
    with monkeypatch.context() as patched:
        patched.setattr(tasks, "_SHOWN", _Forgetful())
        fresh = [analyze(paths).findings for paths in sessions]
    assert fresh == with_memo
    return [f for findings in with_memo for f in findings
            if f.rule in ("poll-terminal", "cancel-terminal", "message-terminal")]


def test_the_example_captures_say_the_same_with_the_memo(monkeypatch):
    files = sorted([*(ROOT / "captures").glob("*.http"), *(ROOT / "tests" / "data").glob("*.http")])
    assert _both(monkeypatch, [[path] for path in files] + [files])


@pytest.mark.kit
def test_the_kit_says_the_same_with_the_memo(kit, monkeypatch):
    files = sorted(kit.glob("*.http"))
    assert _both(monkeypatch, [[path] for path in files] + [files])


@pytest.mark.parametrize("shape", ["new", "recurring"])
def test_bench_sessions_say_the_same_with_the_memo(tmp_path, monkeypatch, shape):
    from analyze import generate  # bench/analyze.py's sessions

    path = tmp_path / f"{shape}.http"
    generate(shape, path, tmp_path / "index", 300_000, seed=7)
    found = _both(monkeypatch, [[path]])
    assert found or shape == "new"


def test_a_task_ended_in_another_file_or_session_is_named_as_it_was(tmp_path, monkeypatch):
    done, failed = task("t-1", "TASK_STATE_COMPLETED"), task("t-1", "TASK_STATE_FAILED")
    first = write(tmp_path, rpc(1, "GetTask", {"id": "t-1"}, result=done),
                  rpc(2, "GetTask", {"id": "t-1"}, result=done), rpc(3, "CancelTask", {"id": "t-1"}, result=done),
                  name="first.http")
    second = write(tmp_path, rpc(1, "GetTask", {"id": "t-1"}, result=done), rpc(2, "CancelTask", {"id": "t-1"}),
                   name="second.http")
    other = write(tmp_path, rpc(4, "GetTask", {"id": "t-1"}, result=failed),
                  rpc(5, "GetTask", {"id": "t-1"}, result=failed), rpc(6, "GetTask", {"id": "t-1"}), name="other.http")
    found = _both(monkeypatch, [[first, second], [second, first], [other], [first, other], [other, first, second]])
    messages = {f.message for f in found}
    assert "exchange 1 of first.http had already shown task t-1 completed; a finished task does not change" in messages
    assert "exchange 1 had already shown task t-1 completed" in messages
    assert "exchange 4 had already shown task t-1 failed; a finished task does not change" in messages
    sent = write(tmp_path, rpc(7, "SendMessage", {"message": message(task_id="t-1")}, result={"task": done}),
                 rpc(8, "GetTask", {"id": "t-1"}, result=done), name="sent.http")
    found = _both(monkeypatch, [[first, sent], [sent, first], [other, sent]])
    messages = {f.message for f in found}
    assert any(said.startswith("the message names task t-1, which exchange 1 of first.http had shown completed; "
                               "send a new task in its context instead") for said in messages)
    assert "exchange 1 of first.http had already shown task t-1 completed; a finished task does not change" in messages
    assert "exchange 4 of other.http had already shown task t-1 failed; a finished task does not change" in messages
