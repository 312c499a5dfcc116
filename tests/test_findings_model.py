"""The findings the engine builds without validation are the findings validation would build."""

from __future__ import annotations

import pickle

import pytest

from a2a_capture.analyze.engine import analyze
from a2a_capture.analyze.findings import Finding
from tests.builders import write
from tests.test_rules import CASES


@pytest.mark.parametrize("rule_id", sorted(CASES))
def test_each_rules_finding_equals_the_validated_model(tmp_path, rule_id):
    blocks, _, _ = CASES[rule_id]
    findings = [f for f in analyze([write(tmp_path, *blocks)]).findings if f.rule == rule_id]
    assert findings
    for finding in findings:
        validated = Finding(**{name: getattr(finding, name) for name in Finding.model_fields})
        assert finding == validated
        assert finding.model_fields_set == validated.model_fields_set
        assert finding.model_dump_json() == validated.model_dump_json()
        assert repr(finding) == repr(validated)
        assert pickle.loads(pickle.dumps(finding)) == validated
        finding.agent_name = "renamed"  # the engine names agents once their card is known
        assert finding.agent_name == "renamed"


def test_a_hit_made_of_its_items_is_the_hit_its_constructor_makes():
    """Checks that make a hit for most calls make it by ``tuple.__new__`` (no constructor's frame); Rule.finding
    unpacks it: the items are the constructor's, in its order, and read by the same names."""
    from a2a_capture.analyze.findings import Hit
    from a2a_capture.analyze.rules import tasks

    related = [("a.http", "3", 7)]
    made = tasks._hit(Hit, ("said", related, None, None))
    assert type(made) is Hit and made == Hit("said", related)
    assert (made.message, made.related, made.kind, made.lenient) == ("said", related, None, None)
    assert tuple(Hit("said", kind="advice", lenient="why")) == ("said", [], "advice", "why")
    assert Hit("said").related == [] and Hit("said").related is not Hit("said").related  # a list of its own each
    assert repr(Hit("said")) == "Hit(message='said', related=[], kind=None, lenient=None)"
