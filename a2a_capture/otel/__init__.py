"""Captures as OpenTelemetry traces: each exchange a span, each finding a span event (docs/otel.md).

``shape`` reads exchanges and findings into plain span plans (no OpenTelemetry import); ``emit``
turns the plans into the SDK's spans; ``sinks`` sends them over OTLP/HTTP or writes OTLP JSON;
``live`` does the same for a capture that is being recorded.
"""
