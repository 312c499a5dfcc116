"""Every example capture, replayed by the CLI against fresh agents built as captures/record.py
builds them: `replay` exits 0 and `diff` finds nothing, webhooks and polling included."""

from __future__ import annotations

import contextlib
import re

import pytest

from a2a_capture.capture import read_capture
from tests.conftest import ROOT
from tests.live import agent
from tests.test_cli_show import run

pytestmark = pytest.mark.live

CAPTURES = sorted((ROOT / "captures").glob("*.http"))
#: the agents as captures/record.py starts them (its PORTS and options), on free ports here
AGENTS = {
    "test-runner": {"streaming": True, "push": True},
    "code-reviewer": {"streaming": True},
    "deployer": {"streaming": False, "bearer": True},
}
RECORDED_STEP = 0.05

pytestmark = pytest.mark.live
#: the push config's credentials captures/record.py gave in 07-push-webhook
PUSH = "$.params.configuration.taskPushNotificationConfig"
SECRETS = {f"{PUSH}.token": "run-0001", f"{PUSH}.authentication.credentials": "hook-secret"}


@pytest.fixture(scope="module")
def agents():
    with contextlib.ExitStack() as stack:
        yield {name: stack.enter_context(agent(name, step=RECORDED_STEP, **options))
               for name, options in AGENTS.items()}


def replay(path, agents, *extra: str):
    targets = [arg for name, url in agents.items() for arg in ("--target", f"{name}={url}")]
    secrets = [arg for place, value in SECRETS.items() for arg in ("--secret", f"{place}={value}")]
    # the polling session waits 0.25 s between polls: four times faster keeps the test short,
    # and --wait-for-state lets the last poll reach the recorded ending (generous bounds: a
    # loaded machine slows the agents, and the waits end as soon as what was recorded arrives)
    return run("replay", str(path), *targets, *secrets, "--speed", "4", "--wait-for-state", "30",
               "--wait-for-webhooks", "30", *extra)


@pytest.mark.parametrize("path", CAPTURES, ids=lambda p: p.stem)
def test_every_example_capture_replays_clean(path, agents, tmp_path):
    new = tmp_path / path.name
    result = replay(path, agents, "-o", str(new))
    assert result.returncode == 0, result.stdout.decode() + result.stderr.decode()
    assert b"differ from the capture" in result.stdout
    compared = run("diff", str(path), str(new))
    assert compared.returncode == 0, compared.stdout.decode()
    old_hooks = [e for e in read_capture(path).exchanges if e.webhook]
    new_hooks = [e for e in read_capture(new).exchanges if e.webhook]
    assert len(new_hooks) == len(old_hooks)


def test_webhooks_carry_the_recorded_markers_and_no_secret(agents, tmp_path):
    path = ROOT / "captures" / "07-push-webhook.http"
    new = tmp_path / "07.http"
    result = replay(path, agents, "-o", str(new))
    assert result.returncode == 0, result.stdout.decode()
    written = new.read_bytes()
    for value in SECRETS.values():
        assert value.encode() not in written and value.encode() not in result.stdout + result.stderr
    markers = re.compile(rb"\[redacted: [^\]]*\]")
    assert set(markers.findall(written)) == set(markers.findall(path.read_bytes()))
    capture = read_capture(new)
    hooks = [e for e in capture.exchanges if e.webhook]
    # the agent sent the restored token: its webhooks show the recorded token's marker
    assert {e.request.header("x-a2a-notification-token") for e in hooks} == {
        "[redacted: x-a2a-notification-token, sha256:5b770d]"}
    assert any("pointed the push configs at its own webhook receiver" in note for note in capture.notes)


def test_a_polling_session_needs_the_wait_for_its_ending(agents, tmp_path):
    path = ROOT / "captures" / "04-polling.http"
    hurried = replay(path, agents, "--no-delay", "--wait-for-state", "0")
    assert hurried.returncode == 1  # the polls ask long before the task could complete
    assert b"TASK_STATE_COMPLETED" in hurried.stdout
    new = tmp_path / "04.http"
    assert replay(path, agents, "-o", str(new)).returncode == 0
    last = [e for e in read_capture(new).exchanges if not e.webhook][-1]
    assert any(note.startswith("replay asked ") for note in last.notes)
