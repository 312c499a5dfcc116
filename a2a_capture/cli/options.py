"""Options several commands share, declared once so they are spelled and explained alike."""

from __future__ import annotations

import functools

import click


def redact_option(default: bool | None = True, help: str = "") -> callable:
    """--redact/--no-redact: credentials, cookies, API keys and push tokens masked as the recorder
    masks them. `--show-secrets`, the old spelling of --no-redact, still works (hidden)."""
    def decorate(command):
        @click.option("--redact/--no-redact", default=default, show_default=default is not None,
                      help=help or "Mask credentials, cookies, API keys and push tokens as the recorder masks "
                                   "them; --no-redact keeps them in clear (careful).")
        @click.option("--show-secrets", is_flag=True, hidden=True, help="The old spelling of --no-redact.")
        @functools.wraps(command)
        def wrapper(*args, redact, show_secrets, **kwargs):
            return command(*args, redact=False if show_secrets else redact, **kwargs)
        return wrapper
    return decorate
