"""`@pytest.mark.a2a_capture`: a test's A2A traffic kept beside the test, as pytest-recording keeps
cassettes: `tests/captures/<module>/<test>.http`, written or answered by `--a2a-record-mode`:

- `none` (the default): the calls are answered from the capture by `serve`'s mock agents, and
  any other connection fails the test (CI never talks to a real agent); no capture fails too.
- `once`: as `none` when the capture exists; else the test talks to the agents and is recorded.
- `new_episodes`: the test talks to the agents; the capture is written again only when the session
  made a call it lacks, so a run that did nothing new leaves the file as it was.
- `all`: the test talks to the agents, and the capture is written again.

In every mode the client talks through a recorder (mitmdump), so the session asserted on is the one
this run made. A capture is written only when the test passed.
"""

from __future__ import annotations

import re
import socket
from dataclasses import dataclass, field
from pathlib import Path

MODES = ("none", "once", "new_episodes", "all")
#: the top note that says which marker agent a listener stood for (listener ports change per recording)
AGENT_NOTE = "a2a-capture pytest: agent {index} was reached at {origin}"
_AGENT_NOTE = re.compile(r"a2a-capture pytest: agent (\d+) was reached at (\S+)")
#: addresses a blocked test may still reach: the mock agents and recorders this plugin started
_LOCAL = frozenset({"127.0.0.1", "::1", "localhost"})


class CaptureMissing(Exception):
    """`none` mode without a capture to answer from."""


def capture_path(module: Path, test_name: str) -> Path:
    """`<the module's folder>/captures/<module>/<test>.http`; parameters kept, path characters not."""
    return module.parent / "captures" / module.stem / (re.sub(r"[^\w.\-\[\]]", "_", test_name) + ".http")


def replays(mode: str, path: Path) -> bool:
    """Whether the calls are answered from the stored capture (else they reach the agents)."""
    if mode == "none" and not path.is_file():
        raise CaptureMissing(f"no capture at {path} to answer from (--a2a-record-mode=none); record it once "
                             "with --a2a-record-mode=once")
    return mode == "none" or (mode == "once" and path.is_file())


def agent_origins(capture, count: int) -> list[str]:
    """Where the recording reached each of ``count`` marker agents, in marker order (the top notes;
    for a capture without them, the order its exchanges first reach each agent)."""
    from a2a_capture.replay.agents import recorded_agents

    noted = {int(m.group(1)): m.group(2) for m in map(_AGENT_NOTE.fullmatch, capture.notes) if m}
    met = [agent.origin for agent in recorded_agents(capture)]
    origins = [noted.get(index) for index in range(1, count + 1)]
    rest = iter(origin for origin in met if origin not in origins)
    return [origin or next(rest, "") for origin in origins]


def stored(session_path: Path, urls: list[str]):
    """The session as it is stored: with the notes that map marker agents to its listeners."""
    from a2a_capture.capture import read_capture

    capture = read_capture(session_path)
    notes = [note for note in capture.notes if not _AGENT_NOTE.fullmatch(note)]
    notes += [AGENT_NOTE.format(index=index, origin=url) for index, url in enumerate(urls, 1)]
    return capture.model_copy(update={"notes": notes})


def has_new_calls(session, old) -> bool:
    """Whether the session made a call the stored capture has no match for (as serve matches)."""
    from a2a_capture.replay.serve import mock_agents

    mocks = {mock.origin: mock for mock in mock_agents(old)}
    for mock in mock_agents(session):
        recorded = next(iter(mocks.values()), None) if len(mocks) == 1 else mocks.get(mock.origin)
        for item in mock.recorded:
            request = item.exchange.request
            if recorded is None or recorded.match(request.method, request.target, request.content)[0] is None:
                return True
    return False


class MockServers:
    """serve's mock agents on free 127.0.0.1 ports, in a thread of this process, for one test."""

    def __init__(self, agents) -> None:
        import threading

        import uvicorn

        self.agents = agents
        self._servers = [uvicorn.Server(uvicorn.Config(agent, host="127.0.0.1", port=0, log_level="warning",
                                                       lifespan="off")) for agent in agents]
        self._ready = threading.Event()
        self._thread = threading.Thread(target=self._run, name="a2a-capture mock agents", daemon=True)
        self._thread.start()
        if not self._ready.wait(20) or not all(server.started for server in self._servers):
            self.stop()
            raise RuntimeError("the mock agents did not start")
        for agent, server in zip(agents, self._servers, strict=True):
            host, port = server.servers[0].sockets[0].getsockname()[:2]
            agent.public = f"http://{host}:{port}"

    def _run(self) -> None:
        import asyncio

        async def serve() -> None:
            tasks = [asyncio.create_task(server.serve()) for server in self._servers]
            while not all(server.started for server in self._servers) and not any(t.done() for t in tasks):
                await asyncio.sleep(0.02)
            self._ready.set()
            await asyncio.gather(*tasks, return_exceptions=True)

        asyncio.run(serve())
        self._ready.set()

    @property
    def urls(self) -> list[str]:
        return [agent.public for agent in self.agents]

    def stop(self) -> None:
        for server in self._servers:
            server.should_exit = True
        self._thread.join(10)


@dataclass
class NetworkBlock:
    """Connections from this process fail, but to the listeners given: `none` mode's promise."""

    allowed: set[int]
    attempts: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        self._connect, self._connect_ex = socket.socket.connect, socket.socket.connect_ex

    def check(self, address) -> None:
        if not isinstance(address, tuple):  # a Unix socket: not the network
            return
        host, port = address[0], address[1]
        if host in _LOCAL and port in self.allowed:
            return
        attempt = f"{host}:{port}"
        self.attempts.append(attempt)
        raise NetworkBlocked(f"a2a-capture: a connection to {attempt} was blocked (--a2a-record-mode=none "
                             "answers only from the capture: the client must reach its agents at "
                             "a2a_capture.urls; record again with --a2a-record-mode=new_episodes or all)")

    def install(self) -> None:
        block = self

        def connect(sock, address):
            block.check(address)
            return block._connect(sock, address)

        def connect_ex(sock, address):
            block.check(address)
            return block._connect_ex(sock, address)

        socket.socket.connect, socket.socket.connect_ex = connect, connect_ex

    def uninstall(self) -> None:
        socket.socket.connect, socket.socket.connect_ex = self._connect, self._connect_ex

    def failure(self) -> str:
        return ("a2a-capture: the test tried the network in --a2a-record-mode=none: "
                + ", ".join(dict.fromkeys(self.attempts)) + "; only the capture's agents answer (a2a_capture.urls)")


class NetworkBlocked(ConnectionRefusedError):
    """A connection `none` mode does not allow (a ConnectionError, as clients expect of a refused one)."""
