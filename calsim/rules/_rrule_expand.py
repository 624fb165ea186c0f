"""The vectorised RRULE expansion kernel behind :meth:`calsim.rules.rrule.RRule.candidates`.

Private: :mod:`calsim.rules.rrule` parses and validates, this module only
computes. Everything is integer arithmetic on numpy arrays:

* **days** are ``int64`` day numbers since 1970-01-01 (Thursday), so the
  weekday is ``(day + 3) % 7`` with 0 = Monday, as RFC 5545 WKST counts;
* a **period** is the interval of the frequency (RFC 5545 §3.3.10:
  BYSETPOS "operates on a set of recurrence instances in one interval of the
  recurrence rule"): a year, a month, a week starting on WKST, a day, an hour,
  a minute or a second, numbered arithmetically so that INTERVAL selects
  ``(period - dtstart's period) % INTERVAL == 0`` without iterating;
* every BYxxx day part is a boolean mask over the days of a block; times of
  day are broadcast over the selected days, never built one by one.

The day range is cut into blocks aligned on period boundaries (so BYSETPOS
always sees whole periods) and sized to bound memory; the blocks are the only
Python loop besides loops over the parsed BY values.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

US = 1_000_000
DAY_S = 86_400
DAY_US = DAY_S * US
COARSE = ("YEARLY", "MONTHLY", "WEEKLY", "DAILY")
UNIT_S = {"HOURLY": 3600, "MINUTELY": 60, "SECONDLY": 1}
# An INTERVAL larger than any period distance between years 1 and 9999 (3.2e11
# seconds) selects dtstart's period only; capping it keeps int64 arithmetic exact.
MAX_INTERVAL = 10**13
_INSTANCE_BUDGET = 4_000_000  # instances per block, bounds the temporaries
_MAX_BLOCK_DAYS = 60_000


def month_start(mabs: np.ndarray) -> np.ndarray:
    """Day number of the 1st of each month, months counted from 1970-01 (may be negative)."""
    return mabs.astype("datetime64[M]").astype("datetime64[D]").astype(np.int64)


def month_of(days: np.ndarray) -> np.ndarray:
    """Months since 1970-01 of each day number."""
    return days.astype("datetime64[D]").astype("datetime64[M]").astype(np.int64)


def week1_start(yrel: np.ndarray, wkst: int) -> np.ndarray:
    """First day of week 1 of each year (years since 1970) for weeks starting on ``wkst``.

    RFC 5545 §3.3.10 (BYWEEKNO): "Week number one of the calendar year
    is the first week that contains at least four (4) days in that calendar
    year", i.e. the week holding January 4th (ISO 8601 with WKST as first day).
    """
    jan4 = month_start(yrel * 12) + 3
    return jan4 - ((jan4 + 3) % 7 - wkst) % 7


@dataclass(frozen=True)
class Plan:
    """A rule with dtstart's defaults filled in (RFC 5545 §3.3.10), ready to expand."""

    freq: str
    interval: int
    wkst: int
    bymonth: tuple[int, ...]
    byweekno: tuple[int, ...]
    byyearday: tuple[int, ...]
    bymonthday: tuple[int, ...]
    byday: tuple[tuple[int, int], ...]
    hours: tuple[int, ...]  # () = every value (sub-daily frequencies only)
    minutes: tuple[int, ...]
    seconds: tuple[int, ...]
    bysetpos: tuple[int, ...]
    invalid_day: str  # "omit" | "backward" | "forward"
    p0: int  # dtstart's period number


class _Days:
    """Calendar fields of the consecutive days ``a .. a + n - 1``."""

    def __init__(self, a: int, n: int) -> None:
        self.a = a
        self.days = np.arange(a, a + n, dtype=np.int64)
        self.mabs = month_of(self.days)
        self.yrel = self.mabs // 12
        self.month = self.mabs - self.yrel * 12 + 1
        ms = month_start(self.mabs)
        self.mlen = month_start(self.mabs + 1) - ms
        self.dom = self.days - ms + 1
        ys = month_start(self.yrel * 12)
        self.ylen = month_start(self.yrel * 12 + 12) - ys
        self.doy = self.days - ys + 1
        self.wd = (self.days + 3) % 7


