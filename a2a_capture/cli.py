"""The `a2a-capture` command: a thin layer over the library."""

from __future__ import annotations

import json
import os
import sys

import click

from a2a_capture import __version__, show
from a2a_capture.capture import capture_bytes, read_capture
from a2a_capture.errors import A2ACaptureError

#: exit status for usage errors and unreadable captures
USAGE_ERROR = 2


class _Group(click.Group):
    """Turns the tool's own errors into one line and exit 2; no traceback reaches a user."""

    def invoke(self, ctx: click.Context):
        try:
            return super().invoke(ctx)
        except A2ACaptureError as error:
            click.echo(f"a2a-capture: error: {error}", err=True)
            sys.exit(USAGE_ERROR)
        except (click.exceptions.Exit, click.ClickException, click.Abort, SystemExit):
            raise
        except BrokenPipeError:
            sys.exit(0)
        except Exception as error:  # a bug: say so plainly, keep the traceback for -v
            if os.environ.get("A2A_CAPTURE_DEBUG"):
                raise
            click.echo(
                f"a2a-capture: internal error: {type(error).__name__}: {error} "
                "(set A2A_CAPTURE_DEBUG=1 to see the traceback, and please report it)",
                err=True,
            )
            sys.exit(USAGE_ERROR)


@click.group(cls=_Group, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="a2a-capture")
def main() -> None:
    """Record, read and analyze A2A traffic in .http capture files."""


@main.command("show")
@click.argument("files", nargs=-1, required=True, type=click.Path(dir_okay=False))
@click.option(
    "--format",
    "output_format",
    type=click.Choice(["table", "json", "http"]),
    default="table",
    show_default=True,
    help="table: one line per exchange; json: a list of objects; http: the capture written back out.",
)
def show_command(files: tuple[str, ...], output_format: str) -> None:
    """List the exchanges of capture FILES: number, title, method, target, status, SSE events, body sizes."""
    if output_format == "http":
        out = click.get_binary_stream("stdout")
        for path in files:
            out.write(capture_bytes(read_capture(path)))
        return
    tables = [(path, show.rows(path)) for path in files]
    if output_format == "json":
        rows = [row for _, table in tables for row in table]
        click.echo(json.dumps(show.json_rows(rows), indent=2, ensure_ascii=False))
        return
    for index, (path, table) in enumerate(tables):
        if len(files) > 1:
            click.echo(("\n" if index else "") + f"{path}")
        click.echo(show.text_table(table))


if __name__ == "__main__":
    main()
