"""What a reader debugging a client reads: the report's numbers agree with the findings' own
outcomes (wasted, fragile, advice), and say them where the reader looks."""

from __future__ import annotations

import re

import pytest

from a2a_capture.report import render, walkthrough
from tests.builders import message, rpc, write
from tests.conftest import ROOT
from tests.test_report import open_page
from tests.test_report_views import html_report

MISTAKES = str(ROOT / "captures" / "09-mistakes.http")


def test_a_rules_time_is_the_time_its_wasted_findings_took():
    model = walkthrough.build([MISTAKES])
    auth = next(rule for rule in model.rules if rule.rule == "auth-missing")
    assert (auth.wasted, auth.fragile, auth.cost) == (0, 1, None)  # the SendMessage worked: no time wasted
    assert sum(rule.cost or 0.0 for rule in model.rules) == pytest.approx(model.verdict.cost)
    markdown = render.render(model, "md")
    assert "| Wasted | Fragile | Time wasted | Share |" in markdown
    row = next(line for line in markdown.splitlines() if line.startswith("| `auth-missing`"))
    assert row.endswith("| 0 | 1 | – | – |"), row  # no time wasted, no share of the waste
    html = render.render(model, "html")
    assert '<th scope="col">Time wasted</th>' in html and "Cost by rule" not in html


def test_each_finding_says_wasted_or_fragile_beside_its_title_and_on_its_exchange():
    html = render.render(walkthrough.build([MISTAKES]), "html")
    aside = re.search(r'<aside class="finding error" aria-label="Finding auth-missing">\s*<p>(.*?)</p>', html, re.S)
    assert '<code>auth-missing</code> Request without credentials to an agent that requires them ' \
           '<span class="tag fragile">fragile</span> <small>(spec ' in aside.group(1)
    headings = dict(re.findall(r'<span class="num">(\d+)</span>(.*?)</h3>', html, re.S))
    assert '<span class="tag fragile">fragile</span>' in headings["10"]
    assert '<span class="tag wasted">wasted</span>' in headings["8"] and "fragile" not in headings["8"]
    assert "tag" not in headings["2"]  # no finding


STREAM_ERROR = """### 1 · SendStreamingMessage
POST /a2a/jsonrpc HTTP/1.1
Host: 127.0.0.1:9001
Content-Type: application/json
A2A-Version: 1.0

{"jsonrpc": "2.0", "id": 1, "method": "SendStreamingMessage", "params": {"message": {"messageId": "m-1"}}}

HTTP/1.1 200 OK
Content-Type: text/event-stream

event: error
data: {"jsonrpc": "2.0", "id": 1, "error": {"code": -32004, "message": "Stream ordering violation"}}
"""


def test_an_error_in_a_stream_is_said_to_arrive_in_the_stream(tmp_path):
    path = tmp_path / "stream-error.http"
    path.write_text(STREAM_ERROR)
    view = walkthrough.build([str(path)]).exchanges[0]
    assert view.outcome.startswith("UnsupportedOperationError")
    assert "The JSON-RPC error arrives in an event of the stream, which opened with HTTP 200." in view.note
    assert "arrives with HTTP 200" not in view.note


@pytest.mark.browser
def test_the_rules_table_fits_a_phone_with_its_column_names(browser, tmp_path):
    out = html_report(tmp_path, MISTAKES)
    page, _ = open_page(browser, out)
    page.set_viewport_size({"width": 390, "height": 800})
    right = page.eval_on_selector_all("table.rules td",
                                      "cells => Math.max(...cells.map(c => c.getBoundingClientRect().right))")
    assert right <= 390
    said = page.eval_on_selector_all("table.rules tbody tr:first-child td", """cells => cells.map(
        c => getComputedStyle(c, '::before').content.replaceAll('"', '') + c.innerText)""")
    assert said[2:] == ["Findings: 1", "Wasted: 0", "Fragile: 1", "Time wasted: –", "Share: –"], said
    assert page.locator("table.rules caption").bounding_box()["height"] < 40  # one line, not a letter a line
    page.set_viewport_size({"width": 1280, "height": 800})
    assert page.locator("table.rules thead").is_visible()
    page.close()


