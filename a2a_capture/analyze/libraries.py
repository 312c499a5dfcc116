"""Client libraries that say who they are (User-Agent), and the fix each rule's habit has in their own API.

A table, not code: a finding on a call whose User-Agent names a library below adds that library's way
to the rule's fix. Libraries built on a2a-sdk's client send httpx's User-Agent and name nothing.
Each fix is grounded: tests/test_library_fixes.py applies it to the library's client in tests/stacks/
and shows the finding gone; a rule no test has applied a fix for keeps its generic fix.
"""

from __future__ import annotations

#: a User-Agent's first product name -> (the library, {rule id: the fix in its API})
LIBRARIES: dict[str, tuple[str, dict[str, str]]] = {
    "agent-framework-python": ("Agent Framework (agent-framework-a2a)", {
        "card-not-fetched": "give A2AAgent the card (`A2AAgent(agent_card=await A2ACardResolver(http, base)"
                            ".get_agent_card())`) instead of `A2AAgent(url=...)`, which guesses a card from the URL",
        "return-immediately-poll": "`await agent.run(...)` without `background=True` waits for the result in one "
                                   "round trip (or `run(..., stream=True)` where the card offers streaming)",
    }),
    # Node's fetch says `node` and nothing more: any Node.js client; the fixes are in @a2a-js/sdk's calls
    "node": ("a Node.js client such as @a2a-js/sdk's (User-Agent: node)", {
        "poll-terminal": "the last event of `client.sendMessageStream(...)` (or the task `client.sendMessage` "
                         "returns) holds the final state; call `client.getTask` only while that is not terminal",
        "subscribe-terminal": "call `client.resubscribeTask({id})` only for a task whose last state was not terminal",
        "cancel-terminal": "call `client.cancelTask({id})` only while the task's last state is submitted, working "
                           "or input-required",
        "get-before-subscribe": "drop the `client.getTask` before `client.resubscribeTask`: its first event is the "
                                "task",
        "task-unknown": "pass the id a `task` event of the same client gave (`event.payload.value.id`)",
    }),
}


def library_of(call) -> tuple[str, dict[str, str]] | None:
    """The library a call's User-Agent names, if it is one of the table's."""
    agent = call.header("user-agent")
    if not agent:
        return None
    for product in agent.split():
        entry = LIBRARIES.get(product.split("/", 1)[0].lower())
        if entry is not None:
            return entry
    return None


def library_fix(call, rule_id: str) -> str:
    """"; with LIBRARY: FIX" where the call's User-Agent names a library with a fix for this rule, else ""."""
    entry = library_of(call)
    if entry is None or rule_id not in entry[1]:
        return ""
    return f"; with {entry[0]}: {entry[1][rule_id]}"
