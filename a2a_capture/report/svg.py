"""The session's pictures, drawn as text by the tool itself: no library, no script.

A sequence diagram (the client and each agent as lifelines, one arrow per exchange, wasted
ones marked, SSE frames as a bundle) and a timeline of each task's states, as SVG for HTML
and as Mermaid and plain text for Markdown. Every label comes from a capture, so every
label is escaped.
"""

from __future__ import annotations

import itertools
import math
import re
from dataclasses import dataclass
from xml.sax.saxutils import escape

from a2a_capture.a2a.spec import TERMINAL_STATES

MAX_ARROWS = 120
MAX_TASKS = 40
MAX_MERMAID = 150

STATE_COLOURS = {
    "TASK_STATE_SUBMITTED": "#6e6e6e", "TASK_STATE_WORKING": "#1f66c2", "TASK_STATE_INPUT_REQUIRED": "#9a5b00",
    "TASK_STATE_AUTH_REQUIRED": "#8a3fb0", "TASK_STATE_COMPLETED": "#23803e", "TASK_STATE_FAILED": "#c02828",
    "TASK_STATE_CANCELED": "#4d4d4d", "TASK_STATE_REJECTED": "#8c2222", "TASK_STATE_UNSPECIFIED": "#6b6b6b",
}
#: one letter per state, drawn in its bar, so states differ by more than colour
STATE_LETTERS = {
    "TASK_STATE_SUBMITTED": "S", "TASK_STATE_WORKING": "W", "TASK_STATE_INPUT_REQUIRED": "I",
    "TASK_STATE_AUTH_REQUIRED": "A", "TASK_STATE_COMPLETED": "C", "TASK_STATE_FAILED": "F",
    "TASK_STATE_CANCELED": "X", "TASK_STATE_REJECTED": "R", "TASK_STATE_UNSPECIFIED": "?",
}
#: an estimate of the widest average character at the diagrams' 12 px sans-serif
CHAR_PX = 7.2
SEQUENCE_WIDTH = 1000
#: the sequence diagram for a phone (390 px less the page's margins): the same arrows, lifelines closer
NARROW_SEQUENCE_WIDTH = 340
TIMELINE_WIDTH = 1000


@dataclass
class Arrow:
    anchor: str
    label: str
    lifeline: str  # the agent (or "webhook" receiver)
    answer: str  # status or state, shown on the way back
    wasted: bool
    events: int
    webhook: bool
    name: str = ""  # what a reader calls the exchange: "Exchange 6", "09-mistakes #6"
    time: float | None = None  # when the request started, where recorded
    file: str = ""  # the capture's name, when a session has several
    failed: bool = False  # the agent answered with an error: its answer is drawn red, with a ✗ and the error's name
    duration: float | None = None  # seconds from request to the answer's end, where recorded
    alike: str = ""  # calls with the same key in a row (operation, task, outcome) are folded into one loop
    loop: str = ""  # a folded run's own text: "GetTask ×9, every ~254 ms, 2 wasted"
    spread: tuple[float, float] | None = None  # a folded run's shortest and longest call
    calls: int = 1  # the exchanges this arrow stands for (a folded run's length)


@dataclass
class Mark:
    """A task state as one exchange showed it."""

    order: int  # the exchange's position in the session
    at: float | None  # seconds since the epoch, where recorded
    state: str
    anchor: str
    where: str = ""  # the exchange as a reader names it


def state_name(state: str) -> str:
    return state.removeprefix("TASK_STATE_").lower().replace("_", "-")


def fit(text: str, width: float) -> str:
    """Text cut in the middle to fit ``width`` pixels, so both the operation and the path stay."""
    room = max(int(width / CHAR_PX), 4)
    if len(text) <= room:
        return text
    head = (room - 1) * 3 // 5
    tail = room - 1 - head
    return text[:head] + "…" + (text[-tail:] if tail else "")


# -- sequence ------------------------------------------------------------------------------------


def duration_text(seconds: float | None) -> str:
    """A duration as a person reads it: 2.2 ms, 210 ms, 2.3 s."""
    if seconds is None:
        return ""
    ms = seconds * 1000
    if ms < 10:
        return f"{ms:.1f} ms"
    if ms < 1000:
        return f"{ms:.0f} ms"
    return f"{seconds:.1f} s" if seconds < 100 else f"{seconds:.0f} s"


