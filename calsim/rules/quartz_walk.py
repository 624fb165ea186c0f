"""Quartz 2.3.2's ``CronExpression.getTimeAfter`` in a time zone, ported line by line: how a CronTrigger walks DST.

A Quartz ``CronTrigger`` asks ``CronExpression.getTimeAfter(previous fire
time)`` for each fire time (``CronTriggerImpl.getFireTimeAfter`` and
``triggered``). That method walks a lenient ``java.util.GregorianCalendar``
in the trigger's ``TimeZone``, *setting* wall-clock fields and reading them
back, so next to a DST transition it fires what the JDK's wall-to-instant
rule makes of the times it sets, not what a gap/fold policy would:

* every ``get`` after a ``set`` turns the wall fields into an instant
  (``GregorianCalendar.computeTime``: ``ZoneInfo.getOffsetsByWall``) and
  reads the fields of that instant back. ``getOffsetsByWall`` takes the
  offset of the last transition whose wall time *after* it is at or before
  the wall time (``ZoneInfo.getTransitionIndex`` with ``WALL_TIME``): a
  wall time in a gap gets the offset before the gap and lands past it (02:30
  on New York's spring day is 03:30 EDT), and a repeated wall time gets the
  offset after the transition, its **second** pass;
* ``getTimeAfter`` sets the second field on every round (L1206), so even a
  walk that starts inside a fold's first pass is read back into the second
  pass: Quartz never fires the first pass of a repeated hour (``0 30 1 * *
  ?`` in New York on 2026-11-01: 06:30Z only);
* a ``W`` rule (``15W``, ``LW``, ``L-nW``) whose weekday's time lies in a
  gap sends ``getTimeAfter`` round for ever (the hour test moves to the
  next day, the weekday test back): Quartz's thread never returns from it
  and the trigger never fires again; :func:`get_time_after` finds the cycle
  and gives None (``0 30 0 24W * ?`` in Cairo, whose 2026-04-24 00:00 ->
  01:00 change falls on that Friday);
* ``setCalendarHour`` (L1581-1586) sets ``hour + 1`` when the hour it set
  reads back as another, and the hour test then looks for the *next*
  matching hour: a gap hour's times are skipped (``0 30 2 * * ?`` on New
  York's spring day), and an hour whose ``:00`` lies in a gap is skipped
  whole even where its later minutes exist (Chatham's 02:45 -> 03:45
  change: ``0 50 3 * * ?`` has no 2026-09-27 03:50).

:func:`get_time_after` is ``getTimeAfter`` (``CronExpression.java`` of
2.3.2, L1170-1572, with ``setCalendarHour`` L1581-1586; every ``Lnnn`` below
is a line of that file) over :class:`_Calendar`, a port of the parts of
``GregorianCalendar`` it uses, on calsim's :class:`~calsim.tz.clock.ZoneClock`
(whole seconds: a trigger's fire times have no milliseconds). The tests
compare it with the real jar (``tests/oracles/quartz_jar.py``): fire chains
in and around every 2026 DST change of a dozen zones, and the JDK's
wall-to-instant rule itself.

Only rules that Quartz 2.3.2 reads as calsim does are walked
(:func:`walk_sets` gives None for the others; the ``quartz`` preset then
uses its fallback policies): calsim's documented grammar differences
(:mod:`calsim.rules.quartz`) would otherwise mix two calendars.

>>> from calsim.tz.release import release
>>> from calsim.tz.clock import ZoneClock
>>> from calsim.rules.quartz import QuartzCron
>>> clock = ZoneClock(release("2025a").table("America/New_York"))
>>> rule = QuartzCron.parse("quartz:0 30 1 * * ?")
>>> t = get_time_after(walk_sets(rule), clock, 1793491200)  # 2026-11-01T00:00Z
>>> t, clock.fields(t)[:5]  # 2026-11-01 01:30 EST, the second pass
(1793514600, (2026, 11, 1, 1, 30))
"""

from __future__ import annotations

