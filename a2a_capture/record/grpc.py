"""What the recorder does for gRPC calls: message arrival times and redaction inside protobuf.

Redaction inside protobuf is the policy's (a2a_capture/redact/grpc.py), imported here under the
name the recorder calls it by.
"""

from __future__ import annotations

from a2a_capture.capture import grpc as layout
from a2a_capture.redact.grpc import redact  # noqa: F401 - the recorder's name for it


def is_grpc(headers: list[tuple[str, str]]) -> bool:
    return layout.is_grpc_type(next((value for name, value in headers if name.lower() == "content-type"), None))


def message_times(stream, start: float) -> list[float | None]:
    """Arrival time of each gRPC message of a streamed answer (a flows.StreamCopy)."""
    ends, offset = [], 0
    for one in layout.split_frames(stream.body) or []:
        offset += len(one)
        ends.append(offset)
    return stream.arrival_times(ends, start)
