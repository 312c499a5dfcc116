"""A gRPC call's status is its trailers' `grpc-status`, not HTTP's 200: show and the report say it."""

from __future__ import annotations

import json

from a2a.types import a2a_pb2

from a2a_capture import capture_bytes
from a2a_capture.capture import Capture
from a2a_capture.report import walkthrough
from a2a_capture.report.render import render
from tests import grpc_builders as gb
from tests.cli import run


def _capture(tmp_path):
    path = tmp_path / "statuses.http"
    path.write_bytes(capture_bytes(Capture(exchanges=[
        gb.call(1, "ListTasks", a2a_pb2.ListTasksRequest(), [a2a_pb2.ListTasksResponse()]),
        gb.call(2, "GetTask", a2a_pb2.GetTaskRequest(id="t-9"), status=5, message="Task not found",
                reason="TASK_NOT_FOUND"),
        gb.call(3, "CancelTask", a2a_pb2.CancelTaskRequest(id="t-9"), status=42, message="odd"),
    ])))
    return path


def test_show_gives_each_grpc_call_its_own_status_in_every_format(tmp_path):
    path = _capture(tmp_path)
    table = run("show", str(path))
    assert table.returncode == 0, table.stderr
    statuses = [line.split()[4:6] for line in table.stdout.decode().splitlines()[1:]]
    assert statuses == [["OK", "(0)"], ["NOT_FOUND", "(5)"], ["unknown", "status"]], table.stdout
    assert b" 200 " not in table.stdout

    rows = json.loads(run("show", str(path), "--format", "json").stdout)
    assert [(r["status"], r["grpc_status"], r["grpc_status_name"]) for r in rows] == [
        (200, 0, "OK"), (200, 5, "NOT_FOUND"), (200, 42, None)]

    written = run("show", str(path), "--format", "http").stdout  # the capture itself: its status paragraphs
    assert b"grpc status \xc2\xb7 NOT_FOUND (5) \xc2\xb7 TASK_NOT_FOUND" in written


def test_an_http_exchange_keeps_its_http_status_and_no_grpc_one(kit):
    rows = json.loads(run("show", str(kit / "05-streaming.http"), "--format", "json").stdout)
    assert rows and all(r["grpc_status"] is None and r["grpc_status_name"] is None for r in rows)
    assert any(r["status"] == 200 for r in rows)


def test_the_report_index_and_outcomes_give_the_grpc_status(tmp_path, monkeypatch):
    monkeypatch.setattr(walkthrough, "LONG_SESSION", 1)  # the dense index, with its status column
    model = walkthrough.build([str(_capture(tmp_path))])
    assert [(v.status, v.grpc_status) for v in model.exchanges] == [
        (200, "OK (0)"), (200, "NOT_FOUND (5)"), (200, "unknown status 42")]
    assert model.exchanges[0].outcome == "OK (0)"  # no task, no error: the status, not "200"
    html = render(model, "html")
    assert '<span class="status failed">NOT_FOUND (5)</span>' in html and '<span class="status">200</span>' not in html
    assert "Outcome: OK (0)" in render(model, "md")
