"""Benchmark what recording costs: direct to an agent, through mitmdump alone, and through
mitmdump with the a2a-capture addon, measured in one run.

    python bench/proxy.py                 # 400 requests per path, 30 streams
    python bench/proxy.py --requests 100  # quicker
    python bench/proxy.py --view          # also `record --view` with its page open in Chromium
    python bench/proxy.py --otel          # also `record --otel` exporting to an OTLP/HTTP receiver

Prints requests per second (SendMessage answered with a Message, 8 clients at once) and the
time to the first SSE event of a stream (median), with ratios against the direct path, and
the CPU each proxy process spent per request: on a shared machine throughput follows the
other load, while CPU per request stays close to what the proxy itself costs. Last, the CPU
the addon's hooks take per flow on their own (no proxy, no network). The load average is
printed before and after. The aim: the addon costs under 10% of mitmdump's
throughput and under 5 ms of first-event time (against the direct path: mitmdump alone
holds a stream under 1 MB until it ends).

With --view, a fourth path: `a2a-capture record --view` as a user runs it, its live page open
in headless Chromium the whole time, and how long after each exchange ended its row reached
the page (median and worst; the recorder's loop looks at the file every 0.1 s and reads a
block once the file stopped growing for one look).

With --otel, two more paths: `a2a-capture record` as a user runs it, and `record --otel URL`,
exporting every exchange's span to a real OTLP/HTTP receiver in a process of its own
(tests/otlp_receiver.py), and how many spans reached it; the export's throughput, first-event
time and CPU per request (the record process's) against `record` without it.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from a2a_capture.record import runner  # noqa: E402
from tests.live import free_port, wait_for_port  # noqa: E402


def _message(index: int, text: str, method: str) -> dict:
    return {"jsonrpc": "2.0", "id": index, "method": method,
            "params": {"message": {"messageId": f"m-{index}", "role": "ROLE_USER", "parts": [{"text": text}]}}}


def cpu_seconds(pid: int) -> float:
    """User and system CPU a process has used so far (Linux)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


async def throughput(base: str, count: int, concurrency: int = 8) -> float:
    url = f"{base}/a2a/jsonrpc"
    queue = list(range(count))

    async def worker(http: httpx.AsyncClient) -> None:
        while queue:
            index = queue.pop()
            response = await http.post(url, json=_message(index, "a question", "SendMessage"),
                                       headers={"A2A-Version": "1.0"})
            response.raise_for_status()

    async with httpx.AsyncClient(timeout=30) as http:
        await http.post(url, json=_message(-1, "a question", "SendMessage"), headers={"A2A-Version": "1.0"})
        started = time.perf_counter()
        await asyncio.gather(*(worker(http) for _ in range(concurrency)))
        return count / (time.perf_counter() - started)


def first_event(base: str, count: int) -> float:
    """Median seconds from sending a streaming request to reading its first frame."""
    url = f"{base}/a2a/jsonrpc"
    times = []
    with httpx.Client(timeout=30) as http:
        for index in range(count):
            started = time.perf_counter()
            with http.stream("POST", url, json=_message(index, "run", "SendStreamingMessage"),
                             headers={"A2A-Version": "1.0", "Accept": "text/event-stream"}) as response:
                first = None
                for line in response.iter_lines():  # read to the end, so the stream completes
                    if first is None and line.startswith("data:"):
                        first = time.perf_counter() - started
                times.append(first)
    return statistics.median(times)


def _flow(request_body: bytes, response_body: bytes, content_type: str):
    from mitmproxy import http
    from mitmproxy.test import tflow

    flow = tflow.tflow(resp=True)
    flow.request.method, flow.request.path = "POST", "/a2a/jsonrpc"
    flow.request.headers = http.Headers([(k.encode(), v.encode()) for k, v in (
        ("Host", "127.0.0.1:8000"), ("Accept", "*/*"), ("Connection", "keep-alive"),
        ("User-Agent", "python-httpx/0.28.1"), ("Content-Type", "application/json"), ("A2A-Version", "1.0"),
        ("Content-Length", str(len(request_body))))])
    flow.request.content = request_body
    flow.response.headers = http.Headers([(k.encode(), v.encode()) for k, v in (
        ("date", "Mon, 30 Nov 2026 20:58:08 GMT"), ("server", "uvicorn"), ("content-type", content_type),
        ("content-length", str(len(response_body))))])
    flow.response.content = response_body
    return flow


