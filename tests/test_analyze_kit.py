"""The analyzer on the A2A 101 kit: quiet on the clean scenarios, and every deliberate mistake found."""

from __future__ import annotations

import pytest

from a2a_capture.analyze.engine import analyze
from a2a_capture.analyze.findings import Severity

CLEAN = ["02-message-reply", "03-blocking-task", "04-polling", "05-streaming", "06-input-required",
         "07-auth-required", "08-rejected", "09-failed", "12-list-tasks", "13-history", "15-push"]

# scenario -> {exchange: rule}, each the deliberate mistake of that exchange
MISTAKES = {
    "10-cancel": {"3": "cancel-terminal", "4": "message-terminal"},
    "11-errors": {"1": "task-unknown", "2": "version-header-missing", "3": "method-version-mismatch",
                  "4": "malformed-request", "5": "input-mode", "6": "capability-push", "7": "malformed-request"},
    "14-resubscribe": {"3": "subscribe-terminal"},
    "16-rest-binding": {"2": "poll-terminal", "3": "task-unknown", "4": "cancel-terminal"},
    "18-extended-card": {"1": "auth-missing"},
}


def serious(findings):
    return [f for f in findings if f.severity.rank >= Severity.WARNING.rank]


@pytest.mark.parametrize("scenario", CLEAN)
def test_no_warning_on_a_clean_scenario(kit, scenario):
    findings = analyze([kit / "01-agent-cards.http", kit / f"{scenario}.http"]).findings
    assert serious(findings) == [], [(f.exchange, f.rule, f.message) for f in findings]


def test_no_warning_on_the_planner_session(kit):
    analysis = analyze([kit / "19-planner.http"])
    assert serious(analysis.findings) == []
    assert analysis.summary.exchanges == 9


@pytest.mark.parametrize("scenario", sorted(MISTAKES))
def test_every_deliberate_mistake_is_found_on_its_exchange(kit, scenario):
    findings = serious(analyze([kit / "01-agent-cards.http", kit / f"{scenario}.http"]).findings)
    found = {(f.exchange, f.rule) for f in findings}
    assert found == set(MISTAKES[scenario].items()), [(f.exchange, f.rule, f.message) for f in findings]


def test_the_cards_of_01_are_the_evidence(kit):
    analysis = analyze([kit / "01-agent-cards.http", kit / "11-errors.http"])
    push = next(f for f in analysis.findings if f.rule == "capability-push")
    assert push.related_locations == [(str(kit / "01-agent-cards.http"), "2", 57)]
    call = next(c for c in analysis.calls if c.operation == "CreateTaskPushNotificationConfig")
    assert call.card["exchange"] == "2" and call.card["file"].endswith("01-agent-cards.http")
    assert len(call.card["fingerprint"]) == 12


def test_summary_counts(kit):
    summary = analyze([kit / "01-agent-cards.http", kit / "11-errors.http"]).summary
    assert summary.exchanges == 10
    assert summary.calls_by_operation["card"] == 3
    assert summary.calls_by_operation["SendMessage"] == 4
    assert summary.errors == 7
    assert summary.wasted_round_trips == 7
