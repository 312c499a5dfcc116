"""A2A wire facts as data: method names, routes, errors, capability gates, task states.

Everything the decoder and the rules know about the protocol lives in these tables, so a
change in the spec is a change here. Section numbers are those of the A2A 1.0.1 spec.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cached_property, lru_cache

# -- operations ---------------------------------------------------------------------------------

#: canonical 1.0 operation names (they are also the 1.0 JSON-RPC method names)
OPERATIONS = (
    "SendMessage",
    "SendStreamingMessage",
    "GetTask",
    "ListTasks",
    "CancelTask",
    "SubscribeToTask",
    "CreateTaskPushNotificationConfig",
    "GetTaskPushNotificationConfig",
    "ListTaskPushNotificationConfigs",
    "DeleteTaskPushNotificationConfig",
    "GetExtendedAgentCard",
)

#: operations whose success is an SSE stream
STREAMING_OPERATIONS = frozenset({"SendStreamingMessage", "SubscribeToTask"})

#: JSON-RPC method names before 1.0 -> (canonical operation, the protocol versions that spell it
#: so, oldest first); reference §3.2: 0.2 renamed tasks/send and tasks/sendSubscribe to
#: message/send and message/stream, and tasks/pushNotification/* to tasks/pushNotificationConfig/*
#: what an interface of a card without protocolVersion (``url``-shaped: 0.2 or before) may speak;
#: the card does not say which
VERSIONS_BEFORE_0_3 = ("0.1", "0.2")
LEGACY_METHOD_VERSIONS: dict[str, tuple[str, tuple[str, ...]]] = {
    "message/send": ("SendMessage", ("0.2", "0.3")),
    "message/stream": ("SendStreamingMessage", ("0.2", "0.3")),
    "tasks/get": ("GetTask", ("0.1", "0.2", "0.3")),
    "tasks/cancel": ("CancelTask", ("0.1", "0.2", "0.3")),
    "tasks/resubscribe": ("SubscribeToTask", ("0.1", "0.2", "0.3")),
    "tasks/pushNotificationConfig/set": ("CreateTaskPushNotificationConfig", ("0.2", "0.3")),
    "tasks/pushNotificationConfig/get": ("GetTaskPushNotificationConfig", ("0.2", "0.3")),
    "tasks/pushNotificationConfig/list": ("ListTaskPushNotificationConfigs", ("0.3",)),
    "tasks/pushNotificationConfig/delete": ("DeleteTaskPushNotificationConfig", ("0.3",)),
    "agent/getAuthenticatedExtendedCard": ("GetExtendedAgentCard", ("0.3",)),
    "tasks/send": ("SendMessage", ("0.1",)),
    "tasks/sendSubscribe": ("SendStreamingMessage", ("0.1",)),
    "tasks/pushNotification/set": ("CreateTaskPushNotificationConfig", ("0.1",)),
    "tasks/pushNotification/get": ("GetTaskPushNotificationConfig", ("0.1",)),
}
#: method -> (canonical operation, the newest version that spells it so)
LEGACY_METHODS: dict[str, tuple[str, str]] = {
    method: (operation, versions[-1]) for method, (operation, versions) in LEGACY_METHOD_VERSIONS.items()
}


@lru_cache(maxsize=256)  # asked for every call, of a few versions
def spells(name_version: str, versions: tuple[str, ...] | None, declared: str) -> bool:
    """Whether a method name of ``name_version`` (valid in ``versions``) belongs to ``declared``.

    1.x versions share their names; before 1.0 each minor version had its own (0.3.0 is 0.3).
    """
    declared = ".".join(declared.split(".")[:2])
    if name_version.startswith("1."):
        return declared.split(".")[0] == "1"
    return declared in (versions or (name_version,))


def method_name(operation: str, version: str) -> str | None:
    """How ``version`` spells an operation's JSON-RPC method: for messages that name the right one."""
    version = ".".join(version.split(".")[:2])
    if version.split(".")[0] == "1":
        return operation
    return next((method for method, (op, versions) in LEGACY_METHOD_VERSIONS.items()
                 if op == operation and version in versions), None)

