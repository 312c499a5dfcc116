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

    def assert_no_new_findings(self, baseline: str | Path | None = None, at_least: str = "warning") -> None:
        """No finding the baseline has not accepted; by default the a2a-baseline.json nearest to the
        capture (its folder or one above it; none: every finding is new). The failure lists them."""
        from a2a_capture.redact.mask import Masker
        from a2a_capture.replay import baseline as baselines
        from a2a_capture.report import machine

        where = str(baseline) if baseline else baselines.nearest(str(self.kept), baselines.NAME)
        judged = baselines.judge(self.findings(at_least), baselines.load(where))
        if judged.new:
            masker = Masker.for_files([self.path])
            lines = [machine.line(masker.finding(f), judged=False) for f in judged.new]
            raise AssertionError(f"{len(lines)} new finding(s), not in {where}:\n" + "\n".join(lines))

    @property
    def kept(self) -> Path:
        """The capture that stands for this session: where its findings are accepted from."""
        return self.path

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


# -- @pytest.mark.a2a_capture (a2a_capture/pytest_capture.py has the modes) ------------------------------

_PASSED = pytest.StashKey[bool]()
_BLOCK = pytest.StashKey[object]()


class CapturedSession(RecordedSession):
    """A marked test's session: recorded in front of the agents, or of mocks answering from ``stored``."""

    def __init__(self, path: Path, agents: list[str], redact: bool, stored: Path, mode: str, replaying: bool):
        super().__init__(path, agents, redact)
        self.stored, self.mode, self.replaying = stored, mode, replaying

    @property
    def kept(self) -> Path:
        return self.stored


def pytest_addoption(parser):
    parser.getgroup("a2a-capture").addoption(
        "--a2a-record-mode", choices=("none", "once", "new_episodes", "all"), default="none",
        help="@pytest.mark.a2a_capture tests: none (answer from tests/captures/..., no network), once (record "
             "what has no capture), new_episodes (record; write when a call is new), all (record again).")


def pytest_configure(config):
    config.addinivalue_line(
        "markers", "a2a_capture(*agents, redact=True): record the test's A2A traffic with the agents (URLs, or "
                   "names of fixtures giving URLs) into captures/<module>/<test>.http beside it; the "
                   "a2a_capture fixture gives the URLs to call (--a2a-record-mode says what is recorded)")


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item, call):
    report = yield
    if report.when == "call":
        item.stash[_PASSED] = report.passed
    return report


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item):
    """A connection `none` mode blocked fails the test with its message, even if the client swallowed it."""
    try:
        result = yield
    except BaseException as error:
        block = item.stash.get(_BLOCK, None)
        if block is not None and block.attempts and not isinstance(error, pytest.fail.Exception):
            raise pytest.fail.Exception(block.failure(), pytrace=False) from error
        raise
    block = item.stash.get(_BLOCK, None)
    if block is not None and block.attempts:
        pytest.fail(block.failure(), pytrace=False)
    return result


@pytest.fixture(autouse=True)
def _a2a_capture_marked(request):
    """A marked test gets its session whether or not it asks for the a2a_capture fixture."""
    if request.node.get_closest_marker("a2a_capture") is not None:
        request.getfixturevalue("a2a_capture")


@pytest.fixture
def a2a_capture(request, tmp_path):
    """The session of a test marked ``@pytest.mark.a2a_capture(AGENT, ...)``: ``.urls`` (``.url``) is
    where the client calls each agent; the assertions of ``a2a_record``'s sessions, and
    ``assert_no_new_findings()``."""
    from a2a_capture import pytest_capture as cassette
    from a2a_capture.a2a.grpc import VIEWS
    from a2a_capture.capture import capture_bytes, read_capture

    marker = request.node.get_closest_marker("a2a_capture")
    if marker is None or not marker.args:
        pytest.fail("a2a_capture: mark the test with @pytest.mark.a2a_capture(AGENT, ...), each AGENT a URL "
                    "or the name of a fixture that gives one", pytrace=False)
    mode = request.config.getoption("a2a_record_mode")
    stored = cassette.capture_path(Path(str(request.node.path)), request.node.name)
    missing = None
    try:
        replaying = cassette.replays(mode, stored)
    except cassette.CaptureMissing as error:
        missing = str(error)
    if missing:
        pytest.fail(missing, pytrace=False)
    agents = list(marker.args)
    mocks = block = None
    if replaying:
        from a2a_capture.replay.serve import mock_agents

        old = read_capture(stored)
        by_origin = {mock.origin: mock for mock in mock_agents(old, speed=0.0)}
        chosen = [by_origin.get(origin) for origin in cassette.agent_origins(old, len(agents))]
        if None in chosen:
            pytest.fail(f"{stored} reaches {len(by_origin)} agent(s), the marker names {len(agents)}: record it "
                        "again with --a2a-record-mode=all", pytrace=False)
        mocks = cassette.MockServers(chosen)
        upstream = mocks.urls
    else:
        upstream = [agent if "://" in agent else request.getfixturevalue(agent) for agent in agents]
    session = CapturedSession(tmp_path / stored.name, upstream, marker.kwargs.get("redact", True), stored, mode,
                              replaying)
    if replaying:
        block = cassette.NetworkBlock({int(url.rsplit(":", 1)[1]) for url in [*session.urls, *mocks.urls]})
        block.install()
        request.node.stash[_BLOCK] = block
    try:
        yield session
    finally:
        if block is not None:
            block.uninstall()
        session.stop()
        if mocks is not None:
            mocks.stop()
    if replaying or not request.node.stash.get(_PASSED, False) or not session.capture().exchanges:
        return
    new = cassette.stored(session.path, session.urls)
    if mode == "new_episodes" and stored.is_file() and not cassette.has_new_calls(new, read_capture(stored)):
        return
    stored.parent.mkdir(parents=True, exist_ok=True)
    stored.write_bytes(capture_bytes(new, views=VIEWS))
