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

Then the memory of many files: `analyze --each-file --format json -o FILE` in a process of its
own on folders of --files small sessions plus a few large ones (--large, of --large-tasks tasks
each), in this process (--jobs 1), with --jobs, and on the Dask cluster; prints the peak RSS of
that process (the workers' are their own), its growth from the fewest files to the most, and
each engine's peak as a ratio to the in-process engine's on the same files. Flat means the
findings went out as they came and only the window of sessions in flight was held.

    python bench/many.py --sessions 200 --files 200,800 --large-tasks 300   # quicker
"""

from __future__ import annotations

import argparse
import os
import random
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from a2a_capture.batch.analysis import analyze_many
from a2a_capture.batch.engines import cores
from a2a_capture.batch.export import export
from a2a_capture.report import machine
from tests.fleet import FIRST_DAY, session_capture, write_fleet

#: runs `a2a-capture` in this process of its own and writes its peak RSS in kB: VmHWM, this process's
#: own (not its workers'), where ru_maxrss would keep the forking parent's size across exec
PEAK_RSS = """import atexit, sys
peak = sys.argv.pop(1)
def write():
    line = next(line for line in open("/proc/self/status") if line.startswith("VmHWM:"))
    open(peak, "w").write(line.split()[1])
atexit.register(write)
sys.argv[0] = "a2a-capture"
from a2a_capture.cli import main
main()
"""


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
    parser.add_argument("--files", default="1000,4000", help="small sessions in each memory run, fewest first")
    parser.add_argument("--large", type=int, default=3, help="large sessions among them (first, middle, last)")
    parser.add_argument("--large-tasks", type=int, default=3000, help="tasks in a large session")
    args = parser.parse_args()
    speed(args)
    memory(args, [int(count) for count in args.files.split(",")])


def speed(args) -> None:
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


def memory(args, counts: list[int]) -> None:
    """Peak RSS of the analyzing process against the number of files, for each engine."""
    from distributed import LocalCluster

    engines = {"in-process (--jobs 1)": ["--jobs", "1"], f"--jobs {args.jobs}": ["--jobs", str(args.jobs)]}
    peaks: dict[str, list[float]] = {}
    sizes = []
    with tempfile.TemporaryDirectory(prefix="a2a-capture-bench-") as tmp, \
            LocalCluster(n_workers=args.jobs, threads_per_worker=1, processes=True, host="127.0.0.1",
                         dashboard_address=None) as cluster:
        engines[f"dask, {args.jobs} workers"] = ["--engine", "dask", "--scheduler", cluster.scheduler_address]
        for count in counts:
            folder = Path(tmp) / f"files-{count}"
            paths = many_files(folder, count, args.large, args.large_tasks)
            sizes.append((len(paths), sum(path.stat().st_size for path in paths) / 1e6))
            for name, options in engines.items():
                peaks.setdefault(name, []).append(peak_rss(Path(tmp), folder, options))
    print(f"\npeak RSS (MB) of the process running analyze --each-file --format json -o FILE, {args.large} sessions "
          f"of {args.large_tasks} tasks among the small ones")
    print(f"{'engine':<24}" + "".join(f"{f'{files} files, {mb:.0f} MB':>22}" for files, mb in sizes)
          + f"{'growth':>8}" + "".join(f"{f'/ in-process @{files}':>20}" for files, _ in sizes))
    base = peaks["in-process (--jobs 1)"]
    for name, values in peaks.items():
        print(f"{name:<24}" + "".join(f"{value:22.1f}" for value in values) + f"{values[-1] / values[0]:7.2f}x"
              + "".join(f"{value / own:19.2f}x" for value, own in zip(values, base, strict=True)))


def many_files(folder: Path, count: int, large: int, tasks: int) -> list[Path]:
    """``count`` small sessions and ``large`` large ones spread among them (first, middle, last)."""
    paths = write_fleet(folder, count)
    rng = random.Random(7)
    for index in range(large):
        beside = paths[index * (len(paths) - 1) // max(1, large - 1)]
        path = beside.with_name(beside.stem + "-large.http")
        path.write_bytes(session_capture(rng, "support-ui/5.0", "search", FIRST_DAY, tasks=tasks))
        paths.append(path)
    return paths


def peak_rss(tmp: Path, folder: Path, options: list[str]) -> float:
    """Runs analyze on the folder in a process of its own; its peak RSS in MB."""
    peak, output = tmp / "peak", tmp / "findings.json"
    command = [sys.executable, "-c", PEAK_RSS, str(peak), "analyze", "--each-file", *options, "--format", "json",
               "-o", str(output), str(folder)]
    done = subprocess.run(command, capture_output=True, env={**os.environ, "PYTHONPATH": sys.path[0]})
    if done.returncode not in (0, 1):
        raise SystemExit(f"{' '.join(command[3:])} failed: {done.stderr.decode()}")
    return int(peak.read_text()) / 1024


if __name__ == "__main__":
    main()
