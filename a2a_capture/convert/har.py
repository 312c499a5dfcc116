"""HAR 1.2 to captures and back, so traffic from browser devtools and other proxies can be read.

HAR cannot carry everything a recorded capture holds: it has no arrival time per SSE frame
and no notes between frames. Converting a capture to HAR keeps those in custom `_a2a*`
fields (HAR allows fields that start with `_`), so a2a-capture reads its own HAR back
without loss; other tools ignore them.
"""

from __future__ import annotations

import base64
import binascii
import io
import json
import re
import shutil
import string
import tempfile
from collections.abc import Iterable
from datetime import UTC, datetime, timedelta
from typing import BinaryIO
from urllib.parse import parse_qsl, quote, urlsplit

from pydantic import ValidationError

from a2a_capture import __version__, nesting
from a2a_capture.capture.models import Capture, Exchange, ExchangeMeta, Request, Response, format_time
from a2a_capture.convert.shape import (
    BOOLEAN,
    EXCHANGE_NUMBER,
    HEADER_NAME,
    HEADER_VALUE,
    INTEGER,
    METHOD,
    NUMBER,
    PRAGMA_PAIRS,
    REASON,
    STRING,
    STRINGS,
    ListOf,
    MapOf,
    ShapeError,
    describe,
    obj,
    optional,
)
from a2a_capture.errors import ConvertError, one_line
from a2a_capture.flow_exchange import title_for

LOST_IN_HAR = "HAR has no arrival time per SSE frame; this stream's frame times were not kept"


# -- what the reader relies on, member by member (HAR 1.2, and a2a-capture's own `_a2a*` fields) --------

HEADERS = ListOf(obj({"name": HEADER_NAME, "value": HEADER_VALUE}, "name value",
                     "a header (an object with name and value)"))
TEXT = obj({"text": optional(STRING), "encoding": optional(STRING), "_encoding": optional(STRING)})
REQUEST = obj({"method": METHOD, "url": STRING, "httpVersion": optional(STRING), "headers": HEADERS,
               "postData": optional(TEXT)}, "method url")
RESPONSE = obj({"status": INTEGER, "statusText": optional(REASON), "httpVersion": optional(STRING),
                "headers": HEADERS, "content": optional(TEXT)})
NOTES_BY_FRAME = MapOf(STRINGS)
ENTRY = obj({
    "startedDateTime": optional(STRING), "time": optional(NUMBER), "serverIPAddress": optional(STRING),
    "request": REQUEST, "response": optional(RESPONSE),
    "_a2aNumber": optional(EXCHANGE_NUMBER), "_a2aWebhook": optional(BOOLEAN), "_a2aTitle": optional(STRING),
    "_a2aNotes": optional(STRINGS), "_a2aResponseNotes": optional(STRINGS), "_a2aTrailingNotes": optional(STRINGS),
    "_a2aStart": optional(STRING), "_a2aEnd": optional(STRING), "_a2aClient": optional(STRING),
    "_a2aServer": optional(STRING), "_a2aRedacted": optional(STRINGS),
    "_a2aEventTimes": optional(ListOf(optional(NUMBER))), "_a2aTrailers": optional(HEADERS),
    "_a2aEventNotes": optional(NOTES_BY_FRAME), "_a2aNoHost": optional(BOOLEAN),
    "_a2aLate": optional(obj({"stream": optional(EXCHANGE_NUMBER), "body": STRING, "notes": NOTES_BY_FRAME})),
}, "request", "a HAR entry (an object with a request)")
HAR = obj({"log": obj({
    "creator": optional(obj({"name": optional(STRING)})), "entries": ListOf(ENTRY),
    "_a2aNotes": optional(STRINGS), "_a2aMeta": optional(PRAGMA_PAIRS),
}, "entries")}, "log", "a JSON object with log.entries")

_SPACE = re.compile(r"[ \t\n\r]*")
_PRINTABLE = re.compile(r"[!-~]+")


