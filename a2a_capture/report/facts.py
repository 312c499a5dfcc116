"""What a report says about one exchange beyond its listing: its outcome, the states it showed
and when, and the one fact that stops a wrong reading of it ("The request has no A2A-Version
header.").

Worded from the analysis's own facts of the exchange (``Analysis.exchanges``): the report
never decodes an exchange the analysis has decoded already.
"""

from __future__ import annotations

import re

from a2a_capture.a2a import spec
from a2a_capture.analyze.facts import ExchangeFacts

#: how a finding's words name another exchange: "exchange 7", "exchange webhook 2", "exchange 3 of 02-send.http"
MENTION = re.compile(r"\bexchange ((?:webhook )?\d+)(?: of ([^\s,;:()]+))?", re.IGNORECASE)


def short_id(task: str) -> str:
    """The manual's 8-character short id, for prose and figures (a listing shows an id whole the first time)."""
    return task[:8] if len(task) > 8 else task


def outcome(facts: ExchangeFacts, grpc_status: str | None = None) -> str:
    """How the call ended: its error, its last task state, a message (no task), a JSON-RPC
    result of null, the card a card fetch got, else its status (``grpc_status``, as `OK (0)`,
    for a gRPC call: HTTP's 200 says nothing about one)."""
    if facts.card is not None and facts.kind == "card" and not facts.failed:
        return f"card of {facts.card.name}" if facts.card.name else "a card without a name"
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


#: what ended a stream, by the note the recorder wrote (flow_exchange.py words them); first match wins
_STREAM_ENDS = (("error: the client closed the connection", "closed by the client"),
                ("error: the client reset the stream", "reset by the client"),
                ("error: the agent closed the connection", "closed by the agent"),
                ("error: the agent reset the stream", "reset by the agent"),
                ("error: the stream was reset by the client or the agent",
                 "reset by the client or the agent (the recorder cannot tell which)"))
_STOPPED = "a2a-capture: recording stopped before"


def _stream_ended_by(notes: list[str]) -> str | None:
    """What ended a stream, by the recorder's note; None when no note says (the agent ended it)."""
    ended = next((says for start, says in _STREAM_ENDS if any(note.startswith(start) for note in notes)), None)
    if ended is None:
        error = next((note.removeprefix("error: ") for note in notes if note.startswith("error: ")), None)
        ended = f"ended by an error: {error}" if error else None
    return ended


def silent_stream(notes: list[str], duration: float | None) -> str:
    """A stream that carried no event, said as what happened: its 200 only says the stream
    opened, so the sentence says that nothing came and what ended it, from the capture's notes
    (no note: the agent ended the response)."""
    seconds = f"{duration:.1f} s" if duration is not None else ""
    if any(note.startswith(_STOPPED) for note in notes):
        return f"stream opened, no event arrived{' in ' + seconds if seconds else ''}, " \
               "still open when the recording stopped"
    ended = _stream_ended_by(notes) or "ended by the agent"
    return f"stream opened, no event arrived, {ended}{' after ' + seconds if seconds else ''}"


def cut_stream(last: str, notes: list[str]) -> str:
    """A stream whose events came but that the agent did not end itself: its last event's
    outcome, and what ended it (the client that stopped waiting, a reset, the recording's end);
    empty when the agent ended it. No time: the capture's end of such a stream is its last
    event's, not the moment it was closed."""
    if any(note.startswith(_STOPPED) for note in notes):
        return f"{last} at the last event; the stream was still open when the recording stopped"
    ended = _stream_ended_by(notes)
    return f"{last} at the last event, then the stream was {ended}" if ended else ""


def explain(facts: ExchangeFacts) -> list[str]:
    """Facts that explain why the exchange looks as it does, as the manual's notes give them."""
    notes = []
    # the header came with 1.0: a call spelled in 0.x (message/send, /v1/message:send) has none to send
    if facts.is_a2a and facts.version_header is None and not (facts.version or "").startswith("0."):
        notes.append(f"The request has no {spec.VERSION_HEADER} header.")
    if facts.kind == "jsonrpc" and facts.failed and facts.status == 200:
        notes.append("The JSON-RPC error arrives in an event of the stream, which opened with HTTP 200."
                     if facts.events else "The JSON-RPC error arrives with HTTP 200.")
    return notes