import bisect
import weakref
from typing import NamedTuple

from ..tz.clock import ZoneClock, civil, wall_seconds

__all__ = ["get_time_after", "walk_sets", "java_wall_to_utc", "QuartzSets", "MIN_YEAR", "MAX_YEAR"]

# The years a Quartz expression may name (the Javadoc's 1970-2199; calsim.rules.quartz refuses others), and
# the last year an omitted year field runs to in calsim (Quartz 2.3.2: MAX_YEAR, the JVM's year + 100).
MIN_YEAR, MAX_YEAR = 1970, 2199

_SUNDAY, _SATURDAY = 1, 7  # java.util.Calendar.SUNDAY, SATURDAY
_JAVA_END_YEAR = 2999  # L1187: "prevent endless loop"


class QuartzSets(NamedTuple):
    """``CronExpression``'s fields as ``buildExpression`` leaves them (sorted tuples; 1 = Sunday, months 1..12).

    ``days_of_month`` is empty for ``L``/``L-n``/``LW``/``L-nW`` (``storeExpressionVals`` L655-680 sets only
    the flags); ``by_dom`` says which of the day fields is not ``?``.
    """

    seconds: tuple[int, ...]
    minutes: tuple[int, ...]
    hours: tuple[int, ...]
    days_of_month: tuple[int, ...]
    months: tuple[int, ...]
    days_of_week: tuple[int, ...]
    years: tuple[int, ...]
    by_dom: bool
    lastday_of_month: bool
    nearest_weekday: bool
    lastday_offset: int
    lastday_of_week: bool
    nthday_of_week: int
    max_year: int


def walk_sets(rule) -> QuartzSets | None:
    """How Quartz 2.3.2 reads ``rule`` (a :class:`~calsim.rules.quartz.QuartzCron`); None if calsim reads it otherwise.

    None for an EventBridge rule (not Quartz) and for the day-of-month forms
    calsim reads differently from 2.3.2 (the documented differences of
    :mod:`calsim.rules.quartz`): a list mixing days, ``L``, ``L-n``, ``LW``,
    ``L-nW`` or ``nW`` (2.3.2 refuses ``L`` in a list and applies ``W`` to
    the smallest day only), ``nW`` past day 28 and ``L-nW`` past ``L-27W``
    (2.3.2's lenient calendar reads a day the month lacks in the next or the
    previous month). An omitted year runs to calsim's 2199 (2.3.2's
    ``MAX_YEAR`` is the JVM's current year + 100, a documented difference).
    """
    if rule.dialect != "quartz":
        return None
    years = tuple(range(MIN_YEAR, MAX_YEAR + 1)) if rule.years is None else tuple(rule.years)
    last = lastday_w = nearest = False
    offset, days = 0, tuple(sorted(rule.days))
    if rule.by_dom:
        kinds = [bool(rule.days), bool(rule.last_offsets), bool(rule.last_weekday_offsets), bool(rule.nearest_weekday)]
        sizes = len(rule.last_offsets) + len(rule.last_weekday_offsets) + len(rule.nearest_weekday)
        if sum(kinds) != 1 or sizes > 1:
            return None
        if rule.last_offsets:
            last, offset = True, next(iter(rule.last_offsets))
        elif rule.last_weekday_offsets:
            last, lastday_w, offset = True, True, next(iter(rule.last_weekday_offsets))
            if offset > 27:
                return None
        elif rule.nearest_weekday:
            nearest, days = True, tuple(rule.nearest_weekday)
            if days[0] > 28:
                return None
    dow: tuple[int, ...] = tuple(sorted(rule.weekdays))
    if rule.last_of_weekday:
        dow = (rule.last_of_weekday,)
    elif rule.nth_weekday is not None:
        dow = (rule.nth_weekday[0],)
    return QuartzSets(seconds=tuple(rule.seconds), minutes=tuple(rule.minutes), hours=tuple(rule.hours),
                      days_of_month=days if rule.by_dom else (), months=tuple(rule.months),
                      days_of_week=() if rule.by_dom else dow, years=years, by_dom=rule.by_dom,
                      lastday_of_month=last, nearest_weekday=nearest or lastday_w, lastday_offset=offset,
                      lastday_of_week=bool(rule.last_of_weekday),
                      nthday_of_week=rule.nth_weekday[1] if rule.nth_weekday is not None else 0,
                      max_year=MAX_YEAR)


