"""The command line's value types: each value parsed once, by click, so every mistake reads
"Invalid value for '--option': …" whatever the command; the parsing itself is the library's."""

from __future__ import annotations

import re
import sys

import click

from a2a_capture import address
from a2a_capture.batch import schedulers
from a2a_capture.errors import STDOUT

#: old spellings of --format values, still accepted everywhere (and hidden from help):
#: `table` was `show`'s and `rules`' name for text, `md` was `report`'s for markdown
FORMAT_ALIASES = {"table": "text", "md": "markdown"}
#: convert's --from/--to: a mitmproxy flow file is as often called a flow file (its usual suffix)
CONVERT_ALIASES = {"flow": "mitm"}

_DURATION = re.compile(r"\s*(\d+(?:\.\d*)?|\.\d+)\s*(ms|s|m|)\s*", re.ASCII)
_SECONDS_PER = {"": 1.0, "s": 1.0, "ms": 0.001, "m": 60.0}


class Aliased(click.Choice):
    """A choice that also takes other names for its values: each becomes its canonical name,
    and help and errors name only canonical ones."""

    def __init__(self, choices, aliases: dict[str, str]) -> None:
        super().__init__(choices)
        self.aliases = aliases

    def convert(self, value, param, ctx):
        if isinstance(value, str):
            value = self.aliases.get(value, value)
        return super().convert(value, param, ctx)


class Format(Aliased):
    """A --format value from the one vocabulary (text, markdown, html, json, …); an old spelling
    becomes its canonical name."""

    def __init__(self, *choices: str) -> None:
        super().__init__(choices, FORMAT_ALIASES)


class Destination(click.Path):
    """A file to write, or `-` for standard output, so a capture, HAR or report can be piped on.
    Not to a terminal: what is written holds the capture's own text, whose control sequences a
    terminal would obey (set its title, clear the screen)."""

    def __init__(self, **path_options) -> None:
        super().__init__(dir_okay=False, **path_options)

    def convert(self, value, param, ctx):
        if value != STDOUT:
            return super().convert(value, param, ctx)
        if sys.stdout.isatty():
            self.fail("standard output is a terminal, which would obey the control sequences a capture can hold; "
                      "pipe it (| less -R) or name a file", param, ctx)
        return value


def destination_name(path: str) -> str:
    """How the messages on stderr name where the output went."""
    return "standard output" if path == STDOUT else path


class HostPort(click.ParamType):
    """HOST:PORT (an IPv6 host in brackets); a Listener. Port 0 only with ``free_port``."""

    name = "host:port"

    def __init__(self, *, free_port: bool = False) -> None:
        self.free_port = free_port

    def convert(self, value, param, ctx):
        from a2a_capture.record.runner import Listener  # the recorder's, imported by the commands that take one

        if isinstance(value, Listener):
            return value
        try:
            return Listener(*address.host_port(value, free_port=self.free_port))
        except address.AddressError as error:
            self.fail(str(error), param, ctx)


class Named(click.ParamType):
    """[NAME=]ADDRESS, an ADDRESS of the ``inner`` type (a URL or HOST:PORT): (NAME or None, value)."""

    def __init__(self, inner: click.ParamType, *, required: bool = False) -> None:
        self.inner = inner
        self.required = required
        self.name = f"{'' if required else '['}name={'' if required else ']'}{inner.name}"

    def convert(self, value, param, ctx):
        if isinstance(value, tuple):
            return value
        try:
            name, rest = address.named(value, url=isinstance(self.inner, Url))
        except address.AddressError as error:
            self.fail(str(error), param, ctx)
        if name is None and self.required:
            self.fail(f"{value!r} should be NAME={self.inner.name.upper()}", param, ctx)
        return name, self.inner.convert(rest, param, ctx)


class Setting(click.ParamType):
    """NAME=VALUE, split at the first `=`: (NAME, VALUE)."""

    name = "name=value"

    def convert(self, value, param, ctx):
        if isinstance(value, tuple):
            return value
        name, sep, rest = value.partition("=")
        if not sep or not name:
            self.fail(f"{value!r} should be NAME=VALUE", param, ctx)
        return name, rest


class Url(click.ParamType):
    """An http:// or https:// URL with a host."""

    name = "url"

    def convert(self, value, param, ctx):
        try:
            return address.http_url(value)
        except address.AddressError as error:
            self.fail(str(error), param, ctx)


class Duration(click.ParamType):
    """A time no shorter than 0: seconds (2.5), or with a unit: 500ms, 2.5s, 1m. In seconds."""

    name = "seconds"

    def convert(self, value, param, ctx):
        if isinstance(value, float):
            return value
        found = _DURATION.fullmatch(str(value))
        if not found:
            self.fail(f"{value!r} is not a duration: give seconds, such as 5, 2.5s or 500ms", param, ctx)
        return float(found[1]) * _SECONDS_PER[found[2]]


class Scheduler(click.ParamType):
    """A Dask scheduler's address (tcp://HOST:PORT, …), or the name of a cluster to start here."""

    name = "scheduler"

    def convert(self, value, param, ctx):
        try:
            return schedulers.scheduler(value)
        except schedulers.SchedulerError as error:
            self.fail(str(error), param, ctx)


#: the types the commands share
LISTEN = Named(HostPort())
URL = Url()
SECONDS = Duration()
SCHEDULER = Scheduler()
SPEED = click.FloatRange(min=0, min_open=True)
#: --fail-on: the least severe finding that fails (never: none does)
FAIL_ON = click.Choice(["error", "warning", "info", "never"])
