"""The pre-commit hooks (.pre-commit-hooks.yaml), run by real `pre-commit try-repo` with this
checkout as the hook repository, in a git repository of a project that keeps captures.

pre-commit installs the checkout into a virtualenv of its own (language: python), as a user's
`pre-commit install` would: that install is why these tests are in the live tier.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from a2a_capture import sources
from tests.cli import run
from tests.conftest import ROOT

CAPTURES = ROOT / "captures"
HOOKS = ROOT / ".pre-commit-hooks.yaml"


def test_the_hooks_file_declares_both_hooks_on_the_files_they_read():
    hooks = {hook["id"]: hook for hook in yaml.safe_load(HOOKS.read_text())}
    assert set(hooks) == {"a2a-capture-check", "a2a-capture-scan"}
    assert all(hook["language"] == "python" and hook["entry"].startswith("a2a-capture ") for hook in hooks.values())
    assert "--nearest-baseline" in hooks["a2a-capture-check"]["entry"]
    check_files, scan_files = (hooks[name]["files"] for name in ("a2a-capture-check", "a2a-capture-scan"))
    for name, checked, scanned in [("captures/01-discovery.http", True, True), ("x/session.har", False, True),
                                   ("flows.mitm", False, True), ("dump.flow", False, True), ("a.json", False, False)]:
        assert bool(re.search(check_files, name)) is checked, name
        assert bool(re.search(scan_files, name)) is scanned, name


def test_check_of_some_captures_leaves_the_others_in_the_baseline(tmp_path, monkeypatch):
    project = _project(tmp_path)
    baseline = project / "captures" / "a2a-baseline.json"
    before = json.loads(baseline.read_text())["findings"]
    monkeypatch.chdir(project)
    # from the top, a capture finds the baseline beside it; the others' accepted findings are not "fixed"
    checked = run("check", "--each-file", "--nearest-baseline", "captures/02-blocking-send.http")
    assert checked.returncode == 0, checked.stdout
    assert checked.stdout.decode().splitlines() == ["check passed: 0 findings, all in captures/a2a-baseline.json"]
    # accepting one capture's findings keeps what the baseline says of the others
    (project / "captures" / "02-blocking-send.http").write_bytes((CAPTURES / "09-mistakes.http").read_bytes())
    assert run("check", "--each-file", "captures/02-blocking-send.http", "--baseline", str(baseline),
               "--update-baseline").returncode == 0
    after = json.loads(baseline.read_text())["findings"]
    assert [item for item in after if item["file"] != "02-blocking-send.http"] == before
    assert {item["rule"] for item in after if item["file"] == "02-blocking-send.http"} == {
        item["rule"] for item in before if item["file"] == "09-mistakes.http"}
    # no baseline anywhere above: every finding is new, and the hint names where to accept them
    alone = tmp_path / "alone.http"
    alone.write_bytes((CAPTURES / "09-mistakes.http").read_bytes())
    result = run("check", "--nearest-baseline", str(alone))
    assert result.returncode == 1 and b"--baseline a2a-baseline.json --update-baseline" in result.stdout
    assert run("check", str(alone)).returncode == 2  # neither --baseline nor --nearest-baseline


@pytest.fixture(scope="module")
def pre_commit_home(tmp_path_factory) -> Path:
    """One hook environment for the module's runs (pre-commit keys it by repository and revision)."""
    return tmp_path_factory.mktemp("pre-commit-home")


def _project(root: Path) -> Path:
    """A git repository keeping this checkout's captures and their baseline under captures/."""
    project = root / "project"
    (project / "captures").mkdir(parents=True)
    for path in [*sorted(CAPTURES.glob("*.http")), CAPTURES / "a2a-baseline.json"]:
        shutil.copy(path, project / "captures" / path.name)
    _git(project, "init", "-q")
    return project


def _git(where: Path, *args: str) -> None:
    subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@example.com", *args], cwd=where, check=True)