# -- the JDK's calendar ------------------------------------------------------------------------------------

_WALLS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def _wall_table(clock: ZoneClock) -> tuple[list[int], list[int], int]:
    """Each transition's wall time in the offset it starts (``getTransitionIndex(WALL_TIME)``'s keys), the offsets,
    and the wall time from which the table must first be extended (``ZoneClock.covering``)."""
    n = len(clock.table.utc)
    got = _WALLS.get(clock)
    if got is None or got[0] != n:
        utc = [int(t) for t in clock.table.utc]
        off = [int(o) for o in clock.table.offsets]
        got = (n, [u + off[i + 1] for i, u in enumerate(utc)], off, wall_seconds(clock.table.until_year, 1, 1))
        _WALLS[clock] = got
    return got[1], got[2], got[3]


def java_wall_to_utc(clock: ZoneClock, wall: int) -> int:
    """The instant a lenient ``GregorianCalendar`` gives wall-clock seconds ``wall`` (``computeTime``).

    ``ZoneInfo.getOffsetsByWall`` finds the last transition whose wall time
    in its new offset is at or before ``wall`` and takes that offset; before
    every transition, the first offset. So a wall time in a gap takes the
    offset before it (it lands past the gap by the gap's length), a wall
    time in a fold the offset after (the second pass). Past the JDK's table
    (``ZoneInfoFile`` builds it to 2037, then a ``SimpleTimeZone`` rule)
    ``getOffsets`` reads the same way; the tests check both on the JVM.
    """
    walls, off, limit = _wall_table(clock)
    if wall >= limit:
        clock.covering(civil(wall)[0] + 1)
        walls, off, limit = _wall_table(clock)
    return wall - off[bisect.bisect_right(walls, wall)]


class _Calendar:
    """The part of a lenient ``java.util.GregorianCalendar(zone)`` that ``getTimeAfter`` uses, in whole seconds.

    ``set`` stores a field as given (``month`` 0-based as in Java, any
    range); the next ``get`` normalises leniently (:func:`wall_seconds`: a
    month past 11 carries into the year, day 32 of a month is a day of the
    next, hour 24 the next midnight), turns the wall time into an instant
    (:func:`java_wall_to_utc`) and reads every field back from that instant,
    as ``Calendar.complete`` does. Only ``SECOND, MINUTE, HOUR_OF_DAY,
    DAY_OF_MONTH, MONTH, YEAR`` are ever set, so ``selectFields`` always
    picks these (a tie in stamps goes to ``DAY_OF_MONTH`` and ``HOUR_OF_DAY``).
    """

    __slots__ = ("clock", "utc", "year", "month", "day", "hour", "minute", "second", "dow", "dirty")

    def __init__(self, clock: ZoneClock, utc: int = 0):
        self.clock = clock
        self.set_time(utc)

    def set_time(self, utc: int) -> None:
        """``setTime`` / ``computeFields``: the fields of an instant."""
        self.utc = utc
        y, mo, d, h, mi, s, wd = self.clock.fields(utc)
        self.year, self.month, self.day, self.hour, self.minute, self.second = y, mo - 1, d, h, mi, s
        self.dow = wd + 1  # DAY_OF_WEEK: 1 = Sunday
        self.dirty = False

    def _complete(self) -> None:
        if self.dirty:
            wall = wall_seconds(self.year, self.month + 1, self.day, self.hour, self.minute, self.second)
            self.set_time(java_wall_to_utc(self.clock, wall))

    def set(self, field: str, value: int) -> None:
        setattr(self, field, value)
        self.dirty = True

    def get(self, field: str) -> int:
        self._complete()
        return getattr(self, field)

    def get_time(self) -> int:
        self._complete()
        return self.utc

    def add_year(self, amount: int) -> None:
        """``add(YEAR, amount)``: complete, add, then ``pinDayOfMonth`` (a day past the new month's end is its last)."""
        self._complete()
        self.set("year", self.year + amount)
        last = _last_day_of_month(self.month + 1, self.year)
        if self.day > last:
            self.set("day", last)


