"""`--engine dask`: the same per-session analysis on a real Dask cluster (two worker processes on
127.0.0.1) gives what the serial run gives, for analyze, check and export, from folders and URLs."""

from __future__ import annotations

import os
import subprocess
import sys

import distributed
import pyarrow.parquet as pyarrow_parquet
import pytest

from a2a_capture.batch.analysis import analyze_many
from a2a_capture.batch.export import export
from a2a_capture.record.process import free_port
from a2a_capture.report import machine
from tests.fleet import write_fleet
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
