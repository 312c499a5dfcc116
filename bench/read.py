"""Benchmark the capture reader against a baseline measured in the same run.

The baseline is what any analyzer must do anyway: read the file and `json.loads` every
body (and every SSE frame's data). The reader is timed streaming the same file into
exchanges and parsing the SSE frames; so is the general reader alone (the quick way through
a recorder's common blocks turned off), the way every block was read before that way
existed. Each run is a fresh subprocess so its peak memory (max RSS) is its own. Shapes:

- session: a realistic session (streams, webhooks, cards, sends; every id new)
- recurring: bench/analyze.py's, tiny exchanges polling the same few tasks and cards

    python bench/read.py                # about 200 MB of each shape
    python bench/read.py --size-mb 20   # quicker
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
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import measure, run_child

from a2a_capture.capture import (
    CaptureWriter,
    Exchange,
    ExchangeMeta,
    Request,
    Response,
    iter_exchanges,
)

_CHUNK = 1 << 20
_CLOCK = [1_795_000_000.0]


# -- a realistic capture ---------------------------------------------------------------------

def _card(port: int) -> dict:
    return {
        "name": f"agent-{port}",
        "description": "Runs a repository's tests in a clean container and streams the log.",
        "supportedInterfaces": [
            {"url": f"http://127.0.0.1:{port}/", "protocolBinding": "JSONRPC", "protocolVersion": "1.0"},
            {"url": f"http://127.0.0.1:{port}/rest", "protocolBinding": "HTTP+JSON", "protocolVersion": "1.0"},
        ],
        "version": "2.3.0",
        "capabilities": {"streaming": True, "pushNotifications": port % 2 == 0},
        "defaultInputModes": ["text/plain", "application/json"],
        "defaultOutputModes": ["text/plain", "application/json"],
        "skills": [{"id": f"skill-{i}", "name": f"Skill {i}", "description": "Does one thing well.",
                    "tags": ["ci", "tests"], "examples": ["Run the unit tests at 9f3c2e1"]} for i in range(4)],
    }


def _message(rng: random.Random, text_size: int) -> dict:
    return {"messageId": str(uuid.UUID(int=rng.getrandbits(128))), "role": "ROLE_USER",
            "parts": [{"text": "x" * text_size}]}


def _task(task_id: str, context_id: str, state: str, artifacts: int, rng: random.Random) -> dict:
    return {
        "id": task_id, "contextId": context_id,
        "status": {"state": state, "timestamp": "2026-11-30T07:40:01.301Z"},
        "artifacts": [{"artifactId": f"log-{i}", "parts": [{"text": "line of test output\n" * rng.randint(1, 20)}]}
                      for i in range(artifacts)],
    }


def _headers(kind: str, length: int | None, rng: random.Random) -> list[tuple[str, str]]:
    # the clock moves on as a real session's does, so heads are not all alike
    _CLOCK[0] += rng.uniform(0.001, 0.4)
    date = time.strftime("%a, %d %b %Y %H:%M:%S GMT", time.gmtime(_CLOCK[0]))
    head = [("date", date), ("server", "uvicorn")]
    if length is not None:
        head.append(("content-length", str(length)))
    head.append(("content-type", kind))
    return head


def _exchange(number: int, rng: random.Random) -> Exchange:
    port = 41241 + rng.randint(0, 3)
    host = [("Host", f"127.0.0.1:{port}"), ("A2A-Version", "1.0"), ("User-Agent", "python-httpx/0.28.1")]
    meta = ExchangeMeta(start="2026-11-30T07:40:01.102311Z", end="2026-11-30T07:40:01.208902Z",
                        client="127.0.0.1:50312", server=f"127.0.0.1:{port}")
    task_id, context_id = (str(uuid.UUID(int=rng.getrandbits(128))) for _ in range(2))
    roll = rng.random()
    if roll < 0.1:
        body = json.dumps(_card(port), indent=2).encode()
        return Exchange(number=number, title="discover", meta=meta,
                        request=Request(method="GET", target="/.well-known/agent-card.json", headers=host),
                        response=Response(status=200, reason="OK", body=body,
                                          headers=_headers("application/json", len(body), rng)))
    request_id = str(uuid.UUID(int=rng.getrandbits(128)))
    if roll < 0.45:
        send = json.dumps({"jsonrpc": "2.0", "id": request_id, "method": "SendStreamingMessage",
                           "params": {"message": _message(rng, rng.randint(20, 400))}}).encode()
        frames = [{"task": _task(task_id, context_id, "TASK_STATE_SUBMITTED", 0, rng)}]
        for i in range(rng.randint(3, 30)):
            frames.append({"artifactUpdate": {"taskId": task_id, "contextId": context_id, "append": i > 0,
                                              "artifact": {"artifactId": "log",
                                                           "parts": [{"text": f"PASSED test_{i}\n" * 3}]}}})
        frames.append({"statusUpdate": {"taskId": task_id, "contextId": context_id,
                                        "status": {"state": "TASK_STATE_COMPLETED"}}})
        body = b"".join(b"data: " + json.dumps({"jsonrpc": "2.0", "id": request_id, "result": f}).encode()
                        + b"\r\n\r\n" for f in frames)
        times = sorted(round(rng.uniform(0.001, 2.0), 6) for _ in frames)
        head = [*_headers("text/event-stream; charset=utf-8", None, rng), ("Transfer-Encoding", "chunked")]
        return Exchange(number=number, title="SendStreamingMessage", meta=meta,
                        request=Request(method="POST", target="/", body=send,
                                        headers=[*host, ("Content-Type", "application/json"),
                                                 ("Content-Length", str(len(send)))]),
                        response=Response(status=200, reason="OK", headers=head, body=body, event_times=times))
    if roll < 0.9:
        method = rng.choice(["SendMessage", "GetTask", "CancelTask", "ListTasks"])
        params = {"message": _message(rng, rng.randint(20, 2000))} if method == "SendMessage" else {"id": task_id}
        send = json.dumps({"jsonrpc": "2.0", "id": request_id, "method": method, "params": params}).encode()
        result = _task(task_id, context_id, "TASK_STATE_COMPLETED", rng.randint(0, 3), rng)
        body = json.dumps({"jsonrpc": "2.0", "id": request_id, "result": {"task": result}}).encode()
        return Exchange(number=number, title=method, meta=meta,
                        request=Request(method="POST", target="/", body=send,
                                        headers=[*host, ("Content-Type", "application/json"),
                                                 ("Content-Length", str(len(send)))]),
                        response=Response(status=200, reason="OK", body=body,
                                          headers=_headers("application/json", len(body), rng)))
    payload = json.dumps({"statusUpdate": {"taskId": task_id, "contextId": context_id,
                                           "status": {"state": "TASK_STATE_WORKING"}}}, indent=2).encode()
    return Exchange(number=number, title="webhook", webhook=True, meta=meta,
                    request=Request(method="POST", target="/a2a-events", body=payload,
                                    headers=[("Host", "127.0.0.1:41250"),
                                             ("Content-Type", "application/a2a+json")]),
                    response=Response(status=200, reason="OK", body=b"{}",
                                      headers=_headers("application/json", 2, rng)))


def generate(path: Path, index_path: Path, size: int, seed: int = 7) -> int:
    """Write a capture of about ``size`` bytes; note where every JSON document sits."""
    rng = random.Random(seed)
    writer = CaptureWriter()
    count = 0
    with open(path, "wb") as out, open(index_path, "wb") as index:
        offset = out.write(writer.preamble(meta=[("format", "a2a-capture/1")]))
        while offset < size:
            count += 1
            exchange = _exchange(count, rng)
            block = writer.block(exchange)
            for document in _documents(exchange):
                where = block.find(document)
                index.write(struct.pack("<QI", offset + where, len(document)))
            offset += out.write(block)
    return count


def _documents(exchange: Exchange) -> list[bytes]:
    docs = [exchange.request.body] if exchange.request.body else []
    response = exchange.response
    if response is not None and response.is_event_stream:
        docs += [line[6:].rstrip(b"\r") for line in response.body.split(b"\n") if line.startswith(b"data: ")]
    elif response is not None and response.body:
        docs.append(response.body)
    return docs


# -- the measured runs (each in its own process) -----------------------------------------------

def run_baseline(path: str, index_path: str) -> dict:
    """Read the file in chunks and json.loads every body, from the generator's index."""
    entries = 0
    with open(path, "rb") as stream, open(index_path, "rb") as index:
        window, window_start = b"", 0
        record = struct.Struct("<QI")
        while raw := index.read(record.size * 4096):
            for offset, length in record.iter_unpack(raw):
                while offset + length > window_start + len(window):
                    drop = min(offset - window_start, len(window))
                    window, window_start = window[drop:] + stream.read(_CHUNK), window_start + drop
                start = offset - window_start
                json.loads(window[start:start + length])
                entries += 1
        while stream.read(_CHUNK):
            pass
    return {"units": entries}