def _is_leap_year(year: int) -> bool:
    return (year % 4 == 0 and year % 100 != 0) or (year % 400 == 0)  # L1606-1608


def _last_day_of_month(month_num: int, year: int) -> int:
    """L1610-1641 ``getLastDayOfMonth`` (months 1..12 only: ``getTimeAfter`` never passes another)."""
    if month_num == 2:
        return 29 if _is_leap_year(year) else 28
    return 30 if month_num in (4, 6, 9, 11) else 31


def _ceiling(values: tuple[int, ...], x: int) -> int | None:
    """``tailSet(x)`` non-empty: its ``first()``; else None."""
    k = bisect.bisect_left(values, x)
    return values[k] if k < len(values) else None


def _set_calendar_hour(cal: _Calendar, hour: int) -> None:
    """L1581-1586: "Advance the calendar to the particular hour paying particular attention to daylight saving"."""
    cal.set("hour", hour)
    if cal.get("hour") != hour and hour != 24:
        cal.set("hour", hour + 1)


def _shift_to_weekday(day: int, dow: int, ldom: int) -> int:
    """L1293-1301 = L1329-1337: a Saturday moves back a day (forward two on the 1st), a Sunday forward a day
    (back two on the month's last day)."""
    if dow == _SATURDAY and day == 1:
        return day + 2
    if dow == _SATURDAY:
        return day - 1
    if dow == _SUNDAY and day == ldom:
        return day - 2
    if dow == _SUNDAY:
        return day + 1
    return day


def _weekday_time(clock: ZoneClock, year: int, mon: int, day: int, sec: int, minute: int,
                  hr: int) -> tuple[int, int]:
    """L1282-1308 (= L1318-1344): ``tcal``: the weekday nearest to ``day`` of month ``mon``, and its instant at
    ``hr:minute:sec``.

    ``Calendar.getInstance(getTimeZone())`` with every field below set: its
    own instant (now) never shows, and the milliseconds it keeps cannot turn
    a whole-second comparison (see :func:`get_time_after`).
    """
    tcal = _Calendar(clock)
    tcal.set("second", 0)
    tcal.set("minute", 0)
    tcal.set("hour", 0)
    tcal.set("day", day)
    tcal.set("month", mon - 1)
    tcal.set("year", year)
    ldom = _last_day_of_month(mon, year)
    day = _shift_to_weekday(day, tcal.get("dow"), ldom)
    tcal.set("second", sec)
    tcal.set("minute", minute)
    tcal.set("hour", hr)
    tcal.set("day", day)
    tcal.set("month", mon - 1)
    return day, tcal.get_time()