#: the shortest run of alike calls folded into one loop
MIN_RUN = 3


def fold(arrows: list[Arrow]) -> list[Arrow]:
    """Runs of alike calls (the same operation on the same task with the same outcome, to the
    same agent, one after another) as one arrow each: the first call's link, the run's count,
    spacing and waste in its loop text, and the range of its durations."""
    folded: list[Arrow] = []
    start = 0
    while start < len(arrows):
        end = start + 1
        first = arrows[start]
        while first.alike and end < len(arrows) and arrows[end].alike == first.alike \
                and arrows[end].lifeline == first.lifeline and not arrows[end].webhook:
            end += 1
        folded.append(_run(arrows[start:end]) if end - start >= MIN_RUN else first)
        if end - start < MIN_RUN:
            end = start + 1
        start = end
    return folded


def _run(run: list[Arrow]) -> Arrow:
    first, last = run[0], run[-1]
    what = first.label.split(" ", 1)
    operation = what[1] if len(what) > 1 else first.label
    loop = [f"{operation} ×{len(run)}"]
    starts = [arrow.time for arrow in run]
    if all(at is not None for at in starts):
        gaps = sorted(b - a for a, b in itertools.pairwise(starts))
        loop.append(f"every ~{duration_text(gaps[len(gaps) // 2])}")
    wasted = sum(arrow.wasted for arrow in run)
    if wasted:
        loop.append(f"{wasted} wasted")
    took = [arrow.duration for arrow in run if arrow.duration is not None]
    duration = max(took) if took else None
    if first.time is not None and last.time is not None:  # the layout's: from the first call to the last answer
        duration = last.time + (last.duration or 0.0) - first.time
    number = last.label.split(" ", 1)[0]
    return Arrow(anchor=first.anchor, label=f"{first.label} … {number}", lifeline=first.lifeline,
                 answer=first.answer, wasted=bool(wasted), events=first.events, webhook=False,
                 name=f"{first.name} to {last.name}", time=first.time, file=first.file, failed=first.failed,
                 duration=duration, alike=first.alike, loop=", ".join(loop),
                 spread=(min(took), max(took)) if len(took) > 1 else None, calls=len(run))


@dataclass
class _Row:
    """Where one arrow is drawn: its call's line, its answer's (None: no answer drawn), the
    file heading before it, and the quiet time before its call (timed diagrams)."""

    call: float
    answer: float | None = None
    heading: float | None = None
    gap: float | None = None


#: the vertical room: a call with its answer right under it, a call whose answer comes later
#: (a line and its label above), an answer drawn apart (a line and its text below), a file's heading
PAIR_STEP, CALL_STEP, ANSWER_STEP, HEADING_STEP = 46, 30, 36, 24
#: a folded run's frame: its tab above the call's label, and room below its answer's text
LOOP_TOP, LOOP_BOTTOM = 24, 8
#: a pause worth a label in a timed diagram
GAP_SHOWN = 0.005


def _took(arrow: Arrow) -> float:
    """How long ``arrow``'s call took, for placing it: none recorded, or an end written before the
    start (a damaged or hand-edited capture), is no time, so its answer still follows its call."""
    return max(arrow.duration or 0.0, 0.0)


