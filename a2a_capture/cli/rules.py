"""`a2a-capture rules`: the rule table."""

from __future__ import annotations

import click

from a2a_capture.cli.base import main


@main.command("rules")
@click.option("--format", "output_format", type=click.Choice(["table", "markdown"]), default="table",
              show_default=True, help="table: id, severity and title; markdown: the full docs/rules.md.")
def rules_command(output_format: str) -> None:
    """List the analyzer's rules."""
    from a2a_capture.analyze import docs

    if output_format == "markdown":
        click.echo(docs.rules_markdown(), nl=False)
    else:
        click.echo(docs.rules_table())
