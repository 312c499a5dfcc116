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


@main.command("analyze")
@click.argument("files", nargs=-1, required=True, type=click.Path())
@click.option("--format", "output_format", type=click.Choice(["text", "json", "sarif", "junit"]), default="text",
              show_default=True, help="text: one line per finding and a summary; json, sarif (2.1.0), junit: for CI.")
@click.option("--fail-on", type=click.Choice(["error", "warning", "info", "never"]), default="warning",
              show_default=True, help="Exit 1 when a finding is at least this severe.")
@click.option("--select", multiple=True, metavar="RULE", help="Run only these rules (repeatable).")
@click.option("--ignore", multiple=True, metavar="RULE", help="Skip these rules (repeatable).")
@click.option("-o", "--output", type=click.Path(dir_okay=False, writable=True),
              help="Write the output to a file instead of standard output.")
def analyze_command(files, output_format, fail_on, select, ignore, output):
    """Find wasted round trips in capture FILES (or folders of .http files), read as one session
    in the order given.

    Exit status: 0 when no finding reaches --fail-on, 1 when one does, 2 for usage errors
    and unreadable captures. Rules are listed in docs/rules.md; silence one for one
    exchange with a note `# a2a-capture: ignore[RULE]`, or per project under
    [tool.a2a-capture] in pyproject.toml (select, ignore, per-file-ignores).
    """
    from a2a_capture.analyze import config as settings
    from a2a_capture.analyze.engine import analyze
    from a2a_capture.report import machine

    configuration = settings.load().merged(select, ignore)
    analysis = analyze(_capture_files(files), configuration)
    rendered = {
        "text": lambda: machine.text(analysis),
        "json": lambda: machine.to_json(analysis),
        "sarif": lambda: machine.sarif(analysis),
        "junit": lambda: machine.junit(analysis, "error" if fail_on == "never" else fail_on,
                                       [rule.id for rule in configuration.active("")]),
    }[output_format]()
    if output:
        with open(output, "w", encoding="utf-8") as stream:
            stream.write(rendered + ("" if rendered.endswith("\n") else "\n"))
        if output_format != "text":
            click.echo(machine.text(analysis).splitlines()[-1], err=True)
    else:
        click.echo(rendered)
    failing = [f for f in analysis.findings if machine.at_or_above(f, fail_on)]
    sys.exit(1 if failing else 0)


@main.command("record")
@click.option("--agent", "agents", multiple=True, metavar="URL",
              help="An agent to record in reverse mode, such as http://127.0.0.1:41241 (repeatable, with --listen).")
@click.option("--listen", "listens", multiple=True, metavar="HOST:PORT",
              help="Where clients reach the agent of the --agent in the same position.")
@click.option("--proxy", metavar="HOST:PORT", help="Record as a forward HTTP proxy listening here.")
@click.option("-o", "--output", required=True, type=click.Path(dir_okay=False),
              help="The capture file; exchanges are appended.")
@click.option("--no-redact", is_flag=True, help="Keep credentials, cookies, API keys and push tokens (careful).")
@click.option("--no-rewrite-cards", is_flag=True,
              help="Relay agent cards unchanged (later calls may then bypass the recorder).")
def record_command(agents, listens, proxy, output, no_redact, no_rewrite_cards):
    """Record live A2A traffic through mitmdump into a capture file.

    \b
    Reverse mode, one listener per agent:
      a2a-capture record --agent http://127.0.0.1:41241 --listen 127.0.0.1:51241 -o session.http
    Forward proxy mode:
      a2a-capture record --proxy 127.0.0.1:8080 -o session.http
    """
    from a2a_capture.record import runner

    if len(agents) != len(listens):
        raise click.UsageError("give one --listen HOST:PORT for each --agent URL")
    pairs = [(runner.parse_agent(url), runner.Listener.parse(where, "--listen"))
             for url, where in zip(agents, listens, strict=True)]
    listener = runner.Listener.parse(proxy, "--proxy") if proxy else None
    runner.run(output, pairs, listener, redact=not no_redact, rewrite_cards=not no_rewrite_cards, echo=click.echo)


@main.command("convert")
@click.argument("source", type=click.Path(dir_okay=False))
@click.option("-o", "--output", required=True, type=click.Path(dir_okay=False), help="The file to write.")
@click.option("--from", "source_kind", type=click.Choice(["http", "har", "mitm"]),
              help="The input's format (default: from its suffix: .http, .har, .mitm/.flow).")
@click.option("--to", "target_kind", type=click.Choice(["http", "har", "mitm"]),
              help="The output's format (default: from its suffix).")
def convert_command(source, output, source_kind, target_kind):
    """Convert between captures (.http), HAR 1.2 files and mitmproxy flow files.

    HAR and mitmproxy flows keep no arrival time per SSE frame; streams converted from
    them have none, and a note says so. HAR written by a2a-capture keeps them in `_a2a`
    fields, so it converts back without loss.
    """
    from a2a_capture.convert import convert

    capture = convert(source, output, source_kind, target_kind)
    click.echo(f"wrote {len(capture.exchanges)} exchanges to {output}", err=True)


@main.command("report")
@click.argument("files", nargs=-1, required=True, type=click.Path())
@click.option("-o", "--output", required=True, type=click.Path(dir_okay=False),
              help="report.html or report.md; the suffix chooses the format unless --format says.")
@click.option("--format", "output_format", type=click.Choice(["html", "md"]), help="html or md.")
@click.option("--templates", type=click.Path(file_okay=False, exists=True),
              help="A folder of your own templates (report.html.j2, report.md.j2, report.css) to use first.")