def _try_repo(project: Path, home: Path, hook: str | None, *files: str) -> subprocess.CompletedProcess:
    _git(project, "add", "-A")
    selection = ["--files", *files] if files else ["--all-files"]
    env = {**os.environ, "PRE_COMMIT_HOME": str(home), "PRE_COMMIT_COLOR": "never"}
    env.pop("VIRTUAL_ENV", None)
    command = [sys.executable, "-m", "pre_commit", "try-repo", str(ROOT), *([hook] if hook else []),
               "--verbose", *selection]
    return subprocess.run(command, cwd=project, env=env, capture_output=True, text=True, timeout=600)


@pytest.mark.live
def test_both_hooks_pass_on_the_repositorys_captures(tmp_path, pre_commit_home):
    project = _project(tmp_path)
    result = _try_repo(project, pre_commit_home, None)
    assert result.returncode == 0, result.stdout + result.stderr
    lines = result.stdout.splitlines()
    assert any(line.startswith("a2a-capture check (no new findings)") and line.endswith("Passed") for line in lines)
    assert any(line.startswith("a2a-capture scan (no secrets)") and line.endswith("Passed") for line in lines)
    # the check read captures/a2a-baseline.json, beside the captures, and every finding was in it
    accepted = sum(item["count"] for item in json.loads((CAPTURES / "a2a-baseline.json").read_text())["findings"])
    assert f"check passed: {accepted} findings, all in captures/a2a-baseline.json" in result.stdout
    # pre-commit may split the files over processes: each says what it read
    scanned = re.findall(r"^no secrets found in (\d+) files?$", result.stdout, re.MULTILINE)
    assert sum(map(int, scanned)) == 9, result.stdout


@pytest.mark.live
def test_a_changed_capture_with_a_new_finding_fails_the_check_hook(tmp_path, pre_commit_home):
    project = _project(tmp_path)
    # a client run recorded again, now with the mistakes of 09-mistakes
    mistakes = (CAPTURES / "09-mistakes.http").read_bytes()
    (project / "captures" / "02-blocking-send.http").write_bytes(mistakes.replace(b"09-mistakes", b"02-blocking"))
    result = _try_repo(project, pre_commit_home, "a2a-capture-check", "captures/02-blocking-send.http",
                       "captures/04-polling.http")
    assert result.returncode == 1, result.stdout + result.stderr
    assert "a2a-capture check (no new findings)" in result.stdout and "Failed" in result.stdout
    # each new finding on a line of its own, with the file and line of its exchange
    new = [line for line in result.stdout.splitlines() if line.startswith("captures/02-blocking-send.http:")]
    assert len(new) >= 4 and any(" card-path " in line for line in new), result.stdout
    assert "check failed: " in result.stdout and "--baseline captures/a2a-baseline.json" in result.stdout
    # 04-polling's accepted polls are still accepted; nothing of the files not given is called fixed
    assert not any(line.startswith("captures/04-polling.http:") for line in result.stdout.splitlines())
    assert "09-mistakes.http) no longer occurs" not in result.stdout


@pytest.mark.live
def test_a_har_holding_a_token_fails_the_scan_hook_without_showing_it(tmp_path, pre_commit_home):
    project = _project(tmp_path)
    har = project / "session.har"
    subprocess.run([sys.executable, "-m", "a2a_capture", "convert", str(CAPTURES / "02-blocking-send.http"),
                    "--to", "har", "-o", str(har)], check=True, cwd=ROOT)
    data = json.loads(har.read_text())
    data["log"]["entries"][0]["request"]["headers"].append({"name": "Authorization", "value": "Bearer planted-77"})
    har.write_text(json.dumps(data))
    assert sources.capture(str(har)).exchanges  # the HAR reads as a capture
    result = _try_repo(project, pre_commit_home, "a2a-capture-scan", "session.har", "captures/02-blocking-send.http")
    assert result.returncode == 1, result.stdout + result.stderr
    assert "session.har:" in result.stdout and "request header Authorization (by name)" in result.stdout
    assert "planted-77" not in result.stdout + result.stderr
    assert "captures/02-blocking-send.http:" not in result.stdout  # recorded with redaction: clean
