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

A typical call (one schedule, one year) yields a few hundred instances, so
its cost is the fixed per-call work, not the arithmetic per instance. That
work is kept small: the calendar fields of a block are slices of one table
(the Gregorian calendar repeats every 400 years), BY parts are matched with
cached lookup tables instead of ``np.isin``, the time-of-day sets are cached
per BY tuple, scalars are computed in plain Python, and absent parts
(INTERVAL=1, no BYxxx day part) cost nothing. Every cache is keyed on
immutable values (tuples of the frozen rule) and holds read-only arrays.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import NamedTuple

import numpy as np

from ..times import DAY_US, US
from .days import Days, memo, month_of, month_of_day, month_start, month_start_day, readonly

DAY_S = 86_400
COARSE = ("YEARLY", "MONTHLY", "WEEKLY", "DAILY")
UNIT_S = {"HOURLY": 3600, "MINUTELY": 60, "SECONDLY": 1}
# An INTERVAL larger than any period distance between years 1 and 9999 (3.2e11
# seconds) selects dtstart's period only; capping it keeps int64 arithmetic exact.
MAX_INTERVAL = 10**13
_INSTANCE_BUDGET = 4_000_000  # instances per block, bounds the temporaries
_MAX_BLOCK_DAYS = 60_000


def week1_start(yrel: np.ndarray, wkst: int) -> np.ndarray:
    """First day of week 1 of each year (years since 1970) for weeks starting on ``wkst``.

    RFC 5545 §3.3.10 (BYWEEKNO): "Week number one of the calendar year
    is the first week that contains at least four (4) days in that calendar
    year", i.e. the week holding January 4th (ISO 8601 with WKST as first day).
    """
    jan4 = month_start(yrel * 12) + 3
    return jan4 - ((jan4 + 3) % 7 - wkst) % 7


class Plan(NamedTuple):
    """A rule with dtstart's defaults filled in (RFC 5545 §3.3.10), ready to expand.

    Immutable and hashable (a tuple: built once per call, cheaply).
    """

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


# Lookup tables for the BY values (a few hundred bytes each).
@memo(maxsize=1024)
def _flags(values: tuple[int, ...], size: int) -> np.ndarray:
    """A bool table over ``0 .. size - 1``, True at ``values``."""
    table = np.zeros(size, dtype=bool)
    table[list(values)] = True
    return readonly(table)


@memo(maxsize=1024)
def _signed_flags(values: tuple[int, ...], size: int) -> tuple[np.ndarray | None, np.ndarray | None]:
    """Tables of a signed BYxxx part over ``1..size``: positive values, magnitudes of negative ones."""
    pos = tuple(v for v in values if v > 0)
    neg = tuple(-v for v in values if v < 0)
    return (_flags(pos, size + 1) if pos else None), (_flags(neg, size + 1) if neg else None)


def _signed_match(k: np.ndarray, length: np.ndarray, values: tuple[int, ...], size: int) -> np.ndarray:
    """``k`` (1..length <= size) or its negative form ``k - length - 1`` is among ``values``."""
    pos, neg = _signed_flags(values, size)
    if neg is None:
        assert pos is not None  # values is not empty, so one of the tables is there
        return pos[k]
    m = neg[length - k + 1]  # k - length - 1 == -j  <=>  length - k + 1 == j
    return m if pos is None else pos[k] | m


@memo(maxsize=1024)
def _byday_parts(byday: tuple[tuple[int, int], ...]) -> tuple[np.ndarray, tuple[tuple[int, int], ...]]:
    """BYDAY as a weekday table of its plain days, and its numbered ``(n, weekday)`` days."""
    return _flags(tuple(wd for n, wd in byday if n == 0), 7), tuple((n, wd) for n, wd in byday if n != 0)


def _and(m: np.ndarray | None, other: np.ndarray) -> np.ndarray:
    """``m & other``, where ``m`` None means "no condition yet"."""
    return other if m is None else m & other