@click.option("--whole", is_flag=True, help="Show every exchange whole instead of cut to what matters.")
@click.option("--title", help="The report's title (default: the file names).")
def report_command(files, output, output_format, templates, whole, title):
    """Write an annotated walkthrough of capture FILES (one session, in the order given).

    Every exchange under its number and title, cut to the lines that matter with `…` for
    each cut, the analyzer's findings written onto the exchanges they concern, a summary,
    the agents from their cards, a sequence diagram and a timeline of each task's states.
    HTML is one self-contained file (no scripts, fonts or images from outside); each
    exchange has an anchor, such as report.html#ex-6.
    """
    from a2a_capture.analyze import config as settings
    from a2a_capture.analyze.engine import analyze
    from a2a_capture.report import render, walkthrough

    if output_format is None:
        suffix = output.rsplit(".", 1)[-1].lower() if "." in output else ""
        output_format = {"html": "html", "htm": "html", "md": "md", "markdown": "md"}.get(suffix)
        if output_format is None:
            raise click.UsageError("say --format html or md, or name the output report.html or report.md")
    files = _capture_files(files)
    analysis = analyze(files, settings.load())
    model = walkthrough.build(files, analysis, whole=whole, title=title)
    text = render.render(model, output_format, templates)
    with open(output, "w", encoding="utf-8") as stream:
        stream.write(text)
    click.echo(f"wrote {output}: {len(model.exchanges)} exchanges, {len(model.findings)} findings", err=True)


def _pairs(values: tuple[str, ...], what: str) -> dict[str, str]:
    pairs = {}
    for value in values:
        name, sep, rest = value.partition("=")
        if not sep or not name:
            raise click.UsageError(f"{what} takes NAME=VALUE, not {value!r}")
        pairs[name] = rest
    return pairs


@main.command("replay")
@click.argument("file", type=click.Path(dir_okay=False))
@click.option("--target", "targets", multiple=True, metavar="NAME=URL", required=True,
              help="Where the agent NAME (its card's name, or its recorded host:port) runs now (repeatable).")
@click.option("--secret", "secrets", multiple=True, metavar="HEADER=VALUE",
              help="A credential to send where the capture has a redaction marker (or set "
                   "A2A_CAPTURE_SECRET_<HEADER>, such as A2A_CAPTURE_SECRET_AUTHORIZATION).")
@click.option("-o", "--output", type=click.Path(dir_okay=False), help="Write the new session as a capture.")
def replay_command(file, targets, secrets, output):
    """Send the client side of capture FILE again to live agents, in the original order.

    Ids the servers make up (tasks, contexts, push configs, page tokens, ETags) are learned
    from the new answers and put into later requests. Prints what changed; exit 1 if anything did.
    """
    from a2a_capture.capture import read_capture, write_capture
    from a2a_capture.replay import client, diff

    old = read_capture(file)
    new = client.replay(old, _pairs(targets, "--target"), _pairs(secrets, "--secret"), echo=click.echo)
    if output:
        write_capture(new, output)
    changes = diff.compare(old, new)
    for change in changes:
        click.echo(change.line())
    click.echo(f"replayed {len(new.exchanges)} exchanges; {len(changes)} differ from the capture")
    sys.exit(1 if changes else 0)


@main.command("serve")
@click.argument("file", type=click.Path(dir_okay=False))
@click.option("--listen", "listens", multiple=True, metavar="[NAME=]HOST:PORT",
              help="Where to serve each recorded agent (in the order the capture meets them, or by NAME).")
@click.option("--speed", type=float, default=1.0, show_default=True, help="Play streams this many times faster.")
@click.option("--no-delay", is_flag=True, help="Send stream frames at once.")
def serve_command(file, listens, speed, no_delay):
    """Serve the agent side of capture FILE as mock agents on 127.0.0.1, until Ctrl-C."""
    from a2a_capture.capture import read_capture
    from a2a_capture.replay import serve
    from a2a_capture.replay.runner import serve_forever

    agents = serve.mock_agents(read_capture(file), 0.0 if no_delay else speed)
    if not agents:
        raise click.UsageError(f"{file} has no calls to an agent to serve")
    serve_forever(agents, list(listens), echo=click.echo)


@main.command("diff")
@click.argument("old", type=click.Path(dir_okay=False))
@click.argument("new", type=click.Path(dir_okay=False))
@click.option("--ignore-key", "keys", multiple=True, metavar="KEY",
              help="Also mask this JSON member (ids, timestamps and tokens are masked already).")
def diff_command(old, new, keys):
    """Compare two sessions exchange by exchange, and their findings; exit 1 on a difference."""
    from a2a_capture.replay import gate

    _verdict(gate.compare_sessions(old, new, keys))


@main.command("check")
@click.argument("paths", nargs=-1, required=True, type=click.Path())
@click.option("--baseline", "baseline_path", required=True, type=click.Path(dir_okay=False),
              help="The accepted findings (JSON); missing means none are accepted.")
@click.option("--update-baseline", is_flag=True, help="Accept the current findings: write them to the baseline.")
@click.option("--fail-on", type=click.Choice(["error", "warning", "info"]), default="warning", show_default=True,
              help="Only findings at least this severe can fail the check.")
def check_command(paths, baseline_path, update_baseline, fail_on):
    """The CI gate: analyze PATHS (files, or folders of .http files) and fail on new findings."""
    from a2a_capture.analyze import config as settings
    from a2a_capture.replay import gate

    _verdict(gate.check(paths, baseline_path, update=update_baseline, fail_on=fail_on, config=settings.load()))


def _verdict(verdict) -> None:
    for line in verdict.lines:
        click.echo(line)
    sys.exit(0 if verdict.ok else 1)


def _capture_files(paths) -> list[str]:
    from a2a_capture.replay.gate import capture_files

    return capture_files(paths)


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


if __name__ == "__main__":
    main()
