"""`record --live`: each finding is printed on stderr while the recording still runs."""

from __future__ import annotations

import os
import signal
import subprocess
import sys

import httpx
import pytest

from a2a_capture.capture import read_capture
from tests.live import ROOT, agent, follow, free_port, wait_for_line, wait_for_port

pytestmark = pytest.mark.live


def test_a_wasted_round_trip_is_printed_as_it_happens(tmp_path):
    output, listen = tmp_path / "live.http", free_port()
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    with agent("test-runner") as upstream:
        process = subprocess.Popen([sys.executable, "-m", "a2a_capture.cli", "record", "--live", "--agent", upstream,
                                    "--listen", f"127.0.0.1:{listen}", "-o", str(output)],
                                   stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env)
        lines = follow(process.stderr)
        seen: list[str] = []
        try:
            wait_for_port(listen)
            card = f"http://127.0.0.1:{listen}/.well-known/agent-card.json"
            httpx.get(card)
            httpx.get(card)  # again, without If-None-Match: a wasted round trip
            printed = wait_for_line(lines, "card-refetch", seen).string  # while the recorder still runs
            assert process.poll() is None
        finally:
            process.send_signal(signal.SIGTERM)
            process.wait(timeout=30)
    line = next(number for number, text in enumerate(output.read_text().splitlines(), 1) if text.startswith("### 2 "))
    assert printed.startswith(f"{output}:{line}: warning card-refetch [wasted] ")  # the line in the whole file
    assert printed.rstrip().endswith("(exchange 2)")
    assert not any("card-refetch" in line for line in seen[:-1])  # once, for exchange 2 only
    assert len(read_capture(output).exchanges) == 2
