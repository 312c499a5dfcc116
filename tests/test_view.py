"""`a2a-capture view` and `record --view`: the page, its API and its safety, in real Chromium.

The view is served by the command itself (a subprocess); the page is opened in headless Chromium
(Playwright); the live test records a real a2a-sdk client talking to a real a2a-sdk agent through
a real mitmdump, and watches the exchanges and findings arrive in the page without a reload.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import httpx
import pytest

from a2a_capture.analyze.engine import analyze
from tests.live import ROOT, agent, follow, free_port, wait_for_line, wait_for_port

CAPTURES = sorted(str(p) for p in (ROOT / "captures").glob("*.http"))
_URL = r"(http://127\.0\.0\.1:\d+)/\?token=([\w-]+)"


@contextlib.contextmanager
def command(*args: str):
    """The CLI as a user runs it; yields (base URL, token, stderr lines) once it printed its address."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    process = subprocess.Popen([sys.executable, "-m", "a2a_capture.cli", *args], stdout=subprocess.DEVNULL,
                               stderr=subprocess.PIPE, env=env, cwd=ROOT)
    lines = follow(process.stderr)
    try:
        found = wait_for_line(lines, _URL)
        yield found.group(1), found.group(2), lines
    finally:
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            process.kill()


@contextlib.contextmanager
def view(*files: str, extra: tuple[str, ...] = ()):
    with command("view", *files, "--listen", "127.0.0.1:0", *extra) as (base, token, _):
        yield base, token


def _get(base: str, path: str, token: str | None, **headers) -> httpx.Response:
    if token is not None:
        headers["X-View-Token"] = token
    return httpx.get(base + path, headers=headers, timeout=10, trust_env=False)


def _rows(base: str, token: str) -> dict:
    deadline = time.monotonic() + 30
    while True:
        page = _get(base, "/api/rows", token).json()
        if page["done"] or time.monotonic() > deadline:
            return page
        time.sleep(0.1)


# -- the API ------------------------------------------------------------------------------------


def test_the_view_answers_only_with_its_token_and_on_a_loopback_host():
    with view(CAPTURES[0]) as (base, token):
        assert _get(base, "/api/meta", None).status_code == 403
        assert _get(base, "/api/meta", "x" * len(token)).status_code == 403
        assert _get(base, "/", None).status_code == 403
        assert httpx.get(f"{base}/?token={token}", trust_env=False).status_code == 200
        answer = _get(base, "/api/meta", token)
        assert answer.status_code == 200
        assert "script-src 'self'" in answer.headers["content-security-policy"]
        assert answer.headers["referrer-policy"] == "no-referrer"
        # DNS rebinding: a page of another site whose name resolves to 127.0.0.1 sends its own Host
        assert _get(base, "/api/meta", token, Host="attacker.example:80").status_code == 403


def test_a_view_on_a_non_loopback_address_is_refused_in_one_line():
    done = subprocess.run([sys.executable, "-m", "a2a_capture.cli", "view", CAPTURES[0], "--listen", "0.0.0.0:0"],
                          capture_output=True, text=True, cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)},
                          timeout=60)
    assert done.returncode == 2
    assert done.stderr.count("\n") == 1 and "not a loopback address" in done.stderr


def test_every_exchange_and_finding_of_the_analysis_is_in_the_rows():
    analysis = analyze(CAPTURES)
    with view(*CAPTURES) as (base, token):
        page = _rows(base, token)
        columns = _get(base, "/api/meta", token).json()["columns"]
    rows = [dict(zip(columns, row, strict=True)) for row in page["rows"]]
    assert len(rows) == page["total"] == sum(1 for _ in _exchanges(CAPTURES))
    shown = sorted((CAPTURES[r["file"]], r["label"], f[0], f[2]) for r in rows for f in r["findings"])
    assert shown == sorted((f.file, f.exchange, f.rule, f.outcome) for f in analysis.findings)
    wasted_rows = sum(1 for r in rows if any(f[2] == "wasted" for f in r["findings"]))
    assert wasted_rows == analysis.summary.wasted_round_trips


def _exchanges(files):
    from a2a_capture.sources import exchanges

    for file in files:
        yield from exchanges(file)


