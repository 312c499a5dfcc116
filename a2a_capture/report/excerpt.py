"""Cut an exchange down to the lines that matter, in the A2A 101 manual's listing style.

Every kept line is a line of the capture, character for character. A cut is marked with
`…`: a line of its own, at the indentation of what it replaces, for whole lines; inside a
line for parts of a long one (recorded captures write JSON on one line). The note says what
was kept, as the manual's notes do.

Laid out for reading (``layout``, the report's form), a listing is shorter than the capture's
own lines: JSON held on one line is laid out, then its members packed side by side and its
brackets hugged (``_packed``), an id said before is shown by its first characters, the headers
left out are one `…` after those kept, and an `Accept: */*` is left out with them.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

from a2a_capture import nesting
from a2a_capture.a2a.grpc import VIEWS
from a2a_capture.capture import grpc
from a2a_capture.capture.body import FileBody, span
from a2a_capture.capture.encoding import decode_content
from a2a_capture.capture.models import Exchange, Message, Request, Response
from a2a_capture.capture.notes import NEW_CONNECTION_AFTER_ERROR
from a2a_capture.capture.sse import Event

CUT = "…"

#: headers worth showing: they decide how A2A reads the call
KEPT_HEADERS = {"host", "content-type", "a2a-version", "a2a-extensions", "authorization", "accept",
                "if-none-match", "if-modified-since", "etag", "last-modified", "cache-control", "location",
                "www-authenticate", "x-a2a-notification-token", "grpc-status", "grpc-message"}

#: JSON keys worth showing, and what the note calls them
FOCUS = {
    "method": "the method", "messageId": "the message id", "taskId": "the task id", "contextId": "the context id",
    "state": "the state", "code": "the error", "reason": "the error", "text": "the text",
    "returnImmediately": "the configuration", "historyLength": "the configuration", "pageToken": "the page token",
    "nextPageToken": "the page token", "mediaType": "the media type", "url": "the URLs",
    "protocolBinding": "the interfaces", "protocolVersion": "the interfaces", "streaming": "the capabilities",
    "pushNotifications": "the capabilities", "extendedAgentCard": "the capabilities", "name": "the name",
    "token": "the push config", "status": "the status", "id": "the ids", "timestamp": "the status timestamp",
    "message": "the error message", "@type": "the error details", "fieldViolations": "the error details",
}
#: keys kept only where they hold a string: a task's `id` (not an envelope's number), an error's `message`
STRING_ONLY = {"id", "message"}
#: the JSON members a finding points at, kept in the listing of the exchange it concerns
RULE_FOCUS = {
    "tenant-not-echoed": {"tenant"},
    "list-past-last-page": {"pageSize", "pageToken", "nextPageToken"},
    "input-mode": {"mediaType", "url", "raw", "data"},
    "capability-push": {"taskPushNotificationConfig", "pushNotificationConfig", "url"},
    "card-secret": {"token", "secret", "password", "apiKey", "api_key", "credentials"},
    "card-schema": {"supportedInterfaces", "capabilities", "skills", "version", "description"},
    "return-immediately-poll": {"returnImmediately"},
    "poll-terminal": {"state", "historyLength"},
}

#: top-level keys kept as well: ids and error messages
TOP_LEVEL = {"id": "the ids", "message": "the error message", "error": "the error"}

_KEY = re.compile(r'^(\s*)"([^"]+)"\s*:')
_PAIR = re.compile(r'"([A-Za-z_][A-Za-z0-9_]*)"\s*:\s*("(?:[^"\\]|\\.)*"|-?\d+(?:\.\d+)?|true|false|null)')
#: how much of an id said before in the listing is shown again: enough to tell it from the others
_ID_SHOWN = 8
_SHORT = 14  # a body of this many lines or fewer is shown whole
_LAYOUT_LIMIT = 1 << 20  # bodies longer than this are cut inside their line instead of laid out
#: notes the recorder writes about its own work
RECORDER_NOTE = re.compile(r"^a2a-capture ")
_LONG_LINE = 110
_LINE_START = 80  # what a long line with nothing to focus on keeps


@dataclass
class Listing:
    lines: list[str] = field(default_factory=list)
    kept: list[str] = field(default_factory=list)  # what the note names
    cut: bool = False
    frames: int = 0  # frames of the stream listed so far, counted from 1
    cut_frames: list[int] = field(default_factory=list)
    moved: list[str] = field(default_factory=list)  # labels of the blocks whose frames are listed here
    later: list[tuple[int, int, str]] = field(default_factory=list)  # (first, last frame, block label)
    elsewhere: int | None = None  # the exchange whose stream this block's trailing frames continue
    long_values: list[tuple[str, int, int]] = field(default_factory=list)  # (key, kept, length)
    long_lines: list[int] = field(default_factory=list)  # lengths of lines cut to their start
    layout: bool = False  # lay one-line JSON bodies out for reading
    said_ids: set[str] = field(default_factory=set)  # ids a laid-out body has shown whole
    laid_out: bool = False
    recorder_notes: list[str] = field(default_factory=list)

    @property
    def text(self) -> str:
        return "\n".join(self.lines)


def listing(exchange: Exchange, *, whole: bool = False, extra_keys: set[str] | None = None,
            late: list[Exchange] | None = None, layout: bool = False, legend: bool = False) -> tuple[Listing, str]:
    """The excerpt of an exchange and the note that goes with it.

    ``layout``: a one-line JSON body (as recorders write them) is laid out on several lines
    for reading, and the note says so; without it every kept line is the capture's own.
    ``late`` are the later blocks that show more frames of this exchange's stream (the kit
    writes them after the exchange that happened meanwhile): they are listed here, where
    the stream belongs, with their notes, and left out of the block that carries them.
    ``legend``: the page says once what every laid-out listing would say (LEGEND); the note does not.
    """
    out = Listing(layout=layout)
    out.lines.append(_header_line(exchange))
    for note in exchange.notes:
        if layout and RECORDER_NOTE.match(note):  # the recorder's account of its own work goes in the note
            out.recorder_notes.append(note)
        else:
            out.lines.append(f"# {note}")
    target = exchange.request.target
    _message(out, exchange.request, _start_line(exchange.request), whole, extra_keys, (target, "request"))
    for note in exchange.response_notes:
        out.lines += ["", f"# {note}"]
    if exchange.response is not None:
        out.lines.append("")
        _message(out, exchange.response, _status_line(exchange.response), whole, extra_keys, (target, "response"))
    for note in exchange.trailing_notes:
        out.lines += ["", f"# {note}"]
    for block in late or []:
        if not block.late_body:
            continue
        out.lines += ["", CUT]
        out.moved.append(block.label)
        first = out.frames + 1
        _stream(out, block.late_body, block.iter_late_events, whole, extra_keys)
        out.later.append((first, out.frames, block.label))
    if exchange.late_body and exchange.late_stream is not None and exchange not in (late or []):
        out.elsewhere = exchange.late_stream
    return out, _note(exchange, out, legend)


#: what a report says once, above its listings, instead of in the note of each
LEGEND = ("Each listing keeps the lines that matter and marks what it leaves out with …; JSON a capture "
          "holds on one line is laid out for reading, short members side by side and each bracket on the line "
          "of its first or last member, an id shown whole the first time a listing has it and by its first "
          f"{_ID_SHOWN} characters after that, and each stream frame is listed under the time it arrived. "
          "After an error answer the recorder sends the next call on a new connection (agents often "
          "close theirs without saying so); its note on each such exchange is not repeated here.")
#: the recorder's notes the legend stands for
SAID_IN_LEGEND = frozenset({NEW_CONNECTION_AFTER_ERROR})


def _after(seconds: float) -> str:
    """A frame's arrival, as the report's figures say durations: "7.1 ms", "1.2 s"."""
    milliseconds = seconds * 1000
    if milliseconds < 10:
        return f"{milliseconds:.1f} ms"
    return f"{milliseconds:.0f} ms" if milliseconds < 1000 else f"{seconds:.1f} s"


def _header_line(exchange: Exchange) -> str:
    kind = "webhook " if exchange.webhook else ""
    title = f" · {exchange.title}" if exchange.title else ""
    return f"### {kind}{exchange.number}{title}"


def _start_line(request: Request) -> str:
    return f"{request.method} {request.target} HTTP/{request.http_version}"


def _status_line(response: Response) -> str:
    reason = f" {response.reason}" if response.reason else ""
    return f"HTTP/{response.http_version} {response.status}{reason}"


def _message(out: Listing, message: Message, start: str, whole: bool, extra: set[str] | None,
             grpc_call: tuple[str, str]) -> None:
    out.lines.append(start)
    first = len(out.lines)
    cut_run = False
    for name, value in message.headers:
        if whole or (name.lower() in KEPT_HEADERS and not (out.layout and _says_nothing(name, value))):
            out.lines.append(f"{name}: {value}")
            cut_run = False
        elif not cut_run:
            out.lines.append(CUT)
            out.cut = cut_run = True
    if out.layout and CUT in out.lines[first:]:  # one `…`, after the kept headers, says some are left out
        out.lines[first:] = [*(line for line in out.lines[first:] if line != CUT), CUT]
    if message.is_grpc and message.grpc_frames is not None:
        _grpc(out, message, *grpc_call, whole, extra)
        return
    if not message.body_size:
        return
    out.lines.append("")
    stream = isinstance(message, Response) and message.is_event_stream
    encoding = message.header("content-encoding")
    if stream and not encoding:  # its frames a window at a time, the body where it is kept (a large one in its file)
        _stream(out, message.stored, message.iter_events, whole, extra)
        return
    body = message.body
    content = decode_content(body, encoding)
    if content is not body:
        out.lines.append(f"# (body decoded from {encoding} for this listing)")
    if stream:
        _stream(out, content, message.iter_events, whole, extra)
        return
    text = content.decode("utf-8", "replace")
    if whole:
        out.lines += text.splitlines()
    else:
        if out.layout:
            text = _laid_out(out, text)
        _body(out, text, extra)


#: header values a reading listing leaves out with the other headers: they ask for what any answer is
SAYS_NOTHING = {("accept", "*/*")}


def _says_nothing(name: str, value: str) -> bool:
    return (name.lower(), value.strip()) in SAYS_NOTHING


def _laid_out(out: Listing, text: str) -> str:
    """A long one-line JSON body on several lines, two-space indented, as the kit writes JSON."""
    if "\n" in text.strip() or len(text) <= _LONG_LINE or len(text) > _LAYOUT_LIMIT:
        return text
    try:
        value = nesting.loads(text)
    except ValueError:  # not JSON, or nested deeper than nesting.MAX_DEPTH
        return text
    out.laid_out = True
    return "\n".join(_laid_lines(_ids_said_once(value, out.said_ids), 0, ""))


def _ids_said_once(value, said: set[str], key: str = ""):
    """``value`` with each id the listing has shown before cut to its first characters and a `…`:
    a task's, context's and call's ids come back in every frame and answer, 36 characters each."""
    if isinstance(value, dict):
        return {name: _ids_said_once(item, said, name) for name, item in value.items()}
    if isinstance(value, list):
        return [_ids_said_once(item, said, key) for item in value]
    if not isinstance(value, str) or not (key == "id" or key.endswith("Id")) or len(value) <= _ID_SHOWN + 4:
        return value
    if value in said:
        return value[:_ID_SHOWN] + CUT
    said.add(value)
    return value


