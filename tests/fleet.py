"""A fleet of generated sessions, as a platform team's captures look: many clients, a few agents,
two weeks of days, each client with its own habits (and so its own wasted round trips).

    write_fleet(folder, sessions=1000)   # one recorded capture per session, in folders per day

Used by the export and cluster tests (a few sessions) and by bench/many.py (a thousand).
"""

from __future__ import annotations

import json
import random
import uuid
from datetime import UTC, datetime, timedelta
from pathlib import Path

from a2a_capture.capture import CaptureWriter, Exchange, ExchangeMeta, Request, Response
from a2a_capture.capture.models import format_time

#: agent -> (port, pushNotifications, streaming)
AGENTS = {"billing": (41301, False, True), "search": (41302, True, True), "planner": (41303, True, False)}

#: client -> its habit: refetch (the card before every message), poll (finished tasks),
#: push (asks for webhooks whatever the card says), careful (none)
CLIENTS = {"checkout-bot/2.1": "refetch", "support-ui/5.0": "poll", "nightly-eval/0.9": "push",
           "ledger-sync/1.4": "careful"}

#: the Monday of the first of the two weeks
FIRST_DAY = datetime(2026, 11, 16, tzinfo=UTC)


def write_fleet(folder: Path, sessions: int, seed: int = 15) -> list[Path]:
    """Write ``sessions`` captures under folder/<day>/; the second week has more polling clients."""
    rng = random.Random(seed)
    paths = []
    for index in range(sessions):
        day = FIRST_DAY + timedelta(days=index * 14 // sessions)
        week = (day - FIRST_DAY).days // 7
        weights = [3, 2 + 4 * week, 2, 3]  # support-ui's polling grows in the second week
        client = rng.choices(list(CLIENTS), weights)[0]
        agent = rng.choice(list(AGENTS))
        path = folder / day.strftime("%Y-%m-%d") / f"session-{index:05d}.http"
        path.parent.mkdir(parents=True, exist_ok=True)
        started = day + timedelta(hours=8, seconds=index * 37 % 30_000)
        path.write_bytes(session_capture(rng, client, agent, started))
        paths.append(path)
    return paths


def session_capture(rng: random.Random, client: str, agent: str, started: datetime, tasks: int | None = None) -> bytes:
    """One client's session with one agent: discovery, then a handful of tasks (or ``tasks``)."""
    session = _Session(rng, client, agent, started)
    session.card()
    for _ in range(tasks or rng.randint(3, 8)):
        if CLIENTS[client] == "refetch":
            session.card()
        session.task()
    writer = CaptureWriter()
    out = bytearray(writer.preamble(meta=[("format", "a2a-capture/1"), ("recorder", "a2a-capture 0.1.0")]))
    for exchange in session.exchanges:
        out += writer.block(exchange)
    return bytes(out)


class _Session:
    def __init__(self, rng: random.Random, client: str, agent: str, started: datetime) -> None:
        self.rng, self.client, self.agent, self.clock = rng, client, agent, started
        self.port, self.push, self.streaming = AGENTS[agent]
        self.exchanges: list[Exchange] = []

    def card(self) -> None:
        body = json.dumps({
            "name": self.agent, "description": f"{self.agent}: answers questions about {self.agent}.",
            "supportedInterfaces": [{"url": f"http://127.0.0.1:{self.port}/a2a", "protocolBinding": "JSONRPC",
                                     "protocolVersion": "1.0"}],
            "version": "3.1.0", "capabilities": {"streaming": self.streaming, "pushNotifications": self.push},
            "defaultInputModes": ["text/plain"], "defaultOutputModes": ["text/plain", "application/json"],
            "skills": [{"id": f"{self.agent}-{i}", "name": f"Skill {i}", "description": "Does one thing well.",
                        "tags": [self.agent]} for i in range(3)],
        }).encode()
        self._add("discover", "GET", "/.well-known/agent-card.json", b"", 200, body, "application/json", 0.004)

    def task(self) -> None:
        rng, task_id = self.rng, str(uuid.UUID(int=self.rng.getrandbits(128)))
        context_id = str(uuid.UUID(int=rng.getrandbits(128)))
        if CLIENTS[self.client] == "push" and rng.random() < 0.5:
            params = {"taskId": task_id, "url": "http://127.0.0.1:41390/hook", "id": "hook-1"}
            if self.push:
                result: dict = {"result": {"taskId": task_id, "pushNotificationConfig": params}}
            else:
                result = {"error": {"code": -32003, "message": "Push Notification is not supported"}}
            self._rpc("CreateTaskPushNotificationConfig", params, result, 0.003)
        message = {"messageId": str(uuid.UUID(int=rng.getrandbits(128))), "role": "ROLE_USER",
                   "parts": [{"text": "Summarize the account's last invoices. " * rng.randint(1, 20)}]}
        if self.streaming and rng.random() < 0.4:
            self._stream(task_id, context_id, message)
        else:
            task = _task(task_id, context_id, "TASK_STATE_COMPLETED", rng)
            self._rpc("SendMessage", {"message": message}, {"result": {"task": task}}, rng.uniform(0.05, 1.5))
        if CLIENTS[self.client] == "poll":
            for _ in range(rng.randint(1, 3)):
                task = _task(task_id, context_id, "TASK_STATE_COMPLETED", rng)
                self._rpc("GetTask", {"id": task_id}, {"result": task}, 0.002)

    def _stream(self, task_id: str, context_id: str, message: dict) -> None:
        frames = [{"task": _task(task_id, context_id, "TASK_STATE_WORKING", self.rng)}]
        frames += [{"artifactUpdate": {"taskId": task_id, "contextId": context_id, "append": i > 0,
                                       "artifact": {"artifactId": "answer", "parts": [{"text": f"part {i} " * 20}]}}}
                   for i in range(self.rng.randint(2, 12))]
        frames.append({"statusUpdate": {"taskId": task_id, "contextId": context_id,
                                        "status": {"state": "TASK_STATE_COMPLETED"}}})
        number = len(self.exchanges) + 1
        body = b"".join(b"data: " + json.dumps({"jsonrpc": "2.0", "id": number, "result": frame}).encode() + b"\n\n"
                        for frame in frames)
        request = {"jsonrpc": "2.0", "id": number, "method": "SendStreamingMessage", "params": {"message": message}}
        times = sorted(round(self.rng.uniform(0.01, 2.0), 6) for _ in frames)
        self._add("SendStreamingMessage", "POST", "/a2a", json.dumps(request).encode(), 200, body,
                  "text/event-stream", times[-1] + 0.01, times)

    def _rpc(self, method: str, params: dict, answer: dict, seconds: float) -> None:
        number = len(self.exchanges) + 1
        request = {"jsonrpc": "2.0", "id": number, "method": method, "params": params}
        body = json.dumps({"jsonrpc": "2.0", "id": number, **answer}).encode()
        self._add(method, "POST", "/a2a", json.dumps(request).encode(), 200, body, "application/json", seconds)

    def _add(self, title, method, target, body, status, answer, kind, seconds, times=None) -> None:
        start = self.clock + timedelta(seconds=self.rng.uniform(0.001, 0.05))
        end = start + timedelta(seconds=seconds)
        self.clock = end
        headers = [("Host", f"127.0.0.1:{self.port}"), ("User-Agent", self.client), ("A2A-Version", "1.0")]
        if body:
            headers += [("Content-Type", "application/json"), ("Content-Length", str(len(body)))]
        head = [("content-type", kind)] + ([] if times else [("content-length", str(len(answer)))])
        self.exchanges.append(Exchange(
            number=len(self.exchanges) + 1, title=title,
            meta=ExchangeMeta(start=format_time(start), end=format_time(end), client="127.0.0.1:50312",
                              server=f"127.0.0.1:{self.port}"),
            request=Request(method=method, target=target, headers=headers, body=body),
            response=Response(status=status, reason="OK", headers=head, body=answer, event_times=times or []),
        ))


def _task(task_id: str, context_id: str, state: str, rng: random.Random) -> dict:
    return {"id": task_id, "contextId": context_id, "status": {"state": state},
            "artifacts": [{"artifactId": f"answer-{i}", "parts": [{"text": "An answer line.\n" * rng.randint(1, 30)}]}
                          for i in range(rng.randint(0, 2))]}
