"""Hand-made gRPC exchanges from a2a-sdk's generated types (the `grpc` extra)."""

from __future__ import annotations

import base64

from a2a.types import a2a_pb2
from google.protobuf import any_pb2
from google.rpc import error_details_pb2, status_pb2

from a2a_capture.capture import Exchange, Request, Response
from a2a_capture.capture.grpc import frame

SERVICE = "/lf.a2a.v1.A2AService"
HOST = "127.0.0.1:50051"


def call(number: int, rpc: str, request, answers=(), *, status: int = 0, reason: str | None = None,
         message: str = "", version: str | None = "1.0", service: str = SERVICE, times=None) -> Exchange:
    """A gRPC call: one request message, answer messages, and the status in trailers (or, for an
    error with no messages, in a trailers-only head as gRPC servers send it)."""
    head = [("Host", HOST), ("content-type", "application/grpc"), ("te", "trailers")]
    if version is not None:
        head.append(("a2a-version", version))
    status_fields = [("grpc-status", str(status)), ("grpc-message", message)]
    if reason:
        status_fields.append(("grpc-status-details-bin", details(status, message, reason)))
    body = b"".join(frame(m.SerializeToString()) for m in answers)
    trailers_only = not answers and status != 0
    response = Response(
        status=200, http_version="2",
        headers=[("content-type", "application/grpc"), *(status_fields if trailers_only else [])],
        body=body, trailers=[] if trailers_only else status_fields,
        event_times=list(times) if times is not None else [],
    )
    return Exchange(number=number, title=rpc, request=Request(
        method="POST", target=f"{service}/{rpc}", http_version="2", headers=head,
        body=frame(request.SerializeToString())), response=response)


def details(code: int, message: str, reason: str) -> str:
    """`grpc-status-details-bin`: a google.rpc.Status with an ErrorInfo, base64 without padding."""
    info = any_pb2.Any()
    info.Pack(error_details_pb2.ErrorInfo(reason=reason, domain="a2a-protocol.org"))
    status = status_pb2.Status(code=code, message=message, details=[info])
    return base64.b64encode(status.SerializeToString()).decode().rstrip("=")


def task(task_id: str, state: str = "TASK_STATE_COMPLETED") -> a2a_pb2.Task:
    return a2a_pb2.Task(id=task_id, context_id="ctx-1", status=a2a_pb2.TaskStatus(state=state))


def send(text: str = "hello", message_id: str = "m-1") -> a2a_pb2.SendMessageRequest:
    return a2a_pb2.SendMessageRequest(message=a2a_pb2.Message(
        message_id=message_id, role=a2a_pb2.ROLE_USER, parts=[a2a_pb2.Part(text=text)]))
