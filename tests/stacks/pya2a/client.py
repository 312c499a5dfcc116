"""A client session with pya2a's own client (protocol 0.1), run in the stack's venv.

    python client.py BASE_URL

It reads the card at /.well-known/agent.json and sends to the card's url, without A2A-Version:
it streams a task (tasks/sendSubscribe) to its end, polls that task once more (tasks/get), sends
another (tasks/send), cancels it though it had completed (tasks/cancel), and resolves the card
again, as a second client would. Prints {"task": the streamed task's id, "answers": [...]}.
"""

from __future__ import annotations

import asyncio
import json
import sys

from a2a.client import A2ACardResolver, A2AClient
from a2a.types import A2AClientHTTPError


def task(task_id: str, text: str) -> dict:
    return {"id": task_id, "sessionId": "s-1", "message": {"role": "user", "parts": [{"type": "text", "text": text}]}}


def answer(response) -> str | int:
    """A task's state, or the JSON-RPC error's code."""
    return response.result.status.state if response.result is not None else response.error.code


async def session(base: str) -> dict:
    client = A2AClient(A2ACardResolver(base).get_agent_card())                           # card
    try:
        events = [event async for event in client.send_task_streaming(task("t-1", "run"))]    # tasks/sendSubscribe
        answers = [type(event.result).__name__ for event in events]
    except A2AClientHTTPError as error:  # an agent of another version answers JSON, not a stream
        answers = [error.status_code]
    answers.append(answer(await client.get_task({"id": "t-1"})))                          # tasks/get, ended
    answers.append(answer(await client.send_task(task("t-2", "again"))))                 # tasks/send
    answers.append(answer(await client.cancel_task({"id": "t-2"})))                       # tasks/cancel, ended
    answers.append(A2ACardResolver(base).get_agent_card().name)                          # card again
    return {"task": "t-1", "answers": answers}


if __name__ == "__main__":
    print(json.dumps(asyncio.run(session(sys.argv[1]))))
