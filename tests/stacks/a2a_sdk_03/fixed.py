"""client.py's session with the fixes its findings name in a2a-sdk 0.3's API, run in the stack's venv.

    python fixed.py BASE_URL

The card is resolved once and both clients are made from it (no second fetch); the streamed task's
last event holds its final state, so it is polled only if that is not terminal (it is: no poll).
Prints {"task": id} at the end.
"""

from __future__ import annotations

import asyncio
import json
import sys

import httpx
from a2a.client import A2ACardResolver, ClientConfig, ClientFactory, create_text_message_object
from a2a.types import Task, TaskQueryParams, TaskState

TERMINAL = {TaskState.completed, TaskState.canceled, TaskState.failed, TaskState.rejected}


async def session(base: str) -> dict:
    async with httpx.AsyncClient(timeout=30) as http:
        card = await A2ACardResolver(http, base).get_agent_card()                      # the card, once
        streaming = ClientFactory(ClientConfig(httpx_client=http, streaming=True)).create(card)
        events = [event async for event in streaming.send_message(create_text_message_object(content="run"))]
        task: Task = events[-1][0]                                                     # message/stream
        if task.status.state not in TERMINAL:
            task = await streaming.get_task(TaskQueryParams(id=task.id))
        assert task.status.state == "completed", task.status
        blocking = ClientFactory(ClientConfig(httpx_client=http, streaming=False)).create(card)  # the same card
        [event async for event in blocking.send_message(create_text_message_object(content="question"))]
        return {"task": task.id}


if __name__ == "__main__":
    print(json.dumps(asyncio.run(session(sys.argv[1]))))
