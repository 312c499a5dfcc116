"""Text from a capture reaches a terminal escaped: a card name with escape sequences (set the window
title, clear the screen, colour) prints as `\\x1b…` from `show`, `analyze`, `serve`, `record --live` and
the one-line errors, never as the sequences themselves."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time

from a2a_capture.record.live import LiveAnalysis
from a2a_capture.record.process import free_port
from a2a_capture.terminal import shown
from tests.builders import card, error, fetch_card, rpc, task, write
from tests.cli import run
from tests.live import ROOT

HOSTILE = "\x1b]0;owned\x07\x1b[2J\x1b[31mevil\u202e"


def _capture(tmp_path):
    return write(tmp_path, fetch_card(1, card(name=HOSTILE)),
                 rpc(2, "SendMessage", {"message": {"messageId": "m-1", "role": "ROLE_USER", "parts": [{"text": "x"}]}},
                     result={"task": task("t-1", "TASK_STATE_COMPLETED")}, path="/elsewhere"),
                 rpc(3, f"{HOSTILE}/send", {}, error=error(-32601, message_text="Method not found")),
                 rpc(4, "GetTask", {"id": HOSTILE}, error=error(-32001, "TASK_NOT_FOUND")))  # task-unknown quotes it


def _run(*args: str) -> tuple[int, str, str]:
    """The command in this process (tests.cli.run): its status, stdout and stderr as text."""
    done = run(*args)
    return done.returncode, done.stdout.decode(), done.stderr.decode()


def test_shown_escapes_every_control_and_keeps_the_rest():
    assert shown(HOSTILE) == "\\x1b]0;owned\\x07\\x1b[2J\\x1b[31mevil\\u202e"
    assert shown("plain – text ✓") == "plain – text ✓"
    assert shown("a\tb\nc\x9bd\x7f") == "a\\x09b\\x0ac\\x9bd\\x7f"


def test_a_hostile_card_name_prints_escaped_from_show_and_analyze(tmp_path):
    path = _capture(tmp_path)
    _, show, show_errors = _run("show", str(path))
    _, analyze, analyze_errors = _run("analyze", "--fail-on", "never", str(path))
    for said in (show, show_errors, analyze, analyze_errors):
        assert "\x1b" not in said and "\x07" not in said and "\u202e" not in said
    assert "\\x1b]0;owned" in show  # the card's name in the outcome column, shown
    assert "task \\x1b]0;owned" in analyze, analyze  # task-unknown quotes the task's id


def test_serve_prints_a_hostile_card_name_escaped(tmp_path):
    path = _capture(tmp_path)
    port = free_port()
    process = subprocess.Popen([sys.executable, "-m", "a2a_capture.cli", "serve", str(path), "--listen",
                                f"127.0.0.1:{port}"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                               env={**os.environ, "PYTHONPATH": str(ROOT)})
    try:
        deadline, said = time.monotonic() + 30, ""
        while "stop with Ctrl-C" not in said and time.monotonic() < deadline:
            said += process.stdout.readline().decode("utf-8", "replace")
    finally:
        process.terminate()
        process.wait(10)
        process.stdout.close()
    assert "serving \\x1b]0;owned" in said, said
    assert "\x1b" not in said


def test_record_live_prints_a_finding_that_quotes_hostile_text_escaped(tmp_path):
    growing = tmp_path / "growing.http"
    growing.write_bytes(b"")
    printed: list[str] = []
    live = LiveAnalysis(str(growing), printed.append)  # what `record --live` runs as the recorder appends
    growing.write_text(_capture(tmp_path).read_text())
    live.poll()
    live.poll(final=True)
    assert any("task-unknown" in said and "task \\x1b]0;owned" in said for said in printed), printed
    assert not any("\x1b" in said or "\u202e" in said for said in printed)


def test_an_error_that_names_a_hostile_card_name_prints_it_escaped(tmp_path):
    status, _, errors = _run("serve", str(_capture(tmp_path)), "--listen", "nobody=127.0.0.1:1")
    assert status == 2
    assert "none of the agents: \\x1b]0;owned\\x07\\x1b[2J" in errors, errors
    assert "\x1b" not in errors and "\x07" not in errors and errors.count("\n") == 1


def test_diff_and_scan_print_what_they_quote_escaped(tmp_path):
    completed = task("t-1", "TASK_STATE_COMPLETED")
    old = write(tmp_path, fetch_card(1), rpc(2, "GetTask", {"id": "t-1"}, result=completed), name="old.http")
    new = write(tmp_path, fetch_card(1), rpc(2, "GetTask", {"id": "t-1"}, result=completed),
                rpc(3, "GetTask", {"id": HOSTILE}, error=error(-32001, "TASK_NOT_FOUND")), name="new.http")
    secret = write(tmp_path, fetch_card(1), rpc(2, "GetTask", {"id": "t-1"}, result={
        **completed, "metadata": {f"{HOSTILE}token": "ghp_" + "a" * 36}}), name="secret.http")
    diff_status, diff, _ = _run("diff", str(old), str(new), "--no-redact")
    scan_status, scan, _ = _run("scan", str(secret))
    assert diff_status == 1 and "finding task-unknown at exchange 3: GetTask on task \\x1b]0;owned" in diff, diff
    assert scan_status == 1 and "$.result.metadata.\\x1b]0;owned" in scan, scan
    assert not any(control in diff + scan for control in ("\x1b", "\x07", "\u202e"))


def test_show_json_writes_the_controls_json_leaves_raw_as_escapes(tmp_path):
    status, said, _ = _run("show", "--format", "json", str(_capture(tmp_path)))
    assert status == 0 and "\u202e" not in said and "\x1b" not in said
    assert "evil\\u202e" in said  # U+202E reorders what follows it on a terminal; JSON leaves it raw
    assert json.loads(said)[0]["outcome"].endswith("evil\u202e")  # the same document


def test_analyze_json_and_sarif_write_the_controls_json_leaves_raw_as_escapes(tmp_path):
    path = str(_capture(tmp_path))
    for output_format in ("json", "sarif"):
        _, said, _ = _run("analyze", "--fail-on", "never", "--format", output_format, path)
        assert "\u202e" not in said and "\x1b" not in said, output_format
        json.loads(said)  # still a JSON document, and the task id in it is the capture's, escaped
        assert f"GetTask on task {json.dumps(HOSTILE)[1:-1]}, which" in said, output_format