#: how wide a laid-out line may grow before an object or array in it is opened up
_LAID_WIDTH = 100


def _laid_lines(value, indent: int, prefix: str) -> list[str]:
    """``value`` two-space indented as the kit writes JSON, but an object or array that fits on
    its line stays on it: a listing is read, and a part on six lines hides the parts around it."""
    one = json.dumps(value, ensure_ascii=False)
    start = " " * indent + prefix
    if not isinstance(value, dict | list) or not value or len(start) + len(one) < _LAID_WIDTH:
        return [start + one]
    members = list(value.items()) if isinstance(value, dict) else [(None, item) for item in value]
    lines = [start + ("{" if isinstance(value, dict) else "[")]
    for number, (key, item) in enumerate(members):
        inner = _laid_lines(item, indent + 2, "" if key is None else json.dumps(key, ensure_ascii=False) + ": ")
        if number + 1 < len(members):
            inner[-1] += ","
        lines += inner
    lines.append(" " * indent + ("}" if isinstance(value, dict) else "]"))
    return lines


def _grpc(out: Listing, message: Message, target: str, direction: str, whole: bool, extra: set[str] | None) -> None:
    """gRPC messages as the capture shows them: each one's view (its JSON, cut like a body),
    its bytes only in a whole listing; then the status paragraph of a response."""
    frames = message.grpc_frames or []
    views = message.grpc_views if len(message.grpc_views) == len(frames) else grpc.message_views(
        target, direction, frames, VIEWS)
    for view, one in zip(views, frames, strict=True):
        out.lines += ["", view[0]]
        if whole:
            out.lines += [*view[1:], *(line.decode() for line in grpc.bytes_lines(one))]
            continue
        if len(view) > 1:
            _body(out, "\n".join(view[1:]), extra)
        out.lines.append(grpc.BYTES_PREFIX.decode() + CUT)
        out.cut = True
    if isinstance(message, Response) and (message.trailers or message.grpc_value("grpc-status") is not None):
        out.lines += ["", message.grpc_status_view or grpc.status_view(message.headers, message.trailers, VIEWS)]
        out.lines += [f"{name}: {value}" if whole or len(value) < _LONG_LINE else f"{name}: {CUT}"
                      for name, value in message.trailers]


