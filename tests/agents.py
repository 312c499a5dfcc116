"""Real A2A agents built with the reference SDK (a2a-sdk 1.3.0), for tests and example captures.

    python -m tests.agents --name test-runner --port 41241 --streaming --push

Each agent serves its card at /.well-known/agent-card.json, JSON-RPC at /a2a/jsonrpc and
HTTP+JSON under /a2a/rest, on 127.0.0.1 only. What it does depends on the message text:
"question" answers with a Message, "input" asks for input, "fail" fails, "slow" works for a
while (so it can be canceled or polled), its first artifact not before SLOW_START whatever the
agent's step; anything else streams a short log and completes.
"""

from __future__ import annotations

import argparse
import asyncio
import logging

import httpx
import uvicorn
from a2a.server.agent_execution import AgentExecutor, RequestContext
from a2a.server.events import EventQueue
from a2a.server.request_handlers import DefaultRequestHandler
from a2a.server.routes import create_agent_card_routes, create_jsonrpc_routes, create_rest_routes
from a2a.server.tasks import (
    BasePushNotificationSender,
    InMemoryPushNotificationConfigStore,
    InMemoryTaskStore,
    TaskUpdater,
)
from a2a.types import (
    AgentCapabilities,
    AgentCard,
    AgentInterface,
    AgentSkill,
    Message,
    Part,
    Role,
    Task,
    TaskState,
    TaskStatus,
)
from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.middleware.gzip import GZipMiddleware

HOST = "127.0.0.1"
#: seconds a "slow" task works before its first artifact, whatever the step: a CancelTask sent right
#: after the send (06-cancel's, 4 ms after) lands first even on a loaded machine (replayed against
#: 20 ms steps, it reached the agent 6-62 ms after the task started: after "line 0" in 22 of 100)
SLOW_START = 1.0


class ScriptedExecutor(AgentExecutor):
    """An agent whose behaviour the message text chooses, with small pauses between events."""

    def __init__(self, step: float = 0.02) -> None:
        self.step = step

    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        text = " ".join(part.text for part in context.message.parts if part.text) if context.message else ""
        if "question" in text and context.current_task is None:
            await event_queue.enqueue_event(Message(
                message_id=f"reply-{context.task_id}", context_id=context.context_id, role=Role.ROLE_AGENT,
                parts=[Part(text="I review diffs for risky changes.")]))
            return
        updater = TaskUpdater(event_queue, context.task_id, context.context_id)
        if context.current_task is None:
            await event_queue.enqueue_event(Task(
                id=context.task_id, context_id=context.context_id,
                status=TaskStatus(state=TaskState.TASK_STATE_SUBMITTED), history=[context.message]))
        slow = "slow" in text
        await updater.start_work()
        await asyncio.sleep(max(self.step, SLOW_START) if slow else self.step)
        if "input" in text and context.current_task is None:
            await updater.requires_input(updater.new_agent_message([Part(text="Which branch?")]))
            return
        if "fail" in text:
            await updater.failed(updater.new_agent_message([Part(text="the commit does not exist")]))
            return
        steps = 40 if slow else 3
        for index in range(steps):
            await updater.add_artifact([Part(text=f"line {index}\n")], artifact_id="log", name="log.txt",
                                       append=index > 0, last_chunk=index == steps - 1)
            await asyncio.sleep(self.step)
        await updater.complete(updater.new_agent_message([Part(text="done")]))

    async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
        updater = TaskUpdater(event_queue, context.task_id, context.context_id)
        await updater.cancel()


