"""What a reader sees: reports looked at in real headless Chromium, and Markdown read as Markdown."""

from __future__ import annotations

import itertools
import re

import pytest

from a2a_capture.capture import read_capture
from a2a_capture.report import render, walkthrough
from a2a_capture.report.excerpt import listing
from a2a_capture.show import rows
from tests.builders import block, card, fetch_card, http_request, http_response, message, rpc, write
from tests.conftest import ROOT
from tests.test_cli_show import run
from tests.test_report import open_page  # the browser fixture is in conftest.py

CAPTURES = sorted(str(p) for p in (ROOT / "captures").glob("*.http"))


def html_report(tmp_path, *files, name="report.html", extra=()):
    out = tmp_path / name
    result = run("report", *map(str, files), "-o", str(out), *extra)
    assert result.returncode == 0, result.stderr
    return out


# -- kit 07: a stream that goes on after another exchange -------------------------------------------


def test_kit_07_stream_is_attributed_as_show_attributes_it(kit):
    path = kit / "07-auth-required.http"
    model = walkthrough.build([str(path)])
    shown = {row.label: row.events for row in rows(path)}
    assert [ex.events for ex in model.exchanges] == [shown["1"], 0] == [6, 0]
    first, second = model.exchanges
    assert "# The same stream continues." in first.listing
    assert first.listing.index("# The stream stays open.") < first.listing.index("# The same stream continues.")
    assert first.listing.count("data: ") == 6 and "data: " not in second.listing
    assert first.outcome == "completed"
    assert "Frames 4 to 6 come after exchange 2" in first.note
    assert "belong to the stream of exchange 1" in second.note


def test_kit_07_timeline_gives_the_late_states_to_the_stream(browser, kit, tmp_path):
    out = html_report(tmp_path, kit / "07-auth-required.http")
    page, _ = open_page(browser, out)
    states = page.eval_on_selector_all(
        "svg.timeline a", "links => links.map(a => [a.getAttribute('href'), a.querySelector('title').textContent])")
    assert ("#ex-1", "completed") in [tuple(s) for s in states]
    assert all(href == "#ex-1" for href, _ in states)  # the operator's approval changed no state itself
    page.close()


# -- timeline ------------------------------------------------------------------------------------------


def _bars(page):
    return page.eval_on_selector_all("svg.timeline rect[height='18']", """rects => rects.map(r => {
        const b = r.getBBox();
        return [Math.round(b.y), b.x, b.x + b.width, r.querySelector('title').textContent]; })""")


def test_timeline_shows_every_state_without_overlap(browser, kit, tmp_path):
    files = [kit / "05-streaming.http", kit / "06-input-required.http", kit / "07-auth-required.http"]
    out = html_report(tmp_path, *files)
    page, _ = open_page(browser, out)
    bars = _bars(page)
    rows_seen: dict[int, list] = {}
    for y, x0, x1, state in bars:
        rows_seen.setdefault(y, []).append((x0, x1, state))
    assert len(rows_seen) == 3
    for row in rows_seen.values():
        row.sort()
        for (_a0, a1, _), (b0, _, _) in itertools.pairwise(row):
            assert a1 <= b0 + 0.01, row  # no bar hides another
        assert all(x1 - x0 >= 10 for x0, x1, _ in row)
    streamed = [state for _, _, state in min(rows_seen.items())[1]]
    assert streamed == ["submitted", "working", "completed"]  # the stream's states, each visible
    assert "exchange order" in page.locator("svg.timeline .axis-label").text_content()
    page.close()


def test_timeline_of_a_recorded_capture_is_on_a_time_axis(browser, tmp_path):
    out = html_report(tmp_path, ROOT / "captures" / "03-streaming.http")
    page, _ = open_page(browser, out)
    assert "seconds since the first request" in page.locator("svg.timeline .axis-label").text_content()
    labels = page.locator("svg.timeline .task-id").all_text_contents()
    assert labels and all(re.search(r"[0-9a-f]{8} test-runner$", label) for label in labels)  # short id, agent
    page.close()


# -- navigation --------------------------------------------------------------------------------------


