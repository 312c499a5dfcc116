"""`a2a-capture record`: mitmdump with the recorder addon."""

from __future__ import annotations

import sys

import click

from a2a_capture.cli.base import USAGE_ERROR, main
from a2a_capture.cli.options import redact_option
from a2a_capture.cli.types import FAIL_ON, LISTEN, URL, HostPort, Named


@main.command("record")
@click.option("--agent", "agents", multiple=True, type=Named(URL), metavar="[NAME=]URL",
              help="An agent to record in reverse mode, such as http://127.0.0.1:41241 (repeatable, each with "
                   "a --listen); NAME is yours to choose, for --listen.")
@click.option("--listen", "listens", multiple=True, type=LISTEN, metavar="[NAME=]HOST:PORT",
              help="Where clients reach an agent: the one NAME names (its --agent NAME or its host:port), "
                   "else the --agent in the same position.")
@click.option("--proxy", type=HostPort(), metavar="HOST:PORT", help="Record as a forward HTTP proxy listening here.")
@click.option("-o", "--output", required=True, type=click.Path(dir_okay=False),
              help="The capture file; exchanges are appended.")
@redact_option()
@click.option("--rewrite-cards/--no-rewrite-cards", default=True, show_default=True,
              help="Point the URLs in relayed agent cards at the recorder; unchanged cards let later calls "
                   "bypass it.")
@click.option("--upstream-trust", metavar="CA.pem", type=click.Path(dir_okay=False),
              help="Trust agents whose TLS certificate this CA (PEM) signed, such as a self-signed gRPC agent's.")
@click.option("--upstream-insecure/--no-upstream-insecure", default=False,
              help="Do not check agents' TLS certificates at all (development only).")
@click.option("--check/--no-check", default=False,
              help="With a COMMAND: analyze the capture after it and fail on findings.")
@click.option("--fail-on", type=FAIL_ON,
              help="With a COMMAND: analyze after it and fail on findings at least this severe (implies --check; "
                   "default warning).")
@click.option("--allow-empty/--no-allow-empty", default=False,
              help="With a COMMAND: let a recording with no exchange pass.")
@click.option("--live/--no-live", default=False,
              help="Analyze as you record: print each finding on stderr as soon as its exchange is written.")
@click.option("--view", "view_at", is_flag=False, flag_value="127.0.0.1:8765", default=None,
              type=HostPort(free_port=True), metavar="[HOST:PORT]",
              help="Serve the live view of the session while recording (see `a2a-capture view`): each exchange "
                   "appears as it is written, its findings as they are known; default address 127.0.0.1:8765.")
@click.option("--otel", "otel_endpoint", metavar="URL",
              help="Export each exchange's span and findings to this OTLP/HTTP collector as soon as it is written "
                   "(see `a2a-capture otel`; needs the otel extra), in the background: the traffic never waits.")
@click.argument("client_command", nargs=-1, metavar="[-- COMMAND ARGS...]", type=click.UNPROCESSED)
def record_command(agents, listens, proxy, output, redact, rewrite_cards, upstream_trust, upstream_insecure,
                   check, fail_on, allow_empty, live, view_at, otel_endpoint, client_command):
    """Record live A2A traffic through mitmdump into a capture file.

    \b
    Reverse mode, one listener per agent:
      a2a-capture record --agent http://127.0.0.1:41241 --listen 127.0.0.1:51241 -o session.http
    Forward proxy mode:
      a2a-capture record --proxy 127.0.0.1:8080 -o session.http
    Around one client run (CI): start, wait for the listeners, run COMMAND, stop, exit with
    its status; the command finds the proxy in HTTP_PROXY/HTTPS_PROXY, or the listener URLs
    in A2A_CAPTURE_LISTENERS (space-separated, in --agent order):
      a2a-capture record --agent http://127.0.0.1:41241 --listen 127.0.0.1:51241 \\
        -o session.http --check -- python -m my_client
    gRPC agents are recorded too: plaintext (h2c) as they come, and over TLS with
    --upstream-trust for an agent certificate no public CA signed.
    """
    from a2a_capture.record import runner

    pairs = runner.agent_listeners(list(agents), list(listens))
    options = dict(redact=redact, rewrite_cards=rewrite_cards, upstream_trust=upstream_trust,
                   upstream_insecure=upstream_insecure, echo=lambda line: click.echo(line, err=True),
                   warn=lambda line: click.echo(line, err=True))
    if not client_command:
        if check or fail_on or allow_empty:
            raise click.UsageError("--check, --fail-on and --allow-empty go with a command: record ... -- COMMAND")
        watchers = []
        if view_at is not None:
            watchers.append(_serve_view(output, view_at, redact))
        if otel_endpoint:
            watchers.append(_otel(output, otel_endpoint, redact))
        runner.run(output, pairs, proxy, live=(lambda text: click.echo(text, err=True)) if live else None,
                   watchers=watchers, **options)
        return
    if view_at is not None:
        raise click.UsageError("--view goes with an interactive recording (no COMMAND); open `a2a-capture view` "
                               "on the capture afterwards")
    if live:
        raise click.UsageError("--live goes with an interactive recording; with a COMMAND, use --check")
    watchers = [_otel(output, otel_endpoint, redact)] if otel_endpoint else []
    status, written = runner.run_command(list(client_command), output, pairs, proxy, watchers=watchers, **options)
    if status != 0:
        sys.exit(status if status > 0 else 128 - status)  # killed by a signal: the shell's convention
    if not written and not allow_empty:
        sys.exit(USAGE_ERROR)  # the warning said why; a CI step must not pass on nothing
    if check or fail_on:
        sys.exit(_analyze(output, fail_on or "warning", allow_empty))


def _serve_view(output: str, listen, redact: bool):
    """The live view of ``output``, served from a thread; what the recorder's loop polls."""
    from a2a_capture.analyze import config as settings
    from a2a_capture.record.runner import check_output
    from a2a_capture.view.server import View

    check_output(output)
    view = View([output], listen.host, listen.port, redact=redact, config=settings.load())
    view.bind()
    tail = view.tail()
    view.serve_in_thread()
    click.echo(f"live view: open {view.url}", err=True)
    return tail


def _otel(output: str, endpoint: str, redact: bool):
    """`record --otel`: the export that follows the growing capture; what the recorder's loop polls."""
    from a2a_capture.otel import sinks

    sinks.require()
    sinks.traces_url(endpoint)  # a wrong URL is said before recording starts
    from a2a_capture.analyze import config as settings
    from a2a_capture.otel.live import LiveExport
    from a2a_capture.record.runner import check_output

    check_output(output)
    return LiveExport(output, endpoint, lambda line: click.echo(line, err=True), settings.load(), redact=redact)


def _analyze(output: str, fail_on: str, allow_empty: bool) -> int:
    """The findings of the recorded capture, as `analyze` prints them; 1 when one reaches ``fail_on``."""
    from a2a_capture.analyze import config as settings
    from a2a_capture.analyze.engine import analyze
    from a2a_capture.errors import require_exchanges
    from a2a_capture.report import machine

    analysis = analyze([output], settings.load())
    require_exchanges(analysis, [output], allow_empty)
    click.echo(machine.text(analysis))
    return 1 if any(machine.at_or_above(f, fail_on) for f in analysis.findings) else 0
