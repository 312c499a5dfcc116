"""`tidy`: recordings made into documentation captures in the A2A 101 kit's style."""

from __future__ import annotations

import json
import re

import pytest

from a2a_capture.capture import read_capture
from a2a_capture.show import rows
from a2a_capture.tidy import KEPT_REQUEST, KEPT_RESPONSE
from tests.conftest import ROOT
from tests.test_cli_show import run

CAPTURES = ROOT / "captures"
UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")


def tidied(tmp_path, *files, extra=()):
    out = tmp_path / "tidy.http"
    result = run("tidy", *map(str, files), "-o", str(out), *extra)
    assert result.returncode == 0, result.stderr
    return out


@pytest.mark.parametrize("name", ["03-streaming.http", "07-push-webhook.http", "09-mistakes.http"])
def test_tidy_writes_the_kits_conventions_and_reads_back(tmp_path, name):
    source = CAPTURES / name
    out = tidied(tmp_path, source)
    text = out.read_text()
    assert "#@" not in text  # no recorder pragmas: the kit has none
    capture = read_capture(out)
    original = read_capture(source)
    # the same exchanges (a webhook may move after the call open when it came: see below)
    assert sorted(e.label for e in capture.exchanges) == sorted(e.label for e in original.exchanges)
    assert sorted(r.events for r in rows(out)) == sorted(r.events for r in rows(source))
    for exchange in capture.exchanges:
        assert exchange.title and exchange.meta.start is None
        assert {n for n, _ in exchange.request.headers} <= set(KEPT_REQUEST)
        for message in (exchange.request, exchange.response):
            if message is None or not message.body:
                continue
            if message.headers and dict(message.headers).get("Content-Type", "").startswith("text/event-stream"):
                frames = [line for line in message.body.decode().split("\n\n") if line.strip()]
                assert all(frame.startswith("data: ") and "\n" not in frame.strip() for frame in frames)
            elif "json" in (message.header("content-type") or ""):
                body = message.body.decode()
                assert body == json.dumps(json.loads(body), indent=2, ensure_ascii=False)  # laid out
        if exchange.response is not None:
            assert {n for n, _ in exchange.response.headers} <= set(KEPT_RESPONSE)


def test_tidy_notes_each_finding_and_titles_each_call(tmp_path):
    out = tidied(tmp_path, CAPTURES / "09-mistakes.http")
    capture = read_capture(out)
    notes = [note for e in capture.exchanges for note in e.trailing_notes]
    assert any(note.startswith("card-path: ") for note in notes)
    assert any(note.startswith("auth-missing: ") for note in notes)
    titles = [e.title for e in capture.exchanges]
    assert "SendMessage: run the unit tests" in titles and "discover test-runner" in titles
    assert any(title.startswith("SendMessage: VersionNotSupportedError") for title in titles)


def test_tidy_names_ids_short_and_stable(tmp_path):
    out = tidied(tmp_path, CAPTURES / "04-polling.http", extra=["--names"])
    capture = read_capture(out)
    bodies = "".join(e.response.body.decode() for e in capture.exchanges if e.response is not None)
    assert '"id": "task-1"' in bodies and '"contextId": "context-1"' in bodies
    tasks_and_contexts = re.findall(r'"(?:taskId|contextId)": "([^"]+)"', bodies)
    assert tasks_and_contexts and not any(UUID.fullmatch(value) for value in tasks_and_contexts)


def test_tidy_of_kit_07_keeps_the_stream_and_masks_the_token(kit, tmp_path):
    out = tidied(tmp_path, kit / "07-auth-required.http")
    text = out.read_text()
    assert "dpl_test_7c1e4b" not in text and "Authorization: Bearer [redacted: bearer credentials" in text
    assert [r.events for r in rows(out)] == [6, 0]
    assert "# The same stream continues." in text
    assert [e.title for e in read_capture(out).exchanges] == ["SendStreamingMessage: deploy to staging",
                                                              "operator approves"]


def test_the_documentation_examples_read_as_they_should():
    docs = ROOT / "docs"
    tidy_example = read_capture(docs / "example-tidy.http")
    assert tidy_example.exchanges and "#@" not in (docs / "example-tidy.http").read_text()
    assert len((docs / "example-summary.md").read_bytes()) < 64 * 1024
    listings = (docs / "example-listings.md").read_text()
    assert listings.count("```listing\ntitle: ") == listings.count("\nnote: Exchange ") > 0


