"""The export's tables: their documented schema, and the rows of one session.

The schema is data (``TABLES``): the Parquet writer, docs/many-sessions.md and the tests read
it from here. Rows are built where the session is analyzed (a worker process or a Dask worker)
as plain dicts; only the parent needs pyarrow.
"""

from __future__ import annotations

import hashlib

from a2a_capture import __version__, nesting
from a2a_capture.a2a import spec
from a2a_capture.analyze.config import Config
from a2a_capture.analyze.engine import Analyzer
from a2a_capture.batch.fetch import local_copies, renamed
from a2a_capture.batch.sessions import filesystem, is_url
from a2a_capture.capture.models import Exchange
from a2a_capture.errors import CaptureFormatError
from a2a_capture.sources import exchanges

#: table -> columns as (name, type, meaning); types: string, int64, float64, bool, timestamp
#: (microseconds, UTC) and list<string>
TABLES: dict[str, list[tuple[str, str, str]]] = {
    "sessions": [
        ("session_id", "string", "SHA-256 of the session's files' contents, in order: the same capture exports once"),
        ("files", "list<string>", "the capture files (paths or URLs), in order"),
        ("started_at", "timestamp", "when the first recorded exchange started (null for unrecorded captures)"),
        ("ended_at", "timestamp", "when the last recorded exchange ended"),
        ("exchanges", "int64", "exchanges, webhooks included"),
        ("errors", "int64", "calls an agent answered with an error"),
        ("streams", "int64", "SendStreamingMessage and SubscribeToTask calls"),
        ("findings", "int64", "findings of every outcome"),
        ("wasted_round_trips", "int64", "exchanges with at least one wasted finding"),
        ("wasted_seconds", "float64", "the seconds those exchanges took, where recorded"),
        ("fragile_round_trips", "int64", "exchanges that worked only because an agent was lenient"),
        ("clients", "list<string>", "the clients seen (see calls.client), in order of appearance"),
        ("agents", "list<string>", "the agents called, by card name where a card was fetched, else origin"),
        ("tool_version", "string", "the a2a-capture version that analyzed the session"),
        ("exported_at", "timestamp", "when the export ran"),
        ("batch", "string", "the export run (and file name) the rows came in"),
    ],
    "exchanges": [
        ("session_id", "string", "the session (sessions.session_id)"),
        ("file", "string", "the capture file"),
        ("exchange", "string", "its label: \"6\", or \"webhook 2\""),
        ("number", "int64", "its number"),
        ("webhook", "bool", "an agent calling the client back"),
        ("title", "string", "the title after `### N ·`"),
        ("line", "int64", "the line of its `###` heading"),
        ("method", "string", "HTTP method"),
        ("target", "string", "request target (path and query)"),
        ("host", "string", "the Host header"),
        ("status", "int64", "HTTP status (null: no response)"),
        ("events", "int64", "SSE events in the response (pings not counted)"),
        ("request_bytes", "int64", "request body size as recorded"),
        ("response_bytes", "int64", "response body size as recorded"),
        ("started_at", "timestamp", "recorded start"),
        ("ended_at", "timestamp", "recorded end"),
        ("duration_s", "float64", "seconds from request start to response end"),
        ("client_address", "string", "the client's address and port as recorded"),
        ("server_address", "string", "the agent's address and port as recorded"),
        ("user_agent", "string", "the User-Agent header"),
    ],
    "calls": [
        ("session_id", "string", "the session"),
        ("file", "string", "the capture file"),
        ("exchange", "string", "the exchange's label"),
        ("kind", "string", "card, jsonrpc, rest, grpc, webhook or other"),
        ("operation", "string", "the A2A operation (SendMessage, GetTask, ...), null for cards and other traffic"),
        ("agent", "string", "the agent's origin (scheme://host:port)"),
        ("agent_name", "string", "the agent's name from its card, where the session fetched it"),
        ("client", "string", "who called: the User-Agent, else the recorded client host"),
        ("version", "string", "the A2A version the call spoke (its header, else its spelling)"),
        ("binding", "string", "JSONRPC, HTTP+JSON or GRPC"),
        ("task_id", "string", "the task it concerned"),
        ("status", "int64", "HTTP status"),
        ("error", "string", "the error the agent answered (TaskNotFoundError, ...)"),
        ("final_state", "string", "the last task state the response showed"),
        ("started_at", "timestamp", "recorded start"),
        ("duration_s", "float64", "seconds it took"),
        ("ok", "bool", "answered without an error"),
        ("outcome", "string", "wasted or fragile (worked only by leniency) as the summary counts it, else failed "
                               "or ok (by the wire)"),
    ],
    "findings": [
        ("session_id", "string", "the session"),
        ("file", "string", "the capture file"),
        ("exchange", "string", "the exchange's label"),
        ("number", "int64", "the exchange's number"),
        ("line", "int64", "the line of the exchange"),
        ("rule", "string", "the rule id (docs/rules.md)"),
        ("severity", "string", "error, warning or info"),
        ("title", "string", "the rule's title"),
        ("message", "string", "what happened, naming the exchanges that had answered it"),
        ("spec", "string", "the spec sections the rule rests on"),
        ("wasted", "bool", "the round trip was wasted (failed as predicted, or redundant)"),
        ("outcome", "string", "wasted, fragile (worked only by leniency) or advice"),
        ("cost", "float64", "seconds the exchange took, for wasted and fragile findings"),
        ("operation", "string", "the call's operation"),
        ("agent", "string", "the agent's origin"),
        ("agent_name", "string", "the agent's card name"),
        ("client", "string", "who called (as calls.client)"),
        ("related", "list<string>", "labels of the earlier exchanges that had answered the question"),
    ],
}


