"""`a2a-capture scan`: the secrets a capture still holds, for CI and pre-commit hooks."""

from __future__ import annotations

import sys

import click

from a2a_capture.cli.base import main, warn_if_empty
from a2a_capture.cli.options import policy_options
from a2a_capture.terminal import shown


@main.command("scan")
@click.argument("files", nargs=-1, required=True, type=click.Path(dir_okay=False, exists=True))
@policy_options
def scan_command(files):
    """Report every secret the redaction policy finds in capture, HAR or mitmproxy flow FILES:
    one line each, `FILE:LINE: exchange N: PLACE (KIND)`, never the value.

    Run it in CI before uploading captures as artifacts, or as a pre-commit hook on committed
    captures. A capture recorded with the default redaction holds none; one recorded with
    --no-redact, a HAR from a browser or a mitmproxy flow usually does (`a2a-capture convert
    IN -o OUT.http` writes a masked copy). What the policy counts as secret, and how to extend
    it, is in docs/redaction.md.

    Exit status: 0 when nothing is found, 1 when a secret is, 2 for usage errors and
    unreadable files.
    """
    from a2a_capture.scan import scan

    found, places = 0, set()
    for hit in scan(list(files)):
        click.echo(shown(hit.text()))  # a body's member names are the capture's: controls escaped
        found += 1
        places.add((hit.file, hit.exchange))
    if found:
        click.echo(f"{found} secret{'s' if found != 1 else ''} in {len(places)} exchange"
                   f"{'s' if len(places) != 1 else ''}; mask them with `a2a-capture convert IN -o OUT.http`",
                   err=True)
        sys.exit(1)
    from a2a_capture.sources import holds_exchange

    if not warn_if_empty(files, sum(map(holds_exchange, files)), "nothing to scan"):
        click.echo(f"no secrets found in {len(files)} file{'s' if len(files) != 1 else ''}", err=True)
