"""Benchmark every command's peak memory (max RSS) and time on the shapes that grow it, each at two sizes.

Each shape is generated, then each command runs as the user runs it (`python -m a2a_capture ...`) in
a fresh process: its peak RSS and CPU time are the kernel's account of that process (``os.wait4``),
nothing of this one's. Shapes (the sizes are the large ones; the small is a quarter):

- tasks-40k: 40,000 exchanges, each a SendMessage answered with a task of its own (`report`, `convert`)
- one-stream: one SSE stream of 200 MB in tiny frames (`analyze`)
- one-stream-doc: the same without its `#@ response-body` length, as a documentation capture has it (`analyze`)
- har: a HAR of about 92 MB converted from bench/read.py's realistic session (`analyze`)
- cards-80k: 80,000 distinct agent cards fetched from one origin (`analyze`)
- tasks-200k: 200,000 exchanges, each a task of its own (`analyze`)

The aim (issue 36): every cell under 150 MB; the larger size within 30 MB of the smaller for report,
one stream, HAR read and HAR write; time within 5.5x for 4x the input.

    python bench/memory.py                  # the sizes above (several minutes)
    python bench/memory.py --scale 0.01     # tiny (CI: it checks the bench runs, measures nothing)
"""

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import tempfile
import uuid
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import compile_package

from a2a_capture.capture import CaptureWriter, Exchange, ExchangeMeta, Request, Response

_HOST = [("Host", "127.0.0.1:41241"), ("A2A-Version", "1.0"), ("User-Agent", "python-httpx/0.28.1")]
_JSON = [("Content-Type", "application/json")]


def _meta(number: int) -> ExchangeMeta:
    seconds = 1_795_000_000 + number // 10
    stamp = f"2026-11-30T07:{seconds // 60 % 60:02d}:{seconds % 60:02d}.{number % 10}00000Z"
    return ExchangeMeta(start=stamp, end=stamp, client="127.0.0.1:50312", server="127.0.0.1:41241")


def _answered(number: int, title: str, request: Request, body: bytes) -> Exchange:
    head = [("content-type", "application/json"), ("content-length", str(len(body)))]
    return Exchange(number=number, title=title, meta=_meta(number), request=request,
                    response=Response(status=200, reason="OK", headers=head, body=body))


def _task_exchange(number: int, rng: random.Random) -> Exchange:
    """A SendMessage answered with a new task, completed: every task id new."""
    task, request_id = str(uuid.UUID(int=rng.getrandbits(128))), str(uuid.UUID(int=rng.getrandbits(128)))
    send = json.dumps({"jsonrpc": "2.0", "id": request_id, "method": "SendMessage",
                       "params": {"message": {"messageId": f"m-{number}", "role": "ROLE_USER",
                                              "parts": [{"text": "run it"}]}}}).encode()
    body = json.dumps({"jsonrpc": "2.0", "id": request_id,
                       "result": {"task": {"id": task, "contextId": f"ctx-{number}",
                                           "status": {"state": "TASK_STATE_COMPLETED"}}}}).encode()
    request = Request(method="POST", target="/", headers=[*_HOST, *_JSON, ("Content-Length", str(len(send)))],
                      body=send)
    return _answered(number, "SendMessage", request, body)


def _card_exchange(number: int, rng: random.Random) -> Exchange:
    """The card of the one origin, a new version each time it is fetched."""
    card = {"name": f"agent {number}", "description": "Runs the job it is given.", "version": f"1.{number}.0",
            "supportedInterfaces": [{"url": "http://127.0.0.1:41241/", "protocolBinding": "JSONRPC",
                                     "protocolVersion": "1.0"}],
            "capabilities": {"streaming": bool(number % 2)}, "defaultInputModes": ["text/plain"],
            "defaultOutputModes": ["text/plain"],
            "skills": [{"id": f"skill-{number}", "name": "Run", "description": "Runs it.", "tags": ["ci"]}]}
    request = Request(method="GET", target="/.well-known/agent-card.json", headers=_HOST)
    return _answered(number, "discover", request, json.dumps(card).encode())


def _exchanges(path: Path, make: Callable[[int, random.Random], Exchange], count: int) -> None:
    rng, writer = random.Random(36), CaptureWriter()
    with open(path, "wb") as out:
        out.write(writer.preamble(meta=[("format", "a2a-capture/1")]))
        for number in range(1, count + 1):
            out.write(writer.block(make(number, rng)))


