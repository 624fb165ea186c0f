"""systemd's ``calendar_spec_next_usec``: the walk a ``.timer`` runs for its next ``OnCalendar=`` elapse.

A line-by-line port of ``find_next()`` and the helpers it calls
(``find_matching_component``, ``find_end_of_month``, ``tm_within_bounds``,
``matches_weekday``) and of ``calendar_spec_next_usec_impl`` from
``src/shared/calendarspec.c`` of systemd 252 (v252.31 of systemd-stable;
line numbers below are of it) plus the fix Debian's 252.38 carries and
v252.31 lacks (systemd PR #36897, "fix normalization when DST is
negative": read from the machine's ``libsystemd-shared-252.so``, see
``_find_next``), over glibc's ``localtime_r``/``mktime``
(:class:`calsim.tz.glibc.LocalTime`).

The walk moves through wall-clock fields, year down to second, each time
taking the smallest allowed value not below the current one; after every
step ``tm_within_bounds()`` runs ``mktime(tm_isdst = -1)`` on a copy and
compares: a time that ``mktime`` moved *forward* (a gap, or day 31 of a
30-day month) restarts the search from where it landed, one moved
*backward* is refused (``-EDEADLK``) and the walk moves on to the next unit
up (the next day when the hour is refused). glibc moves a gap's time to the
side whose ``tm_isdst`` is set; with "negative DST" (Europe/Dublin, whose
winter GMT has ``isdst = 1``; Morocco) that side is *before* the gap, so in
Dublin ``*-*-* 1..3:30`` loses 02:30 and 03:30 IST on the spring day: the
hour 01 is refused backward and the walk goes on with the next day.
(Where the walk's own normalisation moves it back, ``hourly`` from 00:00
GMT, the fix of PR #36897 takes the match only if it is not before the
start, else tries an hour later with ``tm_isdst`` as ``mktime`` gave it,
which moves the gap's time forward: 02:00 IST.)

The answer is the ``mktime()`` of the fields found, which reads a repeated
wall time in the pass whose offset glibc's previous ``mktime`` used: a
walk through a repeated hour stays in the pass it started in, so a timer
that runs all along fires the first pass only, one whose base lies in the
second pass fires the second-pass times.

>>> from calsim.rules.oncalendar import OnCalendar
>>> from calsim.tz.clock import ZoneClock
>>> from calsim.tz.release import release
>>> clock = ZoneClock(release("2026f").table("Europe/Dublin"))
>>> rule = OnCalendar.parse("*-*-* 1..3:30")
>>> t = rule.next_after(clock, 1774742400)  # after 2026-03-29 00:00 GMT, the spring day
>>> clock.fields(t)[:5]  # 01:30 is not there; 02:30 and 03:30 IST are lost too
(2026, 3, 30, 1, 30)
"""

from __future__ import annotations

import weakref

from ..tz.clock import ZoneClock
from ..tz.glibc import TM_YEAR_BASE, LocalTime

__all__ = ["next_usec", "local_time"]

US = 1_000_000
MAX_YEAR = 2199                  # calendarspec.c
MAX_CALENDAR_ITERATIONS = 1000   # calendarspec.c:1244
_ALL_WEEKDAYS = 127              # BITS_WEEKDAYS
_ENOENT, _ERANGE, _EDEADLK, _EINVAL = -2, -34, -35, -22
Y, MON, MDAY, H, MIN, SEC, ISDST = range(7)

_CLOCKS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def local_time(clock: ZoneClock) -> LocalTime:
    """The glibc view of ``clock``'s zone (one per clock, so its tables are built once)."""
    g = _CLOCKS.get(clock)
    if g is None:
        g = _CLOCKS[clock] = LocalTime(clock.table)
    return g


def _mktime(g: LocalTime, tm: list[int]) -> int:
    """``mktime_or_timegm(tm, false)``: normalises ``tm`` in place, returns t or -1 (``tm`` untouched)."""
    r = g.mktime(tm)
    if r is None:
        return -1
    tm[:] = r[1]
    return r[0]


def _find_end_of_month(g: LocalTime, tm: list[int], day: int) -> int:
    """calendarspec.c:1106-1117: the day of month that is ``day`` days before the next month's first."""
    t = list(tm)
    t[MON] += 1
    t[MDAY] = 1 - day
    if _mktime(g, t) < 0 or t[MON] != tm[MON]:
        return -1
    return t[MDAY]


