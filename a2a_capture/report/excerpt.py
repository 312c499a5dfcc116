"""Cut an exchange down to the lines that matter, in the A2A 101 manual's listing style.

Every kept line is a line of the capture, character for character. A cut is marked with
`…`: a line of its own, at the indentation of what it replaces, for whole lines; inside a
line for parts of a long one (recorded captures write JSON on one line). The note says what
was kept, as the manual's notes do.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from a2a_capture.capture.models import Exchange, Message, Request, Response

CUT = "…"

#: headers worth showing: they decide how A2A reads the call
KEPT_HEADERS = {"host", "content-type", "a2a-version", "a2a-extensions", "authorization", "accept",
                "if-none-match", "if-modified-since", "etag", "last-modified", "cache-control", "location",
                "www-authenticate", "x-a2a-notification-token"}

#: JSON keys worth showing, and what the note calls them
FOCUS = {
    "method": "the method", "messageId": "the message id", "taskId": "the task id", "contextId": "the context id",
    "state": "the state", "code": "the error", "reason": "the error", "text": "the text",
    "returnImmediately": "the configuration", "historyLength": "the configuration", "pageToken": "the page token",
    "nextPageToken": "the page token", "mediaType": "the media type", "url": "the URLs",
    "protocolBinding": "the interfaces", "protocolVersion": "the interfaces", "streaming": "the capabilities",
    "pushNotifications": "the capabilities", "extendedAgentCard": "the capabilities", "name": "the name",
    "token": "the push config", "status": "the status",
}
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
TOP_LEVEL = {"id": "the id", "message": "the message", "error": "the error"}

_KEY = re.compile(r'^(\s*)"([^"]+)"\s*:')
_PAIR = re.compile(r'"([A-Za-z_][A-Za-z0-9_]*)"\s*:\s*("(?:[^"\\]|\\.)*"|-?\d+(?:\.\d+)?|true|false|null)')
_SHORT = 14  # a body of this many lines or fewer is shown whole
_LONG_LINE = 110


@dataclass
class Listing:
    lines: list[str] = field(default_factory=list)
    kept: list[str] = field(default_factory=list)  # what the note names
    cut: bool = False

    @property
    def text(self) -> str:
        return "\n".join(self.lines)


def listing(exchange: Exchange, *, whole: bool = False, extra_keys: set[str] | None = None) -> tuple[Listing, str]:
    """The excerpt of an exchange and the note that goes with it."""
    out = Listing()
    out.lines.append(_header_line(exchange))
    for note in exchange.notes:
        out.lines.append(f"# {note}")
    _message(out, exchange.request, _start_line(exchange.request), whole, extra_keys)
    for note in exchange.response_notes:
        out.lines += ["", f"# {note}"]
    if exchange.response is not None:
        out.lines.append("")
        _message(out, exchange.response, _status_line(exchange.response), whole, extra_keys)
    if exchange.late_body:
        out.lines.append("")
        _stream(out, exchange.late_body.decode("utf-8", "replace"), whole, extra_keys)
    for note in exchange.trailing_notes:
        out.lines += ["", f"# {note}"]
    return out, _note(exchange, out)


def _header_line(exchange: Exchange) -> str:
    kind = "webhook " if exchange.webhook else ""
    title = f" · {exchange.title}" if exchange.title else ""
    return f"### {kind}{exchange.number}{title}"


def _start_line(request: Request) -> str:
    return f"{request.method} {request.target} HTTP/{request.http_version}"


def _status_line(response: Response) -> str:
    reason = f" {response.reason}" if response.reason else ""
    return f"HTTP/{response.http_version} {response.status}{reason}"


def _message(out: Listing, message: Message, start: str, whole: bool, extra: set[str] | None) -> None:
    out.lines.append(start)
    cut_run = False
    for name, value in message.headers:
        if whole or name.lower() in KEPT_HEADERS:
            out.lines.append(f"{name}: {value}")
            cut_run = False
        elif not cut_run:
            out.lines.append(CUT)
            out.cut = cut_run = True
    if not message.body:
        return
    out.lines.append("")
    content = message.content
    if content is not message.body:
        out.lines.append(f"# (body decoded from {message.header('content-encoding')} for this listing)")
    text = content.decode("utf-8", "replace")
    if isinstance(message, Response) and message.is_event_stream:
        _stream(out, text, whole, extra)
    elif whole:
        out.lines += text.splitlines()
    else:
        _body(out, text, extra)


def _body(out: Listing, text: str, extra: set[str] | None) -> None:
    lines = text.splitlines() or [""]
    if len(lines) == 1:
        out.lines.append(_cut_line(out, lines[0], extra))
        return
    if len(lines) <= _SHORT:
        out.lines += [_cut_line(out, line, extra) for line in lines]
        return
    keep = _lines_to_keep(lines, extra)
    previous = -1
    for index in sorted(keep):
        if index > previous + 1:
            out.lines.append(_indent(lines[previous + 1]) + CUT)
            out.cut = True
        out.lines.append(_cut_line(out, lines[index], extra))
        previous = index
    if previous < len(lines) - 1:
        out.lines.append(_indent(lines[previous + 1]) + CUT)
        out.cut = True


def _lines_to_keep(lines: list[str], extra: set[str] | None) -> set[int]:
    """Lines with focus keys, each with the lines that open the objects around it."""
    wanted = set(FOCUS) | (extra or set())
    keep = {0, len(lines) - 1}
    for index, line in enumerate(lines):
        match = _KEY.match(line)
        if not match:
            continue
        depth, key = len(match.group(1)), match.group(2)
        if key in wanted or (depth <= 2 and key in TOP_LEVEL):
            keep.add(index)
            _add_ancestors(lines, index, depth, keep)
    return keep


def _add_ancestors(lines: list[str], index: int, depth: int, keep: set[int]) -> None:
    for back in range(index - 1, -1, -1):
        line = lines[back]
        indent = len(line) - len(line.lstrip())
        if indent < depth and line.rstrip().endswith(("{", "[")):
            keep.add(back)
            depth = indent
            if depth == 0:
                return


def _stream(out: Listing, text: str, whole: bool, extra: set[str] | None) -> None:
    frames = [line for line in text.splitlines() if line.strip()]
    if whole or len(frames) <= 6:
        shown = frames
    else:
        shown = [*frames[:3], CUT, *frames[-2:]]
        out.cut = True
    for line in shown:
        if line == CUT:
            out.lines.append(CUT)
        else:
            out.lines.append(line if whole else _cut_line(out, line, extra))
            out.lines.append("")
    while out.lines and out.lines[-1] == "":
        out.lines.pop()


#: what a one-line JSON body or SSE frame is cut to: the first occurrence of each of these
INLINE_FOCUS = ("method", "messageId", "taskId", "state", "code", "reason", "text", "name", "nextPageToken",
                "url", "mediaType", "returnImmediately")
_CLOSING = re.compile(r"[\]}]+$")
_OPENING = re.compile(r"(?:data: ?)?[{\[]*")


def _cut_line(out: Listing, line: str, extra: set[str] | None) -> str:
    """A long line cut to its focus pairs, each verbatim, with `…` between them."""
    if len(line) <= _LONG_LINE:
        _note_keys(out, line)
        return line
    wanted = set(INLINE_FOCUS) | (extra or set())
    pieces, seen = [], set()
    for match in _PAIR.finditer(line):
        key = match.group(1)
        if key in wanted and key not in seen:
            seen.add(key)
            pieces.append(match.group(0)[:70])
    out.cut = True
    if not pieces:
        return line[:80] + CUT
    opening = _OPENING.match(line).group(0) or line[:1]
    closing = _CLOSING.search(line)
    result = opening + CUT + CUT.join(pieces) + CUT + (closing.group(0) if closing else "")
    _note_keys(out, result)
    return result


def _note_keys(out: Listing, line: str) -> None:
    for key, _ in _PAIR.findall(line):
        name = FOCUS.get(key) or TOP_LEVEL.get(key)
        if name and name not in out.kept:
            out.kept.append(name)
    match = _KEY.match(line)
    if match:
        name = FOCUS.get(match.group(2))
        if name and name not in out.kept:
            out.kept.append(name)


def _indent(line: str) -> str:
    return line[: len(line) - len(line.lstrip())]


def _note(exchange: Exchange, out: Listing) -> str:
    where = f"Exchange {exchange.label}"
    if not out.cut:
        return f"{where}, complete."
    kept = [k for k in out.kept if k not in ("the text",)] or ["the request and status lines"]
    if len(kept) > 1:
        listed = ", ".join(kept[:-1]) + f", and {kept[-1]}"
    else:
        listed = kept[0]
    return f"{where}, cut to {listed}."


def verbatim_pieces(line: str) -> list[str]:
    """The parts of a listing line that must appear in the capture as they are."""
    return [piece for piece in line.split(CUT) if piece.strip()]
