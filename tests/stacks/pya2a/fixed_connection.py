"""fixed.py's session, its connections kept: pya2a's types sent through one httpx client, run in the stack's venv.

    python fixed_connection.py BASE_URL

pya2a's A2AClient and A2ACardResolver take no HTTP client (each call opens its own: connection-per-request),
so the fix is outside them: the same requests, built with pya2a's request types (`SendTaskStreamingRequest`,
`SendTaskRequest`) and read with its response types, posted through one `httpx.AsyncClient` kept for the
session: the card, the stream and the send on one connection. Prints {"task": the streamed task's id,
"answers": [...]}.
"""

from __future__ import annotations

import asyncio
import json
import sys

import httpx
from a2a.types import AgentCard, SendTaskRequest, SendTaskResponse, SendTaskStreamingRequest, SendTaskStreamingResponse
from httpx_sse import aconnect_sse


def task(task_id: str, text: str) -> dict:
    return {"id": task_id, "sessionId": "s-1", "message": {"role": "user", "parts": [{"type": "text", "text": text}]}}


async def session(base: str) -> dict:
    async with httpx.AsyncClient(timeout=30) as http:
        card = AgentCard(**(await http.get(f"{base}/.well-known/agent.json")).json())          # card
        request = SendTaskStreamingRequest(params=task("t-1", "run"))
        async with aconnect_sse(http, "POST", card.url, json=request.model_dump()) as source:  # tasks/sendSubscribe
            events = [SendTaskStreamingResponse(**json.loads(sse.data)).result async for sse in source.aiter_sse()]
        answers = [type(event).__name__ for event in events]
        sent = SendTaskResponse(**(await http.post(card.url, json=SendTaskRequest(                # tasks/send
            params=task("t-2", "again")).model_dump())).json()).result
        answers.append(sent.status.state)
    return {"task": "t-1", "answers": answers}


if __name__ == "__main__":
    print(json.dumps(asyncio.run(session(sys.argv[1]))))
