"""Calls about tasks that the client could have known were pointless."""

from __future__ import annotations

from a2a_capture.a2a import spec
from a2a_capture.analyze.findings import Hit, ref, rule
from a2a_capture.analyze.libraries import library_fix
from a2a_capture.analyze.session import view_of


def _refused_as_ended(error) -> bool:
    """The answer a call on a finished task gets: UnsupportedOperationError in 1.0 (§3.1.1, §3.1.6), or
    any error whose words say the task had ended (0.3 servers answer -32602 or -32603 with a message)."""
    return error.name == "UnsupportedOperationError" or error.task_ended


def _state_word(state: str) -> str:
    return state.removeprefix("TASK_STATE_").lower().replace("_", "-")


#: the case of the terminal rules where the agent said the task had ended and the client had seen nothing of it
_UNSEEN = ("unseen", "advice", "the agent refused it as already ended, but no earlier answer in the capture had "
                               "shown the task end: nothing the client held predicted it")
#: what a finding on a call on an ended task says: which exchange showed it ended, and in what state
_POLLED = "{ref} had already shown task {task} {state}; a finished task does not change"
_ENDED = "{ref} had already shown task {task} {state}"
_MESSAGED = "the message names task {task}, which {ref} had shown {state}; send a new task in its context instead"


def _already_ended(ended, call, said: str) -> str:
    """``said`` (one of the sentences above) of a call on a task that ``ended`` showed ended."""
    return said.format(ref=ref(ended.call, call), task=call.task_id, state=_state_word(ended.state))


@rule(
    id="task-unknown",
    on=("a2a",),
    severity="warning",
    title="Operation on a task the agent did not know",
    spec="§3.3.2, §3.4.2",
    why="""
Task ids are made by the server. A call with an id the agent never issued (a made-up id, a
typo, another agent's task, a task from before a restart) is answered with TaskNotFoundError
(-32001, HTTP 404).""",
    example="GetTask with id 00000000-0000-4000-8000-000000000000",
    good="GetTask with the id of a task the same agent returned",
    fix="Use the task ids the agent returned, with the agent that returned them.",
    fails_as=spec.REFUSED_UNKNOWN_TASK,
    needs=("error",),
)
def task_unknown(call, session):
    if not call.is_a2a or call.error is None:
        return
    named = call.error.name == "TaskNotFoundError"
    if named or spec.TASK_UNKNOWN_WORDS.search(call.error.message):
        known = session.task(call.task_id)
        where = (f"; {ref(known.call, call)} had it from {known.agent}" if known and known.agent != call.agent
                 else "")
        said = "" if named else f" (it said so with {call.error.name}, not TaskNotFoundError)"
        yield Hit(f"{call.operation or call.method} on task {call.task_id or '(none)'}, which the agent did not "
                  f"know{said}{where}{library_fix(call, 'task-unknown', session)}",
                  [known.call] if known and known.agent != call.agent else [])


@rule(
    id="poll-terminal",
    on=("GetTask",),
    severity="warning",
    title="GetTask on a task the client had already seen end",
    spec="§3.1.3, §3.2.2",
    why="""
A task in a terminal state (completed, failed, canceled, rejected) never changes again. Once a
blocking SendMessage, a stream, a webhook or an earlier identical GetTask has shown the end
state, asking again returns the same answer.""",
    example="SendMessage returns TASK_STATE_COMPLETED; then GetTask on that task",
    good="SendMessage returns TASK_STATE_WORKING; GetTask on that task until it ends, then no more",
    fix="Use the final task you already have; GetTask only tasks that are still running.",
    kind="redundant",
)
def poll_terminal(call, session):
    if call.operation != "GetTask":
        return
    ended = session.ended(call.task_id)
    if ended is None:
        return
    earlier, view = ended.call, view_of(call)
    if earlier.operation == "GetTask" and earlier.view != view:
        return  # a different view of the task (history length), not a poll
    later = session.last_poll(call.task_id, call.agent, view)
    related = [earlier] if later is None or later is earlier else [earlier, later]
    yield Hit(_already_ended(ended, call, _POLLED) + library_fix(call, "poll-terminal", session), related)


