"""What decode makes of one exchange: a call and the error its agent answered."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from a2a_capture.a2a.cards import Card

#: the kinds of call that are A2A operations (``Call.is_a2a``; a rule's ``on=("a2a",)``)
A2A_KINDS = frozenset({"jsonrpc", "rest", "grpc"})


@dataclass(slots=True)
class CallError:
    """What the server said was wrong."""

    name: str | None = None  # TaskNotFoundError, ... or Unauthenticated / HTTP 503
    code: int | None = None  # JSON-RPC code
    http_status: int | None = None
    reason: str | None = None  # ErrorInfo reason
    message: str = ""
    #: the message or data says the task had already ended, whatever the code
    task_ended: bool = False


@dataclass(slots=True)
class Call:
    """One exchange, read as A2A: small facts, fixed once decoded (``decode`` fills a call in; nothing
    changes it after: a frozen dataclass's ``__init__`` stores each of its 45 fields by a call of
    ``object.__setattr__``, which took as long as the rest of decoding a small call).

    The parsed bodies are here for the rules that judge this call; whatever later calls need
    from them is extracted into the facts below (a page token, a returnImmediately flag, an
    extended card), so that an analysis keeps facts, never bodies.
    """

    number: int
    label: str
    file: str = ""
    title: str = ""
    line: int | None = None
    flow: int | None = None  # the flow's place in a mitmproxy flow file (which has no lines)
    #: "card", "jsonrpc", "rest", "grpc", "webhook" or "other"
    kind: str = "other"
    agent: str | None = None  # scheme://host:port, as the client addressed it
    #: the origin of the server that answered, where it is not ``agent``: the upstream of a
    #: reverse-proxy listener, or the address behind a host name
    upstream: str | None = None
    method: str = ""
    path: str = ""
    query: dict[str, list[str]] = field(default_factory=dict)
    binding: str | None = None  # JSONRPC, HTTP+JSON or GRPC
    #: the base path of the interface the call went to (REST: what precedes the route)
    base_path: str | None = None
    tenant: str | None = None
    operation: str | None = None
    rpc_method: str | None = None  # the JSON-RPC method as sent
    #: the version the request's own spelling implies (method name or route): "1.0", "0.3", "0.1"
    spelled_version: str | None = None
    version_header: str | None = None
    request_json: Any = None
    request_json_error: bool = False
    params: dict = field(default_factory=dict)
    task_id: str | None = None
    context_id: str | None = None
    message_id: str | None = None
    part_media_types: list[str] = field(default_factory=list)
    inline_push: bool = False
    status: int | None = None
    response_json: Any = None
    error: CallError | None = None
    #: (task id, canonical state) in the order the response and its frames showed them
    states: list[tuple[str, str]] = field(default_factory=list)
    #: a response streamed as SSE: when the frame that showed each of ``states`` arrived, in
    #: seconds after the call started (None where not recorded); None for any other response
    state_offsets: list[float | None] | None = None
    #: frames of exchange ``late_stream``'s stream that this block shows, and their states
    late_stream: int | None = None
    late_states: list[tuple[str, str]] = field(default_factory=list)
    streamed: bool = False
    events: int = 0
    card: Card | None = None
    card_bytes: int = 0
    #: the card a GetExtendedAgentCard call returned
    extended_card: Card | None = None
    #: ListTasks: its answer was the last page (an empty nextPageToken)
    last_page: bool = False
    started: float | None = None  # seconds since the epoch, where recorded
    duration: float | None = None
    #: the client's address (host:port) as the recorder saw it, where recorded: its port tells connections apart
    client: str | None = None
    notes: list[str] = field(default_factory=list)
    headers: list[tuple[str, str]] = field(default_factory=list)
    response_headers: list[tuple[str, str]] = field(default_factory=list)
    #: the agent's answer ended its connection (`Connection: close`, or HTTP/1.0 without keep-alive): the
    #: client's next request needs a new one
    closed_by_agent: bool = False
    #: the client library its bodies' habits showed (analyze.libraries.HABITS): the one field not decode's, named
    #: by the engine as the call is fed (``Analyzer.feed``), before any rule reads it; kept when bodies are let go
    client_library: str | None = None

    def header(self, name: str) -> str | None:
        wanted = name.lower()
        return next((value for key, value in self.headers if key.lower() == wanted), None)

    def response_header(self, name: str) -> str | None:
        wanted = name.lower()
        return next((value for key, value in self.response_headers if key.lower() == wanted), None)

    @property
    def is_a2a(self) -> bool:
        return self.kind in A2A_KINDS

    @property
    def ok(self) -> bool:
        """Answered with what was asked: a redirect (other than 304) did no work by itself."""
        return self.error is None and (self.status is None or self.status < 300 or self.status == 304)
