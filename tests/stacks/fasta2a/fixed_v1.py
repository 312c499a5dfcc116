"""client.py's session with the method-version-mismatch fix its finding names in fasta2a's API, run in the
stack's venv.

    python fixed_v1.py BASE_URL

fasta2a's A2AClient fixes 0.3's names in its methods, so the calls to the 1.0 interface the card
declares go through the client's own `http_client`: 1.0 names (SendStreamingMessage, SendMessage), 1.0
enums, `A2A-Version: 1.0`, posted to the interface's url as the card states it (its methods post `/` under
a base URL httpx ends with a slash: `/a2a/jsonrpc/` for `/a2a/jsonrpc`). The stream's events carry the
task's state (1.0's TASK_STATE_COMPLETED), so it is not polled. Prints {"task": id, "answers": [...]}.
"""

from __future__ import annotations

import asyncio
import json
import sys
import uuid

import httpx
from client import fetch_card
from fasta2a.client import A2AClient

V1 = {"A2A-Version": "1.0"}
TERMINAL = {"TASK_STATE_COMPLETED", "TASK_STATE_CANCELED", "TASK_STATE_FAILED", "TASK_STATE_REJECTED"}


def request(method: str, text: str) -> dict:
    message = {"role": "ROLE_USER", "messageId": str(uuid.uuid4()), "parts": [{"text": text}]}
    return {"jsonrpc": "2.0", "id": str(uuid.uuid4()), "method": method, "params": {"message": message}}


async def session(base: str) -> dict:
    card = fetch_card(base)                                                            # card
    client, url = A2AClient(card, http_client=httpx.AsyncClient(timeout=30)), card["supported_interfaces"][0]["url"]
    async with client.http_client.stream("POST", url, json=request("SendStreamingMessage", "run"),
                                         headers=V1) as response:                      # SendStreamingMessage
        events = [json.loads(line[6:]) async for line in response.aiter_lines() if line.startswith("data: ")]
    results = [event["result"] for event in events]
    task = next(result["task"]["id"] for result in results if "task" in result)
    states = [(result.get("statusUpdate") or result.get("task"))["status"]["state"] for result in results
              if "statusUpdate" in result or "task" in result]
    answers = [sorted(result) for result in results]
    sent = await client.http_client.post(url, json=request("SendMessage", "question"), headers=V1)  # SendMessage
    answers.append(sorted(sent.json()["result"]))
    if states[-1] not in TERMINAL:
        answers.append(sorted((await client.http_client.post(url, headers=V1, json={
            "jsonrpc": "2.0", "id": str(uuid.uuid4()), "method": "GetTask", "params": {"id": task}})).json()))
    await client.http_client.aclose()
    return {"task": task, "answers": answers}


if __name__ == "__main__":
    print(json.dumps(asyncio.run(session(sys.argv[1]))))
