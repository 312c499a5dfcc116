"""Where sessions run: in this process, in a pool of processes, or on a Dask cluster.

Each engine maps one module-level function over independent sessions and hands the results
over in the sessions' order, whatever order they finished in, each as soon as its turn comes,
so a parallel run prints what a serial one prints without holding every result. Functions
return plain data (dicts, lists, strings, numbers), which every engine can pickle, and report
the tool's own errors as values (see ``Failed``): the first failing session in order decides
the error, as it would in a serial run, unless the caller takes each failure and goes on.
"""

from __future__ import annotations

import os
from collections import deque
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
           engine: Engine = "local", scheduler: str | None = None,
           on_failure: Callable[[str], None] | None = None) -> Iterator[Any]:
    """As ``run``, each result handed over in order as soon as it is there, so a caller that
    writes it out need not hold them all; the first ``Failed`` raises when its turn comes, or,
    with ``on_failure``, each failed item's message goes there and the others go on."""
    if engine == "dask":
        results = _dask(function, items, args, jobs or cores(), scheduler)
    else:
        results = _local(function, items, args, jobs or cores(), stop=on_failure is None)
    for result in results:
        if not isinstance(result, Failed):
            yield result
        elif on_failure is None:
            raise A2ACaptureError(result.message)
        else:
            on_failure(result.message)


def _local(function, items, args, jobs: int, stop: bool) -> Iterator[Any]:
    jobs = max(1, min(jobs, len(items)))
    if jobs == 1:
        for item in items:
            result = guarded(function, item, *args)
            yield result
            if stop and isinstance(result, Failed):
                return  # a serial run stops at the first bad session
        return
    from concurrent.futures import ProcessPoolExecutor

    chunk = _chunk(len(items), jobs)
    with ProcessPoolExecutor(max_workers=jobs) as pool:
        def submit(batch: Sequence[Any]) -> list:
            return [pool.submit(guarded_each, function, batch[start:start + chunk], args)
                    for start in range(0, len(batch), chunk)]

        for results in _in_order(submit, _results, items, AHEAD_PER_THREAD * jobs, chunk):
            yield from results


def _dask(function, items, args, jobs: int, scheduler: str | None) -> Iterator[Any]:
    from a2a_capture.batch import schedulers

    with schedulers.client(scheduler, jobs) as client:  # says how to install Dask where it is missing
        from distributed import KilledWorker

        threads = max(1, sum(client.nthreads().values()))
        chunk = _chunk(len(items), threads)
        chunks = {}  # each future's items, until its results are taken

        def submit(batch: Sequence[Any]) -> list:  # one message for the batch
            parts = [batch[start:start + chunk] for start in range(0, len(batch), chunk)]
            futures = client.map(guarded_each, [function] * len(parts), parts, [args] * len(parts), pure=False)
            chunks.update((future.key, part) for future, part in zip(futures, parts, strict=True))
            return futures

        def take(futures: list) -> list:
            parts = [chunks.pop(future.key) for future in futures]
            try:
                return client.gather(futures)  # the results that are there together: one round trip
            except KilledWorker:  # one by one, to say which sessions a dead worker took with it
                return [_gathered(client, future, part, KilledWorker)
                        for future, part in zip(futures, parts, strict=True)]

        for results in _in_order(submit, take, items, AHEAD_PER_THREAD * threads, chunk):
            yield from results


def _gathered(client, future, items: Sequence[Any], killed: type[Exception]) -> list[Any]:
    try:
        return client.gather(future)
    except killed:
        return [Failed(f"{_named(item)}: the Dask worker analyzing it died (see the workers' logs; a memory "
                       "limit is the usual cause)") for item in items]


def _named(item: Any) -> str:
    """An item as a message names it: a session by its files."""
    return ", ".join(map(str, item)) if isinstance(item, list | tuple) else str(item)


def _chunk(items: int, processes: int) -> int:
    """Items sent as one task: a few tasks per process at least, to balance the load."""
    return max(1, min(CHUNK, items // (processes * 4)))


def _results(futures: list) -> list:
    return [future.result() for future in futures]


def guarded_each(function: Callable[..., Any], items: Sequence[Any], args: tuple) -> list[Any]:
    """``guarded`` for each item of a chunk, in a pool process or on a Dask worker."""
    return [guarded(function, item, *args) for item in items]


#: items sent as one task, at most: few enough that a task's results are a small amount to hold,
#: enough to spare the per-task cost (pickling; on Dask a round of scheduling) for small sessions
CHUNK = 8

#: tasks submitted ahead of the one whose results are handed over next, per process or worker
#: thread: enough to keep each busy past a slow one, few enough that the results waiting their
#: turn (on a Dask cluster, kept on the workers) stay a small, fixed amount
AHEAD_PER_THREAD = 8


def _in_order(submit: Callable[[Sequence[Any]], list], take: Callable[[list], list], items: Sequence[Any],
              ahead: int, size: int = 1) -> Iterator[Any]:
    """Each future's result in the items' order, with at most ``ahead`` futures (of ``size`` items
    each) submitted and not yet handed over: this process holds only those futures and takes the
    results when their turn comes (the next one, with those after it that are done, in one
    ``take``), so its memory stays flat however many items there are."""
    pending: deque = deque()
    submitted = 0
    while pending or submitted < len(items):
        if len(pending) <= ahead // 2 and submitted < len(items):  # topped up in batches
            batch = items[submitted:submitted + (ahead - len(pending)) * size]
            pending += submit(batch)
            submitted += len(batch)
        pending[0].exception()  # waits for it to end, without taking its result
        ready = [pending.popleft()]
        while pending and pending[0].done():
            ready.append(pending.popleft())
        results = take(ready)
        del ready  # the futures let go of now (on a Dask cluster: their results released there)
        yield from results
