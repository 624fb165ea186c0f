"""Cron expressions: parse five fields, expand them to naive wall-clock times with numpy.

Semantics follow Debian cron's ``crontab(5)`` man page
(https://manpages.debian.org/crontab.5) and, where Debian is silent or lacks a
feature, cronsim 2.9 (https://github.com/cuu508/cronsim, ``cronsim/cronsim.py``),
which aims to match Debian exactly. The test suite uses cronsim as its oracle.

Fields are ``minute hour day-of-month month day-of-week``:

* ``*``, numbers, ranges ``a-b``, lists ``a,b``, steps ``*/n``, ``a-b/n`` and
  ``a/n`` (which means ``a-max/n``, as in Debian and cronsim); a one-value
  range with a step, ``9-9/1``, is just ``{9}`` (Debian's ``get_range()``,
  cronsim 2.9, robfig/cron);
* month names ``JAN``..``DEC`` and weekday names ``SUN``..``SAT``, in any case;
  day-of-week ``0`` and ``7`` are both Sunday;
* day-of-month ``L`` (last day), ``LW`` (last weekday, Mon-Fri) and ``nW``
  (the weekday nearest to day *n*: a Saturday moves to Friday, a Sunday to
  Monday, never across the month's edge, so ``1W`` on a Saturday is Monday the
  3rd; Quartz's ``CronTrigger`` rule); day-of-week ``nL`` (last weekday *n*
  of the month, ``5L`` the last Friday) and ``n#k`` (the *k*-th, 1..5);
* macros ``@yearly``/``@annually``, ``@monthly``, ``@weekly``,
  ``@daily``/``@midnight`` and ``@hourly``; ``@reboot`` is rejected (no times).

**Day-of-month and day-of-week.** crontab(5): "If both fields are restricted
(i.e., don't start with *), the command will be run when either field matches
the current time." A field *starts with* ``*`` also when it is ``*/2``, so
``0 0 */2 * MON`` needs both (Debian's ``DOM_STAR``/``DOW_STAR`` flags and
cronsim do the same).

Where calsim differs from cronsim or Debian (each pinned by a test):

* ``nW`` is not in cronsim 2.9 nor Debian; it follows Quartz, and a day *n*
  the month lacks (``31W`` in April) gives no run that month, like ``31``.
* A reversed range ``5-1`` is an error, as in cronsim (Vixie cron versions differ).
* ``L/n``, ``LW/n`` are rejected; cronsim ignores the step.
* ``FRIL`` is accepted as ``5L``; cronsim accepts only digits before ``L``.
* Seconds are always 0: a sixth (seconds) field, which cronsim accepts, is
  rejected.

Times are ``int64`` microseconds since 1970-01-01T00:00 of *wall-clock* time
(the unit of ``numpy.datetime64[us]`` and ``pl.Datetime("us")``). Nothing here
knows about zones: 02:30 on a spring-forward day is returned, and
:mod:`calsim.resolve` decides what it becomes.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import ClassVar, NamedTuple

import numpy as np

from ..errors import RuleError
from .kind import RuleKind
from ..times import DAY_US, US
from .days import Days, memo
from .bounds import DayTable, cron_bound

__all__ = ["Cron"]

FIELD_NAMES = "minute hour day-of-month month day-of-week"
MAX_TEXT = 4096  # characters of an expression (a 48 MB field took a minute to refuse)
MONTHS = tuple("JAN FEB MAR APR MAY JUN JUL AUG SEP OCT NOV DEC".split())
WEEKDAYS = tuple("SUN MON TUE WED THU FRI SAT".split())
DAYS_IN_MONTH = (0, 31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31)  # longest, leap Feb
MACROS = {
    "@yearly": "0 0 1 1 *",
    "@annually": "0 0 1 1 *",
    "@monthly": "0 0 1 * *",
    "@weekly": "0 0 * * 0",
    "@daily": "0 0 * * *",
    "@midnight": "0 0 * * *",
    "@hourly": "0 * * * *",
}
_MACRO_LIST = ", ".join(list(MACROS)[:-1]) + " or " + list(MACROS)[-1]
# Tokens that are cron extensions: shown with a pointed message in a field that lacks them.
_SPECIAL = re.compile(r"\d*[LW]|LW|.*#.*")


class _Field(NamedTuple):
    name: str
    lo: int
    hi: int
    names: tuple[str, ...]
    offset: int  # value of names[0]
    forms: str  # what the field allows, for messages


MINUTE = _Field("minute", 0, 59, (), 0, "0..59")
HOUR = _Field("hour", 0, 23, (), 0, "0..23")
DOM = _Field("day-of-month", 1, 31, (), 0, "1..31, L, LW or nW")
MONTH = _Field("month", 1, 12, MONTHS, 1, "1..12 or JAN..DEC")
DOW = _Field("day-of-week", 0, 7, WEEKDAYS, 0, "0..7 or SUN..SAT, nL or n#k")


def _error(expr: str, message: str) -> RuleError:
    return RuleError(f"cron: {message} in {expr!r}")


def _digits(s: str) -> int | None:
    """An ASCII decimal string as an int (huge ones capped), else None."""
    if not (s.isascii() and s.isdigit()):
        return None
    s = s.lstrip("0") or "0"
    return int(s) if len(s) <= 9 else 10**9  # int() refuses > 4300 digits


def _value(expr: str, f: _Field, s: str, item: str) -> int:
    """One number or name of field ``f`` (``s`` is part of list item ``item``)."""
    u = s.upper()
    if u in f.names:
        return f.names.index(u) + f.offset
    n = _digits(s)
    if n is not None:
        if not f.lo <= n <= f.hi:
            raise _error(expr, f"{f.name} value {s!r} is out of range (allowed {f.lo}..{f.hi})")
        return n
    where = "" if s == item else f" in {item!r}"
    if s == "":
        raise _error(expr, f"{f.name} item {item!r} has an empty value (allowed {f.forms})")
    if _SPECIAL.fullmatch(u):
        letter = "#" if "#" in u else u[-1]
        if letter == "W" and f is not DOM:
            raise _error(expr, f"{f.name} value {s!r}{where} uses 'W', allowed only in day-of-month (LW, nW)")
        if letter == "#" and f is not DOW:
            raise _error(expr, f"{f.name} value {s!r}{where} uses '#', allowed only in day-of-week (n#k)")
        if letter == "L" and f not in (DOM, DOW):
            raise _error(
                expr, f"{f.name} value {s!r}{where} uses 'L', allowed only in day-of-month (L, LW) and day-of-week (nL)"
            )
        if s != item and set(item) & set("-/"):
            raise _error(expr, f"{f.name} item {item!r} puts {letter!r} inside a range or step (allowed {f.forms})")
    raise _error(expr, f"{f.name} value {s!r}{where} is not a number or name (allowed {f.forms})")


def _range(expr: str, f: _Field, base: str, item: str) -> tuple[int, int]:
    a, b = base.split("-", 1)
    start, end = _value(expr, f, a, item), _value(expr, f, b, item)
    if end < start:  # as cronsim's Field.parse does (Vixie cron versions differ: some set nothing)
        raise _error(expr, f"{f.name} range {base!r} is reversed (allowed a-b with a <= b)")
    return start, end


def _parse_field(expr: str, f: _Field, raw: str) -> tuple[set[int], set[tuple[str, int, int]]]:
    """Plain values, and specials: ('L'|'LW', 0, 0), ('W', n, 0), ('wL', w, 0), ('#', w, k)."""
    values: set[int] = set()
    special: set[tuple[str, int, int]] = set()
    for item in raw.split(","):
        u = item.upper()
        if item == "":
            raise _error(expr, f"{f.name} field {raw!r} has an empty item (allowed {f.forms})")
        if f is DOW and "#" in item:
            base, nth = item.split("#", 1)
            w = _value(expr, f, base, item)
            k = _digits(nth)
            if k is None or not 1 <= k <= 5:
                raise _error(expr, f"day-of-week item {item!r} has occurrence {nth!r} (allowed 1..5, as in 5#3)")
            special.add(("#", w % 7, k))
        elif f is DOW and u.endswith("L"):
            if u == "L":
                raise _error(expr, "day-of-week item 'L' needs a weekday before it (allowed nL, as in 5L)")
            special.add(("wL", _value(expr, f, item[:-1], item) % 7, 0))
        elif f is DOM and u in ("L", "LW"):
            special.add((u, 0, 0))
        elif f is DOM and u.endswith("W") and not set(u) & set("-/"):
            special.add(("W", _value(expr, f, item[:-1], item), 0))
        elif "/" in item:
            base, step_text = item.split("/", 1)
            step = _digits(step_text)
            if not step:
                raise _error(
                    expr, f"{f.name} item {item!r} has step {step_text!r} (allowed a whole number of 1 or more)"
                )
            if base == "*":
                start, end = f.lo, f.hi
            elif "-" in base:
                start, end = _range(expr, f, base, item)
            else:  # a/n means a-max/n (Debian, cronsim)
                start, end = _value(expr, f, base, item), f.hi
            values.update(range(start, end + 1, step))
        elif item == "*":
            values.update(range(f.lo, f.hi + 1))
        elif "-" in item:
            start, end = _range(expr, f, item, item)
            values.update(range(start, end + 1))
        else:
            values.add(_value(expr, f, item, item))
    return values, special


def _table(values: Iterable[int], size: int) -> np.ndarray:
    table = np.zeros(size, dtype=bool)
    table[list(values)] = True
    table.setflags(write=False)  # shared through the cache below
    return table


class _Tables(NamedTuple):
    """What :meth:`Cron.wall_times` needs of an expression, built once per distinct expression."""

    offsets_us: np.ndarray  # sorted times of day, µs (hours x minutes)
    month: np.ndarray | None  # bool over 1..12; None: every month
    dom: np.ndarray | None  # bool over 1..31; None: every day of the month matches
    dow: np.ndarray | None  # bool over weekdays, 0 = Monday as in the calendar table (not cron's Sunday)


@memo(maxsize=256)  # up to 1,440 times of day (12 kB) an entry
def _tables(cron: Cron) -> _Tables:
    """Per-expression tables. Keyed on the frozen :class:`Cron` (equal expressions share
    one entry), so an entry can never go stale; the arrays are read-only."""
    offsets = (np.array(cron.hours, np.int64)[:, None] * 3600 + np.array(cron.minutes, np.int64) * 60).ravel()
    offsets_us = offsets * US
    offsets_us.setflags(write=False)
    return _Tables(
        offsets_us,
        None if set(cron.months) >= set(range(1, 13)) else _table(cron.months, 13),
        # Every day 1..31 (or weekday) listed: the field matches every day, whatever else it names.
        None if set(cron.days) >= set(range(1, 32)) else _table(cron.days, 32),
        None if set(cron.weekdays) >= set(range(7)) else _table([(w - 1) % 7 for w in cron.weekdays], 7),
    )


@dataclass(frozen=True)
class Cron(RuleKind):
    """A parsed five-field cron expression; build it with :meth:`Cron.parse`.

    Attributes hold the expanded fields: ``minutes``, ``hours`` and ``months``
    sorted, ``days`` (1..31), ``weekdays`` (0 = Sunday .. 6), the
    day-of-month extensions ``last_day`` (``L``), ``last_weekday`` (``LW``)
    and ``nearest_weekday`` (``nW``), the day-of-week extensions
    ``last_of_weekday`` (``5L`` gives 5) and ``nth_weekday`` (``5#3`` gives
    (5, 3)), and ``day_or``: the Vixie rule's "either day field may match".

    Examples
    --------
    >>> import numpy as np
    >>> cron = Cron.parse("30 2 * * MON-FRI")
    >>> cron.explain()
    'at 02:30 on day-of-week MON-FRI'
    >>> lo, hi = np.array(["2026-03-06", "2026-03-10"], "datetime64[us]").astype(np.int64)
    >>> cron.wall_times(lo, hi).astype("datetime64[us]")
    array(['2026-03-06T02:30:00.000000', '2026-03-09T02:30:00.000000'], dtype='datetime64[us]')
    """

    kind: ClassVar[str] = "cron"
    text: str
    fields: tuple[str, str, str, str, str]
    minutes: tuple[int, ...]
    hours: tuple[int, ...]
    days: frozenset[int]
    months: tuple[int, ...]
    weekdays: frozenset[int]
    last_day: bool
    last_weekday: bool
    nearest_weekday: frozenset[int]
    last_of_weekday: frozenset[int]
    nth_weekday: frozenset[tuple[int, int]]
    day_or: bool

    @classmethod
    def parse(cls, text: str) -> Cron:
        """Parse a cron expression.

        Parameters
        ----------
        text : str
            Five whitespace-separated fields, or a macro such as ``"@daily"``.

        Returns
        -------
        Cron

        Raises
        ------
        RuleError
            For every malformed expression; the message names the field, the
            bad token and what is allowed, and quotes the expression.
        """
        if not isinstance(text, str):
            raise RuleError(f"cron: expected the expression as a str, got {type(text).__name__}")
        if len(text) > MAX_TEXT:  # every value of every field listed is ~450 characters: longer is not a rule
            raise RuleError(f"cron: an expression of {len(text):,} characters is longer than {MAX_TEXT:,} (listing "
                            "every value of every field takes about 450)")
        stripped = text.strip()
        if stripped.startswith("@"):
            if stripped.lower() == "@reboot":
                raise _error(text, f"'@reboot' has no times, it runs at boot (allowed macros {_MACRO_LIST})")
            if stripped.lower() not in MACROS:
                raise _error(text, f"unknown macro {stripped!r} (allowed {_MACRO_LIST})")
            parts = MACROS[stripped.lower()].split()
        else:
            parts = text.split()  # str.split(), as cronsim does
        if len(parts) != 5:
            raise _error(text, f"expected 5 fields ({FIELD_NAMES}), got {len(parts)}")
        minute, hour, dom, month, dow = parts
        minutes, _ = _parse_field(text, MINUTE, minute)
        hours, _ = _parse_field(text, HOUR, hour)
        days, dom_special = _parse_field(text, DOM, dom)
        months, _ = _parse_field(text, MONTH, month)
        weekdays, dow_special = _parse_field(text, DOW, dow)
        # Debian crontab(5) / cronsim.py `day_and`: a field starting with '*' (also '*/2')
        # is unrestricted, and then both fields must match; otherwise either may.
        day_or = not (dom.startswith("*") or dow.startswith("*"))
        w_days = {n for kind, n, _ in dom_special if kind == "W"}
        numeric = days | w_days
        # cronsim.py rejects a day-of-month that no chosen month has, when it must match
        # (an L or LW keeps the field satisfiable).
        if not day_or and numeric and not {"L", "LW"} & {kind for kind, _, _ in dom_special}:
            longest = max(DAYS_IN_MONTH[m] for m in months)
            if min(numeric) > longest:
                raise _error(
                    text, f"day-of-month {dom!r} never occurs in month {month!r} (the longest has {longest} days)"
                )
        return cls(
            text=text,
            fields=(minute, hour, dom, month, dow),
            minutes=tuple(sorted(minutes)),
            hours=tuple(sorted(hours)),
            days=frozenset(days),
            months=tuple(sorted(months)),
            weekdays=frozenset(w % 7 for w in weekdays),
            last_day=("L", 0, 0) in dom_special,
            last_weekday=("LW", 0, 0) in dom_special,
            nearest_weekday=frozenset(w_days),
            last_of_weekday=frozenset(w for kind, w, _ in dow_special if kind == "wL"),
            nth_weekday=frozenset((w, k) for kind, w, k in dow_special if kind == "#"),
            day_or=day_or,
        )

    def day_mask(self, day: np.ndarray) -> np.ndarray:
        """Which days match the date fields.

        Parameters
        ----------
        day : numpy.ndarray of int64
            Days since 1970-01-01.

        Returns
        -------
        numpy.ndarray of bool
        """
        d = day.astype("datetime64[D]")
        m = d.astype("datetime64[M]")
        first = m.astype("datetime64[D]").astype(np.int64)
        month = m.astype(np.int64) % 12 + 1
        dom = day - first + 1
        ldom = (m + 1).astype("datetime64[D]").astype(np.int64) - first
        ok = self._match(month, dom, ldom, (day + 3) % 7)  # 1970-01-01 was a Thursday
        return np.ones(len(day), dtype=bool) if ok is None else ok

    def _match(self, month: np.ndarray, dom: np.ndarray, ldom: np.ndarray, wd_mon: np.ndarray) -> np.ndarray | None:
        """:meth:`day_mask` from the calendar fields of the days; None when every day matches.

        ``wd_mon`` is the weekday with 0 = Monday (as the calendar table has it);
        the extensions below count cron's way, 0 = Sunday.
        """
        t = _tables(self)
        dom_ok = dow_ok = None  # None: the field matches every day
        special_wd = self.last_weekday or self.nearest_weekday or self.last_of_weekday or self.nth_weekday
        wd = (wd_mon + 1) % 7 if special_wd else None  # 0 = Sunday
        if t.dom is not None:
            dom_ok = t.dom[dom]  # a new array (a gather): |= below leaves the table alone
            if self.last_day:
                dom_ok |= dom == ldom
            if self.last_weekday:  # cronsim.last_weekday: back off a Saturday/Sunday last day
                last_wd = (wd + ldom - dom) % 7
                dom_ok |= dom == ldom - np.where(last_wd == 6, 1, np.where(last_wd == 0, 2, 0))
            for n in self.nearest_weekday:  # Quartz: Sat -> Fri unless the 1st, Sun -> Mon unless the last
                assert wd is not None  # special_wd
                n_wd = (wd + n - dom) % 7
                shift = np.where(n_wd == 6, np.where(n == 1, 2, -1), np.where(n_wd == 0, np.where(n == ldom, -2, 1), 0))
                dom_ok |= (dom == n + shift) & (n <= ldom)
        if t.dow is not None:
            dow_ok = t.dow[wd_mon]
            for w in self.last_of_weekday:  # cronsim.match_dow: the same day next week is in another month
                dow_ok |= (wd == w) & (dom + 7 > ldom)
            for w, k in self.nth_weekday:  # cronsim.match_dow: idx = (day + 6) // 7
                dow_ok |= (wd == w) & ((dom + 6) // 7 == k)
        if self.day_or:  # either field may match: one that matches every day decides
            days_ok = None if dom_ok is None or dow_ok is None else dom_ok | dow_ok
        else:
            days_ok = dow_ok if dom_ok is None else (dom_ok if dow_ok is None else dom_ok & dow_ok)
        if t.month is None:
            return days_ok
        month_ok = t.month[month]
        return month_ok if days_ok is None else month_ok & days_ok

    def bound(self) -> DayTable:
        """The bound of its wall times over a span, for :mod:`calsim.limits` (rule-kind protocol)."""
        return cron_bound(self)

    def wall_times(self, lo: int, hi: int) -> np.ndarray:
        """Every wall-clock time in ``[lo, hi)`` that the expression matches.

        Parameters
        ----------
        lo, hi : int
            Microseconds since 1970-01-01T00:00 of wall-clock time; half-open.

        Returns
        -------
        numpy.ndarray of int64
            Sorted wall-clock microseconds (seconds always 0), no zone applied.
        """
        lo, hi = int(lo), int(hi)
        if hi <= lo:
            return np.empty(0, dtype=np.int64)
        first = lo // DAY_US
        f = Days(first, -(-hi // DAY_US) - first)  # calendar fields from a table, not datetime64
        ok = self._match(f.month, f.dom, f.mlen, f.wd)
        day = f.days if ok is None else f.days[ok]
        offsets_us = _tables(self).offsets_us
        if len(offsets_us) == 1:
            times = day * DAY_US + int(offsets_us[0])
        else:
            times = ((day * DAY_US)[:, None] + offsets_us).ravel()
        i, j = np.searchsorted(times, [lo, hi])
        return times[i:j]

    def explain(self) -> str:
        """A short English description, e.g. ``'at 02:30 every day'``."""
        minute, hour, dom, month, dow = (f.upper() for f in self.fields)
        if len(self.hours) * len(self.minutes) <= 4:
            text = "at " + ", ".join(f"{h:02d}:{m:02d}" for h in self.hours for m in self.minutes)
        elif len(self.hours) == 24 and len(self.minutes) == 60:
            text = "every minute"
        elif len(self.hours) == 24:
            text = f"at minute {minute} of every hour"
        else:
            text = f"at minute {minute} past hour {hour}"
        days = [f"{name} {raw}" for name, raw in (("day-of-month", dom), ("day-of-week", dow)) if raw != "*"]
        if days:
            text += " on " + (" or " if self.day_or else " and ").join(days)
        elif not text.endswith(("every minute", "every hour")):
            text += " every day"
        return text + (f" in month {month}" if month != "*" else "")
