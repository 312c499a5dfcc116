"""The `a2a-capture` command: a thin layer over the library, one module per command."""

from a2a_capture.cli import (  # noqa: F401  (registers)
    analyze,
    convert,
    export,
    otel,
    record,
    replay,
    report,
    rules,
    scan,
    show,
    tidy,
    view,
)
from a2a_capture.cli.base import USAGE_ERROR, main

__all__ = ["USAGE_ERROR", "main"]