@rule(
    id="cancel-terminal",
    on=("CancelTask",),
    severity="warning",
    title="CancelTask on a task that had already ended",
    spec="§3.1.5",
    why="""
Only a running task can be canceled. CancelTask on a task that has completed, failed, been
rejected or already been canceled fails with TaskNotCancelableError (-32002).""",
    example="CancelTask after the task's stream ended with TASK_STATE_COMPLETED, or a second CancelTask",
    good="CancelTask once, on a task last seen TASK_STATE_WORKING",
    fix="Cancel only tasks you last saw submitted, working or interrupted; cancel once.",
    kind="redundant",
    cases=(("held", "wasted", "an earlier answer had shown the task ended: the client held the answer"),
           _UNSEEN),
)
def cancel_terminal(call, session):
    if call.operation != "CancelTask":
        return
    ended = session.ended(call.task_id)
    if ended is not None:
        yield Hit(_already_ended(ended, call, _ENDED) + library_fix(call, "cancel-terminal", session), [ended.call])
    elif call.error is not None and (call.error.name == "TaskNotCancelableError" or call.error.task_ended):
        yield Hit(f"the agent answered {call.error.name}: task {call.task_id} had already ended, which no earlier "
                  "answer in the capture had shown", kind="advice")


@rule(
    id="message-terminal",
    on=("SendMessage", "SendStreamingMessage"),
    severity="warning",
    title="Message sent to a task that had already ended",
    spec="§3.1.1, §3.4.3",
    why="""
A terminal task cannot be restarted: a message that names it (`message.taskId`) fails with
UnsupportedOperationError. Follow-ups belong in a new task with the same `contextId`. (0.1's
`tasks/send` and `tasks/sendSubscribe` could restart a finished task by its `id`: not judged.)""",
    example="SendMessage with taskId of a canceled task",
    good="SendMessage with the contextId of a canceled task and no taskId: a new task in the same "
         "context",
    fix="Start a new task in the same contextId (omit taskId, keep contextId).",
    lenient="this agent took a message for a task that had ended; an agent that follows the spec refuses it",
    more_cases=(_UNSEEN,),
)
def message_terminal(call, session):
    if call.operation not in ("SendMessage", "SendStreamingMessage") or call.task_id is None:
        return
    message = call.params.get("message") or call.params.get("request")
    if not isinstance(message, dict) or not (message.get("taskId") or message.get("task_id")):
        return  # a message that starts a task: the task id is the answer's, and nothing had ended (0.1's
        # tasks/send names its task in params.id, to create, continue or restart it: no mistake there)
    ended = session.ended(call.task_id)
    if ended is not None and ended.call is not call:
        yield Hit(_already_ended(ended, call, _MESSAGED), [ended.call])
    elif call.error is not None and _refused_as_ended(call.error) and ended is None:
        yield Hit(f"the agent refused a message to task {call.task_id}: it had already ended, which no earlier "
                  "answer in the capture had shown", kind="advice")


@rule(
    id="subscribe-terminal",
    on=("SubscribeToTask",),
    severity="warning",
    title="SubscribeToTask on a task that had already ended",
    spec="§3.1.6, §9.4.6",
    why="""
A stream closes when its task ends, and SubscribeToTask on a terminal task fails with
UnsupportedOperationError. Re-subscribing after a normal terminal close is a wasted round trip.""",
    example="the stream ends with TASK_STATE_COMPLETED; then SubscribeToTask on that task",
    good="SubscribeToTask on a task last seen TASK_STATE_WORKING; after its final event, nothing more",
    fix="Subscribe only to tasks that are still running; after a terminal event, stop.",
    kind="redundant",
    cases=(("held", "wasted", "an earlier answer had shown the task ended: the client held the answer"),
           _UNSEEN),
)
def subscribe_terminal(call, session):
    if call.operation != "SubscribeToTask":
        return
    ended = session.ended(call.task_id)
    if ended is not None:
        yield Hit(_already_ended(ended, call, _ENDED) + library_fix(call, "subscribe-terminal", session), [ended.call])
    elif call.error is not None and _refused_as_ended(call.error):
        held = session.held_card(call)
        if held is None or held.card.streaming or call.error.task_ended:
            yield Hit(f"the agent refused to subscribe to task {call.task_id} ({call.error.name}): it had already "
                      "ended, which no earlier answer in the capture had shown", kind="advice")


