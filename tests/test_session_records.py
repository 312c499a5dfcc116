"""What the session records of a call reads the call as the call's own properties say (``Seen.ok``
as ``Call.ok``, the A2A kinds as ``Call.is_a2a``), on the kit, the example captures, both bench
sessions and odd answers."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from a2a_capture.a2a.decode import A2A_KINDS, decode
from a2a_capture.analyze.session import Session, _fetch_url, card_url, seen, view_of
from a2a_capture.sources import exchanges
from tests.builders import block, http_request, http_response, write

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))


def _calls(paths):
    for path in paths:
        for exchange in exchanges(str(path)):
            yield decode(exchange, str(path))


def _read_alike(paths) -> set:
    kinds, oks = set(), set()
    session = Session()
    for call in _calls(paths):
        record = seen(call)
        session.apply(call)  # its own record, made without seen's frame, is seen's
        if call.kind in A2A_KINDS:
            assert session.last_a2a_calls[call.agent].call == record
        if call.kind == "card" and call.card is not None and call.agent:  # a card held: by this fetch
            assert session.card_urls[card_url(call)].fetch == record
        for held in session.card_urls.values():  # where each held card came from, as agent_key names its agent
            assert held.url == _fetch_url(held.fetch, held.extended)
        assert record.ok is call.ok
        assert record.answered is (call.status is not None)
        assert record.label == call.label  # made of its number, as the exchange names itself
        assert (call.kind in A2A_KINDS) is call.is_a2a
        assert record.view == (view_of(call) if call.operation == "GetTask" else None)
        kinds.add(call.kind)
        oks.add(record.ok)
    return kinds | {("ok", ok) for ok in oks}


@pytest.mark.kit
def test_the_kit_is_recorded_as_its_calls_say(kit):
    told = _read_alike(sorted(kit.glob("*.http")))
    assert {"card", "jsonrpc", ("ok", True), ("ok", False)} <= told


def test_the_example_captures_are_recorded_as_their_calls_say():
    told = _read_alike(sorted([*(ROOT / "captures").glob("*.http"), *(ROOT / "tests" / "data").glob("*.http")]))
    assert {"card", "jsonrpc", "rest", ("ok", True), ("ok", False)} <= told


@pytest.mark.parametrize("shape", ["new", "recurring"])
def test_bench_sessions_are_recorded_as_their_calls_say(tmp_path, shape):
    from analyze import generate  # bench/analyze.py's sessions

    path = tmp_path / f"{shape}.http"
    generate(shape, path, tmp_path / "index", 200_000, seed=5)
    assert "jsonrpc" in _read_alike([path])


@pytest.mark.parametrize("status", [200, 204, 299, 300, 301, 304, 404, 500])
def test_each_status_is_ok_as_the_call_says(tmp_path, status):
    path = write(tmp_path, block(1, "discover", http_request("GET", "/.well-known/agent-card.json", []),
                                 http_response(status, {} if status not in (204, 304) else None)))
    assert _read_alike([path])


