"""`a2a-capture record ... -- COMMAND`: one CI step records a real client run and gates on it.

Real mitmdump with the addon, a real a2a-sdk agent, and the a2a-sdk client run as the command.
"""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from a2a_capture.capture import read_capture
from tests.live import ROOT, agent, free_port

#: an a2a-sdk client session against the first listener (or through the proxy), then exit N
CLIENT = """
import asyncio, os, sys
import httpx
import pytest
from a2a.client import ClientConfig, create_client
from a2a.types import Message, Part, Role, SendMessageRequest

async def main():
    base = os.environ.get("A2A_CAPTURE_LISTENERS", "").split(" ")[0] or sys.argv[2]
    async with httpx.AsyncClient() as http:  # trusts the environment: HTTP_PROXY in proxy mode
        client = await create_client(base, ClientConfig(httpx_client=http))
        request = SendMessageRequest(message=Message(message_id="m-1", role=Role.ROLE_USER, parts=[Part(text="run")]))
        [event async for event in client.send_message(request)]

asyncio.run(main())
sys.exit(int(sys.argv[1]))
"""

pytestmark = pytest.mark.live


def _record(*args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    for name in ("HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy", "NO_PROXY", "no_proxy"):
        env.pop(name, None)
    return subprocess.run([sys.executable, "-m", "a2a_capture.cli", "record", *args], capture_output=True,
                          text=True, env=env, timeout=120)


def test_record_around_a_client_run_passes_its_exit_status_through(tmp_path):
    output = tmp_path / "ci.http"
    with agent("test-runner") as upstream:
        done = _record("--agent", upstream, "--listen", f"127.0.0.1:{free_port()}", "-o", str(output),
                       "--", sys.executable, "-c", CLIENT, "3")
    assert done.returncode == 3, done.stderr
    assert "wrote 2 exchanges" in done.stderr
    assert [e.title for e in read_capture(output).exchanges] == ["discover test-runner", "SendStreamingMessage"]


def test_record_with_check_analyzes_the_capture_after_the_command(tmp_path):
    output = tmp_path / "gate.http"
    with agent("test-runner") as upstream:
        done = _record("--agent", upstream, "--listen", f"127.0.0.1:{free_port()}", "-o", str(output),
                       "--fail-on", "error", "--", sys.executable, "-c", CLIENT, "0")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "2 exchanges" in done.stdout  # the analysis summary


def test_forward_proxy_mode_gives_the_command_http_proxy(tmp_path):
    output = tmp_path / "proxied.http"
    with agent("test-runner") as upstream:
        done = _record("--proxy", f"127.0.0.1:{free_port()}", "-o", str(output),
                       "--", sys.executable, "-c", CLIENT, "0", upstream)
    assert done.returncode == 0, done.stderr
    exchanges = read_capture(output).exchanges
    assert [e.title for e in exchanges] == ["discover test-runner", "SendStreamingMessage"]


def test_an_empty_recording_is_an_error_with_its_likely_cause(tmp_path):
    output = tmp_path / "empty.http"
    done = _record("--proxy", f"127.0.0.1:{free_port()}", "-o", str(output), "--", sys.executable, "-c", "pass")
    assert done.returncode == 2
    assert "no exchange was recorded" in done.stderr and "HTTP_PROXY" in done.stderr and "raw TCP" in done.stderr
    allowed = _record("--proxy", f"127.0.0.1:{free_port()}", "-o", str(output), "--allow-empty",
                      "--", sys.executable, "-c", "pass")
    assert allowed.returncode == 0, allowed.stderr
    for command in (["analyze", str(output)], ["check", str(output), "--baseline", str(tmp_path / "b.json")]):
        gate = subprocess.run([sys.executable, "-m", "a2a_capture.cli", *command], capture_output=True, text=True)
        assert gate.returncode == 2 and "no exchange in" in gate.stderr, (command, gate.stderr)
        assert len(gate.stderr.strip().splitlines()) == 1
        passed = subprocess.run([sys.executable, "-m", "a2a_capture.cli", *command, "--allow-empty"],
                                capture_output=True, text=True)
        assert passed.returncode == 0, (command, passed.stderr)