def get_time_after(q: QuartzSets, clock: ZoneClock, after_time: int) -> int | None:
    """L1170-1572 ``getTimeAfter``: the first fire time strictly after ``after_time`` (UTC seconds), or None.

    None also where Quartz's loop never ends (see the module docstring): a
    trigger whose ``getTimeAfter`` never returns never fires again.

    ``nTime.before(afterTime)`` (L1309, L1346) compares ``tcal``'s instant,
    which carries the milliseconds of the JVM's clock, with whole seconds:
    ``X s + ms < A s`` exactly when ``X < A``, so seconds decide it here.
    """
    clock.covering(civil(after_time)[0] + 1)
    cl = _Calendar(clock)
    after_time = after_time + 1  # L1177: "move ahead one second, since we're computing the time *after*"
    cl.set_time(after_time)  # L1179-1180 (milliseconds 0)
    seen: set[tuple] = set()
    while True:  # L1184
        # The loop's state at the top of a round is the calendar's (its fields as set, and whether a get
        # will normalise them): a state met twice means the walk goes round for ever, as it does in Quartz
        # when the weekday a W rule picks has its time in a gap (the hour test moves to the next day, the W
        # test back to that weekday). Quartz's thread never returns; the trigger never fires again.
        state = (cl.year, cl.month, cl.day, cl.hour, cl.minute, cl.second, cl.dirty)
        if state in seen:
            return None
        seen.add(state)
        if cl.get("year") > _JAVA_END_YEAR:  # L1187-1189
            return None

        sec = cl.get("second")  # L1194-1206: get second
        minute = cl.get("minute")
        st = _ceiling(q.seconds, sec)
        if st is not None:
            sec = st
        else:
            sec = q.seconds[0]
            minute += 1
            cl.set("minute", minute)
        cl.set("second", sec)

        minute = cl.get("minute")  # L1208-1227: get minute
        hr = cl.get("hour")
        t = -1
        st = _ceiling(q.minutes, minute)
        if st is not None:
            t = minute
            minute = st
        else:
            minute = q.minutes[0]
            hr += 1
        if minute != t:
            cl.set("second", 0)
            cl.set("minute", minute)
            _set_calendar_hour(cl, hr)
            continue
        cl.set("minute", minute)

        hr = cl.get("hour")  # L1229-1249: get hour
        day = cl.get("day")
        t = -1
        st = _ceiling(q.hours, hr)
        if st is not None:
            t = hr
            hr = st
        else:
            hr = q.hours[0]
            day += 1
        if hr != t:
            cl.set("second", 0)
            cl.set("minute", 0)
            cl.set("day", day)
            _set_calendar_hour(cl, hr)
            continue
        cl.set("hour", hr)

        day = cl.get("day")  # L1251-1256
        mon = cl.get("month") + 1
        t = -1
        tmon = mon

        if q.by_dom:  # L1261: get day by day of month rule
            st = _ceiling(q.days_of_month, day)
            if q.lastday_of_month:  # L1263
                if not q.nearest_weekday:  # L1264-1276: L, L-n
                    t = day
                    day = _last_day_of_month(mon, cl.get("year")) - q.lastday_offset
                    if t > day:
                        mon += 1
                        if mon > 12:
                            mon = 1
                            tmon = 3333  # "ensure test of mon != tmon further below fails"
                            cl.add_year(1)
                        day = 1
                else:  # L1277-1313: LW, L-nW
                    t = day
                    day = _last_day_of_month(mon, cl.get("year")) - q.lastday_offset
                    day, n_time = _weekday_time(clock, cl.get("year"), mon, day, sec, minute, hr)
                    if n_time < after_time:  # L1309 nTime.before(afterTime)
                        day = 1
                        mon += 1
            elif q.nearest_weekday:  # L1314-1349: nW
                t = day
                day, n_time = _weekday_time(clock, cl.get("year"), mon, q.days_of_month[0], sec, minute, hr)
                if n_time < after_time:  # L1346
                    day = q.days_of_month[0]
                    mon += 1
            elif st is not None:  # L1350-1358
                t = day
                day = st
                # "make sure we don't over-run a short month, such as february"
                if day > _last_day_of_month(mon, cl.get("year")):
                    day = q.days_of_month[0]
                    mon += 1
            else:  # L1359-1362
                day = q.days_of_month[0]
                mon += 1

            if day != t or mon != tmon:  # L1364-1373
                cl.set("second", 0)
                cl.set("minute", 0)
                cl.set("hour", 0)
                cl.set("day", day)
                cl.set("month", mon - 1)
                continue
        else:  # L1374: get day by day of week rule
            dow = q.days_of_week[0]  # desired d-o-w
            if q.lastday_of_week:  # L1375-1417: nL
                c_dow = cl.get("dow")  # current d-o-w
                days_to_add = 0
                if c_dow < dow:
                    days_to_add = dow - c_dow
                if c_dow > dow:
                    days_to_add = dow + (7 - c_dow)
                l_day = _last_day_of_month(mon, cl.get("year"))
                if day + days_to_add > l_day:  # "did we already miss the last one?"
                    cl.set("second", 0)
                    cl.set("minute", 0)
                    cl.set("hour", 0)
                    cl.set("day", 1)
                    cl.set("month", mon)  # "no '- 1' here because we are promoting the month"
                    continue
                while day + days_to_add + 7 <= l_day:  # "find date of last occurrence of this day in this month"
                    days_to_add += 7
                day += days_to_add
                if days_to_add > 0:
                    cl.set("second", 0)
                    cl.set("minute", 0)
                    cl.set("hour", 0)
                    cl.set("day", day)
                    cl.set("month", mon - 1)
                    continue
            elif q.nthday_of_week != 0:  # L1418-1461: n#k
                c_dow = cl.get("dow")
                days_to_add = 0
                if c_dow < dow:
                    days_to_add = dow - c_dow
                elif c_dow > dow:
                    days_to_add = dow + (7 - c_dow)
                day_shifted = days_to_add > 0
                day += days_to_add
                week_of_month = day // 7
                if day % 7 > 0:
                    week_of_month += 1
                days_to_add = (q.nthday_of_week - week_of_month) * 7
                day += days_to_add
                if days_to_add < 0 or day > _last_day_of_month(mon, cl.get("year")):
                    cl.set("second", 0)
                    cl.set("minute", 0)
                    cl.set("hour", 0)
                    cl.set("day", 1)
                    cl.set("month", mon)  # promoting the month
                    continue
                if days_to_add > 0 or day_shifted:
                    cl.set("second", 0)
                    cl.set("minute", 0)
                    cl.set("hour", 0)
                    cl.set("day", day)
                    cl.set("month", mon - 1)  # "'- 1' here because we are NOT promoting the month"
                    continue
            else:  # L1462-1500: a set of weekdays
                c_dow = cl.get("dow")
                st = _ceiling(q.days_of_week, c_dow)
                if st is not None:
                    dow = st
                days_to_add = 0
                if c_dow < dow:
                    days_to_add = dow - c_dow
                if c_dow > dow:
                    days_to_add = dow + (7 - c_dow)
                l_day = _last_day_of_month(mon, cl.get("year"))
                if day + days_to_add > l_day:  # "will we pass the end of the month?"
                    cl.set("second", 0)
                    cl.set("minute", 0)
                    cl.set("hour", 0)
                    cl.set("day", 1)
                    cl.set("month", mon)  # promoting the month
                    continue
                if days_to_add > 0:  # "are we swithing days?"
                    cl.set("second", 0)
                    cl.set("minute", 0)
                    cl.set("hour", 0)
                    cl.set("day", day + days_to_add)
                    cl.set("month", mon - 1)
                    continue
        cl.set("day", day)  # L1505

        mon = cl.get("month") + 1  # L1507-1517
        year = cl.get("year")
        t = -1
        if year > q.max_year:  # "test for expressions that never generate a valid fire date"
            return None

        st = _ceiling(q.months, mon)  # L1519-1541: get month
        if st is not None:
            t = mon
            mon = st
        else:
            mon = q.months[0]
            year += 1
        if mon != t:
            cl.set("second", 0)
            cl.set("minute", 0)
            cl.set("hour", 0)
            cl.set("day", 1)
            cl.set("month", mon - 1)
            cl.set("year", year)
            continue
        cl.set("month", mon - 1)

        year = cl.get("year")  # L1543-1566: get year
        t = -1
        st = _ceiling(q.years, year)
        if st is None:
            return None  # "ran out of years..."
        t, year = year, st
        if year != t:
            cl.set("second", 0)
            cl.set("minute", 0)
            cl.set("hour", 0)
            cl.set("day", 1)
            cl.set("month", 0)
            cl.set("year", year)
            continue
        cl.set("year", year)
        return cl.get_time()  # L1568-1571

