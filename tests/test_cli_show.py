"""`a2a-capture show` as a user runs it, through the checkout's own command (never one found on PATH)."""

from __future__ import annotations

import json
import tracemalloc

import pytest

from a2a_capture.errors import CaptureFormatError
from a2a_capture.show import iter_rows, json_rows, rows
from tests.builders import fetch_card, rpc, task, write
from tests.cli import run
from tests.conftest import DATA


def test_show_prints_the_stream_with_its_nine_events(kit):
    result = run("show", str(kit / "05-streaming.http"))
    assert result.returncode == 0, result.stderr
    lines = result.stdout.decode().splitlines()
    assert lines[0].split()[:5] == ["#", "title", "method", "target", "status"]
    row = lines[1].split()
    assert row[0] == "1" and "SendStreamingMessage:" in row
    assert row[row.index("200") + 1] == "completed" and row[-3] == "9"  # status, outcome; events


def test_show_json_has_the_promised_keys(kit):
    result = run("show", "--format", "json", str(kit / "15-push.http"), str(kit / "07-auth-required.http"))
    assert result.returncode == 0, result.stderr
    rows = json.loads(result.stdout)
    assert len(rows) == 12 + 2
    for row in rows:
        assert {"number", "title", "method", "target", "status", "events"} <= row.keys()
    webhook = rows[4]
    assert webhook["label"] == "webhook 1" and webhook["status"] is None and webhook["events"] == 0
    stream = rows[12]
    assert stream["events"] == 6  # three frames in the block, three shown after exchange 2


def test_show_http_writes_the_capture_back(kit):
    path = kit / "19-planner.http"
    result = run("show", "--format", "http", "--no-redact", str(path))
    assert result.returncode == 0, result.stderr
    assert result.stdout == path.read_bytes()
    masked = run("show", "--format", "http", str(path))  # by default its credentials are masked
    assert masked.returncode == 0 and b"Authorization: Bearer [redacted: bearer credentials, sha256:" in masked.stdout
    assert masked.stdout.replace(b"\n", b"").count(b"### ") == path.read_bytes().count(b"### ")


def test_show_reads_a_recorded_capture():
    result = run("show", "--format", "json", str(DATA / "sample-session.http"))
    rows = json.loads(result.stdout)
    assert [(r["number"], r["events"]) for r in rows] == [(1, 0), (2, 4), (3, 0)]


@pytest.mark.parametrize(
    ("content", "where", "expected"),
    [
        (b"### 1 \xc2\xb7 x\nHTTP/1.1 200 OK\n\n", ":2:1:", "a response with no request"),
        (b"garbage\n", ":1:1:", "expected a block header"),
        (b"### 1\nGET / HTTP/1.1\nHost: a\nbroken header\n\n", ":4:1:", "header line"),
    ],
)
def test_a_broken_capture_is_one_line_and_exit_2(tmp_path, content, where, expected):
    path = tmp_path / "broken.http"
    path.write_bytes(content)
    result = run("show", str(path))
    assert result.returncode == 2
    err = result.stderr.decode()
    assert err.count("\n") == 1, err
    assert "Traceback" not in err
    assert f"{path}{where}" in err and expected in err


def test_a_missing_file_is_a_clear_error(tmp_path):
    result = run("show", str(tmp_path / "nope.http"))
    assert result.returncode == 2
    assert "nope.http" in result.stderr.decode() and "Traceback" not in result.stderr.decode()


def test_help_and_usage_errors():
    assert run("--help").returncode == 0
    assert b"show" in run("--help").stdout
    assert run("show").returncode == 2  # no file given
    assert run("show", "--format", "xml", "x.http").returncode == 2


def test_rows_are_given_as_they_are_read(tmp_path):
    """The first row comes before the rest of the file is read: a broken second block still lets it out."""
    path = write(tmp_path, fetch_card(1), "### 2 · broken\ngarbage\n")
    rows = iter_rows(path)
    assert next(rows).number == 1
    with pytest.raises(CaptureFormatError):
        next(rows)


def test_show_json_holds_no_more_than_a_few_rows(tmp_path):
    calls = (rpc(number, "GetTask", {"id": "t"}, result=task("t", "TASK_STATE_WORKING")) for number in range(2, 3000))
    path = write(tmp_path, fetch_card(1), *calls)
    assert len(json.loads("".join(json_rows(iter_rows(path))))) == 2999
    peaks = []
    for table in (lambda: iter_rows(path), lambda: rows(path)):  # streamed, then every row held
        tracemalloc.start()
        try:
            assert sum(1 for _ in json_rows(table())) == 3000
            peaks.append(tracemalloc.get_traced_memory()[1])
        finally:
            tracemalloc.stop()
    streamed, held = peaks
    assert streamed * 2 < held, peaks
