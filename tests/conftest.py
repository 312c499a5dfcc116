"""Shared fixtures: where the kit captures are, and a helper to read bytes as a capture."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest_plugins = ["pytester"]

ROOT = Path(__file__).resolve().parent.parent
KIT = ROOT.parent / "shared" / "kit-captures"
DATA = Path(__file__).resolve().parent / "data"


@pytest.fixture(scope="session")
def kit() -> Path:
    """The A2A 101 kit captures; CI lays ../shared beside the clone."""
    assert KIT.is_dir(), f"the kit captures are expected at {KIT} (../shared/kit-captures)"
    return KIT


SARIF_SCHEMA_PACKAGE = "@microsoft/jest-sarif@1.0.0-beta.0"
SARIF_SCHEMA_MEMBER = "package/lib/schemas/sarif-2.1.0-rtm.5.json"


@pytest.fixture(scope="session")
def sarif_schema() -> dict:
    """The official SARIF 2.1.0 JSON schema, as Microsoft's SARIF test matchers ship it (npm)."""
    import json
    import os
    import subprocess
    import tarfile

    given = os.environ.get("SARIF_SCHEMA")
    if given:
        return json.loads(Path(given).read_text())
    cache = Path.home() / ".cache" / "a2a-capture-tests"
    target = cache / "sarif-2.1.0-rtm.5.json"
    if not target.is_file():
        cache.mkdir(parents=True, exist_ok=True)
        packed = subprocess.run(["npm", "pack", SARIF_SCHEMA_PACKAGE, "--pack-destination", str(cache)],
                                capture_output=True, text=True, timeout=300, check=True)
        archive = cache / packed.stdout.strip().splitlines()[-1]
        with tarfile.open(archive) as tar:
            target.write_bytes(tar.extractfile(SARIF_SCHEMA_MEMBER).read())
    return json.loads(target.read_text())


def pytest_configure(config):
    config.addinivalue_line("markers", "live: starts real servers and mitmdump; foreign stacks get venvs of their own")
