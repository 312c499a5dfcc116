"""Server-sent events, parsed from exact body bytes.

Parsing follows the WHATWG event-stream rules (CRLF, LF or CR line ends, `field: value`,
`:` comments, blank line dispatches), with one allowance for documentation captures: a
last event with no closing blank line still counts. Each event remembers the byte span it
came from, so a writer can put notes between frames without touching the body.
"""

from __future__ import annotations

import re

from pydantic import BaseModel, ConfigDict, Field

_LINE = re.compile(rb"([^\r\n]*)(\r\n|\r|\n|$)")


class Event(BaseModel):
    """One SSE frame."""

    model_config = ConfigDict(frozen=True)

    data: str | None = None
    event: str | None = None
    id: str | None = None
    retry: int | None = None
    comments: list[str] = Field(default_factory=list)
    #: seconds after the exchange started that the frame arrived, if recorded.
    at: float | None = None
    #: notes a capture shows just before this frame.
    notes: list[str] = Field(default_factory=list)
    #: byte offsets of the frame in the body it was parsed from.
    start: int = 0
    end: int = 0

    @property
    def is_ping(self) -> bool:
        """A frame with nothing but comments, such as sse-starlette's keep-alive."""
        return self.data is None and self.event is None and self.id is None


def parse(body: bytes) -> list[Event]:
    """Split an event-stream body into events; never raises."""
    events: list[Event] = []
    fields: dict = {}
    comments: list[str] = []
    data_lines: list[str] = []
    start = 0
    seen_line = False
    pos = 0
    size = len(body)
    while pos < size:
        match = _LINE.match(body, pos)
        line, ending = match.group(1), match.group(2)
        pos = match.end()
        if not line:
            if seen_line:
                events.append(_make(fields, comments, data_lines, start, pos))
                fields, comments, data_lines = {}, [], []
                seen_line = False
                start = pos
            continue
        seen_line = True
        text = line.decode("utf-8", "replace")
        if text.startswith(":"):
            comments.append(text[1:].removeprefix(" "))
            continue
        name, _, value = text.partition(":")
        value = value.removeprefix(" ")
        if name == "data":
            data_lines.append(value)
        elif name in ("event", "id"):
            fields[name] = value
        elif name == "retry" and value.isdigit():
            fields["retry"] = int(value)
        if not ending:
            break
    if seen_line:
        events.append(_make(fields, comments, data_lines, start, size))
    elif events:
        # trailing blank lines belong to the last frame so the spans cover the body
        events[-1] = events[-1].model_copy(update={"end": size})
    return events


def _make(fields: dict, comments: list[str], data_lines: list[str], start: int, end: int) -> Event:
    data = "\n".join(data_lines) if data_lines else None
    return Event(data=data, comments=comments, start=start, end=end, **fields)


def with_context(
    events: list[Event], times: list[float | None], notes: dict[int, list[str]]
) -> list[Event]:
    """Attach arrival times and notes, by position, to parsed events."""
    if not times and not notes:
        return events
    result = []
    for index, event in enumerate(events):
        update = {}
        if index < len(times) and times[index] is not None:
            update["at"] = times[index]
        if index in notes:
            update["notes"] = list(notes[index])
        result.append(event.model_copy(update=update) if update else event)
    return result