def test_jump_targets_clear_the_sticky_bar(browser, tmp_path):
    out = html_report(tmp_path, *CAPTURES)
    page, _ = open_page(browser, out)
    for anchor, width in (("f9-ex-8", 1400), ("f4-ex-6", 1400), ("ex-2", 1400), ("f9-ex-8", 390)):
        page.set_viewport_size({"width": width, "height": 900})
        page.goto(out.as_uri() + "#" + anchor)
        nav = page.eval_on_selector("nav", "n => n.getBoundingClientRect().bottom")
        heading = page.eval_on_selector(f"details:is(#{anchor}, :has(#{anchor})) summary",
                                        "s => s.getBoundingClientRect().top")
        assert heading >= nav - 0.5, (anchor, heading, nav)
        assert heading < 400
    page.close()


def test_findings_and_exchanges_link_both_ways(browser, tmp_path):
    out = html_report(tmp_path, *CAPTURES)
    page, _ = open_page(browser, out)
    link = page.locator("#findings li a[href='#f9-ex-8']").first
    assert link.inner_text() == "09-mistakes #8"  # a link text a person reads
    back = page.locator("details#f9-ex-8 a.back").first.get_attribute("href")
    assert page.locator(f"#findings {back}").count() == 1
    flagged_nav = page.locator("details#f9-ex-8 .flag-nav a").all()
    assert {a.inner_text() for a in flagged_nav} == {"← previous flagged", "next flagged →"}
    page.close()


def test_the_same_file_twice_is_refused(kit, tmp_path):
    path = kit / "05-streaming.http"
    result = run("report", str(path), str(path), "-o", str(tmp_path / "r.html"))
    assert result.returncode == 2
    assert b"given twice" in result.stderr and result.stderr.count(b"\n") == 1
    assert not (tmp_path / "r.html").exists()


# -- sequence diagram --------------------------------------------------------------------------------


def test_sequence_labels_fit_their_arrows_and_keep_titles(browser, tmp_path):
    out = html_report(tmp_path, *CAPTURES)
    page, _ = open_page(browser, out)
    arrows = page.eval_on_selector_all("svg.sequence g.arrow", """gs => gs.map(g => {
        const line = g.querySelector('line'); const label = g.querySelector('text.label');
        return [Math.abs(line.x2.baseVal.value - line.x1.baseVal.value), label.getComputedTextLength(),
                label.textContent, g.querySelector('title').textContent]; })""")
    assert len(arrows) == 38  # 04-polling's nine polls that saw working are one loop
    for span, width, text, _ in arrows:
        assert width <= span, (text, width, span)
    titles = [title for _, _, _, title in arrows]
    assert any("/.well-known/agent.json" in t for t in titles)  # the path a card-path finding is about
    shown = [text for _, _, text, _ in arrows]
    assert any("agent.json" in text for text in shown)
    assert any(text.startswith("3 SendMessage") for text in shown)
    page.close()


# -- cuts keep the evidence ---------------------------------------------------------------------------


def test_cuts_keep_the_task_id_and_the_error_message(kit):
    streamed, _ = listing(read_capture(kit / "05-streaming.http").exchanges[0])
    assert '"id": "728ba084-97eb-422b-b94b-b0fe9153ce2c"' in streamed.text
    assert '"timestamp": "2026-10-06T09:00:01.750Z"' in streamed.text
    errors, note = listing(read_capture(kit / "11-errors.http").exchanges[5])
    assert '"message": "Push notifications are not supported"' in errors.text
    assert '"@type": "type.googleapis.com/google.rpc.ErrorInfo"' in errors.text and "error details" in note
    recorded, _ = listing(read_capture(ROOT / "captures" / "09-mistakes.http").exchanges[7])
    assert '"message":"Push notifications are not supported by the agent"' in recorded.text


def test_a_cut_stream_says_which_frames_are_cut(kit):
    _, note = listing(read_capture(kit / "05-streaming.http").exchanges[0])
    assert "Frames 4 to 7 are cut." in note


# -- layout: 390 px, print ---------------------------------------------------------------------------


def test_no_horizontal_overflow_at_390_px(browser, kit, tmp_path):
    out = html_report(tmp_path, *CAPTURES)
    kit_out = html_report(tmp_path, kit / "01-agent-cards.http", kit / "15-push.http", name="kit.html")
    for path in (out, kit_out):
        page = browser.new_page(viewport={"width": 390, "height": 800})
        page.goto(path.as_uri())
        assert page.evaluate("document.documentElement.scrollWidth") <= 390
        page.close()


