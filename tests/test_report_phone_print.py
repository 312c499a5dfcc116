"""A long session's rows at phone width keep status, size and badges on screen; printed, a
finding panel and a figure stay whole on a page and the screen's "N more" control is not printed.
In real headless Chromium."""

from __future__ import annotations

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
    for selector in ("summary .status", "summary .bytes", "summary .badge"):
        rights = page.eval_on_selector_all(f"#walkthrough details.exchange {selector}",
                                           "es => es.slice(0, 30).map(e => e.getBoundingClientRect().right)")
        assert rights and max(rights) <= 390, selector
    page.emulate_media(media="print")
    assert page.eval_on_selector("aside.finding", "e => getComputedStyle(e).breakInside") == "avoid"
    assert page.eval_on_selector(".figure", "e => getComputedStyle(e).breakInside") == "avoid"
    assert page.eval_on_selector("#findings h3", "e => getComputedStyle(e).breakAfter") == "avoid"
    page.close()