def har_to_capture(data: bytes, name: str = "<har>") -> Capture:
    try:
        nesting.check_json(data)
    except nesting.TooDeep as error:
        line, column = nesting.line_and_column(data, error.offset)
        raise ConvertError(f"{name}:{line}:{column}: {error}") from None
    har, lines = _document(data, name)
    try:
        HAR.check(har, "$")
    except ShapeError as error:
        if error.path in ("$", "$.log", "$.log.entries"):
            raise ConvertError(f"{name}: not a HAR 1.2 file ({error})") from None
        raise ConvertError(f"{name}: {error}") from None
    log = har["log"]
    entries = log["entries"]
    ordered = sorted(enumerate(entries), key=lambda item: (str(item[1].get("startedDateTime", "")), item[0]))
    creator = (log.get("creator") or {}).get("name")
    foreign = creator != "a2a-capture"
    exchanges: list[Exchange] = []
    counters = {False: 0, True: 0}
    for index, entry in ordered:
        path = f"$.log.entries[{index}]"
        webhook = bool(entry.get("_a2aWebhook"))
        counters[webhook] += 1
        try:
            exchange = _exchange(entry, entry.get("_a2aNumber") or counters[webhook], webhook, foreign, path)
        except ShapeError as error:
            raise ConvertError(f"{name}: {error}") from None
        except ValidationError as error:  # a value no table above foresaw: still one line, with its place
            raise ConvertError(f"{name}: {path}: expected a HAR entry ({one_line(error)})") from None
        exchange.line = lines[index] if index < len(lines) else None
        exchanges.append(exchange)
    notes = list(log.get("_a2aNotes") or [])
    given = log.get("_a2aMeta")
    meta = [tuple(pair) for pair in given] if given is not None else [("format", "a2a-capture/1")]
    if foreign:
        notes.append(f"converted from HAR written by {creator or 'an unknown tool'}")
    return Capture(notes=notes, meta=meta, exchanges=exchanges)


def _document(data: bytes, name: str) -> tuple[object, list[int]]:
    """The JSON document, and the line each element of log.entries starts on (for `path:LINE:`)."""
    not_har = f"{name}: not a HAR 1.2 file (expected a JSON object with log.entries"
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as error:
        raise ConvertError(f"{not_har}; byte {error.start} is not UTF-8)") from None
    decoder = json.JSONDecoder()
    offsets: list[int] = []
    try:
        document, end = _value(decoder, text, _SPACE.match(text, 0).end(), (), offsets)
        end = _SPACE.match(text, end).end()
        if end != len(text):
            raise json.JSONDecodeError("extra data after the document", text, end)
    except json.JSONDecodeError as error:
        raise ConvertError(f"{name}:{error.lineno}:{error.colno}: not a HAR 1.2 file (expected JSON: "
                           f"{error.msg})") from None
    except (ValueError, RecursionError) as error:  # numbers past the integer-string limit, deep nesting
        reason = "nested too deeply" if isinstance(error, RecursionError) else str(error).splitlines()[0]
        raise ConvertError(f"{not_har}; {reason})") from None
    lines, counted, at = [], 1, 0
    for offset in offsets:
        counted += text.count("\n", at, offset)
        lines.append(counted)
        at = offset
    return document, lines


def _value(decoder: json.JSONDecoder, text: str, pos: int, path: tuple, offsets: list[int]) -> tuple[object, int]:
    """One JSON value from ``pos``; walks into the document only as far as log.entries, whose
    elements' offsets it notes, and leaves every other value to the C decoder."""
    opening = text[pos:pos + 1]
    if path in ((), ("log",)) and opening == "{":
        members: dict = {}

        def member(pos: int) -> int:
            if text[pos:pos + 1] != '"':
                raise json.JSONDecodeError("expected a member name in double quotes", text, pos)
            key, pos = json.decoder.scanstring(text, pos + 1)
            pos = _SPACE.match(text, pos).end()
            if text[pos:pos + 1] != ":":
                raise json.JSONDecodeError("expected ':'", text, pos)
            if (*path, key) in (("log",), ("log", "entries")):
                offsets.clear()  # a repeated member: the last one counts, as in json.loads
            members[key], pos = _value(decoder, text, _SPACE.match(text, pos + 1).end(), (*path, key), offsets)
            return pos

        return members, _sequence(text, pos, "}", member)
    if path == ("log", "entries") and opening == "[":
        items: list = []

        def item(pos: int) -> int:
            offsets.append(pos)
            value, pos = decoder.raw_decode(text, pos)
            items.append(value)
            return pos

        return items, _sequence(text, pos, "]", item)
    return decoder.raw_decode(text, pos)


def _sequence(text: str, pos: int, close: str, read) -> int:
    """An object's members or an array's items from its opening at ``pos``, each read by ``read``
    (which answers where it ended); where the sequence ends."""
    pos = _SPACE.match(text, pos + 1).end()
    if text[pos:pos + 1] == close:
        return pos + 1
    while True:
        pos = _SPACE.match(text, read(pos)).end()
        if text[pos:pos + 1] == close:
            return pos + 1
        if text[pos:pos + 1] != ",":
            raise json.JSONDecodeError(f"expected ',' or '{close}'", text, pos)
        pos = _SPACE.match(text, pos + 1).end()


