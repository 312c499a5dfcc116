"""The recorded pace: how long the client waited between one call's end and the next one's start.

A polling client that waited a second before asking again saw the task further along than
one that asks at once; a replay that keeps the gaps sees what the recording saw.
"""

from __future__ import annotations

import time

from a2a_capture.capture.models import Exchange


def recorded_gap(previous: Exchange | None, current: Exchange) -> float:
    """Seconds between ``previous``'s end and ``current``'s start; 0 where unknown or overlapping."""
    if previous is None:
        return 0.0
    ended, started = previous.meta.ended_at, current.meta.started_at
    if ended is None or started is None:
        return 0.0
    return max(0.0, (started - ended).total_seconds())


class Pace:
    """Sleeps before each call for the recorded gap, divided by ``speed`` (0: never sleeps)."""

    def __init__(self, speed: float = 1.0) -> None:
        self.speed = speed
        self._previous: Exchange | None = None
        self._ended = 0.0  # monotonic time the previous replayed call ended

    def before(self, exchange: Exchange) -> None:
        if self.speed > 0:
            wait = recorded_gap(self._previous, exchange) / self.speed - (time.monotonic() - self._ended)
            if wait > 0:
                time.sleep(wait)

    def after(self, exchange: Exchange) -> None:
        self._previous = exchange
        self._ended = time.monotonic()
