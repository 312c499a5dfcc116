"""Read A2A over gRPC: which rpc a call was, each message as its protobuf JSON mapping, the status.

The message types are the generated ones a2a-sdk ships (`lf.a2a.v1` for 1.0, `a2a.v1` for
0.3), installed with the optional `grpc` extra; without them a message is still framed and
counted, only not read. A message that does not parse, carries fields its schema does not
know, or is compressed in a way we cannot undo is classified as such, never a crash.
"""

from __future__ import annotations

import base64
import binascii
import gzip
import importlib
import json
import zlib
from dataclasses import dataclass, field
from functools import cache
from typing import Any
from urllib.parse import unquote

from a2a_capture.a2a import spec
from a2a_capture.capture import grpc as layout

_INSTALL_HINT = "install a2a-capture[grpc] to read gRPC messages"


@dataclass(frozen=True)
class Rpc:
    """A gRPC method path read as A2A."""

    service: str
    name: str
    operation: str | None  # the 1.0 operation, None for an rpc A2A does not define
    version: str | None  # the version the service's package spells; None for a service that is not A2A

    @classmethod
    def of(cls, target: str) -> Rpc | None:
        """`/lf.a2a.v1.A2AService/SendMessage` -> its service and rpc; None for other paths."""
        parts = target.split("?", 1)[0].strip("/").split("/")
        if len(parts) < 2 or "." not in parts[-2] or not parts[-1]:
            return None
        service, name = parts[-2], parts[-1]
        version = spec.GRPC_SERVICES.get(service)
        operation = None
        if version is not None:
            operation = spec.GRPC_LEGACY_RPCS.get(name, name) if version == "0.3" else name
            operation = operation if operation in spec.OPERATIONS else None
        return cls(service, name, operation, version)


@dataclass
class Decoded:
    """One gRPC message, read."""

    type_name: str | None = None
    json: Any = None
    #: what kept it from being read fully: "broken", "unknown fields", "compressed", "no schema"
    problem: str | None = None
    detail: str = ""
    size: int = 0


@dataclass
class Status:
    """The status a gRPC call ended with, from its trailers (or a trailers-only head)."""

    code: int | None
    name: str | None
    message: str = ""
    reason: str | None = None
    details: list = field(default_factory=list)

    @property
    def label(self) -> str:
        """`NOT_FOUND (5)`: what show and the report print where HTTP prints its status."""
        if self.name:
            return f"{self.name} ({self.code})"
        return f"unknown status {self.code}" if self.code is not None else "unreadable status"


# -- message types -------------------------------------------------------------------------------


@cache
def _service(name: str):
    """The service descriptor a2a-sdk generated for ``name``, or None when it is not installed."""
    module = spec.GRPC_SCHEMAS.get(name)
    if module is None:
        return None
    try:
        return importlib.import_module(module).DESCRIPTOR.services_by_name[name.rsplit(".", 1)[-1]]
    except (ImportError, KeyError):
        return None


def message_type(target: str, direction: str):
    """The descriptor of what a request or response to this rpc carries, or None."""
    rpc = Rpc.of(target)
    service = _service(rpc.service) if rpc else None
    method = service.methods_by_name.get(rpc.name) if service else None
    if method is None:
        return None
    return method.input_type if direction == "request" else method.output_type


def decode_frame(target: str, direction: str, frame: bytes, encoding: str | None = None) -> Decoded:
    """A whole length-prefixed message read with the type the rpc declares."""
    compressed, payload = layout.frame_parts(frame)
    result = Decoded(size=len(payload))
    if compressed:
        payload = _decompress(payload, encoding)
        if payload is None:
            result.problem, result.detail = "compressed", f"compressed ({encoding or 'encoding not named'})"
            return result
    descriptor = message_type(target, direction)
    if descriptor is None:
        rpc = Rpc.of(target)
        known = rpc is not None and rpc.version is not None
        result.problem = "no schema"
        result.detail = _INSTALL_HINT if known and _service(rpc.service) is None else "no A2A type for this rpc"
        return result
    from google.protobuf import json_format, message_factory
    from google.protobuf.message import DecodeError

    result.type_name = descriptor.full_name
    message = message_factory.GetMessageClass(descriptor)()
    try:
        message.ParseFromString(payload)
        result.json = json_format.MessageToDict(message)
    except (DecodeError, ValueError, TypeError, RecursionError) as error:
        result.problem, result.detail = "broken", f"not a valid {descriptor.full_name} ({error})"
        return result
    unknown = _unknown_fields(message)
    if unknown:
        result.problem, result.detail = "unknown fields", f"{unknown} field(s) the schema does not know"
    return result


def _decompress(payload: bytes, encoding: str | None) -> bytes | None:
    try:
        if encoding in (None, "gzip"):
            return gzip.decompress(payload)
        if encoding == "deflate":
            return zlib.decompress(payload)
    except (OSError, zlib.error, EOFError):
        return None
    return None


def _unknown_fields(message, depth: int = 0) -> int:
    """How many fields, at any depth, the schema did not know."""
    from google.protobuf import unknown_fields

    count = len(unknown_fields.UnknownFieldSet(message))
    if depth > 50:
        return count
    for descriptor, value in message.ListFields():
        if descriptor.message_type is None:
            continue
        if descriptor.message_type.GetOptions().map_entry:
            values = value.values()
            if descriptor.message_type.fields_by_name["value"].message_type is None:
                continue
        else:
            values = value if descriptor.is_repeated else [value]
        count += sum(_unknown_fields(item, depth + 1) for item in values)
    return count


# -- the status ----------------------------------------------------------------------------------


