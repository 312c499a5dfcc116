"""Record the example captures again, from real a2a-sdk 1.3.0 agents and real clients.

    python captures/record.py            # writes captures/*.http
    python captures/record.py --out DIR  # somewhere else

Three agents run on 127.0.0.1 (test-runner: streaming and push; code-reviewer: streaming;
deployer: declares a bearer token), each behind its own recorder listener (reverse mode),
plus a forward-proxy listener that the agents' webhooks pass through. Each scenario is a
separate capture of one client run: `a2a-capture analyze --each-file captures/*.http` reads each
as a session of its own (without --each-file they form one session).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import sys
import time
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from a2a.client import ClientConfig, create_client  # noqa: E402
from a2a.types import (  # noqa: E402
    CancelTaskRequest,
    GetTaskRequest,
    Message,
    Part,
    Role,
    SendMessageRequest,
    TaskPushNotificationConfig,
)

from tests.live import Recorder, agent, serve  # noqa: E402

PORTS = {"test-runner": (41241, 51241), "code-reviewer": (41242, 51242), "deployer": (41243, 51243)}
PROXY_PORT, HOOK_PORT = 51250, 41250
#: a fixed redaction key, so markers are the same from run to run (never use a fixed key for real secrets)
REDACT_KEY = "a2a-capture-examples"


def url(name: str) -> str:
    return f"http://127.0.0.1:{PORTS[name][1]}"


def message(text: str, message_id: str, task_id: str | None = None) -> SendMessageRequest:
    msg = Message(message_id=message_id, role=Role.ROLE_USER, parts=[Part(text=text)])
    if task_id:
        msg.task_id = task_id
    return SendMessageRequest(message=msg)


async def discovery(http):
    for name in PORTS:
        await create_client(url(name), ClientConfig(httpx_client=http))


async def blocking_send(http):
    client = await create_client(url("test-runner"), ClientConfig(httpx_client=http, streaming=False))
    [event async for event in client.send_message(message("run the unit tests", "blocking-1"))]


async def streaming(http):
    client = await create_client(url("test-runner"), ClientConfig(httpx_client=http))
    [event async for event in client.send_message(message("run the unit tests", "stream-1"))]


async def polling(http):
    client = await create_client(url("test-runner"), ClientConfig(httpx_client=http, streaming=False, polling=True))
    events = [event async for event in client.send_message(message("slow: run the full suite", "poll-1"))]
    task_id = events[0].task.id
    for _ in range(100):
        task = await client.get_task(GetTaskRequest(id=task_id, history_length=0))
        if task.status.state in (3, 4, 5, 7):  # completed, failed, canceled, rejected
            break
        await asyncio.sleep(0.25)


async def input_required(http):
    client = await create_client(url("code-reviewer"), ClientConfig(httpx_client=http, streaming=False))
    events = [event async for event in client.send_message(message("review with input", "review-1"))]
    task = events[0].task
    follow = message("main", "review-2", task.id)
    follow.message.context_id = task.context_id
    [event async for event in client.send_message(follow)]


async def cancel(http):
    client = await create_client(url("test-runner"), ClientConfig(httpx_client=http, streaming=False, polling=True))
    events = [event async for event in client.send_message(message("slow: the full suite", "cancel-1"))]
    await client.cancel_task(CancelTaskRequest(id=events[0].task.id))


async def push_webhook(http):
    config = TaskPushNotificationConfig(url=f"http://127.0.0.1:{HOOK_PORT}/a2a-events", token="run-0001")
    config.authentication.scheme = "Bearer"
    config.authentication.credentials = "hook-secret"
    client = await create_client(url("test-runner"), ClientConfig(httpx_client=http, streaming=False, polling=True,
                                                                  push_notification_config=config))
    [event async for event in client.send_message(message("run the unit tests", "push-1"))]
    await asyncio.sleep(1.0)  # the webhooks arrive after the answer


async def rest_binding(http):
    client = await create_client(url("test-runner"), ClientConfig(
        httpx_client=http, streaming=False, supported_protocol_bindings=["HTTP+JSON"]))
    events = [event async for event in client.send_message(message("run the unit tests", "rest-1"))]
    await client.get_task(GetTaskRequest(id=events[0].task.id))


async def mistakes(http):
    """The usual client mistakes, each one round trip the card had already answered."""
    base = url("test-runner")
    await http.get(f"{base}/.well-known/agent.json")                                   # wrong card path
    await http.get(f"{base}/.well-known/agent-card.json")
    rpc = f"{base}/a2a/jsonrpc"
    hello = {"messageId": "mistake-1", "role": "ROLE_USER", "parts": [{"text": "run the unit tests"}]}
    await http.post(rpc, json={"jsonrpc": "2.0", "id": 1, "method": "SendMessage",       # no A2A-Version
                               "params": {"message": hello}})
    await http.post(rpc, headers={"A2A-Version": "1.0"},                               # a 0.3 method name
                    json={"jsonrpc": "2.0", "id": 2, "method": "message/send", "params": {"message": hello}})
    done = await http.post(rpc, headers={"A2A-Version": "1.0"}, json={
        "jsonrpc": "2.0", "id": 3, "method": "SendMessage",
        "params": {"message": {**hello, "messageId": "mistake-2"}}})
    task_id = done.json()["result"]["task"]["id"]
    await http.post(rpc, headers={"A2A-Version": "1.0"},                               # a poll of a finished task
                    json={"jsonrpc": "2.0", "id": 4, "method": "GetTask", "params": {"id": task_id}})
    reviewer = url("code-reviewer")
    await http.get(f"{reviewer}/.well-known/agent-card.json")
    await http.post(f"{reviewer}/a2a/jsonrpc", headers={"A2A-Version": "1.0"}, json={         # push, no push
        "jsonrpc": "2.0", "id": 5, "method": "CreateTaskPushNotificationConfig",
        "params": {"taskId": task_id, "url": f"http://127.0.0.1:{HOOK_PORT}/a2a-events"}})
    deployer = url("deployer")
    await http.get(f"{deployer}/.well-known/agent-card.json")
    await http.post(f"{deployer}/a2a/jsonrpc", headers={"A2A-Version": "1.0"}, json={         # no token
        "jsonrpc": "2.0", "id": 6, "method": "SendMessage",
        "params": {"message": {**hello, "messageId": "mistake-3"}}})


SCENARIOS = {
    "01-discovery": discovery,
    "02-blocking-send": blocking_send,
    "03-streaming": streaming,
    "04-polling": polling,
    "05-input-required": input_required,
    "06-cancel": cancel,
    "07-push-webhook": push_webhook,
    "08-rest-binding": rest_binding,
    "09-mistakes": mistakes,
}


async def _hook(scope, receive, send):
    """The client's push endpoint: takes a webhook, answers 200."""
    while (await receive()).get("more_body"):
        pass
    await send({"type": "http.response.start", "status": 200, "headers": [(b"content-type", b"text/plain")]})
    await send({"type": "http.response.body", "body": b"ok"})


