"""APScheduler 3.x ``CronTrigger`` rules (``apscheduler:`` rules): its fields and the walk a running scheduler makes.

APScheduler 3.x computes every fire time of a job with
``CronTrigger.get_next_fire_time(previous_fire_time, now)``. Its fields and
expressions, and that walk, are ported here from the 3.11.3 wheel
(``apscheduler/triggers/cron/__init__.py``, ``fields.py``,
``expressions.py`` and the ``datetime_ceil``/``datetime_utc_add`` helpers of
``util.py``), on the zone's clock as CPython's ``zoneinfo`` reads it; the
tests compare it with the installed APScheduler (``tests/presets/test_presets.py``).

**Text** (``apscheduler:`` then one trigger, or several joined by ``|``,
which fire as an ``OrTrigger`` of them):

* five crontab fields ``minute hour day month day_of_week``, read as
  ``CronTrigger.from_crontab`` reads them: **day-of-week 0 is Monday** (3.x;
  its docstring calls it "a historical mistake"), and every field must
  match (no Vixie "either day field");
* or ``CronTrigger`` keyword arguments ``name=value`` (``year``, ``month``,
  ``day``, ``week``, ``day_of_week``, ``hour``, ``minute``, ``second``),
  a value with spaces quoted (``day='last fri'``). As in ``CronTrigger()``,
  a field left out before the last one given is ``*`` and one after it is
  its minimum (``hour=2`` is 02:00:00).

Expressions as APScheduler compiles them (``*``, ``*/n``, ``a``, ``a-b``,
``a-b/n``, ``a/n``; month names ``jan``..``dec``; weekday names
``mon``..``sun`` and ranges of them; in ``day``: ``last``, ``1st``..``5th``
or ``last`` + a weekday name), with APScheduler's refusals and its leniency
(``mon-fri/2`` is ``mon-fri``: its name pattern is not anchored at the end).

**DST** (:meth:`ApschedulerCron.next_after`, for a schedule with
``gap="scheduler"``, ``fold="scheduler"``, as the ``apscheduler`` preset
sets): the walk reads and sets wall-clock fields of aware datetimes. Setting
a field builds ``datetime(..., fold=<the old fold>)`` without normalising it,
so a wall time in a gap comes back as it is and fires at its instant with
the offset before the gap (02:30 on New York's spring day runs at 03:30
EDT); incrementing a field adds the wall-clock difference in UTC. So next
to a transition it fires as no one gap/fold policy does: a daily time
whose day starts in a gap is skipped (``hour=0`` in Beirut, Cairo,
Santiago, Havana: the day is reached by incrementing it in UTC, which lands
on 01:00, past the hour), as is a gap time an every-hour rule counts into;
a set hour fires once, shifted, however many of its minutes the gap holds
(``hour=3, minute='*/30'`` in Helsinki: 03:00 shifted, 03:30 not run); the
second pass of Chatham's 45-minute fold is never run (the walk sets the
minute past it). Away from transitions it fires every matching wall time.

**prev and now.** A running scheduler calls ``get_next_fire_time(F, now)``
with ``F`` its last fire time and ``now`` its clock when it processes it
(``Job._get_run_times``, ``BaseScheduler._process_jobs``), later than ``F``:
the walk starts at ``F`` + 1 µs, rounded up to ``F`` + 1 s. That is
:meth:`~ApschedulerCron.next_after`. A scheduler woken exactly at ``F``
(``now == F`` to the microsecond: a fake clock) starts from ``now`` instead
when ``F`` was a gap time, and gets its instant a second time where that
instant matches the rule too (``hour='2-4', minute=15``: 02:15 shifted is
03:15); the ``apscheduler`` preset's notes state it.

>>> import calsim
>>> rule = ApschedulerCron.parse("apscheduler:hour=2 minute=30")
>>> rule.rule_text(), rule.explain()
("apscheduler:hour='2' minute='30' second='0'", "CronTrigger(hour='2', minute='30', second='0') (APScheduler 3.x)")
>>> s = calsim.Schedule("j", "America/New_York", "2026-03-01T00:00", rule, gap="scheduler", fold="scheduler")
>>> f = calsim.expand(s, "2026-03-07T05:00Z", "2026-03-10T05:00Z", release="2026f")
>>> [(str(r["nominal_local"]), str(r["due_utc"]), r["notes"]) for r in f.iter_rows(named=True)]
... # doctest: +NORMALIZE_WHITESPACE
[('2026-03-07 02:30:00', '2026-03-07 07:30:00+00:00', []),
 ('2026-03-08 02:30:00', 'None', ['dst_gap_skipped']),
 ('2026-03-08 03:30:00', '2026-03-08 07:30:00+00:00', ['dst_extra:apscheduler']),
 ('2026-03-09 02:30:00', '2026-03-09 06:30:00+00:00', [])]
"""

