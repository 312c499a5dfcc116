"""A client session with fasta2a's own client, run in the stack's venv.

    python client.py BASE_URL

fasta2a's client fetches the card and then speaks 0.3 method names (message/stream, tasks/get,
message/send) to the interface the card declares, whatever version it declares, without
A2A-Version. It streams a message, sends another, then, when the stream named a task, polls that
task once more: the stream had shown it completed a whole round trip before, whatever the load.
Prints {"task": id or null, "answers": [...]} at the end (for a call the agent refused: its HTTP
status).
"""

from __future__ import annotations

import asyncio
import json
import sys
import uuid

import httpx
from fasta2a.client import A2AClient, UnexpectedResponseError
from fasta2a.schema import agent_card_ta


def message(text: str) -> dict:
    return {"role": "user", "message_id": str(uuid.uuid4()), "parts": [{"text": text}]}


def task_of(event: dict) -> str | None:
    result = event.get("result") or {}
    if "task" in result:
        return result["task"]["id"]
    update = result.get("status_update") or result.get("artifact_update") or {}
    return update.get("task_id")


def fetch_card(base: str) -> dict:
    """The card, fetched as ``A2AClient(base, fetch_card=True)`` fetches it, but with a timeout a
    loaded machine can meet (fasta2a's clients keep httpx's 5 s)."""
    response = httpx.get(base.rstrip("/") + "/.well-known/agent-card.json", timeout=30)
    response.raise_for_status()
    return agent_card_ta.validate_python(response.json())


async def session(base: str) -> dict:
    client = A2AClient(fetch_card(base), http_client=httpx.AsyncClient(timeout=30))      # card
    events = [event async for event in client.stream_message(message("run"))]         # message/stream
    tasks = {task_of(event) for event in events} - {None}
    task = tasks.pop() if tasks else None
    answers = [sorted(event) for event in events]
    try:
        answers.append(sorted(await client.send_message(message("question"))))        # message/send
    except UnexpectedResponseError as error:
        answers.append(error.status_code)
    if task is not None:
        answers.append(sorted(await client.get_task(task)))                            # tasks/get, task ended
    await client.http_client.aclose()
    return {"task": task, "answers": answers}


if __name__ == "__main__":
    print(json.dumps(asyncio.run(session(sys.argv[1]))))
