"""A client session with a2a-sdk 0.2's own client, run in the stack's venv.

    python client.py BASE_URL

Resolves the card (at /.well-known/agent.json, as 0.2 does), sends a message that completes,
then makes the mistakes the library lets through: two polls of the finished task, a cancel of
it, and, after a streamed message, a second resolver that fetches the card again. Prints
{"task": id} at the end.
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
)


def _message(text: str) -> dict:
    return {"role": "user", "parts": [{"kind": "text", "text": text}], "messageId": uuid.uuid4().hex}


async def session(base: str) -> dict:
    async with httpx.AsyncClient(timeout=30) as http:
        card = await A2ACardResolver(http, base).get_agent_card()                            # 1 card
        client = A2AClient(http, agent_card=card)
        sent = await client.send_message(SendMessageRequest(
            id="1", params=MessageSendParams(message=_message("run"))))                       # 2 message/send
        task = sent.root.result
        assert task.status.state == "completed", task.status
        for number in range(2):                                                               # 3, 4 polls
            await client.get_task(GetTaskRequest(id=f"p{number}", params=TaskQueryParams(id=task.id)))
        await client.cancel_task(CancelTaskRequest(id="c", params=TaskIdParams(id=task.id)))  # 5 cancel
        stream = client.send_message_streaming(SendStreamingMessageRequest(
            id="s", params=MessageSendParams(message=_message("again"))))                    # 6 message/stream
        [event async for event in stream]
        await A2ACardResolver(http, base).get_agent_card()                                   # 7 the card again
        return {"task": task.id}


if __name__ == "__main__":
    print(json.dumps(asyncio.run(session(sys.argv[1]))))
