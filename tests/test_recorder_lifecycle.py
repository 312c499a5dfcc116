"""The recorder's life: appending to a capture, stopping mid-traffic, traffic cut short.

Real mitmdump with the addon in front of real a2a-sdk agents, real clients.
"""

from __future__ import annotations

import asyncio
import socket
import time

import httpx
import pytest

from a2a_capture.capture import read_capture
from tests.live import Recorder, agent, free_port

pytestmark = pytest.mark.live


def _streaming_call(index: int, text: str = "run") -> dict:
    return {"jsonrpc": "2.0", "id": index, "method": "SendStreamingMessage", "params": {
        "message": {"messageId": f"m-{index}", "role": "ROLE_USER", "parts": [{"text": text}]}}}


def _record_a_session(output, upstream: str) -> None:
    listen = free_port()
    with Recorder(output, [(upstream, listen)]), httpx.Client(timeout=30) as http:
        http.get(f"http://127.0.0.1:{listen}/.well-known/agent-card.json")
        with http.stream("POST", f"http://127.0.0.1:{listen}/a2a/jsonrpc", json=_streaming_call(1),
                         headers={"A2A-Version": "1.0"}) as response:
            response.read()


def test_two_recordings_appended_to_one_file_read_back_with_unique_numbers(tmp_path):
    output = tmp_path / "twice.http"
    with agent("test-runner", streaming=True) as upstream:
        _record_a_session(output, upstream)
        first = read_capture(output).exchanges
        assert first[-1].response.is_event_stream  # the file ends with a stream: the hard case
        _record_a_session(output, upstream)
    exchanges = read_capture(output).exchanges
    assert [e.number for e in exchanges] == [1, 2, 3, 4]
    assert [e.title for e in exchanges] == ["discover test-runner", "SendStreamingMessage"] * 2
    assert exchanges[0].notes == first[0].notes  # the first recording is left as it was
    assert any("a new recording starts here, appended after exchange 2" in note for note in exchanges[2].notes)
    assert len(exchanges[3].response.events) == len(exchanges[1].response.events)


def test_stopping_in_the_middle_of_twenty_streams_keeps_all_twenty(tmp_path):
    output = tmp_path / "stopped.http"
    listen = free_port()
    with agent("slow", streaming=True, step=0.2) as upstream:
        recorder = Recorder(output, [(upstream, listen)])

        async def one(index: int, started: set[int]) -> None:
            async with httpx.AsyncClient(timeout=60) as http:
                try:
                    async with http.stream("POST", f"http://127.0.0.1:{listen}/a2a/jsonrpc",
                                           json=_streaming_call(index, "slow"),
                                           headers={"A2A-Version": "1.0"}) as response:
                        async for line in response.aiter_lines():
                            if line.startswith("data:"):
                                started.add(index)
                except httpx.HTTPError:
                    pass  # the recorder went away mid-stream, as intended

        async def streams_then_stop() -> str:
            started: set[int] = set()
            tasks = [asyncio.create_task(one(index, started)) for index in range(20)]
            while len(started) < 20:
                await asyncio.sleep(0.05)
            printed = await asyncio.to_thread(recorder.stop)
            await asyncio.gather(*tasks)
            return printed

        printed = asyncio.run(streams_then_stop())
    assert "Traceback" not in printed and "CancelledError" not in printed and "Bad file" not in printed, printed
    exchanges = read_capture(output).exchanges
    assert sorted(e.number for e in exchanges) == list(range(1, 21))
    for exchange in exchanges:
        assert exchange.response.events, exchange.number  # what arrived is kept
        assert "a2a-capture: recording stopped before the response ended; what had arrived is kept" \
            in exchange.notes


def test_a_request_cut_off_halfway_is_recorded_with_the_bytes_that_came(tmp_path):
    output = tmp_path / "cut-request.http"
    listen = free_port()
    half = b'{"jsonrpc":"2.0","id":1,"method":'
    with agent("test-runner") as upstream, Recorder(output, [(upstream, listen)]):
        with socket.create_connection(("127.0.0.1", listen)) as client:
            client.sendall(b"POST /a2a/jsonrpc HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                           b"Content-Length: 66\r\n\r\n" + half)
            time.sleep(0.3)
        time.sleep(0.3)
    exchange = read_capture(output).exchanges[0]
    assert exchange.request.body == half
    assert any(note.startswith("error: the client closed the connection before the request was complete")
               for note in exchange.notes), exchange.notes
