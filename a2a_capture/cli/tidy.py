"""`a2a-capture tidy`: a raw recording made into a capture for documentation."""

from __future__ import annotations

import click

from a2a_capture.cli.base import main, warn_if_empty
from a2a_capture.cli.options import redact_option
from a2a_capture.cli.types import Destination, destination_name


@main.command("tidy")
@click.argument("files", nargs=-1, required=True, type=click.Path(dir_okay=False))
@click.option("-o", "--output", required=True, type=Destination(), help="The capture to write; - for standard output.")
@click.option("--names/--no-names", default=False,
              help="Replace ids by short stable names: task-1, context-1, message-1.")
@click.option("--repeats/--no-repeats", default=False,
              help="Keep every call of a run of alike ones (default: its first and last, and a note).")
@redact_option()
def tidy_command(files, output, names, repeats, redact):
    """Turn recorded FILES (one session) into a capture in the A2A 101 kit's style.

    Exchanges renumbered, titles that say what each call was for, JSON bodies
    pretty-printed, only the headers that matter, SSE frames one per `data:` line, a run of
    alike calls (one operation on one task) cut to its first and last with a note, and a
    `# ` note on each exchange where the analyzer found something.
    """
    from a2a_capture import tidy
    from a2a_capture.report.walkthrough import refuse_repeats

    refuse_repeats(list(files))
    capture = tidy.write(list(files), output, names=names, show_secrets=not redact,
                         repeats=repeats)
    if not warn_if_empty(files, len(capture.exchanges), f"wrote {destination_name(output)} of none"):
        click.echo(f"wrote {len(capture.exchanges)} exchanges to {destination_name(output)}", err=True)
