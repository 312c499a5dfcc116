"""A2A stacks other than a2a-sdk 1.3.0, each in a virtualenv of its own, run as subprocesses.

They cannot share the test venv (a2a-sdk 0.3 and 1.3 are one package name), so each stack is a
folder here with a pinned requirements.txt, an agent.py and a client.py. `environment(name)`
makes the venv once (under .stacks/ in the checkout, or $A2A_CAPTURE_STACKS) and returns its
python; a changed requirements.txt gets a new venv. Agents and clients bind to 127.0.0.1 only.

    python -m tests.stacks            # make every stack's venv now (CI does this before pytest)
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import os
import shutil
import subprocess
import venv
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
NAMES = ("a2a_sdk_03", "fasta2a", "python_a2a")


class StackUnavailable(RuntimeError):
    """A stack's venv could not be made (typically: no package index reachable)."""


def home() -> Path:
    return Path(os.environ.get("A2A_CAPTURE_STACKS") or ROOT / ".stacks")


def environment(name: str) -> Path:
    """The python of the stack's venv, made on first use."""
    requirements = HERE / name / "requirements.txt"
    digest = hashlib.sha256(requirements.read_bytes()).hexdigest()[:12]
    target = home() / f"{name}-{digest}"
    python = target / "bin" / "python"
    ready = target / "ready"
    if ready.is_file():
        return python
    home().mkdir(parents=True, exist_ok=True)
    with open(home() / f"{name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # two pytest runs in one checkout make it once
        if ready.is_file():
            return python
        shutil.rmtree(target, ignore_errors=True)
        venv.EnvBuilder(with_pip=True, clear=True).create(target)
        # requirements.txt is the whole closure (pip freeze): nothing else is resolved or fetched
        done = subprocess.run([str(python), "-m", "pip", "install", "-q", "--disable-pip-version-check", "--no-deps",
                               "-r", str(requirements)], capture_output=True, text=True, timeout=900)
        if done.returncode != 0:
            shutil.rmtree(target, ignore_errors=True)
            tail = " ".join((done.stderr or done.stdout).strip().splitlines()[-3:])
            raise StackUnavailable(f"pip could not install {requirements.relative_to(ROOT)}: {tail}")
        ready.write_text(digest + "\n")
    return python


def script(name: str, role: str) -> Path:
    return HERE / name / f"{role}.py"


@contextlib.contextmanager
def agent(name: str, port: int, *args: str):
    """Run the stack's agent on 127.0.0.1:port; yields its base URL. Its output is shown if it fails."""
    from tests.live import wait_for_port

    process = subprocess.Popen([str(environment(name)), str(script(name, "agent")), "--port", str(port), *args],
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        try:
            wait_for_port(port, timeout=60)
        except TimeoutError:
            process.kill()
            raise TimeoutError(f"the {name} agent did not listen: {process.communicate()[0][-2000:]}") from None
        yield f"http://127.0.0.1:{port}"
    finally:
        if process.poll() is None:
            process.terminate()
            try:
                process.wait(10)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
        process.stdout.close()


def client(name: str, *args: str) -> dict:
    """Run the stack's client to the end; returns what it printed last (one JSON object)."""
    done = subprocess.run([str(environment(name)), str(script(name, "client")), *args],
                          capture_output=True, text=True, timeout=120)
    if done.returncode != 0:
        raise AssertionError(f"the {name} client failed ({done.returncode}): {done.stderr[-3000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])

