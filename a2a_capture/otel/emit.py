"""Span plans made into the OpenTelemetry SDK's spans, with the capture's times.

Each capture file gets a root span (its summary as attributes) that its exchanges' spans are
children of, except an exchange whose request carried a W3C `traceparent`: its span is a child of
the client's own span that made the call, so it shows in the application's trace. A webhook
delivery's span links to the spans of the task it reported on.
"""

from __future__ import annotations

from a2a_capture import __version__
from a2a_capture.otel import conventions as names
from a2a_capture.otel.shape import SpanPlan

#: spans a task keeps for the links of its webhooks, and tasks remembered at most
_LINKS_PER_TASK = 16
_TASKS = 4096


class Emitter:
    """Makes spans through one tracer provider, which hands each ended span to ``processor``."""

    def __init__(self, processor, service_name: str = names.SERVICE_NAME) -> None:
        from opentelemetry.sdk.resources import Resource
        from opentelemetry.sdk.trace import SpanLimits, TracerProvider
        from opentelemetry.trace import SpanKind
        from opentelemetry.trace.propagation.tracecontext import TraceContextTextMapPropagator

        limits = SpanLimits(max_events=4096, max_attributes=128, max_links=_LINKS_PER_TASK)
        self.provider = TracerProvider(resource=Resource.create({"service.name": service_name}), span_limits=limits)
        self.provider.add_span_processor(processor)
        self.tracer = self.provider.get_tracer(names.SCOPE, __version__)
        self._kinds = {"client": SpanKind.CLIENT, "server": SpanKind.SERVER, "internal": SpanKind.INTERNAL}
        self._propagator = TraceContextTextMapPropagator()
        self._task_spans: dict[str, list] = {}
        self.spans = 0

    def open_root(self, start_ns: int, attributes: dict):
        """The root span of a capture file (or a recording), started; end it with ``close_root``."""
        return self.tracer.start_span(names.SESSION_SPAN, kind=self._kinds["internal"], start_time=start_ns,
                                      attributes=attributes)

    def close_root(self, root, end_ns: int, attributes: dict) -> None:
        root.set_attributes(attributes)
        root.end(end_time=end_ns)
        self.spans += 1

    def emit(self, plan: SpanPlan, root) -> None:
        """One exchange's span, under ``root`` or the client's span its traceparent names."""
        from opentelemetry import trace
        from opentelemetry.trace import Link, Status, StatusCode

        parent = self._client_context(plan.traceparent) if plan.traceparent else None
        if parent is None:
            parent = trace.set_span_in_context(root) if root is not None else None
        links = []
        if plan.webhook:
            for task in plan.task_ids:
                links += [Link(context) for context in self._task_spans.get(task, ())]
        span = self.tracer.start_span(plan.name, context=parent, kind=self._kinds[plan.kind],
                                      attributes=plan.attributes, links=links[:_LINKS_PER_TASK],
                                      start_time=plan.start_ns)
        for event in plan.events:
            span.add_event(event.name, event.attributes, timestamp=event.time_ns)
        if plan.error is not None:
            span.set_status(Status(StatusCode.ERROR, plan.error))
        span.end(end_time=plan.end_ns)
        self.spans += 1
        if not plan.webhook:
            self._remember(plan.task_ids, span.get_span_context())

    def _client_context(self, traceparent: str):
        """The client's span as a parent, from its W3C traceparent; None when it is not a valid one."""
        from opentelemetry import trace

        context = self._propagator.extract({"traceparent": traceparent})
        return context if trace.get_current_span(context).get_span_context().is_valid else None

    def _remember(self, tasks: list[str], context) -> None:
        for task in tasks:
            spans = self._task_spans.get(task)
            if spans is None:
                if len(self._task_spans) >= _TASKS:
                    self._task_spans.pop(next(iter(self._task_spans)))
                spans = self._task_spans[task] = []
            if len(spans) < _LINKS_PER_TASK:
                spans.append(context)

    def shutdown(self) -> None:
        self.provider.shutdown()
