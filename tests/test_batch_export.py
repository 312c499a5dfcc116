"""`a2a-capture export`: Parquet tables DuckDB opens with the documented schema, appended
idempotently, answering the questions docs/many-sessions.md asks."""

from __future__ import annotations

import re
import shutil

import duckdb
import pytest

from a2a_capture.analyze.engine import analyze
from a2a_capture.batch.export import export
from a2a_capture.batch.tables import TABLES, schema_markdown
from tests.conftest import ROOT
from tests.fleet import write_fleet
from tests.test_cli_show import run

DOC = ROOT / "docs" / "many-sessions.md"
DUCKDB_TYPES = {"string": "VARCHAR", "int64": "BIGINT", "float64": "DOUBLE", "bool": "BOOLEAN",
                "timestamp": "TIMESTAMP WITH TIME ZONE", "list<string>": "VARCHAR[]"}


@pytest.fixture(scope="module")
def fleet(tmp_path_factory):
    folder = tmp_path_factory.mktemp("fleet")
    return folder, write_fleet(folder, sessions=40)


def connect(tables) -> duckdb.DuckDBPyConnection:
    """DuckDB with the views the doc creates, pointed at ``tables``."""
    con = duckdb.connect()
    views, *_ = _doc_queries()
    con.execute(views.replace("'tables/", f"'{tables}/"))
    return con


def _doc_queries() -> list[str]:
    return re.findall(r"```sql\n(.*?)```", DOC.read_text(), re.S)


def test_tables_open_in_duckdb_with_the_documented_schema(fleet, tmp_path):
    folder, paths = fleet
    result = run("export", str(folder), "-o", str(tmp_path / "tables"), "--jobs", "2")
    assert result.returncode == 0, result.stderr
    assert result.stderr.decode().startswith("exported 40 new sessions")
    con = connect(tmp_path / "tables")
    for table, columns in TABLES.items():
        described = con.execute(f"DESCRIBE {table}").fetchall()
        assert [(row[0], row[1]) for row in described] == [(name, DUCKDB_TYPES[kind]) for name, kind, _ in columns]
    # the rows say what the analyzer says, session by session
    first = analyze([str(paths[0])])
    findings = con.execute("SELECT rule, exchange, wasted, outcome, cost FROM findings WHERE file = ? "
                           "ORDER BY number, rule", [str(paths[0])]).fetchall()
    assert findings == sorted(((f.rule, f.exchange, f.wasted, f.outcome, f.cost) for f in first.findings),
                              key=lambda row: (int(row[1]), row[0]))
    assert con.execute("SELECT count(*) FROM sessions").fetchone()[0] == 40
    counts = [con.execute(query).fetchone()[0] for query in (
        "SELECT sum(exchanges) FROM sessions", "SELECT count(*) FROM exchanges", "SELECT count(*) FROM calls")]
    assert counts[0] == counts[1] == counts[2] > 40
    call = con.execute("SELECT operation, agent_name, client, version, duration_s > 0, started_at IS NOT NULL "
                       "FROM calls WHERE file = ? AND exchange = '2'", [str(paths[0])]).fetchone()
    assert call[1] in ("billing", "search", "planner") and call[2].endswith(("/2.1", "/5.0", "/0.9", "/1.4"))
    assert call[3:] == ("1.0", True, True)


def test_the_documented_questions(fleet, tmp_path):
    folder, _ = fleet
    export([str(folder)], str(tmp_path / "tables"), jobs=2)
    con = connect(tmp_path / "tables")
    _, clients, growth, cards = _doc_queries()
    wasters = con.execute(clients).fetchall()
    assert wasters[0][0] == "support-ui/5.0"  # polls every finished task
    assert dict((row[0], row[1]) for row in wasters)["ledger-sync/1.4"] == 0  # the careful one
    grown = con.execute(growth).fetchall()
    assert grown[0][0] == "poll-terminal" and grown[0][3] > 0  # more polling clients in the second week
    failing = con.execute(cards).fetchall()
    assert failing[0][:2] == ("billing", "capability-push")  # its card says no push; nightly-eval asks anyway
    assert failing[0][2] > 0 and failing[0][3] == 1


def test_a_daily_job_appends_only_new_captures(fleet, tmp_path):
    folder, paths = fleet
    tables = tmp_path / "tables"
    days = sorted({path.parent for path in paths})
    first = export([str(day) for day in days[:5]], str(tables), jobs=2)
    again = export([str(day) for day in days[:5]], str(tables), jobs=2)
    assert first.sessions > 0 and again.sessions == 0 and again.known == first.sessions
    # a copy of a capture elsewhere is the same session
    shutil.copy(paths[0], tmp_path / "copy.http")
    assert export([str(tmp_path / "copy.http")], str(tables)).sessions == 0
    # a run that died before committing leaves files the next run removes
    (tables / "findings" / "batch-dead.parquet").write_bytes(b"not parquet")
    later = export([str(folder)], str(tables), jobs=2)
    assert later.sessions == 40 - first.sessions and len(later.batches) == 1
    assert not (tables / "findings" / "batch-dead.parquet").exists()
    con = connect(tables)
    assert con.execute("SELECT count(*), count(DISTINCT session_id), count(DISTINCT batch) FROM sessions").fetchone() \
        == (40, 40, 2)
    names = [sorted(p.name for p in (tables / table).iterdir()) for table in TABLES]
    assert names[0] == names[1] == names[2] == names[3]


def test_export_reads_urls(fleet, tmp_path):
    _, paths = fleet
    day = sorted({path.parent for path in paths})[0]
    export([day.as_uri()], str(tmp_path / "tables"), jobs=1)
    con = connect(tmp_path / "tables")
    files = [row[0] for row in con.execute("SELECT DISTINCT file FROM findings ORDER BY file").fetchall()]
    assert files and all(file.startswith("file://" + str(day)) for file in files)
    messages = con.execute("SELECT message FROM findings").fetchall()
    assert not any("a2a-capture-" in message for (message,) in messages)  # no temporary copy shows


def test_unreadable_captures_are_one_line_and_write_nothing(kit, tmp_path):
    (tmp_path / "in").mkdir()
    shutil.copy(kit / "02-message-reply.http", tmp_path / "in" / "a.http")
    (tmp_path / "in" / "b.http").write_text("### 1 · broken\nGET\n")
    for paths in ([str(tmp_path / "in")], [str(tmp_path / "in" / "a.http"), str(tmp_path / "missing.http")]):
        result = run("export", *paths, "-o", str(tmp_path / "tables"), "--jobs", "2")
        assert result.returncode == 2 and result.stderr.count(b"\n") == 1, result.stderr
        assert result.stderr.startswith(b"a2a-capture: error: " + str(tmp_path).encode())
        assert not (tmp_path / "tables" / "sessions").exists()


def test_the_doc_shows_the_schema():
    assert schema_markdown() in DOC.read_text()
