"""`a2a-capture view`: a local page over one or more captures."""

from __future__ import annotations

import os
import webbrowser

import click

from a2a_capture.cli.base import main, show_error, warn_if_empty
from a2a_capture.cli.options import redact_option
from a2a_capture.cli.types import HostPort, Named


@main.command("view")
@click.argument("files", nargs=-1, required=True, type=click.Path(exists=True, dir_okay=False))
@click.option("--listen", type=Named(HostPort(free_port=True)), default="127.0.0.1:8765", show_default=True,
              metavar="HOST:PORT", help="Where to serve the page: a loopback address (port 0: any free port).")
@click.option("--open/--no-open", "open_browser", default=False, show_default=True,
              help="Open the page in the default browser.")
@redact_option()
def view_command(files, listen, open_browser, redact) -> None:
    """Serve a local page over capture FILES (.http, .har, .mitm): the exchange list with each
    finding's badge, filters (agent, operation, task or context id, rule, outcome) and search over
    titles and bodies, the detail of an exchange as the report shows it, and the report's sequence
    diagram and task timelines of the filtered exchanges. Keys: j/k move, Enter opens, / searches,
    Esc closes. The address printed carries a random token: the page answers no one without it.

    \b
      a2a-capture view captures/04-polling.http
    """
    from a2a_capture.analyze import config as settings
    from a2a_capture.view.server import View

    name, listen = listen
    if name is not None:
        raise click.UsageError(f"--listen takes HOST:PORT here (one page for all FILES), not {name}=…")
    view = View([os.fspath(f) for f in files], listen.host, listen.port, redact=redact, config=settings.load())
    view.bind()
    view.read_files(on_error=show_error, on_empty=lambda: warn_if_empty(files, 0, "the page lists none"))
    click.echo(f"a2a-capture view: open {view.url} (stop with Ctrl-C)", err=True)
    if open_browser:
        webbrowser.open(view.url)
    view.serve()
