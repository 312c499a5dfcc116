"""Benchmark `analyze` against three floors measured in the same run: three forms x two id shapes.

The floors are what any analyzer must do anyway, each a run that reads the file and slices out
every JSON document (split), then parses each with json.loads (json) or orjson (orjson, the
fastest: the one the aim is measured against). `analyze` is timed as the command runs it
(`a2a-capture analyze --format text`, the findings written as they are found).

Forms, each made from the same generated session:

- recorded: as the recorder writes it (bodies framed by their byte count, `#@` lines)
- documentation: bodies pretty-printed without a byte count, no framing headers, no `#@` lines,
  as hand-written and `tidy` captures are
- har: one HAR document (a HAR floor parses each entry and its body texts)

Id shapes:

- new: every task and message id new (bench/read.py's session)
- recurring: the same few tasks and cards thousands of times (polls, refetches, sends)

Each run is a fresh subprocess, so its peak memory (max RSS) is its own; `--rss-at 300` also
runs analyze once per cell at 300 MB for its peak. `--stages` adds where the time goes on the
recorded form (each stage a run that stops after it, the difference to the run before):

- read: the reader's exchanges, with SSE frames split (a2a_capture/capture/, sources.py)
- decode: each exchange read as A2A (a2a_capture/a2a/), in analyze's batches
- judge: rules, session and findings, to a callback that drops them (a2a_capture/analyze/)
- write: the text lines and summary (report/machine.py, cli/analyze.py)
- start: importing the command's modules, their bytecode compiled first (common.compile_package)

    python bench/analyze.py                 # about 100 MB per cell
    python bench/analyze.py --size-mb 3     # quicker (CI: it checks the bench runs, measures nothing)
"""

from __future__ import annotations

import argparse
import json
import os
import random
import struct
import sys
import tempfile
import time
import uuid
from itertools import pairwise
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import measure, run_child
from read import _card, _documents, _exchange, _headers, _task

from a2a_capture.capture import CaptureWriter, Exchange, ExchangeMeta, Request, Response

_TASKS = [str(uuid.UUID(int=n + 1)) for n in range(5)]


def _recurring(number: int, rng: random.Random) -> Exchange:
    """The same five tasks on the same four agents, polled, sent to and their cards refetched."""
    port = 41241 + rng.randint(0, 3)
    host = [("Host", f"127.0.0.1:{port}"), ("A2A-Version", "1.0"), ("User-Agent", "python-httpx/0.28.1")]
    meta = ExchangeMeta(start="2026-11-30T07:40:01.102311Z", end="2026-11-30T07:40:01.208902Z",
                        client="127.0.0.1:50312", server=f"127.0.0.1:{port}")
    roll = rng.random()
    if roll < 0.15:
        body = json.dumps(_card(port), indent=2).encode()
        return Exchange(number=number, title="discover", meta=meta,
                        request=Request(method="GET", target="/.well-known/agent-card.json", headers=host),
                        response=Response(status=200, reason="OK", body=body,
                                          headers=[*_headers("application/json", len(body), rng),
                                                   ("etag", 'W/"c1"')]))
    task_id = rng.choice(_TASKS)
    method = rng.choice(["GetTask", "GetTask", "GetTask", "SendMessage", "CancelTask"])
    if method == "SendMessage":
        params = {"message": {"messageId": rng.choice(["m-1", "m-2", str(uuid.UUID(int=rng.getrandbits(128)))]),
                              "role": "ROLE_USER", "taskId": task_id, "parts": [{"text": "x" * rng.randint(20, 800)}]}}
    else:
        params = {"id": task_id}
    request_id = str(uuid.UUID(int=rng.getrandbits(128)))
    send = json.dumps({"jsonrpc": "2.0", "id": request_id, "method": method, "params": params}).encode()
    state = rng.choice(["TASK_STATE_WORKING", "TASK_STATE_COMPLETED"])
    result = _task(task_id, "ctx-1", state, rng.randint(0, 3), rng)
    body = json.dumps({"jsonrpc": "2.0", "id": request_id, "result": result}).encode()
    return Exchange(number=number, title=method, meta=meta,
                    request=Request(method="POST", target="/", body=send,
                                    headers=[*host, ("Content-Type", "application/json"),
                                             ("Content-Length", str(len(send)))]),
                    response=Response(status=200, reason="OK", body=body,
                                      headers=_headers("application/json", len(body), rng)))


SHAPES = {"new": _exchange, "recurring": _recurring}


