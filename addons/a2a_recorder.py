"""Record A2A traffic into an a2a-capture `.http` file.

    mitmdump -s addons/a2a_recorder.py --set a2a_capture=session.http

Every exchange is written when it completes, numbered in the order its request arrived
(after the last number already in the file, when appending). Bodies pass to their peer as
they arrive while a copy of each chunk is kept (in a temporary file once it is large: a body
of any size is kept whole, or up to `--set a2a_body_limit=SIZE` with a note of what was left
out), so an event stream reaches the client live and a request or response cut short is kept
with the bytes that came, and reaches the client cut too. A card is held back whatever its
size, to be rewritten. A second recorder on the same file is refused; a capture that cannot be
written (a full disk) stops the recording with one line, and the traffic goes on. Secrets are redacted
unless `--set a2a_redact=false`. In reverse mode every relayed agent card, wherever it is
served, has its interface URLs pointed at the recorder (`--set a2a_rewrite_cards=false`
turns that off), and an origin no listener fronts is noted and warned about. When mitmproxy
stops, exchanges still in flight are written with what arrived. An agent that closes its
connection or resets its HTTP/2 stream without answering has the client's connection closed
or stream reset too (as the client would have seen talking to it directly), not answered with
a 502 of mitmproxy's in its name. The addon never breaks the traffic it records: its own
failures are logged.
"""

from __future__ import annotations

import asyncio
import copy
import logging
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor

from mitmproxy import ctx, exceptions, http, tls
from mitmproxy.connection import ConnectionState
from mitmproxy.net import encoding
from mitmproxy.proxy.mode_specs import ReverseMode

from a2a_capture import flow_exchange
from a2a_capture.capture.grpc import is_grpc_type
from a2a_capture.errors import A2ACaptureError
from a2a_capture.record import bodies, flows, relay
from a2a_capture.record import notes as recorder_notes
from a2a_capture.record.h2c import H2CPriorKnowledge
from a2a_capture.record.redact import Redactor
from a2a_capture.record.rewrite import parse_routes, relay_card
from a2a_capture.record.sink import CaptureInUse, CaptureSink, RecordingStopped
from a2a_capture.record.unrecorded import UnrecordedWarnings
from a2a_capture.redact import Policy

log = logging.getLogger("a2a_capture.recorder")


