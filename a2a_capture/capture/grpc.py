"""How a gRPC body is laid out in a capture: one paragraph per length-prefixed message.

A gRPC body is a run of messages, each a 1-byte flag, a 4-byte big-endian length and that
many bytes of protobuf. The file shows each message as a paragraph a person can read (a
view: the message's protobuf JSON mapping) followed by its exact bytes in base64, and the
status and trailers as a paragraph of their own. The bytes are the truth; views are kept
as read and only made anew for messages that have none, so reading and writing give back
the same file. What a view says is the caller's to give (``Views``; the A2A reading is
``a2a.grpc.VIEWS``): this layer knows the layout, not the protocol, and without views it
names a message by its size alone.
"""

from __future__ import annotations

import base64
import binascii
import struct
from collections.abc import Callable
from dataclasses import dataclass

from a2a_capture.capture import syntax

MESSAGE_INTRO = b"grpc message"
BYTES_PREFIX = b"grpc bytes "
STATUS_INTRO = b"grpc status"
PREFIX_SIZE = 5
_BASE64_LINE = 76
_BASE64_CHUNK = _BASE64_LINE // 4 * 3


def is_grpc_type(content_type: str | bytes | None) -> bool:
    """`application/grpc`, `application/grpc+proto`, … (not gRPC-Web, which frames differently)."""
    if not content_type:
        return False
    if isinstance(content_type, bytes):
        content_type = content_type.decode("latin-1")
    media = content_type.split(";", 1)[0].strip().lower()
    return media == "application/grpc" or media.startswith("application/grpc+")


def split_frames(body: bytes) -> list[bytes] | None:
    """The whole length-prefixed messages of a body (prefix included), or None when the body
    does not divide into whole messages (a broken or cut stream)."""
    frames: list[bytes] = []
    offset = 0
    while offset < len(body):
        if len(body) - offset < PREFIX_SIZE:
            return None
        (length,) = struct.unpack_from(">I", body, offset + 1)
        end = offset + PREFIX_SIZE + length
        if end > len(body):
            return None
        frames.append(body[offset:end])
        offset = end
    return frames


def frame_parts(frame: bytes) -> tuple[bool, bytes]:
    """(compressed flag, protobuf payload) of one whole message."""
    return frame[0] != 0, frame[PREFIX_SIZE:]


def frame(payload: bytes, compressed: bool = False) -> bytes:
    """One message as it travels: flag, length, payload."""
    return struct.pack(">BI", 1 if compressed else 0, len(payload)) + payload


def bytes_lines(data: bytes) -> list[bytes]:
    """`grpc bytes …` lines holding ``data`` in base64, 76 characters a line."""
    return [BYTES_PREFIX + base64.b64encode(data[i:i + _BASE64_CHUNK])
            for i in range(0, len(data), _BASE64_CHUNK)] or [BYTES_PREFIX.rstrip()]


def decode_bytes_lines(lines: list[bytes]) -> bytes:
    """The bytes `grpc bytes` lines hold; raises ValueError on anything but base64."""
    try:
        return b"".join(base64.b64decode(line[len(BYTES_PREFIX):].strip(), validate=True) for line in lines)
    except binascii.Error:
        raise ValueError("base64 after 'grpc bytes'") from None


def is_message_intro(line: bytes) -> bool:
    text = syntax.strip_eol(line)
    return text == MESSAGE_INTRO or text.startswith(MESSAGE_INTRO + b" ")


def is_status_intro(line: bytes) -> bool:
    text = syntax.strip_eol(line)
    return text == STATUS_INTRO or text.startswith(STATUS_INTRO + b" ")


def is_bytes_line(line: bytes) -> bool:
    text = syntax.strip_eol(line)
    return text.startswith(BYTES_PREFIX) or text == BYTES_PREFIX.rstrip()


# -- views: what a person reads --------------------------------------------------------------


@dataclass(frozen=True)
class Views:
    """What a capture shows a person of gRPC messages, from a layer that knows the protocol.

    ``message(target, direction, frame)`` gives the words after `grpc message N · ` and the
    lines under them; ``status(headers, trailers)`` the words after `grpc status · ` ("" for none).
    """

    message: Callable[[str, str, bytes], tuple[str, list[str]]]
    status: Callable[[list[tuple[str, str]], list[tuple[str, str]]], str]


def _sized(target: str, direction: str, frame: bytes) -> tuple[str, list[str]]:
    return f"message · {len(frame) - PREFIX_SIZE} bytes", []


def _no_status(headers: list[tuple[str, str]], trailers: list[tuple[str, str]]) -> str:
    return ""


#: the layout alone: each message by its size, the status paragraph without words
LAYOUT = Views(message=_sized, status=_no_status)


def message_views(target: str, direction: str, frames: list[bytes], views: Views = LAYOUT) -> list[list[str]]:
    """A view for each message: its intro line, then the lines ``views`` gives it."""
    shown = []
    for index, one in enumerate(frames, start=1):
        title, lines = views.message(target, direction, one)
        shown.append([f"grpc message {index} · {title}", *lines])
    return shown


def status_view(headers: list[tuple[str, str]], trailers: list[tuple[str, str]], views: Views = LAYOUT) -> str:
    """The intro of the status paragraph, with the words ``views`` gives the status."""
    words = views.status(headers, trailers)
    return f"grpc status · {words}" if words else "grpc status"
