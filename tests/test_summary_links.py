"""`--summary` for pull requests: no link to an anchor it does not hold (plain text, or the full
report's address with --link-base), lists capped with a count, and the full Markdown says when
it is over what a GitHub comment takes."""

from __future__ import annotations

import re

from a2a_capture.report import render
from tests.builders import message, rpc, task, write
from tests.conftest import ROOT
from tests.test_cli_show import run
from tests.test_report_phone_print import _long_session

CAPTURES = sorted(str(path) for path in (ROOT / "captures").glob("*.http"))


def test_a_summary_links_only_where_it_knows_the_report(tmp_path):
    plain, linked, full = tmp_path / "s.md", tmp_path / "l.md", tmp_path / "r.html"
    assert run("report", "--each-file", *CAPTURES, "--summary", "-o", str(plain)).returncode == 0
    assert "](" not in plain.read_text() and "09-mistakes \\#3" in plain.read_text()
    base = "https://ci.example/run/7/report.html"
    assert run("report", "--each-file", *CAPTURES, "--summary", "--link-base", base, "-o", str(linked)).returncode == 0
    assert run("report", "--each-file", *CAPTURES, "-o", str(full)).returncode == 0
    targets = re.findall(r"\]\(([^)]*)\)", linked.read_text())
    ids = set(re.findall(r' id="([^"]+)"', full.read_text()))
    assert len(targets) >= 10 and all(t.startswith(base + "#") and t.split("#", 1)[1] in ids for t in targets)
    refused = run("report", *CAPTURES[:1], "--link-base", base, "-o", str(tmp_path / "x.md"))
    assert refused.returncode == 2 and b"--link-base is for --summary" in refused.stderr


def test_the_unfinished_tasks_are_capped_with_a_count(tmp_path):
    failed = [rpc(n, "SendMessage", {"message": message()}, result={"task": task(f"t-{n}", "TASK_STATE_FAILED")})
              for n in range(1, 16)]
    out = tmp_path / "s.md"
    assert run("report", str(write(tmp_path, *failed)), "--summary", "-o", str(out)).returncode == 0
    line = next(line for line in out.read_text().splitlines() if line.startswith("Tasks that did not"))
    assert line.count(" failed") == 10 and line.endswith(", and 5 more")


def test_the_full_markdown_says_when_it_is_over_a_comment(tmp_path):
    out, small = tmp_path / "r.md", tmp_path / "small.md"
    assert run("report", str(_long_session(tmp_path)), "-o", str(out)).returncode == 0
    text = out.read_text()
    assert len(text) > render.COMMENT_LIMIT and text.rstrip().endswith("post `report --summary` there and link this.")
    assert run("report", CAPTURES[0], "-o", str(small)).returncode == 0
    assert "a GitHub comment takes" not in small.read_text()
