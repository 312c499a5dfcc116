"""What went wrong, as the agent said it: JSON-RPC errors, HTTP+JSON statuses, gRPC codes."""

from __future__ import annotations

import json

from a2a_capture.a2a import spec
from a2a_capture.a2a.call import Call, CallError


def read_error(call: Call) -> None:
    call.error = _error_in(call.response_json, call.status, call.version_header or call.spelled_version)


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
