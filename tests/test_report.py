"""Reports: listings cut in the manual's style, HTML checked in real headless Chromium, Markdown."""

from __future__ import annotations

import os
import re

import pytest

from a2a_capture.capture import read_capture
from a2a_capture.report import render, walkthrough
from a2a_capture.report.excerpt import CUT, listing, verbatim_pieces
from tests.builders import block, card, fetch_card, http_request, http_response, message, rpc, write
from tests.conftest import ROOT
from tests.test_cli_show import run

GOLDEN = ROOT / "tests" / "golden"
GOLDEN_CASES = {
    "kit-11-errors-6": ("kit", "11-errors.http", 5),
    "kit-05-streaming-1": ("kit", "05-streaming.http", 0),
    "kit-01-agent-cards-2": ("kit", "01-agent-cards.http", 1),
    "kit-15-push-webhook-1": ("kit", "15-push.http", 4),
    "captures-09-mistakes-8": ("captures", "09-mistakes.http", 7),
    "captures-03-streaming-2": ("captures", "03-streaming.http", 1),
}


@pytest.mark.parametrize("case", [pytest.param(case, marks=[pytest.mark.kit] if GOLDEN_CASES[case][0] == "kit" else [])
                                  for case in sorted(GOLDEN_CASES)])
def test_listing_matches_the_checked_in_golden(request, case):
    where, name, index = GOLDEN_CASES[case]
    folder = request.getfixturevalue("kit") if where == "kit" else ROOT / "captures"
    text, note = listing(read_capture(folder / name).exchanges[index])
    produced = f"{text.text}\n\n{note}\n"
    golden = GOLDEN / f"{case}.txt"
    if os.environ.get("UPDATE_GOLDEN"):
        golden.write_text(produced)
    assert produced == golden.read_text()


@pytest.mark.parametrize("name", ["01-agent-cards.http", "05-streaming.http", "07-auth-required.http",
                                  "11-errors.http", "15-push.http", "16-rest-binding.http", "19-planner.http"])
def test_every_kept_line_is_verbatim(kit, name):
    path = kit / name
    original = path.read_text()
    lines = set(original.splitlines())
    for exchange in read_capture(path).exchanges:
        text, note = listing(exchange)
        assert note.startswith(f"Exchange {exchange.label}, ")
        for line in text.lines:
            if CUT not in line:
                assert line == "" or line in lines, line
            else:
                assert line.strip() == CUT or all(piece in original for piece in verbatim_pieces(line)), line


def test_recorded_one_line_bodies_are_cut_inside_the_line():
    path = ROOT / "captures" / "03-streaming.http"
    original = path.read_text()
    exchange = read_capture(path).exchanges[1]
    text, _ = listing(exchange)
    cut_lines = [line for line in text.lines if CUT in line and line.strip() != CUT]
    assert cut_lines and all(len(line) < 300 for line in cut_lines)
    for line in cut_lines:
        assert all(piece in original for piece in verbatim_pieces(line))
    whole, note = listing(exchange, whole=True)
    assert CUT not in whole.text and note == "Exchange 2, complete."


def test_markdown_report(kit, tmp_path):
    out = tmp_path / "report.md"
    result = run("report", str(kit / "01-agent-cards.http"), str(kit / "11-errors.http"), "-o", str(out))
    assert result.returncode == 0, result.stderr
    text = out.read_text()
    assert text.startswith("# A2A session: ")
    assert '<a id="f2-ex-6"></a>' in text and "### 6 · CreateTaskPushNotificationConfig: not supported" in text
    assert "[01-agent-cards \\#2](#ex-2)" in text
    assert "```http\n### 6 · CreateTaskPushNotificationConfig: not supported\n" in text
    assert text.index("## Verdict") < text.index("## Findings") < text.index("## Exchanges")


def test_report_command_errors(kit, tmp_path):
    result = run("report", str(kit / "05-streaming.http"), "-o", str(tmp_path / "report.pdf"))
    assert result.returncode == 2 and b"--format html or markdown" in result.stderr
    own = tmp_path / "mine"
    own.mkdir()
    (own / "report.md.j2").write_text("{{ model.title }}: {{ model.exchanges | length }} exchanges\n")
    result = run("report", str(kit / "05-streaming.http"), "-o", str(tmp_path / "r.md"), "--templates", str(own))
    assert result.returncode == 0 and (tmp_path / "r.md").read_text() == "05-streaming.http: 1 exchanges\n"
    (own / "report.md.j2").write_text("{{ model.nope }}")
    result = run("report", str(kit / "05-streaming.http"), "-o", str(tmp_path / "r.md"), "--templates", str(own))
    assert result.returncode == 2 and b"template error" in result.stderr and b"Traceback" not in result.stderr


HOSTILE = {
    "name": "<script>document.title='pwned-1'</script>",
    "description": "<img src=x onerror=\"document.title='pwned-2'\">",
    "documentationUrl": "javascript:document.title='pwned-3'",
}


