"""client.py's session with the poll-terminal fix its finding names in fasta2a's API, run in the stack's venv.

    python fixed.py BASE_URL

The same A2AClient, stream and send; the streamed task is polled only while the state its events
carry (`status_update`'s `status.state`, or the `task`'s) is not terminal: its stream shows it
completed, so no tasks/get. fasta2a's client still spells its calls in 0.3 (fixed_v1.py has that fix).
Prints {"task": the streamed task's id, "answers": [...]}.
"""

from __future__ import annotations

import asyncio
import json
import sys

import httpx
from client import fetch_card, message, task_of
from fasta2a.client import A2AClient

TERMINAL = {"completed", "canceled", "failed", "rejected"}


def state_of(event: dict) -> str | None:
    result = event.get("result") or {}
    status = (result.get("status_update") or result.get("task") or {}).get("status") or {}
    return status.get("state")


async def session(base: str) -> dict:
    client = A2AClient(fetch_card(base), http_client=httpx.AsyncClient(timeout=30))      # card
    events = [event async for event in client.stream_message(message("run"))]         # message/stream
    task = next(task_of(event) for event in events if task_of(event))
    state = [state_of(event) for event in events if state_of(event)][-1]
    answers = [sorted(event) for event in events]
    answers.append(sorted(await client.send_message(message("question"))))            # message/send
    if state not in TERMINAL:
        answers.append(sorted(await client.get_task(task)))                            # not reached: it completed
    await client.http_client.aclose()
    return {"task": task, "answers": answers}


if __name__ == "__main__":
    print(json.dumps(asyncio.run(session(sys.argv[1]))))
