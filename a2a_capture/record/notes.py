"""The recorder's notes: they are the capture format's (a2a_capture/capture/notes.py), named here too
for the recorder's modules."""

from a2a_capture.capture.notes import (  # noqa: F401
    APPENDED,
    BODY_UNTIL_CLOSE,
    CARD_REWRITTEN,
    CLOSED_H2_LIKE_AGENT,
    CLOSED_LIKE_AGENT,
    ETAG_DERIVED,
    MODIFIED_SINCE_DROPPED,
    NEW_CONNECTION_AFTER_ERROR,
    PROXY_ANSWERED,
    RESET_LIKE_AGENT,
    STOPPED,
    UNRECORDED_ORIGIN,
    VALIDATORS_MAPPED,
    proxy_answered,
    unrecorded_origin,
)
