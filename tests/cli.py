"""The checkout's own `a2a-capture`, for tests: in this process through click's CliRunner, or as
`python -m a2a_capture.cli` where a separate process is needed; never whatever is first on PATH."""

from __future__ import annotations

import os
import subprocess
import sys

from click.testing import CliRunner

from tests.conftest import ROOT

#: the command line of the checkout's entry point, for tests that need a process of its own
COMMAND = [sys.executable, "-m", "a2a_capture.cli"]


#: options that start processes of the command's own
POOLED = {"--jobs", "-j", "--engine", "--scheduler"}


def process_env(env: dict[str, str] | None = None) -> dict[str, str]:
    """The environment for COMMAND: this checkout first on the import path."""
    path = os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))
    return {**os.environ, **(env or {}), "PYTHONPATH": path}


def run(*args: str, stdin: bytes | None = None, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    """Runs the command in this process; answers as subprocess.run would (bytes, returncode).

    A command that starts a pool of processes (`--jobs`, `--engine`) gets a process of its own:
    forking this one, with whatever threads earlier tests left in it, is not safe.
    """
    from a2a_capture.cli import main

    if any(arg.split("=", 1)[0] in POOLED for arg in args):
        return subprocess.run([*COMMAND, *args], capture_output=True, input=stdin, env=process_env(env), timeout=600)

    try:
        runner = CliRunner(mix_stderr=False)  # click 8.1
    except TypeError:
        runner = CliRunner()  # click 8.2+: stderr is apart already
    result = runner.invoke(main, list(args), input=stdin, env=env, catch_exceptions=False)
    return subprocess.CompletedProcess(["a2a-capture", *args], result.exit_code, result.stdout_bytes,
                                       result.stderr_bytes)
