"""`a2a-capture record`: run mitmdump with the recorder addon, and stop it cleanly.

Reverse mode puts one listener in front of each agent; regular mode is a forward proxy the
client is told to use. The command checks what it can before it starts (mitmdump present,
ports free, output writable) so a mistake is one clear line, not a proxy that dies later.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from urllib.parse import urlsplit

from a2a_capture.address import AddressError, host_port, http_url, pair
from a2a_capture.errors import RecordError
from a2a_capture.redact import policy
from a2a_capture.resources import addons_dir

ADDON = "a2a_recorder.py"


@dataclass(frozen=True)
class Listener:
    host: str
    port: int

    @classmethod
    def parse(cls, text: str, what: str) -> Listener:
        """HOST:PORT as address.host_port reads it (port 0: any free one)."""
        try:
            return cls(*host_port(text, free_port=True))
        except AddressError as error:
            raise RecordError(f"{what} {error}") from None

    def __str__(self) -> str:
        return f"[{self.host}]:{self.port}" if ":" in self.host else f"{self.host}:{self.port}"


def find_mitmdump() -> str:
    beside = os.path.join(os.path.dirname(sys.executable), "mitmdump")
    found = beside if os.access(beside, os.X_OK) else shutil.which("mitmdump")
    if not found:
        raise RecordError("mitmdump was not found: install the recorder with `pip install 'a2a-capture[record]'`")
    return found


def check_port_free(listener: Listener) -> None:
    family = socket.AF_INET6 if ":" in listener.host else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind((listener.host, listener.port))
        except OSError as error:
            raise RecordError(f"cannot listen on {listener}: {error.strerror or error}; choose another port") from None


def check_output(path: str) -> None:
    """The capture can be written, and no other recorder is writing it (it holds the file's lock)."""
    from a2a_capture.errors import CaptureInUse
    from a2a_capture.record.sink import lock

    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
    except OSError as error:
        raise RecordError(f"cannot write the capture to {path}: {error.strerror or error}") from None
    try:
        lock(fd, path)
    except CaptureInUse as error:
        raise RecordError(str(error)) from None
    finally:
        os.close(fd)  # and with it this lock: the recorder takes its own


def command(output: str, agents: list[tuple[str, Listener]], proxy: Listener | None, *, redact: bool = True,
            rewrite_cards: bool = True, mitmdump: str | None = None, upstream_trust: str | None = None,
            upstream_insecure: bool = False, count_file: str | None = None) -> list[str]:
    """The mitmdump command line for this recording. ``count_file``: where the addon writes, at
    stop, how many exchanges it wrote (so they are counted as written, not read again);
    ``upstream_trust``: a CA file (PEM) that vouches for the agents' TLS certificates (a
    self-signed gRPC or HTTPS agent);
    ``upstream_insecure``: check no agent certificate at all."""
    args = [mitmdump or find_mitmdump(), "-s", str(addons_dir() / ADDON),
            # no flow log; warnings (the addon's, about calls that would escape the recording) still show
            "--set", "flow_detail=0", "--set", "termlog_verbosity=warn",
            "--set", f"a2a_capture={output}", "--set", f"a2a_redact={'true' if redact else 'false'}",
            # the policy in force here (pyproject.toml's, the command line's), whatever mitmdump's folder
            "--set", f"a2a_redact_policy={policy.active().to_json()}",
            "--set", f"a2a_rewrite_cards={'true' if rewrite_cards else 'false'}",
            # the client's Host header stays as it was, so the capture shows what the client sent
            "--set", "keep_host_header=true",
            # stream bodies through (the addon keeps the copy), never buffer large ones whole
            "--set", "stream_large_bodies=1m",
            # read the request before connecting upstream, so a refused connection is still recorded
            "--set", "connection_strategy=lazy"]
    for upstream, listener in agents:
        args += ["--mode", f"reverse:{upstream}@{listener.host}:{listener.port}"]
    for upstream, listener in agents:  # a card served by one agent may name another's server
        args += ["--set", f"a2a_routes={upstream}=http://{listener}"]
    if proxy is not None:
        args += ["--mode", f"regular@{proxy.host}:{proxy.port}"]
    if upstream_trust:
        args += ["--set", f"ssl_verify_upstream_trusted_ca={os.path.abspath(upstream_trust)}"]
    if upstream_insecure:
        args += ["--set", "ssl_insecure=true"]
    if count_file:
        args += ["--set", f"a2a_count_file={count_file}"]
    return args


def parse_agent(url: str) -> str:
    """The agent's origin, scheme://host:port, from its URL."""
    try:
        parts = urlsplit(http_url(url))
    except AddressError:
        raise RecordError(f"--agent {url!r} should be an http:// or https:// URL of an agent") from None
    return f"{parts.scheme}://{parts.netloc}"


def agent_listeners(agents: list[tuple[str | None, str]],
                    listens: list[tuple[str | None, Listener]]) -> list[tuple[str, Listener]]:
    """Each --agent [NAME=]URL with its --listen [NAME=]HOST:PORT: the one that names it (its NAME
    or its host:port) or, unnamed, the next in order; every agent needs one."""
    urls = [parse_agent(url) for _, url in agents]
    names = [[name, urlsplit(url).netloc] if name else [urlsplit(url).netloc]
             for (name, _), url in zip(agents, urls, strict=True)]
    listeners = pair(listens, names, "--listen")
    missing = [url for url, listener in zip(urls, listeners, strict=True) if listener is None]
    if missing:
        raise RecordError(f"no --listen for {', '.join(missing)}: give one --listen [NAME=]HOST:PORT for each --agent")
    return list(zip(urls, listeners, strict=True))


def wait_until_listening(listeners: list[Listener], process: subprocess.Popen, timeout: float = 30) -> None:
    deadline = time.monotonic() + timeout
    pending = list(listeners)
    while pending:
        if process.poll() is not None:
            raise RecordError(f"mitmdump exited with status {process.returncode} before it was listening")
        try:
            with socket.create_connection((pending[0].host, pending[0].port), timeout=0.2):
                pending.pop(0)
        except OSError:
            if time.monotonic() > deadline:
                raise RecordError(f"mitmdump did not listen on {pending[0]} within {timeout:.0f} s") from None
            time.sleep(0.05)


@dataclass
class Recording:
    """A running mitmdump with the addon, and what is needed to stop it and say what it wrote."""

    output: str
    agents: list[tuple[str, Listener]]
    proxy: Listener | None
    process: subprocess.Popen
    #: where the addon writes how many exchanges it wrote, as it stops
    count_file: str

    @property
    def listener_urls(self) -> list[str]:
        return [f"http://{listener}" for _, listener in self.agents]

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGINT)  # mitmdump writes what is in flight and runs done()
            try:
                self.process.wait(15)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()

    def written(self) -> int | None:
        """How many exchanges the addon wrote (None: mitmdump ended before it could say)."""
        try:
            with open(self.count_file) as count:
                text = count.read().strip()
        except OSError:
            return None
        finally:
            with contextlib.suppress(OSError):
                os.unlink(self.count_file)
        return int(text) if text.isdigit() else None


