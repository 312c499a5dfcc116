"""client.py's session with the fix its card-refetch names in ADK's API, run in the stack's venv.

    python fixed.py BASE_URL PLAIN_URL ADK_URL

The same runs, but one RemoteA2aAgent (and the runner over it) is made for each remote agent and kept:
it resolves its card once and keeps the client it made from it, so the second run to BASE_URL does not
fetch the card again. Prints {"answers": [the number of events of each run]}.
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


def runner_for(base: str) -> InMemoryRunner:
    remote = RemoteA2aAgent(name="remote", agent_card=f"{base}/.well-known/agent-card.json")
    return InMemoryRunner(agent=remote, app_name="probe")


async def run(runner: InMemoryRunner, text: str) -> int:
    session = await runner.session_service.create_session(app_name="probe", user_id="u")
    message = types.Content(role="user", parts=[types.Part(text=text)])
    return len([event async for event in runner.run_async(user_id="u", session_id=session.id, new_message=message)])


async def session(base: str, plain: str, adk: str) -> dict:
    kept = runner_for(base)                                                      # one RemoteA2aAgent for BASE_URL
    answers = [await run(kept, "run the tests"), await run(kept, "run them again"),  # card, stream; stream
               await run(runner_for(plain), "run"),                              # card, SendMessage
               await run(runner_for(adk), "hello")]                              # card, stream
    return {"answers": answers}


if __name__ == "__main__":
    print(json.dumps(asyncio.run(session(*sys.argv[1:4]))))