def _timed(exchange: Exchange, number: int) -> Exchange:
    """One exchange after another, 50 ms each, as a client makes them (the generators give one time)."""
    start = 1_795_000_000.0 + number * 0.1
    exchange.meta.start, exchange.meta.end = (
        time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(t)) + f".{int(t % 1 * 1e6):06d}Z" for t in (start, start + 0.05))
    return exchange


def generate(shape: str, path: Path, index_path: Path, size: int, seed: int = 11) -> int:
    """Write a capture of about ``size`` bytes; note where every JSON document sits."""
    rng, make, writer, count = random.Random(seed), SHAPES[shape], CaptureWriter(), 0
    with open(path, "wb") as out, open(index_path, "wb") as index:
        offset = out.write(writer.preamble(meta=[("format", "a2a-capture/1")]))
        while offset < size:
            count += 1
            exchange = _timed(make(count, rng), count)
            block = writer.block(exchange)
            for document in _documents(exchange):
                index.write(struct.pack("<QI", offset + block.find(document), len(document)))
            offset += out.write(block)
    return count


def convert_form(form: str, recorded: Path, path: Path, index_path: Path) -> None:
    """The recorded capture in another form, with the index of its JSON documents (flag 0) or, for a
    HAR, of its entries (flag 1: an entry's body texts are documents of their own).

    - documentation: bodies pretty-printed without a byte count, no framing headers and no ``#@``
      lines, as hand-written and `tidy` captures are (their ends found by what starts next)
    - har: one HAR document, an entry per exchange (convert/har.py's entries)
    """
    from a2a_capture.capture import iter_exchanges
    from a2a_capture.convert.har import _entry

    record = struct.Struct("<QIB")
    with open(path, "wb") as out, open(index_path, "wb") as index:
        if form == "har":
            offset = out.write(b'{"log": {"version": "1.2", "creator": {"name": "bench"}, "entries": [\n')
            for number, exchange in enumerate(iter_exchanges(recorded)):
                entry = json.dumps(_entry(exchange), ensure_ascii=False).encode("utf-8", "backslashreplace")
                if number:
                    offset += out.write(b",\n")
                index.write(record.pack(offset, len(entry), 1))
                offset += out.write(entry)
            out.write(b"\n]}}\n")
            return
        writer = CaptureWriter()
        offset = out.write(writer.preamble())
        for exchange in iter_exchanges(recorded):
            documentation = _documentation(exchange)
            block = writer.block(documentation)
            start = 0
            for document in _documents(documentation):
                start = block.index(document, start)
                index.write(record.pack(offset + start, len(document), 0))
                start += len(document)
            offset += out.write(block)


_FRAMING = ("content-length", "transfer-encoding")


def _documentation(exchange: Exchange) -> Exchange:
    """An exchange as a documentation capture shows it: bodies pretty-printed, no framing, no meta."""
    def pretty(body: bytes) -> bytes:
        return json.dumps(json.loads(body), indent=2, ensure_ascii=False).encode() if body else b""

    def kept(headers):
        return [(name, value) for name, value in headers if name.lower() not in _FRAMING]

    request, response = exchange.request, exchange.response
    body = response.body
    if response.is_event_stream:
        body = b"\n\n".join(b"data: " + line[6:].rstrip(b"\r") for line in body.split(b"\n")
                            if line.startswith(b"data: "))
    else:
        body = pretty(body)
    return Exchange(number=exchange.number, title=exchange.title,
                    request=Request(method=request.method, target=request.target, headers=kept(request.headers),
                                    body=pretty(request.body)),
                    response=Response(status=response.status, reason=response.reason, headers=kept(response.headers),
                                      body=body))


# -- the measured runs (each in its own process) -----------------------------------------------

_CHUNK = 1 << 20


def run_floor(path: str, index_path: str, parser: str) -> dict:
    """Read the file in chunks and slice out every JSON document the index names ("split"), or parse
    each too ("json": json.loads; "orjson"); a HAR entry's body texts are parsed as documents too."""
    import orjson
    loads = {"split": None, "json": json.loads, "orjson": orjson.loads}[parser]
    record = struct.Struct("<QIB")
    documents = 0
    with open(path, "rb") as stream, open(index_path, "rb") as index:
        window, window_start = b"", 0
        while raw := index.read(record.size * 4096):
            for offset, length, flag in record.iter_unpack(raw):
                while offset + length > window_start + len(window):
                    drop = min(offset - window_start, len(window))
                    window, window_start = window[drop:] + stream.read(_CHUNK), window_start + drop
                start = offset - window_start
                document = window[start:start + length]
                documents += 1
                if loads is None:
                    continue
                value = loads(document)
                if flag == 1:  # a HAR entry: its bodies are documents
                    for text in _har_texts(value):
                        loads(text)
                        documents += 1
        while stream.read(_CHUNK):
            pass
    return {"units": documents}


