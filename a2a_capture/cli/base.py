"""The command group and what its commands share: one-line errors, verdicts."""

from __future__ import annotations

import contextlib
import os
import sys

import click

from a2a_capture import __version__
from a2a_capture.errors import A2ACaptureError, one_line
from a2a_capture.terminal import shown

#: exit status for usage errors and unreadable captures
USAGE_ERROR = 2


class OneLineUsageError(click.ClickException):
    """A usage mistake as one line, like every other error: click's own shows three."""

    exit_code = USAGE_ERROR

    def __init__(self, error: click.UsageError) -> None:
        command = error.ctx.command_path if error.ctx else "a2a-capture"
        super().__init__(f"{error.format_message().rstrip('.')} (see {command} --help)")

    def show(self, file=None) -> None:
        click.echo(f"a2a-capture: error: {shown(self.format_message())}", err=True, file=file)


def _one_line(error: click.UsageError) -> click.ClickException:
    return error if isinstance(error, click.exceptions.NoArgsIsHelpError) else OneLineUsageError(error)


class _Group(click.Group):
    """Turns the tool's own errors and usage mistakes into one line and exit 2; no traceback
    reaches a user."""

    def make_context(self, info_name, args, parent=None, **extra) -> click.Context:
        try:
            return super().make_context(info_name, args, parent, **extra)
        except click.UsageError as error:
            raise _one_line(error) from None

    def invoke(self, ctx: click.Context):
        for stream in (sys.stdout, sys.stderr):  # bytes of a capture that were not UTF-8 show escaped
            with contextlib.suppress(AttributeError, ValueError):
                stream.reconfigure(errors="backslashreplace")
        try:
            return super().invoke(ctx)
        except click.UsageError as error:
            raise _one_line(error) from None
        except A2ACaptureError as error:
            show_error(str(error))
            sys.exit(USAGE_ERROR)
        except (click.exceptions.Exit, click.ClickException, click.Abort, SystemExit):
            raise
        except BrokenPipeError:
            sys.exit(0)
        except Exception as error:  # a bug: say so plainly, keep the traceback for -v
            if os.environ.get("A2A_CAPTURE_DEBUG"):
                raise
            click.echo(
                f"a2a-capture: internal error: {type(error).__name__}: {shown(one_line(error))} "
                "(set A2A_CAPTURE_DEBUG=1 to see the traceback, and please report it)",
                err=True,
            )
            sys.exit(USAGE_ERROR)


@click.group("a2a-capture", cls=_Group, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="a2a-capture")
def main() -> None:
    """Record, read and analyze A2A traffic in .http capture files."""


def show_error(message: str) -> None:
    """One of the tool's errors, as one line on stderr (what it quotes of a capture with its controls escaped)."""
    click.echo(f"a2a-capture: error: {shown(message)}", err=True)


def show_warning(message: str) -> None:
    """A word the user must not miss that is not an error (the exit status stays), as one line on stderr."""
    click.echo(f"a2a-capture: warning: {shown(message)}", err=True)


def warn_if_empty(paths, exchanges: int, then: str) -> bool:
    """Say so in one line when ``paths`` held no exchange (every command does); True when it did."""
    if exchanges:
        return False
    from a2a_capture.errors import no_exchange

    show_warning(no_exchange(paths, then))
    return True


def verdict(verdict) -> None:
    """diff's and check's lines (a change and its indented details), what they quote with its controls escaped."""
    for line in verdict.lines:
        click.echo("\n".join(map(shown, line.split("\n"))))
    for warning in verdict.warnings:
        show_warning(warning)
    sys.exit(0 if verdict.ok else 1)


def capture_files(paths) -> list[str]:
    from a2a_capture.sources import capture_files

    return capture_files(paths)
