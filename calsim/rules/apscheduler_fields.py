"""APScheduler 3.x ``CronTrigger`` fields and expressions, as its 3.11.3 code compiles them.

Ported from ``apscheduler/triggers/cron/fields.py`` and ``expressions.py``:
each field's expressions (``*``, ``*/n``, ``a-b/n``, names, ``last``,
``1st``..``5th``/``last`` + a weekday), their ``get_next_value`` and
APScheduler's own refusals and leniency. :mod:`calsim.rules.apscheduler_cron`
builds the rule kind and the scheduler's walk on them.

>>> _compile_field(_HOUR, "2-4/2")
(_Range(first=2, last=4, step=2, text='2-4/2'),)
"""

from __future__ import annotations

import calendar
import re
from dataclasses import dataclass
from typing import Protocol

# fields.py: CronTrigger.FIELD_NAMES, which are REAL (datetime fields), MIN_VALUES, MAX_VALUES, DEFAULT_VALUES.
NAMES = ("year", "month", "day", "week", "day_of_week", "hour", "minute", "second")
_REAL = (True, True, True, False, False, True, True, True)
_MIN = (1970, 1, 1, 1, 0, 0, 0, 0)
_MAX = (9999, 12, 31, 53, 6, 23, 59, 59)
_DEFAULT = ("*", "1", "1", "*", "*", "0", "0", "0")
_YEAR, _MONTH, _DAY, _WEEK, _DOW, _HOUR, _MINUTE, _SECOND = range(8)
_WEEKDAYS = ("mon", "tue", "wed", "thu", "fri", "sat", "sun")  # expressions.py WEEKDAYS: 0 = Monday
_MONTHS = ("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec")
_POSITIONS = ("1st", "2nd", "3rd", "4th", "5th", "last")
_SEPARATOR = re.compile(" *, *")  # fields.py SEPARATOR
_ALL_RE = re.compile(r"\*(?:/(?P<step>\d+))?$")
_RANGE_RE = re.compile(r"(?P<first>\d+)(?:-(?P<last>\d+))?(?:/(?P<step>\d+))?$")
_NAME_RANGE_RE = re.compile(r"(?P<first>[a-z]+)(?:-(?P<last>[a-z]+))?", re.IGNORECASE)  # not anchored, as there
_POSITION_RE = re.compile(r"(?P<option_name>{}) +(?P<weekday_name>(?:\d+|\w+))".format("|".join(_POSITIONS)),
                          re.IGNORECASE)
_LAST_RE = re.compile(r"last", re.IGNORECASE)
# name=value, name='value' or name="value"; items apart by spaces or a comma (APScheduler's own str() form).
_ITEM_RE = re.compile(r"\s*(?P<name>[A-Za-z_]\w*)\s*=\s*(?:'(?P<q1>[^']*)'|\"(?P<q2>[^\"]*)\"|"
                      r"(?P<bare>[^\s'\"]+?)(?=\s|$|,\s*[A-Za-z_]\w*\s*=))\s*,?")
_YEAR_SPAN = 400  # the Gregorian calendar repeats after 400 years: a walk with year='*' that finds nothing never will


class _Bad(Exception):
    pass


# -- expressions.py (lines 33-284), each with get_next_value(date, field) -----------------------------------------


class _Date(Protocol):
    """What a field expression reads of the date being walked (``apscheduler_cron._Date``)."""

    @property
    def year(self) -> int: ...

    @property
    def month(self) -> int: ...

    @property
    def day(self) -> int: ...

    def get(self, i: int) -> int: ...

    def max(self, i: int) -> int: ...


@dataclass(frozen=True)
class _Range:
    """``AllExpression`` (``first`` None) and ``RangeExpression`` (also month and weekday names)."""

    first: int | None
    last: int | None
    step: int | None
    text: str

    def next(self, d: _Date, i: int) -> int | None:
        start, minval, maxval = d.get(i), _MIN[i], d.max(i)
        if self.first is None:  # AllExpression.get_next_value
            start = max(start, minval)
            nxt = start if not self.step else start + (self.step - (start - minval)) % self.step
            return nxt if nxt <= maxval else None
        minval = max(minval, self.first)  # RangeExpression.get_next_value
        maxval = min(maxval, self.last) if self.last is not None else maxval
        nxt = max(minval, start)
        if self.step:
            nxt += (self.step - (nxt - minval)) % self.step
        return nxt if nxt <= maxval else None

    def values(self, i: int) -> range:
        """The values it matches over the field's whole range (the day field: days 1..31)."""
        first = _MIN[i] if self.first is None else self.first
        last = _MAX[i] if self.last is None else self.last
        return range(first, last + 1, self.step or 1)