def _layout(shown: list[Arrow], top: float, headings: set[int], by_time: bool) -> tuple[list[_Row], float]:
    """Each arrow's rows, top to bottom, and the y below the last. ``by_time``: calls, webhooks
    and answers in the order they happened, so a call open while others ran draws its answer
    after them (its activation bar spans them) and a webhook sits inside the call that caused
    it; otherwise each answer right under its call, in the given order."""
    events: list[tuple[float, int, int]] = []
    for index, arrow in enumerate(shown):
        answered = bool(arrow.answer) and not arrow.webhook
        if by_time:
            events.append((arrow.time, 1, index))
            if answered:  # a call that took no time (or none recorded) answers right after itself
                took = _took(arrow)
                events.append((arrow.time + took, 0 if took > 0 else 2, index))
        else:
            events.append((float(index), 1, index))
            if answered:
                events.append((float(index), 2, index))
    events.sort()
    rows: list[_Row | None] = [None] * len(shown)
    y, busy_until = top, None
    for k, (at, kind, index) in enumerate(events):
        arrow = shown[index]
        if kind == 1:  # a call or a webhook
            row = rows[index] = _Row(call=y)
            if index in headings:
                row.heading, row.call = y, y + HEADING_STEP
                y += HEADING_STEP
            if arrow.loop:
                row.call += LOOP_TOP
            if by_time and busy_until is not None and at - busy_until >= GAP_SHOWN:
                row.gap = at - busy_until
            if by_time:
                end = at + _took(arrow)
                busy_until = end if busy_until is None else max(busy_until, end)
            following = events[k + 1] if k + 1 < len(events) else None
            if following is not None and following[2] == index and following[1] != 1:
                row.answer = row.call + 10  # answered before anything else happened: right under
                y = row.call + PAIR_STEP + (LOOP_BOTTOM if arrow.loop else 0)
            else:
                y = row.call + (CALL_STEP if not arrow.webhook and arrow.answer else PAIR_STEP - 10)
        elif rows[index].answer is None:  # an answer that comes after other calls
            rows[index].answer = y
            y += ANSWER_STEP + (LOOP_BOTTOM if arrow.loop else 0)
    return [row for row in rows if row is not None], y


def sequence(lifelines: list[str], arrows: list[Arrow], *, timed: bool = False, narrow: bool = False,
             total: int | None = None, all_times: bool | None = None, chosen: str = "") -> str:
    """The diagram, ``narrow`` for a phone: as wide as a phone's screen whatever the number of
    agents (labels cut shorter; each keeps its whole text as its title), with a class and an
    arrowhead id of its own, so a page can hold both and show one."""
    # ``total`` and ``all_times``: the session's arrows and whether each has its time, where ``arrows``
    # holds only the first ones drawn
    total = len(arrows) if total is None else total
    shown = _drawn(arrows, timed, all_times)
    left_out = total - sum(arrow.calls for arrow in shown)
    return _drawing(lifelines, shown, timed, narrow=narrow, left_out=left_out, chosen=chosen)


def _drawn(arrows: list[Arrow], timed: bool, all_times: bool | None) -> list[Arrow]:
    """The arrows a diagram draws, in the order it draws them: by time where each has its time, runs folded."""
    if all_times is None:
        all_times = all(a.time is not None for a in arrows)
    return fold(sorted(arrows, key=lambda a: a.time) if timed and all_times else list(arrows))[:MAX_ARROWS]


#: the height of diagram (its own units) that a printed page holds below the lifelines' names, when
#: the diagram is scaled to the page's width: A4 holds about 1,450 of a 1,000-wide diagram
PRINTED_PAGE = 1000


def sequence_pages(lifelines: list[str], arrows: list[Arrow], *, timed: bool = False, total: int | None = None,
                   all_times: bool | None = None, chosen: str = "") -> list[str]:
    """The diagram cut into parts a printed page holds, each with the lifelines' names on top, for
    print (a diagram that runs on to another page would continue there without them); [] where the
    whole diagram fits one page."""
    total = len(arrows) if total is None else total
    shown = _drawn(arrows, timed, all_times)
    by_time = timed and all(arrow.time is not None for arrow in shown)

    def height(part: list[Arrow]) -> float:
        return _layout(part, 48, _headings(part), by_time)[1]

    if height(shown) <= PRINTED_PAGE:
        return []
    starts = [0]  # each part as long as its own layout fits a page (calls open together answer after all)
    while True:
        end = starts[-1] + 1
        while end < len(shown) and height(shown[starts[-1]:end + 1]) <= PRINTED_PAGE:
            end += 1
        if end >= len(shown):
            break
        starts.append(end)
    left_out = total - sum(arrow.calls for arrow in shown)
    return [_drawing(lifelines, shown[start:end], timed, left_out=left_out if end == len(shown) else 0,
                     chosen=chosen, page=number)
            for number, (start, end) in enumerate(zip(starts, [*starts[1:], len(shown)], strict=True), 1)]


def _headings(shown: list[Arrow]) -> set[int]:
    """The arrows that begin a file's part of the diagram (a session of several files), which get its name."""
    return {index for index, arrow in enumerate(shown) if arrow.file
            and (index == 0 or shown[index - 1].file != arrow.file)}


