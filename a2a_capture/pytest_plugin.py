"""pytest fixtures for A2A: record a test's traffic and assert on it; replay a stored capture.

    def test_my_client(a2a_record):
        session = a2a_record("http://127.0.0.1:41241")      # the agent under test
        run_my_client(session.url)                           # talk through the recorder
        session.assert_no_findings()                         # no wasted round trip
        session.assert_operations(["SendMessage", "GetTask"])
        session.assert_matches("tests/captures/expected.http")

    def test_my_agent(a2a_replay):
        a2a_replay("tests/captures/session.http", {"test-runner": "http://127.0.0.1:41241"}).assert_clean()

Loaded automatically once a2a-capture is installed (entry point `pytest11`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import pytest

from a2a_capture.capture import Capture, read_capture
from a2a_capture.replay import diff
from a2a_capture.replay.masking import VOLATILE_KEYS

# the rest is imported when a fixture is used: every pytest run of a project that has
# a2a-capture installed loads this plugin, and should not pay for what it does not use


class RecordedSession:
    """A recorder in front of one or more agents, for the length of a test."""

    def __init__(self, path: Path, agents: list[str], redact: bool = True) -> None:
        from a2a_capture.record.process import RecorderProcess, free_port

        self.path = path
        self._process = RecorderProcess(path, [(agent, free_port()) for agent in agents], redact=redact)
        self._capture: Capture | None = None

    @property
    def urls(self) -> list[str]:
        """Where to reach each agent through the recorder, in the order given."""
        return self._process.urls

    @property
    def url(self) -> str:
        return self.urls[0]

    def stop(self) -> None:
        self._process.stop()

    def capture(self) -> Capture:
        """Stop recording (every finished exchange is written) and read the session."""
        if self._capture is None:
            self.stop()
            self._capture = read_capture(self.path)
        return self._capture

    def analysis(self):
        from a2a_capture.analyze.engine import analyze

        self.capture()
        return analyze([self.path])

    def findings(self, at_least: str = "warning"):
        from a2a_capture.report.machine import at_or_above

        return [f for f in self.analysis().findings if at_or_above(f, at_least)]

    def operations(self) -> list[str]:
        """What the client did, in order: operations, `card` for card fetches, `webhook` for deliveries."""
        return [call.operation or call.kind for call in self.analysis().calls]

    def assert_no_findings(self, at_least: str = "warning") -> None:
        found = self.findings(at_least)
        assert not found, "wasted round trips:\n" + "\n".join(
            f"  exchange {f.exchange}: {f.severity.value} {f.rule} {f.message}" for f in found)

    def assert_operations(self, expected: list[str]) -> None:
        actual = self.operations()
        assert actual == list(expected), f"operations were {actual}, expected {list(expected)}"

    def assert_matches(self, stored: str | Path, ignore_keys: tuple[str, ...] = ()) -> None:
        """The session equals a stored capture once ids, times and tokens are masked."""
        changes = diff.compare(read_capture(stored), self.capture(), VOLATILE_KEYS | set(ignore_keys))
        assert not changes, f"the session differs from {stored}:\n" + "\n".join(c.line() for c in changes)


@dataclass
class ReplayResult:
    capture: Capture
    changes: list[diff.Change] = field(default_factory=list)

    def assert_clean(self) -> None:
        assert not self.changes, "the agent answered differently:\n" + "\n".join(c.line() for c in self.changes)


@pytest.fixture
def a2a_record(tmp_path):
    """Start a recorder in front of agents: ``a2a_record(url, ...)`` returns a RecordedSession."""
    sessions: list[RecordedSession] = []

    def start(*agents: str, redact: bool = True) -> RecordedSession:
        session = RecordedSession(tmp_path / f"a2a-session-{len(sessions) + 1}.http", list(agents), redact)
        sessions.append(session)
        return session

    yield start
    for session in sessions:
        session.stop()


@pytest.fixture
def a2a_replay():
    """Run a stored capture against live agents: ``a2a_replay(path, {name: url}, secrets={})``."""

    def run(path: str | Path, targets: dict[str, str], secrets: dict[str, str] | None = None) -> ReplayResult:
        from a2a_capture.replay import client

        old = read_capture(path)
        new = client.replay(old, targets, secrets)
        return ReplayResult(capture=new, changes=diff.compare(old, new))

    return run
