"""The view's web server: a page, its assets, and a small JSON and Server-Sent Events API over a ViewState.

Safe by default: it answers only requests that carry the session's random token (the page's
address holds it, as Jupyter's does) and name a loopback host (no DNS rebinding), every answer
forbids scripts, styles and connections from anywhere but itself (Content-Security-Policy),
and the page puts what comes from a capture in as text, never as markup.
"""

from __future__ import annotations

import asyncio
import hmac
import json
import re
import threading
from importlib import resources
from urllib.parse import parse_qs

from a2a_capture.report import svg
from a2a_capture.view.detail import Details
from a2a_capture.view.state import Row, ViewState

#: rows per answer of /api/rows: the page asks page after page, showing the first at once
PAGE = 5000
#: arrows in a diagram drawn for the filtered rows
MAX_DIAGRAM = 80
#: what the page may load and where it may connect: itself only
CSP = ("default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; "
       "base-uri 'none'; form-action 'none'; frame-ancestors 'none'")
_HEADERS = [(b"content-security-policy", CSP.encode()), (b"x-content-type-options", b"nosniff"),
            (b"referrer-policy", b"no-referrer"), (b"cache-control", b"no-store"),
            (b"cross-origin-resource-policy", b"same-origin")]
_ASSETS = {"/view.js": "text/javascript; charset=utf-8", "/view.css": "text/css; charset=utf-8"}
_LOOPBACK_HOST = re.compile(r"^(?:127\.\d+\.\d+\.\d+|localhost|\[::1\])(?::\d+)?$")


class ViewApp:
    """An ASGI application showing one ViewState."""

    def __init__(self, state: ViewState, token: str, details: Details) -> None:
        self.state, self.token, self.details = state, token, details
        self._search_cache: dict[str, list[int]] = {}

    async def __call__(self, scope, receive, send) -> None:
        if scope["type"] == "lifespan":
            while True:
                message = await receive()
                if message["type"] == "lifespan.startup":
                    await send({"type": "lifespan.startup.complete"})
                elif message["type"] == "lifespan.shutdown":
                    await send({"type": "lifespan.shutdown.complete"})
                    return
        if scope["type"] != "http":
            return
        path, query = scope["path"], parse_qs(scope.get("query_string", b"").decode("latin-1"))
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope.get("headers", [])}
        if not _LOOPBACK_HOST.match(headers.get("host", "")):
            await _send(send, 403, b"a2a-capture view answers on a loopback address only\n")
            return
        if scope["method"] not in ("GET", "HEAD"):
            await _send(send, 405, b"only GET\n")
            return
        if path == "/favicon.ico":
            await _send(send, 204, b"")
            return
        if path in _ASSETS:
            await _send(send, 200, _asset(path[1:]), _ASSETS[path])
            return
        given = headers.get("x-view-token") or (query.get("token") or [""])[0]
        if not hmac.compare_digest(given.encode(), self.token.encode()):
            await _send(send, 403, b"this view needs its token: open the address a2a-capture printed\n")
            return
        if path == "/":
            await _send(send, 200, _asset("view.html"), "text/html; charset=utf-8")
        elif path == "/api/meta":
            await _json(send, self._meta())
        elif path == "/api/rows":
            start = _int(query, "from", 0)
            with self.state.lock:
                rows = [_compact(row) for row in self.state.rows[start:start + PAGE]]
                total, version = len(self.state.rows), self.state.version
            await _json(send, {"from": start, "rows": rows, "total": total, "version": version,
                               "done": self.state.done})
        elif path.startswith("/api/exchange/"):
            index = _int({"i": [path.rsplit("/", 1)[-1]]}, "i", -1)
            if not 0 <= index < len(self.state.rows):
                await _send(send, 404, b"no such exchange\n")
                return
            detail = await asyncio.to_thread(self.details.detail, index, query.get("whole") == ["1"])
            await _json(send, detail)
        elif path == "/api/diagram":
            wanted = [int(i) for i in (query.get("rows") or [""])[0].split(",") if i.isdigit()]
            await _send(send, 200, self._diagram(wanted).encode(), "image/svg+xml; charset=utf-8")
        elif path == "/api/timeline":
            wanted = [int(i) for i in (query.get("rows") or [""])[0].split(",") if i.isdigit()]
            await _send(send, 200, self._timeline(wanted).encode(), "image/svg+xml; charset=utf-8")
        elif path == "/api/search":
            needle = (query.get("q") or [""])[0]
            found = await asyncio.to_thread(self._search, needle)
            await _json(send, {"q": needle, "rows": found})
        elif path == "/api/events":
            await self._events(send, receive, _int(query, "since", 0))
        else:
            await _send(send, 404, b"not found\n")

    def _meta(self) -> dict:
        state = self.state
        with state.lock:
            cards = [{"name": c.name, "origin": c.origin} for c in state.cards]
        return {"files": state.files, "cards": cards, "done": state.done, "columns": list(COLUMNS)}

    def _diagram(self, wanted: list[int]) -> str:
        rows = [self.state.rows[i] for i in wanted[:MAX_DIAGRAM] if 0 <= i < len(self.state.rows)]
        lifelines = list(dict.fromkeys(row.agent for row in rows if not row.webhook)) or ["agent"]
        arrows = [svg.Arrow(anchor=f"x{row.index}", label=f"{row.label} {row.title or row.operation or row.target}",
                            lifeline=row.agent if not row.webhook else lifelines[0],
                            answer=row.outcome, wasted=any(f.outcome == "wasted" for f in row.findings),
                            events=row.frames, webhook=row.webhook, name=f"exchange {row.label}",
                            time=row.started) for row in rows]
        return svg.sequence(lifelines, arrows, timed=all(row.started is not None for row in rows))

    def _timeline(self, wanted: list[int]) -> str:
        """The task timelines of the report, for the tasks the rows ``wanted`` observed (every row of theirs)."""
        rows = self.state.rows
        chosen = {task for i in wanted if 0 <= i < len(rows) for task, _, _ in rows[i].states}
        tasks: dict[str, list[svg.Mark]] = {}
        owners: dict[str, str] = {}
        with self.state.lock:
            every = list(rows)
        for order, row in enumerate(every):
            for task, state, at in row.states:
                if task in chosen:
                    tasks.setdefault(task, []).append(svg.Mark(order=order, at=at, state=state,
                                                               anchor=f"x{row.index}", where=f"exchange {row.label}"))
                    owners.setdefault(task, row.agent)
        timed = all(mark.at is not None for marks in tasks.values() for mark in marks)
        return svg.timeline(tasks, owners, timed=timed, total=len(every)) or "<svg xmlns='http://www.w3.org/2000/svg'/>"

    def _search(self, needle: str) -> list[int]:
        """Rows whose block holds ``needle`` (any case), by one scan of each file. A needle that is one
        of the session's masked secrets finds nothing: the search must not tell where a secret is."""
        masker = self.details.masker
        if len(needle) < 2 or (masker is not None and masker.text(needle) != needle):
            return []
        if needle in self._search_cache:
            return self._search_cache[needle]
        state, wanted = self.state, needle.lower().encode()
        with state.lock:
            rows = list(zip(state.rows, state.offsets, strict=True))
        found: list[int] = []
        by_file: dict[int, list[tuple[Row, int | None]]] = {}
        for row, offset in rows:
            by_file.setdefault(row.file, []).append((row, offset))
        for file, entries in by_file.items():
            if any(offset is None for _, offset in entries):
                found += [row.index for row, _ in entries if needle.lower() in row.title.lower()]
                continue
            with open(state.files[file], "rb") as stream:
                data = stream.read().lower()
            starts = [offset for _, offset in entries]
            position, block = data.find(wanted), 0
            while position >= 0:
                while block + 1 < len(starts) and starts[block + 1] <= position:
                    block += 1
                found.append(entries[block][0].index)
                following = starts[block + 1] if block + 1 < len(starts) else len(data)
                position = data.find(wanted, following)
        self._search_cache[needle] = found
        return found

    async def _events(self, send, receive, since: int) -> None:
        """Server-Sent Events: the rows that changed, as they change, until the page goes away."""
        loop, changed = asyncio.get_running_loop(), asyncio.Event()
        pending = threading.Event()  # a wake-up is on its way: the feeding thread asks the loop once, not per row

        def wake() -> None:
            if not pending.is_set():
                pending.set()
                loop.call_soon_threadsafe(changed.set)

        stop = self.state.listen(wake)
        await send({"type": "http.response.start", "status": 200, "headers": [
            (b"content-type", b"text/event-stream; charset=utf-8"), *_HEADERS]})
        gone = asyncio.ensure_future(_disconnected(receive))
        try:
            version = since
            while not gone.done():
                rows = self.state.since(version)
                if rows:
                    with self.state.lock:
                        version = self.state.version
                        payload = {"version": version, "done": self.state.done,
                                   "rows": [_compact(self.state.rows[i]) for i in rows[:PAGE]]}
                    await send({"type": "http.response.body", "body": _frame(payload), "more_body": True})
                    if len(rows) > PAGE:
                        continue
                else:
                    await send({"type": "http.response.body", "body": b": keep-alive\n\n", "more_body": True})
                changed.clear()
                pending.clear()
                waiter = asyncio.ensure_future(changed.wait())
                await asyncio.wait([waiter, gone], timeout=15, return_when=asyncio.FIRST_COMPLETED)
                waiter.cancel()
                await asyncio.sleep(0.05)  # changes that come together go out together
        finally:
            stop()
            gone.cancel()


