"""A report reuses the analysis: each exchange is decoded once, by the analyzer, and the report
lays it out from the facts the analysis kept."""

from __future__ import annotations

import sys
from collections import Counter

import pytest

from a2a_capture.a2a import decode as decoding
from a2a_capture.analyze.engine import Analysis, analyze
from a2a_capture.batch.analysis import analyze_session
from a2a_capture.capture import read_capture
from a2a_capture.report import walkthrough
from tests.cli import run
from tests.conftest import ROOT

#: every shape a report lays out: cards, blocking calls, SSE streams, late frames, webhooks, errors
CAPTURES = sorted(str(path) for path in (ROOT / "captures").glob("*.http"))


@pytest.fixture
def decodes(monkeypatch) -> Counter:
    """Every call of the decoder, by (file, exchange), wherever a module holds the function."""
    original, seen = decoding.decode, Counter()

    def counting(exchange, file=""):
        seen[(file, exchange.label)] += 1
        return original(exchange, file)

    for module in list(sys.modules.values()):
        if getattr(module, "decode", None) is original:
            monkeypatch.setattr(module, "decode", counting)
    return seen


@pytest.mark.parametrize("suffix", ["md", "html"])
def test_a_report_decodes_each_exchange_once(decodes, tmp_path, suffix):
    result = run("report", *CAPTURES, "-o", str(tmp_path / f"report.{suffix}"))
    assert result.returncode == 0, result.stderr
    exchanges = {(file, exchange.label) for file in CAPTURES for exchange in read_capture(file).exchanges}
    assert set(decodes) == exchanges
    assert set(decodes.values()) == {1}


def test_the_facts_come_back_whole_from_a_worker():
    """--each-file analyzes in other processes: the facts travel as plain data and come back equal."""
    files = [str(ROOT / "captures" / "07-push-webhook.http"), str(ROOT / "captures" / "03-streaming.http")]
    here = analyze(files, facts=True)
    there = Analysis.model_validate(analyze_session(files, None, True))
    assert here.exchanges and there.exchanges == here.exchanges
    assert any(facts.card for facts in here.exchanges)
    assert any(at is not None for facts in here.exchanges for _, _, at in facts.states)


def test_an_analysis_without_facts_is_refused_rather_than_decoded_again():
    files = [str(ROOT / "captures" / "04-polling.http")]
    with pytest.raises(ValueError, match="facts=True"):
        walkthrough.build(files, analyze(files))
    with pytest.raises(ValueError, match="not of this capture"):
        walkthrough.build(files, analyze([str(ROOT / "captures" / "06-cancel.http")], facts=True))
