"""The errors a user can meet, as a small hierarchy with messages they can act on."""

from __future__ import annotations


class A2ACaptureError(Exception):
    """Base of every error this tool raises on purpose."""


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
            message += f", found {self.found}"
        return message
