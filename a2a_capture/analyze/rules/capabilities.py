"""Operations that the agent's card had already ruled out (§3.3.4)."""

from __future__ import annotations

from a2a_capture.a2a import spec
from a2a_capture.analyze.depends import INTERFACE
from a2a_capture.analyze.findings import Hit, ref, rule


def _gated(capability_rule: str):
    """The check shared by the three capability rules: the gate table says which applies."""
    def check(call, session):
        if not call.is_a2a or call.operation is None:
            return
        held = session.held_card(call)
        if held is None or (held.extended and call.operation == "GetExtendedAgentCard"):
            return  # an agent that served an extended card has one, whatever that card says
        gate = spec.GATES.get(call.operation)
        if gate is not None and gate.rule == capability_rule and not held.card.capability(gate.capability):
            answer = f"; the agent answered {call.error.name}" if call.error else ""
            yield Hit(f"{call.operation} on {held.card.name or call.agent}, whose card ("
                      f"{ref(held.fetch, call)}) {_lacks(held.card, gate.capability)}{answer}", [held.fetch])
        elif (capability_rule == "capability-push" and call.inline_push
              and not held.card.push_notifications):
            yield Hit(f"{call.operation} carries a push notification config, but the card of "
                      f"{held.card.name or call.agent} ({ref(held.fetch, call)}) "
                      f"{_lacks(held.card, 'pushNotifications')}: no webhook will come", [held.fetch], kind="advice")
    return check


def _lacks(card, capability: str) -> str:
    """How the card left a capability out: in its own words where it set it ("says
    capabilities.streaming: false"), or by the field its version would have set."""
    stated = card.stated.get(capability)
    return f"says {stated}" if stated else f"has no {spec.capability_field(capability, card.shape)}"


rule(
    id="capability-push",
    on=("CreateTaskPushNotificationConfig", "GetTaskPushNotificationConfig", "ListTaskPushNotificationConfigs",
        "DeleteTaskPushNotificationConfig", "SendMessage", "SendStreamingMessage"),
    severity="error",
    title="Push notification call to an agent without push",
    spec="§3.3.4",
    why="""
The card says whether the agent sends push notifications (`capabilities.pushNotifications`). Any
push-config call to an agent without it fails with PushNotificationNotSupportedError (-32003),
and a config sent inline with a message is ignored, so the client waits for webhooks that never
come. The card had already answered the question.""",
    example="CreateTaskPushNotificationConfig to an agent whose card has no pushNotifications",
    good="CreateTaskPushNotificationConfig only to an agent whose card has "
         "capabilities.pushNotifications: true; to one without, GetTask or SubscribeToTask",
    fix="Check `capabilities.pushNotifications` first; poll or stream instead.",
    lenient="this agent serves push configs its card does not offer; an agent that follows its card refuses them",
    fails_as=spec.REFUSED_CAPABILITY,
    more_cases=(("inline", "advice", "a push config sent inline with a message to an agent without push: the message "
                                     "itself did its work, and no webhook will come"),),
    depends=INTERFACE,  # sends, most of them with no push config, to the same few cards
)(_gated("capability-push"))

rule(
    id="capability-streaming",
    on=("SendStreamingMessage", "SubscribeToTask"),
    severity="error",
    title="Streaming call to an agent without streaming",
    spec="§3.3.4",
    why="""
SendStreamingMessage and SubscribeToTask need `capabilities.streaming` on the card. Without it
the call fails with UnsupportedOperationError (-32004): a round trip the card had ruled out.""",
    example="SendStreamingMessage to an agent whose card has streaming: false",
    good="SendStreamingMessage to an agent whose card has streaming: true; to one without, SendMessage "
         "(blocking) then GetTask",
    fix="Check `capabilities.streaming`; use SendMessage (blocking) or GetTask instead.",
    lenient="this agent streams although its card does not offer it; an agent that follows its card refuses",
    fails_as=spec.REFUSED_CAPABILITY,
)(_gated("capability-streaming"))

def _extended_card(call, session):
    """GetExtendedAgentCard, and 0.2's form of it: `GET /agent/authenticatedExtendedCard`, which is read
    as a card fetch (it answers a card), judged by the same gate."""
    if call.kind != "card":
        yield from _gated_extended(call, session)
        return
    if not call.path.rstrip("/").endswith(spec.LEGACY_EXTENDED_CARD_PATH) or call.card is not None:
        return  # an agent that served an extended card has one
    held = session.held_card(call)
    if held is None or held.extended or held.card.capability("extendedAgentCard"):
        return
    answer = f"; the agent answered {call.error.name}" if call.error else ""
    yield Hit(f"GET {spec.LEGACY_EXTENDED_CARD_PATH} (0.2's extended card) on {held.card.name or call.agent}, whose "
              f"card ({ref(held.fetch, call)}) {_lacks(held.card, 'extendedAgentCard')}{answer}", [held.fetch])


_gated_extended = _gated("capability-extended-card")

rule(
    id="capability-extended-card",
    on=("GetExtendedAgentCard", "card"),
    severity="error",
    title="Extended card asked of an agent that has none",
    spec="§3.3.4, §3.1.11",
    why="""
GetExtendedAgentCard is only served when the card sets `capabilities.extendedAgentCard`
(0.3 and 0.2: `supportsAuthenticatedExtendedCard`). Otherwise it fails with
UnsupportedOperationError, or, for 0.2's `GET /agent/authenticatedExtendedCard`, 404.""",
    example="GetExtendedAgentCard to an agent whose card lacks extendedAgentCard",
    good="GetExtendedAgentCard to an agent whose card has capabilities.extendedAgentCard: true",
    fix="Ask for the extended card only when the public card offers one.",
    lenient="this agent serves an extended card its public card does not offer; an agent that follows its card refuses",
    fails_as=spec.REFUSED_CAPABILITY,
)(_extended_card)