def _exchange(entry: dict, number: int, webhook: bool, foreign: bool, path: str) -> Exchange:
    request = entry["request"]
    url = _url(request["url"], f"{path}.request.url")
    headers = [(h["name"], h["value"]) for h in request.get("headers", []) if not h["name"].startswith(":")]
    has_host = any(name.lower() == "host" for name, _ in headers)
    if not has_host and url.netloc and not entry.get("_a2aNoHost"):
        headers.insert(0, ("Host", url.netloc))
    target = url.path or "/"
    if url.query:
        target += "?" + url.query
    target = readable_target(target)
    post = request.get("postData") or {}
    body = _body(post.get("text"), post.get("encoding") or post.get("_encoding"), f"{path}.request.postData.text")
    exchange_request = Request(method=request["method"], target=target, headers=headers, body=body,
                               http_version=_version(request.get("httpVersion")))
    grpc = exchange_request.is_grpc  # gRPC is HTTP/2 only, and is written so
    if grpc:
        exchange_request.http_version = "2"
    response = None
    notes = list(entry.get("_a2aNotes") or [])
    answer = entry.get("response") or {}
    if answer.get("status"):
        content = answer.get("content") or {}
        response = Response(
            status=_status(answer["status"], f"{path}.response.status"), reason=answer.get("statusText") or "",
            headers=[(h["name"], h["value"]) for h in answer.get("headers", []) if not h["name"].startswith(":")],
            body=_body(content.get("text"), content.get("encoding"), f"{path}.response.content.text"),
            http_version="2" if grpc else _version(answer.get("httpVersion")),
            event_times=list(entry.get("_a2aEventTimes") or []),
            trailers=[(h["name"], h["value"]) for h in entry.get("_a2aTrailers") or []],
        )
        body_allowed(response, f"{path}.response.status")
        if foreign and response.is_event_stream:
            notes.append(LOST_IN_HAR)
    if foreign and url.scheme == "https" and url.hostname:  # the note the recorder writes for HTTPS
        notes.append(f"over TLS to {url.hostname}:{url.port or 443}")
    if foreign and _is_http2(request.get("httpVersion")) and not grpc:
        notes.append(f"recorded over {request.get('httpVersion')}; written as HTTP/1.1 text")
    ours = "_a2aStart" in entry  # written by a2a-capture: its own fields are exact
    meta = ExchangeMeta(start=entry["_a2aStart"] if ours else _iso(entry.get("startedDateTime")),
                        end=entry.get("_a2aEnd") if ours else _end(entry), client=entry.get("_a2aClient"),
                        server=entry.get("_a2aServer") or entry.get("serverIPAddress"),
                        redacted=list(entry.get("_a2aRedacted") or []))
    exchange = Exchange(number=number, webhook=webhook, request=exchange_request, response=response,
                        notes=notes, meta=meta, title=entry.get("_a2aTitle") or "",
                        response_notes=list(entry.get("_a2aResponseNotes") or []),
                        trailing_notes=list(entry.get("_a2aTrailingNotes") or []))
    if not exchange.title:
        exchange.title = title_for(exchange)
    if response is not None and entry.get("_a2aEventNotes"):
        response.event_notes = {int(k): list(v) for k, v in entry["_a2aEventNotes"].items()}
    late = entry.get("_a2aLate")
    if late:
        exchange.late_stream = late.get("stream")
        exchange.late_body = late["body"].encode("utf-8", "surrogateescape")
        exchange.late_event_notes = {int(k): list(v) for k, v in late.get("notes", {}).items()}
    return exchange


def readable_target(target: str) -> str:
    """A request target a capture can hold (printable ASCII, as HTTP/1.1 has it): anything else in
    it, a space, a control character, non-ASCII text, is percent-encoded (its bytes as they came)."""
    if _PRINTABLE.fullmatch(target):
        return target
    return quote(target, safe=string.punctuation, errors="surrogateescape") or "/"


def _url(value: str, path: str):
    """The URL split, its port checked: a malformed IPv6 host or port is the file's fault, said where."""
    try:
        url = urlsplit(value)
        url.port  # noqa: B018 - raises for a port that is not a number up to 65535
    except ValueError as error:
        raise ShapeError(path, f"a URL ({error})", describe(value)) from None
    return url


