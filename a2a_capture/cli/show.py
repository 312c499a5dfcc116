"""`a2a-capture show`: a table of exchanges."""

from __future__ import annotations

import json
import sys

import click

from a2a_capture import show, sources
from a2a_capture.capture import capture_bytes
from a2a_capture.cli.base import main
from a2a_capture.cli.types import Format
from a2a_capture.errors import valid_utf8


@main.command("show")
@click.argument("files", nargs=-1, required=True, type=click.Path(dir_okay=False))
@click.option(
    "--format",
    "output_format",
    type=Format("text", "json", "http"),
    default="text",
    show_default=True,
    help="text: one line per exchange; json: a list of objects; http: the capture written back out.",
)
def show_command(files: tuple[str, ...], output_format: str) -> None:
    """List the exchanges of capture FILES: number, title, method, target, status (a gRPC call's
    from its trailers), SSE events or gRPC messages, body sizes."""
    if output_format == "http":
        out = sys.stdout.buffer
        for path in files:
            out.write(capture_bytes(sources.capture(path)))
        return
    tables = [(path, show.rows(path)) for path in files]
    if output_format == "json":
        rows = [row for _, table in tables for row in table]
        click.echo(valid_utf8(json.dumps(show.json_rows(rows), indent=2, ensure_ascii=False)))
        return
    for index, (path, table) in enumerate(tables):
        if len(files) > 1:
            click.echo(("\n" if index else "") + f"{path}")
        click.echo(show.text_table(table))
