"""The rule families. Importing this package registers every rule in `findings.RULES`."""

from a2a_capture.analyze.rules import capabilities, cards, discovery, habits, protocol, recording, tasks  # noqa: F401
