"""The analyzer on real traffic: an a2a-sdk 1.3.0 client and a plain httpx client talking to
a2a-sdk agents through the recorder, with the findings that traffic must produce."""

from __future__ import annotations

import asyncio
import contextlib

import httpx
import pytest
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

pytestmark = pytest.mark.live


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


def test_a_03_client_on_an_agent_that_also_serves_03_is_judged_by_03_rules(tmp_path):
    """a2a-sdk's 0.3 compatibility: a hybrid card, 0.3 method names and shapes, no A2A-Version."""
    from a2a.server.request_handlers import DefaultRequestHandler
    from a2a.server.routes import create_agent_card_routes, create_jsonrpc_routes
    from a2a.server.tasks import InMemoryTaskStore
    from a2a.types import AgentCapabilities, AgentCard, AgentInterface, AgentSkill
    from starlette.applications import Starlette

    from tests.agents import ScriptedExecutor
    from tests.live import serve

    port, listen = free_port(), free_port()
    rpc = f"http://127.0.0.1:{port}/rpc"
    card = AgentCard(
        name="legacy", description="serves 1.0 and 0.3", version="1", capabilities=AgentCapabilities(streaming=True),
        supported_interfaces=[AgentInterface(url=rpc, protocol_binding="JSONRPC", protocol_version="1.0"),
                              AgentInterface(url=rpc, protocol_binding="JSONRPC", protocol_version="0.3")],
        default_input_modes=["text/plain"], default_output_modes=["text/plain"],
        skills=[AgentSkill(id="s", name="s", description="d", tags=["t"])])
    handler = DefaultRequestHandler(agent_executor=ScriptedExecutor(), task_store=InMemoryTaskStore(), agent_card=card)
    app = Starlette(routes=[*create_agent_card_routes(card),
                            *create_jsonrpc_routes(handler, "/rpc", enable_v0_3_compat=True)])
    output = tmp_path / "compat.http"
    with serve(app, port) as url, Recorder(output, [(url, listen)]), httpx.Client() as http:
        base = f"http://127.0.0.1:{listen}"
        http.get(f"{base}/.well-known/agent-card.json")
        message = {"kind": "message", "messageId": "m1", "role": "user", "parts": [{"kind": "text", "text": "run"}]}
        sent = http.post(f"{base}/rpc", json={"jsonrpc": "2.0", "id": 1, "method": "message/send",
                                              "params": {"message": message}})
        http.post(f"{base}/rpc", json={"jsonrpc": "2.0", "id": 2, "method": "tasks/get",
                                       "params": {"id": sent.json()["result"]["id"]}})
    analysis = analyze([output])
    assert [(f.exchange, f.rule) for f in analysis.findings] == [("3", "poll-terminal")]
    assert [c.version for c in analysis.calls] == [None, "0.3", "0.3"]
    assert analysis.calls[1].states == ["TASK_STATE_COMPLETED"]
