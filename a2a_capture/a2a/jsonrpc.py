"""JSON-RPC calls: the method as spelled, its version, its params and its answer."""

from __future__ import annotations

from a2a_capture.a2a import spec
from a2a_capture.a2a.answers import read_error
from a2a_capture.a2a.bodies import dig, nonempty
from a2a_capture.a2a.call import Call
from a2a_capture.a2a.payloads import StreamFacts, read_message, read_results


def read_jsonrpc(call: Call, stream: StreamFacts | None) -> bool:
    body = call.request_json
    if call.method != "POST":
        return False
    if isinstance(body, dict):
        if "jsonrpc" not in body and ("method" not in body or "params" not in body):
            return False
    elif not (isinstance(body, list) or (call.request_json_error and isinstance(call.response_json, dict)
                                         and "jsonrpc" in call.response_json)):
        return False
    call.kind, call.binding = "jsonrpc", "JSONRPC"
    if isinstance(body, dict):
        method = body.get("method")
        call.rpc_method = method = method if isinstance(method, str) else None
        call.operation, call.spelled_version, path = _SPELLINGS.get(method, _UNSPELLED)
        params = body.get("params")
        call.params = params = params if isinstance(params, dict) else {}
        call.tenant = nonempty(params.get("tenant"))
        call.task_id = nonempty(dig(params, path))
        read_message(call, params)
    read_error(call)
    read_results(call, call.response_json, stream)
    return True


#: a JSON-RPC method name -> (operation, the version its spelling implies, where its params name
#: the task: by the method's own name, as 0.1 names it `id`)
_SPELLINGS = {method: (*spelled, spec.METHOD_TASK_ID_PARAM.get(method, ())) for method, spelled in
              {**spec.LEGACY_METHODS, **{name: (name, "1.0") for name in spec.OPERATIONS}}.items()}


_UNSPELLED = (None, None, ())
