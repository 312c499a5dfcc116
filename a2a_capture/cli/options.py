"""Options several commands share, declared once so they are spelled and explained alike."""

from __future__ import annotations

import functools

import click


def policy_options(command):
    """--redact-name, --redact-pattern, --keep-name: the redaction policy extended for this run
    (on top of the defaults and pyproject.toml's `[tool.a2a-capture.redact]`), put in force before
    the command runs."""
    @click.option("--redact-name", "redact_names", multiple=True, metavar="NAME",
                  help="Also treat headers, parameters and JSON members called NAME as secret (repeatable; "
                       "matched by words: x-tenant-pin matches X-Tenant-Pin and xTenantPin).")
    @click.option("--redact-pattern", "redact_patterns", multiple=True, metavar="REGEX",
                  help="Also mask values that match REGEX wherever they are (repeatable).")
    @click.option("--keep-name", "keep_names", multiple=True, metavar="NAME",
                  help="Never treat NAME as secret (repeatable); the value shapes still apply to its value.")
    @functools.wraps(command)
    def wrapper(*args, redact_names, redact_patterns, keep_names, **kwargs):
        from a2a_capture.redact import policy

        try:
            policy.use(policy.load().extended(redact_names, redact_patterns, keep_names))
        except policy.PolicyError as error:
            message = str(error).replace("redact settings: ", "")
            raise click.BadParameter(message, param_hint="'--redact-pattern'") from None
        return command(*args, **kwargs)
    return wrapper


def redact_option(default: bool | None = True, help: str = "") -> callable:
    """--redact/--no-redact: every secret the policy finds masked (docs/redaction.md), with the
    policy's options. `--show-secrets`, the old spelling of --no-redact, still works (hidden)."""
    def decorate(command):
        @click.option("--redact/--no-redact", default=default, show_default=default is not None,
                      help=help or "Mask every secret the redaction policy finds (credentials, cookies, keys, "
                                   "tokens; docs/redaction.md); --no-redact shows them as the input holds them "
                                   "(careful).")
        @click.option("--show-secrets", is_flag=True, hidden=True, help="The old spelling of --no-redact.")
        @policy_options
        @functools.wraps(command)
        def wrapper(*args, redact, show_secrets, **kwargs):
            return command(*args, redact=False if show_secrets else redact, **kwargs)
        return wrapper
    return decorate
