"""Benchmark `analyze` against a floor measured in the same run, on two shapes of session.

The floor is what any analyzer must do anyway: read the file and parse every body and SSE
frame's data as JSON (with the json module, and with orjson where it is installed). `analyze`
is timed as the command runs it (`a2a-capture analyze --format text`, the findings written
as they are found). Shapes:

- new: every task and message id new (bench/read.py's session)
- recurring: the same few tasks and cards thousands of times (polls, refetches, sends)

Each run is a fresh subprocess, so its peak memory (max RSS) is its own.

Then where the time goes, each stage as a ratio to the floor (each measured as a run that stops
after it, the modules imported before the clock starts, the difference to the run before):

- read: the reader's exchanges, with SSE frames split (a2a_capture/capture/, sources.py)
- decode: each exchange read as A2A (a2a_capture/a2a/decode.py), in analyze's batches
- judge: rules, session and findings, to a callback that drops them (a2a_capture/analyze/)
- write: the text lines and summary (report/machine.py, cli/analyze.py)
- start: importing the command's modules (in `analyze` above, not in the stages), their bytecode
  compiled first as an installed package has it (common.compile_package)

    python bench/analyze.py                 # about 100 MB per shape
    python bench/analyze.py --size-mb 5     # quicker (CI)
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
from read import _card, _documents, _exchange, _headers, _task, run_baseline

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


# -- the measured runs (each in its own process) -----------------------------------------------

def run_floor_orjson(path: str, index_path: str) -> dict:
    """The floor with orjson's parser: what a JSON-bound program can reach."""
    import orjson
    import read
    saved = read.json
    read.json = type("J", (), {"loads": staticmethod(orjson.loads)})
    try:
        return run_baseline(path, index_path)
    finally:
        read.json = saved


def run_analyze(path: str) -> dict:
    from click.testing import CliRunner

    from a2a_capture.cli import main
    result = CliRunner().invoke(main, ["analyze", "--format", "text", "--fail-on", "never", "-o", os.devnull, path])
    if result.exit_code != 0:
        raise SystemExit(f"analyze failed: {result.output}{result.exception!r}")
    return {"units": 1}


def _stage(stage: str, path: str):
    """A run that stops after ``stage``, its modules imported already (the clock starts after)."""
    from a2a_capture.analyze.config import Config
    from a2a_capture.analyze.engine import _decoded, analyze
    from a2a_capture.sources import exchanges

    def read() -> dict:
        for exchange in exchanges(path):
            if exchange.response is not None:
                exchange.response.events  # noqa: B018 - split the SSE frames, as decode asks
            if exchange.late_stream is not None:
                exchange.late_events  # noqa: B018
        return {"units": 1}

    def read_decode() -> dict:
        for _batch in _decoded(path):  # read and decoded in batches, as analyze does
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
        run_child({"floor": lambda: run_baseline(path, index_path),
                   "floor-orjson": lambda: run_floor_orjson(path, index_path),
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


def _has_orjson() -> bool:
    try:
        import orjson  # noqa: F401
    except ImportError:
        return False
    return True


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--size-mb", type=int, default=100, help="size of each generated capture (default 100)")
    parser.add_argument("--repeat", type=int, default=1,
                        help="rounds of runs (each round runs each measurement once); the best counts")
    parser.add_argument("--shape", choices=sorted(SHAPES), action="append", help="only these shapes")
    parser.add_argument("--child", nargs=3, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        _child(*args.child)
        return
    modes = ["floor", *(["floor-orjson"] if _has_orjson() else []), "analyze"]
    stages = [*(f"stage-{stage}" for stage in STAGES), "stage-start"]
    breakdown = []
    print(f"{'shape':<10} {'run':<13} {'cpu s':>8} {'MB/s':>8} {'peak MB':>8} {'vs floor':>9}")
    for shape in args.shape or sorted(SHAPES):
        with tempfile.TemporaryDirectory(prefix="a2a-bench-") as tmp:
            path, index_path = Path(tmp) / f"{shape}.http", Path(tmp) / f"{shape}.index"
            count = generate(shape, path, index_path, args.size_mb * 1_000_000)
            size_mb = os.path.getsize(path) / 1e6
            results = _best_of_rounds([*modes, *stages], args.repeat, path, index_path)
            floor = results["floor"]["seconds"]
            for mode in modes:
                result = results[mode]
                seconds = result["seconds"]
                print(f"{shape:<10} {mode:<13} {seconds:8.2f} {size_mb / seconds:8.1f} "
                      f"{result['max_rss_mb']:8.0f} {seconds / floor:8.2f}x")
            print(f"{shape:<10} {size_mb:.0f} MB, {count} exchanges")
            breakdown.append((shape, _stages(results, floor, count)))
    print()
    print(f"{'shape':<10} " + " ".join(f"{name:>8}" for name in [*STAGES, "write", "start"])
          + "   (seconds / floor; us per exchange below)")
    for shape, (ratios, micros) in breakdown:
        print(f"{shape:<10} " + " ".join(f"{ratio:7.2f}x" for ratio in ratios))
        print(f"{'':<10} " + " ".join(f"{us:6.1f}us" for us in micros))
    print("floor: read the file and json.loads every body and SSE frame (floor-orjson: with orjson); "
          "the aim is analyze <= 5x floor, peak < 150 MB whatever the size")


if __name__ == "__main__":
    main()
