"""Where sessions run: in this process, in a pool of processes, or on a Dask cluster.

Each engine maps one module-level function over independent sessions and returns the results
in the sessions' order, whatever order they finished in, so a parallel run prints what a
serial one prints. Functions return plain data (dicts, lists, strings, numbers), which every
engine can pickle, and report the tool's own errors as values (see ``Failed``) so the first
failing session in order decides the error, as it would in a serial run.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from a2a_capture.errors import A2ACaptureError

Engine = Literal["local", "dask"]


@dataclass(frozen=True)
class Failed:
    """A session that raised one of the tool's errors: its one-line message."""

    message: str


def guarded(function: Callable[..., Any], *args: Any) -> Any:
    """Call ``function``; an A2ACaptureError becomes a ``Failed`` value instead of an exception."""
    try:
        return function(*args)
    except A2ACaptureError as error:
        return Failed(str(error))


def cores() -> int:
    """Every core this process may run on."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


def run(function: Callable[..., Any], items: Sequence[Any], *args: Any, jobs: int | None = None,
        engine: Engine = "local", scheduler: str | None = None) -> list[Any]:
    """``function(item, *args)`` for every item, results in order; the first ``Failed`` raises."""
    return list(stream(function, items, *args, jobs=jobs, engine=engine, scheduler=scheduler))


def stream(function: Callable[..., Any], items: Sequence[Any], *args: Any, jobs: int | None = None,
           engine: Engine = "local", scheduler: str | None = None) -> Iterator[Any]:
    """As ``run``, each result handed over in order as soon as it is there, so a caller that
    writes it out need not hold them all; the first ``Failed`` raises when its turn comes."""
    if engine == "dask":
        results = _dask(function, items, args, jobs, scheduler)
    else:
        results = _local(function, items, args, jobs or cores())
    for result in results:
        if isinstance(result, Failed):
            raise A2ACaptureError(result.message)
        yield result


def _local(function, items, args, jobs: int) -> Iterator[Any]:
    jobs = max(1, min(jobs, len(items)))
    if jobs == 1:
        for item in items:
            result = guarded(function, item, *args)
            yield result
            if isinstance(result, Failed):
                return  # a serial run stops at the first bad session
        return
    from concurrent.futures import ProcessPoolExecutor

    # a few chunks per process: few enough to spare the pickling, enough to balance the load
    chunk = max(1, len(items) // (jobs * 4))
    with ProcessPoolExecutor(max_workers=jobs) as pool:
        yield from pool.map(guarded, [function] * len(items), items, *([arg] * len(items) for arg in args),
                            chunksize=chunk)


def _dask(function, items, args, jobs: int | None, scheduler: str | None) -> list[Any]:
    try:
        from distributed import Client, LocalCluster
    except ImportError:
        raise A2ACaptureError("--engine dask needs Dask distributed: pip install 'a2a-capture[dask]'") from None
    if scheduler:
        try:
            client = Client(scheduler)  # waits distributed.comm.timeouts.connect (30 s)
        except OSError as error:
            raise A2ACaptureError(f"--scheduler {scheduler}: cannot reach the Dask scheduler ({error})") from None
        with client:
            return _dask_map(client, function, items, args)
    # no scheduler given: Dask's own local cluster, one single-threaded worker process per job
    with LocalCluster(n_workers=jobs or cores(), threads_per_worker=1, processes=True, host="127.0.0.1",
                      dashboard_address=None) as cluster, Client(cluster) as client:
        return _dask_map(client, function, items, args)


def _dask_map(client, function, items, args) -> list[Any]:
    futures = client.map(guarded, [function] * len(items), items, *([arg] * len(items) for arg in args),
                         pure=False)
    return client.gather(futures)
