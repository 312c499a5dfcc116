"""Real parts for live tests: a2a-sdk agents in threads, mitmdump with the recorder addon.

Everything binds to 127.0.0.1. Servers stop when their context ends.
"""

from __future__ import annotations

import contextlib
import os
import queue
import re
import socket
import sys
import threading
import time
from pathlib import Path

import uvicorn

from a2a_capture.record.process import RecorderProcess, free_port
from tests.agents import build_app

ROOT = Path(__file__).resolve().parent.parent


def wait_for_port(port: int, timeout: float = 30) -> None:
    deadline = time.monotonic() + timeout
    while True:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.2):
                return
        except OSError:
            if time.monotonic() > deadline:
                raise TimeoutError(f"nothing listens on 127.0.0.1:{port}") from None
            time.sleep(0.05)


@contextlib.contextmanager
def serve(app, port: int | None = None, tls: tuple[Path, Path] | None = None):
    """Run an ASGI app with uvicorn in a thread; yields its base URL. ``tls``: (key, certificate)."""
    port = port or free_port()
    certificates = {"ssl_keyfile": str(tls[0]), "ssl_certfile": str(tls[1])} if tls else {}
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning", lifespan="off",
                                           **certificates))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    wait_for_port(port)
    try:
        yield f"{'https' if tls else 'http'}://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(10)


@contextlib.contextmanager
def agent(name: str = "test-runner", port: int | None = None, **options):
    port = port or free_port()
    with serve(build_app(name, port, **options), port) as url:
        yield url


@contextlib.contextmanager
def tls_agent(name: str, directory: Path, port: int | None = None, **options):
    """An agent over TLS with a certificate made here (in ``directory``); yields its https URL."""
    port = port or free_port()
    app = build_app(name, port, public_base=f"https://127.0.0.1:{port}", **options)
    with serve(app, port, tls=self_signed(directory)) as url:
        yield url


def self_signed(directory: Path) -> tuple[Path, Path]:
    """A key and certificate for 127.0.0.1, made here: an agent's TLS in the HTTPS tests."""
    import datetime
    import ipaddress

    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "127.0.0.1")])
    now = datetime.datetime.now(datetime.UTC)
    cert = (x509.CertificateBuilder().subject_name(name).issuer_name(name).public_key(key.public_key())
            .serial_number(x509.random_serial_number()).not_valid_before(now - datetime.timedelta(days=1))
            .not_valid_after(now + datetime.timedelta(days=1))
            .add_extension(x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]),
                           critical=False)
            .sign(key, hashes.SHA256()))
    key_file, cert_file = directory / "agent.key", directory / "agent.pem"
    key_file.write_bytes(key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                           serialization.NoEncryption()))
    cert_file.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    return key_file, cert_file


def mitmproxy_trust(confdir: Path):
    """An SSL context that trusts the CA mitmproxy made in ``confdir`` (and nothing else), as a user would."""
    import ssl

    return ssl.create_default_context(cafile=str(confdir / "mitmproxy-ca-cert.pem"))


class Recorder(RecorderProcess):
    """The library's recorder process, with the checkout on the addon's import path."""

    def __init__(self, output: Path, agents=(), proxy_port: int | None = None, redact: bool = True,
                 extra: list[str] | None = None) -> None:
        super().__init__(output, agents, proxy_port, redact, extra, env={**os.environ, "PYTHONPATH": str(ROOT)})

    def __exit__(self, *exc) -> None:
        output = self.stop()
        if exc[0] is not None:
            sys.stderr.write(output)


def follow(stream) -> queue.Queue:
    """The lines a process writes to ``stream``, as they come, read by a thread of their own."""
    lines: queue.Queue = queue.Queue()

    def read() -> None:
        for raw in iter(stream.readline, b""):
            lines.put(raw.decode(errors="replace"))

    threading.Thread(target=read, daemon=True).start()
    return lines


def wait_for_line(lines: queue.Queue, pattern: str, seen: list[str] | None = None, timeout: float = 30) -> re.Match:
    """The first line (of ``follow``'s) that ``pattern`` (a regular expression) matches; each line read
    is added to ``seen``."""
    seen = [] if seen is None else seen
    compiled, deadline = re.compile(pattern), time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            line = lines.get(timeout=0.2)
        except queue.Empty:
            continue
        seen.append(line)
        found = compiled.search(line)
        if found:
            return found
    raise AssertionError(f"no line matching {pattern!r} within {timeout} s; saw {seen}")

