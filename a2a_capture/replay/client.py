"""Client replay: send the client side of a capture again, to live agents, in the original order.

The server makes up task ids, context ids, push-config ids and page tokens, so a literal
replay fails at the second call ("Task not found"). Each new response is laid beside the
recorded one; where they differ in such a value, the new value replaces the old one in every
later request. Calls keep the recorded pace; a task read that finds the task behind where the
recording saw it asks again, within a bound. The agents' webhooks go to a receiver of the
replay's own and become webhook blocks. Redacted credentials are restored only from values the
user gives (or the environment), or made up where they are the client's own (a push config's
token and credentials, for the replay's own receiver); what is still missing is said in one line
before anything is sent. A request never carries a redaction marker, never goes to an agent the
user did not name, and the new capture carries the recorded markers, not the secrets.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import httpx

from a2a_capture import nesting
from a2a_capture.a2a import spec
from a2a_capture.a2a.decode import decode
from a2a_capture.address import pair
from a2a_capture.capture.models import Capture, Exchange, ExchangeMeta, Request, Response, format_time
from a2a_capture.capture.sse import parse as parse_sse
from a2a_capture.errors import ReplayError
from a2a_capture.flow_exchange import StreamCopy, event_times
from a2a_capture.replay import preflight
from a2a_capture.replay.agents import recorded_agents
from a2a_capture.replay.credentials import Secrets, env_name
from a2a_capture.replay.grpc import refuse_grpc
from a2a_capture.replay.pace import Pace
from a2a_capture.replay.webhooks import Receiver, point_push_configs

#: values a server makes up, which later requests quote back
LEARNED_KEYS = frozenset({"id", "taskId", "contextId", "nextPageToken", "artifactId"})
#: headers the transport sets itself
TRANSPORT_HEADERS = frozenset({"host", "content-length", "transfer-encoding", "connection", "keep-alive",
                               "accept-encoding"})
#: seconds between two asks of a task read that found the task behind the recording
POLL_INTERVAL = 0.05
#: a task read waiting for its recorded state asks at most so many more times, the pause doubling up to this
WAIT_ASKS = 20
WAIT_PAUSE_MAX = 1.0
#: where the agents run now: NAME -> URL, or [NAME=]URL pairs as given (None: the next agent)
Targets = Mapping[str, str] | Sequence[tuple[str | None, str]]


@dataclass
class Substitutions:
    """Recorded value -> value of this run, learned as the replay goes."""

    values: dict[str, str] = field(default_factory=dict)

    def learn(self, old, new) -> None:
        if isinstance(old, dict) and isinstance(new, dict):
            for key in old.keys() & new.keys():
                before, after = old[key], new[key]
                if key in LEARNED_KEYS and isinstance(before, str) and isinstance(after, str):
                    if before and after and before != after:
                        self.values.setdefault(before, after)
                else:
                    self.learn(before, after)
        elif isinstance(old, list) and isinstance(new, list):
            for before, after in zip(old, new, strict=False):
                self.learn(before, after)

    def apply(self, text: str) -> str:
        for old in sorted(self.values, key=len, reverse=True):  # longest first: ids may share prefixes
            text = text.replace(old, self.values[old])
        return text


def agents_of(capture: Capture) -> dict[str, str]:
    """Each recorded agent origin, with the card name the session saw for it (or the origin)."""
    return {agent.origin: agent.name for agent in recorded_agents(capture)}


def resolve_targets(capture: Capture, targets: Targets) -> dict[str, str]:
    """Recorded origin -> new base URL. Every recorded agent needs one: the target that names it
    (its card's name, origin or host:port; names of other agents are let be, so one list serves
    many captures) or, unnamed, the next in the order the capture meets the agents."""
    agents = agents_of(capture)
    given = list(targets.items()) if isinstance(targets, Mapping) else list(targets)
    urls = pair(given, [[name, origin, origin.split("://", 1)[-1]] for origin, name in agents.items()], "--target",
                others_named=True)
    resolved, missing = {}, []
    for (origin, name), url in zip(agents.items(), urls, strict=True):
        host = origin.split("://", 1)[-1]
        if url is None:
            missing.append(f"{name} ({host})" if name != origin else host)
        else:
            preflight.check_url(name, url)
            resolved[origin] = url.rstrip("/")
    if missing:
        raise ReplayError("no --target for " + ", ".join(missing) + "; replay sends only to agents you name, "
                          "as --target NAME=URL (NAME: the card's name or the recorded host:port)")
    return resolved


@dataclass
class Options:
    """How a replay goes: pace, waits, where webhooks come in."""

    speed: float = 1.0  # the recorded gaps divided by this; 0: no delay
    wait_for_state: float = 5.0  # seconds a task read may ask again for the recorded state; 0: never
    wait_for_webhooks: float = 5.0  # seconds to wait, after the last call, for the recorded webhooks
    webhook_listen: tuple[str, int] = ("127.0.0.1", 0)  # 0: a free port
    timeout: float = 30.0
    check_targets: bool = True  # connect to each target before sending anything


def replay(capture: Capture, targets: Targets, secrets: dict[str, str] | None = None, *,
           options: Options | None = None, echo=None, redact: bool = True) -> Capture:
    """Send the capture's calls again; returns the new session as a capture, with no secret in it
    (``redact`` False: none of those replay sent; what the agents answered is kept as it came)."""
    refuse_grpc(capture, "replay")
    options = options or Options()
    bases = resolve_targets(capture, targets)
    if options.check_targets:
        names = agents_of(capture)
        for origin, url in bases.items():
            preflight.check_reachable(names[origin], url)
    keys = Secrets(secrets)
    calls = [exchange for exchange in capture.exchanges if not exchange.webhook]
    hooks = [exchange for exchange in capture.exchanges if exchange.webhook]
    missing = keys.missing(calls, [decode(exchange).operation for exchange in calls])
    if missing and echo:
        echo(f"replay: the capture redacted what the agent checks and no value was given: {'; '.join(missing)}; "
             f"give --secret PLACE=VALUE (or set {env_name(missing[0].split(' (')[0])}) for each, "
             "or those calls go without it")
    receiver = Receiver(*options.webhook_listen, answer=hooks[0].response if hooks else None, tokens=keys.tokens)
    exchanges: list[Exchange] = []
    with contextlib.ExitStack() as stack, httpx.Client(timeout=options.timeout, trust_env=False) as http:
        if hooks or any(_sets_push_config(decode(exchange)) for exchange in calls):
            stack.enter_context(receiver)
        session = _Session(http, bases, keys, receiver.url, options, echo)
        pace = Pace(options.speed)
        for exchange in calls:
            pace.before(exchange)
            exchanges.append(session.send(exchange))
            pace.after(exchange)
        if hooks:
            receiver.wait_for(len(hooks), options.wait_for_webhooks)
    received = list(receiver.received)
    spelled = {name.lower(): name for hook in hooks for name, _ in hook.request.headers}
    for number, hook in enumerate(received, 1):
        hook.number = number
        hook.request.headers = [(spelled.get(name, name), value) for name, value in hook.request.headers]
    exchanges = sorted(exchanges + received, key=lambda e: e.meta.start or "")
    notes = [f"replayed from a capture with {len(capture.exchanges)} exchanges"]
    if session.pointed:
        notes.append(f"replay pointed the push configs at its own webhook receiver, {receiver.url}: "
                     + ", ".join(sorted(session.pointed)))
    return keys.protect(Capture(notes=notes, meta=[("format", "a2a-capture/1")], exchanges=exchanges), redact)


class _Session:
    """The state a replay carries from call to call."""

    def __init__(self, http: httpx.Client, bases: dict[str, str], keys: Secrets, receiver: str,
                 options: Options, echo) -> None:
        self.http, self.bases, self.keys, self.receiver = http, bases, keys, receiver
        self.options, self.echo = options, echo
        self.subs = Substitutions()
        self.pointed: set[str] = set()  # recorded webhook URLs moved to the receiver

    def send(self, exchange: Exchange) -> Exchange:
        call = decode(exchange)
        request = exchange.request
        headers = [(name, self.subs.apply(value)) for name, value in request.headers
                   if name.lower() not in TRANSPORT_HEADERS]
        headers, dropped = self.keys.headers(headers)
        target, dropped_query = self.keys.target(self.subs.apply(request.target))
        body = self.subs.apply(request.body.decode("utf-8", "surrogateescape")).encode("utf-8", "surrogateescape")
        body, dropped_members = self.keys.body(body, call.operation)
        body, moved = point_push_configs(body, call.operation, self.receiver)
        dropped += dropped_query + dropped_members
        notes = [f"replay left out {place}: it was redacted and no secret was given for it" for place in dropped]
        notes += [f"replay pointed the push config's url {old} to its own receiver, {new}" for old, new in moved]
        self.pointed.update(old for old, _ in moved)
        base = self.bases.get(call.agent)
        if base is None:  # no Host header and no absolute URL: no agent to send it to
            raise ReplayError(f"exchange {exchange.label} names no agent (no Host header, no absolute URL); "
                              "replay cannot tell where to send it")
        new = self._once(exchange, base, target, headers, body, notes)
        new = self._until_recorded_state(exchange, call, new, base, target, headers, body, notes)
        _learn(self.subs, exchange, new)
        return new

    def _until_recorded_state(self, old: Exchange, call, new: Exchange, *args) -> Exchange:
        """A task read that found the task behind the recording asks again, within the bound: at most
        WAIT_ASKS more times, each pause twice the last (up to WAIT_PAUSE_MAX), within --wait-for-state,
        and never after an answer that is an error or no answer (the state will not come: asking again
        gets the same answer). The note says whether the state was reached, and if not, why."""
        if call.operation not in spec.TASK_READS or self.options.wait_for_state <= 0:
            return new
        wanted = _progress(call.states)
        deadline = time.monotonic() + self.options.wait_for_state
        asked, pause, answer = 0, POLL_INTERVAL, decode(new)
        state = call.states[-1][1] if call.states else "the recorded state"
        while _behind(_progress(answer.states), wanted):
            why = _no_more(new, answer)
            if why is None and asked >= WAIT_ASKS:
                why = f"replay asks at most {WAIT_ASKS} more times"
            if why is None and time.monotonic() + pause > deadline:
                why = f"--wait-for-state's {self.options.wait_for_state:g} s ran out"
            if why is not None:
                more = f"replay asked {asked} more time{'s' if asked != 1 else ''}, and " if asked else ""
                new.notes.append(f"{more}the task did not reach {state}, as recorded: {why}")
                return new
            time.sleep(pause)
            pause = min(pause * 2, WAIT_PAUSE_MAX)
            new = self._once(old, *args)
            answer = decode(new)
            asked += 1
        if asked:
            new.notes.append(f"replay asked {asked} more time{'s' if asked != 1 else ''} before the task reached "
                             f"{state}, as recorded")
        return new

    def _once(self, exchange: Exchange, base: str, target: str, headers, body: bytes, notes: list[str]) -> Exchange:
        request = exchange.request
        sent = [*headers, ("Accept-Encoding", "identity")]  # plain answers, so secrets in them can be redacted
        started = time.time()
        copy = StreamCopy()
        notes = list(notes)
        hang_up = hung_up(exchange)
        try:
            wire = [(name, value.encode("utf-8", "surrogateescape")) for name, value in sent]  # as recorded, not ASCII
            with self.http.stream(request.method, base + target, headers=wire, content=body or None) as answer:
                for chunk in answer.iter_raw():
                    copy(chunk)
                    if hang_up is not None and answer.headers.get("content-type", "").startswith(
                            "text/event-stream") and _complete_events(copy.body) >= hang_up.events:
                        self._hold(started, hang_up.seconds)
                        notes.append(f"replay closed the stream after {hang_up.events} event"
                                     f"{'s' if hang_up.events != 1 else ''}, as the recorded client did")
                        break
                response = Response(status=answer.status_code, reason=answer.reason_phrase,
                                    headers=[(k, v) for k, v in answer.headers.multi_items()], body=copy.body)
        except httpx.HTTPError as error:
            response = None
            notes.append(f"error: {type(error).__name__}: {error}")
        except httpx.InvalidURL as error:  # a capture's target that makes no URL (`:`, a bad port)
            raise ReplayError(f"exchange {exchange.label}: {base + target!r} is no URL to send it to "
                              f"({error})") from None
        ended = time.time()
        if response is not None and response.is_event_stream:
            response.event_times = event_times(copy, started)
        host = base.split("://", 1)[-1]
        new_request = Request(method=request.method, target=target, body=body, headers=[("Host", host), *sent])
        meta = ExchangeMeta(start=format_time(started), end=format_time(ended), server=host)
        return Exchange(number=exchange.number, title=exchange.title, request=new_request, response=response,
                        notes=notes, meta=meta)


    def _hold(self, started: float, seconds: float | None) -> None:
        """With the recorded pace, keep a stream open as long as the recorded client did before it hung up."""
        if self.options.speed > 0 and seconds is not None:
            wait = started + seconds / self.options.speed - time.time()
            if wait > 0:
                time.sleep(wait)


@dataclass(frozen=True)
class HangUp:
    """Where the recorded client closed a stream it had not read to its end."""

    events: int  # the events it had read
    seconds: float | None  # how long after the request it closed, where the capture has times


#: the recorder's note on a response the client closed before its end (flow_exchange.py's error note)
CLIENT_CLOSED = "error: the client closed the connection after part of the response"


def _complete_events(body: bytes) -> int:
    """The events of a stream so far that have ended (a frame still arriving is not one yet)."""
    events = len(parse_sse(body))
    return events if body.endswith((b"\n\n", b"\r\n\r\n", b"\r\r")) else max(events - 1, 0)


def hung_up(exchange: Exchange) -> HangUp | None:
    """Whether the recorded client closed this stream early, and where: a stream the replay must close
    after as many events (the session then reaches the recorded states)."""
    response = exchange.response
    if response is None or not response.is_event_stream or not any(
            note.startswith(CLIENT_CLOSED) for note in exchange.notes):
        return None
    started, ended = exchange.meta.started_at, exchange.meta.ended_at
    seconds = (ended - started).total_seconds() if started is not None and ended is not None else None
    return HangUp(events=len(response.events), seconds=seconds)


def _no_more(new: Exchange, answer) -> str | None:
    """Why asking again cannot bring the recorded state: the agent answered an error, or nothing."""
    if new.response is None:
        return "the agent did not answer"
    if answer.error is not None:
        return f"the agent answered {answer.error.name or 'an error'}, and would answer it again"
    if new.response.status >= 400:
        return f"the agent answered HTTP {new.response.status}"
    return None


def _sets_push_config(call) -> bool:
    return call.inline_push or call.operation == "CreateTaskPushNotificationConfig"


def _progress(states: list[tuple[str, str]]) -> list[int]:
    """How far along each task is, in the order the answer first names them."""
    last: dict[str, str] = {}
    for task, state in states:
        last[task] = state
    return [spec.STATE_PROGRESS.get(state, 0) for state in last.values()]


def _behind(progress: list[int], wanted: list[int]) -> bool:
    return len(progress) < len(wanted) or any(now < then for now, then in zip(progress, wanted, strict=False))


def _learn(subs: Substitutions, old: Exchange, new: Exchange) -> None:
    if old.response is None or new.response is None:
        return
    for header in ("etag",):
        before, after = old.response.header(header), new.response.header(header)
        if before and after and before != after:
            subs.values.setdefault(before, after)
    if old.response.is_event_stream and new.response.is_event_stream:
        for before, after in zip(old.response.events, new.response.events, strict=False):
            subs.learn(_json(before.data), _json(after.data))
    else:
        subs.learn(_json(old.response.content), _json(new.response.content))


def _json(data):
    if not data:
        return None
    try:
        return nesting.loads(data)
    except (ValueError, TypeError):
        return None