def _weekday_mask(f: Days, plan: Plan) -> np.ndarray | None:
    """BYWEEKNO, BYYEARDAY and BYDAY: the day parts that always look at the real day.

    None when the rule has none of them (every day passes).
    """
    m = None
    if plan.byweekno:
        ws = f.days - (f.wd - plan.wkst) % 7  # first day of the day's week
        wyear = month_of(ws + 3) // 12  # a week belongs to the year holding its 4th day
        w1 = week1_start(wyear, plan.wkst)
        weekno = (ws - w1) // 7 + 1
        nweeks = (week1_start(wyear + 1, plan.wkst) - w1) // 7
        # RFC 5545 §3.3.10: a negative BYWEEKNO counts from the end of the week's year.
        m = _signed_match(weekno, nweeks, plan.byweekno, 53)
    if plan.byyearday:
        # BYYEARDAY=366 / -366 only matches in leap years, in every invalid_day mode.
        m = _and(m, _signed_match(f.doy, f.ylen, plan.byyearday, 366))
    if plan.byday:
        plain, nth = _byday_parts(plan.byday)
        dm = plain[f.wd]  # a new array (a gather), so |= below leaves the table alone
        if nth:
            # RFC 5545 §3.3.10: "+1MO" is the first Monday "within the MONTHLY or YEARLY
            # RRULE"; table note 2 (p. 44): within the month when YEARLY has BYMONTH.
            in_month = plan.freq == "MONTHLY" or bool(plan.bymonth)
            k, length = (f.dom, f.mlen) if in_month else (f.doy, f.ylen)
            first = (k - 1) // 7 + 1
            last = -((length - k) // 7 + 1)
            for n, wd in nth:
                dm |= (f.wd == wd) & ((first if n > 0 else last) == n)
        m = _and(m, dm)
    return m


def _period(plan: Plan, f: Days, at: slice | np.ndarray) -> np.ndarray:
    """Period numbers of the days ``f.days[at]``."""
    if plan.freq == "YEARLY":
        return f.mabs(at) // 12
    if plan.freq == "MONTHLY":
        return f.mabs(at)
    if plan.freq == "WEEKLY":
        return (f.days[at] + 3 - plan.wkst) // 7
    return f.days[at]


def _moves(plan: Plan) -> bool:
    """Whether ``invalid_day`` can move a day: a BYMONTHDAY some month lacks, not omitted."""
    return plan.invalid_day != "omit" and any(v > 28 or v < -28 for v in plan.bymonthday)


@memo(maxsize=1024)
def _lacking(bymonthday: tuple[int, ...]) -> np.ndarray:
    """A bool table over month lengths (28..31, indexed 0..31): a month that long lacks a named day."""
    return _flags(tuple(n for n in range(32) if any(abs(v) > n for v in bymonthday)), 32)


def _moved_mask(plan: Plan, f: Days, n: int, membership: bool) -> np.ndarray:
    """The days of ``f`` (``a .. a + n``) onto which ``invalid_day`` moves a day a month lacks.

    RFC 7529 §4.1 SKIP: BACKWARD gives the last day of the month, FORWARD the
    first day of the next month; calsim moves a negative value whose magnitude
    exceeds the month the same way. Exactly one block keeps each moved day:
    for YEARLY and MONTHLY (``membership`` False) blocks start on a month's
    1st and a moved day goes with the month that named it, so FORWARD from
    the block's last month lands on ``a + n`` (kept here) and FORWARD onto
    ``a`` is the previous block's; for DAILY and finer the block it falls in,
    ``[a, a + n)``, keeps it. BYMONTH is checked on the month that named the day.
    """
    lacking = _lacking(plan.bymonthday)
    if plan.invalid_day == "backward":
        moved = (f.dom == f.mlen) & lacking[f.mlen]  # the month's last day, when it lacks the named one
        source = f.month
        moved[n] = False  # a + n is in the next block (membership) or a 1st (not a last day)
    else:
        before = Days(int(f.days[0]) - 1, n + 1)  # the day before each day of f
        moved = (f.dom == 1) & lacking[before.mlen]  # a 1st, after a month that lacks the named day
        source = before.month
        moved[n if membership else 0] = False
    if plan.bymonth:
        moved &= _flags(plan.bymonth, 13)[source]
    return moved


def _select_days(plan: Plan, a: int, b: int,
                 membership: bool) -> tuple[np.ndarray, np.ndarray | None, np.ndarray]:
    """Days of block ``[a, b)`` that the day parts select: ``(day, period, note)``, sorted.

    ``membership`` (DAILY and finer): a day is kept when it is named, directly or
    by a moved day, and belongs to its own period. Otherwise (YEARLY, MONTHLY,
    WEEKLY) a moved day belongs to the period of the month that named it.
    ``period`` is None when nothing needs it (no INTERVAL > 1, no BYSETPOS,
    or a frequency finer than a day, whose kernel counts periods itself).
    """
    need_per = plan.freq in COARSE and (plan.interval > 1 or bool(plan.bysetpos))
    n = b - a
    f = Days(a, n + 1)  # one day more: FORWARD moves the last month's day onto b
    wmask = _weekday_mask(f, plan)
    real = None if wmask is None else wmask[:n]  # None: every day of the block
    if plan.bymonth:
        real = _and(real, _flags(plan.bymonth, 13)[f.month[:n]])
    if plan.bymonthday:
        # Out-of-range values never match: RFC 5545 §3.3.10, instances "with an invalid
        # date (e.g., February 30) ... MUST be ignored" (invalid_day="omit").
        real = _and(real, _signed_match(f.dom[:n], f.mlen[:n], plan.bymonthday, 31))
    if not _moves(plan):
        at = slice(0, n) if real is None else np.flatnonzero(real)
        day = f.days[at]
        note = np.zeros(len(day), dtype=np.int8)
        per = _period(plan, f, at) if need_per else None
    else:  # here BYMONTHDAY is given, so ``real`` is a mask
        assert real is not None
        moved = _moved_mask(plan, f, n, membership)
        # RFC 7529 moves an invalid date before BYSETPOS: the weekday, day of year and
        # week number are the real day's (BYMONTH was checked on the naming month).
        if wmask is not None:
            moved &= wmask
        code = np.int8(1 if plan.invalid_day == "backward" else 2)
        if plan.freq == "MONTHLY" and plan.invalid_day == "forward":
            # The moved day (a 1st) counts in the month before its own: it is a
            # different instance from a real one on the same day, each in its
            # period. Sorted by (period, day) the moved one comes first, so
            # the slots (day 0 moved, day 0 real, day 1 moved, ...) are in order.
            slots = np.zeros((n + 1, 2), dtype=bool)
            slots[:, 0] = moved
            slots[:n, 1] = real
            at, is_real = np.divmod(np.flatnonzero(slots), 2)
            day = f.days[at]
            note = np.where(is_real, np.int8(0), code)
            per = f.mabs(at) + (is_real - 1)
        else:
            # Otherwise a day's period is its own (BACKWARD stays in the naming month;
            # YEARLY never moves across a year end, December has 31 days, so
            # ``moved[n]`` is False): a moved day that is already an instance is
            # kept once, as the real instance (note 0).
            at = np.flatnonzero(real | moved[:n])
            day = f.days[at]
            note = np.where(real[at], np.int8(0), code)
            per = _period(plan, f, at) if need_per else None
    if plan.freq in COARSE and plan.interval > 1:
        assert per is not None  # need_per
        sel = (per - plan.p0) % plan.interval == 0  # RFC 5545 §3.3.10 INTERVAL (1: every period)
        day, per, note = day[sel], per[sel], note[sel]
    return day, per, note


def _setpos_pick(values: np.ndarray, bysetpos: tuple[int, ...]) -> np.ndarray:
    """The BYSETPOS positions of one sorted set (the same for every period)."""
    n = len(values)
    idx = sorted({p - 1 if p > 0 else n + p for p in bysetpos if -n <= p <= n and p != 0})
    return values[np.array(idx, dtype=np.int64)]


@memo(maxsize=64)  # up to 86,400 times of day (690 kB) an entry
def _coarse_times(hours: tuple[int, ...], minutes: tuple[int, ...], seconds: tuple[int, ...],
                  bysetpos: tuple[int, ...]) -> np.ndarray:
    """Seconds of the day from BYHOUR x BYMINUTE x BYSECOND (RFC 5545 §3.3.10 table, p. 44: expand).

    ``bysetpos`` (FREQ=DAILY only, else ``()``): every day has the same set, so
    the positions are picked once here.
    """
    h = np.array(hours, dtype=np.int64)[:, None, None]
    m = np.array(minutes, dtype=np.int64)[None, :, None]
    s = np.array([x for x in seconds if x < 60], dtype=np.int64)[None, None, :]
    times = np.unique((h * 3600 + m * 60 + s).ravel())
    if bysetpos:
        times = _setpos_pick(times, bysetpos)
    return readonly(times)


def _coarse_block(plan: Plan, a: int, b: int, times: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    day, per, note = _select_days(plan, a, b, membership=plan.freq == "DAILY")
    nt = len(times)
    if plan.bysetpos and plan.freq != "DAILY" and len(day):
        # RFC 5545 §3.3.10: BYSETPOS picks the n-th instance of each period's set.
        # ``per`` is sorted, so a period's instances are one run of the flat
        # (day, time) order: runs [start, end), the n-th is start + n - 1 or end + n.
        assert per is not None  # a coarse frequency with BYSETPOS: _select_days counted the periods
        cut = np.flatnonzero(per[1:] != per[:-1]) + 1
        start = np.concatenate(([0], cut)) * nt
        end = np.concatenate((cut, [len(per)])) * nt
        picks = []
        for p in plan.bysetpos:  # a loop over the BY values, not the instances
            if p > 0:
                picks.append((start + (p - 1))[end - start >= p])
            else:
                picks.append((end + p)[end - start >= -p])
        pick = picks[0] if len(picks) == 1 else np.unique(np.concatenate(picks))
        if nt == 1:
            return day[pick] * DAY_S + int(times[0]), note[pick]
        return (day[pick // nt] * DAY_S + times[pick % nt]), note[pick // nt]
    if nt == 1:
        return day * DAY_S + int(times[0]), note
    return (day[:, None] * DAY_S + times[None, :]).ravel(), np.repeat(note, nt)


class _SubdailySets(NamedTuple):
    allowed: np.ndarray  # periods of the day the BY parts allow, sorted
    offsets: np.ndarray  # second offsets of the instances within a period, sorted
    in_day: np.ndarray  # bool over the periods of a day: allowed


@memo(maxsize=32)  # up to 86,400 allowed seconds (780 kB) an entry
def _subdaily_sets(freq: str, hours: tuple[int, ...], minutes: tuple[int, ...], seconds: tuple[int, ...],
                   bysetpos: tuple[int, ...]) -> _SubdailySets:
    """Periods allowed within a day, and the second offsets of the instances within a period."""
    every = {"h": range(24), "m": range(60), "s": range(60)}
    h = np.array(hours or every["h"], dtype=np.int64)
    m = np.array(minutes or every["m"], dtype=np.int64)
    s = np.array([x for x in (seconds or every["s"]) if x < 60], dtype=np.int64)
    if freq == "HOURLY":
        allowed = h
        offsets = (m[:, None] * 60 + s[None, :]).ravel()
    elif freq == "MINUTELY":
        allowed = (h[:, None] * 60 + m[None, :]).ravel()
        offsets = s
    else:
        allowed = (h[:, None, None] * 3600 + m[None, :, None] * 60 + s[None, None, :]).ravel()
        offsets = np.zeros(1, dtype=np.int64) if len(s) else np.empty(0, dtype=np.int64)
    offsets = np.unique(offsets)
    if bysetpos:
        offsets = _setpos_pick(offsets, bysetpos)  # every selected period has the same set
    allowed = np.unique(allowed)
    in_day = np.zeros(DAY_S // UNIT_S[freq], dtype=bool)
    in_day[allowed] = True
    return _SubdailySets(readonly(allowed), readonly(offsets), readonly(in_day))


def _subdaily_block(plan: Plan, a: int, b: int, sets: _SubdailySets) -> tuple[np.ndarray, np.ndarray]:
    day, _, note = _select_days(plan, a, b, membership=True)
    unit = UNIT_S[plan.freq]
    ppd = DAY_S // unit
    allowed, offsets, in_day = sets
    every_period = len(allowed) == ppd
    secs: list[np.ndarray] = []
    notes: list[np.ndarray] = []
    per_day = min(len(allowed), ppd // plan.interval + 1) * max(1, len(offsets))
    chunk = max(1, _INSTANCE_BUDGET // max(1, per_day))  # selected days per pass
    for i in range(0, len(day), chunk):
        d, dn = day[i:i + chunk], note[i:i + chunk]
        lo, hi = int(d[0]), int(d[-1]) + 1
        noted = bool(dn.any())
        # Two ways to meet INTERVAL; take the one with fewer temporaries.
        if len(d) * len(allowed) <= (hi - lo) * ppd // plan.interval + 1:
            per = (d[:, None] * ppd + allowed[None, :]).ravel()
            pnote = np.repeat(dn, len(allowed)) if noted else np.zeros(len(per), dtype=np.int8)
            if plan.interval > 1:  # INTERVAL=1 keeps every period
                keep = (per - plan.p0) % plan.interval == 0
                per, pnote = per[keep], pnote[keep]
        else:  # walk the arithmetic progression of selected periods, then filter
            first = lo * ppd + (plan.p0 - lo * ppd) % plan.interval
            per = np.arange(first, hi * ppd, plan.interval, dtype=np.int64)
            # ``d`` is sorted and unique: as many days as [lo, hi) holds means all of them.
            every_day = len(d) == hi - lo
            keep = None
            if not every_day:
                day_ok = np.zeros(hi - lo, dtype=bool)
                day_ok[d - lo] = True
                keep = day_ok[per // ppd - lo]
            if not every_period:
                k = in_day[per % ppd]
                keep = k if keep is None else keep & k
            if keep is not None:
                per = per[keep]
            if noted:
                day_note = np.zeros(hi - lo, dtype=np.int8)
                day_note[d - lo] = dn
                pnote = day_note[per // ppd - lo]
            else:
                pnote = np.zeros(len(per), dtype=np.int8)
        if len(offsets) == 1:
            secs.append(per * unit + int(offsets[0]))
            notes.append(pnote)
        else:
            secs.append((per[:, None] * unit + offsets[None, :]).ravel())
            notes.append(np.repeat(pnote, len(offsets)))
    if len(secs) == 1:
        return secs[0], notes[0]
    if not secs:
        return np.empty(0, dtype=np.int64), np.empty(0, dtype=np.int8)
    return np.concatenate(secs), np.concatenate(notes)


def _blocks(plan: Plan, d0: int, d1: int, per_day: int) -> list[tuple[int, int]]:
    """Cut days ``[d0, d1)`` (aligned on periods) into blocks aligned on periods."""
    size = max(1, min(_MAX_BLOCK_DAYS, _INSTANCE_BUDGET // max(1, per_day)))
    if plan.freq in ("YEARLY", "MONTHLY"):
        step = max(1, size // 31) if plan.freq == "MONTHLY" else 12 * max(1, size // 366)
        m0, m1 = month_of_day(d0), month_of_day(d1)
        if m1 - m0 <= step:  # d0 is the 1st of month m0: one block
            return [(d0, d1)]
        cuts = [month_start_day(m) for m in range(m0, m1, step)]
    else:
        step = 7 * max(1, size // 7) if plan.freq == "WEEKLY" else size
        if d1 - d0 <= step:
            return [(d0, d1)]
        cuts = list(range(d0, d1, step))
    cuts.append(d1)
    return list(zip(cuts[:-1], cuts[1:]))


def expand(plan: Plan, start: int, end: int) -> tuple[np.ndarray, np.ndarray]:
    """Instances with wall time in ``[start, end)`` (µs), sorted unique, with their notes."""
    if start >= end:
        return np.empty(0, dtype=np.int64), np.empty(0, dtype=np.int8)
    first, last = start // DAY_US, (end - 1) // DAY_US
    # Widen to whole periods so BYSETPOS ranks complete sets.
    if plan.freq == "YEARLY":
        d0 = month_start_day(month_of_day(first) // 12 * 12)
        d1 = month_start_day(month_of_day(last) // 12 * 12 + 12)
    elif plan.freq == "MONTHLY":
        # FORWARD: the month before may move its day onto start's month.
        m0 = month_of_day(first) - (1 if plan.invalid_day == "forward" else 0)
        d0, d1 = month_start_day(m0), month_start_day(month_of_day(last) + 1)
    elif plan.freq == "WEEKLY":
        d0 = first - (first + 3 - plan.wkst) % 7
        d1 = last - (last + 3 - plan.wkst) % 7 + 7
    else:
        d0, d1 = first, last + 1
    kernel: Callable[[Plan, int, int], tuple[np.ndarray, np.ndarray]]  # a block's instances, with its own sets
    if plan.freq in COARSE:
        times = _coarse_times(plan.hours, plan.minutes, plan.seconds,
                              plan.bysetpos if plan.freq == "DAILY" else ())
        per_day = 16 + len(times)
        kernel = functools.partial(_coarse_block, times=times)
    else:
        sets = _subdaily_sets(plan.freq, plan.hours, plan.minutes, plan.seconds, plan.bysetpos)
        times = sets.offsets if len(sets.allowed) else sets.allowed
        per_day = 16  # the instances are chunked by selected days inside the block
        kernel = functools.partial(_subdaily_block, sets=sets)
    if not len(times):  # e.g. BYSECOND=60 only, or BYSETPOS=2 of a one-instance set: never
        return np.empty(0, dtype=np.int64), np.empty(0, dtype=np.int8)
    parts = [kernel(plan, a, b) for a, b in _blocks(plan, d0, d1, per_day)]
    if len(parts) == 1:
        wall, note = parts[0][0] * US, parts[0][1].astype(np.int8, copy=False)
    else:
        wall = np.concatenate([s for s, _ in parts]) * US
        note = np.concatenate([n for _, n in parts]).astype(np.int8, copy=False)
    # Only moved days can collide (FORWARD from one month onto the next month's
    # own 1st); without them the blocks are sorted and unique already.
    if _moves(plan) and len(wall) > 1 and not (wall[1:] > wall[:-1]).all():
        # Keep one, the real instance (smallest note).
        order = np.lexsort((note, wall))
        wall, note = wall[order], note[order]
        keep = np.r_[True, wall[1:] != wall[:-1]]
        wall, note = wall[keep], note[keep]
    i, j = wall.searchsorted(start), wall.searchsorted(end)
    return np.ascontiguousarray(wall[i:j]), np.ascontiguousarray(note[i:j])