from __future__ import annotations

import bisect
import calendar
import datetime as dt
import weakref
from dataclasses import dataclass, field
from typing import ClassVar

import numpy as np

from ..errors import RuleError
from .kind import RuleKind
from ..times import DAY_US, US
from ..tz.clock import ZoneClock, civil, wall_seconds
from .days import Days
from .apscheduler_fields import (
    _DAY, _DEFAULT, _DOW, _HOUR, _ITEM_RE, _MAX, _MIN, _MINUTE, _MONTH, _POSITIONS, _REAL, _SECOND, _WEEK,
    _WEEKDAYS, _YEAR, _YEAR_SPAN, NAMES, _Bad, _Position, _Range, _compile_field,
)
from .bounds import DayTable
from .cron import Cron

__all__ = ["ApschedulerCron", "PREFIX"]

PREFIX = "apscheduler:"
EMULATES = "apscheduler"  # the note suffix of rows whose DST this port decides (dst_lost:apscheduler, ...)

# -- the zone as CPython's zoneinfo reads it, and datetimes in it --------------------------------------------------


class _Date:
    """An aware ``datetime`` in the trigger's zone: wall-clock seconds and ``fold`` (microseconds are 0 here)."""

    __slots__ = ("wall", "fold", "_f")

    def __init__(self, wall: int, fold: int):
        self.wall, self.fold = wall, fold
        self._f: tuple[int, int, int, int, int, int, int] | None = None

    @property
    def f(self) -> tuple[int, int, int, int, int, int, int]:
        if self._f is None:
            self._f = civil(self.wall)
        return self._f

    @property
    def year(self) -> int:
        return self.f[0]

    @property
    def month(self) -> int:
        return self.f[1]

    @property
    def day(self) -> int:
        return self.f[2]

    def get(self, i: int) -> int:
        """``field.get_value``: ``getattr(dateval, name)``; ``isocalendar()[1]``; ``weekday()`` (0 = Monday)."""
        f = self.f
        if i == _WEEK:
            return dt.date(f[0], f[1], f[2]).isocalendar()[1]
        if i == _DOW:
            return (f[6] + 6) % 7
        return f[(0, 1, 2, 0, 0, 3, 4, 5)[i]]

    def max(self, i: int) -> int:
        """``field.get_max``: ``DayOfMonthField`` has the month's length."""
        return calendar.monthrange(self.year, self.month)[1] if i == _DAY else _MAX[i]


