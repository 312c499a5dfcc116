"""A client session with google-adk's RemoteA2aAgent, driven through ADK's runner, run in the stack's venv.

    python client.py BASE_URL PLAIN_URL ADK_URL

No model: the root agent is the RemoteA2aAgent itself, so ADK's runner sends the user's message to the
remote agent. As ADK's samples do, a RemoteA2aAgent is made for each request (it resolves its card when
made): twice to BASE_URL (streaming), once to PLAIN_URL (no streaming) and once to ADK_URL (ADK's own
`to_a2a` server). Prints {"answers": [the number of events of each run]}.
"""

from __future__ import annotations

import asyncio
import json
import sys
import warnings

from google.adk.agents.remote_a2a_agent import RemoteA2aAgent
from google.adk.runners import InMemoryRunner
from google.genai import types

warnings.simplefilter("ignore")  # ADK's A2A support warns that it is experimental, at each use


async def run(base: str, text: str) -> int:
    remote = RemoteA2aAgent(name="remote", agent_card=f"{base}/.well-known/agent-card.json")
    runner = InMemoryRunner(agent=remote, app_name="probe")
    session = await runner.session_service.create_session(app_name="probe", user_id="u")
    message = types.Content(role="user", parts=[types.Part(text=text)])
    return len([event async for event in runner.run_async(user_id="u", session_id=session.id, new_message=message)])


async def session(base: str, plain: str, adk: str) -> dict:
    answers = [await run(base, "run the tests"), await run(base, "run them again"),   # card, stream; card, stream
               await run(plain, "run"),                                           # card, SendMessage
               await run(adk, "hello")]                                           # card, stream
    return {"answers": answers}


if __name__ == "__main__":
    print(json.dumps(asyncio.run(session(*sys.argv[1:4]))))
