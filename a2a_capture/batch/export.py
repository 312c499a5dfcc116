"""Analysis results as Parquet tables a query engine reads: one folder per table, one file per
export run, so a daily job adds new captures as new files beside the old ones.

A session already in the tables (by the digest of its contents) is not exported again. Each
run writes its sessions file last: it commits the run. A run that died before it left files
in the other tables that no sessions file vouches for; the next run removes them first.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime

from a2a_capture.analyze.config import Config
from a2a_capture.batch import engines
from a2a_capture.batch.sessions import Grouping, group
from a2a_capture.batch.tables import TABLES, digest, session_rows
from a2a_capture.errors import A2ACaptureError

#: sessions per Parquet file: bounds the memory an export holds, and the work a crash loses
BATCH = 2000


@dataclass
class Exported:
    sessions: int = 0
    known: int = 0
    exchanges: int = 0
    findings: int = 0
    batches: list[str] | None = None


def export(paths: Sequence[str], out: str, config: Config | None = None, *, grouping: Grouping = "file",
           jobs: int | None = None, engine: engines.Engine = "local", scheduler: str | None = None,
           redact: bool = True) -> Exported:
    """Analyze the sessions the paths form and append the new ones to the tables in ``out``; with
    ``redact``, every secret the policy finds in the rows is masked (here, as the rows come back:
    the policy in force is this process's)."""
    pa, pq = _pyarrow()
    sessions = group(paths, grouping)
    _remove_uncommitted(out)
    known = _known_sessions(out, pq)
    ids = engines.run(digest, sessions, jobs=jobs, engine=engine, scheduler=scheduler)
    new, seen = [], set(known)
    for session_id, files in zip(ids, sessions, strict=True):
        if session_id not in seen:
            seen.add(session_id)
            new.append((session_id, files))
    result = Exported(known=len(sessions) - len(new), batches=[])
    for start in range(0, len(new), BATCH):
        chunk = new[start:start + BATCH]
        rows = engines.run(session_rows, chunk, config, jobs=jobs, engine=engine, scheduler=scheduler)
        if redact:
            rows = [masked_rows(found, files) for found, (_, files) in zip(rows, chunk, strict=True)]
        name = _write_batch(out, [session_id for session_id, _ in chunk], rows, pa, pq)
        result.batches.append(name)
        result.sessions += len(chunk)
        result.exchanges += sum(len(r["exchanges"]) for r in rows)
        result.findings += sum(len(r["findings"]) for r in rows)
    return result


def masked_rows(rows: dict[str, list[dict]], files: list[str]) -> dict[str, list[dict]]:
    """A session's rows with secrets masked: targets as request targets, every other string as text."""
    from a2a_capture.redact.mask import Masker

    masker = Masker.for_files(files)
    masked: dict[str, list[dict]] = {}
    for table, items in rows.items():
        masked[table] = [{key: (masker.redactor.target(value)[0] if key == "target" and isinstance(value, str)
                                else masker.model(value)) for key, value in row.items()} for row in items]
    return masked


def arrow_schema(table: str):
    pa, _ = _pyarrow()
    kinds = {"string": pa.string(), "int64": pa.int64(), "float64": pa.float64(), "bool": pa.bool_(),
             "timestamp": pa.timestamp("us", tz="UTC"), "list<string>": pa.list_(pa.string())}
    return pa.schema([pa.field(name, kinds[kind]) for name, kind, _ in TABLES[table]])


def _write_batch(out: str, session_ids: list[str], rows: list[dict], pa, pq) -> str:
    name = "batch-" + hashlib.sha256("\n".join(session_ids).encode()).hexdigest()[:16]
    exported_at = datetime.now(UTC)
    for table in (*(t for t in TABLES if t != "sessions"), "sessions"):  # sessions last: it commits
        records = [row for result in rows for row in result[table]]
        if table == "sessions":
            for record in records:
                record.update(exported_at=exported_at, batch=name)
        folder = os.path.join(out, table)
        os.makedirs(folder, exist_ok=True)
        target = os.path.join(folder, name + ".parquet")
        pq.write_table(pa.Table.from_pylist(records, schema=arrow_schema(table)), target + ".tmp")
        os.replace(target + ".tmp", target)
    return name


def _known_sessions(out: str, pq) -> set[str]:
    folder = os.path.join(out, "sessions")
    if not os.path.isdir(folder):
        return set()
    known = set()
    for name in sorted(os.listdir(folder)):
        if name.endswith(".parquet"):
            path = os.path.join(folder, name)
            try:
                known.update(pq.read_table(path, columns=["session_id"]).column("session_id").to_pylist())
            except (OSError, KeyError, ValueError) as error:
                raise A2ACaptureError(f"{path}: not a sessions table of a2a-capture ({error})") from None
    return known


def _remove_uncommitted(out: str) -> None:
    """Files of a run that died before writing its sessions file."""
    sessions = os.path.join(out, "sessions")
    committed = {name for name in os.listdir(sessions)} if os.path.isdir(sessions) else set()
    for table in TABLES:
        folder = os.path.join(out, table)
        if not os.path.isdir(folder):
            continue
        for name in os.listdir(folder):
            if name.endswith(".tmp") or (table != "sessions" and name.endswith(".parquet") and name not in committed):
                os.remove(os.path.join(folder, name))


def _pyarrow():
    try:
        import pyarrow as pa
        import pyarrow.parquet as pq
    except ImportError:
        raise A2ACaptureError("export writes Parquet with pyarrow: pip install 'a2a-capture[export]'") from None
    return pa, pq
