"""The one place that decides what is secret, and replaces it by markers.

`Policy` says which names and value shapes are secret (the built-in vocabulary and shapes,
extended from pyproject.toml and the command line); `Redactor` replaces them in headers,
request targets, bodies of any kind and free text; `MARKER` recognises what it wrote. The
recorder, the converters and every output use these, and nothing else, to keep secrets out.
"""

from a2a_capture.redact.policy import DEFAULT, Policy, PolicyError, active, load, use
from a2a_capture.redact.redactor import Redactor
from a2a_capture.redact.scanner import MARKER, Scanner

__all__ = ["DEFAULT", "MARKER", "Policy", "PolicyError", "Redactor", "Scanner", "active", "load", "use"]