def _body(out: Listing, text: str, extra: set[str] | None) -> None:
    start = len(out.lines)
    _cut_body(out, text, extra)
    if out.layout:
        out.lines[start:] = _packed(out.lines[start:])


#: how wide a line of members packed side by side may grow
_PACKED_WIDTH = 110


def _packed(lines: list[str]) -> list[str]:
    """Laid-out lines drawn together: an object or array takes its first member on its own line,
    its closing bracket goes on the line of its last, and members one under the other at the
    same depth sit side by side as far as the width allows. The depth still shows by the
    indentation; a bracket or a short member on a line of its own is a line the reader scrolls past."""
    result: list[str] = []
    depth = -1  # the indentation of the member (or closing bracket) the last line ends with
    for line in lines:
        last = result[-1] if result else ""
        stripped = line.strip()
        if not _joinable(last) or not stripped or stripped.startswith("#"):
            result.append(line)
        elif last.rstrip().endswith(("{", "[")) and len(last) + len(stripped) <= _PACKED_WIDTH:
            result[-1] = last.rstrip() + stripped  # an opening bracket takes its first member
        elif _CLOSER.match(line) and len(last) + len(stripped) <= _LONG_LINE:
            result[-1] = last.rstrip() + stripped  # a closing bracket goes where the last member ends
        elif _packable(line) and not last.rstrip().endswith(("{", "[")) and depth == len(_indent(line)) \
                and len(last) + 1 + len(stripped) <= _PACKED_WIDTH:
            result[-1] = last.rstrip() + " " + stripped  # a member beside the one before it
        else:
            result.append(line)
        depth = len(_indent(line))
    return result


