"""How tests/stacks installs a stack, without installing one."""

from __future__ import annotations

import pytest

from tests import stacks


def test_an_npm_stack_without_node_says_what_is_missing(tmp_path, monkeypatch):
    """No node or npm on PATH: a StackUnavailable naming both (the test that needs it is skipped
    with that reason, or fails under CI), and nothing half-installed is left behind."""
    monkeypatch.setenv("A2A_CAPTURE_STACKS", str(tmp_path / "stacks"))
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    assert stacks.is_npm("a2a_js") and not stacks.is_npm("fasta2a")
    with pytest.raises(stacks.StackUnavailable, match=r"^a2a_js needs node and npm on PATH"):
        stacks.environment("a2a_js")
    assert [path.name for path in (tmp_path / "stacks").iterdir()] == ["a2a_js.lock"]


def test_an_npm_stack_is_keyed_by_its_lockfile(tmp_path, monkeypatch):
    """Installed under its name and the hash of package-lock.json, as a Python stack is under
    the hash of requirements.txt: a changed lock gets a new install, an unchanged one is reused."""
    import hashlib

    monkeypatch.setenv("A2A_CAPTURE_STACKS", str(tmp_path))
    digest = hashlib.sha256((stacks.HERE / "a2a_js" / "package-lock.json").read_bytes()).hexdigest()[:12]
    (tmp_path / f"a2a_js-{digest}").mkdir()
    (tmp_path / f"a2a_js-{digest}" / "ready").write_text(digest)
    assert stacks.environment("a2a_js") == tmp_path / f"a2a_js-{digest}"
