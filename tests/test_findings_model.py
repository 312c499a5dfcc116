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


def test_a_hit_is_frozen_data_read_by_name():
    from dataclasses import FrozenInstanceError

    from a2a_capture.analyze.findings import Hit

    hit = Hit("said", [("a.http", "3", 7)])
    assert (hit.message, hit.related, hit.kind, hit.lenient) == ("said", [("a.http", "3", 7)], None, None)
    assert Hit("said").related == ()
    with pytest.raises(FrozenInstanceError):
        hit.message = "other"
    assert not hasattr(hit, "__dict__")  # slotted
