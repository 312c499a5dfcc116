"""`a2a-capture otel`: captures as OpenTelemetry traces, to a collector or an OTLP JSON file."""

from __future__ import annotations

import click

from a2a_capture.cli.base import capture_files, main
from a2a_capture.cli.options import redact_option
from a2a_capture.errors import OtelError


@main.command("otel")
@click.argument("paths", nargs=-1, required=True, type=click.Path())
@click.option("--endpoint", metavar="URL",
              help="An OTLP/HTTP collector, such as http://127.0.0.1:4318 (/v1/traces is added to a URL without "
                   "a path) or Phoenix's http://127.0.0.1:6006/v1/traces.")
@click.option("-o", "--output", type=click.Path(dir_okay=False),
              help="Write OTLP JSON here instead (one ExportTraceServiceRequest a line).")
@click.option("--service-name", default="a2a-capture", show_default=True, help="The resource's service.name.")
@click.option("--bodies", type=click.IntRange(min=0), metavar="CHARS",
              help="Put request and response bodies in the spans, cut to CHARS characters (masked like the rest).")
@click.option("--timeout", type=click.FloatRange(min=0.1), default=10.0, show_default=True,
              help="Seconds to wait for the collector on each batch.")
@redact_option()
def otel_command(paths, endpoint, output, service_name, bodies, timeout, redact):
    """Export capture PATHS (.http files or folders of them, HAR, mitmproxy flows) as traces: one span
    per exchange with the capture's own times, each SSE frame and each finding a span event, one root
    span per file; a call whose request carried a W3C traceparent joins the client's own trace.
    Attributes follow the draft OpenTelemetry A2A conventions (docs/otel.md).
    Needs the otel extra: pip install 'a2a-capture[otel]'.
    """
    if (endpoint is None) == (output is None):
        raise click.UsageError("give one of --endpoint URL or -o FILE")
    from a2a_capture.otel import sinks

    sinks.require()
    from a2a_capture.analyze import config as settings
    from a2a_capture.otel.files import export_files

    exporter = sinks.otlp_http(endpoint, timeout) if endpoint else sinks.json_file(output)
    done = export_files(capture_files(paths), exporter, config=settings.load(), redact=redact, bodies=bodies,
                        service_name=service_name)
    where = endpoint or output
    if done.failed:
        raise OtelError(f"{done.failed} of {done.spans} spans did not reach {where} (is a collector "
                              f"listening there?)")
    click.echo(f"exported {done.spans} spans ({done.exchanges} exchanges, {done.findings} findings, "
               f"{done.files} files) to {where}", err=True)
