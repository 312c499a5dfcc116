"""A JSON-RPC agent over HTTP/2 (TLS, ALPN h2) that resets its first stream, or ends its
connection under it, as servers do.

No ASGI server lets an app send RST_STREAM, so this is a small asyncio server on the ``h2``
library (mitmproxy's own HTTP/2 stack). The first request it gets is answered as ``how``
says; every later one gets a JSON-RPC result on the same connection.

- ``before-answer``: the stream is reset (``code``) once the request has come, with no answer;
- ``mid-answer``: the answer starts (200, an SSE stream, one event), then the stream is reset;
- ``goaway``: the connection is ended with GOAWAY (INTERNAL_ERROR, no stream processed), unanswered;
- ``hang-up``: the connection is closed with no word (TCP), the stream unanswered.

It keeps, for each request, the connection it came on, so a test can see whether the
connection outlived the first stream.
"""

from __future__ import annotations

import asyncio
import json
import ssl
from pathlib import Path

import h2.config
import h2.connection
import h2.errors
import h2.events

from tests.stream_server import StreamServer

HOW = ("before-answer", "mid-answer", "goaway", "hang-up")

#: the SSE event sent before a ``mid-answer`` reset
FIRST_EVENT = b'data: {"jsonrpc": "2.0", "id": 1, "result": {"statusUpdate": {"taskId": "t-1"}}}\n\n'


class ResetAgent(StreamServer):
    def __init__(self, how: str, tls: tuple[Path, Path], code: int = h2.errors.ErrorCodes.INTERNAL_ERROR) -> None:
        assert how in HOW, how
        context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        context.load_cert_chain(str(tls[1]), str(tls[0]))
        context.set_alpn_protocols(["h2"])
        super().__init__(context)
        self.how, self.code = how, code
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
        hang_up = False
        try:
            while not hang_up and (data := await reader.read(65536)):
                for event in conn.receive_data(data):
                    if isinstance(event, h2.events.DataReceived):
                        bodies[event.stream_id] = bodies.get(event.stream_id, b"") + event.data
                        conn.acknowledge_received_data(event.flow_controlled_length, event.stream_id)
                    elif isinstance(event, h2.events.StreamEnded):
                        self.connections.append(connection)
                        hang_up = self._answer(conn, event.stream_id, bodies.pop(event.stream_id, b""))
                writer.write(conn.data_to_send())
                await writer.drain()
        except (ConnectionError, ssl.SSLError):
            pass
        finally:
            writer.close()

    def _answer(self, conn: h2.connection.H2Connection, stream_id: int, body: bytes) -> bool:
        """Answer a stream; True when the connection is to close now."""
        rpc_id = json.loads(body).get("id") if body else None
        if len(self.connections) == 1:
            if self.how == "goaway":
                conn.close_connection(h2.errors.ErrorCodes.INTERNAL_ERROR, last_stream_id=0)
            if self.how in ("goaway", "hang-up"):
                return True
            if self.how == "mid-answer":
                conn.send_headers(stream_id, [(":status", "200"), ("content-type", "text/event-stream")])
                conn.send_data(stream_id, FIRST_EVENT)
            conn.reset_stream(stream_id, self.code)
            return False
        answer = json.dumps({"jsonrpc": "2.0", "id": rpc_id, "result": {"message": {
            "messageId": f"reply-{rpc_id}", "role": "ROLE_AGENT", "parts": [{"text": "done"}]}}}).encode()
        conn.send_headers(stream_id, [(":status", "200"), ("content-type", "application/json"),
                                      ("content-length", str(len(answer)))])
        conn.send_data(stream_id, answer, end_stream=True)
        return False