def read_status(headers: list[tuple[str, str]], trailers: list[tuple[str, str]], *,
                details: bool = True) -> Status | None:
    """The status in the trailers, or in the head of a trailers-only answer; None if there is none.
    ``details``: read `grpc-status-details-bin` too (needs protobuf; a listing needs only the code)."""
    values: dict[str, str] = {}
    for name, value in [*headers, *trailers]:  # the trailers win
        values[name.lower()] = value
    raw = values.get("grpc-status")
    if raw is None:
        return None
    code = int(raw) if raw.strip().isdigit() else None
    name = spec.GRPC_STATUS_NAMES[code] if code is not None and code < len(spec.GRPC_STATUS_NAMES) else None
    status = Status(code=code, name=name, message=unquote(values.get("grpc-message", "")))
    packed = values.get("grpc-status-details-bin") if details else None
    if packed:
        status.details = _status_details(packed)
        status.reason = next((d.get("reason") for d in status.details
                              if isinstance(d, dict) and isinstance(d.get("reason"), str)), None)
    return status


def error_kind(status: Status) -> spec.ErrorKind | None:
    """The A2A error a status carries: its ErrorInfo reason (1.0), else the error name that
    leads its message (a2a-sdk 0.3 sends no ErrorInfo)."""
    kind = spec.ERRORS_BY_REASON.get(status.reason or "")
    if kind is None and (named := spec.GRPC_MESSAGE_ERROR.match(status.message)):
        kind = spec.ERRORS_BY_NAME.get(named.group(1))
    return kind


def _status_details(value: str) -> list:
    """The `details` of a `google.rpc.Status` (base64, maybe unpadded), as JSON; [] if unreadable."""
    try:
        from google.protobuf import json_format
        from google.protobuf.message import DecodeError
        from google.rpc import error_details_pb2, status_pb2  # noqa: F401 - registers ErrorInfo
    except ImportError:
        return [{"problem": _INSTALL_HINT}]
    try:
        data = base64.b64decode(value + "=" * (-len(value) % 4))
        status = status_pb2.Status.FromString(data)
        return [json_format.MessageToDict(detail) for detail in status.details]
    except (binascii.Error, DecodeError, ValueError, TypeError, KeyError):
        return [{"problem": "grpc-status-details-bin is not a google.rpc.Status"}]


def response_status(response) -> Status | None:
    """The gRPC status a response (capture.models.Response) ended with, without its details;
    None when it is not a gRPC answer or carries no status (cut short, or the proxy answered)."""
    if response is None or not response.is_grpc:
        return None
    return read_status(response.headers, response.trailers, details=False)


# -- views for the capture file ------------------------------------------------------------------


def describe_frame(target: str, direction: str, frame: bytes) -> tuple[str, list[str]]:
    """The intro words and JSON lines a capture shows for one message."""
    decoded = decode_frame(target, direction, frame)
    words = [decoded.type_name or "message", f"{decoded.size} bytes"]
    if decoded.problem:
        words.append(decoded.detail)
    lines = json.dumps(decoded.json, indent=2, ensure_ascii=False).splitlines() if decoded.json is not None else []
    return " · ".join(words), lines


def describe_status(headers: list[tuple[str, str]], trailers: list[tuple[str, str]]) -> str:
    """`NOT_FOUND (5) · TASK_NOT_FOUND`: the status by name, and the A2A error it carries."""
    status = read_status(headers, trailers)
    if status is None:
        return ""
    words = [status.label]
    if status.reason:
        words.append(status.reason)
    return " · ".join(words)


#: the capture file's views of gRPC messages, read as A2A (what every writer of the package passes)
VIEWS = layout.Views(message=describe_frame, status=describe_status)


# -- a whole call --------------------------------------------------------------------------------


@dataclass
class GrpcCall:
    """A gRPC exchange read as A2A: the rpc, its messages as JSON, the status, what was unreadable."""

    rpc: Rpc
    request: list[Decoded]
    response: list[Decoded]
    status: Status | None

    @property
    def problems(self) -> list[str]:
        """Words for each message that could not be read fully."""
        return [f"{direction} message {index}: {one.detail}"
                for direction, messages in (("request", self.request), ("response", self.response))
                for index, one in enumerate(messages, start=1) if one.problem]


def read_call(exchange) -> GrpcCall | None:
    """An exchange read as a gRPC call, or None when it is not one (not gRPC, or not an rpc path)."""
    request, response = exchange.request, exchange.response
    rpc = Rpc.of(request.target) if request.is_grpc or (response is not None and response.is_grpc) else None
    if rpc is None:
        return None
    target = request.target

    def messages(message, direction: str) -> list[Decoded]:
        frames = message.grpc_frames
        if frames is None:
            return [Decoded(problem="broken", detail="the body does not divide into whole gRPC messages",
                            size=len(message.body))]
        encoding = message.header("grpc-encoding")
        return [decode_frame(target, direction, one, encoding) for one in frames]

    answers = messages(response, "response") if response is not None else []
    status = read_status(response.headers, response.trailers) if response is not None else None
    return GrpcCall(rpc=rpc, request=messages(request, "request"), response=answers, status=status)


def task_id_of(operation: str | None, request: object) -> str | None:
    """The task a request names: 1.0 fields (`id`, `taskId`, `message.taskId`) or 0.3 resource
    names (`name: tasks/{id}`, `parent: tasks/{id}`)."""
    if not isinstance(request, dict):
        return None
    for key in ("name", "parent"):
        value = request.get(key)
        if isinstance(value, str) and value.startswith("tasks/"):
            return value.split("/")[1] or None
    path = spec.TASK_ID_PARAM.get(operation or "", ())
    value: object = request
    for key in path:
        value = value.get(key) if isinstance(value, dict) else None
    return value if isinstance(value, str) and value else None