class _Zone:
    """A :class:`ZoneClock` read as ``zoneinfo`` reads the same TZif data (CPython ``Modules/_zoneinfo.c``).

    ``utcoffset`` of a wall time: ``find_ttinfo`` bisects the transitions in
    local time, ``trans_list_wall[fold]``, which ``ts_to_local`` makes the
    transition plus the larger of the two offsets around it (fold 0) or the
    smaller (fold 1): a gap time with fold 0 takes the offset before the gap,
    a repeated time with fold 0 its first pass. ``fromutc`` sets ``fold=1``
    on an instant within the offset change after a transition that turns
    the clock back.
    """

    def __init__(self, clock: ZoneClock):
        self.clock = weakref.ref(clock)  # a value of _ZONES, keyed by the clock: no strong reference back
        self.table = clock.table
        self._load()

    def _load(self) -> None:
        utc = [int(t) for t in self.table.utc]
        off = [int(o) for o in self.table.offsets]
        self.n, self.utc, self.off = len(utc), utc, off
        self.walls = ([t + max(off[k], off[k + 1]) for k, t in enumerate(utc)],
                      [t + min(off[k], off[k + 1]) for k, t in enumerate(utc)])

    def covering(self, year: int) -> None:
        """Transitions through ``year`` (``ZoneClock.covering``: the footer's rule past the table's end)."""
        if year > self.table.until_year:
            clock = self.clock()
            if clock is not None:
                clock.covering(year)
            if len(self.table.utc) != self.n:
                self._load()

    def instant(self, d: _Date) -> int:
        """``dateval.astimezone(UTC)``: the wall time less ``utcoffset`` (by its fold)."""
        return d.wall - self.off[bisect.bisect_right(self.walls[d.fold], d.wall)]

    def local(self, utc: int) -> _Date:
        """``utc.astimezone(zone)``: normalised, ``fold`` set in the repeated span."""
        k = bisect.bisect_right(self.utc, utc)
        off = self.off[k]
        fold = 1 if k and self.off[k - 1] - off > utc - self.utc[k - 1] else 0
        return _Date(utc + off, fold)


_ZONES: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def _zone(clock: ZoneClock) -> _Zone:
    z = _ZONES.get(clock)
    if z is None:
        z = _ZONES[clock] = _Zone(clock)
    return z


# -- CronTrigger.get_next_fire_time, triggers/cron/__init__.py (3.11.3) lines 155-262 ---------------------------


def _next_value(exprs: tuple, d: _Date, i: int) -> int | None:
    """``BaseField.get_next_value`` (fields.py lines 76-83): the smallest value any expression gives."""
    smallest = None
    for e in exprs:
        v = e.next(d, i)
        if smallest is None or (v is not None and v < smallest):
            smallest = v
    return smallest


def _set_field_value(d: _Date, fieldnum: int, new: int) -> _Date:
    """Lines 199-210: the field set, the later ones at their minimum, ``datetime(..., fold=dateval.fold)``.

    Not normalised: a wall time in a gap stays one (its instant has the offset its fold picks).
    """
    v = [d.get(i) if i < fieldnum else _MIN[i] if i > fieldnum else new for i in (0, 1, 2, 5, 6, 7)]
    return _Date(wall_seconds(*v), d.fold)


def _increment_field_value(z: _Zone, d: _Date, fieldnum: int) -> tuple[_Date | None, int]:
    """Lines 155-197: the field + 1 (carrying into the one before at its maximum; week and day_of_week are not
    datetime fields, so the day is incremented for them), the later fields at their minimum, and the wall-clock
    difference added in UTC (``datetime_utc_add``), which normalises. None once nothing is left to increment
    (APScheduler's ``fieldnum`` goes below 0 and ``get_next_fire_time`` returns None)."""
    values = [0] * 8
    i = 0
    while i < 8:
        if i < 0 or fieldnum < 0:
            return None, -1
        if not _REAL[i]:
            if i == fieldnum:
                fieldnum -= 1
                i -= 1
            else:
                i += 1
            continue
        if i < fieldnum:
            values[i] = d.get(i)
            i += 1
        elif i > fieldnum:
            values[i] = _MIN[i]
            i += 1
        else:
            value = d.get(i)
            if value == d.max(i):
                fieldnum -= 1
                i -= 1
            else:
                values[i] = value + 1
                i += 1
    difference = wall_seconds(values[0], values[1], values[2], values[5], values[6], values[7]) - d.wall
    return z.local(z.instant(d) + difference), fieldnum