def _joinable(line: str) -> bool:
    stripped = line.strip()
    return bool(stripped) and not stripped.startswith("#")


def _packable(line: str) -> bool:
    stripped = line.strip()
    return bool(stripped) and not stripped.endswith(("{", "[")) and not _CLOSER.match(line) \
        and not stripped.startswith(("#", "data:"))


def _cut_body(out: Listing, text: str, extra: set[str] | None) -> None:
    lines = text.splitlines() or [""]
    if len(lines) == 1:
        out.lines.append(_cut_line(out, lines[0], extra))
        return
    if len(lines) <= _SHORT:
        out.lines += [_cut_line(out, line, extra) for line in lines]
        return
    outline = _Outline(lines)
    dropped = outline.dropped(extra)
    counted = outline.alike(extra)  # first line of a run of alike items: (its last line, the mark)
    hidden = set(dropped)
    for start, (end, _) in counted.items():
        hidden.update(range(start, end + 1))
    keep, evidence = _lines_to_keep(lines, extra, hidden)
    keep |= outline.closers(keep)  # a kept object or array is closed, never by a `…`
    index = 0
    while index < len(lines):
        if index in counted:
            end, mark = counted[index]
            out.lines.append(_indent(lines[index]) + mark)
            out.cut = True
            index = end + 1
        elif index in keep:
            out.lines.append(_evidence_line(out, lines[index]) if index in evidence
                             else _cut_line(out, lines[index], extra))
            index += 1
        else:
            end = index
            while end < len(lines) and end not in keep and end not in counted:
                end += 1
            if end - index == 1 and index not in dropped:  # a `…` for one line is no shorter than the line
                out.lines.append(_cut_line(out, lines[index], extra))
            else:
                out.lines.append(_indent(lines[index]) + CUT)
                out.cut = True
            index = end


