"""ExchangeMeta.duration gives exactly the float the datetimes give, for the recorder's spelling
of times and any other (HAR conversion, the batch tables and decode ask it of every exchange)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from hypothesis import given
from hypothesis import strategies as st

from a2a_capture.capture.models import ExchangeMeta, format_time

#: (strftime writes years before 1000 without their leading zeros, which nothing records)
_MOMENTS = st.datetimes(min_value=datetime(1000, 1, 1), max_value=datetime(9999, 12, 30), timezones=st.just(UTC))
_OTHER_SPELLINGS = ["2026-11-30T07:40:01Z", "2026-11-30T07:40:01.123+02:00", "2026-11-30T07:40:01.123456",
                    "2026-13-30T07:40:01.123456Z", "2026-11-30T24:00:00.000000Z", "soon", "", None]


def _times(meta: ExchangeMeta) -> tuple[float | None, float | None]:
    """``meta.times()`` as the datetimes give it."""
    started = meta.started_at
    return (started.timestamp() if started else None), _through_datetime(meta)


def _through_datetime(meta: ExchangeMeta) -> float | None:
    started, ended = meta.started_at, meta.ended_at
    duration = ((ended - started).total_seconds()
                if started and ended and (started.tzinfo is None) == (ended.tzinfo is None) else None)
    return duration


@given(_MOMENTS, st.integers(min_value=0, max_value=10**9))
def test_recorded_times_give_the_floats_datetime_gives(start, micros):
    end = start + timedelta(microseconds=micros)
    meta = ExchangeMeta(start=format_time(start), end=format_time(end))
    assert meta.duration == _through_datetime(meta)
    assert meta.duration is not None
    assert meta.times() == _times(meta)


@given(st.sampled_from(_OTHER_SPELLINGS), st.one_of(st.sampled_from(_OTHER_SPELLINGS), _MOMENTS.map(format_time)))
def test_other_spellings_are_read_through_datetime(start, end):
    meta = ExchangeMeta(start=start, end=end)
    assert meta.duration == _through_datetime(meta)
    assert meta.times() == _times(meta)