def test_the_detail_is_the_reports_listing_masked_with_the_card_held_and_the_answering_exchange(tmp_path):
    polling = str(ROOT / "captures" / "04-polling.http")
    with view(polling) as (base, token):
        page = _rows(base, token)
        columns = _get(base, "/api/meta", token).json()["columns"]
        rows = [dict(zip(columns, row, strict=True)) for row in page["rows"]]
        poll = next(r for r in rows if r["operation"] == "GetTask" and r["findings"])
        detail = _get(base, f"/api/exchange/{poll['index']}", token).json()
        whole = _get(base, f"/api/exchange/{poll['index']}?whole=1", token).json()
    from a2a_capture.capture import read_capture
    from a2a_capture.report.excerpt import listing

    exchange = next(e for e in read_capture(polling).exchanges if e.label == poll["label"])
    assert whole["listing"] == listing(exchange, whole=True, layout=True)[0].text  # the report's own renderer
    assert detail["listing"].startswith(f"### {poll['label']} · ")
    assert detail["card"]["name"] == "test-runner" and detail["card"]["streaming"] is True
    related = detail["row"]["findings"][0]["related"]
    assert related and all(label in detail["related"] for label in related)


def test_secrets_of_a_no_redact_capture_stay_masked_unless_asked(tmp_path):
    secret = "sk-live-4f9a2b7c1d3e5f60718293a4b5c6d7e8"
    capture = tmp_path / "secret.http"
    body = '{"jsonrpc":"2.0","id":1,"method":"GetTask","params":{"id":"t-1"}}'
    capture.write_text(
        f"### 1 · GetTask\nPOST /a2a/jsonrpc?api_key={secret} HTTP/1.1\nHost: 127.0.0.1:41241\n"
        f"Authorization: Bearer {secret}\nContent-Type: application/json\nA2A-Version: 1.0\n\n{body}\n\n"
        'HTTP/1.1 200 OK\nContent-Type: application/json\n\n{"jsonrpc":"2.0","id":1,"result":{"id":"t-1",'
        '"contextId":"c-1","status":{"state":"TASK_STATE_WORKING"}}}\n')
    with view(str(capture)) as (base, token):
        _rows(base, token)
        masked = _get(base, "/api/exchange/0?whole=1", token).text + _get(base, "/api/rows", token).text
        assert _get(base, f"/api/search?q={secret}", token).json()["rows"] == []  # no oracle for a secret
    assert secret not in masked and "redacted" in masked
    with view(str(capture), extra=("--no-redact",)) as (base, token):
        _rows(base, token)
        assert secret in _get(base, "/api/exchange/0?whole=1", token).text


# -- the page, in Chromium ----------------------------------------------------------------------


def _open(browser, url: str, width: int = 1400, scheme: str = "light"):
    page = browser.new_page(viewport={"width": width, "height": 900}, color_scheme=scheme)
    page.requests = []  # type: ignore[attr-defined]
    page.problems = []  # type: ignore[attr-defined]
    page.on("request", lambda request: page.requests.append(request.url))
    page.on("pageerror", lambda error: page.problems.append(str(error)))
    page.on("console", lambda message: page.problems.append(message.text) if message.type == "error" else None)
    page.goto(url)
    page.wait_for_selector("#spacer .row")
    return page


