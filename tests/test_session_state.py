"""What the session keeps per task is what rules ask of it: a session of many tasks stays small."""

from __future__ import annotations

import json
import tracemalloc
import uuid

from a2a_capture.analyze.engine import Analyzer, analyze
from a2a_capture.analyze.session import Seen, Session
from a2a_capture.capture import Exchange, ExchangeMeta, Request, Response
from tests.builders import fetch_card, message, rpc, write
from tests.test_rules import DONE, SEND, WORKING

IMMEDIATE = {**SEND, "configuration": {"returnImmediately": True}}


def _rules_at(tmp_path, *blocks) -> set[tuple[str, str]]:
    return {(f.exchange, f.rule) for f in analyze([write(tmp_path, *blocks)]).findings}


def test_a_loop_is_judged_by_the_latest_send_on_its_task(tmp_path):
    loop = [fetch_card(1), rpc(2, "SendMessage", IMMEDIATE, result={"task": WORKING})]
    poll = rpc(4, "GetTask", {"id": "t-1"}, result=DONE)
    assert ("4", "return-immediately-poll") in _rules_at(tmp_path, *loop, poll)
    # a blocking send on the same task since: the poll follows no send that asked to return at once
    blocking = rpc(3, "SendMessage", {"message": message(task_id="t-1", message_id="m-2")}, result={"task": WORKING})
    assert ("4", "return-immediately-poll") not in _rules_at(tmp_path, *loop, blocking, poll)
    again = rpc(3, "SendMessage", {**IMMEDIATE, "message": message(task_id="t-1", message_id="m-2")},
                result={"task": WORKING})
    assert ("4", "return-immediately-poll") in _rules_at(tmp_path, *loop, again, poll)


def _send(number: int) -> Exchange:
    task = str(uuid.UUID(int=number))
    send = json.dumps({"jsonrpc": "2.0", "id": number, "method": "SendMessage",
                       "params": {"message": {"messageId": f"m-{number}", "role": "ROLE_USER",
                                              "parts": [{"text": "run it"}]}}}).encode()
    answer = json.dumps({"jsonrpc": "2.0", "id": number,
                         "result": {"task": {"id": task, "status": {"state": "TASK_STATE_COMPLETED"}}}}).encode()
    return Exchange(number=number, meta=ExchangeMeta(start="2026-11-30T07:40:01.1Z", end="2026-11-30T07:40:01.1Z"),
                    request=Request(method="POST", target="/", headers=[("Host", "a:1")], body=send),
                    response=Response(status=200, body=answer, headers=[("content-type", "application/json")]))


def kept_by_session(exchanges) -> tuple[int, Session]:
    """The bytes a session of these exchanges keeps once every one is learned (tracemalloc), and the session."""
    analyzer = Analyzer(keep_calls=False, keep_findings=False)
    analyzer.start_file("tasks.http")
    tracemalloc.start()
    try:
        for exchange in exchanges:
            analyzer.feed(exchange)
        analyzer.end_file()
        kept = tracemalloc.get_traced_memory()[0]
    finally:
        tracemalloc.stop()
    return kept, analyzer.session


def test_a_session_of_distinct_tasks_keeps_a_few_hundred_bytes_a_task():
    """Each task's last state (its first end too, until a later sighting), and each message id, with the
    exchange that showed them; a blocking send's configuration is no rule's question later (it was ~880
    bytes a task)."""
    kept, session = kept_by_session([_send(number) for number in range(1, 3_001)])
    assert len(session.tasks) == 3_000 and not session.sends and not session.ended_tasks  # each ended when last seen
    assert all(session.ended(task) is seen for task, seen in session.tasks.items())
    assert kept / 3_000 < 600, kept / 3_000


def test_a_task_s_first_end_stays_its_first_whatever_is_seen_after():
    session = Session()
    one, two, three = (Seen("f", n, n, "http://a:1", "GetTask", "/", "POST", None, True, True) for n in (1, 2, 3))
    session._see([("t", "TASK_STATE_WORKING")], one)
    assert session.ended("t") is None and session.task("t").call is one
    session._see([("t", "TASK_STATE_COMPLETED")], two)
    assert session.ended("t").call is two and session.task("t").call is two
    session._see([("t", "TASK_STATE_COMPLETED")], three)
    assert session.ended("t").call is two and session.task("t").call is three
    session._see([("t", "TASK_STATE_FAILED")], one)
    assert session.ended("t").call is two and session.task("t").state == "TASK_STATE_FAILED"
    assert session.ended("u") is None and session.ended(None) is None
