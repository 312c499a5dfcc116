"""HAR 1.2 to captures and back, so traffic from browser devtools and other proxies can be read.

HAR cannot carry everything a recorded capture holds: it has no arrival time per SSE frame
and no notes between frames. Converting a capture to HAR keeps those in custom `_a2a*`
fields (HAR allows fields that start with `_`), so a2a-capture reads its own HAR back
without loss; other tools ignore them.
"""

from __future__ import annotations

import base64
import binascii
import json
from datetime import UTC, datetime, timedelta
from urllib.parse import urlsplit

from a2a_capture import __version__
from a2a_capture.capture.models import Capture, Exchange, ExchangeMeta, Request, Response, format_time
from a2a_capture.errors import A2ACaptureError
from a2a_capture.record.flows import title_for

LOST_IN_HAR = "HAR has no arrival time per SSE frame; this stream's frame times were not kept"


class ConvertError(A2ACaptureError):
    """An input file is not what its format says."""


def har_to_capture(data: bytes, name: str = "<har>") -> Capture:
    try:
        har = json.loads(data)
        entries = har["log"]["entries"]
    except (ValueError, KeyError, TypeError, UnicodeDecodeError, RecursionError):
        raise ConvertError(f"{name}: not a HAR 1.2 file (expected a JSON object with log.entries)") from None
    if not isinstance(entries, list) or not all(isinstance(entry, dict) for entry in entries):
        raise ConvertError(f"{name}: $.log.entries: expected a list of HAR entries (JSON objects)")
    ordered = sorted(enumerate(entries), key=lambda item: (str(item[1].get("startedDateTime", "")), item[0]))
    foreign = har["log"].get("creator", {}).get("name") != "a2a-capture"
    exchanges: list[Exchange] = []
    counters = {False: 0, True: 0}
    for index, entry in ordered:
        try:
            webhook = bool(entry.get("_a2aWebhook"))
            counters[webhook] += 1
            exchanges.append(_exchange(entry, entry.get("_a2aNumber") or counters[webhook], webhook, foreign))
        except (KeyError, TypeError, ValueError, AttributeError, binascii.Error) as error:
            what = f"member {error}" if isinstance(error, KeyError) else str(error).splitlines()[0]
            raise ConvertError(f"{name}: $.log.entries[{index}]: expected a HAR entry ({what})") from None
    notes = list(har["log"].get("_a2aNotes") or [])
    meta = [tuple(pair) for pair in har["log"].get("_a2aMeta", [("format", "a2a-capture/1")])]
    creator = har["log"].get("creator", {})
    if creator.get("name") != "a2a-capture":
        notes.append(f"converted from HAR written by {creator.get('name', 'an unknown tool')}")
    return Capture(notes=notes, meta=meta, exchanges=exchanges)


def _exchange(entry: dict, number: int, webhook: bool, foreign: bool) -> Exchange:
    request = entry["request"]
    url = urlsplit(request["url"])
    headers = [(h["name"], h["value"]) for h in request.get("headers", []) if not h["name"].startswith(":")]
    has_host = any(name.lower() == "host" for name, _ in headers)
    if not has_host and url.netloc and not entry.get("_a2aNoHost"):
        headers.insert(0, ("Host", url.netloc))
    target = url.path or "/"
    if url.query:
        target += "?" + url.query
    post = request.get("postData") or {}
    body = _body(post.get("text"), post.get("encoding") or post.get("_encoding"))
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
            status=int(answer["status"]), reason=answer.get("statusText", ""),
            headers=[(h["name"], h["value"]) for h in answer.get("headers", []) if not h["name"].startswith(":")],
            body=_body(content.get("text"), content.get("encoding")),
            http_version="2" if grpc else _version(answer.get("httpVersion")),
            event_times=list(entry.get("_a2aEventTimes") or []),
            trailers=[(h["name"], h["value"]) for h in entry.get("_a2aTrailers") or []],
        )
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
    exchange = Exchange(number=int(number), webhook=webhook, request=exchange_request, response=response,
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
        exchange.late_body = late.get("body", "").encode()
        exchange.late_event_notes = {int(k): list(v) for k, v in late.get("notes", {}).items()}
    return exchange


def _body(text: str | None, encoding: str | None) -> bytes:
    if not text:
        return b""
    if encoding == "base64":
        return base64.b64decode(text)
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
    except ValueError:
        return None
    return format_time(moment)


# -- capture to HAR ----------------------------------------------------------------------------------


def capture_to_har(capture: Capture) -> bytes:
    entries = [_entry(exchange) for exchange in capture.exchanges]
    har = {"log": {"version": "1.2", "creator": {"name": "a2a-capture", "version": __version__},
                   "entries": entries, "_a2aNotes": capture.notes, "_a2aMeta": capture.meta}}
    return json.dumps(har, indent=2, ensure_ascii=False).encode()


def _entry(exchange: Exchange) -> dict:
    request, response, meta = exchange.request, exchange.response, exchange.meta
    host = request.header("host") or meta.server or "localhost"
    url = request.target if "://" in request.target else f"http://{host}{request.target}"
    started = meta.started_at or datetime(1970, 1, 1, tzinfo=UTC)
    total = meta.duration * 1000 if meta.duration is not None else -1
    entry = {
        "startedDateTime": started.isoformat().replace("+00:00", "Z"),
        "time": total,
        "request": {
            "method": request.method, "url": url, "httpVersion": f"HTTP/{request.http_version}",
            "cookies": [], "headers": [{"name": n, "value": v} for n, v in request.headers],
            "queryString": [], "headersSize": -1, "bodySize": len(request.body),
        },
        "response": _har_response(response),
        "cache": {},
        "timings": {"send": 0, "wait": max(total, 0), "receive": 0},
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
