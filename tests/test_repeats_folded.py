"""Repeats folded: a run of alike calls (the same operation on the same task with the same
outcome) is one loop in the sequence diagram, with its count, spacing and waste, in the SVG and
in Mermaid; the findings still count each exchange."""

from __future__ import annotations

import re

import pytest

from a2a_capture.report import walkthrough
from tests.builders import fetch_card, message, rpc, task, write
from tests.conftest import ROOT
from tests.test_cli_show import run
from tests.test_report import open_page

POLLING = str(ROOT / "captures" / "04-polling.http")


def _polls(tmp_path, count=10):
    """A task completed by SendMessage, then polled ``count`` times: each poll wasted."""
    done = task("t-1", "TASK_STATE_COMPLETED")
    blocks = [fetch_card(1), rpc(2, "SendMessage", {"message": message()}, result={"task": done})]
    blocks += [rpc(n, "GetTask", {"id": "t-1"}, result=done) for n in range(3, 3 + count)]
    return str(write(tmp_path, *blocks))


def test_the_ten_wasted_polls_are_one_loop_and_ten_findings(tmp_path):
    model = walkthrough.build([_polls(tmp_path)])
    assert re.findall(r'class="loop-text">([^<]*)', model.sequence_svg) == ["loop · GetTask ×10, 10 wasted"]
    assert model.sequence_svg.count('<g class="arrow') == 3  # the card, the send, the loop
    assert len(model.findings) == 10  # folded in the picture, each exchange still a finding
    lines = [line.strip() for line in model.sequence_mermaid.splitlines()]
    start = lines.index("loop GetTask x10, 10 wasted")
    assert lines[start + 1] == "client->>agent1: 3 GetTask to 12 (wasted)" and lines[start + 5] == "end"


def test_two_alike_calls_are_not_a_loop_and_other_outcomes_break_a_run(tmp_path):
    assert "loop" not in walkthrough.build([_polls(tmp_path, 2)]).sequence_svg.replace("loop-", "")
    polling = walkthrough.build([POLLING])  # polls 3 to 11 saw working, 12 completed
    assert re.findall(r'class="loop-text">([^<]*)', polling.sequence_svg) == [
        "loop · GetTask ×9, every ~258 ms"]
    assert "3 GetTask … 11 → working · 2.2–5.3 ms" in polling.sequence_svg


@pytest.mark.browser
def test_the_loop_frame_holds_its_arrow_inside_the_figure(browser, tmp_path):
    out = tmp_path / "report.html"
    assert run("report", POLLING, "-o", str(out)).returncode == 0
    page, _ = open_page(browser, out)
    for figure, width in (("svg.sequence", 1400), ("svg.sequence-narrow", 390)):
        page.set_viewport_size({"width": width, "height": 900})
        frame = page.eval_on_selector(f"{figure} rect.loop", "r => { const b = r.getBBox(); "
                                      "return [b.x, b.y, b.x + b.width, b.y + b.height]; }")
        inner = page.eval_on_selector_all(f"{figure} g:has(rect.loop) :is(line, text)", """es => es.map(e => {
            const b = e.getBBox(); return [b.x, b.y, b.x + b.width, b.y + b.height]; })""")
        view = page.eval_on_selector(figure, "s => s.viewBox.baseVal.width")
        assert frame[0] >= 0 and frame[2] <= view
        assert len(inner) == 5  # the tab, the call, its label, the answer, its text: all inside the frame
        for left, top, right, bottom in inner:
            assert frame[0] <= left and right <= frame[2] + 0.5 and frame[1] <= top and bottom <= frame[3] + 0.5
    page.close()


def test_the_ten_wasted_polls_are_one_line_of_the_findings_list(tmp_path):
    """Ten findings, one line: its name, the first message, and a link to each other exchange,
    each with the anchor its exchange's "back to the finding" points at."""
    from a2a_capture.report import render

    model = walkthrough.build([_polls(tmp_path)])
    (group,) = model.rules
    assert group.count == 10 and [line.count for line in group.lines] == [10]
    assert group.lines[0].said == "GetTask ×10, all wasted"
    html = render.render(model, "html")
    assert html.count('<strong class="run">GetTask ×10, all wasted</strong>') == 1
    for number in range(1, 11):
        assert html.count(f'id="finding-{number}"') == 1 and f'href="#finding-{number}"' in html
    markdown = render.render(model, "md")
    assert "**GetTask ×10, all wasted**" in markdown and "[12](#ex-12))" in markdown
    two = walkthrough.build([_polls(tmp_path, 2)])
    assert [line.count for line in two.rules[0].lines] == [1, 1]


@pytest.mark.browser
def test_the_run_line_keeps_its_links_on_screen(browser, tmp_path):
    out = tmp_path / "report.html"
    assert run("report", _polls(tmp_path), "-o", str(out)).returncode == 0
    page, _ = open_page(browser, out)
    for width in (1400, 390):
        page.set_viewport_size({"width": width, "height": 900})
        item = page.locator("#findings li#finding-1")
        box = item.bounding_box()
        assert item.locator("strong.run").inner_text() == "GetTask ×10, all wasted"
        links = item.locator(".run-exchanges a")
        assert links.count() == 9
        last = links.last.bounding_box()
        assert box["x"] <= last["x"] and last["x"] + last["width"] <= box["x"] + box["width"] + 1
        assert page.evaluate("document.documentElement.scrollWidth") <= width
    page.click("a[href='#finding-7']")  # exchange 9's "back to the finding"
    assert page.evaluate("location.hash") == "#finding-7"
    page.close()
