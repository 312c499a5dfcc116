"""Findings and the rules that make them.

A rule is a small, self-explaining unit: a stable id, a severity, a title, the spec section
it rests on, why it costs a round trip, a minimal bad example and the fix, and a check that
looks at one call against what the client knew at that moment.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Literal

from pydantic import BaseModel, Field

from a2a_capture.a2a import spec
from a2a_capture.a2a.decode import A2A_KINDS, Call
from a2a_capture.analyze.depends import check_declared
from a2a_capture.capture.models import built


class Severity(StrEnum):
    ERROR = "error"
    WARNING = "warning"
    INFO = "info"

    @property
    def rank(self) -> int:
        return _RANKS[self]


_RANKS = {Severity.ERROR: 3, Severity.WARNING: 2, Severity.INFO: 1}


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
    #: in a mitmproxy flow file (no lines): the flow's place in it, as mitmproxy lists them
    flow: int | None = None
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
    #: the one fact of the card or the client behind it, where the rule can name both halves (the card's
    #: field and the client's habit): findings of one cause are grouped by it (``Summary.causes``)
    cause: str | None = None


#: how a rule's findings are judged from what the capture shows (see ``judge``):
#: "predicted": the card or an earlier exchange said the call would fail; wasted when it did
#: fail, fragile when the agent answered it anyway; "redundant": the client already held the
#: answer, so the round trip is wasted whatever came back; "advice": never a wasted round trip
Kind = Literal["predicted", "redundant", "advice"]
Outcome = Literal["wasted", "fragile", "advice"]


@dataclass(frozen=True)
class Case:
    """One way a rule's finding is judged, as docs/rules.md states it under "Wasted or fragile":
    ``when`` the call brought this, the finding's ``outcome`` is this. ``name`` is the case's short
    key (tests/test_rule_cases.py holds a capture of each case to its outcome)."""

    name: str
    outcome: Outcome
    when: str


def default_cases(kind: Kind, lenient: str, fails_as: frozenset[str] | None, needs: frozenset[str]) -> tuple:
    """The cases a rule's kind makes, where the rule does not state its own: a prediction is wasted
    when the call failed as predicted and fragile when it worked anyway; a redundant call always
    brought what the client held; advice is never a wasted round trip."""
    if kind == "advice":
        return (Case("advice", "advice", "always: advice, never counted as a wasted round trip"),)
    if kind == "redundant":
        return (Case("held", "wasted", "always: the client already held what the call brought, so the round trip "
                                       "added nothing whatever the agent replied"),)
    if fails_as is None:
        refused = "the agent refused the call (an error, an HTTP status of 400 or more, or no answer)"
    else:
        names = ", ".join(f"`{name}`" for name in sorted(fails_as))
        refused = (f"the agent refused the call as predicted ({names}, or an error whose message names one of "
                   "them, or one that names no cause), or did not answer")
    cases = [Case("refused", "wasted", f"{refused}, as the card or the spec predicted")]
    if "error" not in needs:  # a rule that judges errors only has no call that worked
        answered = f"the agent answered it anyway: it worked because {lenient}"
        if fails_as is not None:
            answered += ("; or it failed for another reason (TaskNotFoundError, say): the agent took up what this "
                         "rule is about")
        cases.append(Case("answered", "fragile", answered))
    return tuple(cases)


@dataclass(frozen=True, slots=True)
class Hit:
    """What a check returns: the message, and the calls that had already answered it.

    ``kind`` overrides the rule's own where one rule says two things (a bad page size is a
    prediction, a page past the last one is redundant)."""

    #: the sentence the finding says
    message: str
    #: earlier exchanges (``Seen`` records: file, label, line)
    related: Sequence = ()
    kind: Kind | None = None
    #: what made the call work anyway, where the rule can say it more exactly than its default
    lenient: str | None = None
    #: the fact of the card and the habit of the client that explain it (``Finding.cause``)
    cause: str | None = None


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
    kind: Kind = "predicted"
    #: what made the call work anyway, for a fragile finding's message
    lenient: str = "this agent is lenient; an agent that follows its card refuses it"
    #: the operations (GetTask, ...) or kinds of call ("card", "webhook", "a2a": any A2A call) the
    #: rule judges; the engine calls it for those only. None: every call
    on: frozenset[str] | None = None
    #: a "predicted" rule: the refusals it predicts (spec.REFUSED_*); a call that failed otherwise
    #: was not refused for what the rule is about. None: any failure is the one predicted
    fails_as: frozenset[str] | None = None
    #: what a call must carry for the rule to have anything to say of it: "error" (the agent
    #: answered with an error), "notes" (the exchange has notes); the engine calls it for those only
    needs: frozenset[str] = frozenset()
    #: what the check's findings depend on, for a call with no error and no notes: fields of the call and
    #: facts of the session (analyze/depends.py). Two such calls that agree on all of them get the same
    #: findings, so once the check found nothing for one the engine skips it for the other (tests/
    #: test_rule_memo.py fails when a check reads what its rule did not declare). None: called every time
    depends: tuple[str, ...] | None = None
    #: how its findings are judged, case by case (``Case``; docs/rules.md's "Wasted or fragile")
    cases: tuple[Case, ...] = ()
    #: what a call that follows the rule looks like (docs/rules.md's "Good"), beside ``example``'s bad one
    good: str = ""

    def applies_to(self, operation: str | None, kind: str) -> bool:
        if self.on is None:
            return True
        return operation in self.on or kind in self.on or (kind in A2A_KINDS and "a2a" in self.on)

    @property
    def wasted(self) -> bool:
        """Whether this rule's findings can be wasted round trips at all (advice never is)."""
        return self.kind != "advice"

    def run(self, call: Call, session) -> list[Finding]:
        return [self.finding(call, session, hit) for hit in self.check(call, session) or ()]

    def finding(self, call: Call, session, hit: Hit) -> Finding:
        """The finding a hit of this rule's check makes on ``call``."""
        held = session.held_card(call)
        agent_name = (held.card.name if held is not None else None) or call.agent
        kind = hit.kind or self.kind
        outcome = "wasted" if kind == "redundant" else judge(kind, call, self.fails_as)
        lenient, message = hit.lenient or self.lenient, hit.message
        if outcome == "fragile":
            if call.error is not None:  # say only what a strict agent does: this one failed, so what it let
                strict = lenient.partition("; ")[2]  # through is unknown
                message += f"; not refused for this (it failed with {call.error.name}); {strict}"
            else:
                message += f"; it worked because {lenient}"
        # every field given, of its type (from decoded facts): made without validating again
        # (tests/test_findings_model.py holds each rule's finding to the validated model)
        return built(Finding, {
            "rule": self.id, "severity": self.severity, "title": self.title, "message": message, "spec": self.spec,
            "file": call.file, "exchange": call.label, "number": call.number, "line": call.line, "flow": call.flow,
            "related": [earlier.label for earlier in hit.related],
            "related_locations": [(earlier.file, earlier.label, earlier.line) for earlier in hit.related],
            "cost": call.duration if outcome != "advice" else None, "operation": call.operation,
            "agent": call.agent, "agent_name": agent_name, "wasted": outcome == "wasted", "outcome": outcome,
            "cause": hit.cause})


