"""The attribute and event names a trace uses, in one table.

The span names and the `a2a.*`, `gen_ai.*`, `server.*`, `error.type` attributes follow the draft
"Semantic conventions for Agent2Agent Protocol (A2A)" of OpenTelemetry's GenAI conventions
(semantic-conventions-genai, docs/gen-ai/a2a.md, status Development: the A2A client span, named
`{a2a.method.name}`, kind CLIENT). `http.*` and `url.full` are the stable HTTP conventions. What
those do not cover is under `a2a_capture.*`.
"""

from __future__ import annotations

#: the draft A2A client span's attributes (docs/gen-ai/a2a.md, "Client")
METHOD = "a2a.method.name"
MESSAGE_ID = "a2a.message.id"
TASK_ID = "a2a.task.id"
TASK_STATE = "a2a.task.state"
TENANT = "a2a.tenant"
PROTOCOL_VERSION = "a2a.protocol.version"
REFERENCE_TASK_IDS = "a2a.message.reference_task_ids"
CONVERSATION_ID = "gen_ai.conversation.id"  # the A2A contextId, as the draft says
AGENT_NAME = "gen_ai.agent.name"
AGENT_DESCRIPTION = "gen_ai.agent.description"
AGENT_VERSION = "gen_ai.agent.version"
SERVER_ADDRESS = "server.address"
SERVER_PORT = "server.port"
ERROR_TYPE = "error.type"

#: the stable HTTP conventions
HTTP_METHOD = "http.request.method"
HTTP_STATUS = "http.response.status_code"
URL_FULL = "url.full"

#: what the conventions do not cover
EXCHANGE = "a2a_capture.exchange"
FILE = "a2a_capture.file"
LINE = "a2a_capture.line"
KIND = "a2a_capture.kind"
TITLE = "a2a_capture.title"
BINDING = "a2a_capture.binding"
ERROR_NAME = "a2a_capture.error.name"
ERROR_CODE = "a2a_capture.error.code"
ERROR_MESSAGE = "a2a_capture.error.message"
ROUND_TRIP = "a2a_capture.round_trip"
WASTED_SECONDS = "a2a_capture.wasted_seconds"
TIMED = "a2a_capture.timed"
STREAM_EVENTS = "a2a_capture.stream.events"
WEBHOOK = "a2a_capture.webhook"
REQUEST_BODY = "a2a_capture.request.body"
RESPONSE_BODY = "a2a_capture.response.body"
#: the root span of a capture file: its summary
EXCHANGES = "a2a_capture.exchanges"
FINDINGS = "a2a_capture.findings"
WASTED_ROUND_TRIPS = "a2a_capture.wasted_round_trips"
FRAGILE_ROUND_TRIPS = "a2a_capture.fragile_round_trips"

#: span events
FRAME_EVENT = "a2a_capture.stream.frame"
FRAME_KIND = "a2a_capture.frame.kind"
FRAME_INDEX = "a2a_capture.frame.index"
FINDING_EVENT = "a2a_capture.finding"
FINDING_RULE = "a2a_capture.finding.rule"
FINDING_SEVERITY = "a2a_capture.finding.severity"
FINDING_OUTCOME = "a2a_capture.finding.outcome"
FINDING_TITLE = "a2a_capture.finding.title"
FINDING_MESSAGE = "a2a_capture.finding.message"
FINDING_SPEC = "a2a_capture.finding.spec"
FINDING_RELATED = "a2a_capture.finding.related"

#: the root span's name, one per capture file (or per recording)
SESSION_SPAN = "a2a-capture session"
#: the resource's service.name unless told otherwise
SERVICE_NAME = "a2a-capture"
#: the instrumentation scope
SCOPE = "a2a_capture.otel"
