"""The agents a capture talks to, each with its name from its card and its exchanges."""

from __future__ import annotations

from dataclasses import dataclass, field

from a2a_capture.a2a.decode import decode
from a2a_capture.capture.models import Capture, Exchange


@dataclass
class RecordedAgent:
    origin: str  # scheme://host:port as the client reached it
    name: str  # the card's name, or the origin when no card was fetched
    exchanges: list[Exchange] = field(default_factory=list)


def recorded_agents(capture: Capture) -> list[RecordedAgent]:
    """In the order the capture first talks to them; webhooks (agent to client) left out."""
    agents: dict[str, RecordedAgent] = {}
    for exchange in capture.exchanges:
        if exchange.webhook:
            continue
        call = decode(exchange)
        if call.agent is None:
            continue
        agent = agents.setdefault(call.agent, RecordedAgent(call.agent, call.agent))
        if call.card is not None and call.card.name:
            agent.name = call.card.name
        agent.exchanges.append(exchange)
    return list(agents.values())
