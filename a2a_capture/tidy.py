"""Turn a raw recording into a capture for a manual or a README, in the A2A 101 kit's style.

Exchanges renumbered; titles that say what each call was for (the operation and the gist
of its message or answer); JSON bodies pretty-printed; only the headers that matter; SSE
frames one per `data:` line; credentials masked as the recorder masks them; optionally ids
replaced by short stable names (`task-1`); and a `# ` note wherever the analyzer found
something, each exchange it names under its number here (one left out is "exchange 7 of the
recording"). What it writes reads back with the project's own reader.

The agent's side as the agent served it, not as the recorder relayed it: `Host` is the agent's
address, and a card the recorder rewrote to point at its listener gets back its own interface
URLs and, where the recorder gave it a tag of its own (its note says the agent's), the agent's
ETag: the recorder's tag stands for the rewritten card, which a documentation capture does not
show, and a reader who fetches the card from the agent sees the agent's.
"""

from __future__ import annotations

import json
import os
import re

from a2a_capture import nesting
from a2a_capture.a2a.decode import Call, decode
from a2a_capture.a2a.grpc import VIEWS
from a2a_capture.analyze.engine import analyze
from a2a_capture.analyze.facts import exchange_facts
from a2a_capture.capture import capture_bytes
from a2a_capture.capture.models import Capture, Exchange, ExchangeMeta, Request, Response
from a2a_capture.capture.notes import CARD_REWRITTEN, ETAG_DERIVED
from a2a_capture.errors import open_output
from a2a_capture.redact.mask import Masker
from a2a_capture.report.facts import MENTION, outcome
from a2a_capture.sources import exchanges as read_exchanges

#: headers a reader of the manual needs, in the kit's spelling
KEPT_REQUEST = ("Host", "Content-Type", "A2A-Version", "A2A-Extensions", "Authorization",
                "X-A2A-Notification-Token", "Accept", "If-None-Match")
KEPT_RESPONSE = ("Content-Type", "ETag", "WWW-Authenticate", "Location")
#: the members whose values are ids, and the short name each kind gets
ID_KINDS = {"taskId": "task", "contextId": "context", "messageId": "message", "artifactId": "artifact"}
_GIST_WORDS = 4
#: notes the recorder writes about its own work, which a reader of a manual does not need
_RECORDER_NOTE = re.compile(r"^a2a-capture ")


def tidy(paths: list[str], *, names: bool = False, show_secrets: bool = False, repeats: bool = False) -> Capture:
    """One documentation capture from the exchanges of ``paths``, in order. A run of MIN_RUN or
    more calls of one operation on one task keeps its first, its last and each call whose
    outcome changed, with a note saying how many were left out (``repeats``: all are kept)."""
    files = [os.fspath(path) for path in paths]
    analysis = analyze(files)
    notes: dict[tuple[str, str], list[str]] = {}
    for finding in analysis.findings:
        notes.setdefault((finding.file, finding.exchange), []).append(f"{finding.rule}: {finding.message}")
    masker = None if show_secrets else Masker.for_files(files)
    result: list[Exchange] = []
    counters = {"exchange": 0, "webhook": 0}
    numbers: dict[tuple[str, int], int] = {}
    labels: dict[tuple[str, str], str] = {}  # each kept exchange's label in the recording, and here
    said: list[tuple[Exchange, str, int]] = []  # each exchange whose trailing notes end with findings' words
    for file in files:
        read = []
        for exchange in read_exchanges(file):
            if masker:
                exchange = masker.exchange(exchange)
            read.append((exchange, decode(exchange, file)))
        read = _after_their_calls(read)
        folded = {} if repeats else _folded(read)
        left_out: list[Exchange] = []
        for exchange, call in read:
            found = notes.get((file, exchange.label), [])
            if masker:  # a finding's words come from the raw capture
                found = [masker.text(note) for note in found]
            if exchange.label in folded:
                left_out.append(exchange)
                notes.setdefault((file, folded[exchange.label]), [])
                notes[(file, folded[exchange.label])] += [note for note in notes.get((file, exchange.label), [])
                                                         if note not in notes[(file, folded[exchange.label])]]
                continue
            kind = "webhook" if exchange.webhook else "exchange"
            counters[kind] += 1
            if not exchange.webhook:
                numbers[(file, exchange.number)] = counters[kind]
            late = numbers.get((file, exchange.late_stream)) if exchange.late_stream is not None else None
            tidied = _tidy_exchange(exchange, call, counters[kind], late, found)
            labels[(file, exchange.label)] = tidied.label
            said.append((tidied, file, len(tidied.trailing_notes) - len(found)))
            if left_out:
                tidied.notes.insert(0, _left_out_note(left_out, call))
                left_out = []
            result.append(tidied)
    by_base = {os.path.basename(file): file for file in files}
    for tidied, file, start in said:  # once every exchange has its number here
        tidied.trailing_notes[start:] = [_renumbered_mentions(note, file, labels, by_base)
                                         for note in tidied.trailing_notes[start:]]
    capture = Capture(exchanges=result)
    if names:
        capture = _short_names(capture)
    return capture


