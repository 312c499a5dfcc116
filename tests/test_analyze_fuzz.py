"""Property: A2A-shaped traffic with arbitrary contents never crashes the analyzer or the reports."""

from __future__ import annotations

import json
import os

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from a2a_capture.a2a import spec
from a2a_capture.capture import Capture, Exchange, Request, Response
from tests.builders import analyze_everything

KEYS = st.sampled_from(["id", "taskId", "contextId", "status", "state", "message", "parts", "text", "task",
                        "statusUpdate", "artifactUpdate", "result", "error", "code", "data", "reason", "kind",
                        "supportedInterfaces", "url", "capabilities", "streaming", "pushNotifications", "skills",
                        "name", "nextPageToken", "configuration", "returnImmediately", "mediaType", "tenant"])
SCALARS = st.one_of(st.none(), st.booleans(), st.integers(-40000, 40000), st.text(max_size=12),
                    st.sampled_from([*spec.STATE_NAMES, "http://localhost:9001/rpc", "JSONRPC", "1.0"]))
JSON = st.recursive(SCALARS, lambda children: st.one_of(st.lists(children, max_size=3),
                                                         st.dictionaries(KEYS, children, max_size=4)), max_leaves=12)
METHODS = st.sampled_from([*spec.OPERATIONS, *spec.LEGACY_METHODS, "Nope", ""])
PATHS = st.sampled_from(["/rpc", "/a2a/rest/message:send", "/tasks/abc", "/tasks/abc:cancel", "/tasks",
                         "/.well-known/agent-card.json", "/.well-known/agent.json", "/v1/card", "/extendedAgentCard",
                         "/tasks/abc/pushNotificationConfigs/x", "/approve/1"])


@st.composite
def a2a_exchange(draw, number: int) -> Exchange:
    path = draw(PATHS)
    method = draw(st.sampled_from(["GET", "POST", "DELETE"]))
    if draw(st.booleans()):
        body = json.dumps({"jsonrpc": "2.0", "id": number, "method": draw(METHODS), "params": draw(JSON)}).encode()
    else:
        body = json.dumps(draw(JSON)).encode() if draw(st.booleans()) else b""
    headers = [("Host", draw(st.sampled_from(["localhost:9001", "localhost:9002", "h"])))]
    if draw(st.booleans()):
        headers.append(("A2A-Version", draw(st.sampled_from(["1.0", "0.3", "2", ""]))))
    stream = draw(st.booleans())
    if stream:
        frames = draw(st.lists(JSON, max_size=4))
        response_body = b"".join(b"data: " + json.dumps(f).encode() + b"\n\n" for f in frames)
        content_type = "text/event-stream"
    else:
        response_body, content_type = json.dumps(draw(JSON)).encode(), "application/json"
    response = Response(status=draw(st.sampled_from([200, 400, 401, 404, 500])), reason="X",
                        headers=[("Content-Type", content_type)], body=response_body)
    return Exchange(number=number, title="fuzz", webhook=draw(st.booleans()) and number > 3,
                    request=Request(method=method, target=path, headers=headers, body=body),
                    response=draw(st.none() | st.just(response)))


@st.composite
def sessions(draw) -> Capture:
    count = draw(st.integers(1, 8))
    return Capture(exchanges=[draw(a2a_exchange(number)) for number in range(1, count + 1)])


@settings(max_examples=int(os.environ.get("FUZZ_EXAMPLES", "300")), deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(sessions())
def test_a2a_shaped_nonsense_never_crashes(tmp_path, capture):
    analyze_everything(capture, tmp_path)