def hostile_capture(tmp_path):
    hostile_card = card(**HOSTILE, skills=[{"id": "x", "name": "<svg onload=\"document.title='pwned-4'\">",
                                            "description": "d", "tags": ["t"]}])
    bad = rpc(2, "SendMessage", {"message": message("[click](javascript:alert(1)) <script>alert(2)</script>")},
              result={"task": {"id": "<b>t</b>", "contextId": "c", "status": {"state": "TASK_STATE_COMPLETED"}}})
    title = block(3, "<iframe src=javascript:alert(5)>", http_request("GET", "/x?<script>", []),
                  http_response(200, "<script>alert(6)</script>", content_type="text/html"))
    return write(tmp_path, fetch_card(1, hostile_card), bad, title, name="hostile.http")


def test_markdown_escapes_what_came_from_the_capture(tmp_path):
    model = walkthrough.build([str(hostile_capture(tmp_path))])
    text = render.render(model, "md")
    outside_fences = re.sub(r"```.*?```", "", text, flags=re.S)
    outside_fences = re.sub(r'<a id="[a-z0-9-]+"></a>', "", outside_fences)  # the report's own anchors
    assert re.findall(r"(?<!\\)<[A-Za-z/]", outside_fences) == []  # every tag from the capture is escaped
    assert "\\<script\\>" in outside_fences


def open_page(browser, path):
    page = browser.new_page()
    seen = {"console": [], "requests": [], "dialogs": []}
    page.on("console", lambda message: seen["console"].append((message.type, message.text)))
    page.on("pageerror", lambda error: seen["console"].append(("pageerror", str(error))))
    page.on("request", lambda request: seen["requests"].append(request.url))
    page.on("dialog", lambda dialog: (seen["dialogs"].append(dialog.message), dialog.dismiss()))
    page.goto(path.as_uri())
    page.wait_for_load_state("load")
    return page, seen


def test_html_report_in_headless_chromium(browser, tmp_path):
    out = tmp_path / "report.html"
    captures = sorted(str(p) for p in (ROOT / "captures").glob("*.http"))
    result = run("report", *captures, "-o", str(out))
    assert result.returncode == 0, result.stderr
    page, seen = open_page(browser, out)
    assert seen["console"] == []
    assert seen["requests"] == [out.as_uri()]  # nothing fetched from anywhere else
    assert page.locator("script").count() == 0
    assert page.locator("#f9-ex-8").count() == 1  # every exchange has its anchor
    for figure in ("section#sequence > .figure svg", "section#tasks svg"):  # the wide one, and a phone's (hidden here)
        assert page.locator(figure).count() == 2 and page.locator(f"{figure}:visible").count() == 1
    page.goto(out.as_uri() + "#f9-ex-8")
    assert page.locator("details#f9-ex-8 .finding.error").count() == 1
    page.screenshot(path=str(tmp_path / "report.png"), full_page=False)
    assert (tmp_path / "report.png").stat().st_size > 10_000
    page.emulate_media(color_scheme="dark")
    background = page.evaluate("getComputedStyle(document.body).backgroundColor")
    assert background == "rgb(20, 22, 26)"
    page.emulate_media(media="print")
    assert page.locator("nav").is_hidden()
    page.close()


def test_hostile_capture_runs_no_script(browser, tmp_path):
    path = hostile_capture(tmp_path)
    out = tmp_path / "hostile.html"
    assert run("report", str(path), "-o", str(out)).returncode == 0
    page, seen = open_page(browser, out)
    page.wait_for_timeout(300)
    assert seen["dialogs"] == [] and seen["console"] == []
    assert "pwned" not in page.title()
    assert page.locator("script, iframe, img").count() == 0
    assert HOSTILE["name"] in page.locator("#agents").inner_text()  # shown as text
    assert page.locator("a[href^='javascript']").count() == 0
    page.close()


def test_a_large_capture_is_collapsed_with_findings_first(tmp_path):
    blocks = [fetch_card(1)] + [rpc(n, "GetTask", {"id": "t-1"}, result={"id": "t-1", "status": {
        "state": "TASK_STATE_WORKING"}}) for n in range(2, 302)]
    path = write(tmp_path, *blocks)
    model = walkthrough.build([str(path)])
    html = render.render(model, "html")
    assert html.count('class="target-anchor" id="ex-') == 301  # inside, so following a link opens it
    assert html.count(" open>") == 0  # a long session is a dense index, every exchange folded
    assert html.index('id="verdict"') < html.index('id="findings"') < html.index('id="walkthrough"')


def test_a_listing_keeps_what_its_finding_points_at(tmp_path):
    from tests.builders import ORIGIN

    tenant_card = card(supportedInterfaces=[{"url": f"{ORIGIN}/rpc", "protocolBinding": "JSONRPC",
                                             "protocolVersion": "1.0", "tenant": "acme"}])
    params = {"tenant": "other", "message": message(), "metadata": {"a": 1, "b": 2, "c": 3, "d": 4}}
    path = write(tmp_path, fetch_card(1, tenant_card), rpc(2, "SendMessage", params, result={}))
    model = walkthrough.build([str(path)])
    flagged = model.exchanges[1]
    assert [f.rule for f in flagged.findings] == ["tenant-not-echoed"]
    assert '"tenant": "other"' in flagged.listing and CUT in flagged.listing
