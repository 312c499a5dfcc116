"""Time in the figures: each arrow says how long its call took, a pause before a call is labelled,
an agent busy with a call has an activation bar, and a webhook sits inside the call that was open
when it came (captures/07-push-webhook.http: webhook 1 arrives during SendMessage #2)."""

from __future__ import annotations

import re

import pytest

from a2a_capture.report import svg, walkthrough
from tests.builders import rpc, task, write
from tests.conftest import ROOT
from tests.test_cli_show import run
from tests.test_report import open_page

POLLING = str(ROOT / "captures" / "04-polling.http")
WEBHOOK = str(ROOT / "captures" / "07-push-webhook.http")
DURATION = re.compile(r"\d(\.\d)? m?s\b")


def _arrow(name: str, start: float, took: float, *, webhook: bool = False) -> svg.Arrow:
    return svg.Arrow(anchor=name, label=name, lifeline="agent", answer="" if webhook else "completed",
                     wasted=False, events=0, webhook=webhook, name=name, time=start, duration=took)


def test_a_webhook_during_a_call_is_drawn_between_its_call_and_its_answer():
    arrows = [_arrow("send", 10.0, 0.5), _arrow("hook", 10.2, 0.01, webhook=True), _arrow("poll", 11.0, 0.002)]
    rows, _ = svg._layout(arrows, 0, set(), by_time=True)
    send, hook, poll = rows
    assert send.call < hook.call < send.answer < poll.call
    assert poll.answer == poll.call + 10  # answered before anything else: right under its call
    assert poll.gap == pytest.approx(0.5) and send.gap is None and hook.gap is None  # hook came while send ran
    untimed, _ = svg._layout(arrows, 0, set(), by_time=False)  # capture order, each answer under its call
    assert untimed[0].answer < untimed[1].call


def test_a_call_whose_end_is_written_before_its_start_is_drawn_answered_after_its_call():
    """A damaged capture (an `#@ end:` before its `#@ start:`, found by the fuzzer) makes a negative
    duration: the diagram places its answer right under its call, as a call that took no time."""
    arrows = [_arrow("card", 10.0, -0.12), _arrow("send", 10.5, 0.2)]
    rows, _ = svg._layout(arrows, 0, set(), by_time=True)
    card, send = rows
    assert card.call < card.answer < send.call < send.answer
    assert card.answer == card.call + 10


def test_durations_read_as_a_person_writes_them():
    assert [svg.duration_text(s) for s in (0.0022, 0.0098, 0.21, 2.34, 687.0)] == [
        "2.2 ms", "9.8 ms", "210 ms", "2.3 s", "687 s"]


def test_mermaid_activates_the_agent_and_keeps_the_webhook_inside_its_call():
    text = walkthrough.build([WEBHOOK]).sequence_mermaid
    lines = [line.strip() for line in text.splitlines()]
    send = lines.index("client->>agent1: 2 SendMessage")
    assert lines[send + 1] == "activate agent1" and lines[send + 2] == "agent1->>client: webhook 1"
    assert re.fullmatch(r"agent1-->>client: submitted, \d\.\d ms", lines[send + 3])
    assert lines[send + 4] == "deactivate agent1"
    assert lines.count("activate agent1") == lines.count("deactivate agent1") == 2


@pytest.mark.browser
def test_the_webhook_sits_inside_send_messages_activation(browser, tmp_path):
    out = tmp_path / "report.html"
    assert run("report", WEBHOOK, "-o", str(out)).returncode == 0
    page, seen = open_page(browser, out)
    assert seen["console"] == []
    groups = page.eval_on_selector_all("svg.sequence g.arrow", """gs => gs.map(g => {
        const lines = [...g.querySelectorAll('line')].map(l => l.y1.baseVal.value);
        const bar = g.querySelector('rect.activation');
        const box = bar ? bar.getBBox() : null;
        return [g.querySelector('text.label').textContent, lines,
                box ? [box.y, box.y + box.height] : null, g.querySelector('title').textContent]; })""")
    by_label = {label: (lines, bar, title) for label, lines, bar, title in groups}
    send_lines, send_bar, send_title = by_label["2 SendMessage"]
    hook_lines, hook_bar, _ = by_label["webhook 1"]
    assert send_bar is not None and hook_bar is None  # the agent is busy with a call, not with a webhook
    assert send_bar[0] < hook_lines[0] < send_bar[1] and send_lines[1] == send_bar[1]
    assert DURATION.search(send_title) and "→ submitted · " in send_title
    page.close()


