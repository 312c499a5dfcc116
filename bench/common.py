"""What the benchmarks share: each measured run in a fresh subprocess, timed by CPU, with its peak RSS."""

from __future__ import annotations

import json
import resource
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path


def run_child(run: Callable[[], dict]) -> None:
    """Run one measurement in this (child) process and print its result as a JSON line."""
    start = time.process_time()  # CPU time: steadier than wall time on a shared machine
    result = run()
    result["seconds"] = time.process_time() - start
    result["max_rss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(json.dumps(result))


def measure(script: str, mode: str, *args: Path | str) -> dict:
    """Run ``script --child mode args...`` in a fresh process (its peak memory is its own)."""
    output = subprocess.run([sys.executable, script, "--child", mode, *map(str, args)],
                            check=True, capture_output=True, text=True).stdout
    return json.loads(output.strip().splitlines()[-1])
