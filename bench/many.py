"""Benchmark many sessions: 1,000 generated captures of realistic size (one client's session
with one agent: discovery, a handful of tasks, streams, and each client's habits).

    python bench/many.py                  # 1,000 sessions
    python bench/many.py --sessions 50    # quicker

Times the analysis of every capture as its own session serially, with --jobs on every core,
and on a Dask LocalCluster of one worker process per core (started before the clock, as an
existing cluster would be), with the speed-ups as ratios against the serial run and the CPU
seconds each run used in all its processes (on a busy machine, equal CPU and no speed-up means
no core was free); checks that
every engine gave the serial results; and times the Parquet export against the analysis alone
(at the same --jobs), as sessions and megabytes per second.
"""

from __future__ import annotations

import argparse
import os
import resource
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from a2a_capture.batch.analysis import analyze_many
from a2a_capture.batch.engines import cores
from a2a_capture.batch.export import export
from a2a_capture.report import machine
from tests.fleet import write_fleet


def cpu() -> float:
    """CPU seconds of this process and of its children that have ended (pool and cluster workers)."""
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def burn(rounds: int) -> int:
    """Pure CPU work, no memory to speak of: what parallel processes gain on this machine now."""
    total = 0
    for number in range(rounds):
        total += number * number
    return total


def machine_ratio(jobs: int) -> float:
    """Serial time over the time in ``jobs`` processes of the same pure CPU work."""
    from concurrent.futures import ProcessPoolExecutor

    work = [1_000_000] * (4 * jobs)
    _, serial = timed(lambda: [burn(rounds) for rounds in work])
    with ProcessPoolExecutor(jobs) as pool:
        _, parallel = timed(lambda: list(pool.map(burn, work)))
    return serial / parallel


def measured(function, *args, **kwargs):
    """The result, wall seconds and CPU seconds (of every process that ended) of one run."""
    before = cpu()
    result, seconds = timed(function, *args, **kwargs)
    return result, seconds, cpu() - before


def timed(function, *args, **kwargs):
    started = time.perf_counter()
    result = function(*args, **kwargs)
    return result, time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sessions", type=int, default=1000)
    parser.add_argument("--jobs", type=int, default=cores(), help="processes (and Dask workers); default: every core")
    args = parser.parse_args()
    from distributed import LocalCluster

    load = os.getloadavg()[0]
    with tempfile.TemporaryDirectory(prefix="a2a-capture-bench-") as tmp:
        folder = Path(tmp) / "captures"
        paths = write_fleet(folder, args.sessions)
        megabytes = sum(path.stat().st_size for path in paths) / 1e6
        paths_arg = [str(folder)]
        calibration = [machine_ratio(args.jobs)]
        serial, serial_s, serial_cpu = measured(analyze_many, paths_arg, grouping="file", jobs=1)
        parallel, jobs_s, jobs_cpu = measured(analyze_many, paths_arg, grouping="file", jobs=args.jobs)
        calibration.append(machine_ratio(args.jobs))
        cluster_started = time.perf_counter()
        with LocalCluster(n_workers=args.jobs, threads_per_worker=1, processes=True, host="127.0.0.1",
                          dashboard_address=None) as cluster:
            startup_s = time.perf_counter() - cluster_started
            before = cpu()
            spread, dask_s = timed(analyze_many, paths_arg, grouping="file", engine="dask",
                                   scheduler=cluster.scheduler_address)
        dask_cpu = cpu() - before  # the workers' CPU counts once they have ended, with their stopping
        expected = machine.to_json(serial)
        assert machine.to_json(parallel) == expected, "--jobs differs from the serial run"
        assert machine.to_json(spread) == expected, "the Dask cluster differs from the serial run"
        exported, export_s = timed(export, paths_arg, str(Path(tmp) / "tables"), jobs=args.jobs)
        assert exported.sessions == len(paths)

    exchanges = serial.summary.exchanges
    print(f"{len(paths)} sessions, {exchanges} exchanges ({exchanges / len(paths):.0f} a session), "
          f"{megabytes:.1f} MB, {len(serial.findings)} findings; {args.jobs} processes on {cores()} cores")
    # a shared machine's other work takes cores from the parallel runs: say how busy it was
    print(f"load average at the start: {load:.1f} (a ratio near {args.jobs}x needs it well below {cores()})")
    print(f"{'engine':<34} {'seconds':>8} {'sessions/s':>11} {'speed-up':>9} {'CPU s':>7}")
    runs = (("serial (--jobs 1)", serial_s, serial_cpu), (f"--jobs {args.jobs}", jobs_s, jobs_cpu),
            (f"dask LocalCluster, {args.jobs} workers", dask_s, dask_cpu))
    for name, seconds, cpu_seconds in runs:
        print(f"{name:<34} {seconds:8.2f} {len(paths) / seconds:11.1f} {serial_s / seconds:8.2f}x {cpu_seconds:7.2f}")
    print(f"(the cluster took {startup_s:.2f} s to start, not counted; pure CPU work in {args.jobs} processes gained "
          f"{calibration[0]:.2f}x before these runs and {calibration[1]:.2f}x after --jobs: what the machine allowed)")
    print(f"export to Parquet, --jobs {args.jobs}: {export_s:.2f} s, {len(paths) / export_s:.1f} sessions/s, "
          f"{megabytes / export_s:.2f} MB/s; {export_s / jobs_s:.2f}x the analysis alone "
          f"({megabytes / jobs_s:.2f} MB/s)")


if __name__ == "__main__":
    main()
