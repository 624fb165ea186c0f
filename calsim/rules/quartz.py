"""Quartz cron expressions (``quartz:`` rules): parse Quartz's grammar, expand with numpy.

A rule string starting with ``quartz:`` is a Quartz ``CronTrigger`` expression,
so Vixie cron (:mod:`calsim.rules.cron`) stays strict. Semantics follow
Quartz 2.3's ``org.quartz.CronExpression`` (its Javadoc, ``storeExpressionVals``,
``checkNext``, ``addToSet`` and ``getTimeAfter``; read at
https://github.com/quartz-scheduler/quartz, ``quartz-core/src/main/java/org/quartz/CronExpression.java``):

* six or seven fields: ``second minute hour day-of-month month day-of-week
  [year]``; names and letters in any case;
* ``*``, values, ranges ``a-b``, lists, steps ``*/n``, ``a/n`` (``a`` to the
  field's maximum), ``a-b/n``; a range may wrap (``22-2`` hours, ``NOV-FEB``,
  ``FRI-MON``: ``addToSet`` adds the field's size to the end and takes the
  modulus), except in the year;
* months ``1..12`` or ``JAN..DEC``; weekdays ``1..7`` or ``SUN..SAT``
  (**1 = Sunday**, not cron's 0); years ``1970..2199``, omitted = every year;
* exactly one of day-of-month and day-of-week is ``?`` ("no specific value"):
  Quartz refuses both ("Support for specifying both a day-of-week AND a
  day-of-month parameter is not implemented") and neither, so the other
  field alone decides the day (no Vixie "or");
* day-of-month ``L`` (last day), ``L-n`` (n days before it, n <= 30),
  ``LW`` / ``L-nW`` (the weekday nearest to that day), ``nW`` (the weekday
  nearest to day n: a Saturday moves to Friday, a Sunday to Monday, never
  across the month's edge, so ``1W`` on a Saturday is Monday the 3rd and
  ``31W`` on a Sunday is Friday the 29th);
* day-of-week ``L`` alone is ``7`` (Saturday, as the Javadoc says), ``nL``
  the last weekday n of the month (``6L``, ``FRIL``), ``n#k`` the k-th
  (1..5; no run in a month without a fifth).

Where calsim differs from Quartz 2.3.2 (each pinned by a test against the
real ``CronExpression``: Debian's Quartz 2.3.2 jar, ``tests/rules/test_quartz_oracle.py``):

* a day-of-month list may mix days, ranges, ``L``, ``L-n``, ``LW``, ``L-nW``
  and ``nW``, each item standing for itself (``1,15,L``; ``2W,16``), as
  Quartz's main branch reads them since PR #1175 (2024, ``findSmallestDay``,
  ``nearestWeekdays``); Quartz 2.3 refuses ``L`` in a list and applies ``W``
  to the list's smallest day only (``2W,16`` is ``2W``, ``1,15W`` is ``1W``);
* ``nL`` and ``n#k`` must stand alone in the field: Quartz refuses ``L`` in a
  list, and with ``#`` in a list it uses only the smallest weekday
  (``daysOfWeek.first()``), which is never what was meant;
* a step of 0 is refused; Quartz reads ``*/0`` as ``*`` and ``a/0``,
  ``a-b/0`` as ``a``;
* a day the month lacks gives no run that month. ``nW`` past the month's
  end: Quartz's lenient ``Calendar`` reads April 31 as May 1 and, when that
  is a Saturday, fires ``31W`` on Friday April 30 if its search reaches April
  (after a March 31 run, or with month ``4``; ``29W 2`` on 2025-02-28), but
  skips the month when it jumps there from an earlier run (``29W`` after
  January 29 goes to "February 29", March 1). ``L-nW`` before the 1st
  (``L-28W`` in a 28-day February, ``L-30W`` in a 30-day month): Quartz reads
  the previous month's last day, fires on Monday the 1st when that day is a
  Sunday, and otherwise its ``getTimeAfter`` loops for ever once the search
  starts before that day. Plain days (``30`` in February) and ``L-n`` agree;
* omitted or ``*`` years run to 2199 (the Javadoc's range) and years outside
  1970..2199 are refused; Quartz's ``MAX_YEAR`` is the current year + 100, a
  hidden input, and it accepts any year (one past ``MAX_YEAR`` never fires);
* text Quartz's parser never reads is refused, not dropped: anything after a
  complete item (``5X``, ``MONDAY``, ``1?``, ``*X``, a step after a name as
  in ``JAN-MAR/2``, which Quartz reads as ``JAN-MAR``), empty list items
  (``1,,2``), steps above the field's size in ``a-b/n``, more than seven
  fields (Quartz 2.3 ignores the eighth on). ``/n`` is ``*/n``, as in Quartz.

Times are ``int64`` microseconds of *wall-clock* time with whole seconds;
resolving them (gaps, folds) is :mod:`calsim.resolution`'s job, unless the
schedule has ``gap="scheduler"``, ``fold="scheduler"`` (as
``presets.quartz()`` sets): then a rule Quartz reads as calsim does
(:attr:`QuartzCron.emulates`) fires as a ``CronTrigger`` walks it in its
``TimeZone`` (:meth:`QuartzCron.next_after`, a port of ``getTimeAfter`` in
:mod:`calsim.rules.quartz_walk`): a time in a gap is skipped, a repeated
time fires in its second pass only, an hour whose ``:00`` lies in a gap is
skipped whole.

>>> import numpy as np
>>> rule = QuartzCron.parse("quartz:0 0/15 9-17 ? * MON-FRI")
>>> lo, hi = np.array(["2026-03-06T16:50", "2026-03-09T09:20"], "datetime64[us]").astype(np.int64)
>>> rule.wall_times(lo, hi).astype("datetime64[us]").astype("datetime64[s]").astype(str).tolist()
['2026-03-06T17:00:00', '2026-03-06T17:15:00', '2026-03-06T17:30:00', '2026-03-06T17:45:00', \
'2026-03-09T09:00:00', '2026-03-09T09:15:00']
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import ClassVar, Literal, NamedTuple

import numpy as np

from ..errors import RuleError
from .kind import RuleKind
from .cron import MAX_TEXT
from ..tz.clock import ZoneClock
from ..times import US
from .days import Days, day_table_wall_times, memo
from .bounds import DayTable, quartz_bound
from .quartz_walk import MAX_YEAR, MIN_YEAR, QuartzSets, get_time_after, walk_sets

__all__ = ["QuartzCron", "PREFIX"]

PREFIX = "quartz:"
EMULATES = "quartz"  # the note suffix of rows whose DST Quartz's walk decides (dst_lost:quartz, dst_extra:quartz)
MONTHS = tuple("JAN FEB MAR APR MAY JUN JUL AUG SEP OCT NOV DEC".split())
WEEKDAYS = tuple("SUN MON TUE WED THU FRI SAT".split())
Dialect = Literal["quartz", "eventbridge"]


class _Field(NamedTuple):
    name: str
    lo: int
    hi: int
    names: tuple[str, ...]
    max_step: int  # CronExpression.checkIncrementRange; years: any
    forms: str


SECOND = _Field("second", 0, 59, (), 59, "0..59")
MINUTE = _Field("minute", 0, 59, (), 59, "0..59")
HOUR = _Field("hour", 0, 23, (), 23, "0..23")
DOM = _Field("day-of-month", 1, 31, (), 31, "1..31, ?, L, L-n, LW, L-nW or nW")
MONTH = _Field("month", 1, 12, MONTHS, 12, "1..12 or JAN..DEC")
DOW = _Field("day-of-week", 1, 7, WEEKDAYS, 7, "1..7 or SUN..SAT, ?, L, nL or n#k")
YEAR = _Field("year", MIN_YEAR, MAX_YEAR, (), MAX_YEAR, f"{MIN_YEAR}..{MAX_YEAR}")
_ITEM = re.compile(r"^(?P<a>[0-9A-Z]+)(?:-(?P<b>[0-9A-Z]+))?(?:/(?P<step>\w*))?$|^\*(?:/(?P<star>\w*))?$")


class _Bad(Exception):
    """A parse failure: turned into one RuleError naming the expression."""


def _number(f: _Field, s: str) -> int:
    """One number or name of field ``f``, in range."""
    if s in f.names:
        return f.names.index(s) + 1
    if s.isascii() and s.isdigit():
        n = int(s) if len(s) <= 9 else 10**9
        if f.lo <= n <= f.hi:
            return n
        raise _Bad(f"{f.name} value {s!r} is out of range (allowed {f.forms})")
    raise _Bad(f"{f.name} value {s!r} is not a number or name (allowed {f.forms})")


def _step(f: _Field, item: str, text: str | None) -> int:
    if not text or not (text.isascii() and text.isdigit()) or int(text[:10]) < 1:
        raise _Bad(f"{f.name} item {item!r} has step {text or ''!r} (allowed a whole number of 1 or more)")
    n = int(text) if len(text) <= 9 else 10**9
    if f is not YEAR and n > f.max_step:  # checkIncrementRange: "Increment > 60 : 61"
        raise _Bad(f"{f.name} item {item!r} has step {n} (allowed 1..{f.max_step})")
    return n


def _plain(f: _Field, item: str) -> set[int]:
    """``*``, ``*/n`` (or ``/n``), ``a``, ``a-b``, ``a/n``, ``a-b/n`` (ranges wrap, as ``addToSet`` does)."""
    m = _ITEM.match("*" + item if item.startswith("/") else item)  # storeExpressionVals L624-654: '/n' is '*/n'
    if m is None:
        raise _Bad(f"{f.name} item {item!r} is not a value, range or step (allowed {f.forms}, *, a-b, a/n)")
    if m.group("a") is None:  # '*' or '*/n'
        step = 1 if m.group("star") is None and "/" not in item else _step(f, item, m.group("star"))
        return set(range(f.lo, f.hi + 1, step))
    has_step = "/" in item
    if f.names and (m.group("a") in f.names or m.group("b") in f.names):
        # storeExpressionVals L532-596 reads a name or a name-name range and returns: what follows is never
        # read ('MAR/3' is MAR, 'MON-FRI/2' is MON-FRI), and a number after 'NAME-' or a name after 'n-' fails.
        if has_step:
            raise _Bad(f"{f.name} item {item!r} puts a step after a name, which Quartz ignores (allowed a name, "
                       f"a name range or numbers with a step, as in {f.lo}-{f.hi}/2)")
        if m.group("b") is not None and not (m.group("a") in f.names and m.group("b") in f.names):
            raise _Bad(f"{f.name} range {item!r} mixes a name and a number (allowed two names or two numbers)")
    start = _number(f, m.group("a"))
    step = _step(f, item, m.group("step")) if has_step else 1
    if m.group("b") is None:
        if not has_step:
            return {start}
        end = f.hi  # a/n: from a to the field's maximum ("7/6 in the month field only turns on month 7")
    else:
        end = _number(f, m.group("b"))
    if end >= start:
        return set(range(start, end + 1, step))
    if f is YEAR:  # addToSet: "Start year must be less than stop year"
        raise _Bad(f"year range {item!r} is reversed (allowed a-b with a <= b)")
    size = f.hi - f.lo + 1  # addToSet wraps: 22-2 hours, NOV-FEB, FRI-MON
    return {(v - f.lo) % size + f.lo for v in range(start, end + size + 1, step)}


def _field(f: _Field, raw: str) -> set[int]:
    out: set[int] = set()
    for item in raw.split(","):
        if not item:
            raise _Bad(f"{f.name} field {raw!r} has an empty item (allowed {f.forms})")
        if "?" in item:
            raise _Bad(f"{f.name} item {item!r}: '?' is allowed only as the whole day-of-month or day-of-week field")
        for letter, allowed in (("L", "day-of-month and day-of-week"), ("W", "day-of-month"),
                                ("#", "day-of-week")):
            if letter in item and not f.names and f not in (DOM, DOW):
                raise _Bad(f"{f.name} item {item!r} uses {letter!r}, allowed only in {allowed}")
        out |= _plain(f, item)
    return out


_DOM_LAST = re.compile(r"^L(?:-(\d+))?(W?)$")


def _dom(raw: str) -> tuple[frozenset[int], frozenset[int], frozenset[int], frozenset[int]]:
    """Days, ``L-n`` offsets, ``L-nW`` offsets and ``nW`` days of a day-of-month field."""
    days: set[int] = set()
    last: set[int] = set()
    last_w: set[int] = set()
    near: set[int] = set()
    for item in raw.split(","):
        m = _DOM_LAST.match(item)
        if m is not None:
            offset = int(m.group(1)[:3]) if m.group(1) else 0  # more than 2 digits is refused just below
            if m.group(1) is not None and (len(m.group(1)) > 2 or offset > 30):
                raise _Bad(f"day-of-month item {item!r} has offset {m.group(1)} (allowed L-0..L-30)")
            (last_w if m.group(2) else last).add(offset)
        elif item.endswith("W"):
            base = item[:-1]
            if not (base.isascii() and base.isdigit()):
                raise _Bad(f"day-of-month item {item!r}: 'W' follows one day (allowed nW, as in 15W, or LW)")
            near.add(_number(DOM, base))
        elif "L" in item or "#" in item:
            raise _Bad(f"day-of-month item {item!r} is not a value, range or step (allowed {DOM.forms})")
        else:
            days |= _field(DOM, item)
    return frozenset(days), frozenset(last), frozenset(last_w), frozenset(near)


def _dow(raw: str) -> tuple[frozenset[int], int, tuple[int, int] | None]:
    """Weekdays (1 = Sunday), the ``nL`` weekday (0: none) and the ``n#k`` pair of a day-of-week field."""
    special = "#" in raw or any(item.endswith("L") and item != "L" for item in raw.split(","))
    if special and "," in raw:
        # buildExpression L476-479 refuses 'L' in a list; with '#' it keeps only daysOfWeek.first() (L1420).
        raise _Bad(f"day-of-week field {raw!r} puts nL or n#k in a list (allowed one nL or n#k alone)")
    if "L" in raw and "," in raw:  # buildExpression L476-479: 'SAT,SUN,L' too
        raise _Bad(f"day-of-week field {raw!r} puts L in a list (allowed L alone, or SAT in a list)")
    if "#" in raw:
        base, _, nth = raw.partition("#")
        if not (nth.isascii() and nth.isdigit()) or not 1 <= int(nth[:2] or 0) <= 5 or len(nth) > 2:
            raise _Bad(f"day-of-week item {raw!r} has occurrence {nth!r} (allowed 1..5, as in 6#3)")
        return frozenset(), 0, (_number(DOW, base), int(nth))
    if special:
        return frozenset(), _number(DOW, raw[:-1]), None
    days = set()
    for item in raw.split(","):
        days |= {7} if item == "L" else _field(DOW, item)  # 'L' alone is 7, Saturday (the Javadoc)
    return frozenset(days), 0, None