def _har_texts(entry: dict):
    post = entry["request"].get("postData")
    if post and post.get("text"):
        yield post["text"]
    text = entry["response"].get("content", {}).get("text")
    if not text:
        return
    if "event-stream" in entry["response"]["content"].get("mimeType", ""):
        yield from (line[6:] for line in text.split("\n") if line.startswith("data: "))
    else:
        yield text


def run_floor_orjson(path: str, index_path: str) -> dict:
    return run_floor(path, index_path, "orjson")


def run_analyze(path: str) -> dict:
    from click.testing import CliRunner

    from a2a_capture.cli import main
    result = CliRunner().invoke(main, ["analyze", "--format", "text", "--fail-on", "never", "-o", os.devnull, path])
    if result.exit_code != 0:
        raise SystemExit(f"analyze failed: {result.output}{result.exception!r}")
    return {"units": 1}


def _stage(stage: str, path: str):
    """A run that stops after ``stage``, its modules imported already (the clock starts after)."""
    from a2a_capture.a2a.decode import Cards
    from a2a_capture.analyze.config import Config
    from a2a_capture.analyze.engine import _decoded, analyze
    from a2a_capture.sources import exchanges

    def read() -> dict:
        for exchange in exchanges(path):
            if exchange.response is not None:
                for _ in exchange.response.iter_events():  # split the SSE frames, as decode asks
                    pass
            if exchange.late_stream is not None:
                for _ in exchange.iter_late_events():
                    pass
        return {"units": 1}

    def read_decode() -> dict:
        for _batch in _decoded(path, Cards()):  # read and decoded in batches, as analyze does
            pass
        return {"units": 1}

    def judge() -> dict:
        analyze([path], Config(), on_finding=lambda finding: None)
        return {"units": 1}

    return {"read": read, "decode": read_decode, "judge": judge}[stage]


def run_analyze_imports() -> dict:
    """What `analyze` imports before it reads a byte."""
    from a2a_capture.batch import analysis  # noqa: F401
    from a2a_capture.cli import main  # noqa: F401
    from a2a_capture.report import machine  # noqa: F401
    return {"units": 1}


STAGES = ["read", "decode", "judge"]


def _child(mode: str, path: str, index_path: str) -> None:
    if mode == "stage-start":
        run_child(run_analyze_imports)  # nothing imported before the clock starts
    elif mode.startswith("stage-"):
        run_child(_stage(mode.removeprefix("stage-"), path))
    else:
        run_child({"floor-split": lambda: run_floor(path, index_path, "split"),
                   "floor-json": lambda: run_floor(path, index_path, "json"),
                   "floor-orjson": lambda: run_floor(path, index_path, "orjson"),
                   "analyze": lambda: run_analyze(path)}[mode])


def _stages(results: dict, floor: float, count: int) -> tuple[list[float], list[float]]:
    """Each stage's own seconds (a run's time less the run before it), against the floor and per exchange."""
    cumulative = [results[f"stage-{stage}"]["seconds"] for stage in STAGES]
    start = results["stage-start"]["seconds"]
    own = [cumulative[0], *(b - a for a, b in pairwise(cumulative)),
           results["analyze"]["seconds"] - cumulative[-1] - start, start]
    return [seconds / floor for seconds in own], [seconds / count * 1e6 for seconds in own]


def _best_of_rounds(modes: list[str], rounds: int, path: Path, index_path: Path) -> dict[str, dict]:
    """Each mode's quickest run of ``rounds``, each round running every mode once: the floor and
    ``analyze`` are measured minutes apart otherwise, and a shared machine's speed drifts between
    them, moving the ratio by as much as a tenth."""
    best: dict[str, dict] = {}
    for _ in range(rounds):
        for mode in modes:
            result = measure(__file__, mode, path, index_path)
            if mode not in best or result["seconds"] < best[mode]["seconds"]:
                best[mode] = result
    return best


FORMS = ["recorded", "documentation", "har"]
FLOORS = ["floor-split", "floor-json", "floor-orjson"]


