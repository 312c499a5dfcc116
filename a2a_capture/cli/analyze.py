"""`a2a-capture analyze`: findings for people and for CI."""

from __future__ import annotations

import contextlib
import sys

import click

from a2a_capture.cli.base import main
from a2a_capture.cli.sessions import session_options
from a2a_capture.cli.types import FAIL_ON, Format
from a2a_capture.errors import open_output, require_exchanges, write_text


@main.command("analyze")
@click.argument("files", nargs=-1, required=True, type=click.Path())
@session_options()
@click.option("--format", "output_format", type=Format("text", "json", "sarif", "junit"), default="text",
              show_default=True, help="text: one line per finding and a summary; json, sarif (2.1.0), junit: for CI.")
@click.option("--fail-on", type=FAIL_ON, default="warning",
              show_default=True, help="Exit 1 when a finding is at least this severe.")
@click.option("--select", multiple=True, metavar="RULE", help="Run only these rules (repeatable).")
@click.option("--ignore", multiple=True, metavar="RULE", help="Skip these rules (repeatable).")
@click.option("-o", "--output", type=click.Path(dir_okay=False, writable=True),
              help="Write the output to a file instead of standard output.")
@click.option("--allow-empty/--no-allow-empty", default=False,
              help="Pass captures with no exchange (by default an error, exit 2, unless --fail-on never).")
def analyze_command(files, output_format, fail_on, select, ignore, output, allow_empty, sessions):
    """Find wasted round trips in capture FILES (or folders of .http files), read as one session
    in the order given; with --each-file or --each-folder, as many independent sessions,
    analyzed in parallel and reported in the order given.

    Exit status: 0 when no finding reaches --fail-on, 1 when one does, 2 for usage errors,
    unreadable captures and captures with no exchange (unless --allow-empty). Rules are
    listed in docs/rules.md; silence one for one exchange with a note
    `# a2a-capture: ignore[RULE]`, or per project under [tool.a2a-capture] in pyproject.toml
    (select, ignore, per-file-ignores).
    """
    from a2a_capture.analyze import config as settings
    from a2a_capture.batch.analysis import analyze_many
    from a2a_capture.report import machine

    configuration = settings.load().merged(select, ignore)
    allow_empty = allow_empty or fail_on == "never"
    if output_format == "text" and _one_local_session(sessions, files):
        sys.exit(_stream_text(files, configuration, fail_on, output, allow_empty))
    analysis = analyze_many(files, configuration, **sessions)
    require_exchanges(analysis, files, allow_empty)
    rendered = {
        "text": lambda: machine.text(analysis),
        "json": lambda: machine.to_json(analysis),
        "sarif": lambda: machine.sarif(analysis),
        "junit": lambda: machine.junit(analysis, "error" if fail_on == "never" else fail_on,
                                       [rule.id for rule in configuration.active("")]),
    }[output_format]()
    if output:
        write_text(output, rendered + ("" if rendered.endswith("\n") else "\n"))
        if output_format != "text":
            click.echo(machine.text(analysis).splitlines()[-1], err=True)
    else:
        click.echo(rendered)
    failing = [f for f in analysis.findings if machine.at_or_above(f, fail_on)]
    sys.exit(1 if failing else 0)


def _one_local_session(sessions: dict, files) -> bool:
    from a2a_capture.batch.sessions import is_url

    return sessions["grouping"] == "all" and sessions["engine"] == "local" and not any(map(is_url, files))


def _stream_text(files, configuration, fail_on: str, output: str | None, allow_empty: bool) -> int:
    """Text findings written as they are found: memory stays flat on a long session."""
    from a2a_capture.analyze.engine import analyze
    from a2a_capture.batch.sessions import group
    from a2a_capture.report import machine

    failing = False
    with open_output(output) if output else contextlib.nullcontext(sys.stdout) as stream:
        def write(finding) -> None:
            nonlocal failing
            stream.write(machine.line(finding) + "\n")
            failing = failing or machine.at_or_above(finding, fail_on)

        analysis = analyze(group(files)[0], configuration, on_finding=write)
        if sum(analysis.summary.findings_by_rule.values()):
            stream.write("\n")
        stream.write("\n".join(machine.summary_lines(analysis)) + "\n")
    require_exchanges(analysis, files, allow_empty)
    return 1 if failing else 0