def test_a_phone_gets_the_diagrams_as_wide_as_its_screen(browser, kit, tmp_path):
    """At 390 px the sequence diagram and the timeline are drawn narrow (no sideways scroll inside
    their figures), with every arrow, link and label of the wide ones; a wider screen gets the wide ones."""
    crowded = [block(n, "discover", http_request("GET", "/.well-known/agent-card.json", [],
                                                 host=f"agent{n}.example:9001"),
                     http_response(200, card(name=f"agent-with-a-long-name-{n}"))) for n in range(1, 7)]
    for path in (html_report(tmp_path, *CAPTURES), html_report(tmp_path, kit / "04-polling.http", name="kit.html"),
                 html_report(tmp_path, write(tmp_path, *crowded, name="crowded.http"), name="crowded.html")):
        page = browser.new_page(viewport={"width": 390, "height": 800})
        page.goto(path.as_uri())
        figures = page.locator("#sequence > .figure").count() + page.locator("#tasks .figure").count()
        assert page.locator(".figure-narrow:visible").count() == figures // 2 == page.locator(".figure-narrow").count()
        assert page.locator(".figure-wide:visible").count() == 0
        assert page.eval_on_selector_all(".figure-narrow", "fs => fs.every(f => f.scrollWidth <= f.clientWidth)")
        assert page.eval_on_selector_all("svg.timeline-narrow a", "links => links.map(a => a.getAttribute('href'))") \
            == page.eval_on_selector_all("svg.timeline a", "links => links.map(a => a.getAttribute('href'))")
        width = page.eval_on_selector("svg.sequence-narrow", "s => s.viewBox.baseVal.width")
        texts = page.eval_on_selector_all("svg.sequence-narrow text", """ts => ts.map(t => {
            const box = t.getBBox(); return [box.x, box.x + box.width, t.textContent]; })""")
        assert all(left >= 0 and right <= width for left, right, _ in texts), texts
        wide = page.eval_on_selector_all("svg.sequence a", "links => links.map(a => a.getAttribute('aria-label'))")
        narrow = page.eval_on_selector_all("svg.sequence-narrow a",
                                           "links => links.map(a => a.getAttribute('aria-label'))")
        assert narrow == wide and wide
        page.set_viewport_size({"width": 1280, "height": 800})
        assert page.locator(".figure-wide:visible").count() == figures // 2
        assert page.locator(".figure-narrow:visible").count() == 0
        page.close()


def test_print_opens_folded_exchanges_and_frees_the_figures(browser, tmp_path):
    """A long session prints its first 20 flagged exchanges whole, a line for each later one, and
    leaves the others (here the card) to the screen."""
    blocks = [fetch_card(1)] + [rpc(n, "GetTask", {"id": "t-1"}, result={"id": "t-1", "contextId": "c", "status": {
        "state": "TASK_STATE_COMPLETED"}}) for n in range(2, 252)]  # every poll after the first: wasted
    out = tmp_path / "long.html"
    out.write_text(render.render(walkthrough.build([str(write(tmp_path, *blocks))]), "html"))
    page, _ = open_page(browser, out)
    assert page.locator("#ex-9 ~ pre.listing").is_hidden()  # folded on screen
    page.emulate_media(media="print")
    assert page.locator("#ex-9 ~ pre.listing").is_visible()
    assert page.locator("#ex-40 ~ pre.listing").is_hidden() and page.locator("details:has(#ex-40) summary").is_visible()
    assert page.locator("details:has(#ex-1)").is_hidden()
    assert page.eval_on_selector(".figure", "f => getComputedStyle(f).overflowX") == "visible"
    assert page.eval_on_selector(".figure svg", "s => s.getBoundingClientRect().width") <= page.evaluate(
        "document.body.clientWidth")  # the diagram fits the printed page instead of pushing past it
    page.close()


# -- Markdown ---------------------------------------------------------------------------------------------