@dataclass(frozen=True)
class _Position:
    """``WeekdayPositionExpression`` (``option`` 0..4: 1st..5th, 5: last) and ``LastDayOfMonthExpression`` (None)."""

    option: int | None
    weekday: int
    text: str

    def next(self, d: _Date, i: int) -> int | None:
        first_wd, last_day = calendar.monthrange(d.year, d.month)
        if self.option is None:
            return last_day
        first_hit = self.weekday - first_wd + 1
        if first_hit <= 0:
            first_hit += 7
        if self.option < 5:
            target = first_hit + self.option * 7
        else:
            target = first_hit + ((last_day - first_hit) // 7) * 7
        return target if d.day <= target <= last_day else None


def _asint(text: str | None) -> int | None:
    return None if text is None else int(text)


def _range_expr(first: int | None, last: int | None, step: int | None, i: int, text: str) -> _Range:
    """``RangeExpression.__init__`` and ``validate_range`` (``AllExpression``'s when ``first`` is None)."""
    if step == 0:
        raise _Bad("Increment must be higher than 0")
    if first is not None:
        if last is None and step is None:
            last = first
        if last is not None and first > last:
            raise _Bad("The minimum value in a range must not be higher than the maximum")
    if first is None:
        value_range = _MAX[i] - _MIN[i]
    else:
        if first < _MIN[i]:
            raise _Bad(f"Error validating expression {text!r}: the first value ({first}) is lower than the minimum "
                       f"value ({_MIN[i]})")
        if last is not None and last > _MAX[i]:
            raise _Bad(f"Error validating expression {text!r}: the last value ({last}) is higher than the maximum "
                       f"value ({_MAX[i]})")
        value_range = (last or _MAX[i]) - first
    if step and step > value_range:
        raise _Bad(f"Error validating expression {text!r}: the step value ({step}) is higher than the total range "
                   f"of the expression ({value_range})")
    return _Range(first, last, step, text)


def _name(names: tuple[str, ...], text: str, what: str) -> int:
    try:
        return names.index(text.lower())
    except ValueError:
        raise _Bad(f'Invalid {what} "{text}"') from None


def _compile(i: int, expr: str) -> _Range | _Position:
    """``BaseField.compile_expression``: the field's compilers in order, the first whose pattern matches."""
    m = _ALL_RE.match(expr)
    if m:
        return _range_expr(None, None, _asint(m["step"]), i, expr)
    m = _RANGE_RE.match(expr)
    if m:
        return _range_expr(int(m["first"]), _asint(m["last"]), _asint(m["step"]), i, expr)
    if i == _DAY:
        m = _POSITION_RE.match(expr)
        if m:
            return _Position(_POSITIONS.index(m["option_name"].lower()), _name(_WEEKDAYS, m["weekday_name"],
                                                                                "weekday name"), expr)
        if _LAST_RE.match(expr):
            return _Position(None, 0, expr)
    if i in (_MONTH, _DOW):
        m = _NAME_RANGE_RE.match(expr)
        if m:
            names, what = (_MONTHS, "month name") if i == _MONTH else (_WEEKDAYS, "weekday name")
            base = 1 if i == _MONTH else 0
            first = _name(names, m["first"], what) + base
            last = _name(names, m["last"], what) + base if m["last"] else None
            return _range_expr(first, last, None, i, expr)
    raise _Bad(f'Unrecognized expression "{expr}" for field "{NAMES[i]}"')


def _compile_field(i: int, text: str) -> tuple:
    """``BaseField.compile_expressions``: the comma-separated expressions, APScheduler's message on the first bad one
    (with the field named where APScheduler's own message does not)."""
    out = []
    for e in _SEPARATOR.split(str(text).strip()):
        try:
            out.append(_compile(i, e))
        except _Bad as exc:
            msg = str(exc)
            raise _Bad(msg if f'field "{NAMES[i]}"' in msg else f"field {NAMES[i]!r}: {msg}") from None
    return tuple(out)
