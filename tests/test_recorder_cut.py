"""A response the agent cut mid-chunk reaches the client cut, as it would direct (no 502 of the
proxy's), and the capture keeps the bytes that came with a note that `show` and `analyze` surface:
the agent's close is the exchange's outcome.

A real mitmdump with the addon in front of a small hand-written HTTP/1.1 agent (no ASGI server can
be made to cut a chunk); the client is httpx.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys

import httpx
import pytest

from a2a_capture.capture import read_capture
from tests.live import ROOT, Recorder, free_port
from tests.stream_server import StreamServer

pytestmark = pytest.mark.live

#: what the agent sends of its answer before it closes: 42 bytes of a chunk of 100
ARRIVED = b'{"jsonrpc": "2.0", "id": 1, "result": {"ta'


class CuttingAgent(StreamServer):
    """Answers a POST with 200, chunked, and closes its connection 42 bytes into a 100-byte chunk."""

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        head = await reader.readuntil(b"\r\n\r\n")
        length = next((int(line.split(b":")[1]) for line in head.split(b"\r\n")
                       if line.lower().startswith(b"content-length:")), 0)
        await reader.readexactly(length)
        writer.write(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n"
                     + b"64\r\n" + ARRIVED)
        await writer.drain()
        await asyncio.sleep(0.2)
        writer.close()


SEND = {"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": {"message": {
    "messageId": "m-1", "role": "ROLE_USER", "parts": [{"text": "run"}]}}}


def _call(base: str) -> tuple[str, bytes, int | None]:
    """What the client got: the failure's kind, the body bytes it read before it, the status."""
    got, status = b"", None
    try:
        with httpx.Client(timeout=10) as http, \
                http.stream("POST", f"{base}/a2a/jsonrpc", json=SEND, headers={"A2A-Version": "1.0"}) as answer:
            status = answer.status_code
            for chunk in answer.iter_raw():
                got += chunk
    except httpx.TransportError as error:
        return type(error).__name__, got, status
    return "complete", got, status


def test_a_response_cut_mid_chunk_reaches_the_client_cut_and_is_recorded_with_its_bytes(tmp_path):
    output = tmp_path / "cut.http"
    listen = free_port()
    with CuttingAgent() as agent:
        upstream = f"http://127.0.0.1:{agent.port}"
        direct = _call(upstream)
        with Recorder(output, [(upstream, listen)]):
            proxied = _call(f"http://127.0.0.1:{listen}")
    assert direct == ("RemoteProtocolError", ARRIVED, 200)
    assert proxied == direct  # cut as it came, not a 502 of the proxy's
    exchange = read_capture(output).exchanges[0]
    assert exchange.response.status == 200
    assert exchange.response.body == ARRIVED
    assert any(note.startswith("error: the agent closed the connection after part of the response")
               for note in exchange.notes)
    env = {"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"}
    show = subprocess.run([sys.executable, "-m", "a2a_capture.cli", "show", str(output)], capture_output=True,
                          text=True, env=env, timeout=60)
    assert "closed by the agent mid-response" in show.stdout, show.stdout + show.stderr
    analyzed = subprocess.run([sys.executable, "-m", "a2a_capture.cli", "analyze", "--format", "json",
                               "--fail-on", "never", str(output)], capture_output=True, text=True, env=env,
                              timeout=60)
    summary = json.loads(analyzed.stdout)["summary"]
    assert summary["errors"] == 1, summary  # the agent's close counted as its error