def _error(text: str, what: str, dialect: Dialect) -> RuleError:
    shown = text if len(text) <= 80 else text[:77] + "..."
    return RuleError(f"{'quartz' if dialect == 'quartz' else 'eventbridge cron'}: {what} in {shown!r}")


@dataclass(frozen=True)
class QuartzCron(RuleKind):
    """A parsed Quartz cron expression; build it with :meth:`QuartzCron.parse`.

    Attributes: ``dialect`` (``"quartz"`` or ``"eventbridge"``), ``fields``
    (as written, upper-cased), ``seconds``, ``minutes``, ``hours``, ``months`` (sorted
    tuples); ``years`` (None: every year); ``by_dom`` (True: day-of-week is
    ``?``; False: day-of-month is); ``days`` (1..31), ``last_offsets``
    (``L`` is 0, ``L-3`` is 3), ``last_weekday_offsets`` (``LW``, ``L-nW``),
    ``nearest_weekday`` (``nW``); ``weekdays`` (1 = Sunday .. 7),
    ``last_of_weekday`` (``6L`` gives 6, 0 none), ``nth_weekday`` (``6#3``
    gives (6, 3)).
    """

    kind: ClassVar[str] = "quartz"
    text: str
    dialect: str
    fields: tuple[str, ...]
    seconds: tuple[int, ...]
    minutes: tuple[int, ...]
    hours: tuple[int, ...]
    months: tuple[int, ...]
    years: tuple[int, ...] | None
    by_dom: bool
    days: frozenset[int]
    last_offsets: frozenset[int]
    last_weekday_offsets: frozenset[int]
    nearest_weekday: frozenset[int]
    weekdays: frozenset[int]
    last_of_weekday: int
    nth_weekday: tuple[int, int] | None

    @classmethod
    def parse(cls, text: str, *, dialect: Dialect = "quartz") -> QuartzCron:
        """Parse a Quartz expression (with or without ``quartz:``), or an EventBridge ``cron(...)``.

        Parameters
        ----------
        text : str
            ``dialect="quartz"``: ``second minute hour day-of-month month
            day-of-week [year]``. ``dialect="eventbridge"``: ``cron(minute
            hour day-of-month month day-of-week year)`` (or the six fields
            alone), seconds 0, as EventBridge Scheduler's cron reference has it.
        dialect : {"quartz", "eventbridge"}

        Raises
        ------
        RuleError
            The field, the bad item and what is allowed, with the expression.
        """
        if not isinstance(text, str):
            raise RuleError(f"quartz: expected the expression as a str, got {type(text).__name__}")
        if len(text) > MAX_TEXT:  # as Cron.parse: listing every value of every field takes well under this
            raise RuleError(f"quartz: an expression of {len(text):,} characters is longer than {MAX_TEXT:,}")
        if dialect not in ("quartz", "eventbridge"):
            raise RuleError(f"quartz: dialect {dialect!r} is not one of 'quartz', 'eventbridge'")
        expr = text.strip()
        if dialect == "quartz" and expr[: len(PREFIX)].lower() == PREFIX:
            expr = expr[len(PREFIX):].strip()
        if dialect == "eventbridge" and expr[:5].lower() == "cron(":
            if not expr.endswith(")"):
                raise _error(text, "cron( has no closing ')' (allowed cron(minutes hours day-of-month month "
                                   "day-of-week year))", dialect)
            expr = expr[5:-1].strip()
        try:
            return cls._parse(expr, dialect)
        except _Bad as exc:
            raise _error(text, str(exc), dialect) from None

    @classmethod
    def _parse(cls, expr: str, dialect: Dialect) -> QuartzCron:
        parts = expr.upper().split()  # CronExpression upper-cases (Locale.US) and splits on spaces and tabs
        if dialect == "eventbridge":
            if len(parts) != 6:
                raise _Bad(f"expected 6 fields (minutes hours day-of-month month day-of-week year), got {len(parts)}")
            parts = ["0", *parts]
        elif len(parts) not in (6, 7):
            raise _Bad(f"expected 6 or 7 fields (second minute hour day-of-month month day-of-week [year]), "
                       f"got {len(parts)}")
        sec, minute, hour, dom, month, dow = parts[:6]
        year = parts[6] if len(parts) == 7 else "*"
        if (dom == "?") == (dow == "?"):
            # CronExpression.buildExpression: exactly one of the two day fields is '?'.
            raise _Bad(f"day-of-month {dom!r} and day-of-week {dow!r}: exactly one must be '?' "
                       "(Quartz does not combine them)")
        by_dom = dow == "?"
        days, last, last_w, near = _dom(dom) if by_dom else (frozenset(),) * 4
        weekdays, last_of, nth = _dow(dow) if not by_dom else (frozenset(), 0, None)
        years = None if year == "*" else tuple(sorted(_field(YEAR, year)))
        return cls(
            text=expr,
            dialect=dialect,
            fields=tuple(parts if dialect == "quartz" else parts[1:]),
            seconds=tuple(sorted(_field(SECOND, sec))),
            minutes=tuple(sorted(_field(MINUTE, minute))),
            hours=tuple(sorted(_field(HOUR, hour))),
            months=tuple(sorted(_field(MONTH, month))),
            years=years,
            by_dom=by_dom,
            days=days,
            last_offsets=last,
            last_weekday_offsets=last_w,
            nearest_weekday=near,
            weekdays=weekdays,
            last_of_weekday=last_of,
            nth_weekday=nth,
        )

    def quartz_text(self) -> str:
        """The expression as a ``quartz:`` rule string (an EventBridge cron gets seconds ``0``).

        >>> QuartzCron.parse("cron(0 12 ? * MON-FRI *)", dialect="eventbridge").quartz_text()
        'quartz:0 0 12 ? * MON-FRI *'
        """
        return PREFIX + " ".join(self._quartz_fields())

    def _quartz_fields(self) -> tuple[str, ...]:
        return ("0", *self.fields) if self.dialect == "eventbridge" else self.fields

    def times_of_day(self) -> np.ndarray:
        """Sorted offsets of the fire times from midnight (µs)."""
        return _tables(self)[0]

    def day_mask(self, f: Days) -> np.ndarray:
        """Which of the days ``f`` match the day, month and year fields."""
        _, months, years, dom_table, dow_table = _tables(self)
        year = 1970 + f.mabs(slice(None)) // 12
        # An omitted year is addToSet(ALL_SPEC) over 1970..MAX_YEAR (CronExpression L1054-1060): 2199 here.
        ok = months[f.month] & (year >= MIN_YEAR) & (year <= MAX_YEAR)
        if years is not None:
            ok = ok & years[np.clip(year - MIN_YEAR, 0, MAX_YEAR - MIN_YEAR)]
        dom = f.dom.astype(np.int64)
        mlen = f.mlen.astype(np.int64)
        wd = f.wd.astype(np.int64)  # 0 = Monday
        if self.by_dom:
            day_ok = dom_table[dom]
            for n in self.last_offsets:  # L, L-n: n days before the last day, none if before the 1st
                day_ok = day_ok | (dom == mlen - n)
            for target in [mlen - n for n in self.last_weekday_offsets] + [n for n in self.nearest_weekday]:
                day_ok = day_ok | _nearest_weekday(dom, mlen, wd, target)
        else:
            q = (wd + 1) % 7 + 1  # Quartz's Calendar.DAY_OF_WEEK: 1 = Sunday .. 7 = Saturday
            if self.last_of_weekday:  # getTimeAfter's lastDayOfWeek: the same weekday next week is in another month
                day_ok = (q == self.last_of_weekday) & (dom + 7 > mlen)
            elif self.nth_weekday is not None:  # nthDayOfWeek: week of month = ceil(day / 7)
                w, k = self.nth_weekday
                day_ok = (q == w) & ((dom + 6) // 7 == k)
            else:
                day_ok = dow_table[q]
        return ok & day_ok

    def bound(self) -> DayTable:
        """The bound of its wall times over a span, for :mod:`calsim.limits` (rule-kind protocol)."""
        return quartz_bound(self)

    def wall_times(self, lo: int, hi: int) -> np.ndarray:
        """Every wall-clock time in ``[lo, hi)`` (µs since 1970-01-01T00:00, no zone) the expression matches.

        Returns
        -------
        numpy.ndarray of int64
            Sorted wall-clock microseconds.
        """
        return day_table_wall_times(self, lo, hi)

    @property
    def emulates(self) -> str | None:
        """``"quartz"`` when Quartz 2.3.2's ``getTimeAfter`` reads this rule as calsim does, else None.

        A schedule with ``gap="scheduler"``, ``fold="scheduler"`` then fires
        it as a Quartz ``CronTrigger`` walks it (:meth:`next_after`, through
        :mod:`calsim.emulation`; the notes ``dst_lost:quartz`` and
        ``dst_extra:quartz`` mark where that is not the calendar's reading).
        None for an EventBridge rule and for the day-of-month forms listed
        under "Where calsim differs" above (lists with ``L`` or ``W``,
        ``29W``..``31W``, ``L-28W``..``L-30W``): see
        :func:`calsim.rules.quartz_walk.walk_sets`.

        >>> QuartzCron.parse("quartz:0 30 1 * * ?").emulates, QuartzCron.parse("quartz:0 0 12 1,L * ?").emulates
        ('quartz', None)
        """
        return EMULATES if _walk_sets(self) is not None else None

    def next_after(self, clock: ZoneClock, t: int) -> int | None:
        """``CronExpression.getTimeAfter(t)`` in ``clock``'s zone (UTC seconds in and out; None: never again).

        A port of Quartz 2.3.2's walk on a lenient ``GregorianCalendar``
        (:func:`calsim.rules.quartz_walk.get_time_after`): a wall time in a
        gap is read past it, a repeated one in its second pass, and an hour
        whose ``:00`` is in a gap is skipped whole. Raises ``RuleError`` for a
        rule Quartz does not read as calsim does (``emulates`` is None).

        >>> from calsim.tz.release import release
        >>> clock = ZoneClock(release("2025a").table("Pacific/Chatham"))
        >>> rule = QuartzCron.parse("quartz:0 50 3 * * ?")
        >>> t = rule.next_after(clock, 1790424000)  # 2026-09-26T12:00Z, before the 02:45 -> 03:45 change
        >>> clock.fields(t)[:5]  # 03:50 exists on the 27th, but its hour's 03:00 does not: the 28th
        (2026, 9, 28, 3, 50)
        """
        sets = _walk_sets(self)
        if sets is None:
            raise RuleError(f"quartz: {self.text!r} is not walked as Quartz 2.3.2's getTimeAfter: Quartz reads it "
                            "differently (see QuartzCron.emulates)")
        return get_time_after(sets, clock, t)

    def explain(self) -> str:
        """A short description, e.g. ``'quartz: at 02:30:00 on day-of-week MON-FRI'``."""
        sec, minute, hour, dom, month, dow = self._quartz_fields()[:6]
        n = len(self.seconds) * len(self.minutes) * len(self.hours)
        if n <= 4:
            text = "at " + ", ".join(f"{h:02d}:{m:02d}:{s:02d}" for h in self.hours for m in self.minutes
                                     for s in self.seconds)
        else:
            text = f"at second {sec} minute {minute} hour {hour}"
        text += f" on day-of-month {dom}" if self.by_dom else f" on day-of-week {dow}"
        if month != "*":
            text += f" in month {month}"
        return "quartz: " + text


def _nearest_weekday(dom: np.ndarray, mlen: np.ndarray, wd: np.ndarray, target: np.ndarray | int) -> np.ndarray:
    """Days that are the weekday nearest to day ``target`` of their month (Quartz's ``W``).

    getTimeAfter: a Saturday moves to Friday unless it is the 1st (then Monday
    the 3rd), a Sunday to Monday unless it is the last day (then Friday).
    """
    t_wd = (wd + target - dom) % 7  # weekday of the target day, 0 = Monday
    shift = np.where(t_wd == 5, np.where(target == 1, 2, -1), np.where(t_wd == 6, np.where(target == mlen, -2, 1), 0))
    return (dom == target + shift) & (target >= 1) & (target <= mlen)


@memo(maxsize=256)
def _walk_sets(rule: QuartzCron) -> QuartzSets | None:
    return walk_sets(rule)


@memo(maxsize=256)
def _tables(rule: QuartzCron) -> tuple:
    """Times of day (µs), month mask, year mask (None: all), day-of-month and day-of-week masks."""
    secs = np.array(rule.seconds, np.int64)
    base = (np.array(rule.hours, np.int64)[:, None] * 3600 + np.array(rule.minutes, np.int64) * 60).ravel()
    offsets = ((base[:, None] + secs).ravel() * US).astype(np.int64)
    months = np.zeros(13, bool)
    months[list(rule.months)] = True
    years = None
    if rule.years is not None:
        years = np.zeros(MAX_YEAR - MIN_YEAR + 1, bool)
        years[[y - MIN_YEAR for y in rule.years]] = True
    dom = np.zeros(32, bool)
    dom[list(rule.days)] = True
    dow = np.zeros(8, bool)
    dow[list(rule.weekdays)] = True
    out = (offsets, months, years, dom, dow)
    for a in out:
        if a is not None:
            a.setflags(write=False)  # shared through the cache
    return out
