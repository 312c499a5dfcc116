"""Shared fixtures: where the kit captures are, and a helper to read bytes as a capture."""

from __future__ import annotations

from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
KIT = ROOT.parent / "shared" / "kit-captures"
DATA = Path(__file__).resolve().parent / "data"


@pytest.fixture(scope="session")
def kit() -> Path:
    """The A2A 101 kit captures; CI lays ../shared beside the clone."""
    assert KIT.is_dir(), f"the kit captures are expected at {KIT} (../shared/kit-captures)"
    return KIT