#: where each JSON-RPC method's task id sits in params
TASK_ID_PARAM: dict[str, tuple[str, ...]] = {
    "SendMessage": ("message", "taskId"),
    "SendStreamingMessage": ("message", "taskId"),
    "GetTask": ("id",),
    "CancelTask": ("id",),
    "SubscribeToTask": ("id",),
    "CreateTaskPushNotificationConfig": ("taskId",),
    "GetTaskPushNotificationConfig": ("taskId",),
    "ListTaskPushNotificationConfigs": ("taskId",),
    "DeleteTaskPushNotificationConfig": ("taskId",),
}
#: 0.1's methods that name the task otherwise: every 0.1 params object calls the task `id`
#: (TaskSendParams, TaskPushNotificationConfig, TaskIdParams), and there is no message.taskId.
#: A send's `id` is made by the client, "to create, continue, or restart a task" (0.1 spec): naming
#: a finished task restarts it there, which later versions no longer allow (reference §7)
TASK_ID_PARAM_0_1: dict[str, tuple[str, ...]] = {
    "tasks/send": ("id",),
    "tasks/sendSubscribe": ("id",),
    "tasks/pushNotification/set": ("id",),
    "tasks/pushNotification/get": ("id",),
}
#: where each JSON-RPC method, of any version, puts its task id in params (what decode reads)
METHOD_TASK_ID_PARAM: dict[str, tuple[str, ...]] = {
    **TASK_ID_PARAM,
    **{method: TASK_ID_PARAM[operation] for method, (operation, _) in LEGACY_METHODS.items()
       if operation in TASK_ID_PARAM},
    **TASK_ID_PARAM_0_1,
}


@dataclass(frozen=True)
class Route:
    """One HTTP+JSON route, relative to the interface URL (§11.3; proto http bindings)."""

    verbs: tuple[str, ...]
    pattern: str  # with {id} and {config} placeholders
    operation: str
    version: str = "1.0"

    @cached_property  # made once: escaping and compiling it took ~3 us, at each of the 21 routes a REST call tries
    def regex(self) -> re.Pattern[str]:
        body = re.escape(self.pattern).replace(r"\{id\}", r"(?P<id>[^/:?]+)").replace(
            r"\{config\}", r"(?P<config>[^/:?]+)"
        )
        return re.compile(body + r"\Z")

    @cached_property
    def needs(self) -> tuple[str, bool]:
        """(text, at the end): what every path ``regex`` finds ends with (True) or holds (False), the
        literal after the last placeholder or else before it: a test far quicker than the search."""
        head, _, tail = self.pattern.rpartition("}")
        return (tail, True) if tail else (head[:head.rindex("{")].rpartition("}")[2], False)