def test_only_a_call_of_1_0_is_said_to_lack_the_version_header(tmp_path):
    plain = ["Content-Type: application/json"]
    path = write(tmp_path, rpc(1, "message/send", {"message": message()}, headers=plain),  # 0.3: no header to send
                 rpc(2, "tasks/send", {"message": message()}, headers=plain),  # 0.1
                 rpc(3, "SendMessage", {"message": message()}, headers=plain))  # 1.0 without its header
    notes = [view.note for view in walkthrough.build([str(path)]).exchanges]
    said = "The request has no A2A-Version header."
    assert [said in note for note in notes] == [False, False, True], notes


def test_a_card_fetch_says_whose_card_it_got(tmp_path):
    """A card fetch's outcome is the card, not HTTP's 200; one that failed or got no card keeps its status."""
    from tests.builders import card, fetch_card

    path = write(tmp_path, fetch_card(1, card(name="planner <b>&")), fetch_card(2, card(name=None)),
                 fetch_card(3, status=404), fetch_card(4, path="/.well-known/agent.json", data=card(name="old")))
    model = walkthrough.build([str(path)])
    assert [ex.outcome for ex in model.exchanges] == ["card of planner <b>&", "a card without a name", "HTTP 404",
                                                      "card of old"]
    markdown = render.render(model, "md")
    assert "Outcome: card of planner \\<b\\>&\n" in markdown and "Outcome: a card without a name\n" in markdown
    assert "    agent1-->>client: card of old\n" in markdown
    html = render.render(model, "html")
    assert "planner <b>" not in html and '<span class="outcome">card of planner &lt;b&gt;&amp;</span>' in html
    assert '<span class="outcome failed">HTTP 404</span>' in html


def _timed(block: str, start: str, end: str) -> str:
    """A built block with the recorder's start and end times."""
    header, rest = block.split("\n", 1)
    return f"{header}\n#@ start: 2026-11-30T07:40:{start}Z\n#@ end: 2026-11-30T07:40:{end}Z\n{rest}"


def _costly_session(tmp_path):
    from tests.builders import error, fetch_card, rpc, task, write

    done = task("t-1", "TASK_STATE_COMPLETED")
    return write(tmp_path,
                 _timed(fetch_card(1), "01.000000", "01.010000"),
                 _timed(rpc(2, "GetTask", {"id": "t-1"}, result=done), "02.000000", "02.010000"),
                 _timed(rpc(3, "CreateTaskPushNotificationConfig", {"taskId": "t-1", "url": "http://h/x"},
                            error=error(-32003, "PUSH_NOTIFICATION_NOT_SUPPORTED")), "03.000000", "03.002000"),
                 *(_timed(rpc(n, "GetTask", {"id": "t-1"}, result=done), f"{10 + 2 * n}.000000", f"{11 + 2 * n}.500000")
                   for n in (4, 5)))


def test_the_worst_wasted_round_trip_is_the_costliest_and_each_rules_share_is_on_the_first_screen(tmp_path):
    """A 2 ms refused push config (an error) and two polls of a finished task of 1.5 s each (warnings):
    the first screen names the costliest, not the most severe, and says which rule held the waste."""
    model = walkthrough.build([_costly_session(tmp_path)])
    assert model.verdict.worst.rule == "poll-terminal" and model.verdict.worst.cost == pytest.approx(1.5)
    assert [(share.rule, share.percent) for share in model.verdict.shares] == [("poll-terminal", 100),
                                                                               ("capability-push", 0)]
    markdown = render.render(model, "md")
    verdict = markdown[markdown.index("## Verdict"):markdown.index("## Findings")]
    assert "Worst wasted round trip: [Exchange 4](#ex-4) **warning** `poll-terminal`" in verdict
    assert ("Where the waste went: `poll-terminal` 100% (3.000 s), `capability-push` 0% (0.002 s) of 3.002 s."
            in verdict)
    html = render.render(model, "html")
    assert re.search(r'<p class="shares">Where the waste went: <a href="#rule-poll-terminal"><code>poll-terminal'
                     r'</code></a> 100% \(3\.000 s\)', html)


def test_the_report_names_files_relative_to_the_working_directory(tmp_path, monkeypatch):
    """An absolute path, as a script or CI gives it, is shown as the reader in that folder would open it."""
    (tmp_path / "sessions").mkdir()
    capture = _costly_session(tmp_path / "sessions")
    (tmp_path / "work" / "here").mkdir(parents=True)
    monkeypatch.chdir(tmp_path / "work" / "here")
    model = walkthrough.build([str(capture.resolve())])
    assert model.files_label == "../../sessions/case.http" and model.files == ["../../sessions/case.http"]
    assert str(tmp_path) not in render.render(model, "html").split("<main>")[0]
