"""Record A2A traffic into an a2a-capture `.http` file.

    mitmdump -s addons/a2a_recorder.py --set a2a_capture=session.http

Every exchange is written when it completes, numbered in the order its request arrived.
Event streams pass to the client live while a copy of each frame is kept with its arrival
time. Secrets are redacted unless `--set a2a_redact=false`. In reverse mode the interface
URLs of relayed agent cards are pointed at the recorder (`--set a2a_rewrite_cards=false`
turns that off). The addon never breaks the traffic it records: its own failures are logged.
"""

from __future__ import annotations

import logging

from mitmproxy import ctx, http

from a2a_capture.record import flows
from a2a_capture.record.redact import Redactor
from a2a_capture.record.rewrite import parse_routes, rewrite_card_routes
from a2a_capture.record.sink import CaptureSink

log = logging.getLogger("a2a_capture.recorder")


class A2ARecorder:
    def __init__(self) -> None:
        self.sink: CaptureSink | None = None
        self.redactor: Redactor | None = None
        self.numbers = {"exchange": 0, "webhook": 0}
        self.push_urls: set[str] = set()

    def load(self, loader) -> None:
        loader.add_option("a2a_capture", str, "", "Capture file to append recorded A2A exchanges to.")
        loader.add_option("a2a_redact", bool, True, "Redact credentials, cookies, API keys and push tokens.")
        loader.add_option("a2a_redact_key", str, "", "Key for the redaction hashes (default: random per run).")
        loader.add_option("a2a_rewrite_cards", bool, True,
                          "In reverse mode, point relayed agent cards' interface URLs at the recorder.")
        loader.add_option("a2a_fsync", bool, False, "fsync the capture after every exchange.")
        loader.add_option("a2a_routes", str, "",
                          "Every recorded upstream and its listener (UPSTREAM=http://HOST:PORT;...), so a card "
                          "that names another recorded agent's server is pointed at that agent's listener.")

    def configure(self, updated) -> None:
        if "a2a_capture" in updated and ctx.options.a2a_capture:
            if self.sink is not None:
                self.sink.close()
            self.sink = CaptureSink(ctx.options.a2a_capture, fsync=ctx.options.a2a_fsync)
            log.info("a2a-capture: recording to %s", ctx.options.a2a_capture)
        if "a2a_redact" in updated or "a2a_redact_key" in updated:
            key = ctx.options.a2a_redact_key.encode() or None
            self.redactor = Redactor(key) if ctx.options.a2a_redact else None

    def request(self, flow: http.HTTPFlow) -> None:
        try:
            body = flow.request.raw_content or b""
            headers = [(k.decode("latin-1"), v.decode("latin-1")) for k, v in flow.request.headers.fields]
            webhook = flows.is_webhook(headers, body, self.push_urls, flow.request.pretty_url)
            kind = "webhook" if webhook else "exchange"
            self.numbers[kind] += 1
            flow.metadata["a2a_number"] = (self.numbers[kind], webhook)
            self.push_urls |= flows.push_urls_in(body)
        except Exception:
            log.exception("a2a-capture: could not read a request; it is still forwarded")

    def responseheaders(self, flow: http.HTTPFlow) -> None:
        try:
            if flow.response.headers.get("content-type", "").startswith("text/event-stream"):
                copy = flows.StreamCopy()
                flow.response.stream = copy
                flow.metadata["a2a_stream"] = copy
        except Exception:
            log.exception("a2a-capture: could not watch a stream; it is still forwarded")

    def response(self, flow: http.HTTPFlow) -> None:
        notes = []
        try:
            notes = self._rewrite_card(flow)
        except Exception:
            log.exception("a2a-capture: could not rewrite a card; it is forwarded as it came")
        self._record(flow, notes)

    def error(self, flow: http.HTTPFlow) -> None:
        self._record(flow, [])

    def done(self) -> None:
        if self.sink is not None:
            log.info("a2a-capture: wrote %d exchanges to %s", self.sink.count, self.sink.path)
            self.sink.close()

    def _rewrite_card(self, flow: http.HTTPFlow) -> list[str]:
        mode = flow.client_conn.proxy_mode
        if not ctx.options.a2a_rewrite_cards or type(mode).__name__ != "ReverseMode":
            return []
        if not flow.request.path.split("?")[0].endswith("/.well-known/agent-card.json") or not flow.response.content:
            return []
        upstream = f"{mode.scheme}://{mode.address[0]}:{mode.address[1]}"
        host, port = flow.client_conn.sockname[:2]  # the listener the client connected to
        routes = [(upstream, f"{flow.request.scheme}://{host}:{port}"), *parse_routes(ctx.options.a2a_routes)]
        body, changes = rewrite_card_routes(flow.response.content, routes)
        if changes:
            flow.response.content = body
        return [f"a2a-capture rewrote the card's interface {old} to {new} so later calls pass the recorder"
                for old, new in changes]

    def _record(self, flow: http.HTTPFlow, notes: list[str]) -> None:
        if self.sink is None or "a2a_written" in flow.metadata:
            return
        try:
            number, webhook = flow.metadata.get("a2a_number") or self._late_number()
            exchange = flows.exchange_from_flow(flow, number, webhook=webhook, stream=flow.metadata.get("a2a_stream"),
                                                redactor=self.redactor, notes=notes)
            self.sink.write(exchange)
            flow.metadata["a2a_written"] = True
        except Exception:
            log.exception("a2a-capture: could not record an exchange; the traffic was not affected")

    def _late_number(self) -> tuple[int, bool]:
        """A flow that failed before its request was complete still gets a number."""
        self.numbers["exchange"] += 1
        return self.numbers["exchange"], False


addons = [A2ARecorder()]