def _drawing(lifelines: list[str], shown: list[Arrow], timed: bool, *, narrow: bool = False, left_out: int = 0,
             chosen: str = "", page: int = 0) -> str:
    """The SVG of ``shown``; ``page``: the part of a printed diagram, with a class and marker of its own."""
    columns = ["client", *lifelines]
    width = NARROW_SEQUENCE_WIDTH if narrow else max(SEQUENCE_WIDTH, 200 * len(columns))
    top = 48
    headings = _headings(shown)
    by_time = timed and all(arrow.time is not None for arrow in shown)
    rows, bottom = _layout(shown, top, headings, by_time)
    height = round(bottom + 40)
    margin = 36 if narrow else 80
    head = "head-narrow" if narrow else f"head-page-{page}" if page else "head"
    klass = "sequence-narrow" if narrow else "sequence-page" if page else "sequence"
    x = {name: margin + index * (width - 2 * margin) / max(len(columns) - 1, 1) for index, name in enumerate(columns)}
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" class="{klass}" '
             f'viewBox="0 0 {width:.0f} {height}" width="{width:.0f}" height="{height}" role="group" '
             'aria-label="Sequence diagram: one link per exchange">',
             f'<defs><marker id="{head}" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="8" markerHeight="8" '
             'markerUnits="userSpaceOnUse" orient="auto-start-reverse">'
             '<path d="M0,0 L10,5 L0,10 z" class="arrowhead"/></marker></defs>']
    column_room = (width - 2 * margin) / max(len(columns) - 1, 1)
    for name in columns:
        parts.append(f'<text x="{x[name]:.0f}" y="20" class="lifeline-name" text-anchor="middle">'
                     f'<title>{escape(name)}</title>{escape(fit(name, min(column_room, 2 * margin) - 8))}</text>')
        parts.append(f'<line x1="{x[name]:.0f}" y1="28" x2="{x[name]:.0f}" y2="{height - 10}" class="lifeline"/>')
    for arrow, row in zip(shown, rows, strict=True):
        y = row.call
        if row.heading is not None:
            parts.append(f'<text x="8" y="{row.heading + 16:.0f}" class="file-name">{escape(arrow.file)}</text>')
        agent = x.get(arrow.lifeline, x[columns[-1]])
        start, end = (agent, x["client"]) if arrow.webhook else (x["client"], agent)
        span = abs(end - start) - 12
        # narrow: every label starts at the client and may run past its arrow, over the lifelines
        # beyond (rows do not overlap): the width of the diagram, not of one column, is its room
        text_x, anchor = (x["client"] + 6, "start") if narrow else ((start + end) / 2, "middle")
        room = width - x["client"] - 12 if narrow else span
        kind = "arrow wasted" if arrow.wasted else "arrow"
        mark = " ✕" if arrow.wasted else ""
        label = fit(arrow.label, room - (16 if mark else 0)) + mark
        said = _said(arrow, row.gap)
        parts.append(f'<a href="#{escape(arrow.anchor)}" aria-label="{escape(arrow.name)}: '
                     f'{escape(said, {chr(34): "&quot;"})}"><g class="{kind}{" failed" if arrow.failed else ""}">'
                     f'<title>{escape(said)}</title>')
        if arrow.loop:  # a folded run: a frame around its one arrow, its count and spacing in the tab
            left, right = x["client"] - 8, max(start, end) + 12
            bottom = (row.answer if row.answer is not None else y) + 20
            parts.append(f'<rect x="{left:.0f}" y="{y - LOOP_TOP - 18:.0f}" width="{right - left:.0f}" '
                         f'height="{bottom - y + LOOP_TOP + 18:.0f}" class="loop"/>'
                         f'<text x="{left + 6:.0f}" y="{y - LOOP_TOP - 5:.0f}" class="loop-text">'
                         f'{escape(fit("loop · " + arrow.loop, right - left - 12))}</text>')
        if row.gap is not None and not narrow:  # the quiet time before this call, by the client's lifeline
            parts.append(f'<text x="{x["client"] - 6:.0f}" y="{y - 5:.0f}" text-anchor="end" class="gap">'
                         f'+{escape(duration_text(row.gap))}</text>')
        if row.answer is not None:  # the agent busy with this call: an activation bar on its lifeline
            parts.append(f'<rect x="{agent - 4:.0f}" y="{y:.0f}" width="8" height="{row.answer - y:.0f}" '
                         'class="activation"/>')
        parts.append(f'<line x1="{start:.0f}" y1="{y:.0f}" x2="{end:.0f}" y2="{y:.0f}" marker-end="url(#{head})"/>'
                     f'<text x="{text_x:.0f}" y="{y - 5:.0f}" text-anchor="{anchor}" class="label">'
                     f'{escape(label)}</text>')
        if row.answer is not None:
            back = "bundle" if arrow.events > 1 else "answer"
            failed = " failed" if arrow.failed else ""
            text = _answer(arrow)
            parts.append(f'<line x1="{end:.0f}" y1="{row.answer:.0f}" x2="{start:.0f}" y2="{row.answer:.0f}" '
                         f'class="{back}{failed}" marker-end="url(#{head})"/>'
                         f'<text x="{text_x:.0f}" y="{row.answer + 14:.0f}" text-anchor="{anchor}" '
                         f'class="answer-text{failed}">{escape(fit(text, room))}</text>')
        parts.append("</g></a>")
    if left_out > 0:
        parts.append(f'<text x="10" y="{height - 12}" class="more">… {left_out} more exchanges '
                     f'are in the walkthrough{escape(" " + chosen if chosen else "")}</text>')
    parts.append("</svg>")
    return "".join(parts)


