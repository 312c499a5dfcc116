"""Make every stack's venv now (CI does this before pytest, so tests do not wait on pip)."""

import sys

from tests.stacks import NAMES, environment

for name in NAMES:
    print(f"{name}: {environment(name)}", file=sys.stderr)
