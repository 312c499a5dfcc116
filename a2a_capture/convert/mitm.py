"""mitmproxy flow files (`mitmdump -w`) to captures and back.

Flows written by mitmproxy keep whole bodies but not when each SSE frame arrived (a
streamed body is not kept at all): those streams come over without frame times, and say so.
A flow file comes from a stranger as often as a capture does: each record is checked against
the member types the conversion relies on, and a record that breaks them is named by its place
in the file and the exact path of the member.
"""

from __future__ import annotations

import io

from a2a_capture import flow_exchange, nesting
from a2a_capture.capture.models import Capture, Exchange
from a2a_capture.convert.har import ConvertError, body_allowed, har_to_capture, readable_target
from a2a_capture.convert.shape import (
    BOOLEAN,
    BYTES,
    EXCHANGE_NUMBER,
    HEADER_NAME_BYTES,
    HEADER_VALUE_BYTES,
    INTEGER,
    METHOD_BYTES,
    NUMBER,
    PORT,
    PRAGMA_PAIRS,
    REASON_BYTES,
    STRING,
    STRINGS,
    Address,
    ListOf,
    OneOf,
    Pair,
    Range,
    ShapeError,
    describe,
    member,
    obj,
    optional,
)
from a2a_capture.errors import one_line, valid_utf8

# -- what the conversion relies on in an HTTP flow record, after mitmproxy has migrated it -------------

TIME = Range(0, 253402300799, "a time in seconds since 1970 (up to the year 9999)")
HEADERS = ListOf(Pair(HEADER_NAME_BYTES, HEADER_VALUE_BYTES))
_MESSAGE = {"http_version": BYTES, "headers": HEADERS, "content": optional(BYTES), "trailers": optional(HEADERS),
            "timestamp_start": TIME, "timestamp_end": optional(TIME)}
REQUEST = obj({**_MESSAGE, "host": STRING, "port": PORT, "method": METHOD_BYTES,
               "scheme": BYTES, "authority": BYTES, "path": BYTES},
              "http_version headers content trailers timestamp_start timestamp_end host port method scheme authority "
              "path", "a request")
RESPONSE = obj({**_MESSAGE, "status_code": Range(100, 999, "an HTTP status (100 to 999)"), "reason": REASON_BYTES},
               "http_version headers content trailers timestamp_start timestamp_end status_code reason", "a response")
#: what a2a-capture itself keeps in a flow's metadata (see ``_flow``)
SAVED = obj({"number": EXCHANGE_NUMBER, "webhook": BOOLEAN, "title": STRING, "notes": STRINGS,
             "response_notes": STRINGS, "trailing_notes": STRINGS, "start": optional(STRING), "end": optional(STRING),
             "client": optional(STRING), "server": optional(STRING), "redacted": STRINGS, "extra": PRAGMA_PAIRS,
             "event_times": ListOf(optional(NUMBER))},
            "number webhook title notes response_notes trailing_notes start end client server redacted extra "
            "event_times")
HTTP_FLOW = obj({
    "request": REQUEST, "response": optional(RESPONSE),
    "error": optional(obj({"msg": STRING, "timestamp": TIME}, "msg timestamp", "an error")),
    "client_conn": obj({"peername": optional(Address()), "sockname": optional(Address())}, "", "a connection"),
    "server_conn": obj({"peername": optional(Address()), "address": optional(Address())}, "", "a connection"),
    "metadata": obj({"a2a": optional(SAVED),
                     "a2a_capture": optional(obj({"notes": STRINGS, "meta": PRAGMA_PAIRS}, "notes meta"))}),
}, "request client_conn server_conn metadata", "an HTTP flow record")
RECORD = obj({"type": STRING, "version": OneOf((INTEGER, ListOf(INTEGER)))}, "type version",
             "a flow record (a dictionary)")


def _mitmproxy():
    try:
        from mitmproxy import connection, http
    except ImportError:
        raise ConvertError("reading mitmproxy flows needs mitmproxy: pip install 'a2a-capture[record]'") from None
    return http, connection