def test_the_page_lists_filters_and_moves_by_keyboard(browser):
    analysis = analyze(CAPTURES)
    with view(*CAPTURES) as (base, token):
        page = _open(browser, f"{base}/?token={token}")
        page.wait_for_function("() => document.querySelector('#summary').textContent.startsWith('46 exchanges')")
        summary = page.text_content("#summary")
        assert f"{analysis.summary.wasted_round_trips} wasted round trips" in summary
        page.select_option("#f-outcome", "wasted")
        page.wait_for_function("() => !document.querySelector('#summary').textContent.startsWith('46 exchanges:')")
        assert page.text_content("#summary").startswith(f"{analysis.summary.wasted_round_trips} exchanges")
        assert "outcome=wasted" in page.url  # the address keeps the filter
        shared = page.url
        page.keyboard.press("j")
        page.keyboard.press("j")
        page.keyboard.press("k")
        page.keyboard.press("Enter")
        page.wait_for_selector("#d-listing:not(:empty)")
        first_wasted = page.eval_on_selector("#spacer .row.sel", "n => n.dataset.index")
        assert page.text_content("#d-findings").count("wasted ·") >= 1
        page.keyboard.press("Escape")
        assert "open" not in (page.get_attribute("#side", "class") or "")
        page.select_option("#f-outcome", "")
        page.focus("#list")
        page.keyboard.press("/")
        assert page.evaluate("document.activeElement.id") == "f-q"
        page.keyboard.type("input_required")  # in bodies only: the server's search over the blocks
        expected = sum(1 for e in _exchanges(CAPTURES) if b"input_required" in
                       (e.request.body + (e.response.body if e.response else b"") + e.late_body).lower())
        page.wait_for_function(f"() => document.querySelector('#summary').textContent.startsWith('{expected} exch')")
        assert expected > 0
        page.click("#g-sequence")
        page.wait_for_selector("#figure svg.sequence")
        # the shared address opens the same filter, and the same selected exchange
        again = _open(browser, shared)
        again.wait_for_function("() => document.querySelector('#f-outcome').value === 'wasted'")
        assert again.text_content("#summary").startswith(f"{analysis.summary.wasted_round_trips} exchanges")
        assert first_wasted is not None
        for opened in (page, again):
            assert not opened.problems, opened.problems
            assert all(url.startswith(base) for url in opened.requests), opened.requests  # nothing leaves


def test_the_pages_counts_are_the_summarys_and_a_failed_call_never_worked(browser, tmp_path):
    """The page's own count of round trips (it counts the rows it shows) says what the summary says, on
    a session of several findings an exchange where a lenient call then failed for another reason."""
    from tests.test_counts import several_findings_an_exchange

    path = str(several_findings_an_exchange(tmp_path))
    analysis = analyze([path])
    summary, failed = analysis.summary, sum(call.error is not None for call in analysis.calls)
    with view(path) as (base, token):
        page = _open(browser, f"{base}/?token={token}")
        page.wait_for_function("() => document.querySelector('#summary').textContent.includes(' findings')")
        said = page.text_content("#summary")
    assert said == (f"{summary.exchanges} exchanges: {summary.wasted_round_trips} wasted round trips, "
                    f"{summary.fragile_round_trips} that worked only because the agent was lenient, "
                    f"{failed} failed calls, {summary.findings} findings"), said
    assert not page.problems, page.problems


def test_the_page_works_at_phone_width_in_dark_mode(browser):
    with view(*CAPTURES) as (base, token):
        page = _open(browser, f"{base}/?token={token}", width=390, scheme="dark")
        # every exchange in: rows drawn while the captures are still read are drawn again
        exchanges = analyze(CAPTURES).summary.exchanges
        page.wait_for_function(
            f"() => document.querySelector('#summary').textContent.startsWith('{exchanges} exchanges')")
        assert page.evaluate("document.documentElement.scrollWidth") <= 390
        row = page.locator("#spacer .row").first
        row.wait_for(state="visible")
        box = row.bounding_box()
        assert box is not None and box["width"] <= 390
        for part in (".c-op", ".c-status", ".c-badges", ".c-agent"):
            inner = row.locator(part).bounding_box()
            assert inner is not None and inner["x"] + inner["width"] <= 390 + 1, part
        background = page.evaluate("getComputedStyle(document.body).backgroundColor")
        assert background == "rgb(13, 17, 23)"  # dark
        row.click()
        page.wait_for_selector("#d-listing:not(:empty)")
        assert page.locator("#side").bounding_box()["width"] <= 390
        page.click("#d-close")
        assert not page.problems, page.problems


