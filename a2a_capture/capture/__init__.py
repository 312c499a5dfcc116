"""The `.http` capture format: models, a streaming reader, and a writer."""

from a2a_capture.capture.models import Capture, Exchange, ExchangeMeta, Message, Request, Response
from a2a_capture.capture.reader import (
    CaptureReader,
    iter_exchanges,
    open_capture,
    read_capture,
    read_capture_bytes,
)
from a2a_capture.capture.sse import Event
from a2a_capture.capture.writer import CaptureWriter, capture_bytes, write_capture

__all__ = [
    "Capture",
    "CaptureReader",
    "CaptureWriter",
    "Event",
    "Exchange",
    "ExchangeMeta",
    "Message",
    "Request",
    "Response",
    "capture_bytes",
    "iter_exchanges",
    "open_capture",
    "read_capture",
    "read_capture_bytes",
    "write_capture",
]
