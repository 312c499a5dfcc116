"""Run mock agents with uvicorn, one listener per recorded agent."""

from __future__ import annotations

import asyncio
import contextlib

import uvicorn

from a2a_capture.address import pair
from a2a_capture.record.runner import Listener, check_port_free
from a2a_capture.replay.serve import MockAgent
from a2a_capture.terminal import shown


def assign(agents: list[MockAgent], listens: list[tuple[str | None, Listener]]) -> list[tuple[MockAgent, Listener]]:
    """Listeners by NAME (the card's name or the recorded host:port) or by order, as
    address.pair pairs them; agents without one get a free port."""
    chosen = pair(listens, [[agent.name, agent.origin.split("://", 1)[-1]] for agent in agents], "--listen")
    return [(agent, listener or Listener("127.0.0.1", 0)) for agent, listener in zip(agents, chosen, strict=True)]


async def _serve(pairs: list[tuple[MockAgent, Listener]], echo) -> None:
    servers = []
    for agent, listener in pairs:
        if listener.port:
            check_port_free(listener)
            # known before the first request can arrive: a card served at once names this address
            agent.public = f"http://{listener}"
        config = uvicorn.Config(agent, host=listener.host, port=listener.port, log_level="warning", lifespan="off")
        server = uvicorn.Server(config)
        servers.append((agent, server))
    tasks = [asyncio.create_task(server.serve()) for _, server in servers]
    while not all(server.started for _, server in servers):
        await asyncio.sleep(0.05)
    for agent, server in servers:
        agent.public = f"http://{Listener(*server.servers[0].sockets[0].getsockname()[:2])}"
        echo(f"serving {shown(agent.name)} ({len(agent.recorded)} recorded exchanges) at {agent.public}")
    echo("stop with Ctrl-C")
    await asyncio.gather(*tasks)


def serve_forever(agents: list[MockAgent], listens: list[tuple[str | None, Listener]], echo=print) -> None:
    pairs = assign(agents, listens)
    with contextlib.suppress(KeyboardInterrupt):
        asyncio.run(_serve(pairs, echo))
