"""A long session's rows at phone width keep status, size and badges on screen; printed, a
finding panel and a figure stay whole on a page and the screen's "N more" control is not printed.
In real headless Chromium."""

from __future__ import annotations

import re

import pytest

from a2a_capture.report import render, walkthrough
from tests.builders import block, fetch_card, http_request, http_response, message, rpc, task, write
from tests.test_report import open_page


def _long_session(tmp_path):
    """Past the long-session threshold, each row with a long path; polls of a finished task for badges."""
    done = task("t-1", "TASK_STATE_COMPLETED")
    blocks = [fetch_card(1), rpc(2, "SendMessage", {"message": message()}, result={"task": done})]
    blocks += [rpc(n, "GetTask", {"id": "t-1"}, result=done) for n in range(3, 13)]
    blocks += [block(n, "GET", http_request("GET", f"/v1/tasks/{'a-rather-long-task-identifier-' * 3}{n}", []),
                     http_response(404, {"error": "not found"}, reason="Not Found")) for n in range(13, 215)]
    return write(tmp_path, *blocks)


@pytest.mark.browser
def test_long_rows_wrap_at_phone_width_and_keep_their_status_visible(browser, tmp_path):
    model = walkthrough.build([str(_long_session(tmp_path))])
    assert model.long
    out = tmp_path / "report.html"
    out.write_text(render.render(model, "html"))
    page, _ = open_page(browser, out)
    page.set_viewport_size({"width": 390, "height": 800})
    assert page.evaluate("document.documentElement.scrollWidth") <= 390
    box = page.locator("#verdict .overview").bounding_box()  # a long session opens on its overview
    assert box and box["x"] >= 0 and box["x"] + box["width"] <= 390
    for selector in ("summary .status", "summary .bytes", "summary .badge"):
        rights = page.eval_on_selector_all(f"#walkthrough details.exchange {selector}",
                                           "es => es.slice(0, 30).map(e => e.getBoundingClientRect().right)")
        assert rights and max(rights) <= 390, selector
    page.emulate_media(media="print")
    assert page.eval_on_selector("aside.finding", "e => getComputedStyle(e).breakInside") == "avoid"
    assert page.eval_on_selector(".figure", "e => getComputedStyle(e).breakInside") == "avoid"
    assert page.eval_on_selector("#findings h3", "e => getComputedStyle(e).breakAfter") == "avoid"
    page.close()


def _mostly_quiet(tmp_path):
    """210 calls that each did their job, then three polls of a finished task: three flagged."""
    blocks = [fetch_card(1)] + [rpc(n, "SendMessage", {"message": message(message_id=f"m-{n}")},
                                    result={"task": task(f"t-{n}", "TASK_STATE_COMPLETED")}) for n in range(2, 212)]
    blocks += [rpc(n, "GetTask", {"id": "t-2"}, result=task("t-2", "TASK_STATE_COMPLETED")) for n in range(212, 215)]
    return write(tmp_path, *blocks, name="quiet.http")


def _pages(pdf: bytes) -> int:
    return len(re.findall(rb"/Type\s*/Page(?!s)", pdf))


@pytest.mark.browser
def test_a_long_session_prints_its_flagged_exchanges_and_says_where_the_rest_are(browser, tmp_path):
    out = tmp_path / "report.html"
    out.write_text(render.render(walkthrough.build([str(_mostly_quiet(tmp_path))]), "html"))
    page, _ = open_page(browser, out)
    page.emulate_media(media="print")
    assert page.locator("#walkthrough .print-only").is_visible()
    shown = page.eval_on_selector_all("#walkthrough details.exchange",
                                      "ds => ds.filter(d => d.offsetParent !== null).map(d => d.className)")
    assert len(shown) == 3 and all("flagged" in name for name in shown)
    assert page.locator("#walkthrough details.flagged pre.listing").first.is_visible()  # among the first 20: whole
    printed = _pages(page.pdf(format="A4"))
    page.emulate_media(media="screen")
    assert not page.locator("#walkthrough .print-only").is_visible()
    page.add_style_tag(content="@media print { .long .exchange:not(.flagged) { display: block !important; } }")
    assert printed <= _pages(page.pdf(format="A4")) - 5  # 10 pages against 17 with every row
    page.close()
