"""gRPC exchanges are recorded, read, analyzed and reported, but not replayed or served.

Replay sends with httpx and serve answers with uvicorn, both HTTP/1.1 (and httpx's HTTP/2
has no trailers, where gRPC puts its status), so neither can speak a gRPC call back. Rather
than skip those exchanges silently, both commands refuse a capture that holds any.
"""

from __future__ import annotations

from a2a_capture.capture import Capture
from a2a_capture.errors import ReplayError


def refuse_grpc(capture: Capture, command: str) -> None:
    """Raise a one-line error naming the first gRPC exchange, if the capture has one."""
    calls = [exchange for exchange in capture.exchanges if exchange.request.is_grpc]
    if calls:
        first = calls[0]
        raise ReplayError(f"{command} does not support gRPC yet: exchange {first.label} ({first.request.target}) "
                          f"and {len(calls) - 1} more are gRPC calls; analyze and report read them")
