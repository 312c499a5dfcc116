"""Say what passes the recorder unrecorded: a connection mitmproxy relays as raw TCP.

In forward mode a tunnel whose bytes are neither TLS nor HTTP (nor the HTTP/2 preface the h2c
addon marks) is relayed byte for byte, and nothing of it reaches the capture. Rather than a
recording that is silently short, the user is warned once per origin, with the way to record it.
"""

from __future__ import annotations

import logging

log = logging.getLogger("a2a_capture.recorder")

RAW_TCP = ("a2a-capture: warning: a connection to {origin} passed through as raw TCP, not HTTP: nothing of it "
           "is recorded (if it is an agent, record it in reverse mode: --agent http://{origin} --listen HOST:PORT)")


class RawTcpWarning:
    """A mitmproxy addon: `tcp_start` names each origin whose traffic escapes the recording."""

    def __init__(self) -> None:
        self.warned: set[str] = set()

    def tcp_start(self, flow) -> None:
        address = flow.server_conn.address
        if not address:
            return
        host, port = address[0], address[1]
        origin = f"[{host}]:{port}" if ":" in host else f"{host}:{port}"
        if origin not in self.warned:
            self.warned.add(origin)
            log.warning(RAW_TCP.format(origin=origin))
