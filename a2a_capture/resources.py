"""Where the files shipped beside the code live, installed or in a source checkout."""

from __future__ import annotations

from pathlib import Path

_PACKAGE = Path(__file__).resolve().parent


def _shipped(name: str) -> Path:
    """The wheel puts top-level folders inside the package; a checkout has them beside it."""
    inside = _PACKAGE / name
    if inside.is_dir():
        return inside
    return _PACKAGE.parent / name


def templates_dir() -> Path:
    return _shipped("templates")


def addons_dir() -> Path:
    return _shipped("addons")
