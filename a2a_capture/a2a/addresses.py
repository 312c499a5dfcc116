"""Who a call went to: the agent's origin as the client addressed it, and the server behind it."""

from __future__ import annotations

import re
from functools import lru_cache
from urllib.parse import urlsplit

#: the recorder's note on an HTTPS exchange (docs/capture-format.md)
TLS_NOTE = re.compile(r"over TLS to (\S+)\Z")


@lru_cache(maxsize=1024)  # a session addresses a few agents, over and over
def origins(scheme: str, netloc: str, host: str | None, server: str | None,
             tls: str | None) -> tuple[str | None, str | None]:
    """(the origin the client addressed, the server's origin where that differs).

    The scheme comes from what the capture knows: an absolute-form target says it; else the
    recorder's TLS note (``tls``: the host it names) does, when it names the host the client
    addressed (a reverse proxy in front of a TLS upstream names the upstream instead, and the
    client spoke to the listener); else plain HTTP.
    """
    if scheme and netloc:  # absolute-form target, as sent to a forward proxy
        agent = _origin(scheme.lower(), netloc)
    else:
        host = host or server
        if not host:
            return None, None
        agent = _origin("http", host)
        if tls is not None and _origin("https", tls) == _origin("https", host):
            agent = _origin("https", host)
    upstream = None
    if tls is not None and not agent.startswith("https:"):
        upstream = _origin("https", server or tls)  # a listener in front of a TLS upstream
    elif server:
        upstream = _origin(agent.split(":", 1)[0], server)
    return agent, upstream if upstream != agent else None


def split_target(target: str) -> tuple[str, str, str, str]:
    """(scheme, netloc, path, query) of the request target, as ``urlsplit`` gives them; a
    malformed one (a bad IPv6 host) is read as a path."""
    if target == "/":
        return _ROOT
    if (target[:1] == "/" and target[1:2] != "/" and "#" not in target and "\t" not in target
            and "\r" not in target and "\n" not in target):  # origin form, which urlsplit keeps as it is
        path, _, query = target.partition("?")
        return "", "", path, query
    try:
        split = urlsplit(target)
    except ValueError:
        split = urlsplit("/" + target.lstrip("/").replace("[", "%5B").replace("]", "%5D"))
    return split.scheme, split.netloc, split.path, split.query


_ROOT = ("", "", "/", "")


def _safe_netloc(scheme: str, netloc: str) -> str:
    """A Host that does not parse (a malformed IPv6 address) kept with its brackets escaped."""
    try:
        urlsplit(f"{scheme}://{netloc}").port  # noqa: B018 - raises on a malformed host or port
        return netloc
    except ValueError:
        return netloc.replace("[", "%5B").replace("]", "%5D")


def _origin(scheme: str, netloc: str) -> str:
    netloc = _safe_netloc(scheme, netloc.strip().lower())
    if ":" not in netloc.rsplit("]", 1)[-1]:
        netloc += ":443" if scheme == "https" else ":80"
    return f"{scheme}://{netloc}"