def _split(values: tuple[int, ...]) -> tuple[np.ndarray, np.ndarray]:
    return (np.array([v for v in values if v > 0], dtype=np.int64),
            np.array([v for v in values if v < 0], dtype=np.int64))


def _signed_match(k: np.ndarray, length: np.ndarray, values: tuple[int, ...]) -> np.ndarray:
    """``k`` (1-based) or its negative form ``k - length - 1`` is among ``values``."""
    pos, neg = _split(values)
    return np.isin(k, pos) | np.isin(k - length - 1, neg)


def _weekday_mask(f: _Days, plan: Plan) -> np.ndarray:
    """BYWEEKNO, BYYEARDAY and BYDAY: the day parts that always look at the real day."""
    m = np.ones(len(f.days), dtype=bool)
    if plan.byweekno:
        ws = f.days - (f.wd - plan.wkst) % 7  # first day of the day's week
        wyear = month_of(ws + 3) // 12  # a week belongs to the year holding its 4th day
        w1 = week1_start(wyear, plan.wkst)
        weekno = (ws - w1) // 7 + 1
        nweeks = (week1_start(wyear + 1, plan.wkst) - w1) // 7
        # RFC 5545 §3.3.10: a negative BYWEEKNO counts from the end of the week's year.
        m &= _signed_match(weekno, nweeks, plan.byweekno)
    if plan.byyearday:
        # BYYEARDAY=366 / -366 only matches in leap years, in every invalid_day mode.
        m &= _signed_match(f.doy, f.ylen, plan.byyearday)
    if plan.byday:
        plain = [wd for n, wd in plan.byday if n == 0]
        dm = np.isin(f.wd, np.array(plain, dtype=np.int64))
        nth = [(n, wd) for n, wd in plan.byday if n != 0]
        if nth:
            # RFC 5545 §3.3.10: "+1MO" is the first Monday "within the MONTHLY or YEARLY
            # RRULE"; table note 2 (p. 44): within the month when YEARLY has BYMONTH.
            in_month = plan.freq == "MONTHLY" or bool(plan.bymonth)
            k, length = (f.dom, f.mlen) if in_month else (f.doy, f.ylen)
            first = (k - 1) // 7 + 1
            last = -((length - k) // 7 + 1)
            for n, wd in nth:
                dm |= (f.wd == wd) & ((first if n > 0 else last) == n)
        m &= dm
    return m


def _period(freq: str, days: np.ndarray, wkst: int) -> np.ndarray:
    if freq == "YEARLY":
        return month_of(days) // 12
    if freq == "MONTHLY":
        return month_of(days)
    if freq == "WEEKLY":
        return (days + 3 - wkst) // 7
    return days


def _moved_days(plan: Plan, m_lo: int, m_hi: int) -> tuple[np.ndarray, np.ndarray]:
    """Days named by BYMONTHDAY that months ``m_lo..m_hi`` lack, moved per ``invalid_day``.

    Returns ``(real_day, source_month)``. RFC 7529 §4.1 SKIP: BACKWARD gives the
    last day of the month, FORWARD the first day of the next month; calsim
    moves a negative value whose magnitude exceeds the month the same way.
    """
    months = np.arange(m_lo, m_hi + 1, dtype=np.int64)
    ms = month_start(months)
    mlen = month_start(months + 1) - ms
    real, src = [], []
    for v in plan.bymonthday:
        bad = (v > mlen) if v > 0 else (-v > mlen)
        if bad.any():
            shift = -1 if plan.invalid_day == "backward" else 0
            real.append((ms + mlen + shift)[bad])
            src.append(months[bad])
    if not real:
        empty = np.empty(0, dtype=np.int64)
        return empty, empty
    return np.concatenate(real), np.concatenate(src)


def _select_days(plan: Plan, a: int, b: int, membership: bool) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Days of block ``[a, b)`` that the day parts select: ``(day, period, note)``, sorted.

    ``membership`` (DAILY and finer): a day is kept when it is named, directly or
    by a moved day, and belongs to its own period. Otherwise (YEARLY, MONTHLY,
    WEEKLY) a moved day belongs to the period of the month that named it.
    """
    n = b - a
    f = _Days(a, n + 1)  # one day more: FORWARD moves the last month's day onto b
    wmask = _weekday_mask(f, plan)
    real = wmask[:n].copy()
    if plan.bymonth:
        real &= np.isin(f.month[:n], np.array(plan.bymonth, dtype=np.int64))
    if plan.bymonthday:
        # Out-of-range values never match: RFC 5545 §3.3.10, instances "with an invalid
        # date (e.g., February 30) ... MUST be ignored" (invalid_day="omit").
        real &= _signed_match(f.dom[:n], f.mlen[:n], plan.bymonthday)
    day = f.days[:n][real]
    note = np.zeros(len(day), dtype=np.int8)
    moved = plan.invalid_day != "omit" and any(v > 28 or v < -28 for v in plan.bymonthday)
    if moved:
        m_lo = int(f.mabs[0]) - (1 if membership else 0)  # FORWARD from the month before a
        m_hi = int(f.mabs[n - 1])
        mday, msrc = _moved_days(plan, m_lo, m_hi)
        ok = (mday >= a) & (mday < (b if membership else b + 1))
        mday, msrc = mday[ok], msrc[ok]
        # RFC 7529 moves an invalid date before BYSETPOS: BYMONTH is the month that
        # named the day; the weekday, day of year and week number are the real day's.
        keep = wmask[mday - a]
        if plan.bymonth:
            keep &= np.isin(msrc % 12 + 1, np.array(plan.bymonth, dtype=np.int64))
        mday, msrc = mday[keep], msrc[keep]
        mnote = np.full(len(mday), 1 if plan.invalid_day == "backward" else 2, dtype=np.int8)
        mper = _period(plan.freq, mday, plan.wkst)
        if plan.freq == "MONTHLY":
            mper = msrc
        per = np.concatenate([_period(plan.freq, day, plan.wkst), mper])
        day = np.concatenate([day, mday])
        note = np.concatenate([note, mnote])
        # A moved day that is already an instance of the same period is kept once,
        # as the real instance (note 0).
        order = np.lexsort((note, day, per))
        per, day, note = per[order], day[order], note[order]
        first = np.ones(len(day), dtype=bool)
        first[1:] = (day[1:] != day[:-1]) | (per[1:] != per[:-1])
        per, day, note = per[first], day[first], note[first]
    else:
        per = _period(plan.freq, day, plan.wkst)
    if plan.freq in COARSE:
        sel = (per - plan.p0) % plan.interval == 0  # RFC 5545 §3.3.10 INTERVAL
        day, per, note = day[sel], per[sel], note[sel]
    return day, per, note


def _setpos_pick(values: np.ndarray, bysetpos: tuple[int, ...]) -> np.ndarray:
    """The BYSETPOS positions of one sorted set (the same for every period)."""
    n = len(values)
    idx = sorted({p - 1 if p > 0 else n + p for p in bysetpos if -n <= p <= n and p != 0})
    return values[np.array(idx, dtype=np.int64)]


def _time_set(plan: Plan) -> np.ndarray:
    """Seconds of the day from BYHOUR x BYMINUTE x BYSECOND (RFC 5545 §3.3.10 table, p. 44: expand)."""
    h = np.array(plan.hours, dtype=np.int64)[:, None, None]
    m = np.array(plan.minutes, dtype=np.int64)[None, :, None]
    s = np.array([x for x in plan.seconds if x < 60], dtype=np.int64)[None, None, :]
    return np.unique((h * 3600 + m * 60 + s).ravel())


def _coarse_block(plan: Plan, a: int, b: int) -> tuple[np.ndarray, np.ndarray]:
    day, per, note = _select_days(plan, a, b, membership=plan.freq == "DAILY")
    times = _time_set(plan)
    if plan.bysetpos and plan.freq == "DAILY":
        times = _setpos_pick(times, plan.bysetpos)  # every day has the same set
    secs = day[:, None] * DAY_S + times[None, :]
    notes = np.broadcast_to(note[:, None], secs.shape)
    if plan.bysetpos and plan.freq != "DAILY" and len(day):
        # RFC 5545 §3.3.10: BYSETPOS picks the n-th instance of each period's set.
        starts = np.flatnonzero(np.r_[True, per[1:] != per[:-1]])
        sizes = np.diff(np.r_[starts, len(per)])
        rank = np.arange(len(per)) - np.repeat(starts, sizes)
        nt = len(times)
        pos = rank[:, None] * nt + np.arange(nt)[None, :]
        count = np.repeat(sizes, sizes)[:, None] * nt
        pos_set, neg_set = _split(plan.bysetpos)
        keep = np.isin(pos + 1, pos_set) | np.isin(pos - count, neg_set)
        return secs[keep], notes[keep]
    return secs.ravel(), notes.ravel()


def _subdaily_sets(plan: Plan) -> tuple[np.ndarray, np.ndarray]:
    """Periods allowed within a day, and the second offsets of the instances within a period."""
    every = {"h": range(24), "m": range(60), "s": range(60)}
    hours = np.array(plan.hours or every["h"], dtype=np.int64)
    minutes = np.array(plan.minutes or every["m"], dtype=np.int64)
    seconds = np.array([x for x in (plan.seconds or every["s"]) if x < 60], dtype=np.int64)
    if plan.freq == "HOURLY":
        allowed = hours
        offsets = (minutes[:, None] * 60 + seconds[None, :]).ravel()
    elif plan.freq == "MINUTELY":
        allowed = (hours[:, None] * 60 + minutes[None, :]).ravel()
        offsets = seconds
    else:
        allowed = (hours[:, None, None] * 3600 + minutes[None, :, None] * 60 + seconds[None, None, :]).ravel()
        offsets = np.zeros(1, dtype=np.int64) if len(seconds) else np.empty(0, dtype=np.int64)
    offsets = np.unique(offsets)
    if plan.bysetpos:
        offsets = _setpos_pick(offsets, plan.bysetpos)  # every selected period has the same set
    return np.unique(allowed), offsets


def _subdaily_block(plan: Plan, a: int, b: int) -> tuple[np.ndarray, np.ndarray]:
    day, _, note = _select_days(plan, a, b, membership=True)
    unit = UNIT_S[plan.freq]
    ppd = DAY_S // unit
    allowed, offsets = _subdaily_sets(plan)
    secs: list[np.ndarray] = [np.empty(0, dtype=np.int64)]
    notes: list[np.ndarray] = [np.empty(0, dtype=np.int8)]
    per_day = min(len(allowed), ppd // plan.interval + 1) * max(1, len(offsets))
    chunk = max(1, _INSTANCE_BUDGET // max(1, per_day))  # selected days per pass
    for i in range(0, len(day), chunk):
        d, dn = day[i:i + chunk], note[i:i + chunk]
        lo, hi = int(d[0]), int(d[-1]) + 1
        # Two ways to meet INTERVAL; take the one with fewer temporaries.
        if len(d) * len(allowed) <= (hi - lo) * ppd // plan.interval + 1:
            per = (d[:, None] * ppd + allowed[None, :]).ravel()
            pnote = np.repeat(dn, len(allowed))
            keep = (per - plan.p0) % plan.interval == 0
            per, pnote = per[keep], pnote[keep]
        else:  # walk the arithmetic progression of selected periods, then filter
            first = lo * ppd + (plan.p0 - lo * ppd) % plan.interval
            per = np.arange(first, hi * ppd, plan.interval, dtype=np.int64)
            day_ok = np.zeros(hi - lo, dtype=bool)
            day_ok[d - lo] = True
            day_note = np.zeros(hi - lo, dtype=np.int8)
            day_note[d - lo] = dn
            in_day = np.zeros(ppd, dtype=bool)
            in_day[allowed] = True
            di = per // ppd - lo
            keep = day_ok[di] & in_day[per % ppd]
            per, pnote = per[keep], day_note[di[keep]]
        secs.append((per[:, None] * unit + offsets[None, :]).ravel())
        notes.append(np.repeat(pnote, len(offsets)))
    return np.concatenate(secs), np.concatenate(notes)


def _blocks(plan: Plan, d0: int, d1: int, per_day: int) -> list[tuple[int, int]]:
    """Cut days ``[d0, d1)`` (aligned on periods) into blocks aligned on periods."""
    size = max(1, min(_MAX_BLOCK_DAYS, _INSTANCE_BUDGET // max(1, per_day)))
    if plan.freq in ("YEARLY", "MONTHLY"):
        step = max(1, size // 31) if plan.freq == "MONTHLY" else 12 * max(1, size // 366)
        m0, m1 = int(month_of(np.array([d0]))[0]), int(month_of(np.array([d1]))[0])
        cuts = month_start(np.arange(m0, m1, step, dtype=np.int64)).tolist()
    else:
        step = 7 * max(1, size // 7) if plan.freq == "WEEKLY" else size
        cuts = list(range(d0, d1, step))
    cuts.append(d1)
    return list(zip(cuts[:-1], cuts[1:]))


def expand(plan: Plan, start: int, end: int) -> tuple[np.ndarray, np.ndarray]:
    """Instances with wall time in ``[start, end)`` (µs), sorted unique, with their notes."""
    empty = (np.empty(0, dtype=np.int64), np.empty(0, dtype=np.int8))
    if start >= end:
        return empty
    first, last = start // DAY_US, (end - 1) // DAY_US
    # Widen to whole periods so BYSETPOS ranks complete sets.
    if plan.freq == "YEARLY":
        y0, y1 = (month_of(np.array([first, last])) // 12).tolist()
        d0, d1 = month_start(np.array([y0 * 12, y1 * 12 + 12])).tolist()
    elif plan.freq == "MONTHLY":
        m0, m1 = month_of(np.array([first, last])).tolist()
        m0 -= 1 if plan.invalid_day == "forward" else 0  # its moved day may land on start's month
        d0, d1 = month_start(np.array([m0, m1 + 1])).tolist()
    elif plan.freq == "WEEKLY":
        d0 = first - (first + 3 - plan.wkst) % 7
        d1 = last - (last + 3 - plan.wkst) % 7 + 7
    else:
        d0, d1 = first, last + 1
    if plan.freq in COARSE:
        times = _time_set(plan)
        if plan.bysetpos and plan.freq == "DAILY":
            times = _setpos_pick(times, plan.bysetpos)
        per_day = 16 + len(times)
        kernel = _coarse_block
    else:
        allowed, offsets = _subdaily_sets(plan)
        times = offsets if len(allowed) else allowed
        per_day = 16  # the instances are chunked by selected days inside the block
        kernel = _subdaily_block
    if not len(times):  # e.g. BYSECOND=60 only, or BYSETPOS=2 of a one-instance set: never
        return empty
    secs, notes = [], []
    for a, b in _blocks(plan, d0, d1, per_day):
        s, n = kernel(plan, a, b)
        secs.append(s)
        notes.append(n)
    wall = np.concatenate(secs) * US
    note = np.concatenate(notes).astype(np.int8)
    if len(wall) > 1 and not (wall[1:] > wall[:-1]).all():
        # Only moved days can collide (FORWARD from one month onto the next
        # month's own 1st): keep one, the real instance (smallest note).
        order = np.lexsort((note, wall))
        wall, note = wall[order], note[order]
        keep = np.r_[True, wall[1:] != wall[:-1]]
        wall, note = wall[keep], note[keep]
    i, j = np.searchsorted(wall, [start, end])
    return np.ascontiguousarray(wall[i:j]), np.ascontiguousarray(note[i:j])
