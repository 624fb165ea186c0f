"""Turning what users pass as times into int64 microsecond columns.

calsim keeps two kinds of time apart (DESIGN.md §3):

* a **local** (nominal) time is a naive wall-clock reading in some zone:
  ``datetime(2026, 3, 8, 2, 30)``, ``"2026-03-08T02:30"``;
* an **instant** is a point on the UTC line: an aware ``datetime``, or an ISO
  string with ``Z`` or an offset. Naive bounds given where an instant is
  expected are read as UTC (the ``expand`` convention).

Both become ``int64`` microseconds since 1970-01-01 (wall clock or UTC), the
unit of ``pl.Datetime("us")``.

>>> from calsim.times import local_us
>>> local_us(["2026-03-08T02:30"]).tolist()
[1772937000000000]
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Iterable

import numpy as np
import polars as pl

from .errors import InputError, shown

__all__ = ["local_us", "instant_us", "iso_z", "iso_local", "US", "MINUTE_US", "DAY_US", "LAST_US"]

# The units every module counts in (one definition): instants and durations are int64 microseconds.
US = 1_000_000
MINUTE_US = 60 * US
DAY_US = 86_400 * US
LAST_US = 253402300799 * US  # 9999-12-31T23:59:59: the last second a Python datetime (and so a frame's user) holds
_AWARE_RE = re.compile(r"(Z|[+-]\d{2}(:?\d{2}(:?\d{2})?)?)$", re.IGNORECASE)
_EPOCH = dt.datetime(1970, 1, 1)


def _dt_to_us(value: dt.datetime) -> int:
    delta = value - _EPOCH
    return (delta.days * 86400 + delta.seconds) * US + delta.microseconds


def _parse_iso(text: str, field: str, *, want_aware: bool | None) -> dt.datetime:
    s = text.strip()
    try:
        value = dt.datetime.fromisoformat(s.replace("z", "Z"))
    except ValueError:
        raise InputError(
            f"{field}: cannot parse {shown(text)} as an ISO 8601 date-time "
            "(expected e.g. '2026-03-08T02:30' for a local time or '2026-03-08T07:30Z' for an instant)"
        ) from None
    if want_aware is False and value.tzinfo is not None:
        raise InputError(
            f"{field}: {shown(text)} carries an offset, but a naive local wall time is required here "
            "(drop the 'Z' or offset, e.g. '2026-03-08T02:30')"
        )
    return value


def _as_array(values: object, field: str) -> tuple[np.ndarray | None, list | None, str | None]:
    """Split inputs into an already-columnar datetime64 array, or a list of Python objects."""
    if isinstance(values, pl.Series):
        if not isinstance(values.dtype, pl.Datetime):
            if values.dtype == pl.Utf8:
                return None, values.to_list(), None
            raise InputError(f"{field}: expected a polars Datetime or String series, got dtype {values.dtype}")
        if values.null_count():
            raise InputError(f"{field}: the series holds {values.null_count()} null value(s); times are required")
        tz = values.dtype.time_zone
        return values.dt.cast_time_unit("us").to_physical().to_numpy().astype("datetime64[us]"), None, tz
    if isinstance(values, np.ndarray):
        if values.dtype.kind == "M":
            if np.isnat(values).any():
                raise InputError(f"{field}: the array holds NaT; every time is required")
            return values.astype("datetime64[us]").ravel(), None, None
        return None, values.ravel().tolist(), None
    if isinstance(values, (str, dt.datetime, dt.date, np.datetime64)):
        return None, [values], None
    try:
        import pandas as pd

        if isinstance(values, (pd.Series, pd.DatetimeIndex)):
            return _as_array(pl.Series(values), field)
    except ImportError:  # pragma: no cover
        pass
    if isinstance(values, Iterable):
        return None, list(values), None
    raise InputError(
        f"{field}: expected a datetime, an ISO string, a sequence of them, a numpy datetime64 array "
        f"or a polars Datetime series, got {type(values).__name__}"
    )


def local_us(values: object, field: str = "local_times") -> np.ndarray:
    """Naive local wall times as int64 microseconds; aware inputs are refused.

    >>> import datetime as dt
    >>> local_us(dt.datetime(2026, 3, 8, 2, 30, tzinfo=dt.timezone.utc))
    Traceback (most recent call last):
    ...
    calsim.errors.InputError: local_times: 2026-03-08 02:30:00+00:00 is aware (tzinfo=UTC), but a naive local wall time is required here (use .replace(tzinfo=None) if it already is wall time in the zone)
    """  # noqa: E501  (a doctest output line)
    arr, items, tz = _as_array(values, field)
    if arr is not None:
        if tz is not None:
            raise InputError(
                f"{field}: the series has time zone {shown(tz)}, but naive local wall times are required "
                "(use .dt.replace_time_zone(None) if the values already are wall times)"
            )
        return arr.view(np.int64).copy()
    assert items is not None
    out = np.empty(len(items), dtype=np.int64)
    for i, v in enumerate(items):
        if isinstance(v, str):
            v = _parse_iso(v, field, want_aware=False)
        elif isinstance(v, np.datetime64):
            if np.isnat(v):
                raise InputError(f"{field}: NaT at position {i}; every time is required")
            out[i] = v.astype("datetime64[us]").astype(np.int64)
            continue
        elif isinstance(v, dt.datetime):
            if v.tzinfo is not None:
                raise InputError(
                    f"{field}: {v} is aware (tzinfo={v.tzinfo}), but a naive local wall time is required here "
                    "(use .replace(tzinfo=None) if it already is wall time in the zone)"
                )
        elif isinstance(v, dt.date):
            v = dt.datetime(v.year, v.month, v.day)
        else:
            raise InputError(
                f"{field}: item {i} is {type(v).__name__} {shown(v)}; expected a naive datetime or an ISO string"
            )
        out[i] = _dt_to_us(v)
    return out


def instant_us(value: object, field: str) -> int:
    """One instant as int64 UTC microseconds; a naive value is read as UTC.

    >>> instant_us("2026-03-08T07:30Z", "start") == instant_us("2026-03-08T02:30-05:00", "start")
    True
    """
    if isinstance(value, str):
        value = _parse_iso(value, field, want_aware=None)
    if isinstance(value, np.datetime64):
        return int(value.astype("datetime64[us]").astype(np.int64))
    if isinstance(value, dt.datetime):
        if value.tzinfo is not None:
            value = value.astimezone(dt.timezone.utc).replace(tzinfo=None)
        return _dt_to_us(value)
    if isinstance(value, dt.date):
        return _dt_to_us(dt.datetime(value.year, value.month, value.day))
    raise InputError(
        f"{field}: expected an instant (aware datetime, or ISO string such as '2026-03-08T07:30Z'), "
        f"got {type(value).__name__} {shown(value)}"
    )


def iso_z(us: int) -> str:
    """An instant (µs since the epoch) as ISO 8601 UTC with microseconds, as messages print it.

    >>> iso_z(1_772_953_200_000_000)
    '2026-03-08T07:00:00.000000Z'
    """
    return str(np.datetime64(int(us), "us")) + "Z"


def iso_local(us: int) -> str:
    """A wall time (µs since 1970-01-01 on the local clock) as naive ISO 8601, as messages print it.

    >>> iso_local(1_772_937_000_000_000)
    '2026-03-08T02:30:00'
    """
    return (_EPOCH + dt.timedelta(microseconds=int(us))).isoformat()
