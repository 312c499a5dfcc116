"""gRPC calls: the method from the path, its messages read with a2a-sdk's types."""

from __future__ import annotations

from a2a_capture.a2a import grpc, spec
from a2a_capture.a2a.bodies import nonempty
from a2a_capture.a2a.call import Call, CallError
from a2a_capture.a2a.payloads import read_message
from a2a_capture.a2a.states import task_states
from a2a_capture.capture.models import Exchange


def read_grpc(call: Call, exchange: Exchange) -> bool:
    """A gRPC call: the rpc names the operation and its package the version; messages are read
    with the A2A types, and the status (with its ErrorInfo) says what went wrong."""
    read = grpc.read_call(exchange)
    if read is None:
        return False
    call.kind, call.binding = "grpc", "GRPC"
    call.operation, call.spelled_version = read.rpc.operation, read.rpc.version
    call.request_json = read.request[0].json if read.request else None
    call.request_json_error = any(message.problem == "broken" for message in read.request)
    if isinstance(call.request_json, dict):
        call.params = call.request_json
        call.tenant = nonempty(call.params.get("tenant"))
        call.task_id = grpc.task_id_of(call.operation, call.params)
        read_message(call, call.params)
    answers = [message.json for message in read.response if message.json is not None]
    call.streamed = call.operation in spec.STREAMING_OPERATIONS
    call.events = len(read.response) if call.streamed else 0
    if not call.streamed and answers:
        call.response_json = answers[0]
    call.states = [state for answer in answers for state in task_states(answer)]
    if call.task_id is None and call.states:
        call.task_id = call.states[0][0]
    status = read.status
    if status is not None and status.code != 0:
        kind = grpc.error_kind(status)
        name = spec.GRPC_STATUS_ERRORS.get(status.name or "", f"gRPC {status.name or status.code}")
        call.error = CallError(name=kind.name if kind else name, reason=status.reason, message=status.message,
                               task_ended=bool(spec.TASK_ENDED_WORDS.search(status.message)))
    call.notes += [f"gRPC {problem}" for problem in read.problems]
    return True
