"""`--engine dask`: the same per-session analysis on a real Dask cluster (two worker processes on
127.0.0.1) gives what the serial run gives, for analyze, check and export, from folders and URLs;
each session's findings are handed over as they come back, in order, and a broken capture is
its own one-line error while the others are still analyzed."""

from __future__ import annotations

import functools
import json
import operator
import os
import shutil
import subprocess
import sys

import dask
import distributed
import pyarrow.parquet as pyarrow_parquet
import pytest

from a2a_capture.batch import engines
from a2a_capture.batch.analysis import analyze_many
from a2a_capture.batch.export import export
from a2a_capture.record.process import free_port
from a2a_capture.report import machine
from tests.fleet import write_fleet
from tests.test_batch_jobs import handed_over_in_turn
from tests.test_cli_show import run

pytestmark = pytest.mark.live  # a real Dask scheduler and two worker processes on 127.0.0.1


@pytest.fixture(scope="module")
def cluster():
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1",
                                  scheduler_port=free_port(), dashboard_address=None) as cluster:
        yield cluster


@pytest.fixture(scope="module")
def fleet(tmp_path_factory):
    folder = tmp_path_factory.mktemp("fleet")
    write_fleet(folder, sessions=12)
    return folder


def test_the_cluster_gives_the_serial_results(cluster, fleet):
    serial = analyze_many([str(fleet)], grouping="file", jobs=1)
    with distributed.Client(cluster.scheduler_address) as client, distributed.get_task_stream(client) as stream:
        spread = analyze_many([str(fleet)], grouping="file", engine="dask", scheduler=cluster.scheduler_address)
    assert spread.findings and machine.to_json(spread) == machine.to_json(serial)
    workers = {task["worker"] for task in stream.data}
    assert len(workers) == 2, workers  # both worker processes took sessions
    assert all(address.startswith("tcp://127.0.0.1:") for address in workers)


def test_the_cli_on_a_scheduler(cluster, fleet):
    serial = run("analyze", "--each-folder", "--jobs", "1", "--format", "json", str(fleet))
    spread = run("analyze", "--each-folder", "--engine", "dask", "--scheduler", cluster.scheduler_address,
                 "--format", "json", str(fleet))
    assert serial.returncode == spread.returncode == 1, spread.stderr
    assert serial.stdout == spread.stdout


def test_an_unreachable_scheduler_is_one_line(fleet):
    address = f"tcp://127.0.0.1:{free_port()}"
    unreachable = subprocess.run(
        [sys.executable, "-m", "a2a_capture.cli", "analyze", "--each-file", "--engine", "dask", "--scheduler",
         address, str(fleet)], capture_output=True, timeout=120,
        env={**os.environ, "DASK_DISTRIBUTED__COMM__TIMEOUTS__CONNECT": "2s"})
    assert unreachable.returncode == 2
    assert unreachable.stderr.decode().startswith(f"a2a-capture: error: --scheduler {address}: cannot reach")
    assert unreachable.stderr.count(b"\n") == 1


def test_export_from_a_url_on_the_cluster(cluster, fleet, tmp_path):
    export([str(fleet)], str(tmp_path / "serial"), jobs=1)
    export([fleet.as_uri()], str(tmp_path / "spread"), engine="dask", scheduler=cluster.scheduler_address)
    for table in ("sessions", "exchanges", "calls", "findings"):
        tables = [pyarrow_parquet.read_table(tmp_path / kind / table).drop_columns(
            [name for name in ("exported_at", "batch", "files", "file") if name in
             pyarrow_parquet.read_schema(next((tmp_path / kind / table).iterdir())).names]).to_pylist()
            for kind in ("serial", "spread")]
        assert tables[0] == tables[1] and tables[0], table
    files = pyarrow_parquet.read_table(tmp_path / "spread" / "findings", columns=["file"]).column("file").to_pylist()
    assert all(file.startswith(fleet.as_uri() + "/") for file in files)


def test_findings_are_handed_over_as_sessions_come_back(cluster, tmp_path):
    window = engines.AHEAD_PER_THREAD * 2  # tasks on the cluster ahead of the one written next, at most
    paths = [str(path) for path in write_fleet(tmp_path, sessions=window * engines.CHUNK + 40)]
    # the tasks the scheduler holds at each finding
    known = handed_over_in_turn(paths, lambda: len(cluster.scheduler.tasks), engine="dask",
                                scheduler=cluster.scheduler_address)
    # never more tasks on the cluster than the window of two threads: memory stays flat
    assert max(known) <= window < len(paths) / engines.CHUNK


def test_a_broken_capture_is_one_line_and_the_others_are_analyzed(cluster, fleet, tmp_path):
    folder = tmp_path / "fleet"
    shutil.copytree(fleet, folder)
    broken = folder / "2026-11-20" / "broken.http"  # sorted among the others, neither first nor last
    broken.write_bytes(b"### 1\nHTTP/1.1 200 OK\n\n")
    others = sorted(str(path) for path in folder.rglob("session-*.http"))
    expected = machine.to_json(analyze_many(others, grouping="file", jobs=1))
    for engine in (["--jobs", "1"], ["--jobs", "2"], ["--engine", "dask", "--scheduler", cluster.scheduler_address]):
        result = run("analyze", "--each-file", *engine, "--format", "json", str(folder))
        assert result.returncode == 2, engine
        assert result.stderr.decode().startswith(f"a2a-capture: error: {broken}:2:1: "), result.stderr
        assert result.stderr.count(b"\n") == 1
        assert json.loads(result.stdout) == json.loads(expected), engine


def test_threads_in_this_process(fleet):
    serial = run("analyze", "--each-file", "--jobs", "1", "--format", "json", str(fleet))
    threads = run("analyze", "--each-file", "--engine", "dask", "--scheduler", "threads", "--jobs", "2",
                  "--format", "json", str(fleet))
    assert serial.returncode == threads.returncode == 1, threads.stderr
    assert serial.stdout == threads.stdout


def test_a_worker_that_dies_fails_its_sessions_alone():
    # a task that ends its worker's process (as a memory limit would), among tasks that do not
    items = [functools.partial(abs, -1), functools.partial(os._exit, 3), functools.partial(abs, -2)]
    failures = []
    # no retry, and one task at a time on the worker, so its death touches that task alone
    alone = {"distributed.scheduler.allowed-failures": 0, "distributed.scheduler.worker-saturation": 1.0}
    with dask.config.set(alone), \
            distributed.LocalCluster(n_workers=1, threads_per_worker=1, processes=True, host="127.0.0.1",
                                     scheduler_port=free_port(), dashboard_address="127.0.0.1:0") as one:
        results = list(engines.stream(operator.call, items, engine="dask", scheduler=one.scheduler_address,
                                      on_failure=failures.append))
    assert results == [1, 2]
    assert failures == [f"{items[1]}: the Dask worker analyzing it died (see the workers' logs; a memory limit is "
                        "the usual cause)"]
