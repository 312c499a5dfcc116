"""a2a-capture: see what crossed the wire between A2A clients and agents."""

from a2a_capture.capture import (
    Capture,
    Event,
    Exchange,
    ExchangeMeta,
    Request,
    Response,
    capture_bytes,
    iter_exchanges,
    read_capture,
    write_capture,
)
from a2a_capture.errors import A2ACaptureError, CaptureFormatError

__version__ = "0.1.0"

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
