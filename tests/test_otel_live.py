"""`record --otel`: spans reach a real OTLP/HTTP receiver while a real mitmdump records an a2a-sdk
client talking to an a2a-sdk agent."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys

import httpx
import pytest

from a2a_capture.capture import read_capture
from a2a_capture.otel.shape import nanoseconds
from tests.live import ROOT, agent, follow, free_port, wait_for_line, wait_for_port
from tests.otlp_receiver import attributes, receiver

pytestmark = pytest.mark.live

TRACE_ID, PARENT_ID = "0af7651916cd43dd8448eb211c80319c", "b7ad6b7169203331"


async def _client_session(base: str) -> None:
    """An a2a-sdk client whose every request carries the application's W3C traceparent."""
    from a2a.client import ClientConfig, create_client
    from a2a.types import Message, Part, Role, SendMessageRequest

    headers = {"traceparent": f"00-{TRACE_ID}-{PARENT_ID}-01"}
    async with httpx.AsyncClient(headers=headers, trust_env=False) as http:
        client = await create_client(base, ClientConfig(httpx_client=http))
        message = Message(message_id="otel-1", role=Role.ROLE_USER, parts=[Part(text="run")])
        request = SendMessageRequest(message=message)
        [event async for event in client.send_message(request)]


def _environment() -> dict[str, str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    for name in ("HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy"):
        env.pop(name, None)
    return env


def test_spans_reach_the_collector_while_the_recording_runs(tmp_path):
    output, listen = tmp_path / "live.http", free_port()
    with receiver() as (url, received), agent("test-runner") as upstream:
        process = subprocess.Popen([sys.executable, "-m", "a2a_capture.cli", "record", "--otel", url, "--agent",
                                    upstream, "--listen", f"127.0.0.1:{listen}", "-o", str(output)],
                                   stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=_environment())
        lines = follow(process.stderr)
        seen: list[str] = []
        try:
            wait_for_port(listen)
            asyncio.run(_client_session(f"http://127.0.0.1:{listen}"))
            assert received.wait_for(lambda spans: any(s.name == "SendStreamingMessage" for s in spans))
            assert process.poll() is None  # the spans came while recording
            assert not any(s.name == "a2a-capture session" for s in received.spans)  # the root ends at the end
        finally:
            process.send_signal(signal.SIGTERM)
            process.wait(timeout=30)
        note = wait_for_line(lines, r"otel: (\d+) spans exported", seen)
        assert received.wait_for(lambda spans: any(s.name == "a2a-capture session" for s in spans), timeout=5)
    exchanges = read_capture(output).exchanges
    assert [e.title for e in exchanges] == ["discover test-runner", "SendStreamingMessage"]
    spans = {attributes(s).get("a2a_capture.exchange"): s for s in received.spans}
    root = spans.pop(None)
    assert int(note.group(1)) == len(received.spans) == len(exchanges) + 1
    assert "dropped" not in note.string
    for exchange in exchanges:
        span = spans[exchange.label]
        assert span.start_time_unix_nano == nanoseconds(exchange.meta.start)
        assert span.end_time_unix_nano == nanoseconds(exchange.meta.end)
        # the client sent a traceparent: its spans are children of the client's own span
        assert (span.trace_id.hex(), span.parent_span_id.hex()) == (TRACE_ID, PARENT_ID)
    stream = spans["2"]
    assert attributes(stream)["a2a.message.id"] == "otel-1"
    assert attributes(stream)["a2a.task.state"] == "TASK_STATE_COMPLETED"
    assert len([e for e in stream.events if e.name == "a2a_capture.stream.frame"]) == len(
        [f for f in exchanges[1].response.events if not f.is_ping])
    assert attributes(root)["a2a_capture.exchanges"] == 2
    assert not root.parent_span_id


CLIENT = """
import asyncio, os, sys
import httpx
from a2a.client import ClientConfig, create_client
from a2a.types import Message, Part, Role, SendMessageRequest

async def main():
    base = os.environ["A2A_CAPTURE_LISTENERS"].split(" ")[0]
    async with httpx.AsyncClient(trust_env=False) as http:
        client = await create_client(base, ClientConfig(httpx_client=http))
        request = SendMessageRequest(message=Message(message_id="m-1", role=Role.ROLE_USER, parts=[Part(text="run")]))
        [event async for event in client.send_message(request)]

asyncio.run(main())
"""


def test_record_around_a_command_exports_too_and_a_finding_is_an_event(tmp_path):
    output = tmp_path / "ci.http"
    with receiver() as (url, received), agent("test-runner") as upstream:
        done = subprocess.run([sys.executable, "-m", "a2a_capture.cli", "record", "--otel", url, "--agent", upstream,
                               "--listen", f"127.0.0.1:{free_port()}", "-o", str(output), "--", sys.executable,
                               "-c", CLIENT + "\nimport httpx; httpx.get(os.environ['A2A_CAPTURE_LISTENERS'] + "
                               "'/.well-known/agent-card.json', trust_env=False)"],
                              capture_output=True, text=True, env=_environment(), timeout=120)
    assert done.returncode == 0, done.stderr
    assert "otel: 4 spans exported" in done.stderr
    names = sorted(s.name for s in received.spans)
    assert names == ["GET /.well-known/agent-card.json", "GET /.well-known/agent-card.json",
                     "SendStreamingMessage", "a2a-capture session"]
    refetch = next(s for s in received.spans if attributes(s).get("a2a_capture.exchange") == "3")
    rules = [attributes(e)["a2a_capture.finding.rule"] for e in refetch.events if e.name == "a2a_capture.finding"]
    assert "card-refetch" in rules


def test_a_collector_that_is_not_there_never_stops_the_recording(tmp_path):
    output = tmp_path / "ci.http"
    with receiver() as (url, _):
        pass  # nothing listens there any more
    with agent("test-runner") as upstream:
        done = subprocess.run([sys.executable, "-m", "a2a_capture.cli", "record", "--otel", url, "--agent", upstream,
                               "--listen", f"127.0.0.1:{free_port()}", "-o", str(output), "--", sys.executable,
                               "-c", CLIENT], capture_output=True, text=True, env=_environment(), timeout=120)
    assert done.returncode == 0, done.stderr
    assert len(read_capture(output).exchanges) == 2  # recorded all the same
    assert "otel: 0 spans exported" in done.stderr and "not accepted" in done.stderr
    assert "Traceback" not in done.stderr