#: 1.0 routes; 0.3 routes are the same under `/v1` with a few differences (§3.2 of the reference)
ROUTES: tuple[Route, ...] = (
    Route(("POST",), "/message:send", "SendMessage"),
    Route(("POST",), "/message:stream", "SendStreamingMessage"),
    Route(("POST",), "/tasks/{id}:cancel", "CancelTask"),
    Route(("GET", "POST"), "/tasks/{id}:subscribe", "SubscribeToTask"),  # proto GET, prose POST
    Route(("POST",), "/tasks/{id}/pushNotificationConfigs", "CreateTaskPushNotificationConfig"),
    Route(("GET",), "/tasks/{id}/pushNotificationConfigs/{config}", "GetTaskPushNotificationConfig"),
    Route(("GET",), "/tasks/{id}/pushNotificationConfigs", "ListTaskPushNotificationConfigs"),
    Route(("DELETE",), "/tasks/{id}/pushNotificationConfigs/{config}", "DeleteTaskPushNotificationConfig"),
    Route(("GET",), "/tasks/{id}", "GetTask"),
    Route(("GET",), "/tasks", "ListTasks"),
    Route(("GET",), "/extendedAgentCard", "GetExtendedAgentCard"),
    Route(("POST",), "/v1/message:send", "SendMessage", "0.3"),
    Route(("POST",), "/v1/message:stream", "SendStreamingMessage", "0.3"),
    Route(("POST",), "/v1/tasks/{id}:cancel", "CancelTask", "0.3"),
    Route(("GET", "POST"), "/v1/tasks/{id}:subscribe", "SubscribeToTask", "0.3"),
    Route(("POST",), "/v1/tasks/{id}/pushNotificationConfigs", "CreateTaskPushNotificationConfig", "0.3"),
    Route(("GET",), "/v1/tasks/{id}/pushNotificationConfigs/{config}", "GetTaskPushNotificationConfig", "0.3"),
    Route(("GET",), "/v1/tasks/{id}/pushNotificationConfigs", "ListTaskPushNotificationConfigs", "0.3"),
    Route(("DELETE",), "/v1/tasks/{id}/pushNotificationConfigs/{config}", "DeleteTaskPushNotificationConfig",
          "0.3"),
    Route(("GET",), "/v1/tasks/{id}", "GetTask", "0.3"),
    Route(("GET",), "/v1/card", "GetExtendedAgentCard", "0.3"),
)

# -- discovery ----------------------------------------------------------------------------------

#: the well-known card path of 0.3 and 1.0 (§8.2, RFC 8615)
CARD_PATH = "/.well-known/agent-card.json"
#: the well-known card path of 0.1 and 0.2
CARD_PATH_0_2 = "/.well-known/agent.json"
#: paths that clients have tried for the card: the ≤0.2 path and common misspellings
LEGACY_CARD_PATHS = (
    CARD_PATH_0_2,
    "/.well-known/agent-card",
    "/.well-known/agentcard.json",
    "/.well-known/agent_card.json",
    "/agent-card.json",
    "/agent.json",
)
#: the 0.2.x extended card route (plain HTTP GET)
LEGACY_EXTENDED_CARD_PATH = "/agent/authenticatedExtendedCard"

# -- versions ------------------------------------------------------------------------------------

VERSION_HEADER = "A2A-Version"
#: what a server must assume when a request has no version header (§3.6.2)
VERSION_WHEN_ABSENT = "0.3"

# -- task states ----------------------------------------------------------------------------------

#: every spelling -> the 1.0 name
STATE_NAMES: dict[str, str] = {
    "TASK_STATE_UNSPECIFIED": "TASK_STATE_UNSPECIFIED",
    "TASK_STATE_SUBMITTED": "TASK_STATE_SUBMITTED",
    "TASK_STATE_WORKING": "TASK_STATE_WORKING",
    "TASK_STATE_COMPLETED": "TASK_STATE_COMPLETED",
    "TASK_STATE_FAILED": "TASK_STATE_FAILED",
    "TASK_STATE_CANCELED": "TASK_STATE_CANCELED",
    "TASK_STATE_CANCELLED": "TASK_STATE_CANCELED",  # 0.3 REST/gRPC
    "TASK_STATE_INPUT_REQUIRED": "TASK_STATE_INPUT_REQUIRED",
    "TASK_STATE_REJECTED": "TASK_STATE_REJECTED",
    "TASK_STATE_AUTH_REQUIRED": "TASK_STATE_AUTH_REQUIRED",
    "unknown": "TASK_STATE_UNSPECIFIED",
    "submitted": "TASK_STATE_SUBMITTED",
    "working": "TASK_STATE_WORKING",
    "completed": "TASK_STATE_COMPLETED",
    "failed": "TASK_STATE_FAILED",
    "canceled": "TASK_STATE_CANCELED",
    "cancelled": "TASK_STATE_CANCELED",
    "input-required": "TASK_STATE_INPUT_REQUIRED",
    "rejected": "TASK_STATE_REJECTED",
    "auth-required": "TASK_STATE_AUTH_REQUIRED",
}
TERMINAL_STATES = frozenset(
    {"TASK_STATE_COMPLETED", "TASK_STATE_FAILED", "TASK_STATE_CANCELED", "TASK_STATE_REJECTED"}
)
INTERRUPTED_STATES = frozenset({"TASK_STATE_INPUT_REQUIRED", "TASK_STATE_AUTH_REQUIRED"})
#: how far along a task is in each state: a later poll never shows a lower rank
STATE_PROGRESS = {"TASK_STATE_UNSPECIFIED": 0, "TASK_STATE_SUBMITTED": 1, "TASK_STATE_WORKING": 2,
                  **dict.fromkeys(INTERRUPTED_STATES, 3), **dict.fromkeys(TERMINAL_STATES, 4)}
