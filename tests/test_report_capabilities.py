"""The report's agent list says what a card declares of each capability: true, false as false, and
absent as absent (which the spec reads as false), never "none declared" for a card that says false."""

from __future__ import annotations

from a2a_capture.a2a.cards import parse_card
from a2a_capture.report.walkthrough import _agent_view
from tests.builders import card


def _capabilities(**capabilities) -> list[str]:
    return _agent_view(parse_card(card(capabilities=capabilities)), "http://localhost:9001", "a-1").capabilities


def test_false_is_shown_as_false_and_absent_as_absent():
    assert _capabilities(streaming=False, pushNotifications=False) == [
        "streaming: false", "push notifications: false", "extended card: not declared (read as false)"]
    assert _capabilities(streaming=True) == [
        "streaming: true", "push notifications: not declared (read as false)",
        "extended card: not declared (read as false)"]
    assert _capabilities(streaming="yes")[0] == 'streaming: "yes" (read as false)'


def test_a_03_card_that_declares_the_extended_card_at_its_top_level():
    data = {"name": "old", "url": "http://localhost:9001/", "version": "1", "protocolVersion": "0.3.0",
            "capabilities": {"streaming": True}, "supportsAuthenticatedExtendedCard": True, "skills": [],
            "defaultInputModes": ["text"], "defaultOutputModes": ["text"]}
    view = _agent_view(parse_card(data), "http://localhost:9001", "a-1")
    assert view.capabilities == ["streaming: true", "push notifications: not declared (read as false)",
                                 "extended card: true"]
