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


def task(task_id: str, text: str) -> dict:
    return {"id": task_id, "sessionId": "s-1", "message": {"role": "user", "parts": [{"type": "text", "text": text}]}}


async def session(base: str) -> dict:
    client = A2AClient(A2ACardResolver(base).get_agent_card())                           # card
    events = [event async for event in client.send_task_streaming(task("t-1", "run"))]    # tasks/sendSubscribe
    answers = [type(event.result).__name__ for event in events]
    answers.append((await client.get_task({"id": "t-1"})).result.status.state)            # tasks/get, ended
    answers.append((await client.send_task(task("t-2", "again"))).result.status.state)   # tasks/send
    answers.append((await client.cancel_task({"id": "t-2"})).error.code)                  # tasks/cancel, ended
    answers.append(A2ACardResolver(base).get_agent_card().name)                          # card again
    return {"task": "t-1", "answers": answers}


if __name__ == "__main__":
    print(json.dumps(asyncio.run(session(sys.argv[1]))))
