"""The analyzer on real traffic: an a2a-sdk 1.3.0 client and a plain httpx client talking to
a2a-sdk agents through the recorder, with the findings that traffic must produce."""

from __future__ import annotations

import asyncio
import contextlib

import httpx
from a2a.client import ClientConfig, create_client
from a2a.types import (
    GetTaskRequest,
    Message,
    Part,
    Role,
    SendMessageRequest,
    TaskPushNotificationConfig,
)

from a2a_capture.analyze.engine import analyze
from tests.live import Recorder, agent, free_port


def send(text: str, message_id: str) -> SendMessageRequest:
    return SendMessageRequest(message=Message(message_id=message_id, role=Role.ROLE_USER, parts=[Part(text=text)]))


def test_sdk_and_httpx_mistakes_are_found_on_real_traffic(tmp_path):
    output = tmp_path / "real.http"
    listen = free_port()
    with agent("reviewer", streaming=True, push=False) as upstream, Recorder(output, [(upstream, listen)]):
        base = f"http://127.0.0.1:{listen}"

        async def sdk_session():
            async with httpx.AsyncClient() as http:
                client = await create_client(base, ClientConfig(httpx_client=http))      # 1 card
                events = [e async for e in client.send_message(send("run", "m-1"))]      # 2 stream
                task_id = events[0].task.id
                await client.get_task(GetTaskRequest(id=task_id))                       # 3 poll-terminal
                again = await create_client(base, ClientConfig(httpx_client=http))       # 4 card-refetch
                with contextlib.suppress(Exception):                                     # 5 capability-push
                    await again.create_task_push_notification_config(
                        TaskPushNotificationConfig(task_id=task_id, url="http://127.0.0.1:9/hook"))
        asyncio.run(sdk_session())
        rpc = f"{base}/a2a/jsonrpc"
        message = {"messageId": "m-9", "role": "ROLE_USER", "parts": [{"text": "hi"}]}
        with httpx.Client() as http:
            http.post(rpc, json={"jsonrpc": "2.0", "id": 1, "method": "SendMessage",            # 6 no header
                                 "params": {"message": message}})
            http.post(rpc, headers={"A2A-Version": "1.0"},                                    # 7 0.3 name
                      json={"jsonrpc": "2.0", "id": 2, "method": "message/send", "params": {"message": message}})
            http.post(rpc, headers={"A2A-Version": "1.0"}, content=b'{"jsonrpc": "2.0", "method": ')  # 8 broken
    analysis = analyze([output])
    found = sorted((int(f.exchange), f.rule) for f in analysis.findings if f.severity.value != "info")
    assert found == [
        (3, "poll-terminal"),
        (4, "card-refetch"),
        (5, "capability-push"),
        (6, "version-header-missing"),
        (7, "method-version-mismatch"),
        (8, "malformed-request"),
    ], [(f.exchange, f.rule, f.message) for f in analysis.findings]
    push = next(f for f in analysis.findings if f.rule == "capability-push")
    assert push.related == ["4"]  # the card the client held then: the refetched one
    assert analysis.summary.wasted_round_trips == 6
    assert analysis.summary.wasted_seconds is not None and analysis.summary.wasted_seconds > 0
