"""What the recorder does with a flow beyond reading it (a2a_capture/flow_exchange.py turns a flow
into an exchange): the copies of its bodies as they come, an agent's failure passed on to its
client as it was, a connection retired after an error, a body too large to hold redacted apart.

Works on mitmproxy's flow objects by duck typing, so the library does not import mitmproxy.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from a2a_capture.capture.models import Exchange
from a2a_capture.flow_exchange import AGENT_CLOSED, ERROR_KINDS, frame_boundary, media_type, stream_reset
from a2a_capture.record import bodies
from a2a_capture.record import notes as recorder_notes
from a2a_capture.record.redact import Redactor


@dataclass
class OpenFlow:
    """A flow the recorder has not written yet, and the copies of its bodies as they came
    (kept beside the flow: mitmproxy saves flow metadata and it can only hold plain data)."""

    flow: object
    request_copy: bodies.BodyCopy | None = None
    response_copy: bodies.BodyCopy | None = None
    #: the notes of a response that was complete before its request was
    answered_early: list[str] | None = None
    #: the notes of a card rewritten as it was held back from a stream
    card_notes: list[str] = field(default_factory=list)

    def spooled(self) -> dict:
        """The bodies too large to hold, by direction, as the capture writer streams them."""
        found = {"request": self.request_copy.spooled() if self.request_copy else None,
                 "response": self.response_copy.spooled() if self.response_copy else None}
        return {key: value for key, value in found.items() if value is not None}

    def close(self) -> None:
        for copy in (self.request_copy, self.response_copy):
            if copy is not None:
                copy.close()


def retire_after_error(flow) -> bool:
    """An error answer (4xx or 5xx) over HTTP/1 that does not say the connection closes.

    Agents often close after one all the same (uvicorn does when the app raised; servers that
    refuse a request before reading its body do). Talking to the agent directly, the client
    sees that close before its next call and opens a new connection. Through the proxy its own
    connection stays open, and mitmproxy could send the next call on the agent's connection
    just as it closes, and the client would lose that call. So the agent's connection is not
    used again: the client's next call goes on a new one.

    The addon does that by clearing ``ConnectionState.CAN_WRITE`` on ``flow.server_conn``:
    mitmproxy has no hook to retire an upstream connection, and reuses one only while its state
    is ``OPEN`` (``Connection.connected``, read in the HTTP layer's ``get_connection``). That is
    mitmproxy's internal state, so a live test (``kept-open`` in tests/test_recorder_errors.py:
    the agent keeps its connection after the error) fails if an upgrade stops honouring it.
    """
    response = flow.response
    http1 = ("HTTP/1.1", "HTTP/1.0")
    return (response is not None and response.status_code >= 400
            and flow.request.http_version in http1 and response.http_version in http1
            and "close" not in response.headers.get("connection", "").lower()
            and "close" not in flow.request.headers.get("connection", "").lower())


#: mitmproxy's words for an agent that closed its connection before any answer
_HUNG_UP = tuple(needle for needle, kind in ERROR_KINDS if kind == AGENT_CLOSED)


#: how mitmproxy (11 and 12) words an HTTP/2 connection that closed (by TCP, or GOAWAY) under a stream
_H2_CLOSED = ("peer closed connection", "HTTP/2 connection closed")


def passed_on(flow) -> str | None:
    """The agent failed before answering in a way its client would have seen for itself: it
    closed its connection (an idle keep-alive connection it closed as the request came; an
    HTTP/2 connection, with GOAWAY or without) or reset its HTTP/2 stream. mitmproxy would
    answer 502 in the agent's name; the addon kills the flow instead, so the client sees its
    connection closed or its stream reset, as it would have talking to the agent directly.
    Returns the capture's note saying so, or None."""
    if flow.response is not None or flow.error is None:
        return None
    h2_client = getattr(flow.client_conn, "alpn", None) == b"h2"
    if flow.error.msg.lower().startswith(_HUNG_UP):
        return recorder_notes.CLOSED_LIKE_AGENT
    if (flow.error.msg.startswith(_H2_CLOSED) and flow.request.timestamp_end
            and getattr(flow.server_conn, "alpn", None) == b"h2"):
        return recorder_notes.CLOSED_H2_LIKE_AGENT if h2_client else recorder_notes.CLOSED_LIKE_AGENT
    reset = stream_reset(flow)
    if reset is None or reset[1] is not True:
        return None
    if not h2_client:
        passed = "connection was closed (HTTP/1 has no stream to reset)"
    elif reset[0] == "INTERNAL_ERROR":
        passed = "stream was reset too (RST_STREAM INTERNAL_ERROR)"
    else:  # mitmproxy resets a killed flow's stream with INTERNAL_ERROR only
        passed = f"stream was reset too, with INTERNAL_ERROR in place of {reset[0]}"
    return recorder_notes.RESET_LIKE_AGENT.format(passed=passed)


def redact_spilled(exchange: Exchange, request_copy, response_copy, redactor: Redactor) -> None:
    """Redact the bodies too large to hold, a piece at a time, off the proxy's event loop (the
    recorder runs this in its writer thread, with a redactor of its own)."""
    removed: list[str] = []
    for message, copy in ((exchange.request, request_copy), (exchange.response, response_copy)):
        if message is not None and copy is not None and copy.spilled:
            removed += _redact_spilled(redactor, message.headers, copy, exchange.notes)
    exchange.meta.redacted = list(dict.fromkeys([*exchange.meta.redacted, *removed]))


def _redact_spilled(redactor: Redactor, headers: list[tuple[str, str]], copy: bodies.BodyCopy,
                    notes: list[str]) -> list[str]:
    """Redact a body too large to hold, a piece at a time: an event stream frame by frame, any other
    body in pieces cut between JSON members, each scanned by the policy's names and shapes."""
    content_type = media_type(headers)
    if next((value for name, value in headers if name.lower() == "content-encoding"), "identity") != "identity":
        notes.append(f"a2a-capture could not redact this {copy.kept}-byte compressed body: it is too large to decode "
                     "in memory; it is written as it travelled")
        return []
    if content_type == "text/event-stream":
        return copy.redact(lambda piece: redactor.body(piece, content_type), frame_boundary(copy.head))
    return copy.redact(lambda piece: _clean_text(redactor, piece), b",")


def _clean_text(redactor: Redactor, piece: bytes) -> tuple[bytes, list[str]]:
    """A piece of a large body, scanned as text: the policy's shapes, `Name: value` lines and
    `"name": "value"` members (the piece is not a JSON document to parse)."""
    cleaned, kinds = redactor.text(piece.decode("utf-8", "surrogateescape"), lines=True)
    if not kinds:
        return piece, []
    redactor.found += [("body text", kind) for kind in kinds]
    return cleaned.encode("utf-8", "surrogateescape"), [f"body text ({', '.join(dict.fromkeys(kinds))})"]