def _renumbered_mentions(note: str, file: str, labels: dict[tuple[str, str], str], by_base: dict[str, str]) -> str:
    """A finding's words with each exchange they name ("exchange 3", "exchange 2 of 01-card.http")
    under its number in this capture; one left out here is named as the recording's."""

    def renumbered(match) -> str:
        label, of = match.group(1), match.group(2) or ""
        base = of.rstrip(".")  # a sentence may end on the file's name
        where = by_base.get(base, file) if of else file
        rest = of[len(base):] if of and base in by_base else (f" of {of}" if of else "")
        here = labels.get((where, label))
        if here is None:
            return f"exchange {label} of the recording{rest}"
        return f"exchange {here}{rest}"

    return MENTION.sub(renumbered, note)


def _after_their_calls(read: list[tuple[Exchange, Call]]) -> list[tuple[Exchange, Call]]:
    """The exchanges in the order a reader follows them: a webhook that came while a call was
    still open (written before it, since the recorder writes an exchange when it ends) moves
    after the calls that had started before it came."""
    ordered = list(read)
    index = 0
    while index < len(ordered):
        exchange = ordered[index][0]
        came = exchange.meta.started_at if exchange.webhook else None
        later = index
        while came is not None and later + 1 < len(ordered):
            following = ordered[later + 1][0]
            if following.webhook or following.meta.started_at is None or following.meta.started_at >= came:
                break
            later += 1
        if later > index:
            ordered.insert(later, ordered.pop(index))
            continue  # the exchange now at ``index`` is the next to look at
        index += 1
    return ordered


#: the shortest run of alike calls that tidy folds to its first and last
MIN_RUN = 3


def _folded(read: list[tuple[Exchange, Call]]) -> dict[str, str]:
    """The calls a run leaves out, each mapped to the label of the call kept after it (which
    carries the note and their findings): in each run of MIN_RUN or more calls in a row of one
    operation on one task, all but the first, the last and each whose outcome changed."""
    keys, outcomes = [], []
    for exchange, call in read:
        facts = exchange_facts(exchange, call)
        alike = not exchange.webhook and facts.operation and facts.task_id and not facts.events \
            and exchange.late_stream is None and not exchange.late_body
        keys.append((facts.operation, facts.task_id) if alike else None)
        outcomes.append(outcome(facts))
    folded: dict[str, str] = {}
    start = 0
    while start < len(read):
        end = start + 1
        while keys[start] is not None and end < len(read) and keys[end] == keys[start]:
            end += 1
        if end - start >= MIN_RUN:
            kept = [k for k in range(start, end) if k in (start, end - 1) or outcomes[k] != outcomes[k - 1]]
            for k in range(start, end):
                if k not in kept:
                    folded[read[k][0].label] = read[min(j for j in kept if j > k)][0].label
        start = end
    return folded


