"""The calendar every rule kind reads: days as numbers, their fields from one 400-year table, and a cache.

Days are ``int64`` day numbers since 1970-01-01 (a Thursday: the weekday is
``(day + 3) % 7``, 0 = Monday). :class:`Days` gives a span's calendar fields
as slices of one table (the Gregorian calendar repeats every 400 years);
:func:`day_table_wall_times` turns a rule's day and time-of-day tables into
wall times (cron, Quartz, OnCalendar); :func:`memo` caches on immutable keys.
Shared by :mod:`calsim.rules.rrule`'s kernel and the other rule kinds.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, NamedTuple, TypeVar

import numpy as np

from ..times import DAY_US

__all__ = ["Days", "day_table_wall_times", "memo", "month_of", "month_of_day", "month_start", "month_start_day",
           "readonly", "CYCLE"]


def month_start(mabs: np.ndarray) -> np.ndarray:
    """Day number of the 1st of each month, months counted from 1970-01 (may be negative)."""
    return mabs.astype("datetime64[M]").astype("datetime64[D]").astype(np.int64)


def month_of(days: np.ndarray) -> np.ndarray:
    """Months since 1970-01 of each day number."""
    return days.astype("datetime64[D]").astype("datetime64[M]").astype(np.int64)


def month_of_day(day: int) -> int:
    """:func:`month_of` for one day number, in plain Python (H. Hinnant's ``civil_from_days``)."""
    z = day + 719_468  # days since 0000-03-01: leap days fall at the end of the shifted year
    era = z // 146_097
    doe = z - era * 146_097
    yoe = (doe - doe // 1460 + doe // 36_524 - doe // 146_096) // 365
    mp = (5 * (doe - (365 * yoe + yoe // 4 - yoe // 100)) + 2) // 153  # 0 = March
    m0 = mp + 2 if mp < 10 else mp - 10  # 0 = January
    return (yoe + era * 400 + (m0 < 2) - 1970) * 12 + m0


def month_start_day(mabs: int) -> int:
    """:func:`month_start` for one month number, in plain Python (``days_from_civil``)."""
    y, m0 = divmod(mabs, 12)
    y += 1970 - (m0 < 2)
    era = y // 400
    yoe = y - era * 400
    mp = m0 + 10 if m0 < 2 else m0 - 2  # 0 = March
    return era * 146_097 + yoe * 365 + yoe // 4 - yoe // 100 + (153 * mp + 2) // 5 - 719_468


# The Gregorian calendar repeats every 400 years, 146,097 days, which are also a
# whole number of weeks (20,871): month, day of month, day of year, their
# lengths and the weekday of day ``d`` are those of ``d % CYCLE``. One table
# of a cycle (plus a few spare years, so that a block of up to ~11 years is a
# plain slice) replaces the datetime64 conversions of every block.
CYCLE = 146_097
_SPARE = 4_000


class _CalendarTable(NamedTuple):
    mabs: np.ndarray  # months since 1970-01 (0..4934), int16; + 4800 per cycle
    month: np.ndarray  # 1..12, int8
    dom: np.ndarray  # day of month 1..31, int8
    mlen: np.ndarray  # days in the month, int8
    doy: np.ndarray  # day of year 1..366, int16
    ylen: np.ndarray  # days in the year, int16
    wd: np.ndarray  # weekday, 0 = Monday, int8


def readonly(a: np.ndarray) -> np.ndarray:
    a.setflags(write=False)  # shared by every call (cached): nobody may write to it
    return a


@functools.cache
def _calendar() -> _CalendarTable:
    """The calendar fields of days ``0 .. CYCLE + _SPARE - 1``, built once (1.5 MB)."""
    days = np.arange(CYCLE + _SPARE, dtype=np.int64)
    mabs = month_of(days)
    yrel = mabs // 12
    ms = month_start(mabs)
    ys = month_start(yrel * 12)
    fields = (mabs, mabs - yrel * 12 + 1, days - ms + 1, month_start(mabs + 1) - ms,
              days - ys + 1, month_start(yrel * 12 + 12) - ys, (days + 3) % 7)
    dtypes = (np.int16, np.int8, np.int8, np.int8, np.int16, np.int16, np.int8)
    return _CalendarTable(*(readonly(f.astype(t)) for f, t in zip(fields, dtypes)))


class Days:
    """Calendar fields of the consecutive days ``a .. a + n - 1`` (read-only views of the table).

    Each field is sliced when read: most rules read one or two of them. Also
    used by :meth:`calsim.rules.cron.Cron.wall_times`.
    """

    def __init__(self, a: int, n: int) -> None:
        self.days = np.arange(a, a + n, dtype=np.int64)
        r = a % CYCLE
        # A slice when the block fits in the table, else a gather (the same values).
        if r + n <= CYCLE + _SPARE:
            self._at: slice | np.ndarray = slice(r, r + n)
            self._cycles: int | np.ndarray = a // CYCLE
        else:
            self._at, self._cycles = self.days % CYCLE, self.days // CYCLE

    def mabs(self, at: slice | np.ndarray) -> np.ndarray:
        """Months since 1970-01 (int64) of the days ``self.days[at]``; :func:`month_of` without datetime64."""
        cycles = self._cycles[at] if isinstance(self._cycles, np.ndarray) else self._cycles
        return _calendar().mabs[self._at][at].astype(np.int64) + cycles * 4800

    @property
    def month(self) -> np.ndarray:
        return _calendar().month[self._at]

    @property
    def dom(self) -> np.ndarray:
        return _calendar().dom[self._at]

    @property
    def mlen(self) -> np.ndarray:
        return _calendar().mlen[self._at]

    @property
    def doy(self) -> np.ndarray:
        return _calendar().doy[self._at]

    @property
    def ylen(self) -> np.ndarray:
        return _calendar().ylen[self._at]

    @property
    def wd(self) -> np.ndarray:
        return _calendar().wd[self._at]


def day_table_wall_times(rule, lo: int, hi: int) -> np.ndarray:
    """Every wall time in ``[lo, hi)`` (µs, no zone) of a rule given as a day mask and a table of times of day.

    ``rule.day_mask(Days)`` says which days match and ``rule.times_of_day()``
    the sorted µs offsets within a matching day (OnCalendar and Quartz
    expressions are both of this shape): one outer sum, no per-occurrence loop.
    """
    lo, hi = int(lo), int(hi)
    if hi <= lo:
        return np.empty(0, dtype=np.int64)
    first = lo // DAY_US
    f = Days(first, -(-hi // DAY_US) - first)
    day = f.days[rule.day_mask(f)]
    offsets = rule.times_of_day()
    times = ((day * DAY_US)[:, None] + offsets).ravel() if len(offsets) > 1 else day * DAY_US + int(offsets[0])
    i, j = np.searchsorted(times, [lo, hi])
    return times[i:j]


_F = TypeVar("_F", bound=Callable[..., Any])


def memo(maxsize: int) -> Callable[[_F], _F]:
    """``functools.lru_cache(maxsize)``, computing afresh for unhashable arguments.

    The keys are the BY tuples of a frozen rule (or the frozen rule itself),
    compared by value, so an entry can never go stale; the arrays returned are
    read-only because every call with equal values shares them. A rule built
    by hand with lists instead of tuples still works, uncached.
    """
    def wrap(fn):
        cached = functools.lru_cache(maxsize=maxsize)(fn)

        @functools.wraps(fn)
        def call(*args):
            try:
                return cached(*args)
            except TypeError:  # an unhashable argument (if fn raised it, it raises it again)
                return fn(*args)
        call.cache_info = cached.cache_info
        call.cache_clear = cached.cache_clear
        return call
    return wrap
