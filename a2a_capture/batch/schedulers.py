"""What `--scheduler` names: an existing Dask scheduler's address, or a cluster on this machine
started for the run and stopped after it; and a Dask client connected to it."""

from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import contextmanager

from a2a_capture import address
from a2a_capture.errors import A2ACaptureError, SchedulerError

#: names for a cluster started on this machine for the run (127.0.0.1 only), and what each is
LOCAL_SCHEDULERS = {
    "processes": "--jobs single-threaded worker processes (the default)",
    "threads": "one worker of --jobs threads in this process (quick to start; Python shares one core among them)",
}

#: the protocols a Dask scheduler listens on that a client connects to by address
PROTOCOLS = ("tcp", "tls", "ws", "wss", "ucx")

#: an example for messages and help
EXAMPLE = "tcp://10.0.0.5:8786"

_PROTOCOL = re.compile(r"([a-z]+)://(.*)", re.ASCII | re.DOTALL)

#: what a Dask worker machine needs: said wherever Dask is missing
INSTALL = "pip install 'a2a-capture[dask]'"


def scheduler(text: str) -> str:
    """A local scheduler's name as it is, or an address as PROTOCOL://HOST:PORT (HOST:PORT alone
    means tcp://, as Dask reads it)."""
    if text in LOCAL_SCHEDULERS:
        return text
    found = _PROTOCOL.fullmatch(text)
    protocol, rest = found.groups() if found else ("tcp", text)
    problem = None
    if protocol not in PROTOCOLS:
        problem = f"{protocol}:// is not a Dask protocol ({', '.join(PROTOCOLS)})"
    else:
        try:
            host, port = address.host_port(rest)
        except address.AddressError:
            problem = "it is not an address with a host and a port"
    if problem:
        raise SchedulerError(f"{text!r} should be a Dask scheduler's address such as {EXAMPLE}, or "
                             f"{' or '.join(LOCAL_SCHEDULERS)} for a cluster on this machine: {problem}")
    host = f"[{host}]" if ":" in host else host
    return f"{protocol}://{host}:{port}"


@contextmanager
def client(name: str | None, jobs: int) -> Iterator:
    """A Dask distributed client of the scheduler named (None: the local processes)."""
    try:
        from distributed import Client, LocalCluster
    except ImportError:
        raise A2ACaptureError(f"--engine dask needs Dask distributed: {INSTALL}") from None
    name = scheduler(name or "processes")
    if name in LOCAL_SCHEDULERS:
        # processes talk over TCP on 127.0.0.1; threads in this process over no socket at all (inproc://)
        where = {"n_workers": jobs, "threads_per_worker": 1, "host": "127.0.0.1"} if name == "processes" else \
            {"n_workers": 1, "threads_per_worker": jobs}
        with LocalCluster(processes=name == "processes", dashboard_address=None, **where) as cluster, \
                Client(cluster) as connected:
            yield connected
        return
    try:
        connected = Client(name)  # waits distributed.comm.timeouts.connect (30 s)
    except OSError as error:
        raise A2ACaptureError(f"--scheduler {name}: cannot reach the Dask scheduler ({error})") from None
    with connected:
        yield connected