def _answer(arrow: Arrow) -> str:
    """What the answer arrow says: the outcome, its events, a ✗ before an error's name, and how
    long the call took."""
    text = f"{arrow.answer} ({arrow.events} events)" if arrow.events > 1 else arrow.answer
    text = f"✗ {text}" if arrow.failed else text
    if arrow.spread is not None:  # a folded run: its shortest and longest call
        low, high = arrow.spread
        return f"{text} · {duration_text(low).removesuffix(' ms')}–{duration_text(high)}" \
            if duration_text(low).endswith(" ms") and duration_text(high).endswith(" ms") \
            else f"{text} · {duration_text(low)}–{duration_text(high)}"
    return f"{text} · {duration_text(arrow.duration)}" if arrow.duration is not None else text


def _said(arrow: Arrow, gap: float | None = None) -> str:
    """An arrow's whole story for its tooltip and its link's name: the call, how it ended and
    how long it took, and the pause before it."""
    after = f" ({duration_text(gap)} after the previous call ended)" if gap is not None else ""
    after += f" (loop: {arrow.loop})" if arrow.loop else ""
    if arrow.webhook or not arrow.answer:
        took = f" · {duration_text(arrow.duration)}" if arrow.duration is not None else ""
        return f"{arrow.label}{took}{after}"
    return f"{arrow.label} → {_answer(arrow)}{after}"


# -- timeline ------------------------------------------------------------------------------------


def _positions(marks: list[Mark], timed: bool, origin: float) -> list[float]:
    """Where each mark sits on the axis: seconds since ``origin``, or exchange order.

    Several states shown by one exchange share its slot in order, so none hides another.
    """
    if timed:
        result, last = [], 0.0
        for mark in marks:
            value = mark.at - origin if mark.at is not None else last
            result.append(max(value, last))
            last = result[-1]
        return result
    slots: dict[int, list[int]] = {}
    for index, mark in enumerate(marks):
        slots.setdefault(mark.order, []).append(index)
    result = [0.0] * len(marks)
    for order, members in slots.items():
        for k, index in enumerate(members):
            result[index] = order + k / len(members)
    return result


