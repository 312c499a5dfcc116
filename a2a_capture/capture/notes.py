"""The notes the recorder writes into a capture, in one place, so the analyzer can read
back the ones that carry meaning (an origin the recording missed, an answer the proxy made).

Each note is for a person first; the patterns below are what tools match.
"""

from __future__ import annotations

import re

CARD_REWRITTEN = "a2a-capture rewrote the card's interface {old} to {new} so later calls pass the recorder"
UNRECORDED_ORIGIN = ("a2a-capture: the card names {origin}, which no listener of this recording fronts, so calls "
                     "there are not recorded (record it too with --agent {origin} --listen HOST:PORT)")
STOPPED = "a2a-capture: recording stopped before {what}; what had arrived is kept"
PROXY_ANSWERED = ("a2a-capture: the client got {status} from the proxy, not from the agent "
                  "(the agent sent no response)")
CLOSED_LIKE_AGENT = ("a2a-capture: the agent closed the connection without answering, so the client's connection was "
                     "closed without an answer too (the proxy made no answer of its own)")
CLOSED_H2_LIKE_AGENT = ("a2a-capture: the agent closed its HTTP/2 connection without answering, so the client's "
                        "stream was reset (RST_STREAM INTERNAL_ERROR; its own connection to the proxy stays open, "
                        "and the proxy made no answer of its own)")
RESET_LIKE_AGENT = ("a2a-capture: the agent reset the HTTP/2 stream without answering, so the client's {passed} "
                    "(the proxy made no answer of its own)")
NEW_CONNECTION_AFTER_ERROR = ("a2a-capture sends the next call on a new connection to the agent: agents often "
                              "close theirs after an error answer without saying so")
ETAG_DERIVED = ("a2a-capture gave the relayed card the ETag {new}, derived from the agent's {old} and the rewrite, "
                "so a card cached without the recorder is never revalidated as this one")
VALIDATORS_MAPPED = ("a2a-capture sent the agent If-None-Match: {passed} for the client's {sent} (only a card this "
                     "recording rewrote is revalidated; any other is fetched again, to be rewritten)")
MODIFIED_SINCE_DROPPED = ("a2a-capture did not send the agent the client's If-Modified-Since: {sent} (the client may "
                          "hold the agent's card as it was, not rewritten)")
BODY_UNTIL_CLOSE = "the agent ended this body by closing the connection (it sent no length)"
APPENDED = "a2a-capture: a new recording starts here, appended after exchange {last} of an earlier one"

_UNRECORDED = re.compile(r"a2a-capture: the card names (\S+), which no listener of this recording fronts")


def unrecorded_origin(note: str) -> str | None:
    """The origin an UNRECORDED_ORIGIN note names, or None for any other note."""
    found = _UNRECORDED.match(note)
    return found.group(1) if found else None


def proxy_answered(notes: list[str]) -> bool:
    """Whether the response a client got was made by the proxy, not the agent."""
    return any(note.startswith("a2a-capture: the client got ") and "from the proxy" in note for note in notes)
