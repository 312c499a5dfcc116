"""Benchmark `a2a-capture view` on a big session: how soon the page shows rows, how long reading the
whole session takes, and how long a filter takes in the page, in real headless Chromium.

The view is served by the command as a user runs it; the session is generated (bench/analyze.py's
recurring shape: polls, refetches and sends of a few tasks, about 1,400 bytes an exchange). The
floor is reading the file's bytes once, measured in the same run. No figure here is a pass/fail.

    python bench/view.py                    # 100,000 exchanges
    python bench/view.py --exchanges 5000   # quicker
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import analyze as sessions  # bench/analyze.py's generator

_URL = re.compile(rb"(http://127\.0\.0\.1:\d+/\?token=[\w-]+)")
_BYTES_PER_EXCHANGE = 1400


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--exchanges", type=int, default=100_000, help="about this many exchanges (default 100,000)")
    parser.add_argument("--filters", type=int, default=5, help="filters timed in the page; the best and worst count")
    args = parser.parse_args()
    from playwright.sync_api import sync_playwright

    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "big.http"
        count = sessions.generate("recurring", path, Path(tmp) / "big.idx", args.exchanges * _BYTES_PER_EXCHANGE)
        size = path.stat().st_size
        started = time.perf_counter()
        path.read_bytes()
        floor = time.perf_counter() - started
        began = time.perf_counter()
        process = subprocess.Popen([sys.executable, "-m", "a2a_capture.cli", "view", str(path), "--listen",
                                    "127.0.0.1:0"], stderr=subprocess.PIPE, stdout=subprocess.DEVNULL,
                                   env={**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parent.parent)})
        try:
            url = _URL.search(process.stderr.readline()).group(1).decode()
            with sync_playwright() as playwright:
                browser = playwright.chromium.launch(executable_path=_chromium(), args=[
                    "--no-sandbox", "--disable-gpu", "--disable-background-networking"])
                page = browser.new_page(viewport={"width": 1400, "height": 900})
                opened = time.perf_counter() - began
                page.goto(url)
                page.wait_for_selector("#spacer .row", timeout=120_000)
                first = time.perf_counter() - began
                page.wait_for_function(f"() => document.querySelector('#summary').textContent"
                                       f".startsWith('{count} exchanges')", timeout=1_800_000, polling=500)
                whole = time.perf_counter() - began
                timings = []
                for value in ["wasted", "", "failed", "", "flagged", ""][: max(args.filters, 1)]:
                    page.evaluate("() => performance.clearMeasures('filter')")
                    page.select_option("#f-outcome", value)
                    page.wait_for_function("() => performance.getEntriesByName('filter').length > 0")
                    timings.append(page.evaluate("() => performance.getEntriesByName('filter')[0].duration"))
                browser.close()
        finally:
            process.terminate()
            process.wait(timeout=30)
    print(f"view of {count:,} exchanges ({size / 1e6:.0f} MB)")
    print(f"{'measure':<44}{'seconds':>10}")
    print(f"{'floor: read the file once':<44}{floor:>10.3f}")
    print(f"{'command start to its address printed':<44}{opened:>10.3f}")
    print(f"{'command start to first rows in the page':<44}{first:>10.3f}")
    print(f"{'command start to every row in the page':<44}{whole:>10.3f}")
    print(f"{'a filter over every row (best)':<44}{min(timings) / 1000:>10.3f}")
    print(f"{'a filter over every row (worst)':<44}{max(timings) / 1000:>10.3f}")


def _chromium() -> str:
    import shutil

    found = shutil.which("chromium") or shutil.which("chromium-browser")
    if not found:
        sys.exit("bench/view.py needs Chromium (Debian's chromium)")
    return found


if __name__ == "__main__":
    main()
