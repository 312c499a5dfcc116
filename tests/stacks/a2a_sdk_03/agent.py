"""An agent built with a2a-sdk 0.3 (its own JSON-RPC Starlette app), run in the stack's venv.

    python agent.py --port 41241 [--public-base URL] [--grpc-port 50051 [--grpc-public HOST:PORT]]

The card (0.3 shape) declares JSON-RPC at the root path; the app also serves the card at the
legacy /.well-known/agent.json. With --grpc-port the same handler is also served over gRPC
(0.3's `a2a.v1.A2AService`, plaintext), and the card prefers it: `url` is the gRPC `host:port`
(--grpc-public, else this server), JSON-RPC an additional interface. "question" answers with a
Message, "slow" works for a while, anything else streams a short log and completes. 127.0.0.1 only.
"""

from __future__ import annotations

import argparse
import asyncio

import uvicorn
from a2a.server.agent_execution import AgentExecutor, RequestContext
from a2a.server.apps import A2AStarletteApplication
from a2a.server.events import EventQueue
from a2a.server.request_handlers import DefaultRequestHandler
from a2a.server.tasks import InMemoryTaskStore, TaskUpdater
from a2a.types import AgentCapabilities, AgentCard, AgentInterface, AgentSkill, Part, TextPart
from a2a.utils import new_agent_text_message, new_task


class ScriptedExecutor(AgentExecutor):
    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        text = context.get_user_input()
        if "question" in text and context.current_task is None:
            await event_queue.enqueue_event(new_agent_text_message("I review diffs.", context.context_id))
            return
        task = context.current_task or new_task(context.message)
        if context.current_task is None:
            await event_queue.enqueue_event(task)
        updater = TaskUpdater(event_queue, task.id, task.context_id)
        await updater.start_work()
        steps = 40 if "slow" in text else 3
        for index in range(steps):
            await asyncio.sleep(0.02)
            await updater.add_artifact([Part(root=TextPart(text=f"line {index}\n"))], artifact_id="log",
                                       name="log.txt", append=index > 0, last_chunk=index == steps - 1)
        await updater.complete(updater.new_agent_message([Part(root=TextPart(text="done"))]))

    async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
        task = context.current_task
        await TaskUpdater(event_queue, task.id, task.context_id).cancel()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--public-base", help="the URL the card advertises (default: this server)")
    parser.add_argument("--grpc-port", type=int, help="serve gRPC here too, and prefer it in the card")
    parser.add_argument("--grpc-public", help="the gRPC host:port the card advertises (default: this server)")
    parser.add_argument("--name", default="sdk03")
    args = parser.parse_args()
    base = args.public_base or f"http://127.0.0.1:{args.port}"
    card = AgentCard(
        name=args.name, description="an a2a-sdk 0.3 agent for a2a-capture's tests", url=f"{base}/",
        version="1.0.0", protocol_version="0.3.0", preferred_transport="JSONRPC",
        capabilities=AgentCapabilities(streaming=True, push_notifications=False),
        default_input_modes=["text/plain"], default_output_modes=["text/plain"],
        skills=[AgentSkill(id="run", name="Run", description="Runs the job it is given.", tags=["test"])],
    )
    if args.grpc_port:
        card.url, card.preferred_transport = args.grpc_public or f"127.0.0.1:{args.grpc_port}", "GRPC"
        card.additional_interfaces = [AgentInterface(url=f"{base}/", transport="JSONRPC")]
    handler = DefaultRequestHandler(agent_executor=ScriptedExecutor(), task_store=InMemoryTaskStore())
    app = A2AStarletteApplication(agent_card=card, http_handler=handler).build()
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=args.port, log_level="warning"))
    asyncio.run(serve(server, card, handler, args.grpc_port))


async def serve(server: uvicorn.Server, card: AgentCard, handler: DefaultRequestHandler, grpc_port: int | None):
    """The card and JSON-RPC over HTTP; gRPC beside them when asked for (started first, so the
    HTTP port answering means both are up)."""
    if grpc_port:
        import grpc
        from a2a.grpc import a2a_pb2_grpc
        from a2a.server.request_handlers import GrpcHandler

        grpc_server = grpc.aio.server()
        a2a_pb2_grpc.add_A2AServiceServicer_to_server(GrpcHandler(card, handler), grpc_server)
        grpc_server.add_insecure_port(f"127.0.0.1:{grpc_port}")
        await grpc_server.start()
    await server.serve()


if __name__ == "__main__":
    main()
