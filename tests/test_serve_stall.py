"""`serve` joins a request's body from its pieces and does not wait for ever on one that stalls:
a client that sends half a body and then nothing is answered 408 and the connection closed."""

from __future__ import annotations

import socket
import time

from a2a_capture.capture import read_capture
from a2a_capture.replay import serve
from tests.conftest import ROOT
from tests.live import serve as serve_app

CAPTURE = ROOT / "captures" / "02-blocking-send.http"


def _mock(stall: float) -> serve.MockAgent:
    (mock,) = serve.mock_agents(read_capture(CAPTURE), speed=0)
    mock.stall = stall
    return mock


def _exchange(url: str, head: bytes, pieces: list[bytes], pause: float) -> bytes:
    """What the server answers to ``head`` and then ``pieces`` sent ``pause`` seconds apart, to its close."""
    host, port = url.removeprefix("http://").split(":")
    with socket.create_connection((host, int(port)), timeout=10) as connection:
        connection.sendall(head)
        for piece in pieces:
            time.sleep(pause)
            connection.sendall(piece)
        answer = []
        while more := connection.recv(65536):  # to the server's close: a timeout fails the test
            answer.append(more)
        return b"".join(answer)


def _head(path: str, length: int, close: bool = False) -> bytes:
    return (f"POST {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
            f"Content-Length: {length}\r\n{'Connection: close' + chr(13) + chr(10) if close else ''}\r\n").encode()


def test_a_stalled_body_is_answered_408_and_the_connection_closed():
    with serve_app(_mock(stall=0.3)) as url:
        started = time.monotonic()
        answer = _exchange(url, _head("/a2a/jsonrpc", 100) + b'{"jsonrpc": "2.0"', [], 0)
        waited = time.monotonic() - started
    assert answer.startswith(b"HTTP/1.1 408 "), answer
    assert b"connection: close" in answer.lower()
    assert b"the request's body stalled for 0.3 s" in answer
    assert 0.3 <= waited < 5


def test_a_body_sent_in_pieces_within_the_stall_is_joined_and_matched():
    recorded = next(e for e in read_capture(CAPTURE).exchanges if e.request.method == "POST")
    body = recorded.request.content
    pieces = [body[:1], body[1:7], body[7:40], body[40:]]
    with serve_app(_mock(stall=2.0)) as url:
        answer = _exchange(url, _head(recorded.request.target, len(body), close=True), pieces, 0.02)
    assert answer.startswith(b"HTTP/1.1 200 "), answer[:300]
    assert b"NO_RECORDED_MATCH" not in answer