def start(output: str, agents: list[tuple[str, Listener]], proxy: Listener | None, *, redact: bool = True,
          rewrite_cards: bool = True, upstream_trust: str | None = None, upstream_insecure: bool = False,
          ) -> Recording:
    """Check what can be checked, start mitmdump, and return once every listener accepts connections."""
    if not agents and proxy is None:
        raise RecordError("say what to record: --agent URL --listen HOST:PORT (repeatable), or --proxy HOST:PORT")
    listeners = [listener for _, listener in agents] + ([proxy] if proxy else [])
    for listener in listeners:
        check_port_free(listener)
    check_output(output)
    if upstream_trust and not os.path.isfile(upstream_trust):
        raise RecordError(f"--upstream-trust {upstream_trust}: no such file (expected a CA certificate in PEM)")
    handle, count_file = tempfile.mkstemp(prefix="a2a-capture-count-")
    os.close(handle)
    # mitmdump logs on stdout; the recorder's lines (a warning, a full disk) are for stderr, with the command's
    process = subprocess.Popen(command(output, agents, proxy, redact=redact, rewrite_cards=rewrite_cards,
                                       upstream_trust=upstream_trust, upstream_insecure=upstream_insecure,
                                       count_file=count_file), stdout=_stderr())
    recording = Recording(output, agents, proxy, process, count_file)
    try:
        wait_until_listening(listeners, process)
    except BaseException:
        recording.stop()
        raise
    return recording


def _stderr():
    try:
        return sys.stderr.fileno()
    except (AttributeError, OSError, ValueError):  # not a file (a test's capture): mitmdump keeps stdout
        return None


def empty_warning(recording: Recording) -> str:
    """What an empty recording most likely means, and the fix."""
    if recording.proxy is not None:
        return (f"a2a-capture: warning: no exchange was recorded: the client did not use the proxy at "
                f"{recording.proxy}, or all its traffic passed as raw TCP (a warning above then names where). "
                f"Many clients ignore HTTP_PROXY (Node's built-in fetch does): give the client the proxy "
                f"explicitly, or record in reverse mode with --agent URL --listen HOST:PORT")
    return (f"a2a-capture: warning: no exchange was recorded: no client called "
            f"{' or '.join(recording.listener_urls)}; point the client at the listener, not at the agent")


