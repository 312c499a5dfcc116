"""client.py's session with the fix its card-refetch names, in Strands' API, run in the stack's venv.

    python fixed.py BASE_URL PLAIN_URL

The same calls, but the fifth run goes through the A2AAgent already made for BASE_URL, not a new one,
so the card is not fetched again; the A2AAgent on the JSON-RPC URL is left out (card-path has no
hint of Strands'). Its other habits stay (no hint of Strands' own is verified for
them). Prints {"answers": [...]}: each call's stop reason, or the error's type.
"""

from __future__ import annotations

import asyncio
import json
import sys

from strands.agent.a2a_agent import A2AAgent


async def ask(agent: A2AAgent, text: str) -> str:
    try:
        return str((await agent.invoke_async(text)).stop_reason)
    except Exception as error:  # the agent's refusal, as the library raises it
        return type(error).__name__


async def session(base: str, plain: str) -> dict:
    agent = A2AAgent(endpoint=base)
    answers = [await ask(agent, "run the tests")]                     # 1 card, 2 SendStreamingMessage
    answers.append(await ask(agent, "run the tests again"))            # 3 SendStreamingMessage
    answers.append(await ask(agent, "input: which branch?"))           # 4 SendStreamingMessage -> input-required
    answers.append(await ask(agent, "main"))                           # 5 the answer, without the task's ids
    answers.append(await ask(agent, "run once more"))                  # 6 the same A2AAgent: no card again
    answers.append(await ask(A2AAgent(endpoint=plain), "run"))        # 7 card, 8 SendMessage (no streaming)
    return {"answers": answers}


if __name__ == "__main__":
    print(json.dumps(asyncio.run(session(sys.argv[1], sys.argv[2]))))