#: the row as the page gets it: a list in this order (a 100,000-row session is many megabytes less)
COLUMNS = ("index", "file", "label", "number", "title", "webhook", "started", "duration", "agent", "origin",
           "operation", "method", "target", "task", "context", "status", "outcome", "failed", "worked", "frames",
           "card", "findings")


def _compact(row: Row) -> list:
    return [row.index, row.file, row.label, row.number, row.title, row.webhook, row.started, row.duration,
            row.agent, row.origin, row.operation, row.method, row.target, row.task, row.context, row.status,
            row.outcome, row.failed, row.worked, row.frames, row.card,
            [[f.rule, f.severity, f.outcome, f.title, f.message, list(f.related), f.cost] for f in row.findings]]


def _asset(name: str) -> bytes:
    return resources.files("a2a_capture.view").joinpath("assets", name).read_bytes()


def _int(query: dict, name: str, default: int) -> int:
    value = (query.get(name) or [""])[0]
    return int(value) if value.isdigit() and len(value) < 12 else default


def _frame(payload: dict) -> bytes:
    return b"data: " + json.dumps(payload, separators=(",", ":")).encode() + b"\n\n"


async def _disconnected(receive) -> None:
    while (await receive())["type"] != "http.disconnect":
        pass


async def _send(send, status: int, body: bytes, content_type: str = "text/plain; charset=utf-8") -> None:
    await send({"type": "http.response.start", "status": status,
                "headers": [(b"content-type", content_type.encode()), *_HEADERS]})
    await send({"type": "http.response.body", "body": body})


async def _json(send, value) -> None:
    await _send(send, 200, json.dumps(value, separators=(",", ":")).encode(), "application/json")
