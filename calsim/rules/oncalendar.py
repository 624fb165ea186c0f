"""systemd calendar expressions (``OnCalendar=``): parse systemd.time(7), expand with numpy.

The grammar and its checks are ported from systemd's ``src/shared/calendarspec.c``
(``calendar_spec_from_string``, ``calendar_spec_normalize``, ``chain_valid``;
read at https://github.com/systemd/systemd-stable), so an expression systemd
refuses is refused here and :meth:`OnCalendar.normalized` prints what
``systemd-analyze calendar`` prints as "Normalized form":

* ``[weekdays] [[year-]month-day] [hour:minute[:second]] [zone]``;
* weekdays ``Mon``..``Sun`` or full names, any case, lists ``Sat,Sun`` and
  ranges ``Mon..Fri`` (also ``Mon-Fri``); weekdays and the date must *both*
  match (unlike cron's day-of-month/day-of-week "or");
* every other part is ``*`` or a list of values, ranges ``a..b`` and
  repetitions ``a/r``, ``a..b/r``; seconds may have six decimals
  (``*:*:0/0.5``); a two-digit year is 19xx (70..99) or 20xx (00..69);
* ``~`` before the day counts from the month's end: ``*-02~03`` is the third
  last day of February, ``Mon *-05~07/1`` the last Monday of May;
* a missing date is ``*-*-*``, a missing time ``00:00:00``, missing seconds
  ``00``; ``@<epoch>`` is one instant (UTC);
* shorthands ``minutely``, ``hourly``, ``daily``, ``weekly``, ``monthly``,
  ``yearly``/``annually``, ``quarterly``, ``semiannually`` (and systemd's
  spellings ``anually``, ``biannually``, ``bi-annually``, ``semi-annually``);
* a trailing ``UTC`` or IANA zone name (``Europe/Berlin``): the wall times
  are read in that zone, which overrides the schedule's (``zone``).

Times are ``int64`` microseconds of *wall-clock* time, as for the other rule
kinds; resolving them (gaps, folds) is :mod:`calsim.resolution`'s job, or,
with ``gap="scheduler"``, ``fold="scheduler"`` (what ``presets.systemd()``
sets), systemd's own walk: :meth:`OnCalendar.next_after` is a port of
``calendar_spec_next_usec()`` over glibc's ``mktime`` (:mod:`calsim.rules.calendarspec`),
and :mod:`calsim.emulation` runs it near each transition. What that walk
does across DST (measured against ``systemd-analyze calendar`` 252.38 by
``tests/rules/test_calendarspec.py``):

* a wall time that does not exist is skipped, and a repeated one fires in
  the pass the walk is in: the first for a timer running throughout;
* where glibc moves a gap's time *backward* (the zone's winter is
  "negative DST", ``isdst = 1``: Europe/Dublin, Morocco), the walk refuses
  it and goes on with the next day (or hour, for a minute in the gap):
  ``*-*-* 1..3:30`` loses 02:30 and 03:30 IST on Dublin's spring day;
* an hour whose start is in a gap is searched from the next whole hour, so
  a time after the gap in that hour is lost: Chatham's 02:45 -> 03:45
  change loses ``*-*-* 3:50``;
* ``~`` (days from the month's end) looks at the month's last days with
  ``mktime``, which can leave glibc on the offset after a fall-back: the
  walk then reads the repeated hour in its second pass;
* a repetition run past its unit makes the walk read the clock ahead of its
  next elapse (:attr:`OnCalendar.walk_lookahead`) and carry that time's
  ``tm_isdst`` on: across a change the walk can fail (``*-*-* 0/14:00`` in
  New York on 2026-03-08), and the timer stops.

Away from DST changes too the walk is not the calendar: a repetition that
carries over two units (``*:07/25,52``: minute 82 after 23:57 is the next
day's 00:22) resets only the unit below the highest one that changed, so
00:07 never elapses; :meth:`OnCalendar.wall_times` leaves such times out,
as ``systemd-analyze calendar`` does.

Where calsim differs from systemd (each stated in the message or a test):

* a local zone *abbreviation* as the trailing word (``EST`` when ``TZ`` is
  New York: systemd then forces ``tm_isdst``) is read as the IANA zone of that
  name when tzdata has one (``EST``, ``CET``), and refused otherwise;
* years run 1970..2199 (systemd's ``MIN_YEAR``/``MAX_YEAR``) for ``*`` too;
* more than 1,000,000 elapses a day (``*:*:0/0.00001``) is refused.

>>> import numpy as np
>>> rule = OnCalendar.parse("Mon..Fri *-*-* 8..17/3:00")
>>> rule.normalized()
'Mon..Fri *-*-* 08..17/3:00:00'
>>> lo, hi = np.array(["2026-03-06", "2026-03-10"], "datetime64[us]").astype(np.int64)
>>> rule.wall_times(lo, hi).astype("datetime64[us]").astype(str).tolist()[:5]
['2026-03-06T08:00:00.000000', '2026-03-06T11:00:00.000000', '2026-03-06T14:00:00.000000', \
'2026-03-06T17:00:00.000000', '2026-03-09T08:00:00.000000']
"""

