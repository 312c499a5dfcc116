"""The 19 kit captures: every one parses as the manual shows it and round-trips byte for byte."""

from __future__ import annotations

import json

import pytest

from a2a_capture.capture import capture_bytes, read_capture

# file -> (exchanges, webhooks, SSE frames per exchange number, frames shown after another block)
EXPECTED = {
    "01-agent-cards.http": (3, 0, {}),
    "02-message-reply.http": (1, 0, {}),
    "03-blocking-task.http": (1, 0, {}),
    "04-polling.http": (3, 0, {}),
    "05-streaming.http": (1, 0, {1: 9}),
    "06-input-required.http": (2, 0, {}),
    "07-auth-required.http": (2, 0, {1: 6}),
    "08-rejected.http": (1, 0, {}),
    "09-failed.http": (1, 0, {}),
    "10-cancel.http": (4, 0, {}),
    "11-errors.http": (7, 0, {}),
    "12-list-tasks.http": (3, 0, {}),
    "13-history.http": (2, 0, {}),
    "14-resubscribe.http": (3, 0, {1: 4, 2: 6}),
    "15-push.http": (4, 8, {}),
    "16-rest-binding.http": (4, 0, {}),
    "18-extended-card.http": (2, 0, {}),
    "19-planner.http": (9, 0, {8: 4}),
}


def test_every_kit_capture_is_listed(kit):
    assert sorted(path.name for path in kit.glob("*.http")) == sorted(EXPECTED)


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_kit_capture_parses(kit, name):
    exchanges, webhooks, streams = EXPECTED[name]
    capture = read_capture(kit / name)
    assert sum(not e.webhook for e in capture.exchanges) == exchanges
    assert sum(e.webhook for e in capture.exchanges) == webhooks
    for exchange in capture.exchanges:
        if exchange.webhook:
            assert exchange.response is None
            continue
        assert exchange.response is not None, exchange.label
        assert not exchange.cut
        expected = streams.get(exchange.number, 0)
        assert len(capture.stream_events(exchange.number)) == expected, exchange.label


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_kit_capture_round_trips_byte_for_byte(kit, name):
    data = (kit / name).read_bytes()
    assert capture_bytes(read_capture(kit / name)) == data


@pytest.mark.parametrize("stem", ["05-streaming", "07-auth-required", "14-resubscribe", "19-planner"])
def test_stream_frames_match_the_kit_event_files(kit, stem):
    """The kit's .events.json lists each stream's frames; ours must be the same JSON."""
    capture = read_capture(kit / f"{stem}.http")
    for stream in json.loads((kit / f"{stem}.events.json").read_text()):
        events = capture.stream_events(stream["exchange"])
        assert [json.loads(event.data) for event in events] == stream["events"]


def test_notes_land_where_the_kit_put_them(kit):
    resubscribe = read_capture(kit / "14-resubscribe.http")
    assert resubscribe.exchanges[0].trailing_notes == ["the client closes the connection after 4 events"]
    auth = read_capture(kit / "07-auth-required.http")
    approve = auth.exchanges[1]
    assert approve.late_stream == 1
    assert approve.late_event_notes == {0: ["The same stream continues."]}
    assert auth.exchanges[0].trailing_notes == [
        "The stream stays open. An operator opens the approval link, outside A2A."
    ]
    planner = read_capture(kit / "19-planner.http")
    assert planner.exchanges[7].trailing_notes == ["The operator approves the deploy, outside A2A."]
    assert planner.exchanges[8].late_stream == 8


def test_bodies_are_exact_bytes(kit):
    errors = read_capture(kit / "11-errors.http")
    malformed = errors.exchanges[6]
    assert malformed.request.body == b'{"jsonrpc": "2.0", "method": '
    card = read_capture(kit / "01-agent-cards.http").exchanges[0]
    assert card.request.body == b""
    assert json.loads(card.response.body)["name"] == "test-runner"
    assert card.request.headers == [("Host", "localhost:41241"), ("Accept", "application/json")]
    webhook = read_capture(kit / "15-push.http").exchanges[4]
    assert webhook.webhook and webhook.label == "webhook 1"
    assert webhook.request.header("authorization") == "Bearer hook_secret_91d2"


@pytest.mark.parametrize("chunk_size", [1, 2, 3, 7, 64, 4096])
def test_reading_in_small_chunks_gives_the_same_capture(kit, monkeypatch, chunk_size):
    """Every place where a chunk can end is a place the reader must not trip."""
    from a2a_capture.capture.source import Source
    from tests.conftest import DATA

    paths = [kit / "07-auth-required.http", kit / "19-planner.http", kit / "14-resubscribe.http",
             DATA / "sample-session.http"]
    whole = [read_capture(path) for path in paths]
    monkeypatch.setattr(Source, "chunk_size", chunk_size)
    assert [read_capture(path) for path in paths] == whole
