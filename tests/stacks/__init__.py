"""A2A stacks other than a2a-sdk 1.3.0, each installed on its own, run as subprocesses.

They cannot share the test venv (a2a-sdk 0.3 and 1.3 are one package name), so each stack is a
folder here: a Python stack has a pinned requirements.txt, an agent.py and (if it has one) a client.py; an npm
stack (JavaScript) has package.json with its package-lock.json, an agent.mjs and a client.mjs.
`environment(name)` installs a stack once (a venv, or `npm ci`; under .stacks/ in the checkout, or
$A2A_CAPTURE_STACKS), keyed by the hash of its pinned file, so a changed pin gets a new install.
Agents and clients bind to 127.0.0.1 only.

    python -m tests.stacks            # install every stack now (CI does this before pytest)
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
NAMES = ("a2a_sdk_02", "a2a_sdk_03", "fasta2a", "python_a2a", "a2a_js", "nodus_a2a_wire", "pya2a", "strands",
         "agent_framework", "google_adk")


class StackUnavailable(RuntimeError):
    """A stack could not be installed (typically: no package index reachable, or no node/npm)."""


def home() -> Path:
    return Path(os.environ.get("A2A_CAPTURE_STACKS") or ROOT / ".stacks")


def is_npm(name: str) -> bool:
    return (HERE / name / "package-lock.json").is_file()


def environment(name: str) -> Path:
    """Where the stack is installed (the python of its venv, or the folder holding its
    node_modules), installed on first use."""
    pinned = HERE / name / ("package-lock.json" if is_npm(name) else "requirements.txt")
    digest = hashlib.sha256(pinned.read_bytes()).hexdigest()[:12]
    target = home() / f"{name}-{digest}"
    ready = target / "ready"
    made = target if is_npm(name) else target / "bin" / "python"
    if ready.is_file():
        return made
    home().mkdir(parents=True, exist_ok=True)
    with open(home() / f"{name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # two pytest runs in one checkout make it once
        if ready.is_file():
            return made
        shutil.rmtree(target, ignore_errors=True)
        try:
            (_npm_install if is_npm(name) else _pip_install)(pinned, target)
        except StackUnavailable:
            shutil.rmtree(target, ignore_errors=True)
            raise
        ready.write_text(digest + "\n")
    return made


def _pip_install(requirements: Path, target: Path) -> None:
    venv.EnvBuilder(with_pip=True, clear=True).create(target)
    # requirements.txt is the whole closure (pip freeze): nothing else is resolved or fetched
    _run("pip", requirements, [str(target / "bin" / "python"), "-m", "pip", "install", "-q",
                               "--disable-pip-version-check", "--no-deps", "-r", str(requirements)], target)


def _npm_install(lockfile: Path, target: Path) -> None:
    missing = [tool for tool in ("node", "npm") if shutil.which(tool) is None]
    if missing:
        raise StackUnavailable(f"{lockfile.parent.name} needs {' and '.join(missing)} on PATH "
                               "(Debian: apt-get install nodejs npm)")
    target.mkdir(parents=True)
    for pin in ("package.json", "package-lock.json"):
        shutil.copyfile(lockfile.parent / pin, target / pin)
    # package-lock.json is the whole closure: npm ci installs exactly it, and runs no install scripts
    _run("npm", lockfile, ["npm", "ci", "--ignore-scripts", "--no-audit", "--no-fund", "--loglevel=error"], target)


def _run(tool: str, pinned: Path, command: list[str], cwd: Path) -> None:
    done = subprocess.run(command, cwd=cwd, capture_output=True, text=True, timeout=900)
    if done.returncode != 0:
        tail = " ".join((done.stderr or done.stdout).strip().splitlines()[-3:])
        raise StackUnavailable(f"{tool} could not install {pinned.relative_to(ROOT)}: {tail}")


def command(name: str, role: str) -> list[str]:
    """How to run the stack's agent or client. A script of an npm stack is run through a link
    beside the install's node_modules (node resolves its imports from where it is named), one
    link folder per checkout, since the install is shared by every checkout with the same lock."""
    if not is_npm(name):
        return [str(environment(name)), str(HERE / name / f"{role}.py")]
    links = environment(name) / "links" / hashlib.sha256(str(HERE).encode()).hexdigest()[:12]
    links.mkdir(parents=True, exist_ok=True)
    script = HERE / name / f"{role}.mjs"
    for link, points_to in (("node_modules", Path("..", "..", "node_modules")), (script.name, script)):
        if not (links / link).is_symlink():
            temporary = links / f".{link}.{os.getpid()}"
            temporary.symlink_to(points_to)
            os.replace(temporary, links / link)  # two runs at once both end with the same link
    return ["node", "--preserve-symlinks-main", str(links / script.name)]


@contextlib.contextmanager
def agent(name: str, port: int, *args: str):
    """Run the stack's agent on 127.0.0.1:port; yields its base URL. Its output is shown if it fails."""
    from tests.live import wait_for_port

    process = subprocess.Popen([*command(name, "agent"), "--port", str(port), *args],
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


def client(name: str, *args: str, env: dict[str, str] | None = None) -> dict:
    """Run the stack's client to the end (with ``env`` added to its environment: a proxy, say);
    returns what it printed last (one JSON object)."""
    done = subprocess.run([*command(name, "client"), *args], env={**os.environ, **(env or {})},
                          capture_output=True, text=True, timeout=120)
    if done.returncode != 0:
        raise AssertionError(f"the {name} client failed ({done.returncode}): {done.stderr[-3000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])