def hook_cost(count: int) -> dict[str, float]:
    """CPU microseconds per flow of the addon's hooks alone, for a JSON-RPC answer and for a
    stream of six SSE frames arriving in 200-byte chunks."""
    import importlib.util
    import json

    from mitmproxy.test import taddons

    from a2a_capture.resources import addons_dir

    spec = importlib.util.spec_from_file_location("a2a_recorder", addons_dir() / runner.ADDON)
    addon = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(addon)
    request = json.dumps(_message(1, "a question", "SendMessage")).encode()
    answer = json.dumps({"jsonrpc": "2.0", "id": 1, "result": {"message": {
        "messageId": "reply-1", "role": "ROLE_AGENT", "parts": [{"text": "I review diffs for risky changes."}]}}})
    frames = b"".join(b"data: " + json.dumps({"jsonrpc": "2.0", "id": 1, "result": {"statusUpdate": {
        "taskId": "t-1", "status": {"state": "TASK_STATE_WORKING", "message": {"parts": [{"text": f"step {i}"}]}}}}},
        ).encode() + b"\n\n" for i in range(6))
    costs = {}
    for name, body, content_type in (("answer", answer.encode(), "application/json"),
                                     ("stream", frames, "text/event-stream")):
        for _ in range(3):  # the best of three: other processes share the caches
            flows = [_flow(request, body, content_type) for _ in range(count)]
            recorder = addon.A2ARecorder()
            with tempfile.TemporaryDirectory() as tmp, taddons.context(recorder) as context:
                context.configure(recorder, a2a_capture=str(Path(tmp) / "hooks.http"))
                started = time.process_time()
                for flow in flows:  # the hooks in mitmproxy's order, bodies passed through the stream copies
                    recorder.requestheaders(flow)
                    flow.request.stream(flow.request.raw_content)
                    flow.request.raw_content = None
                    recorder.request(flow)
                    raw = flow.response.raw_content
                    recorder.responseheaders(flow)
                    if flow.response.stream:
                        for at in range(0, len(raw), 200):
                            flow.response.stream(raw[at:at + 200])
                    recorder.response(flow)
                spent = (time.process_time() - started) / count * 1e6
                recorder.done()
            costs[name] = min(costs.get(name, spent), spent)
    return costs


class _ViewedRecording:
    """`a2a-capture record --view` as a user runs it, its page open in headless Chromium throughout (in a
    thread of its own: Playwright's loop would hold the one the clients run in)."""

    def __init__(self, upstream: str, output: Path, env: dict) -> None:
        import threading

        self.upstream, self.output, self.env = upstream, output, env
        self.process = None
        self._asked, self._done = threading.Event(), threading.Event()
        self._opened = threading.Event()
        self._lags: list[float] = []
        self._thread = None

    def start(self) -> str:
        import re
        import threading

        listen = free_port()
        self.process = subprocess.Popen(
            [sys.executable, "-m", "a2a_capture.cli", "record", "--agent", self.upstream, "--listen",
             f"127.0.0.1:{listen}", "-o", str(self.output), "--view", "127.0.0.1:0"],
            env=self.env, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        url = None
        while url is None:
            line = self.process.stderr.readline()
            if not line:
                raise SystemExit("record --view stopped before it printed the view's address")
            found = re.search(rb"http://127\.0\.0\.1:\d+/\?token=[\w-]+", line)
            url = found.group(0).decode() if found else None
        wait_for_port(listen)
        self._thread = threading.Thread(target=self._browse, args=(url,), daemon=True)
        self._thread.start()
        self._opened.wait(120)
        return f"http://127.0.0.1:{listen}"

    def _browse(self, url: str) -> None:
        import shutil

        from playwright.sync_api import sync_playwright

        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path=shutil.which("chromium"), args=[
                "--no-sandbox", "--disable-gpu", "--disable-background-networking"])
            page = browser.new_page()
            page.goto(url)
            page.wait_for_selector("#summary")
            self._opened.set()
            self._asked.wait()
            page.wait_for_timeout(1000)  # the last rows on their way
            self._lags = page.evaluate("() => performance.getEntriesByName('row-lag').map((m) => m.detail)")
            browser.close()
        self._done.set()

    def lags(self) -> list[float]:
        self._asked.set()
        self._done.wait(120)
        return self._lags

    def stop(self) -> None:
        self._asked.set()
        if self.process is not None:
            self.process.terminate()
            self.process.wait(30)


