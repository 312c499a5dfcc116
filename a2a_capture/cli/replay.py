"""`a2a-capture replay`, `serve`, `diff` and `check`: sessions against live agents, mocks and baselines."""

from __future__ import annotations

import sys

import click

from a2a_capture.cli.base import main, verdict
from a2a_capture.cli.options import redact_option
from a2a_capture.cli.sessions import session_options
from a2a_capture.cli.types import FAIL_ON, SECONDS, SPEED, URL, HostPort, Named, Setting
from a2a_capture.errors import A2ACaptureError, no_exchange
from a2a_capture.terminal import shown


@main.command("replay")
@click.argument("file", type=click.Path(dir_okay=False))
@click.option("--target", "targets", multiple=True, type=Named(URL), metavar="[NAME=]URL", required=True,
              help="Where the agent NAME (its card's name, or its recorded host:port) runs now (repeatable); "
                   "without NAME, the next agent in the order the capture meets them.")
@click.option("--secret", "secrets", multiple=True, type=Setting(), metavar="PLACE=VALUE",
              help="A credential for a place the capture redacted (repeatable): a header by name "
                   "(Authorization=\"Bearer …\"), a JSON member by the path its `#@ redacted:` line gives "
                   "($.params.configuration.taskPushNotificationConfig.token=…), a query parameter as ?NAME. "
                   "Or set A2A_CAPTURE_SECRET_<PLACE> (AUTHORIZATION, "
                   "PARAMS_CONFIGURATION_TASKPUSHNOTIFICATIONCONFIG_TOKEN, QUERY_KEY). Never written out.")
@click.option("--speed", type=SPEED, default=1.0, show_default=True,
              metavar="N", help="Keep the recorded gaps between calls, this many times shorter.")
@click.option("--delay/--no-delay", default=True, show_default=True,
              help="Keep the recorded gaps between calls; --no-delay sends each call as soon as the previous "
                   "one ends.")
@click.option("--wait-for-state", type=SECONDS, default=5.0, show_default=True, metavar="SECONDS",
              help="A task read (GetTask, ListTasks, SubscribeToTask) that finds the task behind the recorded "
                   "state asks again, for at most this long (0: never).")
@click.option("--wait-for-webhooks", type=SECONDS, default=5.0, show_default=True, metavar="SECONDS",
              help="After the last call, wait this long at most for as many webhooks as were recorded.")
@click.option("--webhook-listen", type=HostPort(free_port=True), metavar="HOST:PORT", default="127.0.0.1:0",
              show_default=True,
              help="Where replay takes the agents' webhooks (port 0: a free one); push configs are pointed there.")
@click.option("-o", "--output", type=click.Path(dir_okay=False),
              help="Write the new session (.http, or by its suffix .har, .mitm or .flow), secrets redacted as "
                   "recorded.")
@redact_option(help="Mask every secret the redaction policy finds in the new session and in what is printed; "
                    "--no-redact keeps what the agents answered as it came (what replay sent stays masked).")
def replay_command(file, targets, secrets, speed, delay, wait_for_state, wait_for_webhooks, webhook_listen,
                   output, redact):
    """Send the client side of capture FILE (.http, .har, .mitm, .flow) again to live agents.

    Calls go in the original order, at the recorded pace. Ids the servers make up (tasks,
    contexts, push configs, page tokens, ETags) are learned from the new answers and put into
    later requests; the agents' webhooks are received and compared by task and state. Targets
    and the output are checked before anything is sent (exit 2 if one is wrong). Prints what
    changed; exit 1 if anything did.

    Redacted places are filled from --secret, or made up where they are the client's own (a
    push config's token and credentials: replay runs the webhook receiver); the places still
    missing (credentials the agent checks) are named in one line before anything is sent.
    """
    from a2a_capture import sources
    from a2a_capture.replay import client, diff, preflight

    old = sources.capture(file)
    if not old.exchanges:  # as serve: nothing to send is a mistake, not a clean run
        raise A2ACaptureError(no_exchange([file], "nothing to replay"))
    if output:
        preflight.check_writable(output)
    options = client.Options(speed=speed if delay else 0.0, wait_for_state=wait_for_state,
                             wait_for_webhooks=wait_for_webhooks,
                             webhook_listen=(webhook_listen.host, webhook_listen.port))
    new = client.replay(old, list(targets), dict(secrets), options=options,
                        echo=lambda line: click.echo(line, err=True), redact=redact)
    if output:
        write_session(new, output)
    for exchange in new.exchanges:
        for note in exchange.notes:
            if note.startswith("error: "):
                click.echo(shown(f"a2a-capture: exchange {exchange.label}: {note}"), err=True)
    if redact:  # the recording's own secrets (a --no-redact capture's) are not printed either
        from a2a_capture.redact.mask import Masker

        masker = Masker.for_files([file])
        old = old.model_copy(update={"exchanges": [masker.exchange(e) for e in old.exchanges]})
    changes = diff.compare(old, new)
    for change in changes:
        click.echo(change.line())
    click.echo(f"replayed {len(new.exchanges)} exchanges; {len(changes)} differ from the capture")
    sys.exit(1 if changes else 0)


