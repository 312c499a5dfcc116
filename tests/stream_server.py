"""An asyncio stream server in a thread of its own, on 127.0.0.1: the base of the small test
agents that write HTTP by hand to misbehave as real servers do (tests/closing_agent.py,
tests/reset_agent.py), which no ASGI server can be made to."""

from __future__ import annotations

import asyncio
import ssl
import threading
from typing import Self

from a2a_capture.record.process import free_port


class StreamServer:
    """Serves each connection with ``_serve`` while the context is open."""

    def __init__(self, tls: ssl.SSLContext | None = None) -> None:
        self.port = free_port()
        self._tls = tls

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        raise NotImplementedError

    def __enter__(self) -> Self:
        started = threading.Event()

        async def main() -> None:
            server = await asyncio.start_server(self._serve, "127.0.0.1", self.port, ssl=self._tls)
            self._stop = asyncio.Event()
            started.set()
            async with server:
                await self._stop.wait()

        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_until_complete, args=(main(),), daemon=True)
        self._thread.start()
        started.wait(10)
        return self

    def __exit__(self, *exc) -> None:
        self._loop.call_soon_threadsafe(self._stop.set)
        self._thread.join(10)
