"""Clear words for nothing: a capture with no exchange gets one line on stderr from every command
that reads one, whatever --fail-on, --allow-empty or the output format say (issue #28, point 6)."""

from __future__ import annotations

import pytest

from tests.cli import run

SAID = "no exchange in {}: nothing was recorded (the client may have bypassed the recorder); "


def _commands(empty: str, out) -> list[tuple[list[str], int, str]]:
    """(arguments, exit status, what it did of nothing) of each command given the empty capture."""
    baseline = str(out / "baseline.json")
    checked = "warning: " + SAID.format(empty) + "nothing was checked"
    return [
        (["analyze", empty, "--fail-on", "never"], 0, checked),
        (["analyze", empty, "--allow-empty", "--format", "json"], 0, checked),
        (["analyze", empty, "--fail-on", "never", "--format", "sarif"], 0, checked),
        (["analyze", empty], 2, "error: no exchange in " + empty),
        (["check", empty, "--baseline", baseline, "--update-baseline", "--allow-empty"], 0, checked),
        (["check", empty, "--baseline", baseline, "--allow-empty", "--fail-on", "info"], 0, checked),
        (["show", empty], 0, "warning: " + SAID.format(empty) + "nothing to show"),
        (["show", empty, "--format", "json"], 0, "warning: " + SAID.format(empty) + "nothing to show"),
        (["show", empty, "--format", "http"], 0, "warning: " + SAID.format(empty) + "nothing to show"),
        (["report", empty, "-o", str(out / "r.html")], 0,
         "warning: " + SAID.format(empty) + f"wrote {out / 'r.html'} of none"),
        (["report", empty, "-o", str(out / "r.md"), "--summary"], 0,
         "warning: " + SAID.format(empty) + f"wrote {out / 'r.md'} of none"),
        (["tidy", empty, "-o", str(out / "t.http")], 0,
         "warning: " + SAID.format(empty) + f"wrote {out / 't.http'} of none"),
        (["convert", empty, "-o", str(out / "c.har")], 0,
         "warning: " + SAID.format(empty) + f"wrote {out / 'c.har'} of none"),
        (["export", empty, "-o", str(out / "tables")], 0,
         "warning: " + SAID.format(empty) + f"exported 1 sessions of none to {out / 'tables'}"),
        (["scan", empty], 0, "warning: " + SAID.format(empty) + "nothing to scan"),
        (["diff", empty, empty], 0, "warning: " + SAID.format(empty) + "nothing to compare"),
        (["replay", empty, "--target", "http://127.0.0.1:9"], 2, "error: " + SAID.format(empty) + "nothing to replay"),
        (["serve", empty], 2, "error: "),
    ]


@pytest.mark.parametrize("content", [b"", b"# a note, and nothing else\n"], ids=["no bytes", "a note only"])
def test_every_command_says_in_one_line_that_the_capture_held_no_exchange(tmp_path, content):
    empty = tmp_path / "empty.http"
    empty.write_bytes(content)
    for args, status, said in _commands(str(empty), tmp_path):
        done = run(*args)
        stderr = done.stderr.decode()
        assert done.returncode == status, (args, stderr)
        assert stderr.count("\n") == 1 and stderr.startswith("a2a-capture: " + said), (args, stderr)


def test_a_capture_with_an_exchange_gets_no_such_word(tmp_path):
    from tests.conftest import ROOT

    capture = str(sorted((ROOT / "captures").glob("*.http"))[0])
    for args in (["analyze", capture, "--fail-on", "never"], ["show", capture], ["scan", capture]):
        assert "no exchange" not in run(*args).stderr.decode(), args