#: members a cut leaves out unless a finding names them: a task's past, long and seldom the point
DROPPED = frozenset({"history", "stateTransitions"})
#: the items an array keeps before the alike ones after them are counted instead of listed
ALIKE_KEPT = 2
#: the line that stands for a run of alike items: "… 38 more parts like these"
ALIKE_MARK = re.compile(rf"^\s*{CUT} \d+ more .+ like these$")
_CLOSER = re.compile(r"^\s*[\]}][\]},]*$")


class _Outline:
    """The nesting of a laid-out JSON text, line by line (each opening line's closing line and
    each line's parent), found in one pass by the brackets that end and begin its lines."""

    def __init__(self, lines: list[str]) -> None:
        self.lines = lines
        self.close: dict[int, int] = {}
        self.parent: list[int] = []
        self.closing: set[int] = set()  # lines that only close what an earlier line opened
        stack: list[int] = []
        for index, line in enumerate(lines):
            stripped = line.strip()
            opens = stripped.endswith(("{", "["))
            if stripped[:1] in ("}", "]") and stack:
                self.close[stack.pop()] = index
                if not opens:
                    self.closing.add(index)
            self.parent.append(stack[-1] if stack else -1)
            if opens:
                stack.append(index)
        for index in stack:
            self.close[index] = len(lines) - 1

    def _end(self, index: int) -> int:
        return self.close.get(index, index)

    def _key(self, index: int) -> str | None:
        match = _KEY.match(self.lines[index])
        return match.group(2) if match else None

    def dropped(self, extra: set[str] | None) -> set[int]:
        """The lines of the members a cut leaves out (history, state transitions)."""
        wanted = DROPPED - (extra or set())
        lines: set[int] = set()
        for index in range(len(self.lines)):
            if index not in lines and self._key(index) in wanted:
                lines.update(range(index, self._end(index) + 1))
        return lines

    def alike(self, extra: set[str] | None) -> dict[int, tuple[int, str]]:
        """Each array's items after its first ones that are alike one of those (the same members),
        as runs: the run's first line, its last and the line that counts it. An item holding a
        member a finding names is listed."""
        runs: dict[int, tuple[int, str]] = {}
        children: dict[int, list[int]] = {}
        for index, parent in enumerate(self.parent):
            if parent >= 0 and self.lines[parent].rstrip().endswith("[") and index not in self.closing:
                children.setdefault(parent, []).append(index)
        for array, items in children.items():
            if len(items) <= ALIKE_KEPT + 1:
                continue
            shapes = {self._shape(item) for item in items[:ALIKE_KEPT]}
            name = self._key(array) or "items"
            run: list[int] = []
            for item in [*items[ALIKE_KEPT:], None]:
                if item is not None and self._shape(item) in shapes and not self._cited(item, extra):
                    run.append(item)
                    continue
                last = self._end(run[-1]) if run else 0
                if run and (len(run) > 1 or last > run[0]):  # a mark shorter than what it stands for
                    runs[run[0]] = (last, f"{CUT} {len(run)} more {name} like these")
                run = []
        return runs

    def _shape(self, item: int) -> tuple:
        """What makes items alike: an object's member names, or a plain value."""
        if not self.lines[item].rstrip().endswith(("{", "[")):
            try:
                value = json.loads(self.lines[item].strip().removesuffix(","))
            except ValueError:
                return ("value", self._key(item))
            return ("object", *value) if isinstance(value, dict) else ("value", type(value).__name__)
        return tuple(self._key(index) for index in range(item + 1, self._end(item))
                     if self.parent[index] == item and index not in self.closing)

    def _cited(self, item: int, extra: set[str] | None) -> bool:
        return bool(extra) and any(self._key(index) in extra for index in range(item, self._end(item) + 1))

    def closers(self, keep: set[int]) -> set[int]:
        """The closing lines of the kept objects and arrays, where they hold nothing but brackets."""
        return {self.close[index] for index in keep
                if index in self.close and _CLOSER.match(self.lines[self.close[index]])}


