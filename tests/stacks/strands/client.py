"""A client session with strands-agents' own A2A client (A2AAgent), run in the stack's venv.

    python client.py BASE_URL PLAIN_URL

The habits a person debugging Strands meets, each by the library's documented API, no model needed
(A2AAgent is a client of a remote agent): an A2AAgent on BASE_URL runs a task twice (each call opens a
new HTTP client: a connection per request), asks a question the agent answers with input-required and
answers it as Strands does (a new message, without the task's taskId or contextId); a second A2AAgent on
the same URL (a new object: the card again); an A2AAgent given the JSON-RPC interface URL as its
endpoint (it looks for the card under it and gives up); an A2AAgent on PLAIN_URL, whose card offers no
streaming. Prints {"answers": [...]}: each call's stop reason, or the error's type.
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
    answers.append(await ask(A2AAgent(endpoint=base), "run once more"))  # 6 card again, 7 SendStreamingMessage
    answers.append(await ask(A2AAgent(endpoint=f"{base}/a2a/jsonrpc"), "run"))  # 8 card under the prefix: 404
    answers.append(await ask(A2AAgent(endpoint=plain), "run"))        # 9 card, 10 SendMessage (no streaming)
    return {"answers": answers}


if __name__ == "__main__":
    print(json.dumps(asyncio.run(session(sys.argv[1], sys.argv[2]))))
