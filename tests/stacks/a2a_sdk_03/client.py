"""A client session with a2a-sdk 0.3's own client, run in the stack's venv.

    python client.py BASE_URL [--grpc]

Fetches the card, streams a message to completion, then makes two mistakes the library lets
through: it polls the task it saw complete, and a second client fetches the card again. Last, a
blocking message that the agent answers with a Message. Prints {"task": id} at the end.

With --grpc the client speaks gRPC to the interface the card prefers: it streams a message to
completion, polls the finished task, sets a push config on an agent without push (the agent
refuses), and cancels the finished task (refused too). Prints {"task": id, "refused": [...]}.
"""

from __future__ import annotations

import asyncio
import json
import sys

import httpx
from a2a.client import A2ACardResolver, ClientConfig, ClientFactory, create_text_message_object
from a2a.types import (
    PushNotificationConfig,
    Task,
    TaskIdParams,
    TaskPushNotificationConfig,
    TaskQueryParams,
)


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


async def grpc_session(base: str) -> dict:
    import grpc

    async with httpx.AsyncClient(timeout=30) as http:
        card = await A2ACardResolver(http, base).get_agent_card()                      # card (HTTP)
    config = ClientConfig(grpc_channel_factory=grpc.aio.insecure_channel, supported_transports=["GRPC"])
    client = ClientFactory(config).create(card)
    events = [event async for event in client.send_message(create_text_message_object(content="run"))]
    task: Task = events[-1][0]                                                         # SendStreamingMessage
    assert task.status.state == "completed", task.status
    await client.get_task(TaskQueryParams(id=task.id))                                # poll of a finished task
    refused = []
    for mistake in (client.set_task_callback(TaskPushNotificationConfig(                # push on an agent without
            task_id=task.id, push_notification_config=PushNotificationConfig(
                url="http://127.0.0.1:9/hook", token="push-secret-03"))),
                    client.cancel_task(TaskIdParams(id=task.id))):                      # cancel of a finished task
        try:
            await mistake
        except Exception as error:  # the agent refuses both; say how
            refused.append(type(error).__name__)
    await client.close()
    return {"task": task.id, "refused": refused}


if __name__ == "__main__":
    run = grpc_session if "--grpc" in sys.argv[2:] else session
    print(json.dumps(asyncio.run(run(sys.argv[1]))))
