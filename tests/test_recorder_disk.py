"""The recorder on a disk that fills, and two recorders on one file.

Real `a2a-capture record` (mitmdump with the addon) in front of a real a2a-sdk agent, writing onto
a small tmpfs (the tests run as root) that fills part way through a client's calls.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import httpx
import pytest

from a2a_capture.capture import read_capture
from tests.conftest import require
from tests.live import Recorder, agent, free_port, wait_for_port
from tests.test_record_command import _record

pytestmark = pytest.mark.live

#: a client that sends COUNT calls to the listener, one after another, and says how many were answered
CLIENT = """
import json, os, sys
import httpx
base = os.environ["A2A_CAPTURE_LISTENERS"].split(" ")[0]
answered = 0
with httpx.Client(timeout=30) as http:
    for index in range(int(sys.argv[1])):
        body = {"jsonrpc": "2.0", "id": index, "method": "SendMessage", "params": {"message": {
            "messageId": f"m-{index}", "role": "ROLE_USER", "parts": [{"text": "a question, " + "x" * 1500}]}}}
        answer = http.post(base + "/a2a/jsonrpc", json=body, headers={"A2A-Version": "1.0"})
        answered += answer.status_code == 200 and "result" in answer.json()
print(f"answered {answered}", file=sys.stderr)
"""


@pytest.fixture
def small_disk(tmp_path):
    """A 64 KiB file system, mounted here for the test."""
    mount = tmp_path / "small"
    mount.mkdir()
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", str(mount)], capture_output=True)
    if done.returncode != 0:
        require(f"a small tmpfs cannot be mounted here (it needs root, as in CI): {done.stderr.decode().strip()}")
    try:
        yield mount
    finally:
        subprocess.run(["umount", str(mount)], check=True)


def test_a_full_disk_stops_the_recording_with_one_line_and_the_traffic_passes(small_disk):
    output = small_disk / "session.http"
    with agent("disk", streaming=False) as upstream:
        done = _record("--agent", upstream, "--listen", f"127.0.0.1:{free_port()}", "-o", str(output),
                       "--", sys.executable, "-c", CLIENT, "80")
    assert "answered 80" in done.stderr, done.stderr  # every call answered, through a full disk
    assert "Traceback" not in done.stderr
    stopped = [line for line in done.stderr.splitlines() if "recording stopped" in line]
    assert len(stopped) == 1, done.stderr
    assert f"{output}: No space left on device: recording stopped at exchange " in stopped[0]
    assert stopped[0].endswith("; traffic still passes")
    # the count said at stop is the number of whole exchanges in the file, and nothing is torn
    exchanges = read_capture(output).exchanges
    assert 5 < len(exchanges) < 80
    assert f"wrote {len(exchanges)} exchanges to {output}" in done.stderr
    assert f"with {len(exchanges)} exchanges written whole" in stopped[0]
    assert [e.number for e in exchanges] == list(range(1, len(exchanges) + 1))
    assert all(e.response is not None and e.response.status == 200 for e in exchanges)
    assert output.read_bytes().endswith(b"\n")


def test_a_second_recorder_on_the_same_file_refuses_with_one_line(tmp_path):
    output = tmp_path / "shared.http"
    listen = free_port()
    with agent("shared", streaming=False) as upstream, Recorder(output, [(upstream, listen)]):
        second = _record("--agent", upstream, "--listen", f"127.0.0.1:{free_port()}", "-o", str(output),
                         "--", sys.executable, "-c", "pass")
        direct = subprocess.run([str(Path(sys.executable).parent / "mitmdump"), "-q", "-s",
                                 str(Path(__file__).resolve().parent.parent / "addons" / "a2a_recorder.py"),
                                 "--mode", f"reverse:{upstream}@127.0.0.1:{free_port()}",
                                 "--set", f"a2a_capture={output}"], capture_output=True, text=True, timeout=60,
                                env={"PYTHONPATH": str(Path(__file__).resolve().parent.parent), "PATH": "/usr/bin"})
        wait_for_port(listen)
        for index in range(3):
            httpx.post(f"http://127.0.0.1:{listen}/a2a/jsonrpc", headers={"A2A-Version": "1.0"}, json={
                "jsonrpc": "2.0", "id": index, "method": "SendMessage", "params": {"message": {
                    "messageId": f"m-{index}", "role": "ROLE_USER", "parts": [{"text": "a question"}]}}})
    assert second.returncode != 0
    lines = second.stderr.strip().splitlines()
    assert lines == [f"a2a-capture: error: {output} is being recorded by another a2a-capture recorder "
                     "(the file is locked); record to another file"], second.stderr
    # mitmdump run by hand with the addon refuses too, naming the file
    assert direct.returncode != 0
    assert "is being recorded by another a2a-capture recorder" in direct.stdout + direct.stderr
    assert "Traceback" not in direct.stdout + direct.stderr
    assert [e.number for e in read_capture(output).exchanges] == [1, 2, 3]
