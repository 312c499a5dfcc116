"""Where spans go: a collector over OTLP/HTTP, or a file of OTLP JSON; and the queue in between.

Both are the OpenTelemetry SDK's own parts (its OTLP/HTTP exporter, its OTLP protobuf encoder),
never an encoder of this tool's. The queue is bounded: a live recording never waits for a slow
collector, it counts the spans it had to drop and says so at the end.
"""

from __future__ import annotations

import base64
import contextlib
import json
import logging
import os
import queue
import threading
from urllib.parse import urlsplit

from a2a_capture.errors import OtelError, WriteError

#: what a command says when the extra is not installed
MISSING = ("OpenTelemetry export needs the otel extra: pip install 'a2a-capture[otel]' "
           "(opentelemetry-sdk and opentelemetry-exporter-otlp-proto-http)")
#: the OTLP/HTTP path of traces, added to an endpoint given without a path (as OTEL_EXPORTER_OTLP_ENDPOINT is)
TRACES_PATH = "/v1/traces"


def require() -> None:
    """Fail with one line when the SDK or the exporter is missing."""
    try:
        import opentelemetry.exporter.otlp.proto.http.trace_exporter
        import opentelemetry.sdk.trace  # noqa: F401
    except ImportError:
        raise OtelError(MISSING) from None


def traces_url(endpoint: str) -> str:
    """The URL spans are posted to: ``endpoint`` as given, or with /v1/traces when it has no path."""
    parts = urlsplit(endpoint)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise OtelError(f"--endpoint {endpoint!r} should be an http:// or https:// URL of an OTLP/HTTP collector, "
                        f"such as http://127.0.0.1:4318")
    return endpoint.rstrip("/") + TRACES_PATH if parts.path in ("", "/") else endpoint


def otlp_http(endpoint: str, timeout: float = 10.0):
    """The SDK's OTLP/HTTP (protobuf) exporter to ``endpoint``; its own log lines kept quiet: the
    command counts what did not go through and says so once."""
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter

    logging.getLogger("opentelemetry.exporter.otlp").setLevel(logging.CRITICAL)
    return OTLPSpanExporter(endpoint=traces_url(endpoint), timeout=timeout)


def json_file(path: str):
    """An exporter that writes each batch as one line of OTLP JSON (an ExportTraceServiceRequest, ids in
    hex as the OTLP/JSON encoding has them): what the Collector's otlpjsonfile receiver reads."""
    from opentelemetry.sdk.trace.export import SpanExporter, SpanExportResult

    class JsonLines(SpanExporter):
        def __init__(self) -> None:
            try:
                self.stream = open(path, "w", encoding="utf-8")  # noqa: SIM115  (closed by shutdown)
            except OSError as error:
                raise WriteError(path, error.strerror or str(error)) from None

        def export(self, spans) -> SpanExportResult:
            self.stream.write(json.dumps(otlp_json(spans), separators=(",", ":")) + "\n")
            self.stream.flush()
            return SpanExportResult.SUCCESS

        def shutdown(self) -> None:
            self.stream.close()

    return JsonLines()


def otlp_json(spans) -> dict:
    """Spans as the OTLP/JSON encoding writes them: the protobuf request by the SDK's encoder, in
    JSON with lowerCamelCase names and integer enums, trace and span ids in hex (not base64)."""
    from google.protobuf.json_format import MessageToDict
    from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans

    document = MessageToDict(encode_spans(spans), use_integers_for_enums=True)
    for resource in document.get("resourceSpans", []):
        for scope in resource.get("scopeSpans", []):
            for span in scope.get("spans", []):
                _hex_ids(span)
                for link in span.get("links", []):
                    _hex_ids(link)
    return document


def _hex_ids(item: dict) -> None:
    for key in ("traceId", "spanId", "parentSpanId"):
        if item.get(key):
            item[key] = base64.b64decode(item[key]).hex()


def lower_priority(niceness: int) -> None:
    """Make the calling thread ``niceness`` nicer (Linux keeps a niceness per thread): on a busy machine it
    takes the CPU the proxy and its clients leave. Where that cannot be done, nothing changes."""
    if niceness <= 0:
        return
    with contextlib.suppress(AttributeError, OSError):
        thread = threading.get_native_id()
        os.setpriority(os.PRIO_PROCESS, thread, min(19, os.getpriority(os.PRIO_PROCESS, thread) + niceness))


class QueuedExport:
    """A span processor (the SDK's interface) that hands ended spans to a thread which exports them
    in batches. ``block``: wait for room in the queue (a file, where nothing may be lost); else drop
    the span and count it (a live recording, which never waits)."""

    def __init__(self, exporter, max_queue: int = 2048, batch: int = 512, block: bool = False,
                 wait: float | None = None, niceness: int = 0) -> None:
        """``wait``: at shutdown, seconds at most to wait for what is queued to be exported (None: all of it).
        ``niceness``: how much nicer the exporting thread runs (``lower_priority``)."""
        self.exporter, self.batch, self.block, self.wait = exporter, batch, block, wait
        self.niceness = niceness
        self.max_queue = max_queue
        self._closed = False
        self.queue: queue.Queue = queue.Queue(max_queue)
        self.sent = self.failed = self.dropped = 0
        self._stop = object()
        self._thread = threading.Thread(target=self._run, name="a2a-capture otel export", daemon=True)
        self._thread.start()

    def on_start(self, span, parent_context=None) -> None:
        pass

    def _on_ending(self, span) -> None:
        pass

    def on_end(self, span) -> None:
        try:
            self.queue.put(span, block=self.block)
        except queue.Full:
            self.dropped += 1

    def _run(self) -> None:
        from opentelemetry.sdk.trace.export import SpanExportResult

        lower_priority(self.niceness)
        while True:
            item = self.queue.get()
            stopping = item is self._stop
            spans = [] if stopping else [item]
            while len(spans) < self.batch:
                try:
                    more = self.queue.get_nowait()
                except queue.Empty:
                    break
                if more is self._stop:
                    stopping = True
                    break
                spans.append(more)
            if spans:
                try:
                    result = self.exporter.export(spans)
                except Exception:  # an exporter's failure must not end the thread: counted, said at the end
                    result = None
                if result is SpanExportResult.SUCCESS:
                    self.sent += len(spans)
                else:
                    self.failed += len(spans)
            if stopping:
                return

    def shutdown(self) -> None:
        """Export what is queued, then stop (waiting at most ``wait`` seconds); what is left then is dropped."""
        if self._closed:
            return
        self._closed = True
        with contextlib.suppress(queue.Full):  # still full after the wait: the thread is told by the join
            self.queue.put(self._stop, timeout=self.wait)
        self._thread.join(self.wait)
        if self._thread.is_alive():
            self.dropped += self.queue.qsize()
        else:
            self.exporter.shutdown()

    def force_flush(self, timeout_millis: int = 30000) -> bool:
        return True