def _lines_to_keep(lines: list[str], extra: set[str] | None, hidden: set[int]) -> tuple[set[int], set[int]]:
    """Lines with focus keys, each with the lines that open the objects around it; and the
    lines of a short error object, the evidence of what went wrong, not to be cut inside.
    ``hidden``: lines a cut leaves out or counts, whatever they hold."""
    wanted = set(FOCUS) | (extra or set())
    keep = {0, len(lines) - 1}
    evidence: set[int] = set()
    for index, line in enumerate(lines):
        if index in hidden:
            continue
        match = _KEY.match(line)
        if not match:
            if {name for name, value in _PAIR.findall(line) if name not in STRING_ONLY or value.startswith('"')} \
                    & wanted:  # an item kept on its line
                keep.add(index)
                _add_ancestors(lines, index, len(_indent(line)), keep)
            continue
        depth, key = len(match.group(1)), match.group(2)
        after = line[match.end():].lstrip()
        if key == "error" and after.startswith("{"):
            end = _block_end(lines, index, depth)
            if end - index <= 30:  # the error whole: code, message and details are the evidence
                keep.update(range(index, end + 1))
                evidence.update(range(index, end + 1))
        if key in STRING_ONLY and not after.startswith('"'):
            continue
        inline = {name for name, value in _PAIR.findall(line[match.end():])
                  if name not in STRING_ONLY or value.startswith('"')}  # an object kept on its line
        if key in wanted or (depth <= 2 and key in TOP_LEVEL) or inline & wanted:
            keep.add(index)
            _add_ancestors(lines, index, depth, keep)
    return keep, evidence


def _evidence_line(out: Listing, line: str) -> str:
    """A line of an error object, whole up to the length the one-line form keeps an error
    (an agent's message is cut only when it is longer than that)."""
    if len(line) <= _ERROR_WHOLE:
        _note_keys(out, line)
        return line
    return _cut_line(out, line, None)


def _block_end(lines: list[str], index: int, depth: int) -> int:
    """The line that closes the object opened on line ``index`` (indented ``depth``)."""
    for end in range(index + 1, len(lines)):
        line = lines[end]
        if line.strip() and len(line) - len(line.lstrip()) <= depth:
            return end
    return len(lines) - 1


def _add_ancestors(lines: list[str], index: int, depth: int, keep: set[int]) -> None:
    for back in range(index - 1, -1, -1):
        line = lines[back]
        indent = len(line) - len(line.lstrip())
        if indent < depth and line.rstrip().endswith(("{", "[")):
            keep.add(back)
            depth = indent
            if depth == 0:
                return


def _stream(out: Listing, body: bytes | FileBody, events: Callable[[], Iterator[Event]], whole: bool,
            extra: set[str] | None) -> None:
    """The frames of a stream (``events()``: those of ``body``, one at a time), each with the notes written
    before it; long streams keep both ends. The frames pass twice, once to count them, and only those shown
    are read out of the body: a stream kept in its file is listed in the memory of a window."""
    first = out.frames
    count = sum(1 for _ in events())
    keep = set(range(count)) if whole or count <= 6 else {0, 1, 2, count - 2, count - 1}
    cut_open = False
    for index, event in enumerate(events()):
        number = first + index + 1
        if index not in keep:
            out.cut_frames.append(number)
            if not cut_open:
                out.lines += [CUT, ""]
                out.cut = cut_open = True
            continue
        cut_open = False
        for note in event.notes:
            out.lines.append(f"# {note}")
        if out.layout and not whole and event.at is not None:  # when it came, which the capture holds
            out.lines.append(f"# {_after(event.at)} after the request")
        raw = span(body, event.start, event.end).decode("utf-8", "replace")
        frame = [line for line in raw.splitlines() if line.strip()]
        data = frame[0].removeprefix("data:").lstrip() if len(frame) == 1 and frame[0].startswith("data:") else ""
        laid = _laid_out(out, data) if data and not whole and out.layout else data
        if laid != data:  # a frame laid out as a body is
            _body(out, "data: " + laid, extra)
        else:
            for line in frame:
                out.lines.append(line if whole else _cut_line(out, line, extra))
        out.lines.append("")
    out.frames = first + count
    while out.lines and out.lines[-1] == "":
        out.lines.pop()


