"""The errors a user can meet, as a small hierarchy with messages they can act on."""

from __future__ import annotations

import os
import sys


class A2ACaptureError(Exception):
    """Base of every error this tool raises on purpose."""


class WriteError(A2ACaptureError):
    """An output cannot be written (a missing folder, no permission, a full disk)."""

    def __init__(self, path, reason: str) -> None:
        super().__init__(f"cannot write {path}: {reason}")


class PolicyError(A2ACaptureError):
    """A redaction setting cannot be used: a pattern that does not compile, a value of the wrong type."""


class ConvertError(A2ACaptureError):
    """An input file is not what its format says."""


class TemplateError(A2ACaptureError):
    """A template is missing or broken."""


class SameFileTwice(A2ACaptureError):
    """A session names one capture twice: its exchanges would be counted and anchored twice."""


class RecordError(A2ACaptureError):
    """The recorder cannot start: say what and how to fix it."""


class ReplayError(A2ACaptureError):
    """Replay cannot start or go on: what is missing and how to give it."""


class BaselineError(A2ACaptureError):
    """A baseline file cannot be read."""


class WebhookError(A2ACaptureError):
    """The webhook receiver cannot listen."""


class PreflightError(A2ACaptureError):
    """A replay cannot start: a target or the output is wrong."""


class ViewError(A2ACaptureError):
    """The view cannot start (its address is taken, or not a loopback address)."""


class ConfigError(A2ACaptureError):
    """A setting names a rule that does not exist, or cannot be read."""


class AddressError(A2ACaptureError):
    """An address or a NAME=ADDRESS pair that cannot be what it claims to be."""


class SchedulerError(A2ACaptureError):
    """A --scheduler value that is neither a scheduler's address nor a local scheduler's name."""


class CaptureInUse(A2ACaptureError):
    """Another recorder holds the capture file (its lock)."""


class OtelError(A2ACaptureError):
    """The OpenTelemetry export cannot start or did not go through: one line that says why."""


def one_line(error: BaseException) -> str:
    """An exception's message as one line: pydantic's multi-line validation errors become
    `Model.member: what was wrong` for the first problem; anything else keeps its first line."""
    from pydantic import ValidationError

    if isinstance(error, ValidationError) and error.errors():
        problem = error.errors()[0]
        where = ".".join(str(part) for part in (error.title, *problem["loc"]))
        return f"{where}: {problem['msg']}"
    lines = str(error).strip().splitlines()
    return lines[0][:300] if lines else type(error).__name__


def valid_utf8(text: str) -> str:
    """Text that encodes as UTF-8: bytes of a capture that were not UTF-8 (kept as surrogates) are
    shown escaped, `\\udcff`, which inside a JSON string is still valid JSON."""
    return text.encode("utf-8", "backslashreplace").decode("utf-8")


#: the output path that means standard output, as Unix tools spell it
STDOUT = "-"


def open_output(path, binary: bool = False):
    """A file to write a report, findings or a capture into, with one-line errors and escaped bad
    bytes; `-` is standard output (left open when the file is closed)."""
    try:
        if path == STDOUT:
            sys.stdout.flush()  # what was printed before comes first
            if binary:
                return open(sys.stdout.fileno(), "wb", closefd=False)
            return open(sys.stdout.fileno(), "w", encoding="utf-8", errors="backslashreplace", closefd=False)
        if binary:
            return open(path, "wb")
        return open(path, "w", encoding="utf-8", errors="backslashreplace")
    except BrokenPipeError:  # the reader of standard output stopped reading: not an error
        raise
    except OSError as error:
        raise WriteError(path, error.strerror or str(error)) from None


def remove_partial(path) -> None:
    """A half-written output removed: only a file of its own, never standard output or a device
    such as /dev/stdout."""
    try:
        if path != STDOUT and os.path.isfile(path) and not os.path.islink(path):
            os.remove(path)
    except OSError:
        pass


class Output:
    """Standard output, or a file opened at its first write (a command that fails before writing
    anything leaves no file), for a document written piece by piece; ends with a newline."""

    def __init__(self, path=None) -> None:
        self.path, self.stream, self.last = path, None, "\n"

    def write(self, text: str) -> None:
        if not text:
            return
        if self.stream is None:
            self.stream = open_output(self.path) if self.path else sys.stdout
        try:
            self.stream.write(text)
        except BrokenPipeError:  # the reader of standard output stopped reading: not an error
            raise
        except OSError as error:
            raise WriteError(self.path or "standard output", error.strerror or str(error)) from None
        self.last = text[-1]

    def __enter__(self) -> Output:
        return self

    def __exit__(self, kind, *_) -> None:
        if kind is None and self.last != "\n":
            self.write("\n")
        if self.stream is not None and self.stream is not sys.stdout:
            self.stream.close()


def write_text(path, text: str) -> None:
    """Writes a report as UTF-8; bytes of the capture that were not UTF-8 show escaped (\\udcff)."""
    try:
        with open_output(path) as stream:
            stream.write(text)
    except BrokenPipeError:  # the reader of standard output stopped reading: not an error
        raise
    except OSError as error:
        raise WriteError(path, error.strerror or str(error)) from None


class CaptureFormatError(A2ACaptureError):
    """A capture file breaks the format: says which file, where, and what was expected."""

    def __init__(
        self,
        expected: str,
        *,
        path: str | None = None,
        line: int | None = None,
        column: int = 1,
        found: str | None = None,
    ) -> None:
        self.expected = expected
        self.path = path
        self.line = line
        self.column = column
        self.found = found
        super().__init__(str(self))

    def __str__(self) -> str:
        where = self.path or "<capture>"
        if self.line is not None:
            where += f":{self.line}:{self.column}"
        message = f"{where}: expected {self.expected}"
        if self.found is not None:
            found = self.found
            if len(found) > _FOUND_SHOWN:  # a hostile value (a length of 5,000 digits) is named, not echoed
                found = f"{found[:_FOUND_SHOWN]}… ({len(found)} characters)"
            message += f", found {found}"
        return message


#: characters of what a capture held that an error message shows at most
_FOUND_SHOWN = 80


class EmptyCaptureError(A2ACaptureError):
    """A gate was asked to pass a capture that holds no exchange: nothing was checked."""

    def __init__(self, paths) -> None:
        super().__init__(f"no exchange in {', '.join(map(str, paths))}: nothing was recorded, so nothing was "
                         f"checked (the client may have bypassed the recorder); pass --allow-empty if that "
                         f"is expected")


def no_exchange(paths, then: str) -> str:
    """What every command says of captures with no exchange, in one line, whatever it was asked
    (``then``: what it did of nothing, such as "nothing was checked")."""
    return (f"no exchange in {', '.join(map(str, paths))}: nothing was recorded (the client may have bypassed "
            f"the recorder); {then}")


def require_exchanges(analysis, paths, allow_empty: bool = False) -> None:
    """Refuse to gate on nothing: an analysis of no exchange is an error unless allowed."""
    if not allow_empty and analysis.summary.exchanges == 0:
        raise EmptyCaptureError(paths)
