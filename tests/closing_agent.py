"""A JSON-RPC agent that answers an error and closes its connection the ways real servers do.

The a2a-sdk app (uvicorn) cannot be made to close a kept-alive connection silently or to
end a body by closing, so this is a small asyncio HTTP/1.1 server. The first request it
gets is answered with a JSON-RPC error and the connection is closed as ``how`` says; every
later request gets a JSON-RPC result on a kept-alive connection. It keeps the bytes of every
answer it sent, so a test can compare them with what its client received.

- ``close-header``: 400 with Content-Length and ``Connection: close``, then it closes;
- ``silent-close``: 500 with Content-Length and no ``Connection`` header, then it closes
  (as uvicorn does when the app raised);
- ``silent-close-4xx``: the same with 400: a client error, then a close nothing announced;
- ``kept-open``: 500 with Content-Length and no ``Connection`` header, and the connection kept
  open and served (an agent that does not close after an error: the recorder cannot tell);
- ``until-close``: 500 with no Content-Length, the body ended by closing;
- ``unanswered``: 200 with the JSON-RPC error on a kept-alive connection; the next request on
  that connection is read and the connection closed without an answer (a server's idle timeout racing a client).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import socket

from tests.stream_server import StreamServer

HOW = ("close-header", "silent-close", "silent-close-4xx", "kept-open", "until-close", "unanswered")


#: the status of the first answer, where it is not 500
_STATUS = {"close-header": "400 Bad Request", "silent-close-4xx": "400 Bad Request", "unanswered": "200 OK"}


def _answer(status: str, payload: dict, *extra: str, length: bool = True) -> bytes:
    body = json.dumps(payload).encode()
    head = [f"HTTP/1.1 {status}", "Content-Type: application/json", "Server: closing-agent", *extra]
    if length:
        head.append(f"Content-Length: {len(body)}")
    return ("\r\n".join(head) + "\r\n\r\n").encode() + body


class ClosingAgent(StreamServer):
    def __init__(self, how: str) -> None:
        assert how in HOW, how
        super().__init__()
        self.how = how
        #: every answer written, in order, as the bytes that went on the wire
        self.sent: list[bytes] = []
        #: requests read and never answered
        self.unanswered = 0
        #: for each request, in order, the number of the connection it came on (from 1)
        self.connections: list[int] = []
        self._requests = 0
        self._connections = 0

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    async def _read_request(self, reader: asyncio.StreamReader) -> dict | None:
        try:
            head = await reader.readuntil(b"\r\n\r\n")
        except (asyncio.IncompleteReadError, ConnectionError):
            return None
        lines = head.decode("latin-1").split("\r\n")
        headers = dict(line.split(":", 1) for line in lines[1:] if ":" in line)
        length = int(next((v for k, v in headers.items() if k.strip().lower() == "content-length"), "0"))
        body = await reader.readexactly(length) if length else b""
        return json.loads(body) if body else {}

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        first_on_connection = True
        self._connections += 1
        connection = self._connections
        try:
            while (request := await self._read_request(reader)) is not None:
                self._requests += 1
                self.connections.append(connection)
                rpc_id = request.get("id")
                if self._requests == 1:
                    error = {"jsonrpc": "2.0", "id": rpc_id,
                             "error": {"code": -32603, "message": f"the agent failed ({self.how})"}}
                    status = _STATUS.get(self.how, "500 Internal Server Error")
                    extra = ("Connection: close",) if self.how == "close-header" else ()
                    answer = _answer(status, error, *extra, length=self.how != "until-close")
                    if self.how in ("unanswered", "kept-open"):
                        await self._send(writer, answer)
                    else:
                        await self._send_and_close(writer, answer)
                        return
                elif self.how == "unanswered" and not first_on_connection and self._requests == 2:
                    self.unanswered += 1
                    return  # read, never answered: the connection closes under the client
                else:
                    result = {"jsonrpc": "2.0", "id": rpc_id, "result": {"message": {
                        "messageId": f"reply-{rpc_id}", "role": "ROLE_AGENT", "parts": [{"text": "done"}]}}}
                    await self._send(writer, _answer("200 OK", result))
                first_on_connection = False
        finally:
            writer.close()
            with contextlib.suppress(ConnectionError):
                await writer.wait_closed()

    async def _send(self, writer: asyncio.StreamWriter, data: bytes) -> None:
        self.sent.append(data)
        writer.write(data)
        await writer.drain()

    async def _send_and_close(self, writer: asyncio.StreamWriter, data: bytes) -> None:
        """The answer and the close leave together (the kernel tacks the FIN onto the corked
        answer), so no client can read the answer and send again before the close is there."""
        sock = writer.get_extra_info("socket")
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_CORK, 1)
        await self._send(writer, data)
        sock.shutdown(socket.SHUT_WR)