#: what a one-line JSON body or SSE frame is cut to: the first occurrence of each of these
INLINE_FOCUS = ("id", "method", "messageId", "taskId", "state", "timestamp", "code", "message", "reason",
                "@type", "field", "description", "text", "name", "nextPageToken", "url", "mediaType",
                "returnImmediately")
_CLOSING = re.compile(r"[\]}]+$")
_OPENING = re.compile(r"\s*(?:data: ?)?[{\[]*")
#: a scalar member, or a bracket: enough to know how deep each member sits. The string
#: expressions are unrolled (no alternation under `*`) so a multi-megabyte string costs no
#: backtracking stack.
_TOKEN = re.compile(r'"([A-Za-z_@][A-Za-z0-9_@]*)"\s*:\s*("[^"\\]*(?:\\.[^"\\]*)*"|-?\d+(?:\.\d+)?|true|false|null)'
                    r'|"[^"\\]*(?:\\.[^"\\]*)*"|([{}\[\]])')
_PIECE = 70  # characters of a member kept before its value is cut
#: what kind of event a frame (or answer) is, kept where the result or params hold it (depth 2, or
#: 1 for a REST frame): 1.0 names it by its member (`"statusUpdate":`), 0.3 by `kind`, 0.1/0.2
#: by `type`, and 0.3 and earlier say with `final` whether the stream ends
EVENT_OBJECTS = frozenset({"task", "message", "statusUpdate", "artifactUpdate"})
EVENT_SCALARS = frozenset({"kind", "type", "final"})
_OBJECT_NEXT = re.compile(r"\s*:\s*\{")
_RESULT_OPEN = re.compile(r'"result"\s*:\s*\{\s*$')


def _opens_result(line: str, start: int, depth: int) -> bool:
    """The member at ``start`` is the first of a JSON-RPC result, or of a REST frame or answer."""
    if '"jsonrpc"' not in line:
        return depth == 1 and line[:start].rstrip().endswith("{")
    return depth == 2 and bool(_RESULT_OPEN.search(line, max(0, start - 40), start))


_ERROR = re.compile(r'"error"\s*:\s*\{')
_ERROR_WHOLE = 600  # an error object up to this long is kept whole: its message and details are the evidence


def _focus_pairs(line: str, wanted: set[str]):
    """(position, key, text, value) of the focus members of a one-line JSON text, in order.

    An error object is one piece, kept whole when it is short, since its message and
    details say what went wrong.
    """
    error = _ERROR.search(line)
    error_span = None
    if error:
        end = _closing_of(line, error.end() - 1)
        if end - error.start() <= _ERROR_WHOLE:
            error_span = (error.start(), end)
            yield error.start(), "error", line[error.start():end], ""
    depth, seen = 0, set()
    for match in _TOKEN.finditer(line):
        bracket = match.group(3)
        if bracket:
            depth += 1 if bracket in "{[" else -1
            continue
        key = match.group(1)
        if key is None and match.group(0)[1:-1] in EVENT_OBJECTS and _opens_result(line, match.start(), depth):
            named = match.group(0)[1:-1]
            if named not in seen and _OBJECT_NEXT.match(line, match.end()):
                seen.add(named)
                yield match.start(), named, line[match.start():line.index(":", match.end()) + 1], ""
            continue
        if depth <= 2 and key in EVENT_SCALARS and key not in seen:
            seen.add(key)
            yield match.start(), key, match.group(0), match.group(2)
            continue
        if key is None or key not in wanted or key in seen:
            continue
        if error_span and error_span[0] <= match.start() < error_span[1]:
            continue
        value = match.group(2)
        if key == "id" and (not value.startswith('"') or (depth <= 1 and '"jsonrpc"' in line)):
            continue  # the JSON-RPC envelope's id, not the task's
        seen.add(key)
        yield match.start(), key, match.group(0), value


def _closing_of(line: str, start: int) -> int:
    """The index just after the bracket that closes the one at ``start``."""
    depth = 0
    for match in _TOKEN.finditer(line, start):
        bracket = match.group(3)
        if bracket:
            depth += 1 if bracket in "{[" else -1
            if depth == 0:
                return match.end()
    return len(line)