class _Recording:
    """`a2a-capture record` as a user runs it; with ``otel``, `--otel URL` to a real OTLP/HTTP receiver in a
    process of its own (so its decoding competes with neither the clients nor the recorder's process)."""

    def __init__(self, upstream: str, output: Path, env: dict, otel: bool) -> None:
        self.upstream, self.output, self.env = upstream, output, env
        self.receiver = self.url = None
        if otel:
            self.receiver = subprocess.Popen([sys.executable, "-m", "tests.otlp_receiver"], env=env, cwd=ROOT,
                                             stdout=subprocess.PIPE)
            self.url = self.receiver.stdout.readline().decode().strip()
        self.process = None

    def start(self) -> str:
        listen = free_port()
        self.process = subprocess.Popen(
            [sys.executable, "-m", "a2a_capture.cli", "record", "--agent", self.upstream, "--listen",
             f"127.0.0.1:{listen}", "-o", str(self.output), *(["--otel", self.url] if self.url else [])],
            env=self.env, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        wait_for_port(listen)
        return f"http://127.0.0.1:{listen}"

    def stop(self) -> tuple[int, str]:
        """(spans the receiver got, the recorder's note on its export)."""
        note = ""
        if self.process is not None:
            self.process.terminate()
            _, errors = self.process.communicate(timeout=60)
            note = next((line for line in errors.decode().splitlines() if line.startswith("otel:")), "")
        spans = 0
        if self.receiver is not None:
            self.receiver.terminate()
            spans = int(self.receiver.communicate(timeout=60)[0].decode().split()[-1])
        return spans, note


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--requests", type=int, default=400)
    parser.add_argument("--streams", type=int, default=30)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--view", action="store_true", help="also record --view, its page open in Chromium")
    parser.add_argument("--otel", action="store_true", help="also record --otel, exporting to an OTLP/HTTP receiver")
    args = parser.parse_args()
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    agent_port, plain_port, addon_port = free_port(), free_port(), free_port()
    processes = [subprocess.Popen([sys.executable, "-m", "tests.agents", "--port", str(agent_port), "--streaming"],
                                  env=env, cwd=ROOT)]
    upstream = f"http://127.0.0.1:{agent_port}"
    with tempfile.TemporaryDirectory() as tmp:
        mitmdump = runner.find_mitmdump()
        processes.append(subprocess.Popen(
            [mitmdump, "--quiet", "--mode", f"reverse:{upstream}@127.0.0.1:{plain_port}",
             "--set", "keep_host_header=true", "--set", "stream_large_bodies=1m"], env=env))
        listener = runner.Listener("127.0.0.1", addon_port)
        processes.append(subprocess.Popen(runner.command(str(Path(tmp) / "bench.http"), [(upstream, listener)],
                                                         None), env=env))
        viewed = _ViewedRecording(upstream, Path(tmp) / "viewed.http", env) if args.view else None
        recorded = _Recording(upstream, Path(tmp) / "recorded.http", env, otel=False) if args.otel else None
        exported = _Recording(upstream, Path(tmp) / "exported.http", env, otel=True) if args.otel else None
        spans, note = 0, ""
        try:
            for port in (agent_port, plain_port, addon_port):
                wait_for_port(port)
            paths = {"direct": upstream, "mitmdump": f"http://127.0.0.1:{plain_port}",
                     "mitmdump+addon": f"http://127.0.0.1:{addon_port}"}
            proxies = {"mitmdump": processes[1].pid, "mitmdump+addon": processes[2].pid}
            if viewed is not None:
                paths["record --view"] = viewed.start()
            if exported is not None:
                paths["record"] = recorded.start()
                paths["record --otel"] = exported.start()
                proxies["record"], proxies["record --otel"] = recorded.process.pid, exported.process.pid
            load_before = os.getloadavg()
            # rounds that visit every path in turn, best of each: a shared 2-core machine is noisy
            best: dict[str, tuple[float, float]] = {}
            cpu: dict[str, float] = {}
            for _ in range(args.rounds):
                for name, base in paths.items():
                    before = cpu_seconds(proxies[name]) if name in proxies else 0.0
                    rps = asyncio.run(throughput(base, args.requests))
                    if name in proxies:
                        per_request = (cpu_seconds(proxies[name]) - before) / args.requests
                        cpu[name] = min(cpu.get(name, float("inf")), per_request)
                    ttfe = first_event(base, args.streams)
                    old = best.get(name, (0.0, float("inf")))
                    best[name] = (max(old[0], rps), min(old[1], ttfe))
            results = best
            load_after = os.getloadavg()
            lags = viewed.lags() if viewed is not None else []
        finally:
            if viewed is not None:
                viewed.stop()
            if exported is not None:
                recorded.stop()
                spans, note = exported.stop()
            for process in processes:
                process.terminate()
                process.wait(10)
    direct_rps, direct_ttfe = results["direct"]
    plain_rps, _ = results["mitmdump"]
    print(f"load average: {' '.join(f'{x:.2f}' for x in load_before)} before, "
          f"{' '.join(f'{x:.2f}' for x in load_after)} after")
    print(f"{'path':<16} {'req/s':>8} {'vs direct':>10} {'first event ms':>15} {'vs direct':>10} "
          f"{'proxy CPU ms/req':>17}")
    for name, (rps, ttfe) in results.items():
        used = f"{cpu[name] * 1000:17.2f}" if name in cpu else f"{'-':>17}"
        print(f"{name:<16} {rps:8.0f} {rps / direct_rps:9.2f}x {ttfe * 1000:15.2f} {ttfe / direct_ttfe:9.2f}x {used}")
    addon_rps, addon_ttfe = results["mitmdump+addon"]
    print(f"addon vs mitmdump alone: throughput {addon_rps / plain_rps:.2f}x "
          f"({(1 - addon_rps / plain_rps) * 100:+.1f}% cost), first event {(addon_ttfe - direct_ttfe) * 1000:+.2f} ms "
          "against direct (mitmdump alone holds a stream under 1 MB until it ends, so it is no baseline there), "
          f"CPU per request {cpu['mitmdump+addon'] / cpu['mitmdump']:.2f}x (aim: under 10% and under 5 ms)")
    if "record --view" in results:
        view_rps, view_ttfe = results["record --view"]
        median, worst = (statistics.median(lags), max(lags)) if lags else (float("nan"), float("nan"))
        print(f"record --view vs the addon alone: throughput {view_rps / addon_rps:.2f}x, first event "
              f"{(view_ttfe - addon_ttfe) * 1000:+.2f} ms; a row reached the page {median * 1000:.0f} ms (median) "
              f"and at worst {worst * 1000:.0f} ms after its exchange ended ({len(lags)} rows)")
    if "record --otel" in results:
        (otel_rps, otel_ttfe), (plain_record_rps, record_ttfe) = results["record --otel"], results["record"]
        print(f"record --otel vs record: throughput {otel_rps / plain_record_rps:.2f}x, first event "
              f"{(otel_ttfe - record_ttfe) * 1000:+.2f} ms, the record process's CPU "
              f"{cpu['record --otel'] * 1000:.2f} ms per request (without --otel {cpu['record'] * 1000:.2f}); the "
              f"receiver got {spans} spans ({note})")
    hooks = hook_cost(2000)
    print(f"the addon's hooks alone: {hooks['answer']:.0f} us per JSON-RPC answer, {hooks['stream']:.0f} us per "
          f"6-frame stream ({hooks['answer'] / 1e6 / cpu['mitmdump'] * 100:.1f}% of mitmdump's CPU per request)")


if __name__ == "__main__":
    main()
