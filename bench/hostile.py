"""Benchmark the commands on the hostile inputs of issue #10's "Done when", against a floor
measured in the same run.

Cases (each generated here):

- big: a realistic capture of --size-mb (bench/read.py's session): `show --format json`,
  `show --format http`, `show` and `analyze`; the aim is each in seconds, `show --format
  json` under 100 MB and within 3x the floor
- line-text: one request whose JSON body is a single line with a --line-mb text part
- line-values: one answer whose JSON body is a single --line-mb line of small values
- blank-lines: a body of --blank-lines blank lines between two words
- gzip-bomb: an answer whose gzip body inflates to --bomb-mb MiB
- layout-line: a documentation-form request (no length) whose JSON body is one --line-mb line, and
  a title, a note, a header value and an SSE frame of one --line-mb line each
- one-line: a file that is one --line-mb line and no capture (each command's answer: one line, exit 2)

For the small cases `show`, `show --format json`, `analyze` and `report` (HTML and Markdown)
run. The aim for every case is seconds and a peak under 200 MB. The floor is bench/read.py's:
read the file and json.loads every JSON document in it. Every command runs in a fresh
process; its CPU seconds (os.wait4) and peak RSS (its VmHWM) are its own.

    python bench/hostile.py                       # 100 MB, 10 MB lines, 100k blank lines, 768 MiB bomb
    python bench/hostile.py --size-mb 3 --line-mb 1 --blank-lines 10000 --bomb-mb 16   # quick (CI)
"""

from __future__ import annotations

import argparse
import json
import os
import struct
import subprocess
import sys
import tempfile
import time
import zlib
from collections.abc import Iterable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from read import _documents, generate

from a2a_capture.capture import CaptureWriter, Exchange, ExchangeMeta, Request, Response

ROOT = Path(__file__).resolve().parent.parent

_META = ExchangeMeta(start="2026-11-30T07:40:01.102311Z", end="2026-11-30T07:40:01.208902Z",
                     client="127.0.0.1:50312", server="127.0.0.1:41241")
_HOST = [("Host", "127.0.0.1:41241"), ("A2A-Version", "1.0")]
_AIM_MB = 200


# -- the inputs --------------------------------------------------------------------------------

def _call(number: int, method: str, params: dict, result: dict | None = None, *,
          answer: bytes | None = None, answer_head: list[tuple[str, str]] | None = None) -> Exchange:
    send = json.dumps({"jsonrpc": "2.0", "id": number, "method": method, "params": params},
                      separators=(",", ":")).encode()
    if answer is None:
        answer = json.dumps({"jsonrpc": "2.0", "id": number, "result": result or {}}).encode()
    head = answer_head or [("content-type", "application/json")]
    return Exchange(number=number, title=method, meta=_META,
                    request=Request(method="POST", target="/", body=send,
                                    headers=[*_HOST, ("Content-Type", "application/json"),
                                             ("Content-Length", str(len(send)))]),
                    response=Response(status=200, reason="OK", body=answer,
                                      headers=[*head, ("content-length", str(len(answer)))]))


def _task(state: str = "TASK_STATE_COMPLETED", **extra) -> dict:
    return {"task": {"id": "t-1", "contextId": "c-1", "status": {"state": state}, **extra}}


def _message(text: str) -> dict:
    return {"message": {"messageId": "m-1", "role": "ROLE_USER", "parts": [{"text": text}]}}


def line_text(size: int) -> list[Exchange]:
    return [_call(1, "SendMessage", _message("x" * size), _task())]