def write_session(capture, output: str) -> None:
    from pathlib import Path

    from a2a_capture.convert import FORMATS, dump

    try:
        Path(output).write_bytes(dump(capture, FORMATS.get(Path(output).suffix.lower(), "http")))
    except OSError as error:
        raise click.ClickException(f"cannot write {output}: {error.strerror or error}") from None


@main.command("serve")
@click.argument("file", type=click.Path(dir_okay=False))
@click.option("--listen", "listens", multiple=True, type=Named(HostPort(free_port=True)), metavar="[NAME=]HOST:PORT",
              help="Where to serve the agent NAME (its card's name, or its recorded host:port); without NAME, "
                   "the next agent in the order the capture meets them (port 0, or none given: a free port).")
@click.option("--speed", type=SPEED, default=1.0, show_default=True, metavar="N",
              help="Play streams this many times faster.")
@click.option("--delay/--no-delay", default=True, show_default=True,
              help="Keep the recorded gaps between stream frames; --no-delay sends them at once.")
@redact_option(help="Mask the secrets the redaction policy finds in what the mocks say of their own (the notes "
                    "of answers that match no recorded exchange) and print; --no-redact shows them.")
def serve_command(file, listens, speed, delay, redact):
    """Serve the agent side of capture FILE (.http, .har, .mitm, .flow) as mock agents, until Ctrl-C."""
    from a2a_capture import sources
    from a2a_capture.redact.mask import Masker
    from a2a_capture.replay import serve
    from a2a_capture.replay.runner import serve_forever

    mask = Masker.for_files([file]).text if redact else str
    agents = serve.mock_agents(sources.capture(file), speed if delay else 0.0, mask=mask)
    if not agents:
        raise click.UsageError(f"{file} has no calls to an agent to serve")
    serve_forever(agents, list(listens), echo=click.echo)


@main.command("diff")
@click.argument("old", type=click.Path(dir_okay=False))
@click.argument("new", type=click.Path(dir_okay=False))
@click.option("--ignore-key", "keys", multiple=True, metavar="KEY",
              help="Also mask this JSON member (ids, timestamps and tokens are masked already).")
@redact_option(help="Compare and print both sessions with every secret the redaction policy finds masked (two "
                    "markers in the same place are equal); --no-redact compares them as they are.")
def diff_command(old, new, keys, redact):
    """Compare two sessions (.http, .har, .mitm, .flow) exchange by exchange, and their findings;
    webhooks by task and state. Exit 1 on a difference."""
    from a2a_capture.replay import gate

    verdict(gate.compare_sessions(old, new, keys, redact=redact))


@main.command("check")
@click.argument("paths", nargs=-1, required=True, type=click.Path())
@session_options()
@click.option("--baseline", "baseline_path", type=click.Path(dir_okay=False),
              help="The accepted findings (JSON); missing means none are accepted.")
@click.option("--nearest-baseline", is_flag=True,
              help="Each path against the a2a-baseline.json (or --baseline's file name) in its folder or the "
                   "closest one above it in the repository: for pre-commit hooks, given files from anywhere.")
@click.option("--update-baseline", is_flag=True, help="Accept the current findings: write them to the baseline.")
@click.option("--fail-on", type=FAIL_ON, default="warning", show_default=True,
              help="Only findings at least this severe can fail the check.")
@click.option("--allow-empty/--no-allow-empty", default=False,
              help="Pass a capture with no exchange (by default an error, exit 2).")
@redact_option(help="Mask the secrets the redaction policy finds in what the new findings quote; --no-redact "
                    "shows them as the capture holds them.")
def check_command(paths, baseline_path, nearest_baseline, update_baseline, fail_on, allow_empty, sessions, redact):
    """The CI gate: analyze PATHS (files, or folders of .http files) and fail on new findings."""
    import os

    from a2a_capture.analyze import config as settings
    from a2a_capture.replay import gate

    if not baseline_path and not nearest_baseline:
        raise click.UsageError("give --baseline FILE, or --nearest-baseline")
    options = {"fail_on": fail_on, "config": settings.load(), "allow_empty": allow_empty, "redact": redact,
               **sessions}
    if nearest_baseline:
        if update_baseline:
            raise click.UsageError("--update-baseline writes one baseline: give it with --baseline FILE")
        verdict(gate.check_nearest(paths, os.path.basename(baseline_path or "a2a-baseline.json"), **options))
    verdict(gate.check(paths, baseline_path, update=update_baseline, **options))
