"""Upper bounds of a rule's wall times over spans, in arithmetic: what :mod:`calsim.limits` sums before expanding.

Each rule kind states its bound (``bound()``, part of the rule-kind protocol of
:mod:`calsim.rules`) as one of the *profiles* here: the numbers the bound needs
of the rule (times a day, months, days a month by each day field...), nothing
of the span. A profile's ``count(a, b)`` bounds the wall times in ``[a, b)``
(arrays of µs, whole days or periods, as the expansion generates them), and
``dense(length)`` the most in any ``length`` µs (a fold's extra rows). Equal
profiles share one vectorised computation: ``"30 2 * * *"`` and ``"15 9 * * *"``
are the same profile (one time a day, every day).
"""

from __future__ import annotations

import dataclasses
import functools

import numpy as np

from ..times import US
from .oncalendar_grammar import MAX_YEAR, MIN_YEAR, count_values

__all__ = ["DayTable", "WindowProfile", "EveryProfile", "RRuleProfile", "rrule_bound", "cron_bound", "quartz_bound",
           "oncalendar_bound", "window_bound", "DAY", "HOUR"]

DAY = 86400 * US
HOUR = 3600 * US


# ---------------------------------------------------------------------------
# Calendar arithmetic over spans of whole days (vectorised)
# ---------------------------------------------------------------------------

_LONGEST = (31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31)  # each month's longest length
_ALL_MONTHS = 0xFFF


def _month_of(days: np.ndarray) -> np.ndarray:
    return days.astype("datetime64[D]").astype("datetime64[M]").astype(np.int64)


def _month_start(months: np.ndarray) -> np.ndarray:
    return months.astype("datetime64[M]").astype("datetime64[D]").astype(np.int64)


@functools.lru_cache(maxsize=4096)
def _month_tables(mask: int) -> tuple[np.ndarray, np.ndarray, int, int]:
    """For the months in ``mask`` (bit m-1: month m): among ``r`` consecutive months from month ``s``
    (0 = January), how many match and their longest total length; and the same per whole year."""
    inm = np.array([(mask >> m) & 1 for m in range(12)], np.int64)
    days = inm * np.array(_LONGEST, np.int64)
    cnt = np.zeros((12, 13), np.int64)
    total = np.zeros((12, 13), np.int64)
    for s in range(12):
        idx = (s + np.arange(12)) % 12
        cnt[s, 1:] = np.cumsum(inm[idx])
        total[s, 1:] = np.cumsum(days[idx])
    return cnt, total, int(inm.sum()), int(days.sum())