def line_values(size: int) -> list[Exchange]:
    values = [[index % 10] for index in range(size // 4)]  # `[n],` is four bytes
    return [_call(1, "GetTask", {"id": "t-1"}, _task(metadata={"values": values}))]


def blank_lines(count: int) -> list[Exchange]:
    body = b"first" + b"\n" * count + b"last\n"
    exchange = _call(1, "SendMessage", _message("hello"), answer=body, answer_head=[("content-type", "text/plain")])
    return [exchange]


def gzip_bomb(mebibytes: int) -> list[Exchange]:
    deflater, zeros = zlib.compressobj(9, zlib.DEFLATED, 16 + zlib.MAX_WBITS), bytes(1 << 20)
    body = b"".join(deflater.compress(zeros) for _ in range(mebibytes)) + deflater.flush()
    head = [("content-type", "application/json"), ("content-encoding", "gzip")]
    bomb = _call(1, "GetTask", {"id": "t-1"}, answer=body, answer_head=head)
    return [bomb, _call(2, "GetTask", {"id": "t-1"}, _task())]


def layout_line(path: Path, index_path: Path, size: int) -> None:
    """Long lines where a documentation capture's reader looks for the end of a line: a body written
    without a length, a title, a note, a header value and an SSE frame (no document is indexed: the floor
    reads the file)."""
    text = "x" * size
    blocks = [f"### 1 · call\nPOST / HTTP/1.1\nHost: a:1\nContent-Type: application/json\n\n"
              f'{{"text":"{text}"}}\n\nHTTP/1.1 200 OK\ncontent-type: application/json\n\n{{}}\n',
              f"### 2 · {text}\nGET /a HTTP/1.1\nHost: a:1\n\nHTTP/1.1 204 No Content\n",
              f"### 3 · note\n# {text}\nGET /b HTTP/1.1\nHost: a:1\n\nHTTP/1.1 204 No Content\n",
              f"### 4 · header\nGET /c HTTP/1.1\nHost: a:1\nX-Long: {text}\n\nHTTP/1.1 204 No Content\n",
              f"### 5 · frame\nGET /d HTTP/1.1\nHost: a:1\n\nHTTP/1.1 200 OK\ncontent-type: text/event-stream\n\n"
              f"data: {text}\n"]
    path.write_text("\n".join(blocks), encoding="utf-8")
    index_path.write_bytes(b"")


def one_line(path: Path, index_path: Path, size: int) -> None:
    path.write_bytes(b"x" * size + b"\n")
    index_path.write_bytes(b"")


def write(path: Path, index_path: Path, exchanges: Iterable[Exchange]) -> None:
    """Write a capture and note where its JSON documents sit (for the floor, as bench/read.py does)."""
    writer = CaptureWriter()
    with open(path, "wb") as out, open(index_path, "wb") as index:
        offset = out.write(writer.preamble(meta=[("format", "a2a-capture/1")]))
        for exchange in exchanges:
            block = writer.block(exchange)
            for document in _documents(exchange):
                where = block.find(document)
                if where >= 0 and _is_json(document):
                    index.write(struct.pack("<QI", offset + where, len(document)))
            offset += out.write(block)


def _is_json(document: bytes) -> bool:
    try:
        json.loads(document)
    except ValueError:
        return False
    return True


# -- the runs ----------------------------------------------------------------------------------

#: runs a module or script in this process and, as it exits, notes its own peak RSS. VmHWM is the
#: peak of this program's memory alone; ru_maxrss would start from the bench's own (kept across exec)
_CHILD = """
import atexit, os, runpy, sys
def note():
    with open("/proc/self/status") as status, open(os.environ["A2A_BENCH_PEAK"], "w") as out:
        out.write(next(line.split()[1] for line in status if line.startswith("VmHWM:")))
atexit.register(note)
kind, target = sys.argv.pop(1), sys.argv.pop(1)
if kind == "module":
    sys.argv[0] = target
    runpy.run_module(target, run_name="__main__", alter_sys=True)
else:
    sys.argv[0] = target
    runpy.run_path(target, run_name="__main__")
"""


def run_child(args: list[str], tmp: Path, *, script: Path | None = None, refused: bool = False) -> dict:
    """The CLI (or a script) in a fresh process: its CPU seconds, wall seconds and peak RSS."""
    target = ["path", str(script)] if script else ["module", "a2a_capture.cli"]
    env = {**os.environ, "PYTHONPATH": str(ROOT), "A2A_BENCH_PEAK": str(tmp / "peak")}
    started = time.perf_counter()
    with open(tmp / "stdout", "wb") as out, open(tmp / "stderr", "wb") as err:
        child = subprocess.Popen([sys.executable, "-c", _CHILD, *target, *args], stdout=out, stderr=err, env=env)
        _, status, usage = os.wait4(child.pid, 0)
    code = os.waitstatus_to_exitcode(status)
    stderr = (tmp / "stderr").read_text("utf-8", "replace").strip()
    answered = code == 2 and len(stderr.splitlines()) == 1 if refused else code in (0, 1)
    if not answered or "Traceback" in stderr:
        raise SystemExit(f"{' '.join(args)}: exit {code}: {stderr[-500:]}")
    return {"seconds": usage.ru_utime + usage.ru_stime, "wall": time.perf_counter() - started,
            "max_rss_mb": int((tmp / "peak").read_text()) / 1024, "stdout_mb": (tmp / "stdout").stat().st_size / 1e6}


def commands(path: Path, tmp: Path, big: bool) -> dict[str, list[str]]:
    if big:
        return {"show --format json": ["show", "--format", "json", str(path)],
                "show --format http": ["show", "--format", "http", str(path)],
                "show": ["show", str(path)], "analyze": ["analyze", str(path)]}
    return {"show": ["show", str(path)], "show --format json": ["show", "--format", "json", str(path)],
            "analyze": ["analyze", str(path)],
            "report html": ["report", str(path), "-o", str(tmp / "report.html")],
            "report md": ["report", str(path), "-o", str(tmp / "report.md")]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--size-mb", type=int, default=100, help="the realistic capture (default 100)")
    parser.add_argument("--line-mb", type=int, default=10, help="the long lines (default 10)")
    parser.add_argument("--blank-lines", type=int, default=100_000, help="blank lines in one body (default 100k)")
    parser.add_argument("--bomb-mb", type=int, default=768, help="what the gzip body inflates to, MiB (default 768)")
    parser.add_argument("--only", nargs="+", metavar="CASE", help="run only these cases")
    args = parser.parse_args()
    cases = {
        "big": lambda path, index: generate(path, index, args.size_mb * 1_000_000),
        "line-text": lambda path, index: write(path, index, line_text(args.line_mb * 1_000_000)),
        "line-values": lambda path, index: write(path, index, line_values(args.line_mb * 1_000_000)),
        "blank-lines": lambda path, index: write(path, index, blank_lines(args.blank_lines)),
        "gzip-bomb": lambda path, index: write(path, index, gzip_bomb(args.bomb_mb)),
        "layout-line": lambda path, index: layout_line(path, index, args.line_mb * 1_000_000),
        "one-line": lambda path, index: one_line(path, index, args.line_mb * 1_000_000),
    }
    print(f"{'case':<12} {'run':<19} {'cpu s':>7} {'wall s':>7} {'peak MB':>8} {'x floor':>8} "
          f"{'MB x floor':>10} {'out MB':>7}  aim")
    with tempfile.TemporaryDirectory(prefix="a2a-hostile-") as name:
        tmp = Path(name)
        for case, make in cases.items():
            if args.only and case not in args.only:
                continue
            path, index = tmp / f"{case}.http", tmp / f"{case}.index"
            make(path, index)
            floor = run_child(["--child", "baseline", str(path), str(index)], tmp, script=ROOT / "bench" / "read.py")
            size = path.stat().st_size / 1e6
            print(f"{case:<12} {'floor':<19} {floor['seconds']:7.2f} {'':>7} {floor['max_rss_mb']:8.0f} "
                  f"{'1.00x':>8} {'1.00x':>10} {'':>7}  ({size:.1f} MB file)")
            for run, command in commands(path, tmp, case == "big").items():
                result = run_child(command, tmp, refused=case == "one-line")
                aim = 100 if (case == "big" and run == "show --format json") else _AIM_MB
                ratio = result["seconds"] / max(floor["seconds"], 0.01)
                verdict = "ok" if result["max_rss_mb"] < aim else f"over {aim} MB"
                if case == "big" and run == "show --format json" and ratio > 3:
                    verdict += ", over 3x"
                print(f"{case:<12} {run:<19} {result['seconds']:7.2f} {result['wall']:7.2f} "
                      f"{result['max_rss_mb']:8.0f} {ratio:7.2f}x {result['max_rss_mb'] / floor['max_rss_mb']:9.2f}x "
                      f"{result['stdout_mb']:7.1f}  {verdict}")
            path.unlink()
    print("floor: read the file and json.loads every JSON document (bench/read.py); cpu s is user+system "
          "time of the command's own process, peak MB its max RSS")


if __name__ == "__main__":
    main()