def _outside_code(markdown: str) -> str:
    """The Markdown with fenced blocks and code spans removed, as CommonMark delimits them."""
    text = re.sub(r"^(`{3,}).*?^\1\s*$", "", markdown, flags=re.S | re.M)
    out, pos = [], 0
    for match in re.finditer(r"(?<!\\)`+", text):
        if match.start() < pos:
            continue
        run = match.group(0)
        closing = re.compile(r"(?<!`)" + run + r"(?!`)").search(text, match.end())
        if closing is None:
            continue
        out.append(text[pos:match.start()])
        pos = closing.end()
    out.append(text[pos:])
    return "".join(out)


def test_backticks_from_a_capture_stay_inside_code(tmp_path):
    evil = "a`b`<img src=x onerror=alert(1)>``c"
    hostile = card(supportedInterfaces=[{"url": f"http://{evil}/rpc", "protocolBinding": "JSONRPC",
                                         "protocolVersion": "1.0"}])
    title = block(2, "ok", http_request("GET", "/x", [], host=f"h`<b>{evil}</b>`:80"),
                  http_response(200, "{}"))
    path = write(tmp_path, fetch_card(1, hostile), title, name="evil.http")
    text = render.render(walkthrough.build([str(path)]), "md")
    outside = _outside_code(text)
    outside = re.sub(r'<a id="[a-z0-9-]+"></a>', "", outside)
    assert re.findall(r"(?<!\\)<[A-Za-z/]", outside) == []
    assert "onerror" not in outside


def test_markdown_has_a_mermaid_diagram_and_a_text_timeline(kit, tmp_path):
    out = tmp_path / "r.md"
    assert run("report", str(kit / "05-streaming.http"), "-o", str(out)).returncode == 0
    text = out.read_text()
    assert "```mermaid\nsequenceDiagram\n" in text
    assert "client->>agent1: 1 SendStreamingMessage: run the tests" in text
    assert ("728ba084 at localhost:41241: submitted (Exchange 1 +0.00 s) → working (Exchange 1 +0.25 s) → "
            "completed (Exchange 1 +0.50 s)") in text  # the kit has no times of its own: its statuses'


def test_a_finding_quote_keeps_its_line_breaks():
    from a2a_capture.report.render import _quote

    assert _quote("first <b>\nsecond") == "first \\<b\\>\n> second"


# -- credentials -------------------------------------------------------------------------------------


@pytest.mark.parametrize("kind", ["html", "md", "summary", "listings"])
def test_reports_of_kit_07_and_15_hold_no_token(kit, tmp_path, kind):
    files = [kit / "07-auth-required.http", kit / "15-push.http"]
    out = tmp_path / ("r.html" if kind == "html" else "r.md")
    extra = {"summary": ["--summary"], "listings": ["--listings"]}.get(kind, [])
    assert run("report", *map(str, files), "-o", str(out), *extra).returncode == 0
    text = out.read_text()
    for secret in ("dpl_test_7c1e4b", "hook_secret_91d2", "planner-run-0006"):
        assert secret not in text
    if kind in ("html", "md", "listings"):
        assert "[redacted: bearer credentials, sha256:" in text
    shown = tmp_path / "shown.md"
    assert run("report", *map(str, files), "-o", str(shown), "--show-secrets").returncode == 0
    assert "dpl_test_7c1e4b" in shown.read_text()


# -- verdict, baseline, long sessions ----------------------------------------------------------------


def test_the_verdict_comes_first_and_names_the_worst(browser, tmp_path):
    out = html_report(tmp_path, *CAPTURES)
    page, _ = open_page(browser, out)
    first_section = page.locator("main > section").first
    assert first_section.get_attribute("id") == "verdict"
    from a2a_capture.analyze.engine import analyze

    summary = analyze(CAPTURES).summary  # round trips as the summary counts them, an exchange once
    assert page.locator("#verdict .headline").inner_text().startswith(
        f"{summary.findings} findings on {summary.flagged_round_trips} exchanges: {summary.wasted_round_trips} wasted")
    worst = page.locator("#verdict .worst a")
    assert re.fullmatch(r"\d\d-[a-z-]+ #\d+", worst.inner_text())
    costliest = max((f for f in analyze(CAPTURES).findings if f.wasted), key=lambda f: f.cost or 0.0)
    assert page.locator("#verdict .worst code").first.inner_text() == costliest.rule  # by seconds, not severity
    assert page.locator("#verdict .worst .badge").inner_text() == costliest.severity.value
    assert page.locator("header .files").inner_text().startswith("9 files under captures")
    box = first_section.bounding_box()
    assert box["y"] < 300  # on the first screen
    page.close()