def body_allowed(response: Response | None, path: str) -> None:
    """A capture shows no body after a 1xx, 204 or 304 answer, as HTTP has none there."""
    if response is not None and response.body and (response.status < 200 or response.status in (204, 304)):
        raise ShapeError(path, f"a status that allows a body (the content has {len(response.body)} bytes)",
                         describe(response.status))


def _status(value: int, path: str) -> int:
    if not 100 <= value <= 999:
        raise ShapeError(path, "an HTTP status (100 to 999, or 0 for no response)", describe(value))
    return value


def _body(text: str | None, encoding: str | None, path: str) -> bytes:
    if not text:
        return b""
    if encoding == "base64":
        try:
            return base64.b64decode(text.encode("ascii"), validate=True)
        except (ValueError, binascii.Error):
            raise ShapeError(path, "base64 text (its encoding says base64)", describe(text)) from None
    return text.encode("utf-8", "surrogateescape")


def _version(value: str | None) -> str:
    return "1.0" if value in ("HTTP/1.0", "http/1.0") else "1.1"


def _is_http2(value: str | None) -> bool:
    return bool(value) and value.lower() not in ("http/1.0", "http/1.1", "")


def _iso(value: str | None) -> str | None:
    if not value:
        return None
    try:
        moment = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return value
    return format_time(moment)


def _end(entry: dict) -> str | None:
    start, total = entry.get("startedDateTime"), entry.get("time")
    if not start or total is None or total < 0:
        return None
    try:
        moment = datetime.fromisoformat(start.replace("Z", "+00:00")) + timedelta(milliseconds=float(total))
    except (ValueError, OverflowError):  # not a date, or a time past the calendar's end
        return None
    return format_time(moment)


# -- capture to HAR ----------------------------------------------------------------------------------


#: the one page a session's entries belong to: viewers (Chrome DevTools among them) group entries by page
PAGE = "page_1"


def capture_to_har(capture: Capture) -> bytes:
    out = io.BytesIO()
    write_har(capture.notes, capture.meta, capture.exchanges, out)
    return out.getvalue()


#: an entry's lines inside log.entries, as json.dumps(indent=2) indents them there
_ENTRY_INDENT = b"\n" + b" " * 6


def write_har(notes: list[str], meta: list, exchanges: Iterable[Exchange], out: BinaryIO) -> int:
    """The HAR document written an entry at a time as each exchange comes, so a capture of any
    length is converted in the memory of its largest exchange; answers the entries written. The
    page, which comes first, needs every entry's host and start: the entries wait in a spool
    file meanwhile. The bytes are json.dumps(indent=2)'s of the whole document: its head and tail
    are a document's without entries, and each entry is dumped alone and indented as it stands
    inside it (JSON text has no raw newline inside a string: each newline is one between lines)."""
    hosts: dict[str, None] = {}
    started: str | None = None
    count = 0
    with tempfile.TemporaryFile() as spool:
        for exchange in exchanges:
            entry = _entry(exchange)
            if not entry["_a2aWebhook"]:
                hosts.setdefault(urlsplit(entry["request"]["url"]).netloc)
            if started is None or entry["startedDateTime"] < started:
                started = entry["startedDateTime"]
            spool.write((b",\n" if count else b"\n") + _ENTRY_INDENT[1:]
                        + _dumped(entry).replace(b"\n", _ENTRY_INDENT))
            count += 1
        empty = {"log": {"version": "1.2", "creator": {"name": "a2a-capture", "version": __version__},
                         "pages": [_page(list(hosts), started)], "entries": [],
                         "_a2aNotes": notes, "_a2aMeta": meta}}
        head, _, tail = _dumped(empty).partition(b'"entries": []')
        out.write(head + b'"entries": [')
        spool.seek(0)
        shutil.copyfileobj(spool, out)
        out.write((b"\n    ]" if count else b"]") + tail)
    return count


def _dumped(value: object) -> bytes:
    # bytes that were not UTF-8 are kept as surrogates (\udcXX), which can stand only inside JSON
    # strings: written backslash-escaped they are JSON escapes, and read back as the same bytes
    return json.dumps(value, indent=2, ensure_ascii=False).encode("utf-8", "backslashreplace")


def _page(hosts: list[str], started: str | None) -> dict:
    """The session as HAR's page: it starts with its first entry (``started``: the earliest
    entry's start; ``hosts``: the agents' in order); no page load happened (-1)."""
    return {"startedDateTime": started or "1970-01-01T00:00:00Z", "id": PAGE,
            "title": "A2A traffic to " + (", ".join(hosts) or "no agent"),
            "pageTimings": {"onContentLoad": -1, "onLoad": -1}}


