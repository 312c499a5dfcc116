"""`a2a-capture rules`: the rule table."""

from __future__ import annotations

import click

from a2a_capture.cli.base import main
from a2a_capture.cli.types import Format


@main.command("rules")
@click.option("--format", "output_format", type=Format("text", "markdown"), default="text",
              show_default=True,
              help="text: id, severity and title, one rule a line; markdown: the full docs/rules.md.")
def rules_command(output_format: str) -> None:
    """List the analyzer's rules."""
    from a2a_capture.analyze import docs

    if output_format == "markdown":
        click.echo(docs.rules_markdown(), nl=False)
    else:
        click.echo(docs.rules_table())