#: operations that only read a task, so asking again changes nothing on the server
TASK_READS = frozenset({"GetTask", "ListTasks", "SubscribeToTask"})
#: request members that hold a push notification config (1.0, then 0.3 spelling), whose `url`
#: is where the agent will send webhooks; CreateTaskPushNotificationConfig's params are one too
PUSH_CONFIG_MEMBERS = frozenset({"taskPushNotificationConfig", "pushNotificationConfig"})


def canonical_state(value: object) -> str | None:
    return STATE_NAMES.get(value) if isinstance(value, str) else None


# -- errors ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class ErrorKind:
    name: str
    code: int | None  # JSON-RPC code
    http_status: int | None  # HTTP+JSON status (1.0.1)
    reason: str | None  # google.rpc.ErrorInfo reason


ERRORS: tuple[ErrorKind, ...] = (
    ErrorKind("TaskNotFoundError", -32001, 404, "TASK_NOT_FOUND"),
    ErrorKind("TaskNotCancelableError", -32002, 400, "TASK_NOT_CANCELABLE"),
    ErrorKind("PushNotificationNotSupportedError", -32003, 400, "PUSH_NOTIFICATION_NOT_SUPPORTED"),
    ErrorKind("UnsupportedOperationError", -32004, 400, "UNSUPPORTED_OPERATION"),
    ErrorKind("ContentTypeNotSupportedError", -32005, 400, "CONTENT_TYPE_NOT_SUPPORTED"),
    ErrorKind("InvalidAgentResponseError", -32006, 500, "INVALID_AGENT_RESPONSE"),
    ErrorKind("ExtendedAgentCardNotConfiguredError", -32007, 400, "EXTENDED_AGENT_CARD_NOT_CONFIGURED"),
    ErrorKind("ExtensionSupportRequiredError", -32008, 400, "EXTENSION_SUPPORT_REQUIRED"),
    ErrorKind("VersionNotSupportedError", -32009, 400, "VERSION_NOT_SUPPORTED"),
    ErrorKind("JSONParseError", -32700, 400, "PARSE_ERROR"),
    ErrorKind("InvalidRequestError", -32600, 400, "INVALID_REQUEST"),
    ErrorKind("MethodNotFoundError", -32601, 404, "METHOD_NOT_FOUND"),
    ErrorKind("InvalidParamsError", -32602, 400, "INVALID_PARAMS"),
    ErrorKind("InternalError", -32603, 500, "INTERNAL_ERROR"),
)
ERRORS_BY_CODE = {kind.code: kind for kind in ERRORS if kind.code is not None}
#: where 0.x named a code otherwise (reference §5.1: -32007 was the authenticated extended card's)
ERROR_NAMES_0X = {-32007: "AuthenticatedExtendedCardNotConfiguredError"}
ERRORS_BY_REASON = {kind.reason: kind for kind in ERRORS if kind.reason is not None}
ERRORS_BY_NAME = {kind.name: kind for kind in ERRORS}
#: a2a-sdk 0.3's gRPC binding sends no ErrorInfo: the error's name leads `grpc-message`
#: ("TaskNotCancelableError: Task cannot be canceled ...")
GRPC_MESSAGE_ERROR = re.compile(r"\A(\w+Error): ")