def _finish(recording: Recording, echo, warn) -> int:
    written = recording.written()
    if written is None:
        warn(f"a2a-capture: mitmdump stopped before it said how many exchanges it wrote; {recording.output} "
             f"holds what was written")
        return 0
    echo(f"wrote {written} exchange{'s' if written != 1 else ''} to {recording.output}")
    if not written:
        warn(empty_warning(recording))
    return written


def _live(output: str, echo):
    """`record --live`: the analysis that prints each finding as its exchange is written."""
    if echo is None:
        return None
    from a2a_capture.analyze import config as settings
    from a2a_capture.record.live import LiveAnalysis

    return LiveAnalysis(output, echo, settings.load())


def run(output: str, agents: list[tuple[str, Listener]], proxy: Listener | None, *, echo=print,
        warn=print, live=None, watchers=(), **options) -> int:
    """Record until Ctrl-C or SIGTERM; returns how many exchanges were written.

    ``live``: where to print each finding as its exchange is written (`record --live`).
    ``watchers``: more readers of the growing capture (`record --view`), each asked to ``poll()``
    what was appended at every look, and ``poll(final=True)`` once recording stopped."""
    stop = {"signal": None}

    def forward(signum, frame):
        stop["signal"] = signum

    previous = {sig: signal.signal(sig, forward) for sig in (signal.SIGINT, signal.SIGTERM)}
    watch = None
    try:
        if live is not None:  # watch from before the first exchange, which may come the moment it listens
            check_output(output)
            watch = _live(output, live)
        looking = [w for w in (watch, *watchers) if w is not None]
        recording = start(output, agents, proxy, **options)
        try:
            for upstream, listener in agents:
                echo(f"recording {upstream} at http://{listener}")
            if proxy is not None:
                echo(f"recording as an HTTP proxy at {proxy} (point the client's proxy setting here)")
            echo(f"writing to {output}; stop with Ctrl-C")
            while recording.process.poll() is None and stop["signal"] is None:
                time.sleep(0.1)
                for watcher in looking:
                    watcher.poll()
        finally:
            recording.stop()
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
    for watcher in looking:
        watcher.poll(final=True)  # what mitmdump finished writing as it stopped
    return _finish(recording, echo, warn)


#: where the command run inside a recording finds the listeners (reverse mode), in --agent order
LISTENERS_VARIABLE = "A2A_CAPTURE_LISTENERS"


def command_environment(recording: Recording, base: dict[str, str]) -> dict[str, str]:
    """The command's environment: the proxy for --proxy, the listener URLs for reverse mode."""
    env = dict(base)
    if recording.proxy is not None:
        url = f"http://{recording.proxy}"
        for name in ("HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy"):
            env[name] = url
    if recording.agents:
        env[LISTENERS_VARIABLE] = " ".join(recording.listener_urls)
    return env


def run_command(argv: list[str], output: str, agents: list[tuple[str, Listener]], proxy: Listener | None, *,
                echo=print, warn=print, watchers=(), **options) -> tuple[int, int]:
    """Record around one run of ``argv``: start, run it, stop when it ends. ``watchers``: as ``run``'s,
    polled while the command runs (`record --otel`).

    Returns the command's exit status and how many exchanges were written. SIGTERM is passed
    on to the command; Ctrl-C reaches it from the terminal, as it would without the recorder.
    """
    recording = start(output, agents, proxy, **options)
    try:
        try:
            child = subprocess.Popen(argv, env=command_environment(recording, dict(os.environ)))
        except OSError as error:
            raise RecordError(f"cannot run {argv[0]}: {error.strerror or error}") from None

        def forward(signum, frame):
            child.send_signal(signum)

        previous = {sig: signal.signal(sig, forward) for sig in (signal.SIGINT, signal.SIGTERM)}
        try:
            while True:
                try:
                    status = child.wait(0.1 if watchers else None)
                    break
                except subprocess.TimeoutExpired:
                    for watcher in watchers:
                        watcher.poll()
                except KeyboardInterrupt:  # pragma: no cover - the handler above takes SIGINT
                    continue
        finally:
            for sig, handler in previous.items():
                signal.signal(sig, handler)
    finally:
        recording.stop()
        for watcher in watchers:
            watcher.poll(final=True)  # what mitmdump finished writing as it stopped
    return status, _finish(recording, echo, warn)