def one_stream(path: Path, size: int, framed: bool = True) -> None:
    """One SendStreamingMessage whose answer is ``size`` bytes of tiny status frames, written as it goes;
    ``framed``: with the recorder's pragma of its length (else it ends where the file does)."""
    frame = (b'data: {"jsonrpc": "2.0", "id": 1, "result": {"statusUpdate": {"taskId": '
             b'"2fbb04b8-dd7f-4b93-b6f0-49130185e74c", "contextId": "c", '
             b'"status": {"state": "TASK_STATE_WORKING"}}}}\r\n\r\n')
    last = frame.replace(b"WORKING", b"COMPLETED")
    frames = max(1, size // len(frame))
    length = (frames - 1) * len(frame) + len(last)
    send = b'{"jsonrpc": "2.0", "id": 1, "method": "SendStreamingMessage", "params": {"message": ' \
           b'{"messageId": "m-1", "role": "ROLE_USER", "parts": [{"text": "go"}]}}}'
    head = "\n".join([
        "#@ format: a2a-capture/1", "", "### 1 · SendStreamingMessage",
        "#@ start: 2026-11-30T08:13:48.205108Z", "#@ end: 2026-11-30T08:23:48.416123Z",
        "#@ client: 127.0.0.1:47708", "#@ server: 127.0.0.1:41241",
        *([f"#@ response-body: {length} bytes"] if framed else []),
        "POST / HTTP/1.1", "Host: 127.0.0.1:41241", "Accept: text/event-stream",
        "Content-Type: application/json", f"Content-Length: {len(send)}", "", send.decode(), "",
        "HTTP/1.1 200 OK", "content-type: text/event-stream", "Transfer-Encoding: chunked", "", ""]).encode()
    with open(path, "wb") as out:
        out.write(head)
        batch = frame * 4096
        left = frames - 1
        while left:
            step = min(left, 4096)
            out.write(batch if step == 4096 else frame * step)
            left -= step
        out.write(last + b"\n")


def har(path: Path, size: int) -> None:
    """bench/read.py's realistic session, converted to one HAR document."""
    import analyze as bench_analyze
    from read import generate

    with tempfile.TemporaryDirectory() as tmp:
        recorded, index = Path(tmp) / "session.http", Path(tmp) / "index"
        generate(recorded, index, size)
        bench_analyze.convert_form("har", recorded, path, index)


#: each shape: its name, what makes it at a scale (a count or bytes), the commands run on it
SHAPES = {
    "tasks-40k": (40_000, lambda path, n: _exchanges(path, _task_exchange, n), ["report", "convert"]),
    "one-stream": (200 << 20, one_stream, ["analyze"]),
    "one-stream-doc": (200 << 20, lambda path, size: one_stream(path, size, framed=False), ["analyze"]),
    "har": (64 << 20, har, ["analyze"]),  # a 64 MB session makes a 93 MB HAR
    "cards-80k": (80_000, lambda path, n: _exchanges(path, _card_exchange, n), ["analyze"]),
    "tasks-200k": (200_000, lambda path, n: _exchanges(path, _task_exchange, n), ["analyze"]),
}
_SUFFIX = {"har": ".har"}


def command(name: str, source: Path, tmp: Path) -> list[str]:
    if name == "report":
        return ["report", str(source), "-o", str(tmp / "report.html")]
    if name == "convert":
        return ["convert", str(source), "-o", str(tmp / "converted.har")]
    return ["analyze", str(source), "--format", "text", "--fail-on", "never"]


def run(arguments: list[str]) -> dict:
    """One command in a fresh process: its peak RSS and CPU seconds as the kernel counted them."""
    process = subprocess.Popen([sys.executable, "-m", "a2a_capture", *arguments],
                               stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    stderr = process.stderr.read()
    _, status, usage = os.wait4(process.pid, 0)
    process.returncode = os.waitstatus_to_exitcode(status)
    if process.returncode not in (0, 1):  # 1: findings
        raise SystemExit(f"a2a-capture {' '.join(arguments)} failed ({process.returncode}):\n{stderr.decode()}")
    return {"rss_mb": usage.ru_maxrss / 1024, "seconds": usage.ru_utime + usage.ru_stime}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--scale", type=float, default=1.0, help="Each shape's size times this (1: the issue's).")
    parser.add_argument("--shapes", default=",".join(SHAPES), help="Comma-separated shapes to run.")
    args = parser.parse_args()
    compile_package()
    rows = []
    print(f"{'shape':<12} {'command':<8} {'size':>10} {'peak RSS':>10} {'CPU':>8}   {'size/4':>10} {'peak RSS':>10}"
          f" {'CPU':>8}   {'RSS +':>7} {'time x':>6}")
    with tempfile.TemporaryDirectory() as tmp:
        for shape in args.shapes.split(","):
            full, make, commands = SHAPES[shape]
            cells = {}
            for size in (max(1, int(full * args.scale)), max(1, int(full * args.scale / 4))):
                source = Path(tmp) / f"{shape}-{size}{_SUFFIX.get(shape, '.http')}"
                make(source, size)
                megabytes = source.stat().st_size / 1e6
                for name in commands:
                    cells.setdefault(name, []).append((megabytes, run(command(name, source, Path(tmp)))))
                source.unlink()
            for name, ((big_mb, big), (small_mb, small)) in cells.items():
                grows = big["rss_mb"] - small["rss_mb"]
                times = big["seconds"] / max(small["seconds"], 1e-3)
                rows.append({"shape": shape, "command": name, "mb": big_mb, **big, "small_mb": small_mb,
                             "small": small})
                print(f"{shape:<12} {name:<8} {big_mb:>7.1f} MB {big['rss_mb']:>7.0f} MB {big['seconds']:>6.2f} s"
                      f"   {small_mb:>7.1f} MB {small['rss_mb']:>7.0f} MB {small['seconds']:>6.2f} s"
                      f"   {grows:>4.0f} MB {times:>5.1f}x", flush=True)
    worst = max(rows, key=lambda row: row["rss_mb"])
    print(f"\nhighest peak: {worst['rss_mb']:.0f} MB ({worst['command']} on {worst['shape']}); aim: every cell under"
          f" 150 MB, the larger within 30 MB of the smaller, time within 5.5x for 4x the input")


if __name__ == "__main__":
    main()