@rule(
    id="poll-while-push-or-stream",
    on=("GetTask",),
    severity="info",
    title="Polling a task while the agent offers streaming or push",
    spec="§3.5.1, §7.6.2",
    why="""
Polling costs a round trip per look and still learns of changes late. When the card offers
streaming (SubscribeToTask, SendStreamingMessage) or push notifications, one stream or one
webhook config replaces the whole loop.""",
    example="GetTask, GetTask, GetTask on a working task of an agent with streaming: true",
    good="SubscribeToTask on a working task of an agent with streaming: true",
    fix="Subscribe to the task, or register a push config, instead of polling.",
    kind="advice",
)
def poll_while_push_or_stream(call, session):
    if call.operation != "GetTask" or call.task_id is None:
        return
    polls = session.polls(call.task_id, call.agent)
    if polls.count != 1:
        return  # once per task, at the second look: the loop is the finding, not each turn of it
    held = session.held_card(call)
    if held is None or not (held.card.streaming or held.card.push_notifications):
        return
    previous = polls.last
    seen = session.task(call.task_id)
    if seen is not None and seen.state not in spec.TERMINAL_STATES:
        offers = " and ".join(name for name, on in (("streaming", held.card.streaming),
                                                    ("push notifications", held.card.push_notifications)) if on)
        yield Hit(f"task {call.task_id} polled again ({ref(previous, call)} before); the card offers {offers}",
                  [previous, held.fetch])


@rule(
    id="return-immediately-poll",
    on=("GetTask",),
    severity="info",
    title="returnImmediately, then polling to the end",
    spec="§3.2.2",
    why="""
`returnImmediately: true` makes SendMessage answer at once, so the client must then find out how
the task ends: the spec makes polling its job, and each poll that brought a newer state did work.
The loop still costs a round trip per look and learns of the end late, where the default blocking
SendMessage (one round trip) or SendStreamingMessage would have carried the result as it came.
Said once per task, at the poll that found it ended, with what the loop cost.""",
    example="SendMessage {returnImmediately: true}; GetTask -> working; GetTask -> TASK_STATE_COMPLETED",
    good="SendMessage (blocking) -> TASK_STATE_COMPLETED; or SendStreamingMessage to an agent with streaming",
    fix="Leave returnImmediately off when the client waits for the result anyway; stream, or register a push "
        "config, where the card offers them.",
    kind="advice",
    cases=(("loop", "advice", "always advice: the polls brought the task's news, which the client did not hold; "
                              "the message says the round trips and seconds a blocking call or a stream would have "
                              "saved (a poll after the end is poll-terminal's, wasted)"),),
)
def return_immediately_poll(call, session):
    """Once per task, at the poll that found it ended: the loop's cost against a blocking call."""
    if call.operation != "GetTask" or call.task_id is None:
        return
    if session.ended(call.task_id) is not None:
        return  # the loop had already ended; poll-terminal says the rest
    if not any(task == call.task_id and state in spec.TERMINAL_STATES for task, state in call.states):
        return  # the loop goes on: said where it ends
    send = session.last_send(call.task_id, call.agent)
    if send is None or send.inline_push or not send.return_immediately:
        return
    polls = session.poll_count(call.task_id) + 1
    span = ""
    if send.call.started is not None and call.started is not None:
        span = f" over {max(call.started + (call.duration or 0.0) - send.call.started, 0.0):.1f} s"
    held = session.held_card(call)
    offers = [name for name, on in (("a stream", held is not None and held.card.streaming),
                                    ("a push config", held is not None and held.card.push_notifications)) if on]
    alternative = f" (or {' or '.join(offers)}, which the card offers)" if offers else ""
    saved = "1 round trip" if polls == 1 else f"{polls} round trips"
    yield Hit(f"task {call.task_id} ended after {polls} GetTask poll{'s' if polls != 1 else ''}{span}: "
              f"{ref(send.call, call)} asked to return immediately; a blocking SendMessage{alternative} would have "
              f"carried the result as it came, saving {saved}{library_fix(call, 'return-immediately-poll', session)}",
              [send.call])


@rule(
    id="duplicate-message-id",
    on=("SendMessage", "SendStreamingMessage"),
    severity="warning",
    title="The same message sent twice",
    spec="§3.3.1, §3.4",
    why="""
`messageId` identifies a message. Sending the same id again (a retry storm, a copy-paste) makes
the agent either do the work twice or answer with what it already answered.""",
    example="two SendMessage calls with messageId 5bc8…",
    good="two SendMessage calls with messageIds 5bc8… and 9e01…; or the same one again after the first "
         "got no answer",
    fix="Make a new messageId for each new message; retry only when the first attempt failed in transit.",
    kind="redundant",
)
def duplicate_message_id(call, session):
    if call.operation not in ("SendMessage", "SendStreamingMessage") or not call.message_id:
        return
    earlier = session.sent_message(call)
    if earlier is not None and earlier.answered and earlier.ok:
        yield Hit(f"messageId {call.message_id} was already sent in {ref(earlier, call)}", [earlier])


