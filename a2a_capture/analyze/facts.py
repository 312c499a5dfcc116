"""What the analysis knows of each exchange beyond its findings, for a report to show.

Taken from the decoded call while the analyzer has it, so a report lays out the exchanges
without decoding them again: the analysis decodes each exchange once, whoever reads it.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict

from a2a_capture.a2a.cards import Card
from a2a_capture.a2a.decode import A2A_KINDS, Call
from a2a_capture.capture.models import Exchange


class ExchangeFacts(BaseModel):
    """Small facts of one exchange, fixed once decoded; no bodies."""

    model_config = ConfigDict(frozen=True)

    file: str
    label: str
    kind: str  # card, jsonrpc, rest, grpc, webhook or other
    agent: str | None = None
    operation: str | None = None
    path: str = "/"
    task_id: str | None = None
    version_header: str | None = None
    #: the protocol version its method or route is spelled in ("0.3" for message/send), where known
    version: str | None = None
    status: int | None = None
    failed: bool = False  # the agent answered with an error
    error: str | None = None  # its name: TaskNotFoundError, HTTP 503, ...
    error_code: int | None = None  # its JSON-RPC code
    #: (task, state, seconds since the epoch or None) in the order the exchange showed them:
    #: a streamed frame's state when the frame arrived, any other where the response ended
    states: list[tuple[str, str, float | None]] = []
    #: (task, state) shown by the frames this block adds to an earlier exchange's stream
    late_states: list[tuple[str, str]] = []
    events: int = 0
    started: float | None = None
    duration: float | None = None
    card: Card | None = None
    #: the agent answered with a message and no task
    replied_with_message: bool = False
    #: a JSON-RPC answer with neither error nor result (`"result": null`), as a2a-server 0.6 gives
    empty_result: bool = False
    #: what its round trip was, as the analysis counts it: "wasted", "fragile" or None
    round_trip: str | None = None

    @property
    def is_a2a(self) -> bool:
        return self.kind in A2A_KINDS


def exchange_facts(exchange: Exchange, call: Call, round_trip: str | None = None) -> ExchangeFacts:
    """The facts of ``call``, the decoded ``exchange`` (which gives only when the response ended);
    ``round_trip``: what the analysis counted it as."""
    start = call.started
    if call.state_offsets is not None:
        states = [(task, state, start + offset if start is not None and offset is not None else None)
                  for (task, state), offset in zip(call.states, call.state_offsets, strict=True)]
    else:
        end = exchange.meta.ended_at
        at = end.timestamp() if end is not None else start
        states = [(task, state, at) for task, state in call.states]
    error = call.error
    return ExchangeFacts.model_construct(  # from decoded facts of the right types: no validation
        file=call.file, label=call.label, kind=call.kind, agent=call.agent, operation=call.operation,
        path=call.path, task_id=call.task_id, version_header=call.version_header, version=call.spelled_version,
        status=call.status,
        failed=error is not None, error=error.name if error else None, error_code=error.code if error else None,
        states=states, late_states=list(call.late_states), events=call.events, started=start,
        duration=call.duration, card=call.card, replied_with_message=_replied_with_message(call),
        empty_result=error is None and call.kind == "jsonrpc" and _result_is_null(call.response_json),
        round_trip=round_trip,
    )


def _replied_with_message(call: Call) -> bool:
    result = call.response_json
    if isinstance(result, dict) and "result" in result and isinstance(result["result"], dict):
        result = result["result"]
    if isinstance(result, dict) and result.get("kind") == "message":  # 0.3 answers with the message itself
        return not call.states
    return isinstance(result, dict) and "message" in result and "task" not in result and not call.states


def _result_is_null(answer) -> bool:
    return isinstance(answer, dict) and "result" in answer and answer["result"] is None
