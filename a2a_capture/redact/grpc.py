"""Redaction inside gRPC bodies, by the policy.

A gRPC body is length-prefixed protobuf, so the JSON redaction cannot see a push config's
token in it. Here each message is read with the A2A types, secret string fields (by the
policy's names: `token`, `credentials`, …, and any string by the policy's shapes) are replaced
by the same markers, and the message is written again. A message that cannot be read is kept as it came.
"""

from __future__ import annotations

from a2a_capture.a2a.grpc import message_type
from a2a_capture.capture import grpc as layout
from a2a_capture.redact.redactor import Redactor


def redact(redactor: Redactor, target: str, direction: str, body: bytes) -> tuple[bytes, list[str]]:
    """The body with secret fields of its messages replaced by markers, and what was removed."""
    frames = layout.split_frames(body)
    descriptor = message_type(target, direction) if frames else None
    if descriptor is None:
        return body, []
    from google.protobuf import message_factory
    from google.protobuf.message import DecodeError

    removed: list[str] = []
    result = []
    for one in frames:
        compressed, payload = layout.frame_parts(one)
        message = message_factory.GetMessageClass(descriptor)()
        try:
            if compressed:
                raise DecodeError("compressed")
            message.ParseFromString(payload)
        except DecodeError:
            result.append(one)
            continue
        found = list(_redact_fields(redactor, message, "$"))
        removed += found
        result.append(layout.frame(message.SerializeToString()) if found else one)
    return b"".join(result), sorted({f"body {path}" for path in removed})


def _redact_fields(redactor: Redactor, message, path: str, depth: int = 0):
    """Replace secret string fields at any depth; yield the JSON path of each."""
    if depth > 32:
        return
    for field, value in message.ListFields():
        where = f"{path}.{field.json_name}"
        if field.message_type is None:
            if not isinstance(value, str) or not value or value.startswith("[redacted"):
                continue
            if redactor.policy.secret_name(field.json_name):
                setattr(message, field.name, redactor.value(field.json_name, value))
                yield where
            else:
                cleaned, kinds = redactor.text(value)
                if kinds:
                    setattr(message, field.name, cleaned)
                    yield where
        elif field.message_type.full_name == "google.protobuf.Struct" and not field.is_repeated:
            yield from _redact_struct(redactor, value, where)  # metadata: free-form JSON, read as JSON is
        elif field.message_type.GetOptions().map_entry:
            continue  # a map of plain values; the A2A types keep credentials in named fields
        elif field.is_repeated:
            for item in value:
                yield from _redact_fields(redactor, item, f"{where}[]", depth + 1)
        else:
            yield from _redact_fields(redactor, value, where, depth + 1)


def _redact_struct(redactor: Redactor, struct, path: str):
    """A google.protobuf.Struct (a message's metadata) redacted as the JSON it stands for."""
    from google.protobuf import json_format

    cleaned, places = redactor.document(json_format.MessageToDict(struct), path)
    if places:
        struct.Clear()
        json_format.ParseDict(cleaned, struct)
        yield from places