#: errors that say the request itself was broken (§9.5)
MALFORMED_ERRORS = frozenset({"JSONParseError", "InvalidRequestError", "InvalidParamsError"})

#: how an agent that follows the spec refuses a call, by what is wrong with it. A rule that
#: predicts a refusal names one of these (``@rule(fails_as=...)``): its finding is a wasted round
#: trip when the call failed so, and not when it failed for another reason (TaskNotFoundError for
#: a call sent to an address the card does not declare: the agent took the address all the same).
#: Names as `decode` gives them: A2A error names, "HTTP 404", "gRPC UNIMPLEMENTED"
REFUSED_ADDRESS = frozenset({"HTTP 404", "HTTP 405", "HTTP 501", "MethodNotFoundError", "UnsupportedOperationError",
                             "gRPC UNIMPLEMENTED"})
REFUSED_VERSION = REFUSED_ADDRESS | {"VersionNotSupportedError", "InvalidRequestError", "HTTP 400"}
REFUSED_CREDENTIALS = frozenset({"Unauthenticated", "PermissionDenied", "HTTP 401", "HTTP 403"})
REFUSED_CAPABILITY = REFUSED_ADDRESS | {"PushNotificationNotSupportedError", "ExtendedAgentCardNotConfiguredError",
                                        "AuthenticatedExtendedCardNotConfiguredError"}
REFUSED_INPUT = frozenset({"ContentTypeNotSupportedError", "InvalidParamsError", "HTTP 400", "HTTP 415"})
REFUSED_MALFORMED = MALFORMED_ERRORS | {"HTTP 400", "HTTP 422", "gRPC INVALID_ARGUMENT"}
REFUSED_UNKNOWN_TASK = frozenset({"TaskNotFoundError", "HTTP 404", "gRPC NOT_FOUND"})
#: an error's message saying the task is unknown, whatever its code (a2a-server 0.6 answers
#: -32603 "Internal error: TaskNotFound: ...")
TASK_UNKNOWN_WORDS = re.compile(r"TaskNotFound|\btask\b[^.;]{0,60}\bnot (?:be )?found", re.IGNORECASE)

#: an error's message or data saying the task has ended: agents answer a call on a finished task
#: with many codes (-32602 from a2a-sdk 0.3 for tasks/resubscribe, -32004 in 1.0); the words tell
TASK_ENDED_WORDS = re.compile(
    r"(?i)terminal\s+state|in\s+a\s+terminal|is\s+terminal|already\s+(?:completed|finished|ended|done|canceled|cancelled"
    r"|failed|rejected)|task\s+(?:has\s+)?(?:ended|finished)|(?:is|was)\s+(?:completed|canceled|cancelled|failed|rejected)"
    r"|not\s+(?:cancelable|cancellable|resubscribable)|cannot\s+be\s+(?:canceled|cancelled|resubscribed)"
    r"|current\s+state:\s*(?:TaskState\.)?(?:completed|canceled|cancelled|failed|rejected)\b")


# -- capability gates (§3.3.4) ---------------------------------------------------------------------


@dataclass(frozen=True)
class Gate:
    capability: str  # the AgentCapabilities field
    rule: str  # the rule that flags a call the card rules out
    error: str  # what the server answers


#: how a card of each shape spells a capability, for messages that quote the card's own field
CAPABILITY_FIELDS: dict[tuple[str, str], str] = {
    ("extendedAgentCard", "0.3"): "supportsAuthenticatedExtendedCard",
    # a hybrid card (0.3 and 1.0 fields, as compat agents serve a 0.3 client) may carry either
    ("extendedAgentCard", "both"): "capabilities.extendedAgentCard or supportsAuthenticatedExtendedCard",
}


