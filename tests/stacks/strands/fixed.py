"""client.py's session with the fixes its findings name in Strands' API, run in the stack's venv.

    python fixed.py BASE_URL PLAIN_URL

The same calls, changed as each finding's Strands fix says: every A2AAgent is given one kept
`httpx.AsyncClient` (`client_config=ClientConfig(httpx_client=...)`: its card and its messages then share
one connection, not one each: connection-per-request); the input-required task is answered with its
taskId and contextId through a2a-sdk's client made from the A2AAgent's card and that config (A2AAgent
builds each message from the prompt alone: input-required-abandoned); the fifth run goes through the
A2AAgent already made for BASE_URL, not a new one (card-refetch), and so does the run client.py sent
through an A2AAgent given the JSON-RPC interface URL (card-path). Prints {"answers": [...]}: each call's
stop reason (or, for the answer sent through a2a-sdk's client, its task's state), or the error's type.
"""

from __future__ import annotations

import asyncio
import json
import sys
from uuid import uuid4

import httpx
from a2a.client import ClientConfig, ClientFactory
from a2a.types import Message, Part, Role, Task, TextPart
from strands.agent.a2a_agent import A2AAgent


async def ask(agent: A2AAgent, text: str) -> str:
    try:
        return str((await agent.invoke_async(text)).stop_reason)
    except Exception as error:  # the agent's refusal, as the library raises it
        return type(error).__name__


async def asking(agent: A2AAgent, text: str) -> Task:
    """The task a run left, from the `(task, update)` events `stream_async` yields."""
    return [event["event"][0] async for event in agent.stream_async(text)
            if event.get("type") == "a2a_stream" and isinstance(event["event"], tuple)][-1]


async def answer(agent: A2AAgent, config: ClientConfig, task: Task, text: str) -> str:
    """The answer to an input-required task, with its ids, through a2a-sdk's client of the agent's card."""
    client = ClientFactory(config).create(await agent.get_agent_card())
    message = Message(role=Role.user, parts=[Part(TextPart(text=text))], message_id=uuid4().hex,
                      task_id=task.id, context_id=task.context_id)
    events = [event async for event in client.send_message(message)]
    return events[-1][0].status.state.value


async def session(base: str, plain: str) -> dict:
    async with httpx.AsyncClient(timeout=30) as http:
        config = ClientConfig(httpx_client=http)
        agent = A2AAgent(endpoint=base, client_config=config)
        answers = [await ask(agent, "run the tests")]                 # 1 card, 2 SendStreamingMessage
        answers.append(await ask(agent, "run the tests again"))        # 3 SendStreamingMessage, same connection
        asked = await asking(agent, "input: which branch?")            # 4 SendStreamingMessage -> input-required
        answers.append(asked.status.state.value)
        answers.append(await answer(agent, config, asked, "main"))      # 5 the answer, with the task's ids
        answers.append(await ask(agent, "run once more"))              # 6 the same A2AAgent: no card again
        answers.append(await ask(agent, "run"))                        # 7 the base URL's A2AAgent, not the interface's
        answers.append(await ask(A2AAgent(endpoint=plain, client_config=config), "run"))  # 8 card, 9 SendMessage
    return {"answers": answers}


if __name__ == "__main__":
    print(json.dumps(asyncio.run(session(sys.argv[1], sys.argv[2]))))
