"""A real a2a-sdk 1.3.0 agent served over gRPC (plaintext, 127.0.0.1), its card over HTTP.

The card declares one GRPC interface at `host:port`, as the proto says a gRPC url is.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
from pathlib import Path

import grpc
from a2a.server.request_handlers import DefaultRequestHandler
from a2a.server.request_handlers.grpc_handler import GrpcHandler
from a2a.server.routes import create_agent_card_routes
from a2a.server.tasks import InMemoryTaskStore
from a2a.types import AgentInterface, a2a_pb2_grpc
from starlette.applications import Starlette

from a2a_capture.record.process import free_port
from tests.agents import ScriptedExecutor, agent_card
from tests.live import serve


@contextlib.contextmanager
def grpc_agent(name: str = "grpc-runner", *, streaming: bool = True, push: bool = False,
               public: str | None = None, tls: tuple[Path, Path] | None = None):
    """Yields (card URL, gRPC port). ``public``: the `host:port` the card advertises for gRPC;
    ``tls``: (key, certificate) to serve gRPC over TLS."""
    port = free_port()
    card = agent_card(name, f"http://127.0.0.1:{port}", streaming=streaming, push=push)
    del card.supported_interfaces[:]
    card.supported_interfaces.append(AgentInterface(url=public or f"127.0.0.1:{port}", protocol_binding="GRPC",
                                                    protocol_version="1.0"))
    handler = DefaultRequestHandler(agent_executor=ScriptedExecutor(), task_store=InMemoryTaskStore(),
                                    agent_card=card)
    loop = asyncio.new_event_loop()
    started = threading.Event()
    stop: asyncio.Event | None = None

    async def run() -> None:
        nonlocal stop
        stop = asyncio.Event()
        server = grpc.aio.server()
        a2a_pb2_grpc.add_A2AServiceServicer_to_server(GrpcHandler(handler), server)
        if tls:
            credentials = grpc.ssl_server_credentials([(tls[0].read_bytes(), tls[1].read_bytes())])
            server.add_secure_port(f"127.0.0.1:{port}", credentials)
        else:
            server.add_insecure_port(f"127.0.0.1:{port}")
        await server.start()
        started.set()
        await stop.wait()
        await server.stop(grace=1)

    thread = threading.Thread(target=loop.run_until_complete, args=(run(),), daemon=True)
    thread.start()
    started.wait(30)
    try:
        with serve(Starlette(routes=create_agent_card_routes(card))) as card_url:
            yield card_url, port
    finally:
        loop.call_soon_threadsafe(stop.set)
        thread.join(10)
        loop.close()