def _find_matching_component(g: LocalTime, spec, chain, eom: bool, tm: list[int], k: int, scale: int = 0) -> int:
    """calendarspec.c:1119-1181: the earliest value of ``chain`` not below ``tm[k]`` (1: changed, 0: same).

    ``scale``: the value is ``tm[k]`` (or, for the seconds, the microseconds
    the caller put there); ``eom``: the chain counts days from the month's end.
    """
    if chain is None:
        return 0
    val = tm[k]
    d, d_set = -1, False
    for start, stop, repeat in chain:
        if eom:
            start = _find_end_of_month(g, tm, start)
            stop = _find_end_of_month(g, tm, stop)
            if stop > 0:
                start, stop = stop, start
        if start >= val:
            if not d_set or start < d:
                d, d_set = start, True
        elif repeat > 0:
            k2 = start + repeat * (-(-(val - start) // repeat))  # DIV_ROUND_UP
            if (not d_set or k2 < d) and (stop < 0 or k2 <= stop):
                d, d_set = k2, True
    if not d_set:
        return _ENOENT
    r = int(val != d)
    tm[k] = d
    return r


def _tm_within_bounds(g: LocalTime, tm: list[int]) -> int:
    """calendarspec.c:1183-1225: 1 if ``mktime`` leaves ``tm`` as it is; 0 (``tm`` moved on) if it moved it
    forward; negative if it moved it back, or failed."""
    if tm[Y] + TM_YEAR_BASE > MAX_YEAR:
        return _ERANGE
    t = list(tm)
    if _mktime(g, t) < 0:
        return _EINVAL  # negative_errno()
    if t[Y] != tm[Y]:
        cmp = (t[Y] > tm[Y]) - (t[Y] < tm[Y])
        t[MON] = 0
    elif t[MON] != tm[MON]:
        cmp = (t[MON] > tm[MON]) - (t[MON] < tm[MON])
        t[MDAY] = 1
    elif t[MDAY] != tm[MDAY]:
        cmp = (t[MDAY] > tm[MDAY]) - (t[MDAY] < tm[MDAY])
        t[H] = 0
    elif t[H] != tm[H]:
        cmp = (t[H] > tm[H]) - (t[H] < tm[H])
        t[MIN] = 0
    elif t[MIN] != tm[MIN]:
        cmp = (t[MIN] > tm[MIN]) - (t[MIN] < tm[MIN])
        t[SEC] = 0
    else:
        cmp = (t[SEC] > tm[SEC]) - (t[SEC] < tm[SEC])
    if cmp < 0:
        return _EDEADLK  # "Refuse to go backward"
    if cmp > 0:
        tm[:] = t
    return int(cmp == 0)


def _matches_weekday(g: LocalTime, bits: int, tm: list[int]) -> bool:
    """calendarspec.c:1227-1240 (bits Mon = 1 .. Sun = 64)."""
    if bits < 0 or bits >= _ALL_WEEKDAYS:
        return True
    t = list(tm)
    if _mktime(g, t) < 0:
        return False
    k = 6 if t[7] == 0 else t[7] - 1
    return bool(bits & (1 << k))


def _find_next(g: LocalTime, spec, tm: list[int], usec: int) -> tuple[list[int], int] | None:
    """calendarspec.c:1246-1366 ``find_next``: the fields and microsecond of the next elapse (None: none)."""
    c = list(tm)
    tm_usec = usec
    days = spec.days
    eom = spec.end_of_month
    invalidate_dst = False
    for _ in range(MAX_CALENDAR_ITERATIONS):
        _mktime(g, c)                        # "Normalize the current date"
        if not invalidate_dst:
            c[ISDST] = -1                    # spec->dst: -1 unless a local zone abbreviation was named
        c[Y] += TM_YEAR_BASE
        r = _find_matching_component(g, spec, spec.years, False, c, Y)
        c[Y] -= TM_YEAR_BASE
        if r > 0:
            c[MON], c[MDAY], c[H], c[MIN], c[SEC], tm_usec = 0, 1, 0, 0, 0, 0
        if r < 0:
            return None
        if _tm_within_bounds(g, c) <= 0:
            return None

        c[MON] += 1
        r = _find_matching_component(g, spec, spec.months, False, c, MON)
        c[MON] -= 1
        if r > 0:
            c[MDAY], c[H], c[MIN], c[SEC], tm_usec = 1, 0, 0, 0, 0
        if r < 0 or (r := _tm_within_bounds(g, c)) < 0:
            c[Y] += 1
            c[MON], c[MDAY], c[H], c[MIN], c[SEC], tm_usec = 0, 1, 0, 0, 0, 0
            continue
        if r == 0:
            continue

        r = _find_matching_component(g, spec, days, eom, c, MDAY)
        if r > 0:
            c[H], c[MIN], c[SEC], tm_usec = 0, 0, 0, 0
        if r < 0 or (r := _tm_within_bounds(g, c)) < 0:
            c[MON] += 1
            c[MDAY], c[H], c[MIN], c[SEC], tm_usec = 1, 0, 0, 0, 0
            continue
        if r == 0:
            continue

        if not _matches_weekday(g, spec.weekday_bits, c):
            c[MDAY] += 1
            c[H], c[MIN], c[SEC], tm_usec = 0, 0, 0, 0
            continue

        r = _find_matching_component(g, spec, spec.hours, False, c, H)
        if r > 0:
            c[MIN], c[SEC], tm_usec = 0, 0, 0
        if r < 0 or (r := _tm_within_bounds(g, c)) < 0:
            c[MDAY] += 1
            c[H], c[MIN], c[SEC], tm_usec = 0, 0, 0, 0
            continue
        if r == 0:  # "The next hour we set might be missing if there are time zone changes."
            continue

        r = _find_matching_component(g, spec, spec.minutes, False, c, MIN)
        if r > 0:
            c[SEC], tm_usec = 0, 0
        if r < 0 or (r := _tm_within_bounds(g, c)) < 0:
            c[H] += 1
            c[MIN], c[SEC], tm_usec = 0, 0, 0
            continue
        if r == 0:
            continue

        c[SEC] = c[SEC] * US + tm_usec
        r = _find_matching_component(g, spec, spec.seconds, False, c, SEC)
        tm_usec = c[SEC] % US
        c[SEC] //= US
        if r < 0 or (r := _tm_within_bounds(g, c)) < 0:
            c[MIN] += 1
            c[SEC], tm_usec = 0, 0
            continue
        if r == 0:
            continue
        # The negative-DST fix (systemd PR #36897, in Debian's 252.38): a match before the start (mktime
        # moved a gap's time back) is not taken; the walk goes on an hour later, keeping the tm_isdst
        # mktime gave instead of -1 from then on. Read from the machine's libsystemd-shared-252.so.
        if (c[Y], c[MON], c[MDAY], c[H], c[MIN], c[SEC], tm_usec) < (*tm[:6], usec):
            c[H] += 1
            invalidate_dst = True
            continue
        return c, tm_usec
    return None  # "Infinite loop in calendar calculation" (-EDEADLK): the timer gets no next elapse


def next_usec(spec, clock: ZoneClock, usec: int, offset: int | None = None) -> int | None:
    """``calendar_spec_next_usec(spec, usec)`` (calendarspec.c:1368-1393): the first elapse strictly after
    ``usec`` (UTC µs), or None (no elapse: ``-ENOENT`` or an error).

    ``offset`` is glibc's remembered ``mktime`` offset when the call starts
    (seconds, ``t - wall``); None takes the one a ``mktime`` of ``usec``'s
    own instant leaves, which is what the previous call of a timer that
    elapsed at ``usec`` left. The walk's first ``mktime`` is given the base's
    own ``tm_isdst`` (from ``localtime_r``), so the offset only matters where
    both passes of a repeated hour have the same ``isdst`` (a change of
    standard time).
    """
    g = local_time(clock)
    usec += 1
    t = usec // US
    g.offset = g.guess_for(t) if offset is None else offset
    tm = g.localtime(t)
    found = _find_next(g, spec, tm, usec % US)
    if found is None:
        return None
    c, tm_usec = found
    t = _mktime(g, c)
    if t < 0:
        return None
    return t * US + tm_usec
