"""Addresses as people write them on a command line: HOST:PORT, agent URLs, and NAME= pairs.

One parser for each, so `record`, `replay` and `serve` accept the same spellings and refuse the
same mistakes with the same words.
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Iterable, Sequence
from typing import TypeVar
from urllib.parse import urlsplit

from a2a_capture.errors import AddressError

T = TypeVar("T")

#: what HOST:PORT looks like, for messages
HOST_PORT_EXAMPLE = "such as 127.0.0.1:51241 or [::1]:51241"
URL_EXAMPLE = "such as http://127.0.0.1:41241"
_HOSTNAME = re.compile(r"[A-Za-z0-9_.-]+")
_SCHEME = re.compile(r"https?://", re.IGNORECASE)


def host_port(text: str, *, free_port: bool = False) -> tuple[str, int]:
    """HOST:PORT, an IPv6 host in brackets ([::1]:8080); no host means 127.0.0.1. Port 0 (any
    free port) only where ``free_port`` says the caller can take one."""
    host, sep, port = text.rpartition(":")
    if not sep or not (port.isascii() and port.isdigit()) or len(port) > 5 or int(port) > 65535:
        raise AddressError(f"{text!r} should be HOST:PORT with a port up to 65535, {HOST_PORT_EXAMPLE}")
    if int(port) == 0 and not free_port:
        raise AddressError(f"{text!r} has port 0: give a port from 1 to 65535, {HOST_PORT_EXAMPLE}")
    if host.startswith("[") and host.endswith("]"):
        try:
            host = str(ipaddress.IPv6Address(host[1:-1]))
        except ValueError:
            raise AddressError(f"{text!r}: {host} is not an IPv6 address in brackets, such as [::1]:51241") from None
    elif ":" in host:
        raise AddressError(f"{text!r}: put an IPv6 host in brackets, such as [::1]:51241")
    elif host and not _HOSTNAME.fullmatch(host):
        raise AddressError(f"{text!r}: {host!r} is not a host name or address, {HOST_PORT_EXAMPLE}")
    return host or "127.0.0.1", int(port)


def http_url(text: str) -> str:
    """An http:// or https:// URL with a host and a valid port, as given."""
    parts = urlsplit(text)
    try:
        valid_port = bool(parts.port) or parts.port is None
    except ValueError:
        valid_port = False
    if parts.scheme.lower() not in ("http", "https") or not parts.hostname or not valid_port:
        raise AddressError(f"{text!r}: expected an http:// or https:// URL with a host, {URL_EXAMPLE}")
    return text


def named(text: str, *, url: bool) -> tuple[str | None, str]:
    """Splits [NAME=]ADDRESS. A URL's name ends at the first `=` (a URL may hold one later);
    a HOST:PORT's at the last (a host never holds one). No name: (None, ADDRESS)."""
    if url and _SCHEME.match(text):
        return None, text
    name, sep, address = text.partition("=") if url else text.rpartition("=")
    if not sep:
        return None, text
    if not name:
        raise AddressError(f"{text!r}: the NAME before `=` is empty")
    return name, address


def pair(given: Sequence[tuple[str | None, T]], names: Iterable[Iterable[str]], option: str, *,
         others_named: bool = False) -> list[T | None]:
    """For each candidate (known by any of its ``names``), the value given for it: the one that
    names it, else the next unnamed one in order; None when none is left. A name nobody has
    (unless ``others_named`` allows it), or more unnamed values than candidates left, is an
    error that lists the names there are."""
    candidates = [list(keys) for keys in names]
    by_name = {name: value for name, value in given if name is not None}
    unnamed = [value for name, value in given if name is None]
    known = {key for keys in candidates for key in keys}
    unknown = sorted(set(by_name) - known)
    choices = ", ".join(keys[0] for keys in candidates)
    if unknown and not others_named:
        raise AddressError(f"{option} names {', '.join(unknown)}, which is none of the agents: {choices}")
    paired: list[T | None] = []
    for keys in candidates:
        found = next((by_name[key] for key in keys if key in by_name), None)
        if found is None and unnamed:
            found = unnamed.pop(0)
        paired.append(found)
    if unnamed:
        raise AddressError(f"{len(given)} {option} for {len(candidates)} agents ({choices}): "
                           f"{len(unnamed)} left over")
    return paired