class A2ARecorder:
    def __init__(self) -> None:
        self.sink: CaptureSink | None = None
        self.redactor: Redactor | None = None
        self.numbers = {"exchange": 0, "webhook": 0}
        self.push_urls: set[str] = set()
        self.routes: list[tuple[str, str]] = []
        #: flows not written yet, with the body copies kept beside them (not in flow.metadata,
        #: which mitmproxy saves with the flow and can only hold plain data)
        self.in_flight: dict[str, flows.OpenFlow] = {}
        self.warned: set[str] = set()
        self.body_limit: int | None = None
        #: writes exchanges with a body too large to hold (redacted and copied in pieces) off the event loop
        self.writer = ThreadPoolExecutor(max_workers=1, thread_name_prefix="a2a-capture-writer")

    def load(self, loader) -> None:
        loader.add_option("a2a_capture", str, "", "Capture file to append recorded A2A exchanges to.")
        loader.add_option("a2a_redact", bool, True, "Redact credentials, cookies, API keys and push tokens.")
        loader.add_option("a2a_redact_key", str, "", "Key for the redaction hashes (default: random per run).")
        loader.add_option("a2a_redact_policy", str, "",
                          "What the redaction policy adds to its defaults, as `a2a-capture record` passes it "
                          "(default: pyproject.toml's [tool.a2a-capture.redact] where mitmdump runs).")
        loader.add_option("a2a_rewrite_cards", bool, True,
                          "In reverse mode, point relayed agent cards' interface URLs at the recorder.")
        loader.add_option("a2a_fsync", bool, False, "fsync the capture after every exchange.")
        loader.add_option("a2a_body_limit", str, "",
                          "Keep at most this much of each body (bytes, or 512k, 10m, 1g), noting what was left "
                          "out (default: every byte).")
        loader.add_option("a2a_count_file", str, "",
                          "Where to write, at stop, how many exchanges this recording wrote (for `a2a-capture "
                          "record`).")
        loader.add_option("a2a_routes", Sequence[str], [],
                          "Every recorded upstream and its listener (UPSTREAM=http://HOST:PORT), so a card "
                          "that names another recorded agent's server is pointed at that agent's listener.")

    def configure(self, updated) -> None:
        if "a2a_body_limit" in updated:
            try:
                self.body_limit = bodies.size_from_option(ctx.options.a2a_body_limit)
            except ValueError as error:
                raise exceptions.OptionsError(str(error)) from None
        if "a2a_routes" in updated:
            try:
                self.routes = parse_routes(ctx.options.a2a_routes)
            except ValueError as error:
                raise exceptions.OptionsError(str(error)) from None
        if "a2a_capture" in updated and ctx.options.a2a_capture:
            # open the new output first: if it cannot be opened, mitmproxy keeps the old value
            # and recording goes on into the old file
            try:
                sink = CaptureSink(ctx.options.a2a_capture, fsync=ctx.options.a2a_fsync)
            except CaptureInUse as error:
                if self.sink is None:  # at startup: one line, and mitmdump exits (it prints a traceback for an
                    log.error("a2a-capture: error: %s", error)  # OptionsError raised while it starts)
                    return
                raise exceptions.OptionsError(f"a2a-capture cannot record to {ctx.options.a2a_capture}: {error}") \
                    from None
            except (OSError, A2ACaptureError) as error:
                raise exceptions.OptionsError(f"a2a-capture cannot record to {ctx.options.a2a_capture}: {error}") \
                    from None
            old, self.sink = self.sink, sink
            self.numbers = dict(sink.numbers)
            if old is not None:
                self.writer.submit(old.close)  # after what is still being written to it
            log.info("a2a-capture: recording to %s", ctx.options.a2a_capture)
        if updated & {"a2a_redact", "a2a_redact_key", "a2a_redact_policy"}:
            key = ctx.options.a2a_redact_key.encode() or None
            try:
                rules = Policy.from_json(ctx.options.a2a_redact_policy) if ctx.options.a2a_redact_policy else None
            except A2ACaptureError as error:
                raise exceptions.OptionsError(str(error)) from None
            self.redactor = Redactor(key, rules) if ctx.options.a2a_redact else None

    def tls_start_client(self, data: tls.TlsData) -> None:
        """Choose HTTP/2 for a client that offers it, as servers do: with the upstream connected
        lazily mitmproxy picks by the client's ALPN order, and clients such as httpx list
        http/1.1 first, so an HTTP/2 client would be recorded speaking HTTP/1.1. (This runs
        before mitmproxy's own TLS setup, which takes the client's ALPN from ``conn.alpn``.)"""
        client = data.conn
        if client.alpn is None and ctx.options.http2 and b"h2" in (client.alpn_offers or ()):
            client.alpn = b"h2"

    def requestheaders(self, flow: http.HTTPFlow) -> None:
        try:
            # pass the body on as it comes, keeping a copy: a request cut short keeps what arrived
            self.in_flight[flow.id] = open_flow = flows.OpenFlow(flow, bodies.BodyCopy(self.body_limit))
            flow.request.stream = open_flow.request_copy
        except Exception:
            log.exception("a2a-capture: could not watch a request body; it is still forwarded")
            return
        try:
            if flow.request.method == "GET" and self._rewrites(flow) and relay.may_be_card(flow.request):
                open_flow.card_notes += self._card_validators(flow)
        except Exception:
            log.exception("a2a-capture: could not read a card request's validators; it is forwarded as it came")

    def _card_validators(self, flow: http.HTTPFlow) -> list[str]:
        """A conditional card request: the agent is sent only the validators of cards this recording
        rewrote (as the agent's own), so a client that cached the agent's card gets it again, rewritten,
        never a 304 that keeps the card naming the agent."""
        headers = flow.request.headers
        sent = headers.get("if-none-match")
        if sent is None and "if-modified-since" not in headers:
            return []
        passed = relay.agent_validators(sent, self._card_routes(flow)) if sent is not None else None
        notes = []
        if sent is not None and passed != sent:
            notes.append(recorder_notes.VALIDATORS_MAPPED.format(sent=sent, passed=passed or "none"))
        if passed is None:
            headers.pop("if-none-match", None)
        else:
            headers["if-none-match"] = passed
        if "if-modified-since" in headers:
            notes.append(recorder_notes.MODIFIED_SINCE_DROPPED.format(sent=headers.pop("if-modified-since")))
        return notes

    def _card_etag(self, flow: http.HTTPFlow) -> list[str]:
        """The relayed card's ETag is derived from the agent's and the rewrite (see _card_validators)."""
        etag = flow.response.headers.get("etag")
        if etag is None or "-a2a-" in etag:
            return []
        flow.response.headers["etag"] = new = relay.derived_etag(etag, self._card_routes(flow))
        return [recorder_notes.ETAG_DERIVED.format(old=etag, new=new)] if new != etag else []

    def request(self, flow: http.HTTPFlow) -> None:
        open_flow = self.in_flight.get(flow.id)
        try:
            copy = open_flow.request_copy if open_flow is not None else None
            if copy is not None and flow.request.raw_content is None and not copy.spilled and not copy.left_out:
                # the body went on as it came; the flow keeps it whole too, as other addons expect
                flow.request.raw_content = copy.body
            body = flow.request.raw_content or b""
            headers = [(k.decode("latin-1"), v.decode("latin-1")) for k, v in flow.request.headers.fields]
            url = flow.request.pretty_url if self.push_urls else ""  # built only when there is one to match
            webhook = flow_exchange.is_webhook(headers, body, self.push_urls, url)
            kind = "webhook" if webhook else "exchange"
            self.numbers[kind] += 1
            flow.metadata["a2a_number"] = (self.numbers[kind], webhook)
            self.push_urls |= flow_exchange.push_urls_in(body)
        except Exception:
            log.exception("a2a-capture: could not read a request; it is still forwarded")
        if open_flow is not None and open_flow.answered_early is not None:
            self._record(flow, open_flow.answered_early)  # the agent answered before the body had all come

    def responseheaders(self, flow: http.HTTPFlow) -> None:
        """Stream every body mitmproxy would not hold whole (a stream, a large or unframed body),
        keeping the copy: a body of any size is recorded, and a cut one reaches the client cut.
        A card is held back, whatever its size, to be rewritten."""
        try:
            content_type = flow.response.headers.get("content-type", "")
            live = content_type.startswith("text/event-stream") or is_grpc_type(content_type)
            may_be_card = not live and self._rewrites(flow) and relay.may_be_card(flow.request)
            if may_be_card:  # before the head goes on, whether or not the card turns out to change
                self.in_flight.setdefault(flow.id, flows.OpenFlow(flow)).card_notes += self._card_etag(flow)
            if not (live or relay.unsized(flow) or flow.response.stream):
                return  # mitmproxy holds it whole (under stream_large_bodies), as a card must be
            open_flow = self.in_flight.setdefault(flow.id, flows.OpenFlow(flow))
            open_flow.response_copy = body_copy = bodies.BodyCopy(self.body_limit)
            if live:
                flow.response.stream = body_copy
                return
            if may_be_card and flow.response.stream:  # a large card, framed by a length it will not keep
                relay.unframe(flow.response)

            def rewrite(body: bytes) -> bytes | None:
                return self._relay_held_card(flow, open_flow, body)

            flow.response.stream = relay.HeldBody(body_copy, rewrite if self._rewrites(flow) else None,
                                                  hold_all=may_be_card,
                                                  hold=not flow.response.stream and flow.request.method == "GET")
        except Exception:
            log.exception("a2a-capture: could not watch a response body; it is still forwarded")

    def response(self, flow: http.HTTPFlow) -> None:
        notes = []
        try:
            held = self.in_flight.get(flow.id)
            notes = list(held.card_notes) if held is not None else []
            notes += self._relay_card(flow)
        except Exception:
            log.exception("a2a-capture: could not rewrite a card; it is forwarded as it came")
        retire = flows.retire_after_error(flow)
        if retire:
            notes.append(recorder_notes.NEW_CONNECTION_AFTER_ERROR)
        open_flow = self.in_flight.get(flow.id)
        if open_flow is not None and not flow.request.timestamp_end:
            open_flow.answered_early = notes  # written when the rest of the request has come
        else:
            self._record(flow, notes)
        if retire:
            # mitmproxy reuses only an open connection: one it may not write to is closed when
            # the agent closes it, or with the client's; the client's connection stays as it is
            flow.server_conn.state &= ~ConnectionState.CAN_WRITE

    def error(self, flow: http.HTTPFlow) -> None:
        # an agent that closed its connection or reset its stream without answering: the client
        # sees the same, as it would have talking to the agent, rather than mitmproxy's 502
        passed_on = flows.passed_on(flow) if flow.killable else None
        self._record(flow, [], passed_on=passed_on)
        if passed_on is not None:
            flow.kill()

    def done(self) -> None:
        """Write what is still in flight, then close: mitmproxy reports open flows only after this."""
        if self.sink is None:
            return
        for open_flow in list(self.in_flight.values()):
            self._record(open_flow.flow, [], stopped=True)
        self.writer.shutdown(wait=True)
        self.writer = ThreadPoolExecutor(max_workers=1, thread_name_prefix="a2a-capture-writer")
        log.info("a2a-capture: wrote %d exchanges to %s", self.sink.count, self.sink.path)
        if ctx.options.a2a_count_file:
            try:
                with open(ctx.options.a2a_count_file, "w") as count:
                    count.write(f"{self.sink.count}\n")
            except OSError as error:
                log.error("a2a-capture: could not write the count to %s: %s", ctx.options.a2a_count_file, error)
        self.sink.close()
        self.sink = None
        # mitmproxy's shutdown then cancels each open connection and asyncio reports every
        # cancellation with a traceback; those flows are written already, so the reports go
        logging.getLogger("asyncio").addFilter(_drop_cancellations)

    def _rewrites(self, flow: http.HTTPFlow) -> bool:
        return bool(ctx.options.a2a_rewrite_cards) and isinstance(flow.client_conn.proxy_mode, ReverseMode)

    def _card_routes(self, flow: http.HTTPFlow) -> list[tuple[str, str]]:
        mode = flow.client_conn.proxy_mode
        upstream = f"{mode.scheme}://{mode.address[0]}:{mode.address[1]}"
        host, port = flow.client_conn.sockname[:2]  # the listener the client connected to
        listener = f"{flow.request.scheme}://[{host}]:{port}" if ":" in host else f"{flow.request.scheme}://{host}:{port}"
        return [(upstream, listener), *self.routes]

    def _relay_card(self, flow: http.HTTPFlow) -> list[str]:
        if not self._rewrites(flow) or flow.response.stream:
            return []
        body = flow.response.get_content(strict=False)  # compressed cards are decoded, and encoded back
        if not body:
            return []
        relayed = relay_card(body, self._card_routes(flow))
        if relayed is None:
            return []
        if relayed.body is None:
            return self._card_notes(flow, relayed)
        flow.response.content = relayed.body
        return self._card_etag(flow) + self._card_notes(flow, relayed)

    def _relay_held_card(self, flow: http.HTTPFlow, open_flow: flows.OpenFlow, body: bytes) -> bytes | None:
        """A held-back body that is a card, rewritten (None: send it as it came)."""
        try:
            coding = flow.response.headers.get("content-encoding", "")
            plain = _decoded(body, coding)
            relayed = relay_card(plain, self._card_routes(flow)) if plain else None
            if relayed is None:
                return None
            open_flow.card_notes += self._card_notes(flow, relayed)
            return _encoded(relayed.body, coding) if relayed.body is not None else None
        except Exception:
            log.exception("a2a-capture: could not rewrite a card; it is forwarded as it came")
            return None

    def _card_notes(self, flow: http.HTTPFlow, relayed) -> list[str]:
        notes = [recorder_notes.CARD_REWRITTEN.format(old=old, new=new) for old, new in relayed.changes]
        for origin in relayed.unfronted:
            notes.append(recorder_notes.UNRECORDED_ORIGIN.format(origin=origin))
            if origin not in self.warned:
                self.warned.add(origin)
                log.warning("a2a-capture: warning: the card at %s names %s, which this recording does not front; "
                            "calls there will not be recorded (add --agent %s --listen HOST:PORT)",
                            flow.request.path, origin, origin)
        return notes

    def _record(self, flow: http.HTTPFlow, notes: list[str], stopped: bool = False,
                passed_on: str | None = None) -> None:
        open_flow = self.in_flight.pop(flow.id, None) or flows.OpenFlow(flow)
        if self.sink is None or "a2a_written" in flow.metadata or self.sink.failed is not None:
            open_flow.close()
            return
        try:
            number, webhook = flow.metadata.get("a2a_number") or self._late_number()
            exchange = flow_exchange.exchange_from_flow(flow, number, webhook=webhook, stream=open_flow.response_copy,
                                                redactor=self.redactor, notes=notes, stopped=stopped,
                                                request_stream=open_flow.request_copy,
                                                passed_on=passed_on)
            flow.metadata["a2a_written"] = True
        except Exception:
            log.exception("a2a-capture: could not record an exchange; the traffic was not affected")
            open_flow.close()
            return
        if open_flow.spooled():
            redactor = copy.copy(self.redactor) if self.redactor is not None else None  # state of its own
            self.writer.submit(self._write, self.sink, exchange, open_flow, redactor)
        else:
            self._write(self.sink, exchange, open_flow, None)

    def _write(self, sink: CaptureSink, exchange, open_flow: flows.OpenFlow, redactor) -> None:
        try:
            if redactor is not None:
                flows.redact_spilled(exchange, open_flow.request_copy, open_flow.response_copy, redactor)
            sink.write(exchange, open_flow.spooled())
        except RecordingStopped as stopped_here:
            log.error("%s", stopped_here.line)
        except Exception:
            log.exception("a2a-capture: could not record an exchange; the traffic was not affected")
        finally:
            open_flow.close()

    def _late_number(self) -> tuple[int, bool]:
        """A flow that failed before its request was complete still gets a number."""
        self.numbers["exchange"] += 1
        return self.numbers["exchange"], False


def _decoded(body: bytes, coding: str) -> bytes | None:
    """The body without its Content-Encoding (None when it does not decode as labelled)."""
    if not coding or coding.strip().lower() == "identity":
        return body
    try:
        return encoding.decode(body, coding)
    except ValueError:
        return None


def _encoded(body: bytes, coding: str) -> bytes:
    return body if not coding or coding.strip().lower() == "identity" else encoding.encode(body, coding)


def _drop_cancellations(record: logging.LogRecord) -> bool:
    return not (record.exc_info and isinstance(record.exc_info[1], asyncio.CancelledError))


addons = [A2ARecorder(), H2CPriorKnowledge(), UnrecordedWarnings()]