def schema_markdown() -> str:
    """The schema as docs/many-sessions.md shows it."""
    parts = []
    for table, columns in TABLES.items():
        parts.append(f"#### {table}\n\n| column | type | meaning |\n| --- | --- | --- |")
        parts += [f"| `{name}` | {kind} | {meaning} |" for name, kind, meaning in columns]
        parts.append("")
    return "\n".join(parts)


_CARD_PATHS = (spec.CARD_PATH, *spec.LEGACY_CARD_PATHS)


def digest(files: list[str]) -> str:
    """The session's identity: its files' contents, in order (not their names or places)."""
    sha = hashlib.sha256()
    for file in files:
        try:
            if is_url(file):
                fs, path = filesystem(file)
                data = fs.cat_file(path)
            else:
                with open(file, "rb") as stream:
                    data = stream.read()
        except OSError as error:  # as the reader says it
            raise CaptureFormatError("a readable capture file", path=file, found=error.strerror or str(error)) from None
        sha.update(len(data).to_bytes(8, "big"))
        sha.update(data)
    return sha.hexdigest()


def session_rows(session: tuple[str, list[str]], config: Config | None) -> dict[str, list[dict]]:
    """The rows one session adds to each table (``session`` is its id and its files)."""
    session_id, files = session
    with local_copies(files) as (local, originals):
        analyzer = Analyzer(config)  # fed here, so each capture is read once for both
        exchange_rows, cards = [], []
        for file in local:
            analyzer.start_file(file)
            for exchange in exchanges(file):
                analyzer.feed(exchange)
                exchange_rows.append(_exchange_row(session_id, file, exchange))
                if exchange.request.target.split("?", 1)[0].endswith(_CARD_PATHS):  # confirmed by kind below
                    cards.append(((file, exchange.label), _card_name(exchange)))
        analysis = analyzer.finish()
        kinds = {(call.file, call.exchange): (call.kind, call.agent) for call in analysis.calls}
        names: dict[str, str] = {}
        for place, name in cards:
            kind, agent = kinds.get(place, (None, None))
            if kind == "card" and agent and name:
                names.setdefault(agent, name)
        return renamed(_rows(session_id, analysis, exchange_rows, names), originals)


