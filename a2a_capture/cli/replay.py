"""`a2a-capture replay`, `serve`, `diff` and `check`: sessions against live agents, mocks and baselines."""

from __future__ import annotations

import sys

import click

from a2a_capture.cli.base import main, pairs, verdict
from a2a_capture.cli.sessions import session_options


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
    new = client.replay(old, pairs(targets, "--target"), pairs(secrets, "--secret"), echo=click.echo)
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

    verdict(gate.compare_sessions(old, new, keys))


@main.command("check")
@click.argument("paths", nargs=-1, required=True, type=click.Path())
@session_options()
@click.option("--baseline", "baseline_path", required=True, type=click.Path(dir_okay=False),
              help="The accepted findings (JSON); missing means none are accepted.")
@click.option("--update-baseline", is_flag=True, help="Accept the current findings: write them to the baseline.")
@click.option("--fail-on", type=click.Choice(["error", "warning", "info"]), default="warning", show_default=True,
              help="Only findings at least this severe can fail the check.")
def check_command(paths, baseline_path, update_baseline, fail_on, sessions):
    """The CI gate: analyze PATHS (files, or folders of .http files) and fail on new findings."""
    from a2a_capture.analyze import config as settings
    from a2a_capture.replay import gate

    verdict(gate.check(paths, baseline_path, update=update_baseline, fail_on=fail_on, config=settings.load(),
                       **sessions))
