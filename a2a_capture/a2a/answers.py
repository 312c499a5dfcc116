"""What went wrong, as the agent said it: JSON-RPC errors, HTTP+JSON statuses, gRPC codes."""

from __future__ import annotations

import json

from a2a_capture.a2a import spec
from a2a_capture.a2a.call import Call, CallError

#: the recorder's notes that say the agent itself ended an exchange (capture/notes.py and record/flows.py word
#: them), and the error that is then the exchange's outcome; first match wins
ENDED_BY_AGENT = (
    ("error: the agent closed the connection after part of the response", "closed by the agent mid-response"),
    ("error: the agent closed the connection", "closed by the agent"),
    ("error: the agent reset the stream after part of the response", "reset by the agent mid-response"),
    ("error: the agent reset the stream", "reset by the agent"),
)


def read_error(call: Call) -> None:
    call.error = _error_in(call.response_json, call.status, call.version_header or call.spelled_version)


def read_ending(call: Call) -> None:
    """A call that said no error of its own but that the agent ended by closing its connection or
    resetting its stream (the recorder's note says so) failed by that: it is the call's outcome."""
    if call.error is None and call.notes:
        ended = ended_by_agent(call.notes)
        if ended is not None:
            call.error = CallError(name=ended, http_status=call.status if call.status and call.status >= 400 else None)


def ended_by_agent(notes: list[str]) -> str | None:
    """The error an agent's close or reset was, by the recorder's note; None when no note says one."""
    for start, name in ENDED_BY_AGENT:
        if any(note.startswith(start) for note in notes):
            return name
    return None


def _error_in(body: object, status: int | None, version: str | None) -> CallError | None:
    """What went wrong by the response body and status; ``version`` is the one the call spoke."""
    if isinstance(body, dict) and isinstance(body.get("error"), dict):
        return error_from(body["error"], status, before_1_0(version))
    if status is not None and status >= 400:
        return error_from(body if isinstance(body, dict) else None, status, before_1_0(version))
    return None


def before_1_0(version: str | None) -> bool:
    """Whether a call that spoke this version (its header, else its spelling) spoke one before 1.0,
    whose error names differ."""
    return version is not None and version.startswith("0.")


def error_from(error: object, status: int | None, pre_1: bool = False) -> CallError:
    """An error from a JSON-RPC error object, a google.rpc.Status, or RFC 9457 problem JSON."""
    result = CallError(http_status=status if status and status >= 400 else None)
    if not isinstance(error, dict):
        result.name = _status_name(status)
        return result
    data = error.get("data")
    said = " ".join(text for text in (error.get("message"), error.get("detail"),
                                      data if isinstance(data, str) else
                                      json.dumps(data)[:2000] if isinstance(data, (dict, list)) else None)
                    if isinstance(text, str))
    result.task_ended = bool(spec.TASK_ENDED_WORDS.search(said))
    code = error.get("code")
    message = error.get("message") or error.get("title") or error.get("detail")
    result.message = message if isinstance(message, str) else ""
    details = error.get("data") if "data" in error else error.get("details")
    for detail in details if isinstance(details, list) else [details]:
        if isinstance(detail, dict) and isinstance(detail.get("reason"), str):
            result.reason = detail["reason"]
            break
    else:
        if isinstance(code, str) and code in spec.ERRORS_BY_REASON:  # nodus-a2a-wire: the reason as `code`
            result.reason = code
    if isinstance(code, int) and code < 0:
        result.code = code
        kind = spec.ERRORS_BY_CODE.get(code)
        result.name = (spec.ERROR_NAMES_0X.get(code) if pre_1 else None) or (
            kind.name if kind else f"JSON-RPC error {code}")
    elif result.reason in spec.ERRORS_BY_REASON:
        result.name = spec.ERRORS_BY_REASON[result.reason].name
    else:
        result.name = _status_name(status if status else code if isinstance(code, int) else None)
    return result


def _status_name(status: int | None) -> str | None:
    return {401: "Unauthenticated", 403: "PermissionDenied"}.get(status or 0,
                                                                  f"HTTP {status}" if status else None)
