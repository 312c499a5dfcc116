"""Install every stack now (CI does this before pytest, so tests do not wait on pip or npm).

The stacks are installed side by side: each is mostly waiting on downloads, and each has its own
lock and folder. Exits 1 naming every stack that could not be installed."""

import sys
from concurrent.futures import ThreadPoolExecutor

from tests.stacks import NAMES, environment


def _install(name: str) -> str | None:
    try:
        print(f"{name}: {environment(name)}", file=sys.stderr)
    except Exception as error:  # every stack's failure is reported, not the first only
        print(f"{name}: {error}", file=sys.stderr)
        return name
    return None


with ThreadPoolExecutor(max_workers=4) as pool:
    failed = [name for name in pool.map(_install, NAMES) if name]
if failed:
    sys.exit(f"stacks not installed: {', '.join(failed)}")
