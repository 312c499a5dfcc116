"""A client session with Microsoft Agent Framework's A2A agent (agent-framework-a2a), run in the stack's venv.

    python client.py BASE_URL PLAIN_URL

By the library's documented API, no model needed (A2AAgent is a client of a remote agent):
`A2AAgent(url=...)` on PLAIN_URL's JSON-RPC interface (no card fetched: the library makes a minimal card
from the URL) runs a task in the background (`run(..., background=True)`: SendMessage with
returnImmediately) and polls it with `poll_task` until it ends, then tries to resume it by
`run(continuation_token=...)` (SubscribeToTask, which an agent without streaming refuses); an A2AAgent on
PLAIN_URL itself (the base URL, posted to `/`); then the card of BASE_URL resolved by a2a-sdk's resolver
and an `A2AAgent(agent_card=...)` that streams a task (`run(..., stream=True)`).
Prints {"answers": [...], "polls": N}.
"""

from __future__ import annotations

import asyncio
import json
import sys

import httpx
from a2a.client import A2ACardResolver
from agent_framework_a2a import A2AAgent


async def session(base: str, plain: str) -> dict:
    answers, polls = [], 0
    async with A2AAgent(name="plain", url=f"{plain}/a2a/jsonrpc") as agent:
        response = await agent.run("run the tests", background=True)             # 1 SendMessage, returnImmediately
        token = response.continuation_token
        answers.append("token" if token else "no token")
        while token is not None and polls < 50:
            await asyncio.sleep(0.05)
            response = await agent.poll_task(token)                              # 2.. GetTask until it ends
            token, polls = response.continuation_token, polls + 1
        first = await agent.run("run again", background=True)                    # SendMessage, returnImmediately
        try:
            await agent.run(continuation_token=first.continuation_token)         # SubscribeToTask: refused
            answers.append("resumed")
        except Exception as error:
            answers.append(type(error).__name__)
    async with A2AAgent(name="base", url=plain) as agent:
        try:
            await agent.run("run")                                               # POST / : not an interface
            answers.append("answered")
        except Exception as error:
            answers.append(type(error).__name__)
    async with httpx.AsyncClient() as http:
        card = await A2ACardResolver(http, base).get_agent_card()                # card
    async with A2AAgent(agent_card=card) as agent:
        updates = [update async for update in agent.run("run the tests", stream=True)]  # SendStreamingMessage
        answers.append(len(updates))
    return {"answers": answers, "polls": polls}


if __name__ == "__main__":
    print(json.dumps(asyncio.run(session(sys.argv[1], sys.argv[2]))))
