"""client.py's session with the fixes its findings name in pya2a's API, run in the stack's venv.

    python fixed.py BASE_URL

One A2AClient, made from the card resolved once (no second resolver); the stream's last status
event (`final`) and the task tasks/send returns hold the tasks' states, so neither is polled or
canceled once terminal (both complete: no tasks/get, no tasks/cancel). pya2a's A2AClient opens an
httpx client per call and takes none: its connection per request has no fix in its API.
Prints {"task": the streamed task's id, "answers": [...]}.
"""

from __future__ import annotations

import asyncio
import json
import sys

from a2a.client import A2ACardResolver, A2AClient
from a2a.types import TaskState

TERMINAL = {TaskState.COMPLETED, TaskState.CANCELED, TaskState.FAILED}


def task(task_id: str, text: str) -> dict:
    return {"id": task_id, "sessionId": "s-1", "message": {"role": "user", "parts": [{"type": "text", "text": text}]}}


async def session(base: str) -> dict:
    client = A2AClient(A2ACardResolver(base).get_agent_card())                           # card, once
    events = [event.result async for event in client.send_task_streaming(task("t-1", "run"))]  # sendSubscribe
    answers = [type(event).__name__ for event in events]
    last = next(event for event in reversed(events) if hasattr(event, "status"))
    if last.status.state not in TERMINAL:
        answers.append((await client.get_task({"id": "t-1"})).result.status.state)
    sent = (await client.send_task(task("t-2", "again"))).result                         # tasks/send
    answers.append(sent.status.state)
    if sent.status.state not in TERMINAL:
        await client.cancel_task({"id": "t-2"})
    return {"task": "t-1", "answers": answers}


if __name__ == "__main__":
    print(json.dumps(asyncio.run(session(sys.argv[1]))))