def test_baseline_marks_what_it_has_not_accepted(tmp_path):
    from a2a_capture.analyze.engine import analyze
    from a2a_capture.replay import baseline

    files = CAPTURES
    findings = analyze(files).findings
    accepted_path = tmp_path / "baseline.json"
    baseline.dump([f for f in findings if f.rule != "auth-missing"], str(accepted_path))
    out = tmp_path / "r.md"
    result = run("report", *files, "-o", str(out), "--baseline", str(accepted_path))
    assert result.returncode == 0, result.stderr
    text = out.read_text()
    assert "1 not accepted by the baseline" in text
    findings_part = text[text.index("## Findings"):]
    assert findings_part.index("`auth-missing`") < findings_part.index("`card-refetch`")  # new first
    assert "**new**" in findings_part


def _long_session(tmp_path, count=2000):
    """A generated session of ``count`` exchanges, each with one finding (a poll of an ended task)."""
    done = {"id": "t-1", "contextId": "c", "status": {"state": "TASK_STATE_COMPLETED"}}
    blocks = [fetch_card(1), rpc(2, "SendMessage", {"message": message()}, result={"task": done})]
    blocks += [rpc(n, "GetTask", {"id": "t-1"}, result=done) for n in range(3, count + 1)]
    return write(tmp_path, *blocks, name="long.http")


def test_a_long_session_is_a_dense_index_with_findings_by_rule(browser, tmp_path):
    path = _long_session(tmp_path)
    out = tmp_path / "long.html"
    result = run("report", str(path), "-o", str(out))
    assert result.returncode == 0, result.stderr
    page = browser.new_page(viewport={"width": 1400, "height": 1000})
    page.goto(out.as_uri())
    assert page.locator("details.exchange").count() == 2000
    assert page.evaluate("document.documentElement.scrollHeight") < 60_000
    groups = page.locator("#findings .rule-group")
    assert groups.count() >= 1 and page.locator("#findings .rule-group > ol > li").count() <= 3 * groups.count()
    page.close()
    summary = tmp_path / "s.md"
    assert run("report", str(path), "--summary", "-o", str(summary)).returncode == 0
    assert len(summary.read_bytes()) < 64 * 1024
    flagged = tmp_path / "f.html"
    assert run("report", str(path), "--only-flagged", "-o", str(flagged)).returncode == 0
    listed = flagged.read_text()
    assert 'id="ex-1"' not in listed and 'id="ex-2"' not in listed and 'id="ex-2000"' in listed


def test_listings_are_the_manuals_blocks(kit, tmp_path):
    out = tmp_path / "l.md"
    assert run("report", str(kit / "11-errors.http"), "--listings", "-o", str(out)).returncode == 0
    text = out.read_text()
    blocks = re.findall(r"```listing\ntitle: (.*)\nsource: (.*)\nlang: http\nnote: (.*)\n---\n### ", text)
    assert len(blocks) == len(read_capture(kit / "11-errors.http").exchanges)
    assert all(source.endswith("11-errors.http") and note.startswith("Exchange ") for _, source, note in blocks)


def test_masking_is_the_same_for_the_same_captures(kit):
    files = [str(kit / "07-auth-required.http")]
    first, second = (render.render(walkthrough.build(files), "md") for _ in range(2))
    assert first == second and "[redacted: bearer credentials, sha256:" in first


@pytest.mark.parametrize("compact", [False, True])
def test_a_ten_megabyte_part_renders_within_ten_times_its_size(tmp_path, compact):
    import base64
    import json
    import tracemalloc

    part = {"raw": base64.b64encode(b"\x00\x01\x02" * 2_500_000).decode(), "mediaType": "application/octet-stream"}
    params = {"message": message(parts=[{"text": "here"}, part])}
    body = {"jsonrpc": "2.0", "id": 2, "method": "SendMessage", "params": params}
    text = json.dumps(body, separators=(",", ":")) if compact else json.dumps(body, indent=2)
    send = block(2, "SendMessage", http_request("POST", "/a2a/jsonrpc", ["Content-Type: application/json",
                                                                         "A2A-Version: 1.0"], text),
                 http_response(200, {"jsonrpc": "2.0", "id": 2, "result": {"message": message("ok")}}))
    path = write(tmp_path, fetch_card(1), send)
    size = path.stat().st_size
    assert size > 10_000_000
    tracemalloc.start()
    try:
        model = walkthrough.build([str(path)])
        html = render.render(model, "html")
        render.render(model, "md")
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 10 * size, peak / size
    assert "cut after" in html  # the long value is cut inside its line, and the note says by how much