def timeline(tasks: dict[str, list[Mark]], owners: dict[str, str], *, timed: bool, total: int,
             each_session: bool = False, narrow: bool = False, tasks_total: int | None = None,
             seen: dict[str, list[Mark]] | None = None, until: float | None = None,
             clock: str = "recorded") -> str:
    """One row per task: each state a bar from when it was seen until the next one
    (``each_session``: times count from each independent session's first request); ``narrow``
    for a phone: as wide as its screen, rows named by the task alone (the agent in its title),
    fewer ticks, the legend in two columns, and a class of its own."""
    tasks_total = len(tasks) if tasks_total is None else tasks_total  # where ``tasks`` holds the drawn ones
    rows = list(tasks.items())[:MAX_TASKS]
    if not rows:
        return ""
    width, left, right, row_height, min_bar = TIMELINE_WIDTH, 210, 20, 28, 12
    if narrow:
        width, left = NARROW_SEQUENCE_WIDTH, 76
    origin = 0.0 if each_session else min((m.at for _, marks in rows for m in marks if m.at is not None),
                                          default=0.0)
    positions = {task: _positions(marks, timed, origin) for task, marks in rows}
    seen = seen or {}
    looks = {task: _positions(seen.get(task, []), timed, origin) for task, _ in rows}
    end = max(max(p) for p in [*positions.values(), *(p for p in looks.values() if p)])
    if timed and until is not None:  # the axis covers the whole session, not only its last state
        end = max(end, until - origin)
    span = (end * 1.05 if timed else total) or 1.0
    scale = (width - left - right) / span
    top = 46
    legend_rows = 4 if narrow else 1  # eight states: two columns of four, or one line
    height = top + row_height * len(rows) + 74 + 20 * (legend_rows - 1) + (16 if narrow else 0)
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" class="{"timeline-narrow" if narrow else "timeline"}" '
             f'viewBox="0 0 {width} {height}" width="{width}" height="{height}" role="group" '
             'aria-label="Task states over the session">']
    parts += _axis(left, width - right, top - 8, top + row_height * len(rows), span, scale, timed, each_session,
                   ticks=3 if narrow else 6, clock=clock)
    for index, (task, marks) in enumerate(rows):
        y = top + index * row_height
        owner = owners.get(task, "")
        agent = "" if narrow else f'<tspan class="agent"> {escape(fit(owner, left - 90))}</tspan>'
        parts.append(f'<text x="8" y="{y + 14}" class="task-id"><title>{escape(task)} at {escape(owner)}</title>'
                     f'{escape(task[:8])}{agent}</text>')
        xs = _starts([left + p * scale for p in positions[task]], left, width - right, min_bar)
        limit = width - right
        for k, mark in enumerate(marks):
            x0 = xs[k]
            terminal = mark.state in TERMINAL_STATES  # a task's end is a moment: its bar is the narrowest
            x1 = xs[k + 1] if k + 1 < len(xs) else max(x0 + min(min_bar, limit - x0), left + (
                positions[task][k] + (0 if timed or terminal else 1)) * scale)
            x1 = min(x1, limit) if k + 1 == len(xs) else x1
            name = state_name(mark.state)
            colour = STATE_COLOURS.get(mark.state, "#777777")
            inner = name if (x1 - x0) >= CHAR_PX * len(name) + 6 else STATE_LETTERS.get(mark.state, "?")
            parts.append(f'<a href="#{escape(mark.anchor)}" aria-label="{escape(task[:8])} {escape(name)}">'
                         f'<rect x="{x0:.1f}" y="{y}" width="{x1 - x0:.1f}" height="18" fill="{colour}">'
                         f'<title>{escape(name)}</title></rect>'
                         f'<text x="{(x0 + x1) / 2:.1f}" y="{y + 13}" text-anchor="middle" class="state">'
                         f'{escape(inner) if x1 - x0 >= 10 else ""}'
                         '</text></a>')
        for look, at in zip(seen.get(task, []), looks[task], strict=True):  # every exchange that saw the task
            tick = min(max(left + at * scale, left), limit)
            parts.append(f'<a href="#{escape(look.anchor)}" aria-label="{escape(task[:8])} seen by '
                         f'{escape(look.where or look.anchor)}: {escape(state_name(look.state))}">'
                         f'<rect x="{tick - 1.5:.1f}" y="{y + 19}" width="3" height="6" class="seen">'
                         f'<title>{escape(look.where or look.anchor)}: {escape(state_name(look.state))}</title>'
                         '</rect></a>')
    legend_y = height - 12 - 20 * (legend_rows - 1)
    for index, (state, colour) in enumerate(list(STATE_COLOURS.items())[:8]):
        x0 = 8 + (index % 2) * 160 if narrow else 8 + index * 118
        if narrow:
            legend_y = height - 12 - 20 * (legend_rows - 1 - index // 2)
        name = state_name(state)
        parts.append(f'<rect x="{x0}" y="{legend_y - 10}" width="14" height="14" fill="{colour}"/>'
                     f'<text x="{x0 + 3}" y="{legend_y + 1}" class="state">{STATE_LETTERS[state]}</text>'
                     f'<text x="{x0 + 18}" y="{legend_y}" class="legend">{escape(name)}</text>')
    if tasks_total > MAX_TASKS:
        first_legend = height - 12 - 20 * (legend_rows - 1)
        parts.append(f'<text x="8" y="{first_legend - 24}" class="more">… {tasks_total - MAX_TASKS} more tasks</text>')
    parts.append("</svg>")
    return "".join(parts)


def _starts(xs: list[float], left: float, limit: float, min_bar: float) -> list[float]:
    """Where each of a row's bars starts: none hides another (each at least ``min_bar`` wide,
    narrower only when the row holds more states than fit) and none runs past ``limit``."""
    if not xs:
        return xs
    bar = min(min_bar, (limit - left) / len(xs))
    xs = list(xs)
    for k in range(1, len(xs)):
        xs[k] = max(xs[k], xs[k - 1] + bar)
    for k in range(len(xs) - 1, -1, -1):  # pulled back from the edge, keeping their order
        xs[k] = min(xs[k], limit - (len(xs) - k) * bar)
    return xs


def _axis(x0: float, x1: float, y: float, bottom: float, span: float, scale: float, timed: bool,
          each_session: bool = False, ticks: int = 6, clock: str = "recorded") -> list[str]:
    """The time axis; ``clock``: "recorded" (the capture's times) or "status" (the bodies'
    status timestamps, for a capture with none of its own)."""
    parts = [f'<line x1="{x0}" y1="{y}" x2="{x1}" y2="{y}" class="axis"/>']
    step = _nice_step(span / ticks) if timed else max(1, round(_nice_step(span / ticks)))
    tick = 0.0
    while tick <= span + 1e-9 and (timed or tick < span):  # exchange order: no tick past the last exchange
        x = x0 + tick * scale
        label = f"{tick:g} s" if timed else f"#{int(tick) + 1}"
        parts.append(f'<line x1="{x:.1f}" y1="{y - 4}" x2="{x:.1f}" y2="{bottom}" class="tick"/>'
                     f'<text x="{x:.1f}" y="{y - 8}" text-anchor="middle" class="legend">{label}</text>')
        tick += step
    first = "each session's first request" if each_session else "the first request"
    caption = (f"seconds since {first}, from the recorded times" if timed and clock == "recorded"
               else "seconds since the first state, from each status's timestamp" if timed
               else "exchange order (the capture records no times)")
    if ticks < 6:  # narrow: the caption in two lines, from the left edge
        head, _, tail = caption.partition(", " if timed else " (")
        tail = tail if timed else f"({tail}"
        parts.append(f'<text x="8" y="{bottom + 20}" class="legend axis-label">{head}'
                     f'<tspan x="8" dy="16">{tail}</tspan></text>')
        return parts
    parts.append(f'<text x="{x0}" y="{bottom + 20}" class="legend axis-label">{caption}</text>')
    return parts


def _nice_step(raw: float) -> float:
    """1, 2 or 5 times a power of ten, at least ``raw``: ticks a person reads easily."""
    if raw <= 0:
        return 1.0
    magnitude = 10 ** math.floor(math.log10(raw))
    return next(factor * magnitude for factor in (1, 2, 5, 10) if raw <= factor * magnitude)


# -- Markdown: Mermaid and text -----------------------------------------------------------------

_MERMAID_UNSAFE = re.compile(r"[^A-Za-z0-9 .,:/_()'=+@\-]")
#: a message's text runs to the end of its line and may hold braces (a REST route's `{id}`)
_MERMAID_MESSAGE_UNSAFE = re.compile(r"[^A-Za-z0-9 .,:/_()'=+@{}\-]")


def _mermaid_text(text: str) -> str:
    """Text Mermaid shows as it is: no `;`, `#`, `%`, brackets or anything a parser reads."""
    return _MERMAID_UNSAFE.sub(" ", text).strip()[:80] or "-"


def _mermaid_message(text: str) -> str:
    """An arrow's text: Mermaid reads a message to the line's end but for `;` and `#`, so
    only braces are let through beyond what names may hold."""
    return _MERMAID_MESSAGE_UNSAFE.sub(" ", text).strip()[:80] or "-"


def mermaid(lifelines: list[str], arrows: list[Arrow], *, timed: bool = False, total: int | None = None,
            chosen: str = "") -> str:
    """A Mermaid sequence diagram, for Markdown hosts that draw it: each answer with how long its
    call took, the agent activated while it worked, and (``timed``) a webhook inside the call
    open when it came, as the SVG draws them."""
    total = len(arrows) if total is None else total  # where ``arrows`` holds only the first ones drawn
    alias = {"client": "client", **{name: f"agent{index + 1}" for index, name in enumerate(lifelines)}}
    lines = ["sequenceDiagram", "    participant client"]
    lines += [f"    participant {alias[name]} as {_mermaid_text(name)}" for name in lifelines]
    folded = fold(arrows)
    shown = folded[:MAX_MERMAID]
    headings = _headings(shown)
    rows, _ = _layout(shown, 0, headings, timed and all(arrow.time is not None for arrow in shown))
    said: list[tuple[float, int, list[str]]] = []  # (where the SVG draws it, which first, the lines)
    for arrow, row in zip(shown, rows, strict=True):
        agent = alias.get(arrow.lifeline, "client")
        call: list[str] = []
        if row.heading is not None:  # as the SVG does: numbers restart with each file
            call.append(f"    Note over client: {_mermaid_text(arrow.file)}")
        if arrow.webhook:
            call.append(f"    {agent}->>client: {_mermaid_message(arrow.label)}")
            said.append((row.call, 1, call))
            continue
        label = _mermaid_message(arrow.label.replace(" … ", " to "))  # a folded run: "3 GetTask to 11"
        call.append(f"    client->>{agent}: {label}{' (wasted)' if arrow.wasted else ''}")
        if row.answer is None:
            said.append((row.call, 1, call))
            continue
        if arrow.loop:  # a folded run: Mermaid's loop around its one call
            loop = arrow.loop.replace("×", "x").replace("~", "about ")
            call.insert(len(call) - 1, f"    loop {_mermaid_message(loop)}")
        said.append((row.call, 1, [*call, f"    activate {agent}"]))
        events = f" ({arrow.events} events)" if arrow.events > 1 else ""
        took = f", {duration_text(arrow.duration)}" if arrow.duration is not None else ""
        back = "--x" if arrow.failed else "-->>"  # an error's answer ends in a cross, as the SVG marks it ✗
        if arrow.spread is not None:
            took = f", {duration_text(arrow.spread[0])} to {duration_text(arrow.spread[1])}"
        said.append((row.answer, 0, [f"    {agent}{back}client: {_mermaid_message(arrow.answer + events + took)}",
                                     f"    deactivate {agent}", *(["    end"] if arrow.loop else [])]))
    for _, _, told in sorted(said, key=lambda item: (item[0], item[1])):
        lines += told
    left_out = total - sum(arrow.calls for arrow in shown)
    if left_out > 0:
        chosen = f" {_mermaid_message(chosen)}" if chosen else ""
        lines.append(f"    Note over client: {left_out} more exchanges in the walkthrough{chosen}")
    return "\n".join(lines)


def timeline_text(tasks: dict[str, list[Mark]], owners: dict[str, str], *, timed: bool,
                  each_session: bool = False, total: int | None = None, origin: float | None = None) -> list[str]:
    """One line per task: its states in order, each with where (and when) it was seen
    (``each_session``: the times count from each session's first request already). ``total``
    and ``origin``: the session's tasks and its earliest state's time, where ``tasks`` holds
    only the first ones drawn."""
    total = len(tasks) if total is None else total
    if each_session:
        origin = 0.0
    elif origin is None:
        origin = min((m.at for marks in tasks.values() for m in marks if m.at is not None), default=0.0)
    lines = []
    for task, marks in list(tasks.items())[:MAX_TASKS]:
        steps = []
        for mark in marks:
            when = f" +{mark.at - origin:.2f} s" if timed and mark.at is not None else ""
            steps.append(f"{state_name(mark.state)} ({mark.where or mark.anchor}{when})")
        owner = f" at {owners[task]}" if owners.get(task) else ""
        lines.append(f"{task[:8]}{owner}: " + " → ".join(steps))
    if total > MAX_TASKS:
        lines.append(f"… {total - MAX_TASKS} more tasks")
    return lines