def _left_out_note(left_out: list[Exchange], call: Call) -> str:
    first, last = left_out[0].label, left_out[-1].label
    which = f"exchange {first}" if first == last else f"exchanges {first} to {last}"
    calls = "call" if len(left_out) == 1 else "calls"
    return (f"{len(left_out)} more {call.operation} {calls} on this task ({which} of the recording), answered "
            "as the one before, are left out here; tidy --repeats keeps them.")


def write(paths: list[str], output: str, **options) -> Capture:
    capture = tidy(paths, **options)
    with open_output(output, binary=True) as stream:
        stream.write(capture_bytes(capture, views=VIEWS))
    return capture


def _tidy_exchange(exchange: Exchange, call: Call, number: int, late: int | None, found: list[str]) -> Exchange:
    request = exchange.request
    headers = _kept(request.headers, KEPT_REQUEST)
    if exchange.meta.server:  # the agent's address, not the recorder's listener the client was pointed at
        headers = [(name, exchange.meta.server if name == "Host" else value) for name, value in headers]
    tidy_request = Request(method=request.method, target=request.target, headers=headers,
                           body=_pretty(request.content))
    response = None
    if exchange.response is not None:
        original = exchange.response
        content = _restored(original.content, exchange.notes)
        body = _frames(content) if original.is_event_stream else _pretty(content)
        response = Response(status=original.status, reason=original.reason or "",
                            headers=_agents_etag(_kept(original.headers, KEPT_RESPONSE), exchange.notes), body=body)
    kept_notes = [note for note in exchange.notes if not _RECORDER_NOTE.match(note)]
    return Exchange(
        number=number, title=_title(exchange, call), webhook=exchange.webhook,
        notes=kept_notes, request=tidy_request,
        response_notes=[note for note in exchange.response_notes if not _RECORDER_NOTE.match(note)],
        response=response,
        late_stream=late, late_body=_frames(exchange.late_body) if late is not None else b"",
        late_event_notes=exchange.late_event_notes if late is not None else {},
        trailing_notes=[*exchange.trailing_notes, *found],
        meta=ExchangeMeta(),
    )


#: the recorder's note on a card it pointed at its listener: the card's own URL, and the listener's
_REWROTE = re.compile(re.escape(CARD_REWRITTEN).replace(re.escape("{old}"), r"(\S+)").replace(
    re.escape("{new}"), r"(\S+)"))


def _restored(body: bytes, notes: list[str]) -> bytes:
    """A card as the agent served it: each interface URL the recorder rewrote to its listener
    (as its note says) given back."""
    for note in notes:
        match = _REWROTE.fullmatch(note.rstrip("."))
        if match:
            old, new = (json.dumps(url).encode() for url in match.groups())
            body = body.replace(new, old)
    return body


#: the recorder's note on the ETag it gave a card it rewrote: its own tag, and the agent's
_DERIVED = re.compile(re.escape(ETAG_DERIVED).replace(re.escape("{new}"), r"(.+?)").replace(
    re.escape("{old}"), r"(.+?)"))


def _agents_etag(headers: list[tuple[str, str]], notes: list[str]) -> list[tuple[str, str]]:
    """A restored card's ETag as the agent sent it: the recorder's own tag (as its note says) is a
    tag for the card it rewrote, which a documentation capture does not show."""
    agents = {}
    for note in notes:
        match = _DERIVED.fullmatch(note)
        if match:
            agents[match.group(1)] = match.group(2)
    return [(name, agents.get(value, value) if name.lower() == "etag" else value) for name, value in headers]


def _kept(headers: list[tuple[str, str]], wanted: tuple[str, ...]) -> list[tuple[str, str]]:
    spelled = {name.lower(): name for name in wanted}
    order = {name.lower(): index for index, name in enumerate(wanted)}
    kept = [(spelled[name.lower()], value) for name, value in sorted(headers, key=lambda h: order.get(h[0].lower(), 0))
            if name.lower() in spelled and not (name.lower() == "accept" and "event-stream" not in value)]
    return [(name, value.split(";")[0].strip() if name == "Content-Type" and "json" in value else value)
            for name, value in kept]


