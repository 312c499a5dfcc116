"""Options shared by the commands that read many sessions: grouping, --jobs, --engine."""

from __future__ import annotations

import functools

import click

from a2a_capture.batch import schedulers
from a2a_capture.cli.types import SCHEDULER


def session_options(default: str = "all"):
    """--each-file / --each-folder, --jobs, --engine and --scheduler, passed on as ``sessions``."""
    def decorate(command):
        @click.option("--each-file", "grouping", flag_value="file",
                      help="Each file is a session of its own (folders are searched to any depth).")
        @click.option("--each-folder", "grouping", flag_value="folder",
                      help="The files of each folder form a session (folders are searched to any depth).")
        @click.option("--one-session", "grouping", flag_value="all",
                      help="All files form one session, in the order given.")
        @click.option("-j", "--jobs", type=click.IntRange(min=1), metavar="N",
                      help="Analyze independent sessions in N processes (default: every core).")
        @click.option("--engine", type=click.Choice(["local", "dask"]), default="local", show_default=True,
                      help="local: processes on this machine; dask: a Dask distributed cluster.")
        @click.option("--scheduler", type=SCHEDULER, metavar="ADDRESS|processes|threads",
                      help=f"The Dask scheduler's address, such as {schedulers.EXAMPLE}; or a cluster started "
                           "here: processes (the default), or threads in this process.")
        @functools.wraps(command)
        def wrapper(*args, grouping, jobs, engine, scheduler, **kwargs):
            if scheduler and engine != "dask":
                raise click.UsageError("--scheduler goes with --engine dask")
            kwargs["sessions"] = {"grouping": grouping or default, "jobs": jobs, "engine": engine,
                                  "scheduler": scheduler}
            return command(*args, **kwargs)
        return wrapper
    return decorate
