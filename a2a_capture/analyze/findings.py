"""Findings and the rules that make them.

A rule is a small, self-explaining unit: a stable id, a severity, a title, the spec section
it rests on, why it costs a round trip, a minimal bad example and the fix, and a check that
looks at one call against what the client knew at that moment.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Literal

from pydantic import BaseModel, Field

from a2a_capture.a2a.decode import Call


class Severity(StrEnum):
    ERROR = "error"
    WARNING = "warning"
    INFO = "info"

    @property
    def rank(self) -> int:
        return {"error": 3, "warning": 2, "info": 1}[self.value]


class Finding(BaseModel):
    rule: str
    severity: Severity
    title: str
    message: str
    spec: str
    file: str
    exchange: str  # the label: "6" or "webhook 2"
    number: int
    line: int | None = None
    #: earlier exchanges that had already answered the question, as labels
    related: list[str] = Field(default_factory=list)
    #: where those exchanges are (file, label, line), for reports that link to them
    related_locations: list[tuple[str, str, int | None]] = Field(default_factory=list)
    #: seconds this exchange took, where the capture has timestamps: the cost of a wasted trip
    cost: float | None = None
    operation: str | None = None
    agent: str | None = None
    #: the agent by the name its card gave, where the client held one (stable across re-recordings)
    agent_name: str | None = None
    #: judged from the outcome the capture shows: the round trip was wasted (failed as predicted,
    #: or redundant: the client already held the answer)
    wasted: bool = False
    #: "wasted", "fragile" (worked only because the agent was lenient) or "advice"
    outcome: Literal["wasted", "fragile", "advice"] = "advice"


@dataclass
class Hit:
    """What a check returns: the message, and the calls that had already answered it."""

    message: str
    related: list[Call] = field(default_factory=list)


Check = Callable[[Call, "object"], Iterable[Hit]]


@dataclass(frozen=True)
class Rule:
    id: str
    severity: Severity
    title: str
    spec: str
    why: str
    example: str
    fix: str
    check: Check
    #: a wasted round trip (counted in the summary), rather than advice
    wasted: bool = True

    def run(self, call: Call, session) -> list[Finding]:
        findings = []
        held = session.held_card(call)
        agent_name = held.card.name if held is not None and held.card.name else call.agent
        wasted = self.wasted and self.severity != Severity.INFO
        for hit in self.check(call, session) or ():
            findings.append(Finding(
                rule=self.id, severity=self.severity, title=self.title, message=hit.message, spec=self.spec,
                file=call.file, exchange=call.label, number=call.number, line=call.line,
                related=[related.label for related in hit.related],
                related_locations=[(r.file, r.label, r.line) for r in hit.related],
                cost=call.duration if self.wasted else None, operation=call.operation, agent=call.agent,
                agent_name=agent_name, wasted=wasted, outcome="wasted" if wasted else "advice",
            ))
        return findings


RULES: dict[str, Rule] = {}


def ref(other: Call, call: Call) -> str:
    """How a message names an earlier exchange: with its file when that is another file."""
    if other.file and other.file != call.file:
        return f"exchange {other.label} of {os.path.basename(other.file)}"
    return f"exchange {other.label}"


def rule(id: str, severity: str, title: str, spec: str, why: str, example: str, fix: str, wasted: bool = True):
    """Register a check as a rule. The docstring-like fields feed docs/rules.md."""
    def register(check: Check) -> Check:
        if id in RULES:
            raise ValueError(f"rule {id} is defined twice")
        RULES[id] = Rule(id, Severity(severity), title, spec, why.strip(), example.strip(), fix.strip(), check,
                         wasted)
        return check
    return register
