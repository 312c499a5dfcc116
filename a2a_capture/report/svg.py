"""The session's pictures, drawn as SVG text by the tool itself: no library, no script.

A sequence diagram (the client and each agent as lifelines, one arrow per exchange, wasted
ones marked, SSE frames as a bundle) and a timeline of each task's states. Every label comes
from a capture, so every label is escaped.
"""

from __future__ import annotations

from dataclasses import dataclass
from xml.sax.saxutils import escape

MAX_ARROWS = 400
MAX_TASKS = 40

STATE_COLOURS = {
    "TASK_STATE_SUBMITTED": "#8c8c8c", "TASK_STATE_WORKING": "#2f7bd6", "TASK_STATE_INPUT_REQUIRED": "#d68a00",
    "TASK_STATE_AUTH_REQUIRED": "#b35cd6", "TASK_STATE_COMPLETED": "#2e9e4f", "TASK_STATE_FAILED": "#d23c3c",
    "TASK_STATE_CANCELED": "#6b6b6b", "TASK_STATE_REJECTED": "#a33030", "TASK_STATE_UNSPECIFIED": "#bbbbbb",
}


@dataclass
class Arrow:
    anchor: str
    label: str
    lifeline: str  # the agent (or "webhook" receiver)
    answer: str  # status or state, shown on the way back
    wasted: bool
    events: int
    webhook: bool


def sequence(lifelines: list[str], arrows: list[Arrow]) -> str:
    shown = arrows[:MAX_ARROWS]
    columns = ["client", *lifelines]
    width = max(480, 180 * len(columns))
    step = 46
    top = 48
    height = top + step * len(shown) + 40
    x = {name: 90 + index * (width - 180) / max(len(columns) - 1, 1) for index, name in enumerate(columns)}
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" class="sequence" viewBox="0 0 {width:.0f} {height}" '
             f'width="{width:.0f}" height="{height}" role="img" aria-label="Sequence diagram of the session">',
             '<defs><marker id="head" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="8" markerHeight="8" '
             'markerUnits="userSpaceOnUse" orient="auto-start-reverse">'
             '<path d="M0,0 L10,5 L0,10 z" class="arrowhead"/></marker></defs>']
    for name in columns:
        parts.append(f'<text x="{x[name]:.0f}" y="20" class="lifeline-name" text-anchor="middle">'
                     f'{escape(_short(name, 28))}</text>')
        parts.append(f'<line x1="{x[name]:.0f}" y1="28" x2="{x[name]:.0f}" y2="{height - 10}" class="lifeline"/>')
    for row, arrow in enumerate(shown):
        y = top + row * step
        agent = x.get(arrow.lifeline, x[columns[-1]])
        start, end = (agent, x["client"]) if arrow.webhook else (x["client"], agent)
        kind = "arrow wasted" if arrow.wasted else "arrow"
        parts.append(f'<a href="#{escape(arrow.anchor)}"><g class="{kind}">'
                     f'<title>{escape(arrow.label)}</title>'
                     f'<line x1="{start:.0f}" y1="{y}" x2="{end:.0f}" y2="{y}" marker-end="url(#head)"/>'
                     f'<text x="{(start + end) / 2:.0f}" y="{y - 4}" text-anchor="middle">'
                     f'{escape(_short(arrow.label, 44))}{" ✕" if arrow.wasted else ""}</text>')
        if arrow.answer and not arrow.webhook:
            back = "bundle" if arrow.events > 1 else "answer"
            label = f"{arrow.answer} ({arrow.events} events)" if arrow.events > 1 else arrow.answer
            parts.append(f'<line x1="{end:.0f}" y1="{y + 10}" x2="{start:.0f}" y2="{y + 10}" class="{back}" '
                         f'marker-end="url(#head)"/>'
                         f'<text x="{(start + end) / 2:.0f}" y="{y + 23}" text-anchor="middle" class="answer-text">'
                         f'{escape(_short(label, 44))}</text>')
        parts.append("</g></a>")
    if len(arrows) > MAX_ARROWS:
        parts.append(f'<text x="10" y="{height - 12}" class="more">… {len(arrows) - MAX_ARROWS} more exchanges '
                     'are in the walkthrough</text>')
    parts.append("</svg>")
    return "".join(parts)


def timeline(tasks: dict[str, list[tuple[int, str, str]]], total: int) -> str:
    """One row per task: its states at the position of the exchange that showed them."""
    rows = list(tasks.items())[:MAX_TASKS]
    if not rows:
        return ""
    width, left, row_height = 760, 150, 26
    height = 30 + row_height * len(rows) + 30
    scale = (width - left - 20) / max(total, 1)
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" class="timeline" viewBox="0 0 {width} {height}" '
             f'width="{width}" height="{height}" role="img" aria-label="Task states over the session">']
    for index, (task, seen) in enumerate(rows):
        y = 30 + index * row_height
        parts.append(f'<text x="8" y="{y + 13}" class="task-id"><title>{escape(task)}</title>'
                     f'{escape(_short(task, 18))}</text>')
        for position, (where, state, anchor) in enumerate(seen):
            x0 = left + where * scale
            x1 = left + (seen[position + 1][0] if position + 1 < len(seen) else where + 1) * scale
            colour = STATE_COLOURS.get(state, "#999999")
            name = state.removeprefix("TASK_STATE_").lower().replace("_", "-")
            parts.append(f'<a href="#{escape(anchor)}"><rect x="{x0:.1f}" y="{y}" width="{max(x1 - x0, 4):.1f}" '
                         f'height="16" fill="{colour}"><title>{escape(name)}</title></rect></a>')
    legend_y = height - 10
    for index, (state, colour) in enumerate(list(STATE_COLOURS.items())[:8]):
        x0 = 8 + index * 94
        name = state.removeprefix("TASK_STATE_").lower().replace("_", "-")
        parts.append(f'<rect x="{x0}" y="{legend_y - 9}" width="10" height="10" fill="{colour}"/>'
                     f'<text x="{x0 + 14}" y="{legend_y}" class="legend">{escape(name)}</text>')
    parts.append("</svg>")
    return "".join(parts)


def _short(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"
