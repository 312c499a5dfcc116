"""A client session with a2a-sdk 0.3's own client, run in the stack's venv.

    python client.py BASE_URL

Fetches the card, streams a message to completion, then makes two mistakes the library lets
through: it polls the task it saw complete, and a second client fetches the card again. Last, a
blocking message that the agent answers with a Message. Prints {"task": id} at the end.
"""

from __future__ import annotations

import asyncio
import json
import sys

import httpx
from a2a.client import A2ACardResolver, ClientConfig, ClientFactory, create_text_message_object
from a2a.types import Task, TaskQueryParams


async def session(base: str) -> dict:
    async with httpx.AsyncClient(timeout=30) as http:
        card = await A2ACardResolver(http, base).get_agent_card()                      # card
        streaming = ClientFactory(ClientConfig(httpx_client=http, streaming=True)).create(card)
        events = [event async for event in streaming.send_message(create_text_message_object(content="run"))]
        task: Task = events[-1][0]                                                     # message/stream
        assert task.status.state == "completed", task.status
        await streaming.get_task(TaskQueryParams(id=task.id))                         # poll of a finished task
        again = await A2ACardResolver(http, base).get_agent_card()                     # the card again
        blocking = ClientFactory(ClientConfig(httpx_client=http, streaming=False)).create(again)
        [event async for event in blocking.send_message(create_text_message_object(content="question"))]
        return {"task": task.id}


if __name__ == "__main__":
    print(json.dumps(asyncio.run(session(sys.argv[1]))))