class _Span:
    """Whole days ``[d0, d1)`` (arrays, ``d1 > d0``) and what the bounds need of them."""

    def __init__(self, d0: np.ndarray, d1: np.ndarray) -> None:
        self.n = d1 - d0
        self.m0 = _month_of(d0)
        self.nm = _month_of(d1 - 1) - self.m0 + 1
        self.y0 = self.m0 // 12 + 1970
        self.ny = (self.m0 + self.nm - 1) // 12 + 1970 - self.y0 + 1

    def months(self, mask: int) -> tuple[np.ndarray, np.ndarray]:
        """Matching months touched, and an upper bound of the days in them (at most the span's)."""
        if mask == _ALL_MONTHS:
            return self.nm, self.n
        cnt, total, k, kd = _month_tables(mask)
        full, rem = np.divmod(self.nm, 12)
        s = self.m0 % 12
        return full * k + cnt[s, rem], np.minimum(self.n, full * kd + total[s, rem])

    def weekdays(self, k: int) -> np.ndarray:
        """The most days of ``k`` given weekdays that ``n`` consecutive days hold."""
        return (self.n // 7) * k + np.minimum(self.n % 7, k)

    def years(self, years: tuple[int, ...]) -> np.ndarray:
        """Years of the sorted tuple ``years`` touched."""
        ys = np.array(years, np.int64)
        return np.searchsorted(ys, self.y0 + self.ny - 1, side="right") - np.searchsorted(ys, self.y0, side="left")


def _days(a: np.ndarray, b: np.ndarray) -> _Span:
    """The whole days touched by the wall times ``[a, b)``."""
    return _Span(a // DAY, -(-b // DAY))


def _ceil(x: np.ndarray, y: int | np.ndarray) -> np.ndarray:
    return -(-x // y)


# ---------------------------------------------------------------------------
# One profile per kind of rule: the numbers the bound needs, nothing of the span
# ---------------------------------------------------------------------------
# Equal profiles share one vectorised computation: "30 2 * * *" and "15 9 * * *"
# are the same profile (one time a day, every day).


@dataclasses.dataclass(frozen=True)
class DayTable:
    """Cron, Quartz and OnCalendar: matching days x times of day.

    ``dom_k``: matching days a month by the day-of-month field (-1: unrestricted);
    ``wd_k``: weekdays by the day-of-week field (-1: unrestricted), plus
    ``wd_month_k`` more a month (``5L``, ``5#3``); ``union``: the Vixie
    "either day field" rule; ``years``: the only years that match (None: all).
    """

    tpd: int
    per_hour: int
    months: int
    dom_k: int
    wd_k: int
    wd_month_k: int
    union: bool
    years: tuple[int, ...] | None

    def count(self, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        span = _days(a, b)
        md, days = span.months(self.months)
        if self.years is not None:
            days = np.minimum(days, span.years(self.years) * 366)
        dom = md * self.dom_k if self.dom_k >= 0 else None
        dow = span.weekdays(self.wd_k) + md * self.wd_month_k if self.wd_k >= 0 else None
        if self.union:
            if dom is not None and dow is not None:
                days = np.minimum(days, dom + dow)
        else:
            for d in (dom, dow):
                if d is not None:
                    days = np.minimum(days, d)
        return days * self.tpd

    def dense(self, length: np.ndarray) -> np.ndarray:
        """Most instances in any ``length`` µs of wall time (a fold)."""
        return np.minimum((_ceil(length, DAY) + 1) * self.tpd, (_ceil(length, HOUR) + 1) * self.per_hour)


@dataclasses.dataclass(frozen=True)
class WindowProfile:
    per_day: int
    weekdays: int
    step: int

    def count(self, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        # Window.wall_times opens the window on days a // DAY - 1 .. b // DAY.
        n = b // DAY - a // DAY + 2
        return ((n // 7) * self.weekdays + np.minimum(n % 7, self.weekdays)) * self.per_day

    def dense(self, length: np.ndarray) -> np.ndarray:
        return (_ceil(length, DAY) + 1) * np.minimum(self.per_day, _ceil(length, self.step) + 1)


@dataclasses.dataclass(frozen=True)
class EveryProfile:
    period: int

    def count(self, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        # [a, b) holds at most ceil((b - a) / period) points of any lattice of that step.
        return np.maximum(_ceil(b - a, self.period), 0)

    def dense(self, length: np.ndarray) -> np.ndarray:
        return np.zeros(len(length), np.int64)  # one row per instant: a fold adds none


_COARSE = ("YEARLY", "MONTHLY", "WEEKLY", "DAILY")
_UNIT = {"HOURLY": 3600, "MINUTELY": 60, "SECONDLY": 1}


@dataclasses.dataclass(frozen=True)
class RRuleProfile:
    """RFC 5545 rules: min(matching days x instances a day, periods INTERVAL selects x instances a period).

    The span is first widened to whole periods, as the expansion kernel does
    (BYSETPOS ranks whole sets), so the bound covers what it generates.
    """

    freq: str
    interval: int
    wkst: int
    per_day: int
    per_period: int
    per_hour: int
    months: int
    dom_k: int  # -1: no day-of-month limit
    wd_k: int  # plain BYDAY weekdays; -1: no BYDAY limit
    nth_k: int  # numbered BYDAY days
    nth_in_month: bool
    yd_k: int  # -1: none
    wn_k: int  # days a year BYWEEKNO can match; -1: none
    forward: bool = False  # invalid_day="forward": a MONTHLY rule's month before may move a day in

    def _widen(self, a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        d0, d1 = a // DAY, -(-b // DAY)
        if self.freq == "YEARLY":
            d0 = _month_start(_month_of(d0) // 12 * 12)
            d1 = _month_start((_month_of(d1 - 1) // 12 + 1) * 12)
        elif self.freq == "MONTHLY":
            # invalid_day="forward" moves a day from the month before in, and one onto the day after.
            d0 = _month_start(_month_of(d0) - self.forward)
            d1 = _month_start(_month_of(d1 - 1) + 1) + self.forward
        elif self.freq == "WEEKLY":
            d0 = d0 - (d0 + 3 - self.wkst) % 7
            d1 = d1 + (-(d1 + 3 - self.wkst)) % 7
        return d0, d1

    def count(self, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        d0, d1 = self._widen(a, b)
        span = _Span(d0, d1)
        md, days = span.months(self.months)
        if self.dom_k >= 0:
            days = np.minimum(days, md * self.dom_k)
        if self.wd_k >= 0:
            nth = (md if self.nth_in_month else span.ny) * self.nth_k
            days = np.minimum(days, span.weekdays(self.wd_k) + nth)
        if self.yd_k >= 0:
            days = np.minimum(days, span.ny * self.yd_k)
        if self.wn_k >= 0:
            days = np.minimum(days, span.ny * self.wn_k)
        by_days = days * self.per_day
        if self.freq == "YEARLY":
            periods = span.ny
        elif self.freq == "MONTHLY":
            periods = span.nm
        elif self.freq == "WEEKLY":
            periods = _ceil(span.n, 7)
        elif self.freq == "DAILY":
            periods = span.n
        else:
            periods = span.n * (86400 // _UNIT[self.freq])
        return np.minimum(by_days, _ceil(periods, self.interval) * self.per_period)

    def dense(self, length: np.ndarray) -> np.ndarray:
        if self.freq in _COARSE:
            return np.minimum((_ceil(length, DAY) + 1) * self.per_day, (_ceil(length, HOUR) + 1) * self.per_hour)
        return _ceil(_ceil(length, _UNIT[self.freq] * US) + 1, self.interval) * self.per_period


def rrule_bound(r) -> RRuleProfile:
    freq = r.freq
    coarse = freq in _COARSE
    # Absent time parts: DTSTART's one value when coarser than FREQ, else every value (RRule._plan).
    ns = len([x for x in r.bysecond if x < 60]) if r.bysecond else (60 if freq == "SECONDLY" else 1)
    nm = len(r.byminute) or (60 if freq in ("MINUTELY", "SECONDLY") else 1)
    nh = len(r.byhour) or (1 if coarse else 24)
    setpos = len(r.bysetpos)
    no_day_parts = not (r.byweekno or r.byyearday or r.bymonthday or r.byday)
    plain = sum(1 for n, _ in r.byday if n == 0)
    nth = len(r.byday) - plain
    dom_k = len(r.bymonthday) if r.bymonthday else (1 if no_day_parts and freq in ("YEARLY", "MONTHLY") else -1)
    wd_k = plain if r.byday else (1 if no_day_parts and freq == "WEEKLY" else -1)
    months = sum(1 << (m - 1) for m in r.bymonth) if r.bymonth else _ALL_MONTHS
    interval = max(1, min(int(r.interval), 10**13))
    if coarse:
        tpd = nh * nm * ns
        if freq == "DAILY" and setpos:
            tpd = min(tpd, setpos)
        if freq == "YEARLY":
            mc = len(r.bymonth) or (1 if no_day_parts else 12)
            d = min(366, 31 * mc)
            if dom_k >= 0:
                d = min(d, mc * dom_k)
            if r.byday:
                d = min(d, plain * 53 + nth * (mc if r.bymonth else 1))
            if r.byyearday:
                d = min(d, len(r.byyearday))
            if r.byweekno:
                d = min(d, 7 * len(r.byweekno) + 6)
        elif freq == "MONTHLY":
            d = 31 if dom_k < 0 else min(31, dom_k)
            if r.byday:
                d = min(d, plain * 5 + nth)
        elif freq == "WEEKLY":
            d = 7 if wd_k < 0 else min(7, wd_k)
        else:
            d = 1
        per_period = d * tpd
        if setpos and freq != "DAILY":
            per_period = min(per_period, setpos)
        per_day, per_hour = tpd, nm * ns
    else:
        unit = _UNIT[freq]
        if freq == "HOURLY":
            allowed, offsets = nh, nm * ns
        elif freq == "MINUTELY":
            allowed, offsets = nh * nm, ns
        else:
            allowed, offsets = nh * nm * ns, 1 if ns else 0
        if setpos:
            offsets = min(offsets, setpos)
        per_period = offsets
        per_day = min(allowed, -(-(86400 // unit) // interval)) * offsets
        per_hour = per_day
    return RRuleProfile(freq, interval, r.wkst, per_day, per_period, per_hour, months, dom_k, wd_k, nth,
                         freq == "MONTHLY" or bool(r.bymonth), len(r.byyearday) or -1,
                         (7 * len(r.byweekno) + 6) if r.byweekno else -1)


def cron_bound(c) -> DayTable:
    months = sum(1 << (m - 1) for m in c.months)
    dom_all = set(c.days) >= set(range(1, 32))  # Cron's own test for an unrestricted field
    dow_all = set(c.weekdays) >= set(range(7))
    dom_k = -1 if dom_all else min(31, len(c.days) + c.last_day + c.last_weekday + len(c.nearest_weekday))
    wd_k = -1 if dow_all else len(c.weekdays)
    wd_month = 0 if dow_all else len(c.last_of_weekday) + len(c.nth_weekday)
    return DayTable(len(c.hours) * len(c.minutes), len(c.minutes), months, dom_k, wd_k, wd_month, c.day_or, None)


def quartz_bound(q) -> DayTable:
    months = sum(1 << (m - 1) for m in q.months)
    per_hour = len(q.minutes) * len(q.seconds)
    if q.by_dom:
        dom_k = min(31, len(q.days) + len(q.last_offsets) + len(q.last_weekday_offsets) + len(q.nearest_weekday))
        wd_k, wd_month = -1, 0
    else:
        dom_k = -1
        wd_k = len(q.weekdays)
        wd_month = 1 if (q.last_of_weekday or q.nth_weekday is not None) else 0
    return DayTable(per_hour * len(q.hours), per_hour, months, dom_k, wd_k, wd_month, False,
                     None if q.years is None else tuple(sorted(q.years)))


def chain_values(chain, lo: int, hi: int) -> tuple[int, ...]:
    """The values ``lo..hi`` of a chain (small ranges only: months, years)."""
    if chain is None:
        return tuple(range(lo, hi + 1))
    out: set[int] = set()
    for start, stop, repeat in chain:
        end = min(stop if stop >= 0 else hi, hi)
        out.update([start] if repeat == 0 else range(start, end + 1, repeat))
    return tuple(sorted(v for v in out if lo <= v <= hi))


def oncalendar_bound(o) -> DayTable:
    months = sum(1 << (m - 1) for m in chain_values(o.months, 1, 12))
    per_hour = count_values(o.minutes, 60) * count_values(o.seconds, 60 * US)
    tpd = count_values(o.hours, 24) * per_hour
    dom_k = -1 if o.days is None else min(31, count_values(o.days, 32))
    bits = o.weekday_bits
    wd_k = bin(bits).count("1") if 0 < bits < 127 else -1
    # Years outside 1970..2199 never match (calendarspec.c MIN_YEAR/MAX_YEAR).
    return DayTable(tpd, per_hour, months, dom_k, wd_k, 0, False,
                     chain_values(o.years, MIN_YEAR, MAX_YEAR))


def window_bound(w) -> WindowProfile:
    step = max(1, int(w._step_us))
    return WindowProfile(-(-int(w._length_us) // step), len(w._days), step)
