"""A running recorder: mitmdump with the addon, as `a2a-capture record` starts it.

For programs and tests that record in the background: start, use the listeners, stop.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import time
from pathlib import Path

from a2a_capture.record import runner


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


class RecorderProcess:
    """mitmdump with the recorder addon, listening on 127.0.0.1."""

    def __init__(self, output: str | os.PathLike, agents: list[tuple[str, int]] = (),
                 proxy_port: int | None = None, redact: bool = True, extra: list[str] | None = None,
                 env: dict[str, str] | None = None) -> None:
        self.output = Path(output)
        self.agents = [(upstream, runner.Listener("127.0.0.1", port)) for upstream, port in agents]
        self.proxy = runner.Listener("127.0.0.1", proxy_port) if proxy_port else None
        args = runner.command(str(self.output), self.agents, self.proxy, redact=redact)
        self.process = subprocess.Popen([*args, *(extra or [])], stdout=subprocess.PIPE,
                                        stderr=subprocess.STDOUT, env=env)
        try:
            runner.wait_until_listening([listener for _, listener in self.agents]
                                        + ([self.proxy] if self.proxy else []), self.process)
        except runner.RecordError:
            self.process.kill()
            output = self.process.stdout.read().decode(errors="replace")
            raise runner.RecordError(f"mitmdump did not start: {output.strip()[-500:]}") from None

    @property
    def urls(self) -> list[str]:
        return [f"http://{listener}" for _, listener in self.agents]

    def stop(self) -> str:
        """Stop as Ctrl-C would (every finished exchange is written); returns what mitmdump printed."""
        if self.process.poll() is None:
            time.sleep(0.05)  # let the last responses reach the addon
            self.process.send_signal(signal.SIGINT)
            try:
                self.process.wait(20)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        if self.process.stdout is None or self.process.stdout.closed:
            return ""
        with self.process.stdout:
            return self.process.stdout.read().decode(errors="replace")

    def kill(self) -> None:
        self.process.send_signal(signal.SIGKILL)
        self.process.wait(10)
        if self.process.stdout is not None:
            self.process.stdout.close()

    def __enter__(self) -> RecorderProcess:
        return self

    def __exit__(self, *exc) -> None:
        self.stop()