def _walk(fields: tuple, z: _Zone, start: int, year_cap: bool) -> _Date | None:
    """Lines 232-257 from ``next_date = datetime_ceil(start_date).astimezone(self.timezone)`` (UTC seconds)."""
    z.covering(1970 + start // 31_556_952 + 2)  # the table through the start's year before it is read
    d: _Date | None  # None once the walk runs out (then returned at once)
    d = z.local(start)
    last_year = d.year + _YEAR_SPAN
    fieldnum = 0
    while 0 <= fieldnum < 8:
        exprs = fields[fieldnum]
        curr = d.get(fieldnum)
        nxt = _next_value(exprs, d, fieldnum)
        if nxt is None:  # no valid value: increment the field before
            d, fieldnum = _increment_field_value(z, d, fieldnum - 1)
        elif nxt > curr:  # a valid, higher value
            if _REAL[fieldnum]:
                d = _set_field_value(d, fieldnum, nxt)
                fieldnum += 1
            else:
                d, fieldnum = _increment_field_value(z, d, fieldnum)
        else:
            fieldnum += 1
        if d is None:
            return None
        if fieldnum <= _MONTH:
            if year_cap and d.year > last_year:
                return None
            z.covering(d.year + 1)
    return d if fieldnum >= 0 else None


# -- the rule kind ---------------------------------------------------------------------------------------------------


def _expand_defaults(given: dict[int, str]) -> tuple[str, ...]:
    """``CronTrigger.__init__``: a field not given is ``*`` before the last given one, its default after it."""
    last = max(given) if given else -1
    return tuple(given[i] if i in given else ("*" if i < last else _DEFAULT[i]) for i in range(8))


def _trigger_fields(text: str) -> tuple[str, ...]:
    if "=" not in text:  # CronTrigger.from_crontab: minute hour day month day_of_week
        values = text.split()
        if len(values) != 5:
            raise _Bad(f"Wrong number of fields; got {len(values)}, expected 5 (crontab: minute hour day month "
                       "day_of_week, 0 = Monday) or CronTrigger keyword arguments such as hour=2 minute=30")
        return _expand_defaults({_MINUTE: values[0], _HOUR: values[1], _DAY: values[2], _MONTH: values[3],
                                 _DOW: values[4]})
    given: dict[int, str] = {}
    pos = 0
    while pos < len(text):
        m = _ITEM_RE.match(text, pos)
        if not m or m.end() == pos:
            raise _Bad(f"cannot read {text[pos:pos + 40].strip()!r} (expected name=value, a value with spaces "
                       f"quoted as day='last fri'; names {', '.join(NAMES)})")
        name = m["name"]
        if name not in NAMES:
            hint = (" (the zone is the schedule's; start and end are the schedule's start and effective_to; jitter "
                    "is the preset's)" if name in ("timezone", "start_date", "end_date", "jitter") else "")
            raise _Bad(f"unknown field {name!r} (allowed {', '.join(NAMES)}){hint}")
        i = NAMES.index(name)
        if i in given:
            raise _Bad(f"field {name!r} given twice")
        given[i] = next(v for v in (m["q1"], m["q2"], m["bare"]) if v is not None)
        pos = m.end()
        if pos < len(text) and not text[pos].isspace() and text[pos - 1] not in " ,":
            raise _Bad(f"cannot read {text[pos:pos + 40]!r}")
    if not given:
        raise _Bad("no field given")
    return _expand_defaults(given)


def _quote(value: str) -> str:
    return "'" + value + "'" if "'" not in value else '"' + value + '"'


def _runs(values: list[int], name=str) -> str:
    """Sorted values as APScheduler list items: ``a``, ``a,b``, ``a-b`` for runs of three or more."""
    out, k = [], 0
    while k < len(values):
        j = k
        while j + 1 < len(values) and values[j + 1] == values[j] + 1:
            j += 1
        if j - k >= 2:
            out.append(f"{name(values[k])}-{name(values[j])}")
        else:
            out.extend(name(v) for v in values[k:j + 1])
        k = j + 1
    return ",".join(out)


@dataclass(frozen=True)
class ApschedulerCron(RuleKind):
    """One or more APScheduler 3.x ``CronTrigger`` field sets; build it with :meth:`parse` or :meth:`from_cron`.

    ``triggers`` holds, per ``CronTrigger``, the expression text of its eight
    fields (``year month day week day_of_week hour minute second``); two or
    more fire as an ``OrTrigger`` (the earliest of their next fire times).
    A schedule with ``gap="scheduler"``, ``fold="scheduler"`` fires it as
    ``get_next_fire_time`` walks (see the module docstring); with other
    policies at every matching wall time.
    """

    kind: ClassVar[str] = "apscheduler"
    emulates: ClassVar[str] = EMULATES
    triggers: tuple[tuple[str, ...], ...]
    compiled: tuple = field(default=(), compare=False, repr=False)

    def __post_init__(self) -> None:
        if not self.compiled:
            try:
                comp = tuple(tuple(_compile_field(i, t[i]) for i in range(8)) for t in self.triggers)
            except _Bad as exc:
                raise RuleError(f"apscheduler: {exc}") from None
            object.__setattr__(self, "compiled", comp)

    @classmethod
    def parse(cls, text: str) -> ApschedulerCron:
        """Parse ``apscheduler:`` text (the prefix may be left out).

        Raises
        ------
        RuleError
            APScheduler's own complaint (field, expression, bound), with the text.
        """
        if not isinstance(text, str):
            raise RuleError(f"apscheduler: expected the rule as a str, got {type(text).__name__}")
        body = text.strip()
        if body[: len(PREFIX)].lower() == PREFIX:
            body = body[len(PREFIX):]
        try:
            parts = [p.strip() for p in body.split("|")]
            if not all(parts):
                raise _Bad("empty trigger (join CronTriggers with ' | ')")
            triggers = tuple(_trigger_fields(p) for p in parts)
            comp = tuple(tuple(_compile_field(i, t[i]) for i in range(8)) for t in triggers)
        except _Bad as exc:
            raise RuleError(f"apscheduler: {exc} in {text[:200]!r}") from None
        return cls(triggers=triggers, compiled=comp)

    @classmethod
    def from_cron(cls, cron: Cron) -> ApschedulerCron:
        """The ``CronTrigger`` (or ``OrTrigger`` of them) that fires a Vixie cron rule's times.

        Weekdays are written as names (``mon``..``sun``), so cron's 0 = Sunday
        keeps its meaning. Both day fields restricted (cron's "either") become
        an ``OrTrigger`` of the day-of-month trigger and the day-of-week one,
        as do plain weekdays next to ``5L``/``5#3`` (``day='last fri'``,
        ``day='3rd fri'``: they live in APScheduler's day field).

        Raises
        ------
        RuleError
            For what no ``CronTrigger`` expression says: ``LW``, ``nW``, and
            ``nL``/``n#k`` that must also match a restricted day of the month.

        >>> ApschedulerCron.from_cron(Cron.parse("0 9 1 * MON")).rule_text()
        "apscheduler:day='1' hour='9' minute='0' second='0' | day_of_week='mon' hour='9' minute='0' second='0'"
        """
        text = " ".join(cron.fields)
        dom_all = set(cron.days) >= set(range(1, 32))
        dow_all = set(cron.weekdays) >= set(range(7))
        if not dom_all and (cron.last_weekday or cron.nearest_weekday):
            raise RuleError(f"apscheduler: CronTrigger has no expression for day-of-month {cron.fields[2]!r} "
                            f"(LW, nW; allowed in its day field: numbers, ranges, steps, last, 1st..5th/last "
                            f"<weekday>) in {text!r}")
        days = sorted(cron.days) if not dom_all else []
        dom = [_runs(days)] if days else []
        if cron.last_day and not dom_all:
            dom.append("last")
        plain = sorted((w + 6) % 7 for w in cron.weekdays)  # cron 0 = Sunday -> APScheduler 0 = Monday
        dow = _runs(plain, lambda v: _WEEKDAYS[v]) if plain and not dow_all else ""
        pos = [] if dow_all else (
            [f"last {_WEEKDAYS[(w + 6) % 7]}" for w in sorted(cron.last_of_weekday, key=lambda w: (w + 6) % 7)]
            + [f"{_POSITIONS[k - 1]} {_WEEKDAYS[(w + 6) % 7]}"
               for w, k in sorted(cron.nth_weekday, key=lambda x: (x[1], (x[0] + 6) % 7))])
        if dom_all or dow_all:
            if cron.day_or or (dom_all and dow_all):
                days_alts = [("*", "*")]
            elif dom_all:
                days_alts = ([(",".join(pos), "*")] if pos else []) + ([("*", dow)] if dow else [])
            else:
                days_alts = [(",".join(dom), "*")]
        elif cron.day_or:
            days_alts = [(",".join(dom + pos), "*")] + ([("*", dow)] if dow else [])
        elif pos:
            raise RuleError(f"apscheduler: CronTrigger cannot require both day-of-month {cron.fields[2]!r} and "
                            f"day-of-week {cron.fields[4]!r} (nL, n#k are day-field expressions there) in {text!r}")
        else:
            days_alts = [(",".join(dom), dow or "*")]
        month = "*" if set(cron.months) >= set(range(1, 13)) else _runs(list(cron.months))
        hour = "*" if len(cron.hours) == 24 else _runs(list(cron.hours))
        minute = "*" if len(cron.minutes) == 60 else _runs(list(cron.minutes))
        return cls(triggers=tuple(("*", month, d, "*", w, hour, minute, "0") for d, w in days_alts))

    def rule_text(self) -> str:
        """The rule as a string :func:`calsim.schedule.parse_rule` reads back (keyword form, from the first
        field that is not ``*``)."""
        return PREFIX + " | ".join(" ".join(f"{n}={_quote(v)}" for n, v in self._given(t)) for t in self.triggers)

    @staticmethod
    def _given(t: tuple[str, ...]) -> list[tuple[str, str]]:
        """The keyword arguments that build these fields: the ones not ``*`` (a ``*`` before the last given is
        implied), and ``second='*'`` when the seconds are ``*`` (left out, they would be 0)."""
        items = [(NAMES[i], t[i]) for i in range(8) if t[i] != "*"]
        return items + [("second", "*")] if t[_SECOND] == "*" else items

    def explain(self) -> str:
        """The trigger as APScheduler code would build it, e.g. ``CronTrigger(hour='2', minute='30', second='0')``."""
        parts = ["CronTrigger(" + ", ".join(f"{n}={_quote(v)}" for n, v in self._given(t) if v != "*") + ")"
                 for t in self.triggers]
        text = parts[0] if len(parts) == 1 else "OrTrigger([" + ", ".join(parts) + "])"
        return text + " (APScheduler 3.x)"

    # -- the scheduler's walk ---------------------------------------------------------------------------------

    def next_after(self, clock: ZoneClock, t: int) -> int | None:
        """``get_next_fire_time(F, now)`` of a running scheduler, ``F`` at ``t`` (UTC seconds), ``now`` after it.

        ``start_date = min(now, F + 1 µs)``, ``datetime_ceil``: the walk
        starts at ``t + 1``. Several triggers: ``OrTrigger``'s ``min`` of
        their times, which compares aware datetimes of one zone by wall
        clock (the first on a tie). None: APScheduler's None (never again).
        """
        z = _zone(clock)
        best = None
        for fields in self.compiled:
            year_cap = all(isinstance(e, _Range) and e.first is None and not e.step for e in fields[_YEAR])
            d = _walk(fields, z, t + 1, year_cap)
            if d is not None and (best is None or d.wall < best.wall):
                best = d
        return None if best is None else z.instant(best)

    # -- the calendar times ---------------------------------------------------------------------------------------

    def wall_times(self, lo: int, hi: int) -> np.ndarray:
        """Every wall time in ``[lo, hi)`` (µs, no zone) that a trigger's fields all match, sorted and distinct."""
        lo, hi = int(lo), int(hi)
        if hi <= lo:
            return np.empty(0, np.int64)
        first = lo // DAY_US
        f = Days(first, -(-hi // DAY_US) - first)
        out = []
        for fields in self.compiled:
            day = f.days[self._day_mask(fields, f)]
            offsets = self._offsets(fields)
            out.append(((day * DAY_US)[:, None] + offsets).ravel())
        times = np.unique(np.concatenate(out)) if len(out) > 1 else out[0]
        i, j = np.searchsorted(times, [lo, hi])
        return times[i:j]

    @staticmethod
    def _table(exprs: tuple, i: int) -> np.ndarray:
        table = np.zeros(_MAX[i] + 1, bool)
        for e in exprs:
            if isinstance(e, _Range):
                table[list(e.values(i))] = True
        return table

    def _offsets(self, fields: tuple) -> np.ndarray:
        h, m, s = (np.flatnonzero(self._table(fields[i], i)) for i in (_HOUR, _MINUTE, _SECOND))
        return np.sort((h[:, None, None] * 3600 + m[None, :, None] * 60 + s[None, None, :]).ravel()) * US

    def _day_mask(self, fields: tuple, f: Days) -> np.ndarray:
        ok = np.ones(len(f.days), bool)
        year = 1970 + f.mabs(slice(None)) // 12
        ok &= self._table(fields[_YEAR], _YEAR)[np.clip(year, 0, _MAX[_YEAR])] & (year >= _MIN[_YEAR])
        ok &= self._table(fields[_MONTH], _MONTH)[f.month]
        dom, mlen, wd = f.dom, f.mlen, f.wd  # wd: 0 = Monday
        day_ok = self._table(fields[_DAY], _DAY)[dom]
        for e in fields[_DAY]:
            if isinstance(e, _Position):
                if e.option is None:
                    day_ok |= dom == mlen
                elif e.option < 5:
                    day_ok |= (wd == e.weekday) & ((dom - 1) // 7 == e.option)
                else:
                    day_ok |= (wd == e.weekday) & (dom + 7 > mlen)
        ok &= day_ok
        ok &= self._table(fields[_DOW], _DOW)[wd]
        week = self._table(fields[_WEEK], _WEEK)
        if not week[1:].all():
            thursday = f.days - wd + 3  # ISO 8601: a week belongs to the year of its Thursday
            t = Days(int(thursday[0]), int(thursday[-1] - thursday[0]) + 1)
            doy = t.doy[thursday - thursday[0]]
            ok &= week[(doy - 1) // 7 + 1]
        return ok

    def bound(self) -> DayTable:
        """The bound of its wall times over a span, for :mod:`calsim.limits` (rule-kind protocol): times a day,
        a matching hour's times, months, days a month by the day field or -1, weekdays by day_of_week or -1,
        whether the day sets are ORed, the years or None."""
        return DayTable(*self._bound_fields())

    def _bound_fields(self) -> tuple:
        def one(fields):
            h, m, s = (int(self._table(fields[i], i).sum()) for i in (_HOUR, _MINUTE, _SECOND))
            months = sum(1 << (k - 1) for k in range(1, 13) if self._table(fields[_MONTH], _MONTH)[k])
            days = self._table(fields[_DAY], _DAY)[1:]
            n_pos = sum(isinstance(e, _Position) for e in fields[_DAY])
            dom_k = -1 if days.all() else min(31, int(days.sum()) + n_pos)
            dows = self._table(fields[_DOW], _DOW)
            wd_k = -1 if dows.all() else int(dows.sum())
            years = self._table(fields[_YEAR], _YEAR)[_MIN[_YEAR]:]
            yrs = None if years.all() else tuple(int(y) + _MIN[_YEAR] for y in np.flatnonzero(years))
            return h * m * s, m * s, months, dom_k, wd_k, yrs
        profs = [one(fields) for fields in self.compiled]
        if len(profs) == 1:
            tpd, ph, months, dom_k, wd_k, yrs = profs[0]
            return tpd, ph, months, dom_k, wd_k, 0, False, yrs
        a = self.triggers[0]
        same = all(t[i] == a[i] for t in self.triggers for i in (_YEAR, _MONTH, _WEEK, _HOUR, _MINUTE, _SECOND))
        if same and len(profs) == 2 and profs[0][4] == -1 and profs[1][3] == -1:  # from_cron's "either day field"
            tpd, ph, months, dom_k, _, yrs = profs[0]
            return tpd, ph, months, dom_k, profs[1][4], 0, True, yrs
        months = 0
        for p in profs:
            months |= p[2]
        return sum(p[0] for p in profs), sum(p[1] for p in profs), months, -1, -1, 0, False, None