@pytest.mark.browser
def test_every_arrow_says_its_duration_and_the_pause_before_it(browser, tmp_path):
    out = tmp_path / "report.html"
    assert run("report", POLLING, "-o", str(out)).returncode == 0
    page, _ = open_page(browser, out)
    figure = page.locator("svg.sequence").bounding_box()
    titles = page.eval_on_selector_all("svg.sequence g.arrow title", "ts => ts.map(t => t.textContent)")
    answers = page.eval_on_selector_all("svg.sequence .answer-text", "ts => ts.map(t => t.textContent)")
    assert len(titles) == len(answers) == 4 and all(DURATION.search(text) for text in titles + answers)
    assert "working · 2.2–5.3 ms" in answers  # the nine polls that saw working, folded: their range
    gaps = page.locator("svg.sequence text.gap")
    assert gaps.count() == 1  # before the last poll; the loop's own spacing is in its tab
    assert re.fullmatch(r"\+2[45]\d ms", gaps.first.text_content())
    box = gaps.first.bounding_box()
    assert box["x"] >= figure["x"] and box["x"] + box["width"] <= figure["x"] + figure["width"]
    assert page.locator("svg.sequence rect.activation").count() == 4
    page.close()


@pytest.mark.browser
def test_the_timeline_marks_every_poll_and_stays_inside_its_figure(browser, tmp_path):
    """04-polling: a link per exchange that saw the task (the send and its ten polls); a task
    with more states than fit still ends inside the figure; exchange order ticks no exchange
    that is not there."""
    flipping = [rpc(n, "GetTask", {"id": "t-1"}, result=task(
        "t-1", "TASK_STATE_WORKING" if n % 2 else "TASK_STATE_INPUT_REQUIRED")) for n in range(1, 121)]
    for path, looks in ((POLLING, 11), (str(write(tmp_path, *flipping)), 120)):
        out = tmp_path / "report.html"
        assert run("report", path, "-o", str(out)).returncode == 0
        page, _ = open_page(browser, out)
        ticks = page.locator("svg.timeline a:has(rect.seen)")
        assert ticks.count() == looks
        hrefs = ticks.evaluate_all("links => links.map(a => a.getAttribute('href'))")
        assert len(set(hrefs)) == looks and all(page.locator(h).count() == 1 for h in hrefs[:12])
        width = page.eval_on_selector("svg.timeline", "s => s.viewBox.baseVal.width")
        boxes = page.eval_on_selector_all("svg.timeline rect", "rs => rs.map(r => r.getBBox().x + r.getBBox().width)")
        assert max(boxes) <= width
        labels = page.locator("svg.timeline text.legend").all_text_contents()
        assert "#121" not in labels and "#13" not in labels
        page.close()


def test_a_capture_with_no_times_draws_its_statuses_timestamps(tmp_path):
    """Kit style (no `#@ start:`): every status with a timestamp puts the timeline on that clock;
    one state without one leaves it in exchange order."""
    def stamped(state, at):
        return {"id": "t-1", "contextId": "c-1", "status": {"state": state, "timestamp": at}}

    blocks = [rpc(1, "SendMessage", {"message": {"messageId": "m", "parts": []}},
                  result={"task": stamped("TASK_STATE_SUBMITTED", "2026-10-06T09:00:00.000Z")}),
              rpc(2, "GetTask", {"id": "t-1"}, result=stamped("TASK_STATE_WORKING", "2026-10-06T09:00:01.500Z")),
              rpc(3, "GetTask", {"id": "t-1"}, result=stamped("TASK_STATE_COMPLETED", "2026-10-06T09:00:04.000Z"))]
    model = walkthrough.build([str(write(tmp_path, *blocks))])
    assert "seconds since the first state, from each status's timestamp" in model.timeline_svg
    assert "+1.50 s" in model.timeline_text[0] and "+4.00 s" in model.timeline_text[0]
    assert ">4 s<" in model.timeline_svg and ">#1<" not in model.timeline_svg
    blocks[2] = rpc(3, "GetTask", {"id": "t-1"}, result=task("t-1", "TASK_STATE_COMPLETED"))
    plain = walkthrough.build([str(write(tmp_path, *blocks, name="plain.http"))])
    assert "exchange order (the capture records no times)" in plain.timeline_svg and "+" not in plain.timeline_text[0]
