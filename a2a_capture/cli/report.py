"""`a2a-capture report`: the annotated walkthrough."""

from __future__ import annotations

import click

from a2a_capture.cli.base import main, warn_if_empty
from a2a_capture.cli.options import redact_option
from a2a_capture.cli.sessions import session_options
from a2a_capture.cli.types import Destination, Format, destination_name

_SUFFIXES = {"html": "html", "htm": "html", "md": "markdown", "markdown": "markdown"}


@main.command("report")
@click.argument("files", nargs=-1, required=True, type=click.Path())
@session_options()
@click.option("-o", "--output", required=True, type=Destination(),
              help="report.html or report.md (- for standard output, with --format); the suffix chooses "
                   "the format unless --format says.")
@click.option("--format", "output_format", type=Format("html", "markdown"), help="html or markdown.")
@click.option("--summary", is_flag=True,
              help="Markdown: only the verdict and the findings by rule, under 64 KB, for a pull-request "
                   "comment or a CI step summary.")
@click.option("--link-base", metavar="URL",
              help="--summary: link each exchange it names to the full report at URL (its anchors); "
                   "without it the summary names them in plain text.")
@click.option("--listings", is_flag=True,
              help="Markdown: each exchange as a documentation listing block (title, source, lang, note, body).")
@click.option("--baseline", "baseline_path", type=click.Path(dir_okay=False, exists=True),
              help="A baseline from `check --update-baseline`: mark the findings it has not accepted, first.")
@click.option("--only-flagged/--no-only-flagged", default=False, help="List only the exchanges with findings.")
@redact_option()
@click.option("--templates", type=click.Path(file_okay=False, exists=True),
              help="A folder of your own templates to use first, named as the shipped ones (report.html.j2, "
                   "report.css, report.md.j2, report.summary.md.j2, report.listings.md.j2, ...).")
@click.option("--whole/--no-whole", default=False, help="Show every exchange whole instead of cut to what matters.")
@click.option("--title", help="The report's title (default: the file names).")
def report_command(files, output, output_format, summary, link_base, listings, baseline_path, only_flagged, redact,
                   templates, whole, title, sessions):
    """Write an annotated walkthrough of capture FILES (one session, in the order given;
    with --each-file or --each-folder, independent sessions). The report is written as the
    captures are read (twice: once for the verdict and figures, once for the exchanges), in
    this process; --jobs and --engine do not apply.

    The verdict first (what went wrong and what it cost), then the findings by rule, the
    agents from their cards, a sequence diagram, a timeline of each task's states, and every
    exchange under its number and title, cut to the lines that matter with `…` for each cut.
    HTML is one self-contained file (no scripts, fonts or images from outside); each
    exchange has an anchor, such as report.html#ex-6. Every secret the redaction policy
    finds is masked, in every form (--whole, --summary, --listings too), unless --no-redact.
    """
    from a2a_capture.analyze import config as settings
    from a2a_capture.batch.sessions import group, is_url
    from a2a_capture.report import render, walkthrough

    if output_format is None:
        suffix = output.rsplit(".", 1)[-1].lower() if "." in output else ""
        output_format = _SUFFIXES.get(suffix)
        if output_format is None:
            raise click.UsageError("say --format html or markdown, or name the output report.html or report.md")
    if summary and listings:
        raise click.UsageError("--summary and --listings write different files; choose one")
    if (summary or listings) and output_format != "markdown":
        raise click.UsageError(f"--{'summary' if summary else 'listings'} writes Markdown: name the output *.md")
    if link_base and not summary:
        raise click.UsageError("--link-base is for --summary: the full report links within itself")
    accepted = None
    if baseline_path:
        from a2a_capture.replay import baseline

        accepted = baseline.load(baseline_path)
    grouped = group(files, sessions.pop("grouping"))
    files = [file for session in grouped for file in session]
    if any(map(is_url, files)):
        raise click.UsageError("report reads local files; export reads URLs")
    walkthrough.refuse_repeats(files)
    model = walkthrough.build(files, config=settings.load(), whole=whole, title=title, accepted=accepted,
                              only_flagged=only_flagged, show_secrets=not redact, verbatim=listings,
                              groups=grouped)
    if summary:  # read apart from the report: links only where its address is known
        model.links = f"{link_base.split('#', 1)[0]}#" if link_base else None
    kind = "summary" if summary else "listings" if listings else {"markdown": "md"}.get(output_format, "html")
    render.write(model, kind, output, templates)
    if not warn_if_empty(files, model.summary["exchanges"], f"wrote {destination_name(output)} of none"):
        click.echo(f"wrote {model.shown} exchanges and {len(model.findings)} findings to {destination_name(output)}",
                   err=True)