def test_convert_from_har_masks_credentials_unless_asked(kit, tmp_path):
    from a2a_capture.capture import read_capture as read
    from a2a_capture.convert import capture_to_har

    har = tmp_path / "browser.har"
    har.write_bytes(capture_to_har(read(kit / "15-push.http")))
    out, shown = tmp_path / "out.http", tmp_path / "shown.http"
    assert run("convert", str(har), "-o", str(out)).returncode == 0
    text = out.read_text()
    assert "hook_secret_91d2" not in text and "planner-run-0006" not in text
    assert "[redacted: bearer credentials, sha256:" in text and "#@ redacted: header Authorization" in text
    assert read(out).exchanges  # reads back
    assert run("convert", str(har), "-o", str(shown), "--show-secrets").returncode == 0
    assert "hook_secret_91d2" in shown.read_text()


def _luminance(rgb) -> float:
    def channel(value: float) -> float:
        value /= 255
        return value / 12.92 if value <= 0.03928 else ((value + 0.055) / 1.055) ** 2.4
    r, g, b = (channel(v) for v in rgb)
    return 0.2126 * r + 0.7152 * g + 0.0722 * b


def _contrast(one, two) -> float:
    high, low = sorted((_luminance(one), _luminance(two)), reverse=True)
    return (high + 0.05) / (low + 0.05)


def _rgb(css: str):
    return tuple(int(v) for v in re.findall(r"\d+", css)[:3])


def test_badges_and_state_letters_meet_wcag_aa(browser, tmp_path):
    from a2a_capture.report.svg import STATE_COLOURS

    for colour in STATE_COLOURS.values():  # white letters on each state's bar
        assert _contrast((255, 255, 255), tuple(int(colour[i:i + 2], 16) for i in (1, 3, 5))) >= 4.5, colour
    out = html_report(tmp_path, *CAPTURES)
    page, _ = open_page(browser, out)
    for scheme in ("light", "dark"):
        page.emulate_media(color_scheme=scheme)
        pairs = page.eval_on_selector_all(".badge", """bs => bs.slice(0, 200).map(b => {
            const s = getComputedStyle(b); return [s.color, s.backgroundColor]; })""")
        assert pairs
        for colour, background in pairs:
            assert _contrast(_rgb(colour), _rgb(background)) >= 4.5, (scheme, colour, background)
    page.close()


def test_exchanges_are_headings_and_the_diagrams_can_be_skipped(browser, tmp_path):
    out = html_report(tmp_path, *CAPTURES)
    page, _ = open_page(browser, out)
    assert page.locator("details.exchange summary h3").count() == 46
    assert page.locator("#sequence a.skip-figure[href='#tasks']").count() == 1
    links = page.locator("svg.sequence a[aria-label]")
    assert links.count() == 38 and links.first.get_attribute("aria-label").startswith("01-discovery #1: ")
    page.keyboard.press("Tab")
    assert page.evaluate("document.activeElement.className") == "skip"
    page.close()


def test_one_line_json_is_laid_out_and_recorder_notes_join_the_note():
    exchanges = read_capture(ROOT / "captures" / "09-mistakes.http").exchanges
    text, note = listing(exchanges[7], layout=True)
    assert '{"error": {"code": -32003, "message": "Push notifications are not supported by the agent",' in text.lines
    assert "laid out here for reading" in note
    card, note = listing(read_capture(ROOT / "captures" / "01-discovery.http").exchanges[0], layout=True)
    assert "# a2a-capture rewrote" not in card.text
    assert "The recorder rewrote the card's interface http://127.0.0.1:41241/a2a/jsonrpc" in note
    verbatim, note = listing(exchanges[7])  # documentation listings keep the capture's own lines
    assert "laid out" not in note and '{…"error":{"code":-32003' in verbatim.text
