"""`a2a-capture export`: analysis results as Parquet tables for DuckDB, Spark, pandas."""

from __future__ import annotations

import click

from a2a_capture.cli.base import main, warn_if_empty
from a2a_capture.cli.options import redact_option
from a2a_capture.cli.sessions import session_options


@main.command("export")
@click.argument("paths", nargs=-1, required=True, type=click.Path())
@click.option("-o", "--output", required=True, type=click.Path(file_okay=False),
              help="The folder of tables (sessions/, exchanges/, calls/, findings/); new sessions are added.")
@session_options(default="file")
@redact_option()
def export_command(paths, output, sessions, redact):
    """Analyze captures (files, folders or URLs such as s3://bucket/day/) and append the results
    to Parquet tables in a folder, one session per file unless --each-folder or --one-session.

    A session whose contents are already in the tables is skipped, so a daily job can export
    everything again and only the new captures are added. The schema is in docs/many-sessions.md.
    Secrets in targets, titles, messages and the rest are masked unless --no-redact.
    """
    from a2a_capture.analyze import config as settings
    from a2a_capture.batch.export import export

    done = export(paths, output, settings.load(), redact=redact, **sessions)
    if done.sessions and warn_if_empty(paths, done.exchanges, f"exported {done.sessions} sessions of none to {output}"):
        return
    click.echo(f"exported {done.sessions} new sessions ({done.exchanges} exchanges, {done.findings} findings) "
               f"to {output}; {done.known} already there", err=True)