@rule(
    id="list-past-last-page",
    on=("ListTasks",),
    severity="warning",
    title="ListTasks past the last page",
    spec="§3.1.4",
    why="""
A ListTasks response with an empty `nextPageToken` is the last page. Asking again with the same
filters and a page token finds nothing new. A `pageSize` outside 1–100 is refused.""",
    example='ListTasks -> nextPageToken: ""; then ListTasks with a pageToken',
    good='ListTasks -> nextPageToken: "abc"; ListTasks with pageToken abc -> nextPageToken: ""; no '
         "more",
    fix="Stop paging when nextPageToken is empty; keep pageSize within 1–100.",
    kind="redundant",
    cases=(("past last", "wasted", "a page asked for after the last page (an empty nextPageToken): the client held "
                                   "the answer"),
           ("page size refused", "wasted", "a pageSize outside 1–100 that the agent refused, as the spec predicted"),
           ("page size answered", "fragile", "a pageSize outside 1–100 that the agent answered anyway: it worked "
                                             "because this agent is lenient")),
)
def list_past_last_page(call, session):
    if call.operation != "ListTasks":
        return
    size = call.params.get("pageSize")
    if isinstance(size, str) and size.isdigit():
        size = int(size)
    if isinstance(size, int) and not 1 <= size <= 100:
        yield Hit(f"pageSize {size} is outside 1–100", kind="predicted")
    if not call.params.get("pageToken"):
        return
    page = session.list_page(call)
    if page is not None and page.last:
        earlier = page.call
        yield Hit(f"{ref(earlier, call)} was already the last page (empty nextPageToken)", [earlier])


@rule(
    id="get-before-subscribe",
    on=("SubscribeToTask",),
    severity="info",
    title="GetTask right before SubscribeToTask",
    spec="§3.1.6",
    why="""
The first event of SubscribeToTask is a snapshot of the task, designed to remove the race
between reading a task and subscribing to it. A GetTask just before it fetches the same
snapshot twice.""",
    example="GetTask t1; SubscribeToTask t1",
    good="SubscribeToTask t1, its first event the task",
    fix="Subscribe directly and read the task from the first event.",
    kind="advice",
)
def get_before_subscribe(call, session):
    if call.operation != "SubscribeToTask" or call.task_id is None:
        return
    last = session.last_a2a(call.agent)
    if last is not None and last.call.operation == "GetTask" and last.task == call.task_id:
        yield Hit(f"{ref(last.call, call)} read task {call.task_id} just before; the subscription's first event "
                  f"is the same snapshot{library_fix(call, 'get-before-subscribe', session)}", [last.call])


@rule(
    id="subscribe-verb",
    on=("SubscribeToTask",),
    severity="warning",
    title="SubscribeToTask with the verb the agent does not take",
    spec="§11.3.2 (proto: GET /tasks/{id}:subscribe; prose: POST)",
    why="""
The 1.0 proto binds `GET /tasks/{id}:subscribe` while the spec's prose says `POST`; agents take
one or both. A client that guesses wrong gets 405 and tries the other verb: a round trip on
every subscription until it remembers the answer.""",
    example="POST /tasks/t1:subscribe -> 405; GET /tasks/t1:subscribe -> 200",
    good="GET /tasks/t1:subscribe -> 200, and GET again each time",
    fix="Remember which verb the agent took (or send the one its SDK expects) instead of probing each time.",
    cases=(("refused", "wasted", "the agent answered 405 for the verb: the call could only fail, and the spec's proto "
                                 "(or an earlier 405 for that verb) had said which verb it takes"),),
)
def subscribe_verb(call, session):
    if call.operation == "SubscribeToTask" and call.binding == "HTTP+JSON" and call.status == 405:
        other = "GET" if call.method == "POST" else "POST"
        earlier = session.refused_verb(call.agent, call.method)
        again = f"; exchange {earlier.label} had already been answered 405 for {call.method}" if earlier else ""
        yield Hit(f"{call.method} {call.path} was answered 405: this agent takes {other}{again}",
                  [earlier] if earlier else [])
