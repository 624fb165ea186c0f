"""A zone's civil clock, one instant at a time: what a scheduler's own date arithmetic sees.

The rest of calsim resolves wall times in columns (:mod:`calsim.resolution`).
A few schedulers' DST behaviour is not a policy but a side effect of how
their code walks the calendar (robfig/cron's ``Next``, Quartz's
``getTimeAfter``, systemd's ``calendar_spec_next_usec``); calsim reproduces
it by running a port of that walk near each transition only
(:mod:`calsim.emulation`). Those ports need the clock the scheduler's runtime
gives them: the UTC offset period around an instant, the wall-clock fields
of an instant, and lenient wall-field arithmetic (``time.Date`` in Go,
``GregorianCalendar`` in Java and ``mktime`` in C all normalise a month of 13
or a day of 32 the same way). This module is that clock; each port adds its
own runtime's wall-to-instant rule on top of :meth:`ZoneClock.period`.

Times are whole seconds: every scheduler ported here counts in seconds or
coarser (callers convert to calsim's microseconds at the edge).

>>> from calsim.tz.release import release
>>> clock = ZoneClock(release("2026f").table("America/New_York"))
>>> clock.fields(1772953200)  # 2026-03-08T07:00Z, the first instant of EDT
(2026, 3, 8, 3, 0, 0, 0)
>>> offset, start, end = clock.period(1772953200); offset, start == 1772953200
(-14400, True)
"""

from __future__ import annotations

import bisect
import datetime as dt

from .posix import days_from_civil
from .tzif import ZoneTable

__all__ = ["ZoneClock", "wall_seconds", "civil"]

_EPOCH_ORDINAL = dt.date(1970, 1, 1).toordinal()
_NEVER = 2**62  # the end of a period with no later transition (and minus: no earlier one)


def wall_seconds(year: int, month: int, day: int, hour: int = 0, minute: int = 0, second: int = 0) -> int:
    """Wall-clock seconds since 1970-01-01T00:00 of possibly out-of-range fields, normalised leniently.

    A month past 12 carries into the year (and 0 or less borrows from it),
    then day, hour, minute and second add linearly: day 32 of January is
    February 1st, day 0 the last day of the month before, hour 24 the next
    midnight. That is Go's ``time.Date``, Java's lenient ``GregorianCalendar``
    and C's ``mktime`` alike.

    >>> wall_seconds(2026, 13, 1) == wall_seconds(2027, 1, 1)
    True
    >>> wall_seconds(2026, 3, 0, 24) == wall_seconds(2026, 3, 1)
    True
    """
    y, m0 = divmod(month - 1, 12)
    days = days_from_civil(year + y, m0 + 1, 1) + day - 1
    return days * 86400 + hour * 3600 + minute * 60 + second


def civil(wall: int) -> tuple[int, int, int, int, int, int, int]:
    """``(year, month, day, hour, minute, second, weekday)`` of wall-clock seconds; weekday 0 = Sunday (cron's)."""
    days, secs = divmod(wall, 86400)
    d = dt.date.fromordinal(days + _EPOCH_ORDINAL)
    hour, rem = divmod(secs, 3600)
    return d.year, d.month, d.day, hour, rem // 60, rem % 60, (days + 4) % 7  # 1970-01-01 was a Thursday


class ZoneClock:
    """Scalar reads of a :class:`~calsim.tz.tzif.ZoneTable` (see the module docstring)."""

    def __init__(self, table: ZoneTable):
        self.table = table
        self.name = table.name
        self._load()

    def _load(self) -> None:
        self._utc = [int(t) for t in self.table.utc]
        self._off = [int(o) for o in self.table.offsets]

    def covering(self, year: int) -> ZoneClock:
        """Make sure the table holds transitions through ``year`` (see ``ZoneTable.covering``); returns self."""
        if year > self.table.until_year:
            self.table.covering(year)
            self._load()
        return self

    def period(self, utc: int) -> tuple[int, int, int]:
        """``(offset, start, end)``: the offset in force at ``utc`` and the half-open span ``[start, end)`` it holds."""
        i = bisect.bisect_right(self._utc, utc)
        start = self._utc[i - 1] if i else -_NEVER
        end = self._utc[i] if i < len(self._utc) else _NEVER
        return self._off[i], start, end

    def offset(self, utc: int) -> int:
        """The UTC offset (seconds east) in force at ``utc``."""
        return self._off[bisect.bisect_right(self._utc, utc)]

    def fields(self, utc: int) -> tuple[int, int, int, int, int, int, int]:
        """The wall-clock fields of an instant (:func:`civil` of its wall time)."""
        return civil(utc + self.offset(utc))

    def transitions(self, lo: int, hi: int) -> list[int]:
        """The transitions in ``[lo, hi)`` (UTC seconds), ascending."""
        return self._utc[bisect.bisect_left(self._utc, lo):bisect.bisect_left(self._utc, hi)]