def test_nothing_from_a_hostile_capture_runs_as_script(browser, tmp_path):
    hostile = tmp_path / "hostile.http"
    payload = '<img src=x onerror="window.pwned=1"><script>window.pwned=2</script>'
    hostile.write_text(
        f"### 1 · {payload}\nGET /.well-known/agent-card.json HTTP/1.1\nHost: 127.0.0.1:41241\n\n"
        'HTTP/1.1 200 OK\nContent-Type: application/json\n\n'
        '{"name": "<svg onload=window.pwned=3>", "supportedInterfaces": [{"url": "http://127.0.0.1:41241/a2a",'
        ' "protocolBinding": "JSONRPC", "protocolVersion": "1.0"}], "capabilities": {}}\n')
    with view(str(hostile)) as (base, token):
        page = _open(browser, f"{base}/?token={token}")
        page.click("#spacer .row")
        page.wait_for_selector("#d-listing:not(:empty)")
        page.click("#g-sequence")
        page.wait_for_selector("#figure svg")
        page.wait_for_timeout(300)
        assert page.evaluate("window.pwned") is None
        assert payload in page.text_content("#d-listing")  # shown, as text
        assert page.locator("#figure img, #figure script, #detail-pane img").count() == 0


# -- live ---------------------------------------------------------------------------------------


@pytest.mark.live
def test_record_view_shows_each_exchange_and_finding_live(browser, tmp_path):
    from a2a.client import ClientConfig, create_client

    from tests.test_analyze_live import send

    output, listen = tmp_path / "live.http", free_port()
    with agent("test-runner", streaming=False, push=False) as upstream, \
            command("record", "--agent", upstream, "--listen", f"127.0.0.1:{listen}", "-o", str(output),
                    "--view", "127.0.0.1:0") as (base, token, _):
        wait_for_port(listen)
        page = _open_empty(browser, f"{base}/?token={token}")
        rpc_base = f"http://127.0.0.1:{listen}"

        async def client(again: bool) -> None:
            async with httpx.AsyncClient(trust_env=False) as http:
                sdk = await create_client(rpc_base, ClientConfig(httpx_client=http))
                if again:
                    [_ async for _ in sdk.send_message(send("run", "m-1"))]

        _in_thread(client(again=False))
        page.wait_for_function("() => document.querySelectorAll('#spacer .row').length === 1", timeout=10_000)
        _in_thread(client(again=True))  # a second card fetch: card-refetch, wasted, and a SendMessage
        page.wait_for_function("() => document.querySelectorAll('#spacer .row').length === 3", timeout=10_000)
        page.wait_for_selector("#spacer .badge.wasted", timeout=10_000)
        assert "card-refetch" in page.text_content("#spacer")
        assert not page.problems and all(url.startswith(base) for url in page.requests)


def _in_thread(coroutine) -> None:
    """Run a client's coroutine to its end in a thread of its own (Playwright's loop holds this one)."""
    problems: list[BaseException] = []

    def run() -> None:
        try:
            asyncio.run(coroutine)
        except BaseException as error:  # handed to the test
            problems.append(error)

    thread = threading.Thread(target=run)
    thread.start()
    thread.join(60)
    if problems:
        raise problems[0]


def _open_empty(browser, url: str):
    page = browser.new_page(viewport={"width": 1400, "height": 900})
    page.requests, page.problems = [], []  # type: ignore[attr-defined]
    page.on("request", lambda request: page.requests.append(request.url))
    page.on("pageerror", lambda error: page.problems.append(str(error)))
    page.goto(url)
    page.wait_for_function("() => document.querySelector('#summary').textContent.startsWith('0 exchanges')")
    return page


def test_rows_path_is_what_the_live_tail_reads(tmp_path):
    """The live tail and the file reader make the same rows of the same capture, appended in pieces."""
    from a2a_capture.view.ingest import Feeder, Tail, feed_files
    from a2a_capture.view.state import ViewState

    source = Path(CAPTURES[3]).read_bytes()
    whole = ViewState([CAPTURES[3]])
    feed_files(Feeder(whole))
    growing = tmp_path / "growing.http"
    growing.write_bytes(b"")
    state = ViewState([str(growing)])
    tail = Tail(Feeder(state))
    cut = source.index(b"\n### 6 ")
    for piece in (source[:cut + 1], source[cut + 1:]):
        with growing.open("ab") as stream:
            stream.write(piece)
        tail.poll(final=True)
    strip = [(r.label, r.operation, r.outcome, [(f.rule, f.outcome) for f in r.findings], r.line) for r in whole.rows]
    assert strip == [(r.label, r.operation, r.outcome, [(f.rule, f.outcome) for f in r.findings], r.line)
                     for r in state.rows]
    assert [whole.offsets[i] for i in range(len(whole.rows))] == [state.offsets[i] for i in range(len(state.rows))]