def capability_field(capability: str, shape: str) -> str:
    return CAPABILITY_FIELDS.get((capability, shape), f"capabilities.{capability}")


GATES: dict[str, Gate] = {
    "SendStreamingMessage": Gate("streaming", "capability-streaming", "UnsupportedOperationError"),
    "SubscribeToTask": Gate("streaming", "capability-streaming", "UnsupportedOperationError"),
    "CreateTaskPushNotificationConfig": Gate("pushNotifications", "capability-push",
                                             "PushNotificationNotSupportedError"),
    "GetTaskPushNotificationConfig": Gate("pushNotifications", "capability-push",
                                          "PushNotificationNotSupportedError"),
    "ListTaskPushNotificationConfigs": Gate("pushNotifications", "capability-push",
                                            "PushNotificationNotSupportedError"),
    "DeleteTaskPushNotificationConfig": Gate("pushNotifications", "capability-push",
                                             "PushNotificationNotSupportedError"),
    "GetExtendedAgentCard": Gate("extendedAgentCard", "capability-extended-card", "UnsupportedOperationError"),
}

# -- media types -------------------------------------------------------------------------------------

#: the media type a part has when it does not say (§3.4, Part)
IMPLIED_PART_TYPES = {"text": "text/plain", "data": "application/json"}
#: input modes as cards of 0.1 and 0.2 often wrote them (a kind of part, not a media type: Google's
#: first samples' default was ["text"]), and the media types each covers
MODALITIES = {"text": "text/*", "data": "application/json", "file": "*/*", "image": "image/*",
              "audio": "audio/*", "video": "video/*"}

#: a message's role when the user sent it, as 1.0 and 0.3 spell it (§3.4, Message): an agent's
#: push carries the agent's messages, a SendMessage the user's
USER_ROLES = frozenset({"ROLE_USER", "user"})


# -- the gRPC binding (§10) ---------------------------------------------------------------------------

#: gRPC services -> the protocol version their package spells (1.0 `lf.a2a.v1`, 0.3 `a2a.v1`)
GRPC_SERVICES = {"lf.a2a.v1.A2AService": "1.0", "a2a.v1.A2AService": "0.3"}
#: 0.3 rpc names that differ from the 1.0 operation (0.3 proto, §3.2 of the reference)
GRPC_LEGACY_RPCS = {
    "TaskSubscription": "SubscribeToTask",
    "ListTaskPushNotificationConfig": "ListTaskPushNotificationConfigs",
    "GetAgentCard": "GetExtendedAgentCard",
}
#: where the A2A message types of each service come from: (module, what installs it)
GRPC_SCHEMAS = {
    "lf.a2a.v1.A2AService": "a2a.types.a2a_pb2",
    "a2a.v1.A2AService": "a2a.compat.v0_3.a2a_v0_3_pb2",
}
#: the metadata key that carries the version (§10.2; lower case, as gRPC sends it)
GRPC_VERSION_METADATA = "a2a-version"
#: gRPC status codes by number (grpc/grpc doc/statuscodes.md)
GRPC_STATUS_NAMES = (
    "OK", "CANCELLED", "UNKNOWN", "INVALID_ARGUMENT", "DEADLINE_EXCEEDED", "NOT_FOUND", "ALREADY_EXISTS",
    "PERMISSION_DENIED", "RESOURCE_EXHAUSTED", "FAILED_PRECONDITION", "ABORTED", "OUT_OF_RANGE",
    "UNIMPLEMENTED", "INTERNAL", "UNAVAILABLE", "DATA_LOSS", "UNAUTHENTICATED",
)
#: gRPC statuses that name an error without an ErrorInfo (§3.3.2 auth; §5.4 for A2A errors)
GRPC_STATUS_ERRORS = {"UNAUTHENTICATED": "Unauthenticated", "PERMISSION_DENIED": "PermissionDenied"}