def _cut_line(out: Listing, line: str, extra: set[str] | None) -> str:
    """A long line cut to its focus pairs, each verbatim, with `…` between them."""
    if len(line) <= _LONG_LINE:
        _note_keys(out, line)
        return line
    wanted = set(INLINE_FOCUS) | (extra or set())
    pieces = []
    for _, key, text, value in sorted(_focus_pairs(line, wanted)):
        if key != "error" and len(text) > _PIECE and value.startswith('"'):
            out.long_values.append((key, _PIECE - (len(text) - len(value)) - 1, len(value) - 2))
        pieces.append(text if key == "error" else text[:_PIECE])
    out.cut = True
    if not pieces:
        out.long_lines.append(len(line))
        return line[:_LINE_START] + CUT
    opening = _OPENING.match(line).group(0) or line[:1]
    closing = _CLOSING.search(line[-200:])
    result = opening + CUT + CUT.join(pieces) + CUT + (closing.group(0) if closing else "")
    _note_keys(out, result)
    return result


def _note_keys(out: Listing, line: str) -> None:
    for key, value in _PAIR.findall(line):
        if (key in STRING_ONLY and not value.startswith('"')) or value == "null":  # `"error": null` is none
            continue
        name = FOCUS.get(key) or TOP_LEVEL.get(key)
        if name and name not in out.kept:
            out.kept.append(name)
    match = _KEY.match(line)
    if match and not (match.group(2) in STRING_ONLY and not line[match.end():].lstrip().startswith('"')):
        name = FOCUS.get(match.group(2))
        if name and name not in out.kept:
            out.kept.append(name)


def _indent(line: str) -> str:
    return line[: len(line) - len(line.lstrip())]


def _note(exchange: Exchange, out: Listing, legend: bool = False) -> str:
    """Locator, then what is kept, then which frames are cut or sit elsewhere, as the manual writes."""
    where = f"Exchange {exchange.label}"
    if not out.cut:
        sentences = [f"{where}, complete."]
    else:
        kept = [k for k in out.kept if k not in ("the text",)] or ["the request and status lines"]
        sentences = [f"{where}, cut to {series(kept)}."]
    if out.cut_frames:
        sentences.append(f"{_frames(out.cut_frames)} cut.")
    for first, last, label in out.later:
        span = f"Frame {first} comes" if first == last else f"Frames {first} to {last} come"
        sentences.append(f"{span} after exchange {label} in the file, where the stream went on.")
    for key, kept, length in out.long_values[:2]:
        sentences.append(f"The {key} value is cut after {kept} of its {length} characters.")
    if len(out.long_lines) == 1:
        sentences.append(f"A line of {out.long_lines[0]} characters is cut after its first {_LINE_START}.")
    elif out.long_lines:
        sentences.append(f"{len(out.long_lines)} lines are cut after their first {_LINE_START} characters "
                         f"(the longest has {max(out.long_lines)}).")
    if out.laid_out and not legend:
        sentences.append("The JSON is one line in the capture and is laid out here for reading.")
    for note in out.recorder_notes:
        if legend and note in SAID_IN_LEGEND:
            continue
        sentence = "The recorder " + note.removeprefix("a2a-capture ").rstrip(".")
        sentences.append(sentence + ".")
    if out.elsewhere is not None:
        sentences.append(f"The frames after it belong to the stream of exchange {out.elsewhere} "
                         "and are listed there.")
    return " ".join(sentences)


def series(items: list[str]) -> str:
    """"A", "A and B", "A, B, and C"."""
    if len(items) <= 2:
        return " and ".join(items)
    return ", ".join(items[:-1]) + f", and {items[-1]}"


def _frames(numbers: list[int]) -> str:
    """"Frame 4 is", "Frames 4 to 7 are", "Frames 4, 5, and 9 are"."""
    runs: list[list[int]] = []
    for number in numbers:
        if runs and number == runs[-1][-1] + 1:
            runs[-1].append(number)
        else:
            runs.append([number])
    if len(runs) == 1 and len(runs[0]) == 1:
        return f"Frame {numbers[0]} is"
    parts = [f"{run[0]} to {run[-1]}" if len(run) > 2 else " and ".join(map(str, run)) for run in runs]
    return f"Frames {series(parts)} are"


def verbatim_pieces(line: str) -> list[str]:
    """The parts of a listing line that must appear in the capture as they are."""
    if ALIKE_MARK.match(line):  # the count of a run of alike items: the cut's own words
        return []
    return [piece for piece in line.split(CUT) if piece.strip()]
