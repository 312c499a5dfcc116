"""Benchmark reports on a large session: 10,000 realistic exchanges, streams included.

    python bench/report.py                  # 10,000 exchanges
    python bench/report.py --exchanges 2000

Prints the time to read the capture (the baseline), to analyze it, and to render the HTML
and Markdown reports, with ratios against the baseline measured in the same run.
"""

from __future__ import annotations

import argparse
import random
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from read import _exchange

from a2a_capture.analyze.engine import analyze
from a2a_capture.capture import CaptureWriter, iter_exchanges
from a2a_capture.report import render, walkthrough


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--exchanges", type=int, default=10_000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "large.http"
        rng, writer = random.Random(3), CaptureWriter()
        with open(path, "wb") as out:
            for number in range(1, args.exchanges + 1):
                out.write(writer.block(_exchange(number, rng)))
        timings = {}
        started = time.perf_counter()
        sum(1 for _ in iter_exchanges(path))
        timings["read (baseline)"] = time.perf_counter() - started
        started = time.perf_counter()
        analysis = analyze([path], facts=True)
        timings["analyze"] = time.perf_counter() - started
        started = time.perf_counter()
        model = walkthrough.build([str(path)])
        timings["overview (first pass)"] = time.perf_counter() - started
        for kind in ("html", "md"):
            started = time.perf_counter()
            out = Path(tmp) / f"report.{kind}"
            render.write(model, kind, out)  # the walkthrough: the second pass, written as it is read
            timings[f"write {kind} ({out.stat().st_size / 1e6:.1f} MB)"] = time.perf_counter() - started
    base = timings["read (baseline)"]
    print(f"{args.exchanges} exchanges, {len(analysis.findings)} findings")
    for name, seconds in timings.items():
        print(f"{name:<26} {seconds:7.2f} s {seconds / base:7.2f}x")


if __name__ == "__main__":
    main()