def _rows(session_id, analysis, exchange_rows, names) -> dict[str, list[dict]]:
    by_place = {(row["file"], row["exchange"]): row for row in exchange_rows}
    call_rows = []
    for call in analysis.calls:
        place = (call.file, call.exchange)
        seen = by_place.get(place, {})
        ok = call.error is None and (call.status is None or call.status < 400)
        call_rows.append({
            "session_id": session_id, "file": call.file, "exchange": call.exchange, "kind": call.kind,
            "operation": call.operation, "agent": call.agent, "agent_name": names.get(call.agent),
            "client": _client(seen), "version": call.version, "binding": call.binding, "task_id": call.task_id,
            "status": call.status, "error": call.error, "final_state": call.states[-1] if call.states else None,
            "started_at": seen.get("started_at"), "duration_s": seen.get("duration_s"), "ok": ok,
            "outcome": call.round_trip or ("ok" if ok else "failed"),  # as the summary counts it
        })
    finding_rows = [{
        "session_id": session_id, "file": f.file, "exchange": f.exchange, "number": f.number, "line": f.line,
        "rule": f.rule, "severity": f.severity.value, "title": f.title, "message": f.message, "spec": f.spec,
        "wasted": f.wasted, "outcome": f.outcome, "cost": f.cost, "operation": f.operation, "agent": f.agent,
        "agent_name": f.agent_name if f.agent_name != f.agent else names.get(f.agent, f.agent_name),
        "client": _client(by_place.get((f.file, f.exchange), {})), "related": list(f.related),
    } for f in analysis.findings]
    summary = analysis.summary
    starts = [row["started_at"] for row in exchange_rows if row["started_at"] is not None]
    ends = [row["ended_at"] for row in exchange_rows if row["ended_at"] is not None]
    session_row = {
        "session_id": session_id, "files": list(summary.files), "started_at": min(starts, default=None),
        "ended_at": max(ends, default=None), "exchanges": summary.exchanges, "errors": summary.errors,
        "streams": summary.streams, "findings": summary.findings,
        "wasted_round_trips": summary.wasted_round_trips, "wasted_seconds": summary.wasted_seconds,
        "fragile_round_trips": summary.fragile_round_trips,
        "clients": _distinct(row["client"] for row in call_rows),
        "agents": _distinct(row["agent_name"] or row["agent"] for row in call_rows if row["kind"] != "webhook"),
        "tool_version": __version__,
    }
    return {"sessions": [session_row], "exchanges": exchange_rows, "calls": call_rows, "findings": finding_rows}


def _exchange_row(session_id: str, file: str, exchange: Exchange) -> dict:
    request, response, meta = exchange.request, exchange.response, exchange.meta
    return {
        "session_id": session_id, "file": file, "exchange": exchange.label, "number": exchange.number,
        "webhook": exchange.webhook, "title": exchange.title, "line": exchange.line, "method": request.method,
        "target": request.target, "host": request.header("host"),
        "status": response.status if response is not None else None,
        "events": sum(1 for event in response.iter_events() if not event.is_ping) if response is not None else 0,
        "request_bytes": len(request.body), "response_bytes": len(response.body) if response is not None else None,
        "started_at": meta.started_at, "ended_at": meta.ended_at, "duration_s": meta.duration,
        "client_address": meta.client, "server_address": meta.server, "user_agent": request.header("user-agent"),
    }


def _client(exchange_row: dict) -> str | None:
    if exchange_row.get("webhook"):
        return None  # the agent calls back: the client is the server here
    address = exchange_row.get("client_address")
    return exchange_row.get("user_agent") or (address.rsplit(":", 1)[0] if address else None)


def _card_name(exchange: Exchange) -> str | None:
    response = exchange.response
    if response is None or response.status != 200:
        return None
    try:
        data = nesting.loads(response.content)
    except ValueError:
        return None
    name = data.get("name") if isinstance(data, dict) else None
    return name if isinstance(name, str) and name else None


def _distinct(values) -> list[str]:
    return list(dict.fromkeys(value for value in values if value))
