"""client.py's session with the fixes its findings name in a2a-sdk 0.2's API, run in the stack's venv.

    python fixed.py BASE_URL

One A2AClient, made from the card resolved once, for every call (no second resolver); the task
message/send returns holds its state, so it is polled or canceled only while that is not terminal
(it is completed: neither). Prints {"task": id} at the end.
"""

from __future__ import annotations

import asyncio
import json
import sys
import uuid

import httpx
from a2a.client import A2ACardResolver, A2AClient
from a2a.types import (
    CancelTaskRequest,
    GetTaskRequest,
    MessageSendParams,
    SendMessageRequest,
    SendStreamingMessageRequest,
    TaskIdParams,
    TaskQueryParams,
    TaskState,
)

TERMINAL = {TaskState.completed, TaskState.canceled, TaskState.failed, TaskState.rejected}


def _message(text: str) -> dict:
    return {"role": "user", "parts": [{"kind": "text", "text": text}], "messageId": uuid.uuid4().hex}


async def session(base: str) -> dict:
    async with httpx.AsyncClient(timeout=30) as http:
        client = A2AClient(http, agent_card=await A2ACardResolver(http, base).get_agent_card())  # card, once
        sent = await client.send_message(SendMessageRequest(
            id="1", params=MessageSendParams(message=_message("run"))))                       # message/send
        task = sent.root.result
        if task.status.state not in TERMINAL:
            task = (await client.get_task(GetTaskRequest(id="p0", params=TaskQueryParams(id=task.id)))).root.result
        if task.status.state not in TERMINAL:
            await client.cancel_task(CancelTaskRequest(id="c", params=TaskIdParams(id=task.id)))
        assert task.status.state == "completed", task.status
        stream = client.send_message_streaming(SendStreamingMessageRequest(
            id="s", params=MessageSendParams(message=_message("again"))))                    # message/stream
        [event async for event in stream]
        return {"task": task.id}


if __name__ == "__main__":
    print(json.dumps(asyncio.run(session(sys.argv[1]))))
