"""Say plainly what passes the recorder without being recorded, and how to record it.

In forward mode a tunnel whose bytes are neither TLS nor HTTP (nor the HTTP/2 preface the h2c
addon marks) is relayed as raw TCP, and nothing of it reaches the capture. An agent whose TLS
certificate the recorder does not trust (a self-signed gRPC agent, say) gets no call at all:
the client is answered 502 by the recorder. Rather than a recording that is silently short, the
user is warned once per origin, with the option that fixes it.
"""

from __future__ import annotations

import logging

from a2a_capture.terminal import shown

log = logging.getLogger("a2a_capture.recorder")

RAW_TCP = ("a2a-capture: warning: a connection to {origin} passed through as raw TCP, not HTTP: nothing of it "
           "is recorded (if it is an agent, record it in reverse mode: --agent http://{origin} --listen HOST:PORT)")
UNTRUSTED = ("a2a-capture: warning: the agent at {origin} has a TLS certificate the recorder does not trust "
             "({error}), so its calls fail with 502 from the recorder: record with --upstream-trust CA.pem "
             "(the CA that signed it), or --upstream-insecure")


def _origin(address) -> str | None:
    if not address:
        return None
    host, port = address[0], address[1]
    return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"


class UnrecordedWarnings:
    """A mitmproxy addon: `tcp_start` and `tls_failed_server` name each origin that escapes."""

    def __init__(self) -> None:
        self.warned: set[tuple[str, str]] = set()

    def _warn(self, kind: str, origin: str | None, text: str) -> None:
        if origin is not None and (kind, origin) not in self.warned:
            self.warned.add((kind, origin))
            log.warning(shown(text))  # an origin or a TLS error the peer chose: controls escaped

    def tcp_start(self, flow) -> None:
        origin = _origin(flow.server_conn.address)
        self._warn("tcp", origin, RAW_TCP.format(origin=origin))

    def tls_failed_server(self, data) -> None:
        error = data.conn.error or ""
        if "certificate verify failed" in error.lower():
            origin = _origin(data.conn.address)
            self._warn("tls", origin, UNTRUSTED.format(origin=origin, error=error))
