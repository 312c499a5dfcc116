"""`a2a-capture report`: the annotated walkthrough."""

from __future__ import annotations

import click

from a2a_capture.cli.base import main
from a2a_capture.cli.sessions import session_options


@main.command("report")
@click.argument("files", nargs=-1, required=True, type=click.Path())
@session_options()
@click.option("-o", "--output", required=True, type=click.Path(dir_okay=False),
              help="report.html or report.md; the suffix chooses the format unless --format says.")
@click.option("--format", "output_format", type=click.Choice(["html", "md"]), help="html or md.")
@click.option("--templates", type=click.Path(file_okay=False, exists=True),
              help="A folder of your own templates (report.html.j2, report.md.j2, report.css) to use first.")
@click.option("--whole", is_flag=True, help="Show every exchange whole instead of cut to what matters.")
@click.option("--title", help="The report's title (default: the file names).")
def report_command(files, output, output_format, templates, whole, title, sessions):
    """Write an annotated walkthrough of capture FILES (one session, in the order given;
    with --each-file or --each-folder, independent sessions analyzed in parallel).

    Every exchange under its number and title, cut to the lines that matter with `…` for
    each cut, the analyzer's findings written onto the exchanges they concern, a summary,
    the agents from their cards, a sequence diagram and a timeline of each task's states.
    HTML is one self-contained file (no scripts, fonts or images from outside); each
    exchange has an anchor, such as report.html#ex-6.
    """
    from a2a_capture.analyze import config as settings
    from a2a_capture.batch.analysis import analyze_sessions
    from a2a_capture.batch.sessions import group, is_url
    from a2a_capture.report import render, walkthrough

    if output_format is None:
        suffix = output.rsplit(".", 1)[-1].lower() if "." in output else ""
        output_format = {"html": "html", "htm": "html", "md": "md", "markdown": "md"}.get(suffix)
        if output_format is None:
            raise click.UsageError("say --format html or md, or name the output report.html or report.md")
    grouped = group(files, sessions.pop("grouping"))
    files = [file for session in grouped for file in session]
    if any(map(is_url, files)):
        raise click.UsageError("report reads local files; export reads URLs")
    analysis = analyze_sessions(grouped, settings.load(), **sessions)
    model = walkthrough.build(files, analysis, whole=whole, title=title)
    text = render.render(model, output_format, templates)
    with open(output, "w", encoding="utf-8") as stream:
        stream.write(text)
    click.echo(f"wrote {output}: {len(model.exchanges)} exchanges, {len(model.findings)} findings", err=True)
