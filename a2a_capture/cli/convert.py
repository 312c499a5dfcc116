"""`a2a-capture convert`: .http, HAR and mitmproxy flows."""

from __future__ import annotations

import click

from a2a_capture.cli.base import main, warn_if_empty
from a2a_capture.cli.options import redact_option
from a2a_capture.cli.types import CONVERT_ALIASES, Aliased, Destination, destination_name

#: the formats convert reads and writes, as --from/--to name them
KINDS = ("http", "har", "mitm")


@main.command("convert")
@click.argument("source", type=click.Path(dir_okay=False))
@click.option("-o", "--output", required=True, type=Destination(), help="The file to write; - for standard output.")
@click.option("--from", "source_kind", type=Aliased(KINDS, CONVERT_ALIASES),
              help="The input's format: http, har, or mitm (also called flow) for a mitmproxy flow file "
                   "(default: from its suffix: .http, .har, .mitm/.flow).")
@click.option("--to", "target_kind", type=Aliased(KINDS, CONVERT_ALIASES),
              help="The output's format, named as --from's (default: from its suffix).")
@redact_option()
def convert_command(source, output, source_kind, target_kind, redact):
    """Convert between captures (.http), HAR 1.2 files and mitmproxy flow files.

    HAR and mitmproxy flows keep no arrival time per SSE frame; streams converted from
    them have none, and a note says so. HAR written by a2a-capture keeps them in `_a2a`
    fields, so it converts back without loss. Every secret the redaction policy finds
    (credentials, cookies, keys, push tokens; docs/redaction.md) is masked, whatever the input,
    unless --no-redact.
    """
    from a2a_capture.convert import convert

    count = convert(source, output, source_kind, target_kind, redact=redact)
    if not warn_if_empty([source], count, f"wrote {destination_name(output)} of none"):
        click.echo(f"wrote {count} exchanges to {destination_name(output)}", err=True)