def _entry(exchange: Exchange) -> dict:
    request, response, meta = exchange.request, exchange.response, exchange.meta
    url = _har_url(request.target, request.header("host") or meta.server or "localhost")
    started = meta.started_at or datetime(1970, 1, 1, tzinfo=UTC)
    total = meta.duration * 1000 if meta.duration is not None else -1
    entry = {
        "pageref": PAGE,
        "startedDateTime": started.isoformat().replace("+00:00", "Z"),
        "time": total,
        "request": {
            "method": request.method, "url": url, "httpVersion": f"HTTP/{request.http_version}",
            "cookies": [], "headers": [{"name": n, "value": v} for n, v in request.headers],
            "queryString": [{"name": n, "value": v} for n, v in parse_qsl(urlsplit(url).query, keep_blank_values=True)],
            "headersSize": -1, "bodySize": len(request.body),
        },
        "response": _har_response(response),
        "cache": {},
        "timings": {"send": 0, "wait": max(total, 0), "receive": 0},
        "_resourceType": "fetch",  # DevTools' Fetch/XHR: what a client's calls are
        "_a2aNumber": exchange.number, "_a2aWebhook": exchange.webhook, "_a2aTitle": exchange.title,
        "_a2aNotes": exchange.notes, "_a2aResponseNotes": exchange.response_notes,
        "_a2aTrailingNotes": exchange.trailing_notes,
        "_a2aStart": meta.start, "_a2aEnd": meta.end, "_a2aClient": meta.client, "_a2aServer": meta.server,
        "_a2aRedacted": meta.redacted,
    }
    if request.body:
        entry["request"]["postData"] = {"mimeType": request.header("content-type") or "", **_text(request.body)}
    if response is not None and response.event_times:
        entry["_a2aEventTimes"] = response.event_times
    if response is not None and response.trailers:  # HAR has no field for trailers (gRPC status)
        entry["_a2aTrailers"] = [{"name": n, "value": v} for n, v in response.trailers]
    if response is not None and response.event_notes:
        entry["_a2aEventNotes"] = {str(k): v for k, v in response.event_notes.items()}
    if exchange.late_body:  # frames of an earlier stream that a documentation capture shows here
        entry["_a2aLate"] = {"stream": exchange.late_stream, "body": exchange.late_body.decode("utf-8", "replace"),
                             "notes": {str(k): v for k, v in exchange.late_event_notes.items()}}
    if request.header("host") is None:
        entry["_a2aNoHost"] = True  # the URL needs a host; the capture had none
    if meta.server:
        entry["serverIPAddress"] = meta.server.rsplit(":", 1)[0].strip("[]")
    return entry


def _har_url(target: str, host: str) -> str:
    """The absolute URL HAR wants; where the capture's host (or absolute target) does not make one
    (`[::1` without its bracket, a port past 65535), the URL says localhost and the Host header,
    kept among the headers, still says what the capture did."""
    url = target if "://" in target else f"http://{host}{target}"
    try:
        urlsplit(url).port  # noqa: B018 - raises for a host or port that makes no URL
        return url
    except ValueError:
        if "://" in target:  # an absolute target: its path, after the authority
            rest = target.split("://", 1)[1]
            target = rest[rest.find("/"):] if "/" in rest else "/"
        return "http://localhost" + (target if target.startswith("/") else "/" + target)


def _har_response(response: Response | None) -> dict:
    if response is None:  # a webhook as the kit shows it, or a failed call: HAR's way to say "no response"
        return {"status": 0, "statusText": "", "httpVersion": "", "cookies": [], "headers": [],
                "content": {"size": 0, "mimeType": ""}, "redirectURL": "", "headersSize": -1, "bodySize": -1}
    return {
        "status": response.status, "statusText": response.reason, "httpVersion": f"HTTP/{response.http_version}",
        "cookies": [], "headers": [{"name": n, "value": v} for n, v in response.headers],
        "content": {"size": len(response.body), "mimeType": response.header("content-type") or "",
                    **_text(response.body)},
        "redirectURL": response.header("location") or "", "headersSize": -1, "bodySize": len(response.body),
    }


def _text(body: bytes) -> dict:
    try:
        return {"text": body.decode("utf-8")}
    except UnicodeDecodeError:
        return {"text": base64.b64encode(body).decode(), "encoding": "base64"}
