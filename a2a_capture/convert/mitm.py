"""mitmproxy flow files (`mitmdump -w`) to captures and back.

Flows written by mitmproxy keep whole bodies but not when each SSE frame arrived (a
streamed body is not kept at all): those streams come over without frame times, and say so.
"""

from __future__ import annotations

import io

from a2a_capture.capture.models import Capture, Exchange
from a2a_capture.convert.har import ConvertError
from a2a_capture.record import flows as flow_tools


def _mitmproxy():
    try:
        from mitmproxy import connection, exceptions, http, io as mitm_io  # noqa: I001
    except ImportError:
        raise ConvertError("reading mitmproxy flows needs mitmproxy: pip install 'a2a-capture[record]'") from None
    return http, mitm_io, connection, exceptions


def flows_to_capture(data: bytes, name: str = "<flows>") -> Capture:
    http, mitm_io, _, exceptions = _mitmproxy()
    exchanges: list[Exchange] = []
    counters = {False: 0, True: 0}
    push_urls: set[str] = set()
    notes, meta = ["converted from a mitmproxy flow file"], [("format", "a2a-capture/1")]
    try:
        for flow in mitm_io.FlowReader(io.BytesIO(data)).stream():
            if not isinstance(flow, http.HTTPFlow):
                continue
            if "a2a_capture" in flow.metadata:  # written by a2a-capture: its own notes come back
                notes = list(flow.metadata["a2a_capture"].get("notes", []))
                meta = [tuple(pair) for pair in flow.metadata["a2a_capture"].get("meta", [])]
            saved = flow.metadata.get("a2a")
            if saved:
                exchanges.append(_restore(flow, saved))
                continue
            request = flow.request
            headers = [(k.decode("latin-1"), v.decode("latin-1")) for k, v in request.headers.fields]
            webhook = flow_tools.is_webhook(headers, request.raw_content or b"", push_urls, request.pretty_url)
            push_urls |= flow_tools.push_urls_in(request.raw_content or b"")
            counters[webhook] += 1
            lost = []
            if flow.response is not None and flow.response.headers.get("content-type", "").startswith(
                    "text/event-stream"):
                lost.append("a mitmproxy flow keeps no arrival time per SSE frame; this stream's were not kept")
            exchanges.append(flow_tools.exchange_from_flow(flow, counters[webhook], webhook=webhook, notes=lost))
    except (exceptions.FlowReadException, ValueError) as error:
        raise ConvertError(f"{name}: not a mitmproxy flow file ({error})") from None
    return Capture(notes=notes, meta=meta, exchanges=exchanges)


def _restore(flow, saved: dict) -> Exchange:
    """An exchange that a2a-capture wrote as a flow, with everything it put in the metadata."""
    exchange = flow_tools.exchange_from_flow(flow, saved["number"], webhook=saved["webhook"])
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
    http, mitm_io, connection, _ = _mitmproxy()
    out = io.BytesIO()
    writer = mitm_io.FlowWriter(out)
    for index, exchange in enumerate(capture.exchanges):
        flow = _flow(exchange, http, connection)
        if index == 0:
            flow.metadata["a2a_capture"] = {"notes": capture.notes, "meta": capture.meta}
        writer.add(flow)
    return out.getvalue()


def _flow(exchange: Exchange, http, connection):
    request, response, meta = exchange.request, exchange.response, exchange.meta
    host_header = request.header("host") or meta.server or "localhost:80"
    host, _, port = host_header.rpartition(":") if ":" in host_header else (host_header, "", "80")
    start = meta.started_at.timestamp() if meta.started_at else 0.0
    end = meta.ended_at.timestamp() if meta.ended_at else start
    client = connection.Client(peername=_peer(meta.client), sockname=("127.0.0.1", 0), timestamp_start=start)
    server = connection.Server(address=(host.strip("[]"), int(port or 80)))
    flow = http.HTTPFlow(client, server)
    flow.request = http.Request(
        host=host.strip("[]"), port=int(port or 80), method=request.method.encode(), scheme=b"http",
        authority=b"", path=request.target.encode(), http_version=f"HTTP/{request.http_version}".encode(),
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


def _peer(address: str | None) -> tuple[str, int]:
    if not address:
        return ("127.0.0.1", 0)
    host, _, port = address.rpartition(":")
    return (host.strip("[]"), int(port) if port.isdigit() else 0)