from __future__ import annotations

from typing import ClassVar

from dataclasses import dataclass

import numpy as np

from ..errors import RuleError
from .kind import RuleKind
from ..times import US
from .days import Days, day_table_wall_times, memo
from .calendarspec import next_usec
from .bounds import DayTable, oncalendar_bound
from .oncalendar_grammar import (ALL_WEEKDAYS, MAX_YEAR, MIN_YEAR, PREFIX, Bad, Chain, error,
                                 format_chain, format_weekdays, parse)

__all__ = ["OnCalendar", "PREFIX"]

EMULATES = "systemd"  # the note suffix of rows whose DST the walk decides (dst_lost:systemd)


@dataclass(frozen=True)
class OnCalendar(RuleKind):
    """A parsed systemd calendar expression; build it with :meth:`OnCalendar.parse`.

    Attributes hold systemd's normalised chains of ``(start, stop, repeat)``
    (``stop`` -1: none; ``repeat`` 0: a single value; ``None``: ``*``):
    ``years``, ``months``, ``days`` (counted from the month's end when
    ``end_of_month``), ``hours``, ``minutes``, ``seconds`` (µs), the weekday
    bits (Mon = 1 .. Sun = 64, -1 any) and ``zone`` (a trailing zone, or
    None: the schedule's).
    """

    kind: ClassVar[str] = "oncalendar"
    text: str
    weekday_bits: int
    years: Chain
    months: Chain
    days: Chain
    end_of_month: bool
    hours: Chain
    minutes: Chain
    seconds: Chain
    zone: str | None

    @classmethod
    def parse(cls, text: str) -> OnCalendar:
        """Parse an expression, with or without the ``OnCalendar=`` prefix.

        Raises
        ------
        RuleError
            What systemd refuses (``systemd-analyze calendar`` says "Invalid
            argument"), with the part and the token named; a zone name that
            tzdata lacks.
        """
        if not isinstance(text, str):
            raise RuleError(f"OnCalendar: expected the expression as a str, got {type(text).__name__}")
        expr = text.strip()
        if expr.startswith(PREFIX):
            expr = expr[len(PREFIX):].strip()
        if not expr:
            raise error(text, "empty expression (allowed e.g. 'daily', 'Mon..Fri *-*-* 09:00')")
        try:
            return cls(expr, *parse(expr))
        except Bad as exc:
            raise error(expr, str(exc)) from None

    def normalized(self) -> str:
        """systemd's normalized form (``calendar_spec_to_string``), as ``systemd-analyze calendar`` prints it."""
        out = []
        if 0 < self.weekday_bits < ALL_WEEKDAYS:
            out.append(format_weekdays(self.weekday_bits) + " ")
        out.append(format_chain(self.years, 4, False) + "-" + format_chain(self.months, 2, False))
        out.append(("~" if self.end_of_month else "-") + format_chain(self.days, 2, False) + " ")
        out.append(format_chain(self.hours, 2, False) + ":" + format_chain(self.minutes, 2, False) + ":")
        out.append(format_chain(self.seconds, 2, True))
        if self.zone is not None:
            out.append(" " + self.zone)
        return "".join(out)

    def explain(self) -> str:
        """The expression in systemd's normalized form, e.g. ``'OnCalendar=*-*-* 00:00:00'``."""
        return PREFIX + self.normalized()

    def times_of_day(self) -> np.ndarray:
        """Sorted offsets of the elapses from midnight (µs)."""
        return _tables(self)[4]

    def day_mask(self, f: Days) -> np.ndarray:
        """Which of the days ``f`` match the year, month, day and weekday parts."""
        years, months, dom, eom, _ = _tables(self)
        year = 1970 + f.mabs(slice(None)) // 12
        inside = (year >= MIN_YEAR) & (year <= MAX_YEAR)
        ok = inside & years[np.clip(year - MIN_YEAR, 0, MAX_YEAR - MIN_YEAR)]
        ok &= months[f.month]
        if self.end_of_month:
            ok &= eom[f.mlen.astype(np.int64) - 28, f.dom]
        else:
            ok &= dom[f.dom]
        if 0 < self.weekday_bits < ALL_WEEKDAYS:
            ok &= ((self.weekday_bits >> f.wd.astype(np.int64)) & 1).astype(bool)
        return ok

    @property
    def emulates(self) -> str | None:
        """``"systemd"``: :meth:`next_after` walks as systemd does (:mod:`calsim.emulation`); None for a rule
        with sub-second elapses (the walk counts whole seconds), which the preset resolves with its fallback."""
        whole = self.seconds is None or all(a % US == 0 and (b < 0 or b % US == 0) and r % US == 0
                                            for a, b, r in self.seconds)
        return EMULATES if whole else None

    @property
    def walk_lookahead(self) -> int:
        """How far (seconds) past the next elapse systemd's walk may read the clock: an upper bound.

        ``find_matching_component`` may pick a value past its unit (``0/14``
        hours gives 28, ``1/5`` months 16, day 31 in a 30-day month) and
        ``tm_within_bounds`` has ``mktime`` normalise it: a probe up to one
        repetition past the unit's end, whose ``tm_isdst`` the walk then
        carries on with; ``~`` reads the month's last days. A DST change
        between the next elapse and such a probe can change the walk's answer
        (``*-1/5-01 00:00`` in Europe/Berlin: from 2026-11-01 the probe of
        2027-04-01, in CEST, makes 2027-01-01 00:00 normalise back and the
        walk fail), so a caller that skips the walk where no change is near
        must look this far past the next elapse too.
        """
        ahead = 0
        for chain, unit in ((self.seconds, 1), (self.minutes, 60), (self.hours, 3600), (self.days, 86400),
                            (self.months, 31 * 86400)):
            for _start, stop, repeat in chain or ():
                if repeat > 0 and stop < 0:
                    ahead = max(ahead, -(-repeat // US) if unit == 1 else repeat * unit)
        if self.end_of_month or any(start > 28 or stop > 28 for start, stop, _ in (self.days or ())
                                    if not self.end_of_month):
            ahead = max(ahead, 31 * 86400)
        return ahead

    def next_after(self, clock, t: int) -> int | None:
        """systemd's next elapse strictly after ``t`` (UTC seconds) in ``clock``'s zone, or None.

        ``calendar_spec_next_usec()`` as ported in :mod:`calsim.rules.calendarspec`.

        >>> from calsim.tz.clock import ZoneClock
        >>> from calsim.tz.release import release
        >>> clock = ZoneClock(release("2026f").table("America/New_York"))
        >>> clock.fields(OnCalendar.parse("*-*-* 02:30").next_after(clock, 1772900000))[:5]  # not 03-08
        (2026, 3, 9, 2, 30)
        """
        got = next_usec(self, clock, int(t) * US)
        return None if got is None else -(-got // US)

    def bound(self) -> DayTable:
        """The bound of its wall times over a span, for :mod:`calsim.limits` (rule-kind protocol)."""
        return oncalendar_bound(self)

    def wall_times(self, lo: int, hi: int) -> np.ndarray:
        """Every wall-clock time in ``[lo, hi)`` (µs since 1970-01-01T00:00, no zone) systemd elapses at.

        That is every time the expression matches, less those systemd 252's
        walk steps over at a rollover (``*:07/25,52`` never elapses at 00:07:
        see :data:`_ROLLOVER_UNITS`): what ``systemd-analyze calendar`` gives
        in a zone without DST changes.

        Returns
        -------
        numpy.ndarray of int64
            Sorted wall-clock microseconds.
        """
        span = _rollovers(self)[1]
        if not span:
            return day_table_wall_times(self, lo, hi)
        times = day_table_wall_times(self, lo - span, hi)
        times = times[_rollover_skips(self, times)]
        return times[np.searchsorted(times, lo):]


# A chain whose repetition runs past its unit's end (minutes 7/25 give 82) has find_matching_component()
# pick that value; tm_within_bounds() then has mktime() carry it into the next unit, and when the carry
# reaches two units up (23:82 is the next *day* 00:22) it resets only the unit right below the highest one
# that changed (the hour), so the walk goes on from 00:22 and 00:07 is never elapsed (calendarspec.c:1183-1225;
# systemd PR #40266 of 2026 starts fixing it, after 252). Per unit: (attribute, its size, the rollover two units
# up where a carry can skip, how far before that rollover the elapse the walk starts from can lie).
_ROLLOVER_UNITS = (("seconds", 60 * US, "h", 60 * US), ("minutes", 60, "D", 3600 * US),
                   ("hours", 24, "M", 86400 * US), ("days", 31, "Y", 31 * 86400 * US))


def _rollovers(rule: OnCalendar) -> tuple[frozenset, int]:
    """The rollovers at which the walk can step over a time ("h", "D", "M", "Y") and the span before them (µs).

    Only an unbounded repetition (``a/r``) runs past its unit, and only one
    landing past the unit's first value after the carry skips a time.
    """
    kinds, span = set(), 0
    for name, size, kind, before in _ROLLOVER_UNITS:
        for start, stop, repeat in getattr(rule, name) or ():
            if repeat <= 0 or stop >= 0:
                continue
            low = 1 if name == "days" else 0
            first_past = start + repeat * -(-(size - start) // repeat) if start < size else start
            if (name == "days" and rule.end_of_month) or first_past - size + low > low:
                kinds.add(kind)
                span = max(span, before)
    return frozenset(kinds), span


def _rollover_starts(kinds: frozenset, lo: int, hi: int) -> np.ndarray:
    """The starts (wall µs) in ``(lo, hi]`` of the hours, days, months or years named by ``kinds``."""
    parts = []
    for kind in kinds:
        if kind in ("h", "D"):
            step = (3600 if kind == "h" else 86400) * US
            parts.append(np.arange(-(-(lo + 1) // step) * step, hi + 1, step, dtype=np.int64))
        else:
            a = np.datetime64(int(lo), "us").astype(f"datetime64[{kind}]") + 1
            z = np.datetime64(int(hi), "us").astype(f"datetime64[{kind}]") + 1
            parts.append(np.arange(a, z).astype("datetime64[us]").astype(np.int64))
    return np.unique(np.concatenate(parts)) if parts else np.zeros(0, np.int64)


def _rollover_skips(rule: OnCalendar, times: np.ndarray) -> np.ndarray:
    """Which of the matching ``times`` (sorted wall µs) systemd's walk elapses at (a mask).

    The walk steps over times only right after a rollover (:data:`_ROLLOVER_UNITS`),
    from the last elapse before it: the port (:mod:`calsim.rules.calendarspec`,
    on a clock without DST) is asked from there, and the times it steps over
    are dropped. One port call per rollover that has an elapse just before it.
    """
    from ..tz.clock import ZoneClock
    from ..tz.release import release

    kinds, span = _rollovers(rule)
    keep = np.ones(len(times), bool)
    if len(times) < 2:
        return keep
    clock = ZoneClock(release().table("UTC"))
    last_q = None
    for b in _rollover_starts(kinds, int(times[0]), int(times[-1])).tolist():
        k = int(np.searchsorted(times, b)) - 1
        while k >= 0 and not keep[k]:
            k -= 1
        if k < 0 or b - int(times[k]) > span or (last_q is not None and b < last_q):
            continue
        q = next_usec(rule, clock, int(times[k]))
        if q is None:
            continue
        last_q = q
        keep[k + 1:int(np.searchsorted(times, q))] = False
    return keep


def _values(chain: Chain, size: int) -> np.ndarray:
    """The values ``0 <= v < size`` of a (non end-of-month) chain, sorted."""
    if chain is None:
        return np.arange(size, dtype=np.int64)
    parts = []
    for start, stop, repeat in chain:
        if repeat == 0:
            parts.append(np.array([start], np.int64))
        else:
            end = stop if stop >= 0 else size - 1
            parts.append(np.arange(start, min(end, size - 1) + 1, repeat, dtype=np.int64))
    vals = np.unique(np.concatenate(parts))
    return vals[vals < size]


def _mask(chain: Chain, size: int, base: int = 0) -> np.ndarray:
    m = np.zeros(size, dtype=bool)
    v = _values(chain, base + size) - base
    m[v[v >= 0]] = True
    return m


@memo(maxsize=256)
def _tables(rule: OnCalendar) -> tuple[np.ndarray, ...]:
    """Year, month, day-of-month, end-of-month (by month length 28..31) masks and the times of day."""
    years = _mask(rule.years, MAX_YEAR - MIN_YEAR + 1, MIN_YEAR)
    months = _mask(rule.months, 13)
    dom = _mask(rule.days, 32)
    dom[0] = False
    eom = np.zeros((4, 32), dtype=bool)
    if rule.end_of_month and rule.days is not None:
        for k, ldom in enumerate(range(28, 32)):
            # calendarspec.c find_matching_component: ~n is day ldom - n + 1; a range
            # ~a..b is days ldom-b+1 .. ldom-a+1, repeated forward from its first day.
            for start, stop, repeat in rule.days:
                a = ldom - start + 1
                if stop >= 0:
                    a, b = ldom - stop + 1, a
                else:
                    b = ldom
                days = [a] if repeat == 0 else list(range(a, b + 1, repeat))
                eom[k, [d for d in days if 1 <= d <= ldom]] = True
    hours = _values(rule.hours, 24)
    minutes = _values(rule.minutes, 60)
    secs = _values(rule.seconds, 60 * US)
    offsets = ((hours[:, None] * 3600 + minutes * 60) * US).ravel()
    offsets = np.unique((offsets[:, None] + secs).ravel())
    out = (years, months, dom, eom, offsets)
    for table in out:
        table.setflags(write=False)  # shared through the cache
    return out


