"""The summary's wasted and fragile exchanges: each counted once, held in a byte each."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from a2a_capture.analyze.engine import analyze
from a2a_capture.analyze.places import Places
from tests.builders import fetch_card, rpc, write
from tests.test_rules import DONE, SECURED, SEND

_place = st.tuples(st.sampled_from(["a.http", "b.http"]), st.booleans(),
                   st.one_of(st.integers(0, 9000), st.integers(-5, 5), st.integers(0, 10**30)))


@given(st.lists(_place, max_size=60), st.lists(_place, max_size=60))
def test_places_answer_as_a_set_of_places_does(added, others):
    places, model = Places(), set()
    for place in added:
        assert places.add(*place) == (place not in model)
        model.add(place)
    assert places.count == len(model)
    assert all(place in places for place in model)
    assert all((place in places) == (place in model) for place in others)
    other, other_model = Places(), set(others)
    for place in others:
        other.add(*place)
    assert places.count_outside(other) == len(model - other_model)


def test_a_dense_session_holds_a_byte_per_exchange():
    places = Places()
    for number in range(1, 100_001):
        places.add("session.http", False, number)
    assert places.count == 100_000
    assert places.blocks() == 25  # 4,096 numbers a block: ~100 KB for 100,000 exchanges


def test_a_repeated_block_number_is_one_wasted_round_trip(tmp_path):
    """The reader accepts `### 3` twice; the summary counts the place once, and its time once."""
    poll = rpc(3, "GetTask", {"id": "t-1"}, result=DONE, headers=["A2A-Version: 1.0", "Authorization: B x"])
    blocks = [fetch_card(1, SECURED), rpc(2, "SendMessage", SEND, result={"task": DONE}), poll, poll]
    analysis = analyze([write(tmp_path, *blocks)])
    polls = [f for f in analysis.findings if f.rule == "poll-terminal"]
    assert [f.exchange for f in polls] == ["3", "3"]
    summary = analysis.summary
    assert summary.wasted_round_trips == 1 and summary.fragile_round_trips == 1  # exchange 2: auth-missing
    session = analyze([write(tmp_path, *blocks, name="other.http"), write(tmp_path, *blocks)])
    wasted = {(f.file, f.exchange) for f in session.findings if f.wasted}
    assert ((str(tmp_path / "other.http"), "3") in wasted and (str(tmp_path / "case.http"), "3") in wasted)
    assert session.summary.wasted_round_trips == len(wasted)  # the same number in two files: two places


_finding = st.tuples(st.sampled_from(["rule-a", "rule-b", "rule-c"]), st.sampled_from(["wasted", "fragile", "advice"]))


@given(st.lists(st.lists(_finding, min_size=1, max_size=3), max_size=30))
def test_the_summary_counts_findings_as_a_tally_by_rule_severity_and_outcome_does(calls):
    """The engine counts by rule, then outcome (keys of one string each); its summary's counts and their
    order (each first found) are those of one count per (rule, severity, outcome), in the order first found."""
    from types import SimpleNamespace

    from a2a_capture.analyze.engine import Analyzer
    from a2a_capture.analyze.findings import Finding, Severity

    severities = {"rule-a": Severity.ERROR, "rule-b": Severity.WARNING, "rule-c": Severity.WARNING}
    analyzer, tally = Analyzer(keep_findings=False), {}
    for number, found in enumerate(calls, start=1):
        findings = [Finding.model_construct(rule=rule, severity=severities[rule], outcome=outcome)
                    for rule, outcome in found]
        analyzer._count(findings, SimpleNamespace(file="a.http", label=str(number), number=number, duration=1.0,
                                                     ok=True))
        for rule, outcome in found:
            tally[rule, severities[rule], outcome] = tally.get((rule, severities[rule], outcome), 0) + 1
    by_rule, by_severity, by_outcome = {}, {}, {}
    for (rule, severity, outcome), count in tally.items():
        by_rule[rule] = by_rule.get(rule, 0) + count
        by_severity[severity.value] = by_severity.get(severity.value, 0) + count
        by_outcome[outcome] = by_outcome.get(outcome, 0) + count
    summary = analyzer.summary()
    assert list(summary.findings_by_rule.items()) == list(by_rule.items())
    assert list(summary.findings_by_severity.items()) == list(by_severity.items())
    assert list(summary.findings_by_outcome.items()) == list(by_outcome.items())
