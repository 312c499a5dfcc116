"""A JSON-RPC agent over HTTP/2 (TLS, ALPN h2) that resets its first stream, as servers do.

No ASGI server lets an app send RST_STREAM, so this is a small asyncio server on the ``h2``
library (mitmproxy's own HTTP/2 stack). The first request it gets is answered as ``how``
says; every later one gets a JSON-RPC result on the same connection.

- ``before-answer``: the stream is reset (``code``) once the request has come, with no answer;
- ``mid-answer``: the answer starts (200, an SSE stream, one event), then the stream is reset.

It keeps, for each request, the connection it came on, so a test can see that the client's
connection outlived the reset.
"""

from __future__ import annotations

import asyncio
import json
import ssl
import threading
from pathlib import Path

import h2.config
import h2.connection
import h2.errors
import h2.events

from a2a_capture.record.process import free_port

HOW = ("before-answer", "mid-answer")

#: the SSE event sent before a ``mid-answer`` reset
FIRST_EVENT = b'data: {"jsonrpc": "2.0", "id": 1, "result": {"statusUpdate": {"taskId": "t-1"}}}\n\n'


class ResetAgent:
    def __init__(self, how: str, tls: tuple[Path, Path], code: int = h2.errors.ErrorCodes.INTERNAL_ERROR) -> None:
        assert how in HOW, how
        self.how, self.code = how, code
        self.port = free_port()
        self._tls = tls
        #: for each request, in order, the number of the connection it came on (from 1)
        self.connections: list[int] = []
        self._connections = 0

    @property
    def url(self) -> str:
        return f"https://127.0.0.1:{self.port}"

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self._connections += 1
        connection = self._connections
        conn = h2.connection.H2Connection(h2.config.H2Configuration(client_side=False))
        conn.initiate_connection()
        writer.write(conn.data_to_send())
        bodies: dict[int, bytes] = {}
        try:
            while data := await reader.read(65536):
                for event in conn.receive_data(data):
                    if isinstance(event, h2.events.DataReceived):
                        bodies[event.stream_id] = bodies.get(event.stream_id, b"") + event.data
                        conn.acknowledge_received_data(event.flow_controlled_length, event.stream_id)
                    elif isinstance(event, h2.events.StreamEnded):
                        self.connections.append(connection)
                        self._answer(conn, event.stream_id, bodies.pop(event.stream_id, b""))
                writer.write(conn.data_to_send())
                await writer.drain()
        except (ConnectionError, ssl.SSLError):
            pass
        finally:
            writer.close()

    def _answer(self, conn: h2.connection.H2Connection, stream_id: int, body: bytes) -> None:
        rpc_id = json.loads(body).get("id") if body else None
        if len(self.connections) == 1:
            if self.how == "mid-answer":
                conn.send_headers(stream_id, [(":status", "200"), ("content-type", "text/event-stream")])
                conn.send_data(stream_id, FIRST_EVENT)
            conn.reset_stream(stream_id, self.code)
            return
        answer = json.dumps({"jsonrpc": "2.0", "id": rpc_id, "result": {"message": {
            "messageId": f"reply-{rpc_id}", "role": "ROLE_AGENT", "parts": [{"text": "done"}]}}}).encode()
        conn.send_headers(stream_id, [(":status", "200"), ("content-type", "application/json"),
                                      ("content-length", str(len(answer)))])
        conn.send_data(stream_id, answer, end_stream=True)

    def __enter__(self) -> ResetAgent:
        started = threading.Event()
        context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        context.load_cert_chain(str(self._tls[1]), str(self._tls[0]))
        context.set_alpn_protocols(["h2"])

        async def main() -> None:
            server = await asyncio.start_server(self._serve, "127.0.0.1", self.port, ssl=context)
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
