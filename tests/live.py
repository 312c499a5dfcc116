"""Real parts for live tests: a2a-sdk agents in threads, mitmdump with the recorder addon.

Everything binds to 127.0.0.1. Servers stop when their context ends.
"""

from __future__ import annotations

import contextlib
import os
import socket
import sys
import threading
import time
from pathlib import Path

import uvicorn

from a2a_capture.record.process import RecorderProcess, free_port
from tests.agents import build_app

ROOT = Path(__file__).resolve().parent.parent


def wait_for_port(port: int, timeout: float = 30) -> None:
    deadline = time.monotonic() + timeout
    while True:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.2):
                return
        except OSError:
            if time.monotonic() > deadline:
                raise TimeoutError(f"nothing listens on 127.0.0.1:{port}") from None
            time.sleep(0.05)


@contextlib.contextmanager
def serve(app, port: int | None = None):
    """Run an ASGI app with uvicorn in a thread; yields its base URL."""
    port = port or free_port()
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning", lifespan="off"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    wait_for_port(port)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(10)


@contextlib.contextmanager
def agent(name: str = "test-runner", port: int | None = None, **options):
    port = port or free_port()
    with serve(build_app(name, port, **options), port) as url:
        yield url


class Recorder(RecorderProcess):
    """The library's recorder process, with the checkout on the addon's import path."""

    def __init__(self, output: Path, agents=(), proxy_port: int | None = None, redact: bool = True,
                 extra: list[str] | None = None) -> None:
        super().__init__(output, agents, proxy_port, redact, extra, env={**os.environ, "PYTHONPATH": str(ROOT)})

    def __exit__(self, *exc) -> None:
        output = self.stop()
        if exc[0] is not None:
            sys.stderr.write(output)
