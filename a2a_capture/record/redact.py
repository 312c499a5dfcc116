"""The recorder's redaction: the policy's redactor (a2a_capture.redact), under the names the
recorder and its users import."""

from __future__ import annotations

from a2a_capture.redact import MARKER, Redactor

__all__ = ["MARKER", "Redactor"]
