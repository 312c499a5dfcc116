"""An agent built with a2a-sdk 0.2 (its own JSON-RPC Starlette app), run in the stack's venv.

    python agent.py --port 41241 [--public-base URL]

The card (0.2 shape, protocolVersion 0.2.6) declares JSON-RPC at the root path and is served at
/.well-known/agent.json, the 0.2 path (0.2 knows no agent-card.json). Every message makes a task
that completes at once with one artifact; a cancel is refused (-32603). 127.0.0.1 only.
"""

from __future__ import annotations

import argparse

import uvicorn
from a2a.server.agent_execution import AgentExecutor, RequestContext
from a2a.server.apps import A2AStarletteApplication
from a2a.server.events import EventQueue
from a2a.server.request_handlers import DefaultRequestHandler
from a2a.server.tasks import InMemoryTaskStore, TaskUpdater
from a2a.types import AgentCapabilities, AgentCard, AgentSkill, Part, TextPart
from a2a.utils import new_task


class EchoExecutor(AgentExecutor):
    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        task = context.current_task or new_task(context.message)
        await event_queue.enqueue_event(task)
        updater = TaskUpdater(event_queue, task.id, task.contextId)
        await updater.add_artifact([Part(root=TextPart(text="echo"))])
        await updater.complete()

    async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
        raise RuntimeError("this agent cancels nothing")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--public-base")
    args = parser.parse_args()
    base = args.public_base or f"http://127.0.0.1:{args.port}"
    card = AgentCard(name="echo02", description="An a2a-sdk 0.2 agent.", url=f"{base}/", version="1.0.0",
                     capabilities=AgentCapabilities(streaming=True, pushNotifications=False),
                     defaultInputModes=["text/plain"], defaultOutputModes=["text/plain"],
                     skills=[AgentSkill(id="echo", name="Echo", description="Echoes.", tags=["test"])])
    handler = DefaultRequestHandler(EchoExecutor(), InMemoryTaskStore())
    app = A2AStarletteApplication(agent_card=card, http_handler=handler).build()
    uvicorn.run(app, host="127.0.0.1", port=args.port, log_level="warning")


if __name__ == "__main__":
    main()