def _pretty(body: bytes) -> bytes:
    """A JSON body as the kit writes it (two-space indent); anything else as it was."""
    if not body:
        return b""
    try:
        value = nesting.loads(body)
    except (ValueError, UnicodeDecodeError):
        return body
    if isinstance(value, dict) and "jsonrpc" in value:  # the envelope first, as the kit writes it
        first = [key for key in ("jsonrpc", "id", "method", "params", "result", "error") if key in value]
        value = {key: value[key] for key in [*first, *(k for k in value if k not in first)]}
    return json.dumps(value, indent=2, ensure_ascii=False).encode()


def _frames(body: bytes) -> bytes:
    """SSE frames one per `data:` line, their JSON on that line as the kit writes it."""
    from a2a_capture.capture import sse

    lines = []
    for event in sse.parse(body):
        if event.data is None:
            continue
        try:
            data = json.dumps(nesting.loads(event.data), ensure_ascii=False)
        except ValueError:
            data = " ".join(event.data.splitlines())
        lines.append(f"data: {data}")
    return "\n\n".join(lines).encode()


def _title(exchange: Exchange, call: Call) -> str:
    """What the call was for: `discover NAME`, `SendMessage: run the tests`, `GetTask: completed`."""
    if exchange.title and exchange.title != call.operation:  # a title that already says more: kept
        return exchange.title
    if exchange.webhook:
        return "received by the client"
    if call.kind == "card":
        name = call.card.name if call.card is not None and call.card.name else None
        return f"discover {name}" if name else f"discover {call.path}"
    operation = call.operation or exchange.title.split(":")[0] or f"{exchange.request.method} {call.path}"
    if call.error is not None:
        return f"{operation}: {call.error.name or outcome(exchange_facts(exchange, call))}"
    gist = _gist(call)
    if gist:
        return f"{operation}: {gist}"
    if call.states:
        return f"{operation}: {outcome(exchange_facts(exchange, call))}"
    return operation


def _gist(call: Call) -> str:
    message = call.params.get("message") if isinstance(call.params, dict) else None
    if not isinstance(message, dict):
        return ""
    for part in message.get("parts") or []:
        if isinstance(part, dict) and isinstance(part.get("text"), str) and part["text"].strip():
            words = part["text"].split()
            gist = " ".join(words[:_GIST_WORDS]).rstrip(".,:;")
            return gist[:1].lower() + gist[1:] if not gist[:2].isupper() else gist
    return ""


def _short_names(capture: Capture) -> Capture:
    """Every id replaced by `task-1`, `context-1`, ... in the order they first appear (a whole
    value only: an artifact named `log.txt` keeps its name though its id is `log`), and the
    JSON-RPC ids numbered 1, 2, 3 as the kit numbers them."""
    found: dict[str, str] = {}
    counts: dict[str, int] = {}
    for exchange in capture.exchanges:
        for document in _documents(exchange):
            for kind, value in _ids(document):
                if value not in found and not value.startswith("[redacted"):
                    counts[kind] = counts.get(kind, 0) + 1
                    found[value] = f"{kind}-{counts[kind]}"
    capture = _numbered_calls(capture)
    if not found:
        return capture
    alternatives = "|".join(re.escape(value) for value in sorted(found, key=len, reverse=True))
    quoted = re.compile(f'"({alternatives})"')  # in JSON: the whole string
    bare = re.compile(rf"(?<![\w.-])({alternatives})(?![\w.-])")  # in a path, a title or a note: the whole word

    def swap(text: str) -> str:
        return bare.sub(lambda match: found[match.group(1)], text)

    def swap_bytes(body: bytes) -> bytes:
        text = body.decode("utf-8", "surrogateescape")
        return quoted.sub(lambda match: f'"{found[match.group(1)]}"', text).encode("utf-8", "surrogateescape")

    exchanges = []
    for exchange in capture.exchanges:
        request = exchange.request.model_copy(update={
            "target": swap(exchange.request.target), "body": swap_bytes(exchange.request.body),
            "headers": [(name, swap(value)) for name, value in exchange.request.headers]})
        update = {"request": request, "title": swap(exchange.title), "late_body": swap_bytes(exchange.late_body),
                  "trailing_notes": [swap(note) for note in exchange.trailing_notes],
                  "notes": [swap(note) for note in exchange.notes]}
        if exchange.response is not None:
            update["response"] = exchange.response.model_copy(update={"body": swap_bytes(exchange.response.body)})
        exchanges.append(exchange.model_copy(update=update))
    return capture.model_copy(update={"exchanges": exchanges})


