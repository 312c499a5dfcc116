"""The report's overview keeps aggregates, not every exchange: each is what the whole list gave."""

from __future__ import annotations

import json
import random
import re

from a2a_capture.report import svg
from a2a_capture.report.walkthrough import TROUBLE, _Arrows, _Tasks


def _arrows(count: int, rng: random.Random, sessions: int = 1, untimed: float = 0.0) -> list[tuple[svg.Arrow, int]]:
    made = []
    for number in range(count):
        webhook = rng.random() < 0.1
        time = None if rng.random() < untimed else round(rng.uniform(0, 50), 1)  # ties, as clocks have
        made.append((svg.Arrow(anchor=f"ex-{number}", label=str(number), lifeline=f"agent-{rng.randint(0, 5)}",
                               answer="completed", wasted=False, events=0, webhook=webhook, time=time),
                     number * sessions // count))
    return made


def test_the_earliest_arrows_are_the_first_of_the_sorted_whole():
    rng = random.Random(5)
    for sessions in (1, 3):
        made = _arrows(2000, rng, sessions)
        kept = _Arrows()
        for arrow, session in made:
            kept.add(arrow, session)
        whole = [arrow for arrow, _ in sorted(made, key=lambda item: (item[1], item[0].time))]
        assert kept.earliest() == whole[:max(svg.MAX_ARROWS, svg.MAX_MERMAID)]
        assert kept.first == [arrow for arrow, _ in made][:max(svg.MAX_ARROWS, svg.MAX_MERMAID)]
        assert len(kept) == len(made) and kept.timed and kept.all_times


def test_an_arrow_without_its_time_is_said():
    rng = random.Random(6)
    made = _arrows(500, rng, untimed=0.01)
    kept = _Arrows()
    for arrow, session in made:
        kept.add(arrow, session)
    assert not kept.all_times
    assert kept.timed == all(arrow.time is not None for arrow, _ in made if not arrow.webhook)


def test_lifelines_come_in_the_order_they_first_appear_a_webhook_as_its_task_agent():
    kept = _Arrows()
    for lifeline, webhook in [("b", False), ("task-1", True), ("a", False), ("b", False), ("task-2", True)]:
        kept.add(svg.Arrow(anchor="", label="", lifeline=lifeline, answer="", wasted=False, events=0,
                           webhook=webhook), 0)
    assert kept.lifelines({"task-1": "c", "task-2": "a"}) == ["b", "c", "a"]
    assert kept.lifelines({}) == ["b", "an agent", "a"]


def test_tasks_past_the_drawn_ones_keep_their_last_state_for_the_verdict():
    rng = random.Random(7)
    states = ["working", "completed", "failed", "input-required", "canceled"]
    tasks, whole = _Tasks(), {}
    for order in range(3000):
        task, state = f"task-{rng.randint(0, 400)}", rng.choice(states)
        at = rng.choice([None, rng.uniform(0, 100)])
        seen = whole.setdefault(task, [])
        new = not seen or seen[-1][0] != state
        if new:
            seen.append((state, f"ex-{order}", at))
        drawn_task = task in list(whole)[:svg.MAX_TASKS]  # a task past those drawn makes no mark
        assert (tasks.mark(task, state, order, at, f"ex-{order}", f"Exchange {order}") is not None) == (new and
                                                                                                   drawn_task)
    assert len(tasks) == len(whole)
    drawn = tasks.shown()
    assert list(drawn) == list(whole)[:svg.MAX_TASKS]
    assert all([(m.state, m.anchor, m.at) for m in drawn[task]] == whole[task] for task in drawn)
    troubled = tasks.troubled({})
    assert [(t.id, t.anchor) for t in troubled] == [(task, marks[-1][1]) for task, marks in whole.items()
                                                     if svg.state_name(marks[-1][0]) in TROUBLE]
    assert tasks.earliest_at == min(at for marks in whole.values() for _, _, at in marks if at is not None)


def test_each_kept_arrow_is_given_once():
    kept = _Arrows()
    for number in range(10):
        kept.add(svg.Arrow(anchor=f"ex-{number}", label="", lifeline="a", answer="", wasted=False, events=0,
                           webhook=False, time=float(number)), 0)
    assert len(kept.kept()) == 10


def test_a_long_session_s_figures_count_what_they_do_not_draw(tmp_path):
    from a2a_capture.capture import CaptureWriter, Exchange, ExchangeMeta, Request, Response
    from a2a_capture.report import walkthrough

    writer, path = CaptureWriter(), tmp_path / "long.http"
    with open(path, "wb") as out:
        for number in range(1, 201):
            state = "TASK_STATE_FAILED" if number % 7 else "TASK_STATE_COMPLETED"
            body = json.dumps({"jsonrpc": "2.0", "id": 1, "result": {"task": {
                "id": f"task-{number}", "contextId": "c", "status": {"state": state}}}})
            start = f"2026-11-30T07:40:{number % 60:02d}.{number:06d}Z"
            out.write(writer.block(Exchange(
                number=number, title="SendMessage", meta=ExchangeMeta(start=start, end=start),
                request=Request(method="POST", target="/", headers=[("Host", "127.0.0.1:41241")],
                                body=b'{"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": {}}'),
                response=Response(status=200, reason="OK", headers=[("content-type", "application/json")],
                                  body=body.encode()))))
    model = walkthrough.build([str(path)])
    assert model.verdict.tasks == 200
    assert len(model.verdict.troubled) == 200 - 200 // 7
    assert "… 160 more tasks" in model.timeline_svg and "… 160 more tasks" in model.timeline_narrow_svg
    assert model.timeline_text[-1] == "… 160 more tasks"
    assert "… 80 more exchanges" in model.sequence_svg
    assert model.sequence_mermaid.endswith("50 more exchanges in the walkthrough")
    # the diagram shows the earliest requests: the capture's times go round each minute
    assert 'href="#ex-60"' in model.sequence_svg and 'href="#ex-59"' not in model.sequence_svg


def test_a_session_with_more_tasks_than_drawn_shows_the_troubled_ones_first():
    tasks = _Tasks()
    for number in range(100):  # tasks 0-39 drawn, all completed; of the rest, every tenth failed
        state = "TASK_STATE_FAILED" if number >= svg.MAX_TASKS and number % 10 == 3 else "TASK_STATE_COMPLETED"
        tasks.mark(f"task-{number}", state, number, None, f"ex-{number}", f"Exchange {number}")
    rows = tasks.timeline()
    assert len(rows) == svg.MAX_TASKS
    assert list(rows)[:6] == [f"task-{n}" for n in (43, 53, 63, 73, 83, 93)]  # by their last state alone
    assert [m.anchor for m in rows["task-43"]] == ["ex-43"] and list(rows)[6] == "task-0"
    few = _Tasks()
    for number in range(5):
        few.mark(f"t-{number}", "TASK_STATE_FAILED" if number == 4 else "TASK_STATE_COMPLETED", number, None, "a", "")
    assert list(few.timeline()) == [f"t-{n}" for n in range(5)]  # all drawn: in the order they came


def test_a_big_session_s_diagram_draws_its_opening_then_what_went_wrong(tmp_path):
    from a2a_capture.report import walkthrough
    from tests.builders import fetch_card, message, rpc, task, write

    blocks = [fetch_card(1)] + [rpc(n, "SendMessage", {"message": message(message_id=f"m-{n}")},
                                    result={"task": task(f"t-{n}", "TASK_STATE_COMPLETED")}) for n in range(2, 300)]
    blocks += [rpc(n, "GetTask", {"id": "t-2"}, result=task("t-2", "TASK_STATE_COMPLETED")) for n in (300, 301)]
    model = walkthrough.build([str(write(tmp_path, *blocks))])
    links = re.findall(r'<a href="#(ex-\d+)"', model.sequence_svg)
    assert links == [f"ex-{n}" for n in range(1, 21)] + ["ex-300", "ex-301"]  # the two wasted polls, past 120
    assert "… 279 more exchanges are in the walkthrough (drawn: the first 20, then those wasted or failed)" in \
        model.sequence_svg
    assert "client->>agent1: 300 GetTask (wasted)" in model.sequence_mermaid
    quiet = walkthrough.build([str(write(tmp_path, *blocks[:200], name="quiet.http"))])  # nothing went wrong
    assert re.findall(r'<a href="#(ex-\d+)"', quiet.sequence_svg) == [f"ex-{n}" for n in range(1, 121)]


def test_a_long_session_s_overview_counts_the_calls_to_each_agent(tmp_path):
    from a2a_capture.report import render, walkthrough
    from tests.builders import fetch_card, message, rpc, task, write

    blocks = [fetch_card(1)] + [rpc(n, "SendMessage", {"message": message(message_id=f"m-{n}")},
                                    result={"task": task(f"t-{n}", "TASK_STATE_COMPLETED")}) for n in range(2, 250)]
    model = walkthrough.build([str(write(tmp_path, *blocks))])
    assert model.long and model.calls_by_agent == [("probe", 249)]
    assert "Calls by agent: probe 249 (SendMessage 248, card 1)." in render.render(model, "html")
    assert "Calls by agent: probe 249 (SendMessage 248, card 1)." in render.render(
        walkthrough.build([str(write(tmp_path, *blocks))]), "md")
    short = walkthrough.build([str(write(tmp_path, *blocks[:20], name="short.http"))])
    assert "Calls by agent" not in render.render(short, "html")


def _at(text: str, second: int) -> str:
    """A block as a recording writes it: its start and end times after its title line."""
    title, rest = text.split("\n", 1)
    at = f"2026-11-30T08:{second // 60:02d}:{second % 60:02d}"
    return f"{title}\n#@ start: {at}.000000Z\n#@ end: {at}.001000Z\n{rest}"


def test_a_long_session_opens_on_an_overview_of_agents_troubled_and_longest_tasks(tmp_path):
    """210 tasks started a second apart; three seen again later: t-5 ends 295 s after it started,
    t-9 (failed) 241 s, t-200 (past the 40 tasks the timeline draws) 60 s."""
    from a2a_capture.report import render, walkthrough
    from tests.builders import fetch_card, message, rpc, task, write

    blocks = [_at(fetch_card(1), 0)] + [_at(rpc(n, "SendMessage", {"message": message(message_id=f"m-{n}")},
                                                result={"task": task(f"t-{n}", "TASK_STATE_WORKING")}), n)
                                        for n in range(2, 212)]
    later = [("t-9", 250, "TASK_STATE_FAILED"), ("t-200", 260, "TASK_STATE_COMPLETED"),
             ("t-5", 300, "TASK_STATE_COMPLETED")]
    blocks += [_at(rpc(n, "GetTask", {"id": one}, result=task(one, state)), at)
               for n, (one, at, state) in enumerate(later, 212)]
    model = walkthrough.build([str(write(tmp_path, *blocks))])
    assert model.long and model.operations_by_agent == [("probe", [("SendMessage", 210), ("GetTask", 3), ("card", 1)])]
    assert [(one.short, one.state, one.took, one.anchor) for one in model.verdict.longest] == [
        ("t-5", "completed", "295 s", "ex-214"), ("t-9", "failed", "241 s", "ex-212"),
        ("t-200", "completed", "60.0 s", "ex-213")]
    html, markdown = render.render(model, "html"), render.render(model, "md")
    overview = html[html.index('<div class="overview">'):html.index("</div>", html.index('<div class="overview">'))]
    assert html.index('<div class="overview">') < html.index('<section id="findings">')
    assert "Calls by agent: probe 214 (SendMessage 210, GetTask 3, card 1)." in overview
    assert 'Tasks that did not simply complete:\n      <a href="#ex-212"><code>t-9</code></a>' in overview
    assert '<a href="#ex-214"><code>t-5</code></a> <span class="state completed">completed</span> 295 s' in overview
    assert html.count("Tasks that did not simply complete") == 1
    said = markdown[markdown.index("### Overview"):markdown.index("## Findings")]
    assert "Longest tasks: `t-5` completed 295 s, `t-9` failed 241 s, `t-200` completed 60.0 s." in said
    short = walkthrough.build([str(write(tmp_path, *blocks[:20], name="short.http"))])
    assert short.verdict.longest == [] and "Overview" not in render.render(short, "html")