async def _client_session(scenario) -> None:
    async with httpx.AsyncClient(timeout=30) as http:
        await scenario(http)


def record(out: Path, only: list[str]) -> None:
    out.mkdir(parents=True, exist_ok=True)
    proxy = f"http://127.0.0.1:{PROXY_PORT}"
    with contextlib.ExitStack() as stack:
        stack.enter_context(serve(_hook, HOOK_PORT))
        upstreams = {}
        for name, (port, _) in PORTS.items():
            options = {"streaming": name != "deployer", "push": name == "test-runner",
                       "bearer": name == "deployer", "push_proxy": proxy, "step": 0.05}
            upstreams[name] = stack.enter_context(agent(name, port, **options))
        for scenario, run in SCENARIOS.items():
            if only and scenario not in only:
                continue
            path = out / f"{scenario}.http"
            path.unlink(missing_ok=True)
            pairs = [(upstreams[name], listen) for name, (_, listen) in PORTS.items()]
            with Recorder(path, pairs, proxy_port=PROXY_PORT, extra=["--set", f"a2a_redact_key={REDACT_KEY}"]):
                asyncio.run(_client_session(run))
                time.sleep(0.3)
            print(f"recorded {path}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", type=Path, default=Path(__file__).resolve().parent)
    parser.add_argument("scenarios", nargs="*", help=f"which to record (default: all): {', '.join(SCENARIOS)}")
    args = parser.parse_args()
    record(args.out, args.scenarios)


if __name__ == "__main__":
    main()