def generate_shape(shape: str, path: Path, index_path: Path, size: int) -> int:
    if shape == "session":
        return generate(path, index_path, size)
    import analyze  # bench/analyze.py's generator (it imports this module: imported here, once both exist)
    return analyze.generate(shape, path, index_path, size)


def run_reader(path: str, with_json: bool = False) -> dict:
    exchanges = events = 0
    for exchange in iter_exchanges(path):
        exchanges += 1
        response = exchange.response
        if response is not None:
            frames = response.events
            events += len(frames)
            if with_json:
                for frame in frames:
                    json.loads(frame.data)
                if response.body and not frames:
                    json.loads(response.body)
        if with_json and exchange.request.body:
            json.loads(exchange.request.body)
    return {"units": exchanges, "events": events}


def _child(mode: str, path: str, index_path: str) -> None:
    if mode == "baseline":
        run_child(lambda: run_baseline(path, index_path))
        return
    if mode == "general":
        from a2a_capture.capture.reader import CaptureReader
        CaptureReader.quick = False  # every block the general way
    run_child(lambda: run_reader(path, with_json=mode == "reader+json"))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--size-mb", type=int, default=200, help="size of each generated capture (default 200)")
    parser.add_argument("--repeat", type=int, default=2, help="runs of each measurement; the best counts")
    parser.add_argument("--shape", choices=["session", "recurring"], action="append", help="only these shapes")
    parser.add_argument("--keep", type=Path, help="write the (last) capture here and keep it")
    parser.add_argument("--child", nargs=3, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        _child(*args.child)
        return
    print(f"{'shape':<10} {'run':<12} {'cpu s':>8} {'MB/s':>8} {'us/exch':>8} {'peak MB':>8} {'vs baseline':>12}")
    for shape in args.shape or ["session", "recurring"]:
        with tempfile.TemporaryDirectory(prefix="a2a-bench-read-") as tmp:
            path = args.keep or Path(tmp) / "bench.http"
            index_path = Path(tmp) / "bench.index"
            count = generate_shape(shape, path, index_path, args.size_mb * 1_000_000)
            size_mb = os.path.getsize(path) / 1e6
            results = {}
            for mode in ("baseline", "general", "reader", "reader+json"):
                runs = [measure(__file__, mode, path, index_path) for _ in range(args.repeat)]
                results[mode] = min(runs, key=lambda r: r["seconds"])
            base = results["baseline"]["seconds"]
            for mode, result in results.items():
                seconds = result["seconds"]
                print(f"{shape:<10} {mode:<12} {seconds:8.2f} {size_mb / seconds:8.1f} {seconds / count * 1e6:8.1f} "
                      f"{result['max_rss_mb']:8.0f} {seconds / base:11.2f}x")
            general, quick = results["general"]["seconds"], results["reader"]["seconds"]
            print(f"{shape:<10} {size_mb:.0f} MB, {count} exchanges; reading costs {quick / count * 1e6:.1f} us an "
                  f"exchange, {general / count * 1e6:.1f} us the general way ({1 - quick / general:.0%} less)")
    print("baseline: read the file and json.loads every body and SSE frame; general: iter_exchanges without the "
          "quick way; reader: iter_exchanges with SSE frames parsed; the aim is reader <= 3x baseline, peak < 100 MB")


if __name__ == "__main__":
    main()
