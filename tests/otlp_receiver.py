"""A real OTLP/HTTP receiver for tests: a small HTTP server on 127.0.0.1 that decodes each
ExportTraceServiceRequest with opentelemetry-proto's own classes and keeps the spans it got."""

from __future__ import annotations

import contextlib
import gzip
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)


class Received:
    """The spans a receiver got, each with its resource's attributes, in arrival order."""

    def __init__(self) -> None:
        self.spans: list = []
        self.resources: list[dict] = []
        self.requests = 0
        self.paths: list[str] = []
        self.lock = threading.Lock()
        self.arrived = threading.Condition(self.lock)

    def add(self, request: ExportTraceServiceRequest, path: str) -> None:
        with self.arrived:
            self.requests += 1
            self.paths.append(path)
            for resource_spans in request.resource_spans:
                resource = {item.key: value_of(item.value) for item in resource_spans.resource.attributes}
                for scope_spans in resource_spans.scope_spans:
                    for span in scope_spans.spans:
                        self.spans.append(span)
                        self.resources.append(resource)
            self.arrived.notify_all()

    def wait_for(self, predicate, timeout: float = 30) -> bool:
        with self.arrived:
            return self.arrived.wait_for(lambda: predicate(self.spans), timeout)


def value_of(value):
    """An AnyValue as Python: str, int, float, bool or a list of them."""
    kind = value.WhichOneof("value")
    if kind == "array_value":
        return [value_of(item) for item in value.array_value.values]
    return getattr(value, kind) if kind else None


def attributes(item) -> dict:
    """A span's, event's or link's attributes as a dict."""
    return {entry.key: value_of(entry.value) for entry in item.attributes}


@contextlib.contextmanager
def receiver(delay: float = 0.0):
    """Yields (the endpoint's base URL, Received); POST /v1/traces takes OTLP protobuf. ``delay``: seconds
    each request waits before it is answered (a collector that does not keep up)."""
    received = Received()

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
            if self.headers.get("Content-Encoding") == "gzip":
                body = gzip.decompress(body)
            if self.path != "/v1/traces" or self.headers.get("Content-Type") != "application/x-protobuf":
                self.send_response(404)
                self.end_headers()
                return
            time.sleep(delay)
            request = ExportTraceServiceRequest()
            request.ParseFromString(body)
            received.add(request, self.path)
            answer = ExportTraceServiceResponse().SerializeToString()
            self.send_response(200)
            self.send_header("Content-Type", "application/x-protobuf")
            self.send_header("Content-Length", str(len(answer)))
            self.end_headers()
            self.wfile.write(answer)

        def log_message(self, *args) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", received
    finally:
        server.shutdown()
        server.server_close()
        thread.join(10)


def main() -> None:
    """`python -m tests.otlp_receiver`: a receiver in a process of its own (bench/proxy.py --otel); prints
    its URL, then on SIGTERM how many spans it got."""
    import signal
    import sys

    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    with receiver() as (url, received):
        print(url, flush=True)
        stop.wait()
        print(len(received.spans), flush=True)
    sys.exit(0)


if __name__ == "__main__":
    main()