def flows_to_capture(data: bytes, name: str = "<flows>") -> Capture:
    if data.removeprefix(b"\xef\xbb\xbf").lstrip()[:1] == b"{":  # mitmproxy reads a HAR file given as flows
        return har_to_capture(data, name)
    http, _ = _mitmproxy()
    exchanges: list[Exchange] = []
    counters = {False: 0, True: 0}
    push_urls: set[str] = set()
    notes, meta = ["converted from a mitmproxy flow file"], [("format", "a2a-capture/1")]
    skipped: dict[str, int] = {}
    try:
        nesting.check_flows(data)
    except nesting.TooDeep as error:
        number, start = error.record
        raise ConvertError(f"{name}: flow {number} at byte {start}: {error}") from None
    for place, (where, flow) in enumerate(_records(data, name), start=1):
        if not isinstance(flow, http.HTTPFlow):  # TCP, UDP, DNS: nothing a capture holds
            skipped[flow.type] = skipped.get(flow.type, 0) + 1
            continue
        try:
            whole = flow.metadata.get("a2a_capture")
            if whole:  # written by a2a-capture: its own notes come back
                notes, meta = list(whole["notes"]), [tuple(pair) for pair in whole["meta"]]
            saved = flow.metadata.get("a2a")
            exchange = _restore(flow, saved) if saved else _foreign(flow, counters, push_urls)
            exchange.request.target = readable_target(exchange.request.target)
            body_allowed(exchange.response, "$.response.status_code")
            exchange.flow = place
            exchanges.append(exchange)
        except ShapeError as error:
            raise ConvertError(f"{where}: {error}") from None
        except (ValueError, UnicodeError) as error:  # a value no table foresaw: still one line, with its place
            raise ConvertError(f"{where}: $: expected an HTTP flow a capture can hold ({one_line(error)})") from None
    notes += [f"skipped {count} {kind} flow(s): a capture holds HTTP only" for kind, count in sorted(skipped.items())]
    return Capture(notes=notes, meta=meta, exchanges=exchanges)


def _records(data: bytes, name: str):
    """Each flow of the file with where it is (`file: flow N at byte B`), checked before mitmproxy builds it."""
    from mitmproxy import flow as mitm_flow
    from mitmproxy.io import compat, tnetstring

    stream, number = io.BytesIO(data), 0
    while stream.tell() < len(data):
        offset, number = stream.tell(), number + 1
        where = f"{name}: flow {number} at byte {offset}"
        try:
            record = tnetstring.load(stream)
        except IndexError:
            raise ConvertError(f"{where}: not a mitmproxy flow record (the file ends inside it)") from None
        except (ValueError, TypeError) as error:
            raise ConvertError(f"{where}: not a mitmproxy flow record ({one_line(error)})") from None
        except RecursionError:
            raise ConvertError(f"{where}: not a mitmproxy flow record (nested too deeply)") from None
        try:
            RECORD.check(record, "$")
            try:
                record = compat.migrate_flow(record)
            except ValueError as error:  # a format version this mitmproxy does not know
                raise ShapeError("$.version", "a flow format version this mitmproxy reads",
                                 one_line(error)) from None
            except (KeyError, TypeError, AttributeError, IndexError) as error:
                raise ShapeError("$", f"a flow record of format version {record.get('version')!r}", "one that "
                                 f"cannot be upgraded ({type(error).__name__}: {one_line(error)})") from None
            if record.get("type") == "http":
                HTTP_FLOW.check(record, "$")
            try:
                flow = mitm_flow.Flow.from_state(record)
            except KeyError as error:
                raise ShapeError("$", f"a flow record with a member {error}", "no such member") from None
            except AssertionError:  # mitmproxy's way to say a record has members it does not know
                surprise = sorted(set(record) - _flow_members(), key=str)[:1] or ["?"]
                raise ShapeError(member("$", str(surprise[0])), "no such member (a flow record of this "
                                 "format has none)", describe(record.get(surprise[0]))) from None
            except (ValueError, TypeError, AttributeError, IndexError) as error:
                raise ShapeError("$", "a mitmproxy flow record", f"{type(error).__name__}: "
                                 f"{one_line(error) or 'members it does not have, or lacks'}") from None
        except ShapeError as error:
            raise ConvertError(f"{where}: {error}") from None
        yield where, flow


def _flow_members() -> set:
    """The members of a flow record as this mitmproxy writes one."""
    from mitmproxy import connection, http

    flow = http.HTTPFlow(connection.Client(peername=("", 0), sockname=("", 0)), connection.Server(address=None))
    flow.request = http.Request.make("GET", "http://localhost/")
    return {*flow.get_state(), "backup"}


def _foreign(flow, counters: dict[bool, int], push_urls: set[str]) -> Exchange:
    """An exchange from a flow some other mitmproxy user wrote: numbered in order, webhooks apart."""
    request = flow.request
    headers = [(k.decode("latin-1"), v.decode("latin-1")) for k, v in request.headers.fields]
    webhook = flow_exchange.is_webhook(headers, request.raw_content or b"", push_urls, request.pretty_url)
    push_urls |= flow_exchange.push_urls_in(request.raw_content or b"")
    counters[webhook] += 1
    lost = []
    if flow.response is not None and flow.response.headers.get("content-type", "").startswith("text/event-stream"):
        lost.append("a mitmproxy flow keeps no arrival time per SSE frame; this stream's were not kept")
    return flow_exchange.exchange_from_flow(flow, counters[webhook], webhook=webhook, notes=lost)


