"""The Agent Framework session of client.py with the fixes a2a-capture's findings name for this library
applied (a2a_capture/analyze/libraries.py), run in the stack's venv; tests/test_library_fixes.py shows
the findings gone.

    python fixed.py BASE_URL PLAIN_URL

card-not-fetched: the card resolved once (a2a-sdk's A2ACardResolver) and given as `agent_card=`, not
`A2AAgent(url=...)`. return-immediately-poll: `await agent.run(...)` without `background=True`, one
blocking round trip instead of a SendMessage and its GetTask polls. Prints {"answers": [...]}.
"""

from __future__ import annotations

import asyncio
import json
import sys

import httpx
from a2a.client import A2ACardResolver
from agent_framework_a2a import A2AAgent


async def session(base: str, plain: str) -> dict:
    answers = []
    async with httpx.AsyncClient() as http:
        card = await A2ACardResolver(http, plain).get_agent_card()               # 1 card
    async with A2AAgent(agent_card=card) as agent:
        response = await agent.run("run the tests")                              # 2 SendMessage, blocking
        answers.append(response.text)
        response = await agent.run("run again")                                  # 3 SendMessage, blocking
        answers.append(response.text)
    return {"answers": answers}


if __name__ == "__main__":
    print(json.dumps(asyncio.run(session(sys.argv[1], sys.argv[2]))))
