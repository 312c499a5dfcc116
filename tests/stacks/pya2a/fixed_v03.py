"""client.py's session on an agent of A2A 0.3, with the fixes its findings name in pya2a's API, run in the
stack's venv.

    python fixed_v03.py BASE_URL

A task is polled or canceled only if the agent's answer made it (a `result`, not an `error` nor a refused
stream: task-unknown). The card is asked for once (card-refetch), at 0.3's path
(`A2ACardResolver(base, agent_card_path=...)`; card-path has no pya2a fix in the table: its first
fetch comes before any call whose habits name pya2a). Its sends still use 0.1's names
(`tasks/sendSubscribe`, `tasks/send`: fixed in pya2a's request types, so no change to them speaks 0.3).
Prints {"task": the streamed task's id, "answers": [...]}.
"""

from __future__ import annotations

import asyncio
import json
import sys

from a2a.client import A2ACardResolver, A2AClient
from a2a.types import A2AClientHTTPError, TaskState

TERMINAL = {TaskState.COMPLETED, TaskState.CANCELED, TaskState.FAILED}


def task(task_id: str, text: str) -> dict:
    return {"id": task_id, "sessionId": "s-1", "message": {"role": "user", "parts": [{"type": "text", "text": text}]}}


async def session(base: str) -> dict:
    card = A2ACardResolver(base, agent_card_path="/.well-known/agent-card.json").get_agent_card()  # card, 0.3's path
    client = A2AClient(card)
    try:
        events = [event.result async for event in client.send_task_streaming(task("t-1", "run"))]  # sendSubscribe
        answers = [type(event).__name__ for event in events]
    except A2AClientHTTPError as error:  # an agent of another version answers JSON, not a stream: no task made
        events, answers = [], [error.status_code]
    last = next((event for event in reversed(events) if hasattr(event, "status")), None)
    if last is not None and last.status.state not in TERMINAL:
        answers.append((await client.get_task({"id": "t-1"})).result.status.state)
    sent = await client.send_task(task("t-2", "again"))                                  # tasks/send
    answers.append(sent.result.status.state if sent.result is not None else sent.error.code)
    if sent.result is not None and sent.result.status.state not in TERMINAL:
        await client.cancel_task({"id": "t-2"})
    answers.append(card.name)
    return {"task": "t-1", "answers": answers}


if __name__ == "__main__":
    print(json.dumps(asyncio.run(session(sys.argv[1]))))
