"""What a report says about one exchange beyond its listing: its outcome, the states it showed
and when, and the one fact that stops a wrong reading of it ("The request has no A2A-Version
header.").

Worded from the analysis's own facts of the exchange (``Analysis.exchanges``): the report
never decodes an exchange the analysis has decoded already.
"""

from __future__ import annotations

from a2a_capture.a2a import spec
from a2a_capture.analyze.facts import ExchangeFacts


def short_id(task: str) -> str:
    """The manual's 8-character short id, for prose and figures (listings keep ids whole)."""
    return task[:8] if len(task) > 8 else task


def outcome(facts: ExchangeFacts, grpc_status: str | None = None) -> str:
    """How the call ended: its error, its last task state, a message (no task), a JSON-RPC
    result of null, else its status (``grpc_status``, as `OK (0)`, for a gRPC call: HTTP's
    200 says nothing about one)."""
    if facts.failed:
        code = f" {facts.error_code}" if facts.error_code else ""
        return f"{facts.error}{code}"
    if facts.states:
        return facts.states[-1][1].removeprefix("TASK_STATE_").lower().replace("_", "-")
    if facts.replied_with_message:
        return "message"
    if facts.empty_result:
        return "result null"
    if facts.status is None:
        return "no response" if facts.kind != "webhook" else ""
    return grpc_status or str(facts.status)


def explain(facts: ExchangeFacts) -> list[str]:
    """Facts that explain why the exchange looks as it does, as the manual's notes give them."""
    notes = []
    if facts.is_a2a and facts.version_header is None:
        notes.append(f"The request has no {spec.VERSION_HEADER} header.")
    if facts.kind == "jsonrpc" and facts.failed and facts.status == 200:
        notes.append("The JSON-RPC error arrives with HTTP 200.")
    return notes
