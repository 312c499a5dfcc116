"""`a2a-capture record`: mitmdump with the recorder addon."""

from __future__ import annotations

import click

from a2a_capture.cli.base import main


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
@click.option("--upstream-trust", metavar="CA.pem", type=click.Path(dir_okay=False),
              help="Trust agents whose TLS certificate this CA (PEM) signed, such as a self-signed gRPC agent's.")
@click.option("--upstream-insecure", is_flag=True,
              help="Do not check agents' TLS certificates at all (development only).")
def record_command(agents, listens, proxy, output, no_redact, no_rewrite_cards, upstream_trust, upstream_insecure):
    """Record live A2A traffic through mitmdump into a capture file.

    \b
    Reverse mode, one listener per agent:
      a2a-capture record --agent http://127.0.0.1:41241 --listen 127.0.0.1:51241 -o session.http
    Forward proxy mode:
      a2a-capture record --proxy 127.0.0.1:8080 -o session.http
    gRPC agents are recorded too: plaintext (h2c) as they come, and over TLS with
    --upstream-trust for an agent certificate no public CA signed.
    """
    from a2a_capture.record import runner

    if len(agents) != len(listens):
        raise click.UsageError("give one --listen HOST:PORT for each --agent URL")
    pairs = [(runner.parse_agent(url), runner.Listener.parse(where, "--listen"))
             for url, where in zip(agents, listens, strict=True)]
    listener = runner.Listener.parse(proxy, "--proxy") if proxy else None
    runner.run(output, pairs, listener, redact=not no_redact, rewrite_cards=not no_rewrite_cards,
               upstream_trust=upstream_trust, upstream_insecure=upstream_insecure, echo=click.echo)
