"""`a2a-capture show`: a table of exchanges."""

from __future__ import annotations

import os
import shutil
import sys

import click

from a2a_capture import show, sources
from a2a_capture.cli.base import main, warn_if_empty
from a2a_capture.cli.options import redact_option
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
@redact_option()
@click.option("--color", "colour", type=click.Choice(["auto", "always", "never"]), default="auto",
              show_default=True,
              help="Colour a failed call's status and outcome: auto colours on a terminal unless NO_COLOR is set.")
def show_command(files: tuple[str, ...], output_format: str, redact: bool, colour: str) -> None:
    """List the exchanges of capture FILES: number, title, method, target, status (a gRPC call's
    from its trailers), outcome (an error's name, a task's last state), time, SSE events or gRPC
    messages, body sizes. The text table fits the terminal's width (or $COLUMNS). Secrets are
    masked (in targets, titles and, with --format http, everywhere) unless --no-redact."""
    from a2a_capture.redact.mask import Masker

    def masker(path: str):
        return Masker.for_files([path]) if redact else None

    if output_format == "http":
        out = sys.stdout.buffer
        for path in files:
            for chunk in sources.capture_chunks(path, masker(path)):
                out.write(chunk)
        out.flush()
        warn_if_empty(files, sum(map(sources.holds_exchange, files)), "nothing to show")
        return
    if output_format == "json":  # written as the rows are read, a few hundred at a time
        shown = 0

        def counted():
            nonlocal shown
            for path in files:
                for row in show.iter_rows(path, masker(path)):
                    shown += 1
                    yield row

        rows = counted()
        pieces: list[str] = []
        for piece in show.json_rows(rows):
            pieces.append(piece)
            if len(pieces) >= 256:
                click.echo(valid_utf8("".join(pieces)), nl=False)
                pieces.clear()
        click.echo(valid_utf8("".join(pieces)))
        warn_if_empty(files, shown, "nothing to show")
        return
    width, tinted = _width(), _coloured(colour)
    shown = 0
    for index, path in enumerate(files):
        listed = show.rows(path, masker(path))
        shown += len(listed)
        table = show.text_table(listed, width, tinted)  # one file at a time: columns line up
        if len(files) > 1:
            click.echo(("\n" if index else "") + f"{path}")
        click.echo(table, color=tinted)
    warn_if_empty(files, shown, "nothing to show")


def _width() -> int | None:
    """The width to fit: $COLUMNS, else a terminal's; none for a pipe or a file (lines as long as they are)."""
    columns = os.environ.get("COLUMNS", "")
    if columns.isdigit() and int(columns) > 0:
        return int(columns)
    if sys.stdout.isatty():
        return shutil.get_terminal_size().columns
    return None


def _coloured(choice: str) -> bool:
    """Colour on a terminal, unless NO_COLOR says otherwise (https://no-color.org: any value but empty)."""
    if choice != "auto":
        return choice == "always"
    return sys.stdout.isatty() and not os.environ.get("NO_COLOR")
