"""Temporal's calendar grammar: calendar specs and cron strings to calsim rules and exclude calendars.

The reader (:mod:`calsim.importers.temporal`) hands each item of a
``ScheduleSpec`` here: a ``StructuredCalendarSpec`` (ranges), a
``CalendarSpec`` (strings such as ``"MON-FRI"``) or a cron string compiles to
:class:`_Cal`, the set of values each field matches (as Temporal's
``calendar.go`` does); :func:`_calendar_rule` turns it into a Vixie cron
rule where cron says the same, else a ``FREQ=DAILY`` RRULE; :func:`_excludes`
turns the exclude calendars into :class:`TemporalExclude` date calendars. The
small JSON readers (:func:`_get`, :func:`_obj`, :func:`_duration`) live here
too, since ``@every`` cron strings hold durations; the reader imports them.

>>> kind, cal, tz = _cron_string("TZ=Europe/Paris 0 9 * * MON-FRI", "x")
>>> kind, tz, _calendar_rule(cal, "x")
('calendar', 'Europe/Paris', ('0 9 * * 1-5', None, None))
>>> _calendar_rule(_from_strings({"second": "15", "dayOfMonth": "1-7", "dayOfWeek": "MON"}, "x"), "x")[0]
'FREQ=DAILY;BYMONTHDAY=1,2,3,4,5,6,7;BYDAY=MO;BYHOUR=0;BYMINUTE=0;BYSECOND=15'
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import re
from dataclasses import dataclass, field
from typing import Any, Literal, overload

import numpy as np

from ..calendars import Calendar
from ..errors import InputError, RuleError

__all__ = ["TemporalExclude"]

# Field bounds of StructuredCalendarSpec (service/worker/scheduler/spec.go validateStructuredCalendar;
# years: calendar.go minCalendarYear/maxCalendarYear, what "*" compiles to).
_FIELDS = ("second", "minute", "hour", "dayOfMonth", "month", "year", "dayOfWeek")
_BOUNDS = {"second": (0, 59), "minute": (0, 59), "hour": (0, 23), "dayOfMonth": (1, 31), "month": (1, 12),
           "year": (2000, 2100), "dayOfWeek": (0, 7)}
# CalendarSpec string defaults (message.proto): seconds, minutes and hours default to 0, the rest to "*".
_DEFAULTS = {"second": "0", "minute": "0", "hour": "0", "dayOfMonth": "*", "month": "*", "year": "*",
             "dayOfWeek": "*"}
_MONTHS = ("january", "february", "march", "april", "may", "june", "july", "august", "september", "october",
           "november", "december")
_DOWS = ("sunday", "monday", "tuesday", "wednesday", "thursday", "friday", "saturday")
_RRULE_DAYS = ("SU", "MO", "TU", "WE", "TH", "FR", "SA")
_SHORTHANDS = {"@yearly": "0 0 1 1 *", "@annually": "0 0 1 1 *", "@monthly": "0 0 1 * *", "@weekly": "0 0 * * 0",
               "@daily": "0 0 * * *", "@midnight": "0 0 * * *", "@hourly": "0 * * * *"}
_DURATION = re.compile(r"(\d+(?:\.\d*)?|\.\d+)(ns|us|µs|ms|s|m|h|d)")
_DUR_UNITS = {"ns": 1e-9, "us": 1e-6, "µs": 1e-6, "ms": 1e-3, "s": 1, "m": 60, "h": 3600, "d": 86400}


@dataclass(frozen=True)
class TemporalExclude(Calendar):
    """The local dates a Temporal exclude calendar names (year, month, day of month, day of week, ANDed).

    ``days()`` computes them for any range, so an exclude such as "every
    25 December" needs no horizon.

    >>> import datetime as dt
    >>> cal = TemporalExclude("x", "1", months=frozenset({12}), doms=frozenset({25}))
    >>> [str(d) for d in cal.days(dt.date(2026, 12, 1), dt.date(2027, 12, 31))]
    ['2026-12-25', '2027-12-25']
    """

    years: frozenset = field(default=frozenset(range(2000, 2101)), repr=False)
    months: frozenset = field(default=frozenset(range(1, 13)), repr=False)
    doms: frozenset = field(default=frozenset(range(1, 32)), repr=False)
    dows: frozenset = field(default=frozenset(range(7)), repr=False)  # 0 = Sunday, as Temporal counts

    def days(self, first: dt.date, last: dt.date) -> np.ndarray:
        """Excluded local dates in ``[first, last]`` as sorted ``datetime64[D]``."""
        d = np.arange(np.datetime64(first, "D"), np.datetime64(last, "D") + 1)
        if d.size == 0:
            return d
        y = d.astype("datetime64[Y]").astype(np.int64) + 1970
        m = d.astype("datetime64[M]").astype(np.int64) % 12 + 1
        dom = (d - d.astype("datetime64[M]")).astype(np.int64) + 1
        dow = (d.astype(np.int64) + 4) % 7  # 1970-01-01 was a Thursday (4 when Sunday is 0)
        keep = (np.isin(y, sorted(self.years)) & np.isin(m, sorted(self.months)) & np.isin(dom, sorted(self.doms))
                & np.isin(dow, sorted(self.dows)))
        return d[keep]


@dataclass(frozen=True)
class _Cal:
    """A compiled calendar: the set of values each field matches."""

    sets: dict[str, frozenset]
    where: str

    def times(self) -> frozenset:
        """Seconds of the day it matches."""
        return frozenset(h * 3600 + m * 60 + s for h in self.sets["hour"] for m in self.sets["minute"]
                         for s in self.sets["second"])

    def empty(self) -> bool:
        return any(not v for v in self.sets.values())


# -- JSON values: every message names the field and the value


def _snake(key: str) -> str:
    return re.sub(r"([A-Z])", lambda m: "_" + m[1].lower(), key)


def _get(obj: Any, key: str) -> Any:
    """``obj[key]`` under its protojson (camelCase) or proto (snake_case) name; None if absent."""
    if not isinstance(obj, dict):
        return None
    if key in obj:
        return obj[key]
    return obj.get(_snake(key))


def _obj(value: Any, where: str) -> dict:
    if not isinstance(value, dict):
        raise InputError(f"{where}: expected a JSON object, got {_show(value)}")
    return value


def _show(value: Any) -> str:
    text = json.dumps(value) if not isinstance(value, str) else repr(value)
    return f"{type(value).__name__} {text[:40] + '...' if len(text) > 40 else text}"


@overload
def _duration(value: Any, where: str, *, required: Literal[True]) -> int: ...


@overload
def _duration(value: Any, where: str, *, required: bool = False) -> int | None: ...


def _duration(value: Any, where: str, *, required: bool = False) -> int | None:
    """Whole seconds of a protojson Duration (``"3600s"``, ``"1.5s"``) or Go-style ``"1h30m"``/``"2d"``.

    Temporal truncates intervals, phases and windows to the second (message.proto IntervalSpec).
    """
    if value is None:
        if required:
            raise InputError(f"{where}: required (a duration such as '3600s' or '1h')")
        return None
    if isinstance(value, (int, float)) and not isinstance(value, bool) and value >= 0 and value == value \
            and value < 1e12:
        return int(value)
    if isinstance(value, str):
        s = value.strip()
        total, pos = 0.0, 0
        for m in _DURATION.finditer(s):
            if m.start() != pos:
                break
            total += float(m[1]) * _DUR_UNITS[m[2]]
            pos = m.end()
        if s and pos == len(s) and total < 1e12:
            return int(total)
    raise InputError(f"{where}: {_show(value)} is not a duration (allowed e.g. '3600s', '1.5s', '1h30m', '2d')")


# -- calendars


def _int(value: Any, where: str) -> int:
    if value is None:
        return 0  # protojson omits zero values
    if isinstance(value, bool) or not isinstance(value, (int, str)):
        raise InputError(f"{where}: expected an integer, got {_show(value)}")
    try:
        return int(value)
    except ValueError:
        raise InputError(f"{where}: expected an integer, got {_show(value)}") from None


def _structured(raw: Any, where: str, validate: bool) -> _Cal:
    """The value sets of a StructuredCalendarSpec (calendar.go iterateRanges; bounds of spec.go).

    ``validate``: refuse an end before its start as spec.go validateStructuredCalendar does; it runs on
    the calendars only, so an exclude's such range reads as end = start (message.proto Range).
    """
    cal = _obj(raw, where)
    sets: dict[str, frozenset] = {}
    for f in _FIELDS:
        ranges = _get(cal, f)
        if ranges is None:
            ranges = []
        if not isinstance(ranges, list):
            raise InputError(f"{where}.{f}: expected an array of ranges, got {_show(ranges)}")
        lo, hi = _BOUNDS[f]
        values: set[int] = set()
        for j, r in enumerate(ranges, 1):
            at = f"{where}.{f}[{j}]"
            r = _obj(r, at)
            a, b, step = _int(_get(r, "start"), at + ".start"), _int(_get(r, "end"), at + ".end"), \
                _int(_get(r, "step"), at + ".step")
            if not lo <= a <= hi:
                raise RuleError(f"{at}: start {a} is out of range (allowed {lo}..{hi})")
            if b != 0 and (b > hi or (validate and b < a)):
                raise RuleError(f"{at}: end {b} is before start {a} or out of range (allowed {a}..{hi})")
            if step < 0:
                raise RuleError(f"{at}: step {step} is negative (allowed 0 or more; 0 means 1)")
            # message.proto Range: end < start reads as end = start, step 0 as 1.
            values.update(range(a, max(a, b) + 1, step or 1))
        if f == "dayOfWeek":
            values = {v % 7 for v in values}  # 7 is Sunday too (calendar.go makeBitMatcher)
        sets[f] = frozenset(values)
    return _Cal(sets, where)


def _from_strings(raw: Any, where: str) -> _Cal:
    """A CalendarSpec (string fields, message.proto defaults) compiled as calendar.go parseCalendarToStructured."""
    cal = _obj(raw, where)
    sets = {}
    for f in _FIELDS:
        value = _get(cal, f)
        if value is not None and not isinstance(value, str):
            raise InputError(f"{where}.{f}: expected a string such as '*' or '1-5', got {_show(value)}")
        sets[f] = _make_range(value or "", _DEFAULTS[f], f, f"{where}.{f}")
    return _Cal(sets, where)


def _cron_string(raw: Any, where: str) -> tuple[str, Any, str | None]:
    """``("calendar", _Cal, tz)`` or ``("interval", (every, phase), tz)`` of a Temporal cron string.

    calendar.go parseCronString: optional ``TZ=``/``CRON_TZ=`` prefix, ``@every <interval>[/<phase>]``,
    the @hourly... shorthands, then 5 (minute..day-of-week), 6 (+ year) or 7 (second first) fields;
    a ``#`` starts a comment. The reader calls the two steps apart (:func:`_cron_tz`, then
    :func:`_cron_body`): a string's ``TZ=`` counts for the whole spec even when its fields are bad.
    """
    tz, text = _cron_tz(raw, where)
    kind, value = _cron_body(text, raw, where)
    return kind, value, tz


def _cron_tz(raw: Any, where: str) -> tuple[str | None, str]:
    """``(zone of a TZ=/CRON_TZ= prefix or None, the rest without its # comment)``."""
    if not isinstance(raw, str):
        raise InputError(f"{where}: expected a string, got {_show(raw)}")
    text = raw.split("#", 1)[0].strip()
    if not text.startswith(("TZ=", "CRON_TZ=")):
        return None, text
    head, _, text = text.partition(" ")
    tz = head.split("=", 1)[1]
    text = text.strip()
    if not text or not tz:
        raise RuleError(f"{where}: {raw!r} has a TZ= prefix but no zone or no schedule after it")
    return tz, text


def _cron_kind(raw: Any) -> str:
    """``"interval"`` for an ``@every`` cron string, else ``"calendar"``: decided on the text alone, so
    a refused string keeps its place (and the ids of the others) whatever is wrong with it."""
    text = raw.split("#", 1)[0].strip() if isinstance(raw, str) else ""
    if text.startswith(("TZ=", "CRON_TZ=")):
        text = text.partition(" ")[2].strip()
    return "interval" if text.startswith("@every") else "calendar"


def _cron_body(text: str, raw: str, where: str) -> tuple[str, _Cal | tuple[int, int]]:
    """``("calendar", _Cal)`` or ``("interval", (every, phase))`` of a cron string after its TZ= prefix."""
    if text.startswith("@every"):
        every, _, phase = text[len("@every"):].strip().partition("/")
        if not every:
            raise RuleError(f"{where}: {raw!r}: @every needs a duration such as '@every 1h' or '@every 1h/15m'")
        e = _duration(every, where, required=True)  # (both are text here: never None)
        p = _duration(phase, where, required=True) if phase else 0
        return "interval", (e, p)
    fields = _SHORTHANDS.get(text, text).split()
    names = {5: ("minute", "hour", "dayOfMonth", "month", "dayOfWeek"),
             6: ("minute", "hour", "dayOfMonth", "month", "dayOfWeek", "year"),
             7: ("second", "minute", "hour", "dayOfMonth", "month", "dayOfWeek", "year")}.get(len(fields))
    if names is None:
        raise RuleError(f"{where}: {raw!r} has {len(fields)} fields (allowed 5, 6 or 7, or @every/@daily...)")
    given = dict(zip(names, fields))
    sets = {f: _make_range(given.get(f, ""), _DEFAULTS[f] if f != "year" else "*", f, f"{where} {f}")
            for f in _FIELDS}
    return "calendar", _Cal(sets, where)


def _make_range(s: str, default: str, field: str, where: str) -> frozenset:
    """The values a CalendarSpec string matches (calendar.go makeRange)."""
    lo, hi = _BOUNDS[field]
    s = s.strip() or default
    values: set[int] = set()
    for part in s.split(","):
        step, has_step = 1, False
        if "/" in part:
            base, _, st = part.partition("/")
            if "/" in st or not st.isdigit() or int(st) < 1:
                raise RuleError(f"{where}: {s!r}: bad step in {part!r} (allowed a whole number >= 1)")
            part, step, has_step = base, int(st), True
        a, b = lo, hi
        if part != "*":
            if "-" in part:
                x, _, y = part.partition("-")
                a = _value(x, lo, hi, field, where, s)
                b = _value(y, a, hi, field, where, s)
            else:
                a = _value(part, lo, hi, field, where, s)
                b = a if not has_step else hi  # "x/y" runs from x to the end of the field
        values.update(range(a, b + 1, step))
    if field == "dayOfWeek":
        values = {v % 7 for v in values}
    return frozenset(values)


def _value(token: str, lo: int, hi: int, field: str, where: str, whole: str) -> int:
    t = token.strip().lower()
    # calendar.go parseValue: month names by a prefix of 3+ letters, weekdays by 2+.
    table, need = ((_MONTHS, 3) if field == "month" else (_DOWS, 2) if field == "dayOfWeek" else ((), 99))
    if len(t) >= need and t.isalpha():
        for i, name in enumerate(table):
            if name.startswith(t):
                return i + 1 if field == "month" else i
    if t.isdigit() and len(t) <= 10 and lo <= int(t) <= hi:
        return int(t)
    raise RuleError(f"{where}: {whole!r}: {token!r} is out of range or not a value (allowed {lo}..{hi}"
                    + (", month names" if field == "month" else ", weekday names" if field == "dayOfWeek" else "")
                    + ")")


def _compact(values: frozenset) -> str:
    """``1,2,3,5`` -> ``1-3,5``."""
    out: list[str] = []
    run: list[int] = []
    for v in sorted(values):
        if run and v == run[-1] + 1:
            run.append(v)
            continue
        if run:
            out.append(str(run[0]) if len(run) == 1 else f"{run[0]}-{run[-1]}")
        run = [v]
    if run:
        out.append(str(run[0]) if len(run) == 1 else f"{run[0]}-{run[-1]}")
    return ",".join(out)


def _calendar_rule(cal: _Cal, where: str) -> tuple[str, int | None, str | None]:
    """``(rule, first year or None, local UNTIL or None)``: Vixie cron where exact, else an RRULE."""
    s = cal.sets
    full = {f: s[f] == frozenset(range(_BOUNDS[f][0], _BOUNDS[f][1] + 1)) for f in _FIELDS if f != "dayOfWeek"}
    full["dayOfWeek"] = s["dayOfWeek"] == frozenset(range(7))
    years = sorted(s["year"])
    first = until = None
    if not full["year"]:
        if years[-1] - years[0] + 1 != len(years):
            raise RuleError(f"{where}: year {_compact(s['year'])}: calsim imports one contiguous range of years "
                            "(split the calendar into one per range)")
        first, until = years[0], f"{years[-1]}1231T235959"
    # Temporal ANDs day of month and day of week (message.proto); Vixie cron ORs them when both are
    # restricted, so such a calendar (and any with seconds or years) becomes an RRULE, whose BYxxx
    # parts all limit a DAILY rule.
    if s["second"] == {0} and full["year"] and (full["dayOfMonth"] or full["dayOfWeek"]):
        parts = [_compact(s["minute"]), _compact(s["hour"])]
        parts += ["*" if full[f] else _compact(s[f]) for f in ("dayOfMonth", "month", "dayOfWeek")]
        return " ".join(parts), None, None
    rule = ["FREQ=DAILY"]
    if not full["month"]:
        rule.append("BYMONTH=" + ",".join(map(str, sorted(s["month"]))))
    if not full["dayOfMonth"]:
        rule.append("BYMONTHDAY=" + ",".join(map(str, sorted(s["dayOfMonth"]))))
    if not full["dayOfWeek"]:
        rule.append("BYDAY=" + ",".join(_RRULE_DAYS[d] for d in sorted(s["dayOfWeek"])))
    # BYHOUR/BYMINUTE/BYSECOND always: left out, RFC 5545 would take them from DTSTART.
    for part, f in (("BYHOUR", "hour"), ("BYMINUTE", "minute"), ("BYSECOND", "second")):
        rule.append(f"{part}=" + ",".join(map(str, sorted(s[f]))))
    return ";".join(rule), first, until


def _excludes(excludes: list[_Cal], times: frozenset | None, period: int | None, where: str,
              notes: list[str], zone: str) -> list[Calendar]:
    """calsim calendars for the excludes that remove whole local days of this rule."""
    out: list[Calendar] = []
    day = frozenset(range(86400))
    for n, ex in enumerate(excludes, 1):
        label = ex.where.split(": ")[-1]
        if ex.empty():
            notes.append(f"{label} has a field with no range: it excludes nothing")
            continue
        ex_times = ex.times()
        if ex_times == day or (times is not None and times <= ex_times):
            digest = hashlib.blake2b(repr(sorted((f, sorted(v)) for f, v in ex.sets.items())).encode(),
                                     digest_size=4).hexdigest()
            out.append(TemporalExclude(f"temporal-exclude{n}", digest, years=ex.sets["year"],
                                       months=ex.sets["month"], doms=ex.sets["dayOfMonth"],
                                       dows=ex.sets["dayOfWeek"]))
        elif times is not None and not times & ex_times:
            notes.append(f"{label} matches none of this rule's times of day (a CalendarSpec exclude defaults to "
                         "hour 0, minute 0, second 0): it excludes nothing")
        else:
            what = "an interval's times of day vary" if period is not None else "it matches some of the rule's times"
            raise RuleError(f"{where}: {label}: calsim excludes whole local days, but this exclude covers only some "
                            f"times of day and {what} (widen it to hour 0-23, minute 0-59, second 0-59)")
    return out
