"""Install every stack now (CI does this before pytest, so tests do not wait on pip or npm)."""

import sys

from tests.stacks import NAMES, environment

for name in NAMES:
    print(f"{name}: {environment(name)}", file=sys.stderr)