def _capture(form: str, shape: str, size: int, tmp: Path) -> tuple[Path, Path, int]:
    """The capture of a form and shape, about ``size`` bytes of the recorded form, and its index."""
    recorded, index = tmp / f"{shape}.http", tmp / f"{shape}.index"
    if not recorded.exists():
        count = generate(shape, recorded, tmp / f"{shape}.plain-index", size)
        _with_flags(tmp / f"{shape}.plain-index", index)
        (tmp / f"{shape}.count").write_text(str(count))
    count = int((tmp / f"{shape}.count").read_text())
    if form == "recorded":
        return recorded, index, count
    path = tmp / f"{shape}.{'har' if form == 'har' else 'doc.http'}"
    convert_form(form, recorded, path, tmp / f"{shape}.{form}.index")
    return path, tmp / f"{shape}.{form}.index", count


def _with_flags(plain: Path, flagged: Path) -> None:
    """generate's index (offset, length) with the flag of a plain document."""
    old, new = struct.Struct("<QI"), struct.Struct("<QIB")
    data = plain.read_bytes()
    flagged.write_bytes(b"".join(new.pack(offset, length, 0) for offset, length in old.iter_unpack(data)))


def _peak_at(form: str, shape: str, size_mb: int) -> float:
    """analyze's peak RSS on the form and shape at ``size_mb`` (recorded size), in its own folder."""
    with tempfile.TemporaryDirectory(prefix="a2a-bench-rss-") as tmp:
        path, index, _ = _capture(form, shape, size_mb * 1_000_000, Path(tmp))
        return measure(__file__, "analyze", path, index)["max_rss_mb"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--size-mb", type=int, default=100, help="size of each generated capture (default 100)")
    parser.add_argument("--repeat", type=int, default=1,
                        help="rounds of runs (each round runs each measurement once); the best counts")
    parser.add_argument("--shape", choices=sorted(SHAPES), action="append", help="only these id shapes")
    parser.add_argument("--form", choices=FORMS, action="append", help="only these forms")
    parser.add_argument("--rss-at", type=int, default=0, metavar="MB",
                        help="also run analyze once at this size for its peak RSS (the aim: < 150 MB at 300)")
    parser.add_argument("--stages", action="store_true", help="also where the time goes (recorded form)")
    parser.add_argument("--child", nargs=3, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        _child(*args.child)
        return
    modes = [*FLOORS, "analyze"]
    stages = [*(f"stage-{stage}" for stage in STAGES), "stage-start"]
    rows, breakdown = [], []
    for shape in args.shape or sorted(SHAPES):
        with tempfile.TemporaryDirectory(prefix="a2a-bench-") as tmp:
            for form in args.form or FORMS:
                path, index_path, count = _capture(form, shape, args.size_mb * 1_000_000, Path(tmp))
                extra = stages if args.stages and form == "recorded" else []
                results = _best_of_rounds([*modes, *extra], args.repeat, path, index_path)
                peak = _peak_at(form, shape, args.rss_at) if args.rss_at else None
                rows.append((form, shape, os.path.getsize(path) / 1e6, count, results, peak))
                if extra:
                    breakdown.append((shape, _stages(results, results["floor-json"]["seconds"], count)))
                path.unlink()
    at = f" {'peak@' + str(args.rss_at):>9}" if args.rss_at else ""
    print(f"{'form':<14} {'ids':<10} {'MB':>5} {'split s':>8} {'json s':>7} {'orjson s':>8} {'analyze s':>9} "
          f"{'vs json':>8} {'vs orjson':>9} {'peak MB':>8}{at}")
    for form, shape, size_mb, _count, results, peak in rows:
        split, loads, fast, seconds = (results[mode]["seconds"] for mode in modes)
        aim = "" if seconds <= 5 * fast else "  (misses 5x)"
        print(f"{form:<14} {shape:<10} {size_mb:5.0f} {split:8.2f} {loads:7.2f} {fast:8.2f} {seconds:9.2f} "
              f"{seconds / loads:7.2f}x {seconds / fast:8.2f}x {results['analyze']['max_rss_mb']:8.0f}"
              + (f" {peak:9.0f}" if peak is not None else "") + aim)
    if breakdown:
        print()
        print(f"{'ids':<10} " + " ".join(f"{name:>8}" for name in [*STAGES, "write", "start"])
              + "   (recorded form: seconds / json floor; us per exchange below)")
        for shape, (ratios, micros) in breakdown:
            print(f"{shape:<10} " + " ".join(f"{ratio:7.2f}x" for ratio in ratios))
            print(f"{'':<10} " + " ".join(f"{us:6.1f}us" for us in micros))
    print("floors: read the file and slice out every JSON document (split), and parse each with json.loads or orjson "
          "(a HAR: each entry and its body texts); the aim is analyze <= 5x the orjson floor, peak < 150 MB at 300 MB")


if __name__ == "__main__":
    main()
