"""Real parts for live tests: a2a-sdk agents in threads, mitmdump with the recorder addon.

Everything binds to 127.0.0.1. Servers stop when their context ends.
"""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import uvicorn

from a2a_capture.record import runner
from tests.agents import build_app

ROOT = Path(__file__).resolve().parent.parent


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


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


class Recorder:
    """mitmdump with the addon, as `a2a-capture record` starts it."""

    def __init__(self, output: Path, agents: list[tuple[str, int]] = (), proxy_port: int | None = None,
                 redact: bool = True, extra: list[str] | None = None) -> None:
        self.output = output
        self.agents = [(upstream, runner.Listener("127.0.0.1", port)) for upstream, port in agents]
        self.proxy = runner.Listener("127.0.0.1", proxy_port) if proxy_port else None
        args = runner.command(str(output), self.agents, self.proxy, redact=redact)
        self.process = subprocess.Popen([*args, *(extra or [])], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                        env={**os.environ, "PYTHONPATH": str(ROOT)})
        for listener in [listener for _, listener in self.agents] + ([self.proxy] if self.proxy else []):
            try:
                wait_for_port(listener.port)
            except TimeoutError:
                self.process.kill()
                raise AssertionError(f"mitmdump did not start: {self.process.stdout.read().decode()}") from None

    def stop(self) -> str:
        """Stop as Ctrl-C would; returns what mitmdump printed."""
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGINT)
            try:
                self.process.wait(20)
            except subprocess.TimeoutExpired:
                self.process.kill()
        return self.process.stdout.read().decode(errors="replace")

    def kill(self) -> None:
        self.process.send_signal(signal.SIGKILL)
        self.process.wait(10)

    def __enter__(self) -> Recorder:
        return self

    def __exit__(self, *exc) -> None:
        output = self.stop()
        if exc[0] is not None:
            sys.stderr.write(output)