def _numbered_calls(capture: Capture) -> Capture:
    """Each JSON-RPC call's id as 1, 2, 3 in the order the calls were made, in its request, its
    answer and its frames."""
    numbers: dict[object, int] = {}
    exchanges = []
    for exchange in capture.exchanges:
        request = _json(exchange.request.body)
        if not (isinstance(request, dict) and "jsonrpc" in request and "id" in request) or exchange.webhook:
            exchanges.append(exchange)
            continue
        key = json.dumps(request["id"])
        number = numbers.setdefault(key, len(numbers) + 1)
        update = {"request": exchange.request.model_copy(update={"body": _renumbered(exchange.request.body, number)})}
        response = exchange.response
        if response is not None and response.body:
            frames = response.is_event_stream
            body = _renumbered_frames(response.body, key, number) if frames else \
                _renumbered(response.body, number, key)
            update["response"] = response.model_copy(update={"body": body})
        exchanges.append(exchange.model_copy(update=update))
    return capture.model_copy(update={"exchanges": exchanges})


def _renumbered(body: bytes, number: int, key: str | None = None) -> bytes:
    """A tidy JSON-RPC body with its id ``number`` (an answer only where its id was ``key``)."""
    value = _json(body)
    if not isinstance(value, dict) or "id" not in value or (key is not None and json.dumps(value["id"]) != key):
        return body
    value["id"] = number
    return json.dumps(value, indent=2, ensure_ascii=False).encode()


def _renumbered_frames(body: bytes, key: str, number: int) -> bytes:
    frames = []
    for frame in body.decode("utf-8", "surrogateescape").split("\n\n"):
        value = _json(frame.removeprefix("data: ")) if frame.startswith("data: ") else None
        if isinstance(value, dict) and "id" in value and json.dumps(value["id"]) == key:
            value["id"] = number
            frame = "data: " + json.dumps(value, ensure_ascii=False)
        frames.append(frame)
    return "\n\n".join(frames).encode("utf-8", "surrogateescape")


def _documents(exchange: Exchange):
    """The JSON values of an exchange's bodies and frames."""
    from a2a_capture.capture import sse

    for message in (exchange.request, exchange.response):
        if message is None or not message.body:
            continue
        if isinstance(message, Response) and message.is_event_stream:
            yield from (_json(event.data) for event in message.events)
        else:
            yield _json(message.body)
    yield from (_json(event.data) for event in sse.parse(exchange.late_body))


def _json(data):
    try:
        return nesting.loads(data) if data else None
    except (ValueError, UnicodeDecodeError):
        return None


def _ids(value, depth: int = 0):
    """(kind, id) for every id member, in document order; a task's own `id` is a task id."""
    if depth > 32:
        return
    if isinstance(value, dict):
        is_task = "status" in value and "contextId" in value
        for key, child in value.items():
            if isinstance(child, str) and (key in ID_KINDS or (key == "id" and is_task)):
                yield ID_KINDS.get(key, "task"), child
            else:
                yield from _ids(child, depth + 1)
    elif isinstance(value, list):
        for child in value:
            yield from _ids(child, depth + 1)