def _restore(flow, saved: dict) -> Exchange:
    """An exchange that a2a-capture wrote as a flow, with everything it put in the metadata."""
    exchange = flow_exchange.exchange_from_flow(flow, saved["number"], webhook=saved["webhook"])
    exchange.title = saved["title"]
    exchange.notes = list(saved["notes"])
    exchange.response_notes = list(saved["response_notes"])
    exchange.trailing_notes = list(saved["trailing_notes"])
    meta = exchange.meta
    meta.start, meta.end, meta.client, meta.server = saved["start"], saved["end"], saved["client"], saved["server"]
    meta.redacted = list(saved["redacted"])
    meta.extra = [tuple(pair) for pair in saved["extra"]]
    if exchange.response is not None:
        exchange.response.event_times = list(saved["event_times"])
    return exchange


def capture_to_flows(capture: Capture) -> bytes:
    http, connection = _mitmproxy()
    from mitmproxy.io import tnetstring

    out = io.BytesIO()
    for index, exchange in enumerate(capture.exchanges):
        flow = _flow(exchange, http, connection)
        if index == 0:
            flow.metadata["a2a_capture"] = {"notes": capture.notes, "meta": capture.meta}
        tnetstring.dump(_utf8(flow.get_state()), out)  # what FlowWriter.add does, with text it can encode
    return out.getvalue()


def _flow(exchange: Exchange, http, connection):
    request, response, meta = exchange.request, exchange.response, exchange.meta
    host, port = _host_port(request.header("host") or meta.server or "localhost:80")
    start = meta.started_at.timestamp() if meta.started_at else 0.0
    end = meta.ended_at.timestamp() if meta.ended_at else start
    client = connection.Client(peername=_peer(meta.client), sockname=("127.0.0.1", 0), timestamp_start=start)
    server = connection.Server(address=(host, port))
    flow = http.HTTPFlow(client, server)
    flow.request = http.Request(
        host=host, port=port, method=request.method.encode("utf-8", "surrogateescape"), scheme=b"http",
        authority=b"", path=request.target.encode("utf-8", "surrogateescape"),
        http_version=f"HTTP/{request.http_version}".encode(),
        headers=http.Headers([(n.encode("latin-1", "replace"), v.encode("utf-8", "surrogateescape"))
                              for n, v in request.headers]),
        content=request.body, trailers=None, timestamp_start=start, timestamp_end=start)
    if response is not None:
        flow.response = http.Response(
            http_version=f"HTTP/{response.http_version}".encode(), status_code=response.status,
            reason=response.reason.encode("utf-8", "surrogateescape"),
            headers=http.Headers([(n.encode("latin-1", "replace"), v.encode("utf-8", "surrogateescape"))
                                  for n, v in response.headers]),
            content=response.body, timestamp_start=start, timestamp_end=end,
            trailers=http.Headers([(n.encode("latin-1", "replace"), v.encode("utf-8", "surrogateescape"))
                                   for n, v in response.trailers]) if response.trailers else None)
    # what a flow file has no field for rides along in the flow's metadata, which it keeps
    flow.metadata["a2a"] = {
        "number": exchange.number, "webhook": exchange.webhook, "title": exchange.title,
        "notes": exchange.notes, "response_notes": exchange.response_notes,
        "trailing_notes": exchange.trailing_notes, "start": meta.start, "end": meta.end,
        "client": meta.client, "server": meta.server, "redacted": meta.redacted, "extra": meta.extra,
        "event_times": response.event_times if response is not None else [],
    }
    return flow


def _utf8(state):
    """A flow's state with every string valid UTF-8: a capture keeps bytes that were not UTF-8 as
    surrogates (in notes, titles, a Host header), which a flow file's text cannot hold; shown escaped."""
    if isinstance(state, str):
        return valid_utf8(state)
    if isinstance(state, dict):
        return {key: _utf8(value) for key, value in state.items()}
    if isinstance(state, list | tuple):
        return type(state)(_utf8(value) for value in state)
    return state


def _host_port(value: str, default: int = 80) -> tuple[str, int]:
    """The host and port a flow needs, from a Host header or a `#@ client:` line; a port a flow
    cannot hold (none, not a number, past 65535) is ``default``: a Host header itself goes along
    unchanged in the headers."""
    host, sep, port = value.rpartition(":")
    if not sep or "]" in port:  # no port at all, or a bare IPv6 address
        host, port = value, ""
    number = int(port) if port.isascii() and port.isdigit() and len(port) <= 5 else default
    return host.strip("[]"), number if number <= 65535 else default


def _peer(address: str | None) -> tuple[str, int]:
    return _host_port(address, default=0) if address else ("127.0.0.1", 0)
