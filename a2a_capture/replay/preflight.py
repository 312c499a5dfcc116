"""What a replay checks before it sends anything: URLs that parse, agents that answer, an output it can write.

A replay that cannot finish should say why in one line before its first request, not leave
half a session on the agents and the reason in a file nobody reads.
"""

from __future__ import annotations

import os
import socket
from urllib.parse import urlsplit

from a2a_capture.address import URL_EXAMPLE, AddressError, http_url
from a2a_capture.errors import PreflightError


def check_url(name: str, url: str) -> None:
    try:
        http_url(url)
    except AddressError:
        raise PreflightError(f"--target {name}={url}: expected an http:// or https:// URL with a host, "
                             f"{URL_EXAMPLE}") from None


def check_reachable(name: str, url: str, timeout: float = 5.0) -> None:
    """A TCP connection to the target's host and port, so a stopped agent is named at once."""
    parts = urlsplit(url)
    port = parts.port or (443 if parts.scheme == "https" else 80)
    try:
        with socket.create_connection((parts.hostname, port), timeout=timeout):
            pass
    except OSError as error:
        reason = error.strerror or str(error) or type(error).__name__
        raise PreflightError(f"cannot reach {name} at {url}: {reason}") from None


def check_writable(path: str) -> None:
    """The output's folder exists and takes files; an existing output can be overwritten."""
    folder = os.path.dirname(os.path.abspath(path))
    if os.path.isdir(path):
        raise PreflightError(f"cannot write {path}: it is a folder")
    if not os.path.isdir(folder):
        raise PreflightError(f"cannot write {path}: the folder {folder} does not exist")
    if (os.path.exists(path) and not os.access(path, os.W_OK)) or not os.access(folder, os.W_OK | os.X_OK):
        raise PreflightError(f"cannot write {path}: permission denied")