def agent_card(name: str, base: str, *, streaming: bool, push: bool, bearer: bool = False,
               skill_modes: bool = False) -> AgentCard:
    card = AgentCard(
        name=name,
        description=f"{name}: a scripted agent for a2a-capture's tests.",
        supported_interfaces=[
            AgentInterface(url=f"{base}/a2a/jsonrpc", protocol_binding="JSONRPC", protocol_version="1.0"),
            AgentInterface(url=f"{base}/a2a/rest", protocol_binding="HTTP+JSON", protocol_version="1.0"),
        ],
        version="1.0.0",
        capabilities=AgentCapabilities(streaming=streaming, push_notifications=push),
        default_input_modes=["text/plain"],
        default_output_modes=["text/plain"],
        skills=[AgentSkill(id="run", name="Run", description="Runs the job it is given.", tags=["test"])],
    )
    if skill_modes:  # clients that require them (fasta2a's) can read the card
        card.skills[0].input_modes.append("text/plain")
        card.skills[0].output_modes.append("text/plain")
    if bearer:
        card.security_schemes["bearer"].http_auth_security_scheme.scheme = "Bearer"
        card.security_requirements.add().schemes["bearer"].list.extend([])
    return card


def build_app(name: str, port: int, *, streaming: bool = True, push: bool = False, bearer: bool = False,
              public_base: str | None = None, step: float = 0.02, push_proxy: str | None = None,
              skill_modes: bool = False, card_path: str = "/.well-known/agent-card.json", extended: bool = False,
              gzip: bool = False, v03: bool = False) -> Starlette:
    """The agent as an ASGI app. ``public_base`` is the URL its card advertises; webhooks go
    through ``push_proxy`` when it is given (so a recorder sees them). ``card_path`` is where
    the card is served (older agents use /.well-known/agent.json); ``extended`` serves an
    extended card too; ``gzip`` compresses answers for clients that accept it; ``v03`` declares a 0.3
    JSON-RPC interface on the same path too (a2a-sdk's 0.3 compatibility: a hybrid card, 0.3 names
    taken), for clients built on a2a-sdk 0.3."""
    base = public_base or f"http://{HOST}:{port}"
    card = agent_card(name, base, streaming=streaming, push=push, bearer=bearer, skill_modes=skill_modes)
    if v03:
        card.supported_interfaces.append(AgentInterface(url=f"{base}/a2a/jsonrpc", protocol_binding="JSONRPC",
                                                        protocol_version="0.3"))
    extended_card = None
    if extended:
        card.capabilities.extended_agent_card = True
        extended_card = AgentCard()
        extended_card.CopyFrom(card)
        extended_card.skills.add(id="audit", name="Audit", description="For callers it knows.", tags=["test"])
    push_store = InMemoryPushNotificationConfigStore() if push else None
    handler = DefaultRequestHandler(
        agent_executor=ScriptedExecutor(step),
        task_store=InMemoryTaskStore(),
        agent_card=card,
        push_config_store=push_store,
        extended_agent_card=extended_card,
        # webhooks go to the test's own receiver on loopback, so no SSRF guard here
        push_sender=BasePushNotificationSender(httpx.AsyncClient(proxy=push_proxy), push_store,
                                               push_url_validator=_allow_any) if push else None,
    )
    routes = [*create_agent_card_routes(card, card_url=card_path),
              *create_jsonrpc_routes(handler, "/a2a/jsonrpc", enable_v0_3_compat=v03),
              *create_rest_routes(handler, path_prefix="/a2a/rest")]
    middleware = [Middleware(GZipMiddleware, minimum_size=64)] if gzip else []
    return Starlette(routes=routes, middleware=middleware)


async def _allow_any(url: str) -> bool:
    return True


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--name", default="test-runner")
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--streaming", action="store_true")
    parser.add_argument("--push", action="store_true")
    parser.add_argument("--bearer", action="store_true", help="declare a bearer token requirement in the card")
    parser.add_argument("--public-base", help="the URL the card advertises (default: this server)")
    args = parser.parse_args()
    logging.basicConfig(level=logging.WARNING)
    app = build_app(args.name, args.port, streaming=args.streaming, push=args.push, bearer=args.bearer,
                    public_base=args.public_base)
    uvicorn.run(app, host=HOST, port=args.port, log_level="warning")


if __name__ == "__main__":
    main()
