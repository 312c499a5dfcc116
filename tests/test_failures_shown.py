"""An error answer looks like one wherever a person reads it: named and red in the sequence diagram
(an `--x` answer in Mermaid), a red outcome on its row, and an outcome column in `show`, which fits
the terminal and colours only where colour is wanted."""

from __future__ import annotations

import re

import pytest

from a2a_capture.analyze.engine import analyze
from a2a_capture.cli import show as show_command
from a2a_capture.report import render, walkthrough
from tests.builders import error, fetch_card, rpc, write
from tests.conftest import ROOT
from tests.test_cli_show import run
from tests.test_report import open_page

MISTAKES = str(ROOT / "captures" / "09-mistakes.http")
CAPTURES = sorted(str(p) for p in (ROOT / "captures").glob("*.http"))


def _errors(path: str) -> dict[str, str]:
    """Each error answer of a capture, by exchange, as the analyzer names it."""
    return {call.exchange: call.error for call in analyze([path]).calls if call.error}


def test_the_mistakes_capture_has_errors_of_every_kind():
    errors = _errors(MISTAKES)
    assert errors == {"1": "HTTP 404", "3": "VersionNotSupportedError", "4": "MethodNotFoundError",
                      "8": "PushNotificationNotSupportedError"}


def test_show_names_every_error_answer_within_the_width():
    errors = _errors(MISTAKES)
    for columns in (100, 80):
        result = run("show", MISTAKES, env={"COLUMNS": str(columns)})
        assert result.returncode == 0, result.stderr
        lines = result.stdout.decode().splitlines()
        assert max(map(len, lines)) <= columns, (columns, max(lines, key=len))
        head = lines[0].split()
        assert head[:6] == ["#", "title", "method", "target", "status", "outcome"]
        rows = {line.split()[0]: line for line in lines[1:]}
        for number, name in errors.items():
            assert name in rows[number], (columns, rows[number])  # named whole, never cut
        assert "completed" in rows["5"] and "card of test-runner" in rows["2"]
    for columns in (60, 40, 20):  # narrower than the errors' names: cut, but never wider than asked
        lines = run("show", MISTAKES, env={"COLUMNS": str(columns)}).stdout.decode().splitlines()
        assert max(map(len, lines)) <= columns and len(lines) == 11
    wide = run("show", MISTAKES, env={"COLUMNS": "200"}).stdout.decode().splitlines()
    assert re.search(r"outcome +time +events +req bytes +resp bytes$", wide[0])
    assert re.search(r"\b210 ms\b", wide[5]) and re.search(r"\b1\.9 ms\b", wide[1])


@pytest.mark.kit
def test_show_fits_every_kit_capture_in_a_hundred_columns(kit):
    for path in sorted(kit.glob("*.http")):
        lines = run("show", str(path), env={"COLUMNS": "100"}).stdout.decode().splitlines()
        assert max(map(len, lines)) <= 100, (path.name, max(lines, key=len))


def test_show_colours_failures_only_when_colour_is_wanted(monkeypatch):
    coloured = run("show", "--color", "always", MISTAKES, env={"COLUMNS": "100"}).stdout.decode()
    assert "\x1b[31mVersionNotSupportedError -32009" in coloured and "\x1b[31m   404" in coloured
    assert "\x1b[31m   200" not in coloured  # HTTP's 200 under a JSON-RPC error stays plain: the outcome says it
    assert "\x1b[32mcompleted" in coloured
    plain = run("show", MISTAKES, env={"COLUMNS": "100"}).stdout.decode()  # not a terminal
    assert "\x1b[" not in plain
    assert [re.sub(r"\x1b\[\d+m", "", line).rstrip() for line in coloured.splitlines()] == plain.splitlines()
    monkeypatch.setattr("sys.stdout.isatty", lambda: True)
    monkeypatch.delenv("NO_COLOR", raising=False)
    assert show_command._coloured("auto") is True
    monkeypatch.setenv("NO_COLOR", "1")
    assert show_command._coloured("auto") is False and show_command._coloured("always") is True
    monkeypatch.setenv("NO_COLOR", "")  # empty: as if unset (no-color.org)
    assert show_command._coloured("auto") is True


def test_show_json_rows_say_the_outcome_and_time():
    import json

    rows = json.loads(run("show", "--format", "json", MISTAKES).stdout)
    third = rows[2]
    assert third["outcome"] == "VersionNotSupportedError -32009" and third["failed"] is True
    assert third["status"] == 200 and third["duration_ms"] == 1.9
    assert rows[4]["outcome"] == "completed" and rows[4]["failed"] is False


def test_markdown_marks_each_error_answer(tmp_path):
    errors = _errors(MISTAKES)
    text = render.render(walkthrough.build([MISTAKES]), "md")
    mermaid = text.split("```mermaid\n", 1)[1].split("```", 1)[0]
    crossed = re.findall(r"--xclient: (.+)", mermaid)
    assert len(crossed) == len(errors) and all(map(str.startswith, crossed, errors.values()))
    for name in errors.values():
        assert re.search(rf"^Outcome: ✗ {name}\b", text, re.M), name
    assert "Outcome: ✗ completed" not in text


def test_a_grpc_style_and_rest_error_is_a_failure_too(tmp_path):
    path = write(tmp_path, fetch_card(1), rpc(2, "GetTask", {"id": "t-9"}, error=error(-32001, "TASK_NOT_FOUND",
                                                                                       "no such task")))
    view = list(walkthrough.build([str(path)]).exchanges)[1]
    assert view.failed and view.outcome.startswith("TaskNotFoundError")


@pytest.mark.browser
def test_every_error_answer_is_red_and_named_inside_the_diagram(browser, tmp_path):
    errors = _errors(MISTAKES)
    out = tmp_path / "report.html"
    assert run("report", MISTAKES, "-o", str(out)).returncode == 0
    page, seen = open_page(browser, out)
    assert seen["console"] == []
    figure = page.locator("svg.sequence")
    box = figure.bounding_box()
    failed = page.locator("svg.sequence .answer-text.failed")
    texts = [failed.nth(i).text_content().removeprefix("✗ ") for i in range(failed.count())]
    assert len(texts) == len(errors) and all(map(str.startswith, texts, errors.values())), texts
    for i in range(failed.count()):
        inner = failed.nth(i).bounding_box()
        assert box["x"] <= inner["x"] and inner["x"] + inner["width"] <= box["x"] + box["width"] + 0.5
        fill = failed.nth(i).evaluate("e => getComputedStyle(e).fill")
        plain = page.locator("svg.sequence .answer-text:not(.failed)").first.evaluate("e => getComputedStyle(e).fill")
        assert fill != plain
    titles = page.eval_on_selector_all("svg.sequence a", "links => links.map(a => a.getAttribute('aria-label'))")
    assert sum("✗ " in title for title in titles) == len(errors)
    outcomes = page.locator("#walkthrough .outcome.failed")
    named = [outcomes.nth(i).text_content() for i in range(outcomes.count())]
    assert len(named) == len(errors) and all(map(str.startswith, named, errors.values())), named
    page.close()
