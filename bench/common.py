"""What the benchmarks share: each measured run in a fresh subprocess, timed by CPU, with its peak RSS."""

from __future__ import annotations

import compileall
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
    result["max_rss_mb"] = peak_rss_mb()
    print(json.dumps(result))


def peak_rss_mb() -> float:
    """This process's own peak RSS: VmHWM, the peak of its own memory (Linux). ru_maxrss, where there is
    no /proc, starts from the parent's peak, which the kernel keeps across exec: a child run after the
    bench made a 300 MB capture would report the bench's size, not its own."""
    try:
        with open("/proc/self/status") as status:
            return next(int(line.split()[1]) for line in status if line.startswith("VmHWM:")) / 1024
    except (OSError, StopIteration):
        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


#: the package measured: its bytecode is compiled before the first run (``measure``)
PACKAGE = Path(__file__).resolve().parent.parent / "a2a_capture"
_compiled = False


def compile_package() -> None:
    """Compile the package's bytecode once, as ``pip install`` does for an installed package: an
    editable checkout run with PYTHONDONTWRITEBYTECODE set (this machine sets it) would otherwise
    compile every module from source in every measured run, and time that as the command's start."""
    global _compiled
    if not _compiled:
        compileall.compile_dir(PACKAGE, quiet=1)
        _compiled = True


def measure(script: str, mode: str, *args: Path | str) -> dict:
    """Run ``script --child mode args...`` in a fresh process (its peak memory is its own), the
    package's bytecode compiled."""
    compile_package()
    output = subprocess.run([sys.executable, script, "--child", mode, *map(str, args)],
                            check=True, capture_output=True, text=True).stdout
    return json.loads(output.strip().splitlines()[-1])
