"""`a2a-capture analyze`: findings for people and for CI."""

from __future__ import annotations

import sys

import click

from a2a_capture.cli.base import USAGE_ERROR, main, show_error, warn_if_empty
from a2a_capture.cli.options import redact_option
from a2a_capture.cli.sessions import session_options
from a2a_capture.cli.types import FAIL_ON, Destination, Format
from a2a_capture.errors import Output, require_exchanges


@main.command("analyze")
@click.argument("files", nargs=-1, required=True, type=click.Path())
@session_options()
@click.option("--format", "output_format", type=Format("text", "json", "sarif", "junit"), default="text",
              show_default=True, help="text: one line per finding and a summary; json, sarif (2.1.0), junit: for CI.")
@click.option("--fail-on", type=FAIL_ON, default="warning",
              show_default=True, help="Exit 1 when a finding is at least this severe.")
@click.option("--select", multiple=True, metavar="RULE", help="Run only these rules (repeatable).")
@click.option("--ignore", multiple=True, metavar="RULE", help="Skip these rules (repeatable).")
@click.option("-o", "--output", type=Destination(writable=True),
              help="Write the output to a file instead of standard output.")
@click.option("--allow-empty/--no-allow-empty", default=False,
              help="Pass captures with no exchange (by default an error, exit 2, unless --fail-on never).")
@redact_option(help="Mask the secrets the redaction policy finds in what findings quote (a card's URL, a "
                    "header); --no-redact shows them as the capture holds them.")
def analyze_command(files, output_format, fail_on, select, ignore, output, allow_empty, sessions, redact):
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
    from a2a_capture.analyze.findings import Severity
    from a2a_capture.batch.analysis import analyze_many
    from a2a_capture.report import machine

    configuration = settings.load().merged(select, ignore)
    allow_empty = allow_empty or fail_on == "never"
    rules = [rule.id for rule in configuration.active("")]
    unreadable = 0
    with Output(output) as out:  # findings written as they are found: memory stays flat
        writer = machine.writer_for(output_format, out, fail_on, rules, streamed=True)
        on_finding, on_call = writer.finding, writer.call if output_format == "json" else None
        if redact:
            from a2a_capture.redact.mask import Masker

            masker = Masker.for_files(list(files))
            on_finding = _masked(masker.finding, writer.finding)
            on_call = on_call and _masked(masker.call, on_call)

        def failed(message: str) -> None:  # one session of many: the others are still analyzed
            nonlocal unreadable
            show_error(message)
            unreadable += 1

        try:
            analysis = analyze_many(files, configuration, on_finding=on_finding, on_failure=failed,
                                    on_call=on_call, **sessions)
        finally:  # what was found before a capture that cannot be read is written before its error
            writer.flush()
        if not unreadable:
            require_exchanges(analysis, files, allow_empty)
            warn_if_empty(files, analysis.summary.exchanges, "nothing was checked")  # --allow-empty, --fail-on never
        writer.end(analysis)
    if output and output_format != "text":
        click.echo(machine.summary_lines(analysis)[-1], err=True)
    # a finding at or above --fail-on, from the summary's counts (each finding counted there as it was written)
    failing = any(analysis.summary.findings_by_severity.get(severity.value)
                  for severity in Severity if machine.at_or_above_severity(severity, fail_on))
    sys.exit(USAGE_ERROR if unreadable else 1 if failing else 0)


def _masked(mask, write):
    """``write`` of what ``mask`` makes of each item."""
    return lambda item: write(mask(item))