def test_tidy_keeps_the_first_and_last_poll_of_a_run_and_says_how_many_were_left_out(tmp_path):
    source = CAPTURES / "04-polling.http"
    out = tidied(tmp_path, source)
    capture = read_capture(out)
    assert [e.title for e in capture.exchanges] == ["discover test-runner", "SendMessage: slow: run the full",
                                                    "GetTask: working", "GetTask: completed"]
    assert capture.exchanges[3].notes[0].startswith(
        "8 more GetTask calls on this task (exchanges 4 to 11 of the recording), answered as the one before, "
        "are left out here; tidy --repeats keeps them.")
    notes = [note for e in capture.exchanges for note in e.trailing_notes]
    assert any(note.startswith("poll-while-push-or-stream: ") for note in notes)  # exchange 4's, kept with the note
    assert out.stat().st_size < 8_000  # 23 KB with every poll
    every = read_capture(tidied(tmp_path, source, extra=["--repeats"]))
    assert len(every.exchanges) == 12 and not any("left out" in n for e in every.exchanges for n in e.notes)


def test_tidy_shows_the_agents_address_not_the_recorders(tmp_path):
    """04-polling was recorded through a listener on 51241 in front of the agent on 41241: the
    tidy capture names the agent, in each Host and in the card's interfaces."""
    text = tidied(tmp_path, CAPTURES / "04-polling.http").read_text()
    assert "51241" not in text and "Host: 127.0.0.1:41241" in text
    assert '"url": "http://127.0.0.1:41241/a2a/jsonrpc"' in text


def test_tidy_names_number_the_calls_and_leave_content_alone(tmp_path):
    capture = read_capture(tidied(tmp_path, CAPTURES / "04-polling.http", extra=["--names"]))
    ids = [json.loads(message.body)["id"] for e in capture.exchanges[1:]
           for message in (e.request, e.response)]
    assert ids == [1, 1, 2, 2, 3, 3]
    bodies = "".join(e.response.body.decode() for e in capture.exchanges)
    assert '"artifactId": "artifact-1"' in bodies and '"name": "log.txt"' in bodies


def test_tidy_puts_a_webhook_after_the_call_open_when_it_came(tmp_path):
    titles = [e.label for e in read_capture(tidied(tmp_path, CAPTURES / "07-push-webhook.http")).exchanges]
    assert titles[:3] == ["1", "2", "webhook 1"]


def test_tidy_findings_name_the_exchanges_by_their_numbers_here():
    """04-polling after 01-discovery: its exchanges 1-3 are 4-6 here, and the card-refetch finding's
    "exchange 1 of 01-discovery.http" is this capture's exchange 1."""
    from a2a_capture.tidy import tidy

    capture = tidy([str(CAPTURES / "01-discovery.http"), str(CAPTURES / "04-polling.http")])
    notes = {note.split(":")[0]: note for e in capture.exchanges for note in e.trailing_notes}
    assert "exchange 5 asked to return immediately" in notes["return-immediately-poll"]  # the recording's 2
    assert "polled again (exchange 6 before)" in notes["poll-while-push-or-stream"]  # the recording's 3
    assert "although exchange 1 gave ETag" in notes["card-refetch"]


def test_a_finding_naming_an_exchange_left_out_names_the_recordings():
    from a2a_capture.tidy import _renumbered_mentions

    labels = {("a.http", "2"): "2", ("a.http", "12"): "4", ("b.http", "1"): "5", ("a.http", "webhook 3"): "webhook 1"}
    said = _renumbered_mentions("after exchange 12, exchange 7 and exchange webhook 3; exchange 1 of b.http.",
                                "a.http", labels, {"a.http": "a.http", "b.http": "b.http"})
    assert said == ("after exchange 4, exchange 7 of the recording and exchange webhook 1; exchange 5.")


def test_tidy_gives_a_restored_card_the_agents_etag(tmp_path):
    """Since 49cdf96 the recorder gives a card it rewrote an ETag of its own and says the agent's in
    a note; tidy restores the card's URLs, and with them the agent's tag."""
    from a2a_capture.capture.notes import CARD_REWRITTEN, ETAG_DERIVED
    from a2a_capture.tidy import tidy
    from tests.builders import card, fetch_card, write

    served = card(supportedInterfaces=[{"url": "http://127.0.0.1:51999/rpc", "protocolBinding": "JSONRPC",
                                        "protocolVersion": "1.0"}])
    title, rest = fetch_card(1, served, response_headers=['ETag: W/"7f3e-a2a-1c2d"']).split("\n", 1)
    notes = [ETAG_DERIVED.format(new='W/"7f3e-a2a-1c2d"', old='W/"7f3e"'),
             CARD_REWRITTEN.format(old="http://127.0.0.1:41999/rpc", new="http://127.0.0.1:51999/rpc")]
    path = write(tmp_path, "\n".join([title, *(f"# {note}" for note in notes), rest]))
    response = tidy([str(path)]).exchanges[0].response
    assert response.header("etag") == 'W/"7f3e"' and b"127.0.0.1:41999/rpc" in response.body
