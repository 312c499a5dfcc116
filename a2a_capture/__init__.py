"""a2a-capture: see what crossed the wire between A2A clients and agents."""

import os
from typing import BinaryIO

from a2a_capture.a2a.grpc import VIEWS
from a2a_capture.capture import (
    Capture,
    Event,
    Exchange,
    ExchangeMeta,
    Request,
    Response,
    iter_exchanges,
    read_capture,
    writer,
)
from a2a_capture.errors import A2ACaptureError, CaptureFormatError

__version__ = "0.1.0"


def capture_bytes(capture: Capture) -> bytes:
    """The whole capture as the bytes of a file; a gRPC message without a view is shown as A2A."""
    return writer.capture_bytes(capture, views=VIEWS)


def write_capture(capture: Capture, target: str | os.PathLike | BinaryIO) -> None:
    """``capture_bytes`` written to a path or an open binary file."""
    writer.write_capture(capture, target, views=VIEWS)


__all__ = [
    "A2ACaptureError",
    "Capture",
    "CaptureFormatError",
    "Event",
    "Exchange",
    "ExchangeMeta",
    "Request",
    "Response",
    "capture_bytes",
    "iter_exchanges",
    "read_capture",
    "write_capture",
]
