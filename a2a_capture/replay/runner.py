"""Run mock agents with uvicorn, one listener per recorded agent."""

from __future__ import annotations

import asyncio
import contextlib

import uvicorn

from a2a_capture.errors import A2ACaptureError
from a2a_capture.record.runner import Listener, check_port_free
from a2a_capture.replay.serve import MockAgent


def assign(agents: list[MockAgent], listens: list[str]) -> list[tuple[MockAgent, Listener]]:
    """Listeners by name (NAME=HOST:PORT) or by order; agents without one get a free port."""
    named, ordered = {}, []
    for item in listens:
        name, sep, where = item.rpartition("=")
        if sep:
            named[name] = Listener.parse(where, "--listen")
        else:
            ordered.append(Listener.parse(item, "--listen"))
    unknown = set(named) - {a.name for a in agents} - {a.origin.split("://", 1)[-1] for a in agents}
    if unknown:
        raise A2ACaptureError(f"--listen names {', '.join(sorted(unknown))}, which the capture does not talk to; "
                              f"it has {', '.join(a.name for a in agents)}")
    pairs = []
    for agent in agents:
        listener = named.get(agent.name) or named.get(agent.origin.split("://", 1)[-1])
        if listener is None:
            listener = ordered.pop(0) if ordered else Listener("127.0.0.1", 0)
        pairs.append((agent, listener))
    return pairs


async def _serve(pairs: list[tuple[MockAgent, Listener]], echo) -> None:
    servers = []
    for agent, listener in pairs:
        if listener.port:
            check_port_free(listener)
            # known before the first request can arrive: a card served at once names this address
            agent.public = f"http://{listener.host}:{listener.port}"
        config = uvicorn.Config(agent, host=listener.host, port=listener.port, log_level="warning", lifespan="off")
        server = uvicorn.Server(config)
        servers.append((agent, server))
    tasks = [asyncio.create_task(server.serve()) for _, server in servers]
    while not all(server.started for _, server in servers):
        await asyncio.sleep(0.05)
    for agent, server in servers:
        host, port = server.servers[0].sockets[0].getsockname()[:2]
        agent.public = f"http://{host}:{port}"
        echo(f"serving {agent.name} ({len(agent.recorded)} recorded exchanges) at {agent.public}")
    echo("stop with Ctrl-C")
    await asyncio.gather(*tasks)


def serve_forever(agents: list[MockAgent], listens: list[str], echo=print) -> None:
    pairs = assign(agents, listens)
    with contextlib.suppress(KeyboardInterrupt):
        asyncio.run(_serve(pairs, echo))