def judge(kind: Kind, call: Call, fails_as: frozenset[str] | None = None) -> Outcome:
    """A finding's outcome from the exchange itself: did the round trip do any work, and did it
    fail the way the rule predicted (``fails_as``) rather than for another reason?"""
    if kind == "advice":
        return "advice"
    if kind == "redundant" or call.status is None:
        return "wasted"  # an unanswered call did no work either
    if call.ok:
        return "fragile"
    error = call.error
    if error is None or fails_as is None or _refused_as(error, fails_as):
        return "wasted"  # a redirect did no work by itself
    return "fragile"


def _refused_as(error, fails_as: frozenset[str]) -> bool:
    """Whether an error is one of these refusals: by its name, its HTTP status or its message
    naming one (agents that wrap every error in -32603 say which in words); or an error that
    names no cause at all (a bare internal error, gRPC UNKNOWN, a 5xx), where the prediction is
    the likeliest cause. Only an error that names another cause was not the refusal predicted."""
    if error.name in fails_as or (error.http_status and f"HTTP {error.http_status}" in fails_as):
        return True
    said = _squeezed(error.message)
    return _names_one(said, fails_as) or not _names_a_cause(error, said)


def _names_a_cause(error, said: str) -> bool:
    """An A2A error by name (other than InternalError), a 4xx, or a message naming one."""
    if error.task_ended or (error.name in spec.ERRORS_BY_NAME and error.name != "InternalError"):
        return True
    if error.http_status is not None and 400 <= error.http_status < 500:
        return True
    return bool(spec.TASK_UNKNOWN_WORDS.search(error.message)) or _names_one(
        said, (name for name in spec.ERRORS_BY_NAME if name != "InternalError"))


def _names_one(said: str, names) -> bool:
    """Whether a squeezed message names one of these errors ("TaskNotFound" for TaskNotFoundError);
    HTTP statuses and gRPC codes are not read from words."""
    return bool(said) and any(name.removesuffix("Error").lower() in said for name in names
                              if not name.startswith(("HTTP ", "gRPC ")))


def _squeezed(text: str) -> str:
    """A message lower case without blanks: "Task not found" and "TASK_NOT_FOUND" read alike."""
    return "".join(text.lower().replace("_", " ").split())


RULES: dict[str, Rule] = {}
#: what a rule may need a call to carry (``Rule.needs``)
NEEDS = frozenset({"error", "notes"})


def ref(other, call: Call) -> str:
    """How a message names an earlier exchange: with its file when that is another file."""
    if other.file and other.file != call.file:
        return f"exchange {other.label} of {os.path.basename(other.file)}"
    return f"exchange {other.label}"


def rule(id: str, severity: str, title: str, spec: str, why: str, example: str, fix: str, *,
         on: tuple[str, ...] | None, kind: Kind = "predicted", lenient: str | None = None,
         fails_as: frozenset[str] | None = None, needs: tuple[str, ...] = (),
         depends: tuple[str, ...] | None = None, cases: tuple[tuple[str, Outcome, str], ...] | None = None,
         more_cases: tuple[tuple[str, Outcome, str], ...] = (), good: str = ""):
    """Register a check as a rule, declared once: what it says (docs/rules.md is written from
    it), which calls it judges (``on``, ``needs``), and how its findings are judged (``kind``; and
    ``cases``, (name, outcome, when) each, where a rule's outcome depends on more than its kind, or
    ``more_cases`` beside those its kind makes)."""
    if not set(needs) <= NEEDS:
        raise ValueError(f"rule {id} needs {', '.join(sorted(set(needs) - NEEDS))}; a rule may need {sorted(NEEDS)}")
    if depends is not None:
        check_declared(id, depends)
    def register(check: Check) -> Check:
        if id in RULES:
            raise ValueError(f"rule {id} is defined twice")
        said = lenient or Rule.lenient
        stated = (tuple(Case(*case) for case in cases) if cases is not None
                  else default_cases(kind, said, fails_as, frozenset(needs))) + tuple(Case(*c) for c in more_cases)
        RULES[id] = Rule(id, Severity(severity), title, spec, why.strip(), example.strip(), fix.strip(), check,
                         kind, said, frozenset(on) if on is not None else None, fails_as,
                         frozenset(needs), depends, stated, good.strip())
        return check
    return register
