"""A report streams: it reads and analyzes the captures once for its overview (verdict, findings,
figures) and once more as it writes the walkthrough, each exchange decoded once a pass and laid
out from the facts the analysis gave; nothing else decodes it."""

from __future__ import annotations

import sys
from collections import Counter

import pytest

from a2a_capture.a2a import decode as decoding
from a2a_capture.analyze.engine import Analysis, analyze
from a2a_capture.batch.analysis import analyze_session
from a2a_capture.capture import read_capture
from tests.cli import run
from tests.conftest import ROOT

#: every shape a report lays out: cards, blocking calls, SSE streams, late frames, webhooks, errors
CAPTURES = sorted(str(path) for path in (ROOT / "captures").glob("*.http"))


@pytest.fixture
def decodes(monkeypatch) -> Counter:
    """Every call of the decoder, by (file, exchange), wherever a module holds the function."""
    original, seen = decoding.decode, Counter()

    def counting(exchange, file="", cards=None):
        seen[(file, exchange.label)] += 1
        return original(exchange, file, cards)

    for module in list(sys.modules.values()):
        if getattr(module, "decode", None) is original:
            monkeypatch.setattr(module, "decode", counting)
    return seen


@pytest.mark.parametrize(("suffix", "options", "passes"), [("md", [], 2), ("html", [], 2), ("md", ["--summary"], 1)])
def test_a_report_decodes_each_exchange_once_a_pass(decodes, tmp_path, suffix, options, passes):
    result = run("report", *CAPTURES, *options, "-o", str(tmp_path / f"report.{suffix}"))
    assert result.returncode == 0, result.stderr
    exchanges = {(file, exchange.label) for file in CAPTURES for exchange in read_capture(file).exchanges}
    assert set(decodes) == exchanges
    assert set(decodes.values()) == {passes}  # a summary lists no exchange: no second pass


def test_the_facts_come_back_whole_from_a_worker():
    """--each-file analyzes in other processes: the facts travel as plain data and come back equal."""
    files = [str(ROOT / "captures" / "07-push-webhook.http"), str(ROOT / "captures" / "03-streaming.http")]
    here = analyze(files, facts=True)
    there = Analysis.model_validate(analyze_session(files, None, True))
    assert here.exchanges and there.exchanges == here.exchanges
    assert any(facts.card for facts in here.exchanges)
    assert any(at is not None for facts in here.exchanges for _, _, at in facts.states)
