"""`-o -` writes convert's, tidy's and report's output to standard output, as Unix tools do:
never a file called `-`, never to a terminal (a capture's control sequences would reach it), and
quietly when the reader stops early (`| head`)."""

from __future__ import annotations

import json
import os
import pty
import subprocess

import pytest

from tests.cli import COMMAND, process_env
from tests.conftest import DATA

SESSION = DATA / "sample-session.http"


def command(*args: str, cwd, stdout=subprocess.PIPE) -> subprocess.CompletedProcess:
    return subprocess.run([*COMMAND, *args], cwd=cwd, stdout=stdout, stderr=subprocess.PIPE,
                          env=process_env(), timeout=120)


@pytest.mark.parametrize("args, check", [
    (["convert", str(SESSION), "--to", "har", "-o", "-"],
     lambda out: json.loads(out)["log"]["entries"][0]["request"]["method"] == "GET"),
    (["convert", str(SESSION), "--to", "mitm", "-o", "-"], lambda out: out[:20].split(b":", 1)[0].isdigit()),
    (["tidy", str(SESSION), "-o", "-"], lambda out: out.startswith(b"### 1 \xc2\xb7 ")),
    (["report", str(SESSION), "--format", "markdown", "-o", "-"], lambda out: out.startswith(b"# A2A session")),
    (["report", str(SESSION), "--format", "html", "-o", "-"], lambda out: out.startswith(b"<!doctype html>")),
    (["analyze", str(SESSION), "--format", "json", "--fail-on", "never", "-o", "-"],
     lambda out: json.loads(out)["summary"]["exchanges"] > 0),
], ids=["har", "mitm", "tidy", "markdown", "html", "analyze"])
def test_dash_writes_standard_output_and_no_file(tmp_path, args, check):
    done = command(*args, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert check(done.stdout), done.stdout[:200]
    assert args[0] == "analyze" or b"to standard output" in done.stderr
    assert not (tmp_path / "-").exists()


def test_a_reader_that_stops_early_is_not_an_error(tmp_path):
    """`| head -c 100`: the rest cannot be written, and that is what the user asked for."""
    with subprocess.Popen([*COMMAND, "convert", str(SESSION), "--to", "har", "-o", "-"], cwd=tmp_path,
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=process_env()) as child:
        child.stdout.read(100)
        child.stdout.close()
        errors = child.stderr.read()
        assert child.wait(timeout=120) == 0, errors
    assert b"error" not in errors


def test_a_terminal_is_refused_before_anything_is_read(tmp_path):
    leader, follower = pty.openpty()
    try:
        done = command("tidy", str(SESSION), "-o", "-", cwd=tmp_path, stdout=follower)
    finally:
        os.close(follower)
        os.close(leader)
    assert done.returncode == 2
    message = done.stderr.decode()
    assert "standard output is a terminal" in message and "name a file" in message
    assert "Traceback" not in message


def test_a_file_called_dash_is_left_alone_when_a_write_fails(tmp_path):
    """A failed write cleans up a half-written file of its own, never one that only shares `-`'s name."""
    (tmp_path / "-").write_text("the user's own file")
    done = command("convert", str(tmp_path / "missing.http"), "--to", "har", "-o", "-", cwd=tmp_path)
    assert done.returncode == 2 and b"missing.http" in done.stderr
    assert (tmp_path / "-").read_text() == "the user's own file"
