"""Quartz ``CronExpression`` as an oracle: its parser and ``getTimeAfter``, ported line by line.

Source read: Quartz 2.3.2, ``quartz-core/src/main/java/org/quartz/CronExpression.java``
(Debian 12 source package ``libquartz2-java_2.3.2.orig.tar.xz``, sha256
``18b941c3...f91bd1``, identical to tag ``quartz-2.3.2`` of
https://github.com/quartz-scheduler/quartz; on ``main`` the file moved to
``quartz/src/main/java/org/quartz/``). Every ``Lnnn`` below is a line of that
2.3.2 file; each method names the lines it ports, in the same order and with
the same names (``camelCase`` -> ``snake_case``).

Ported: the constructor (L269-278), ``isSatisfiedBy`` (L312-323),
``buildExpression`` (L437-521), ``storeExpressionVals`` (L523-701),
``checkIncrementRange`` (L703-715), ``checkNext`` (L717-852),
``skipWhiteSpace`` / ``findNextWhiteSpace`` (L950-964, the latter's condition
``!= ' ' || != '\\t'`` is always true, so it returns the string's end: kept),
``addToSet`` (L966-1097), ``getSet`` (L1099-1118), ``getValue`` (L1120-1136),
``getNumericValue`` (L1138-1142), ``getMonthNumber`` / ``getDayOfWeekNumber``
(L1144-1162), ``getTimeAfter`` (L1170-1572), ``setCalendarHour`` (L1581-1586),
``isLeapYear`` / ``getLastDayOfMonth`` (L1606-1641).

What is replaced, and why it changes nothing here:

* ``java.util.GregorianCalendar`` in UTC by :class:`_Calendar`: the fields
  ``YEAR, MONTH (0-based), DAY_OF_MONTH, HOUR_OF_DAY, MINUTE, SECOND``, kept
  as set, and normalised *leniently* (Java's default) on the next ``get``:
  months past 11 carry into the year (floor division, as
  ``GregorianCalendar.computeTime`` does), days past the month's end roll into
  the next month (``set(DAY_OF_MONTH, 31)`` in April is May 1; ``0`` is the
  previous month's last day), hours past 23 into the next day. Arithmetic is
  Python's proleptic Gregorian ``date.toordinal``; Java is Julian before
  1582-10-15, never reached (years 1970..2999). The ``DAY_OF_MONTH`` and
  ``HOUR_OF_DAY`` fields always win Java's ``selectFields`` here (no week or
  AM/PM field is ever set), so the plain field arithmetic is Java's.
* Instants are whole **epoch seconds**; Java's are milliseconds. ``tcal``
  (L1282, L1318) is ``Calendar.getInstance()``, so its millisecond field is the
  wall clock's; with whole-second inputs ``X s + ms < A s`` iff ``X < A``, so
  ``nTime.before(afterTime)`` is decided by the seconds alone.
* ``TreeSet<Integer>`` by :class:`_TreeSet` (``tailSet(x).first()`` is
  ``ceiling(x)``); ``Integer.parseInt`` by :func:`_parse_int` (sign, ASCII
  digits, 32-bit range); ``String.charAt`` / ``substring`` raise
  :class:`_JavaRuntimeException` where Java throws
  ``StringIndexOutOfBoundsException``, which ``buildExpression`` turns into
  ``ParseException("Illegal cron expression format (...)")`` as Java does
  (L517-519).
* ``MAX_YEAR = Calendar.getInstance().get(Calendar.YEAR) + 100`` (L257) reads
  the clock: here it is ``current_year + 100`` with ``current_year`` a
  parameter (default 2026), so runs are reproducible.

Not ported: serialisation, ``getExpressionSummary``, ``getNextInvalidTimeAfter``,
``getTimeBefore`` / ``getFinalFireTime`` (both ``return null`` in 2.3.2), time
zones other than UTC (DST is calsim's resolution layer, tested elsewhere).

>>> cron = CronExpression("0 0/15 9-17 ? * MON-FRI")
>>> t = to_epoch(2026, 3, 6, 17, 50)
>>> [from_epoch(f) for f in fires_after(cron, t, 2)]
['2026-03-09T09:00:00', '2026-03-09T09:15:00']
"""

from __future__ import annotations

import bisect
import datetime as dt
import re
from collections.abc import Iterator

__all__ = ["CronExpression", "ParseException", "LoopsForever", "fires_after", "to_epoch", "from_epoch"]

_EPOCH_ORDINAL = dt.date(1970, 1, 1).toordinal()

# L203-213: field numbers and the '*' / '?' markers that addToSet stores in the sets.
SECOND, MINUTE, HOUR, DAY_OF_MONTH, MONTH, DAY_OF_WEEK, YEAR = range(7)
ALL_SPEC_INT = 99  # '*'
NO_SPEC_INT = 98  # '?'
ALL_SPEC = ALL_SPEC_INT
NO_SPEC = NO_SPEC_INT

# L215-238: monthMap (0-based) and dayMap (1 = Sunday).
MONTH_MAP = {name: i for i, name in enumerate("JAN FEB MAR APR MAY JUN JUL AUG SEP OCT NOV DEC".split())}
DAY_MAP = {name: i + 1 for i, name in enumerate("SUN MON TUE WED THU FRI SAT".split())}

# java.util.Calendar.SUNDAY / SATURDAY
_SUNDAY, _SATURDAY = 1, 7


class ParseException(Exception):
    """``java.text.ParseException``: the message and the error offset."""

    def __init__(self, message: str, offset: int) -> None:
        super().__init__(message)
        self.message = message
        self.offset = offset


class LoopsForever(RuntimeError):
    """``getTimeAfter`` went round its loop without end: Quartz itself would hang (the JVM thread spins).

    L1184's loop stops only on a fire time, a year past 2999 or ``MAX_YEAR``; some inputs cycle between
    two days for ever (``L-30W`` after a January fire: February's ``L-30`` is January 29, which sends it
    back to February). The port counts the rounds instead of hanging the test run.
    """


# Far more rounds than any terminating search takes (a few per field per month, to MAX_YEAR).
_MAX_ROUNDS = 50_000


class _JavaRuntimeException(Exception):
    """A runtime exception Java would throw (index out of bounds, NumberFormat, IllegalArgument, NoSuchElement)."""


def _char_at(s: str, i: int) -> str:
    if not 0 <= i < len(s):
        raise _JavaRuntimeException(f"java.lang.StringIndexOutOfBoundsException: String index out of range: {i}")
    return s[i]


def _substring(s: str, begin: int, end: int | None = None) -> str:
    end = len(s) if end is None else end
    if begin < 0 or end > len(s) or begin > end:
        raise _JavaRuntimeException(f"java.lang.StringIndexOutOfBoundsException: begin {begin}, end {end}, "
                                    f"length {len(s)}")
    return s[begin:end]


_JAVA_INT = re.compile(r"[+-]?[0-9]+")


def _parse_int(text: str) -> int:
    """``Integer.parseInt`` (radix 10): optional sign, digits, 32-bit range (only ASCII digits here)."""
    if not _JAVA_INT.fullmatch(text):
        raise _JavaRuntimeException(f'java.lang.NumberFormatException: For input string: "{text}"')
    value = int(text)
    if not -(2**31) <= value < 2**31:
        raise _JavaRuntimeException(f'java.lang.NumberFormatException: For input string: "{text}"')
    return value


class _TreeSet:
    """The part of ``java.util.TreeSet<Integer>`` CronExpression uses."""

    __slots__ = ("_items",)

    def __init__(self) -> None:
        self._items: list[int] = []

    def add(self, value: int) -> None:
        k = bisect.bisect_left(self._items, value)
        if k == len(self._items) or self._items[k] != value:
            self._items.insert(k, value)

    def __contains__(self, value: int) -> bool:
        k = bisect.bisect_left(self._items, value)
        return k < len(self._items) and self._items[k] == value

    def __len__(self) -> int:
        return len(self._items)

    def __iter__(self) -> Iterator[int]:
        return iter(self._items)

    def first(self) -> int:
        if not self._items:
            raise _JavaRuntimeException("java.util.NoSuchElementException")
        return self._items[0]

    def last(self) -> int:
        if not self._items:
            raise _JavaRuntimeException("java.util.NoSuchElementException")
        return self._items[-1]

    def ceiling(self, value: int) -> int | None:
        """``tailSet(value)`` non-empty -> its ``first()``; else None."""
        k = bisect.bisect_left(self._items, value)
        return self._items[k] if k < len(self._items) else None


class _ValueSet:
    """L1661-1665 ``class ValueSet { int value; int pos; }``."""

    __slots__ = ("value", "pos")

    def __init__(self) -> None:
        self.value = 0
        self.pos = 0


class _Calendar:
    """A lenient ``GregorianCalendar`` in UTC, with whole seconds (see the module docstring)."""

    __slots__ = ("year", "month", "day", "hour", "minute", "second", "_dirty")

    def __init__(self, epoch_s: int = 0) -> None:
        self.set_time(epoch_s)

    def set_time(self, epoch_s: int) -> None:
        days, rem = divmod(epoch_s, 86400)
        d = dt.date.fromordinal(_EPOCH_ORDINAL + days)
        self.year, self.month, self.day = d.year, d.month - 1, d.day
        self.hour, rem = divmod(rem, 3600)
        self.minute, self.second = divmod(rem, 60)
        self._dirty = False

    def get_time(self) -> int:
        """Epoch seconds of the (leniently normalised) fields."""
        days_extra, rem = divmod(self.hour * 3600 + self.minute * 60 + self.second, 86400)
        year = self.year + self.month // 12  # GregorianCalendar.computeTime: floorDivide(month, 12)
        ordinal = dt.date(year, self.month % 12 + 1, 1).toordinal() + self.day - 1 + days_extra
        return (ordinal - _EPOCH_ORDINAL) * 86400 + rem

    def _complete(self) -> None:
        if self._dirty:
            self.set_time(self.get_time())

    def set(self, field: str, value: int) -> None:
        setattr(self, field, value)
        self._dirty = True

    def get(self, field: str) -> int:
        self._complete()
        return getattr(self, field)

    def day_of_week(self) -> int:
        """``get(Calendar.DAY_OF_WEEK)``: 1 = Sunday .. 7 = Saturday."""
        self._complete()
        return dt.date(self.year, self.month + 1, self.day).isoweekday() % 7 + 1

    def add_year(self, amount: int) -> None:
        """``add(Calendar.YEAR, amount)``: complete, add, pin the day to the new month's length."""
        self._complete()
        self.year += amount
        self.day = min(self.day, _last_day_of_month(self.month + 1, self.year))


def _is_leap_year(year: int) -> bool:
    return (year % 4 == 0 and year % 100 != 0) or (year % 400 == 0)  # L1606-1608


def _last_day_of_month(month_num: int, year: int) -> int:
    """L1610-1641 ``getLastDayOfMonth`` (``IllegalArgumentException`` for a month outside 1..12)."""
    if month_num == 2:
        return 29 if _is_leap_year(year) else 28
    if month_num in (4, 6, 9, 11):
        return 30
    if 1 <= month_num <= 12:
        return 31
    raise _JavaRuntimeException(f"java.lang.IllegalArgumentException: Illegal month number: {month_num}")


class CronExpression:
    """``org.quartz.CronExpression`` of Quartz 2.3.2, in UTC; instants are epoch seconds.

    Raises :class:`ParseException` where Quartz throws it, with Quartz's message.
    """

    def __init__(self, cron_expression: str, *, current_year: int = 2026) -> None:
        # L269-278: upper-case (Locale.US), then buildExpression.
        if cron_expression is None:
            raise ValueError("cronExpression cannot be null")
        self.cron_expression = cron_expression.upper()
        self.max_year = current_year + 100  # L257 MAX_YEAR
        # L242-255: the sets and flags
        self.seconds: _TreeSet | None = None
        self.minutes: _TreeSet | None = None
        self.hours: _TreeSet | None = None
        self.days_of_month: _TreeSet | None = None
        self.months: _TreeSet | None = None
        self.days_of_week: _TreeSet | None = None
        self.years: _TreeSet | None = None
        self.lastday_of_week = False
        self.nthday_of_week = 0
        self.lastday_of_month = False
        self.nearest_weekday = False
        self.lastday_offset = 0
        self.expression_parsed = False
        self.build_expression(self.cron_expression)

    # ------------------------------------------------------------------ parsing

    def build_expression(self, expression: str) -> None:
        """L437-521."""
        self.expression_parsed = True
        try:
            if self.seconds is None:
                self.seconds = _TreeSet()
            if self.minutes is None:
                self.minutes = _TreeSet()
            if self.hours is None:
                self.hours = _TreeSet()
            if self.days_of_month is None:
                self.days_of_month = _TreeSet()
            if self.months is None:
                self.months = _TreeSet()
            if self.days_of_week is None:
                self.days_of_week = _TreeSet()
            if self.years is None:
                self.years = _TreeSet()

            expr_on = SECOND
            # L466: new StringTokenizer(expression, " \t", false): runs of spaces and tabs separate tokens
            tokens = [t for t in re.split(r"[ \t]+", expression) if t]
            for expr in tokens:
                if expr_on > YEAR:  # L469: '&& exprOn <= YEAR' -- extra tokens are ignored in 2.3.2
                    break
                expr = expr.strip()
                # L472-475: 'L' with other days of the month
                if expr_on == DAY_OF_MONTH and "L" in expr and len(expr) > 1 and "," in expr:
                    raise ParseException("Support for specifying 'L' and 'LW' with other days of the month "
                                         "is not implemented", -1)
                # L476-479: 'L' with other days of the week
                if expr_on == DAY_OF_WEEK and "L" in expr and len(expr) > 1 and "," in expr:
                    raise ParseException("Support for specifying 'L' with other days of the week is not "
                                         "implemented", -1)
                # L480-482: more than one '#'
                if expr_on == DAY_OF_WEEK and "#" in expr and expr.find("#", expr.find("#") + 1) != -1:
                    raise ParseException('Support for specifying multiple "nth" days is not implemented.', -1)
                # L484-488: StringTokenizer(expr, ","): empty items are skipped
                for v in (v for v in expr.split(",") if v):
                    self.store_expression_vals(0, v, expr_on)
                expr_on += 1

            if expr_on <= DAY_OF_WEEK:  # L493-496
                raise ParseException("Unexpected end of expression.", len(expression))
            if expr_on <= YEAR:  # L498-500
                self.store_expression_vals(0, "*", YEAR)

            dow = self.get_set(DAY_OF_WEEK)  # L502-514
            dom = self.get_set(DAY_OF_MONTH)
            day_of_m_spec = NO_SPEC not in dom
            day_of_w_spec = NO_SPEC not in dow
            if not day_of_m_spec or day_of_w_spec:
                if not day_of_w_spec or day_of_m_spec:
                    raise ParseException("Support for specifying both a day-of-week AND a day-of-month parameter "
                                         "is not implemented.", 0)
        except ParseException:
            raise
        except _JavaRuntimeException as e:  # L517-519
            raise ParseException(f"Illegal cron expression format ({e})", 0) from None

    def store_expression_vals(self, pos: int, s: str, type_: int) -> int:
        """L523-701."""
        incr = 0
        i = self.skip_white_space(pos, s)
        if i >= len(s):
            return i
        c = s[i]
        # L532: a name (JAN, MON...), unless the whole item is L, LW or L-n[W]
        if "A" <= c <= "Z" and s != "L" and s != "LW" and not re.fullmatch(r"L-[0-9]*[W]?", s):
            sub = _substring(s, i, i + 3)
            sval = -1
            eval_ = -1
            if type_ == MONTH:  # L536-551
                sval = self.get_month_number(sub) + 1
                if sval <= 0:
                    raise ParseException(f"Invalid Month value: '{sub}'", i)
                if len(s) > i + 3:
                    c = s[i + 3]
                    if c == "-":
                        i += 4
                        sub = _substring(s, i, i + 3)
                        eval_ = self.get_month_number(sub) + 1
                        if eval_ <= 0:
                            raise ParseException(f"Invalid Month value: '{sub}'", i)
            elif type_ == DAY_OF_WEEK:  # L552-586
                sval = self.get_day_of_week_number(sub)
                if sval < 0:
                    raise ParseException(f"Invalid Day-of-Week value: '{sub}'", i)
                if len(s) > i + 3:
                    c = s[i + 3]
                    if c == "-":
                        i += 4
                        sub = _substring(s, i, i + 3)
                        eval_ = self.get_day_of_week_number(sub)
                        if eval_ < 0:
                            raise ParseException(f"Invalid Day-of-Week value: '{sub}'", i)
                    elif c == "#":
                        try:  # L570-580
                            i += 4
                            self.nthday_of_week = _parse_int(_substring(s, i))
                            if self.nthday_of_week < 1 or self.nthday_of_week > 5:
                                raise _JavaRuntimeException("java.lang.Exception")
                        except _JavaRuntimeException:
                            raise ParseException("A numeric value between 1 and 5 must follow the '#' option",
                                                 i) from None
                    elif c == "L":
                        self.lastday_of_week = True
                        i += 1
            else:  # L587-591
                raise ParseException(f"Illegal characters for this position: '{sub}'", i)
            if eval_ != -1:  # L592-596: a name range has step 1; anything after it is not read
                incr = 1
            self.add_to_set(sval, eval_, incr, type_)
            return i + 3

        if c == "?":  # L599-622
            i += 1
            if (i + 1) < len(s) and (s[i] != " " and s[i + 1] != "\t"):
                raise ParseException(f"Illegal character after '?': {s[i]}", i)
            if type_ != DAY_OF_WEEK and type_ != DAY_OF_MONTH:
                raise ParseException("'?' can only be specified for Day-of-Month or Day-of-Week.", i)
            if type_ == DAY_OF_WEEK and not self.lastday_of_month:
                val = self.days_of_month.last()
                if val == NO_SPEC_INT:
                    raise ParseException("'?' can only be specified for Day-of-Month -OR- Day-of-Week.", i)
            self.add_to_set(NO_SPEC_INT, -1, 0, type_)
            return i

        if c == "*" or c == "/":  # L624-654
            if c == "*" and (i + 1) >= len(s):
                self.add_to_set(ALL_SPEC_INT, -1, incr, type_)
                return i + 1
            elif c == "/" and ((i + 1) >= len(s) or s[i + 1] == " " or s[i + 1] == "\t"):
                raise ParseException("'/' must be followed by an integer.", i)
            elif c == "*":
                i += 1
            c = _char_at(s, i)
            if c == "/":  # is an increment specified?
                i += 1
                if i >= len(s):
                    raise ParseException("Unexpected end of string.", i)
                incr = self.get_numeric_value(s, i)
                i += 1
                if incr > 10:
                    i += 1
                self.check_increment_range(incr, type_, i)
            else:
                incr = 1
            self.add_to_set(ALL_SPEC_INT, -1, incr, type_)
            return i
        elif c == "L":  # L655-680
            i += 1
            if type_ == DAY_OF_MONTH:
                self.lastday_of_month = True
            if type_ == DAY_OF_WEEK:
                self.add_to_set(7, 7, 0, type_)
            if type_ == DAY_OF_MONTH and len(s) > i:
                c = s[i]
                if c == "-":
                    vs = self.get_value(0, s, i + 1)
                    self.lastday_offset = vs.value
                    if self.lastday_offset > 30:
                        raise ParseException("Offset from last day must be <= 30", i + 1)
                    i = vs.pos
                if len(s) > i:
                    c = s[i]
                    if c == "W":
                        self.nearest_weekday = True
                        i += 1
            return i
        elif "0" <= c <= "9":  # L681-695
            val = int(c)
            i += 1
            if i >= len(s):
                self.add_to_set(val, -1, -1, type_)
            else:
                c = s[i]
                if "0" <= c <= "9":
                    vs = self.get_value(val, s, i)
                    val = vs.value
                    i = vs.pos
                i = self.check_next(i, s, val, type_)
                return i
        else:  # L696-698
            raise ParseException(f"Unexpected character: {c}", i)
        return i

    def check_increment_range(self, incr: int, type_: int, idx_pos: int) -> None:
        """L703-715 (no check for the year, and none for ``a-b/n``: checkNext's '-' branch never calls it)."""
        if incr > 59 and (type_ == SECOND or type_ == MINUTE):
            raise ParseException(f"Increment > 60 : {incr}", idx_pos)
        elif incr > 23 and type_ == HOUR:
            raise ParseException(f"Increment > 24 : {incr}", idx_pos)
        elif incr > 31 and type_ == DAY_OF_MONTH:
            raise ParseException(f"Increment > 31 : {incr}", idx_pos)
        elif incr > 7 and type_ == DAY_OF_WEEK:
            raise ParseException(f"Increment > 7 : {incr}", idx_pos)
        elif incr > 12 and type_ == MONTH:
            raise ParseException(f"Increment > 12 : {incr}", idx_pos)

    def check_next(self, pos: int, s: str, val: int, type_: int) -> int:
        """L717-852: what follows a number (L, W, #, -, /, or anything else, which is not read)."""
        end = -1
        i = pos
        if i >= len(s):  # L723-726
            self.add_to_set(val, end, -1, type_)
            return i
        c = s[pos]
        if c == "L":  # L730-742
            if type_ == DAY_OF_WEEK:
                if val < 1 or val > 7:
                    raise ParseException("Day-of-Week values must be between 1 and 7", -1)
                self.lastday_of_week = True
            else:
                raise ParseException(f"'L' option is not valid here. (pos={i})", i)
            self.get_set(type_).add(val)
            i += 1
            return i
        if c == "W":  # L744-756
            if type_ == DAY_OF_MONTH:
                self.nearest_weekday = True
            else:
                raise ParseException(f"'W' option is not valid here. (pos={i})", i)
            if val > 31:
                raise ParseException("The 'W' option does not make sense with values larger than 31 (max number "
                                     "of days in a month)", i)
            self.get_set(type_).add(val)
            i += 1
            return i
        if c == "#":  # L758-778
            if type_ != DAY_OF_WEEK:
                raise ParseException(f"'#' option is not valid here. (pos={i})", i)
            i += 1
            try:
                self.nthday_of_week = _parse_int(_substring(s, i))
                if self.nthday_of_week < 1 or self.nthday_of_week > 5:
                    raise _JavaRuntimeException("java.lang.Exception")
            except _JavaRuntimeException:
                raise ParseException("A numeric value between 1 and 5 must follow the '#' option", i) from None
            self.get_set(type_).add(val)
            i += 1
            return i
        if c == "-":  # L780-820
            i += 1
            c = _char_at(s, i)
            v = _parse_int(c)
            end = v
            i += 1
            if i >= len(s):
                self.add_to_set(val, end, 1, type_)
                return i
            c = s[i]
            if "0" <= c <= "9":
                vs = self.get_value(v, s, i)
                end = vs.value
                i = vs.pos
            if i < len(s) and s[i] == "/":
                i += 1
                c = _char_at(s, i)
                v2 = _parse_int(c)
                i += 1
                if i >= len(s):
                    self.add_to_set(val, end, v2, type_)
                    return i
                c = s[i]
                if "0" <= c <= "9":
                    vs = self.get_value(v2, s, i)
                    v3 = vs.value
                    self.add_to_set(val, end, v3, type_)
                    i = vs.pos
                    return i
                else:
                    self.add_to_set(val, end, v2, type_)
                    return i
            else:
                self.add_to_set(val, end, 1, type_)
                return i
        if c == "/":  # L822-847
            if (i + 1) >= len(s) or s[i + 1] == " " or s[i + 1] == "\t":
                raise ParseException("'/' must be followed by an integer.", i)
            i += 1
            c = s[i]
            v2 = _parse_int(c)
            i += 1
            if i >= len(s):
                self.check_increment_range(v2, type_, i)
                self.add_to_set(val, end, v2, type_)
                return i
            c = s[i]
            if "0" <= c <= "9":
                vs = self.get_value(v2, s, i)
                v3 = vs.value
                self.check_increment_range(v3, type_, i)
                self.add_to_set(val, end, v3, type_)
                i = vs.pos
                return i
            else:
                raise ParseException(f"Unexpected character '{c}' after '/'", i)
        self.add_to_set(val, end, 0, type_)  # L849-851
        i += 1
        return i

    @staticmethod
    def skip_white_space(i: int, s: str) -> int:
        """L950-956."""
        while i < len(s) and (s[i] == " " or s[i] == "\t"):
            i += 1
        return i

    @staticmethod
    def find_next_white_space(i: int, s: str) -> int:
        """L958-964: ``s.charAt(i) != ' ' || s.charAt(i) != '\\t'`` is always true: the end of ``s``."""
        while i < len(s) and (s[i] != " " or s[i] != "\t"):
            i += 1
        return i

    def add_to_set(self, val: int, end: int, incr: int, type_: int) -> None:
        """L966-1097."""
        st = self.get_set(type_)
        if type_ == SECOND or type_ == MINUTE:  # L971-999: range checks (none for the year)
            if (val < 0 or val > 59 or end > 59) and val != ALL_SPEC_INT:
                raise ParseException("Minute and Second values must be between 0 and 59", -1)
        elif type_ == HOUR:
            if (val < 0 or val > 23 or end > 23) and val != ALL_SPEC_INT:
                raise ParseException("Hour values must be between 0 and 23", -1)
        elif type_ == DAY_OF_MONTH:
            if (val < 1 or val > 31 or end > 31) and val != ALL_SPEC_INT and val != NO_SPEC_INT:
                raise ParseException("Day of month values must be between 1 and 31", -1)
        elif type_ == MONTH:
            if (val < 1 or val > 12 or end > 12) and val != ALL_SPEC_INT:
                raise ParseException("Month values must be between 1 and 12", -1)
        elif type_ == DAY_OF_WEEK:
            if (val == 0 or val > 7 or end > 7) and val != ALL_SPEC_INT and val != NO_SPEC_INT:
                raise ParseException("Day-of-Week values must be between 1 and 7", -1)

        if (incr == 0 or incr == -1) and val != ALL_SPEC_INT:  # L1001-1009: one value (a step of 0 too)
            if val != -1:
                st.add(val)
            else:
                st.add(NO_SPEC)
            return

        start_at = val  # L1011-1017
        stop_at = end
        if val == ALL_SPEC_INT and incr <= 0:  # '*/0' is '*'
            incr = 1
            st.add(ALL_SPEC)  # put in a marker, but also fill values

        if type_ == SECOND or type_ == MINUTE:  # L1019-1061: defaults for an open end / '*'
            if stop_at == -1:
                stop_at = 59
            if start_at == -1 or start_at == ALL_SPEC_INT:
                start_at = 0
        elif type_ == HOUR:
            if stop_at == -1:
                stop_at = 23
            if start_at == -1 or start_at == ALL_SPEC_INT:
                start_at = 0
        elif type_ == DAY_OF_MONTH:
            if stop_at == -1:
                stop_at = 31
            if start_at == -1 or start_at == ALL_SPEC_INT:
                start_at = 1
        elif type_ == MONTH:
            if stop_at == -1:
                stop_at = 12
            if start_at == -1 or start_at == ALL_SPEC_INT:
                start_at = 1
        elif type_ == DAY_OF_WEEK:
            if stop_at == -1:
                stop_at = 7
            if start_at == -1 or start_at == ALL_SPEC_INT:
                start_at = 1
        elif type_ == YEAR:
            if stop_at == -1:
                stop_at = self.max_year
            if start_at == -1 or start_at == ALL_SPEC_INT:
                start_at = 1970

        # L1063-1079: a reversed range overflows by the field's size (a year range may not)
        max_ = -1
        if stop_at < start_at:
            if type_ in (SECOND, MINUTE):
                max_ = 60
            elif type_ == HOUR:
                max_ = 24
            elif type_ == MONTH:
                max_ = 12
            elif type_ == DAY_OF_WEEK:
                max_ = 7
            elif type_ == DAY_OF_MONTH:
                max_ = 31
            elif type_ == YEAR:
                raise _JavaRuntimeException("java.lang.IllegalArgumentException: Start year must be less than "
                                            "stop year")
            else:
                raise _JavaRuntimeException("java.lang.IllegalArgumentException: Unexpected type encountered")
            stop_at += max_

        # L1081-1096 (Java's int i += incr could overflow for a huge year step; Python's ints do not)
        i = start_at
        while i <= stop_at:
            if max_ == -1:
                st.add(i)
            else:
                i2 = i % max_
                # 1-indexed ranges should not include 0, and should include their max
                if i2 == 0 and type_ in (MONTH, DAY_OF_WEEK, DAY_OF_MONTH):
                    i2 = max_
                st.add(i2)
            i += incr

    def get_set(self, type_: int) -> _TreeSet | None:
        """L1099-1118."""
        return {SECOND: self.seconds, MINUTE: self.minutes, HOUR: self.hours, DAY_OF_MONTH: self.days_of_month,
                MONTH: self.months, DAY_OF_WEEK: self.days_of_week, YEAR: self.years}.get(type_)

    @staticmethod
    def get_value(v: int, s: str, i: int) -> _ValueSet:
        """L1120-1136: ``v`` followed by the digits at ``i``; ``pos`` is one past the end when they end ``s``."""
        c = _char_at(s, i)
        s1 = str(v)
        while "0" <= c <= "9":
            s1 += c
            i += 1
            if i >= len(s):
                break
            c = s[i]
        val = _ValueSet()
        val.pos = i if i < len(s) else i + 1
        val.value = _parse_int(s1)
        return val

    def get_numeric_value(self, s: str, i: int) -> int:
        """L1138-1142: everything from ``i`` to the end (see findNextWhiteSpace)."""
        end_of_val = self.find_next_white_space(i, s)
        return _parse_int(_substring(s, i, end_of_val))

    @staticmethod
    def get_month_number(s: str) -> int:
        return MONTH_MAP.get(s, -1)  # L1144-1152

    @staticmethod
    def get_day_of_week_number(s: str) -> int:
        return DAY_MAP.get(s, -1)  # L1154-1162

    # -------------------------------------------------------------- computation

    def is_satisfied_by(self, date: int) -> bool:
        """L312-323: the time after ``date - 1 s`` is ``date``."""
        time_after = self.get_time_after(date - 1)
        return time_after is not None and time_after == date

    def get_time_after(self, after_time: int) -> int | None:
        """L1170-1572: the first fire time strictly after ``after_time`` (epoch seconds), or None."""
        cl = _Calendar()  # L1173 GregorianCalendar(UTC)
        after_time = after_time + 1  # L1177: move ahead one second
        cl.set_time(after_time)  # L1179-1180 (milliseconds 0)

        got_one = False
        rounds = 0
        while not got_one:  # L1184
            rounds += 1
            if rounds > _MAX_ROUNDS:
                raise LoopsForever(f"getTimeAfter({after_time - 1}) of {self.cron_expression!r} does not end")
            if cl.get("year") > 2999:  # L1187-1189: prevent endless loop
                return None

            sec = cl.get("second")  # L1194-1206: get second
            min_ = cl.get("minute")
            st = self.seconds.ceiling(sec)
            if st is not None:
                sec = st
            else:
                sec = self.seconds.first()
                min_ += 1
                cl.set("minute", min_)
            cl.set("second", sec)

            min_ = cl.get("minute")  # L1208-1227: get minute
            hr = cl.get("hour")
            t = -1
            st = self.minutes.ceiling(min_)
            if st is not None:
                t = min_
                min_ = st
            else:
                min_ = self.minutes.first()
                hr += 1
            if min_ != t:
                cl.set("second", 0)
                cl.set("minute", min_)
                self.set_calendar_hour(cl, hr)
                continue
            cl.set("minute", min_)

            hr = cl.get("hour")  # L1229-1249: get hour
            day = cl.get("day")
            t = -1
            st = self.hours.ceiling(hr)
            if st is not None:
                t = hr
                hr = st
            else:
                hr = self.hours.first()
                day += 1
            if hr != t:
                cl.set("second", 0)
                cl.set("minute", 0)
                cl.set("day", day)
                self.set_calendar_hour(cl, hr)
                continue
            cl.set("hour", hr)

            day = cl.get("day")  # L1251-1256
            mon = cl.get("month") + 1
            t = -1
            tmon = mon

            # L1258-1504: get day
            day_of_m_spec = NO_SPEC not in self.days_of_month
            day_of_w_spec = NO_SPEC not in self.days_of_week
            if day_of_m_spec and not day_of_w_spec:  # L1261: get day by day of month rule
                st = self.days_of_month.ceiling(day)
                if self.lastday_of_month:  # L1263
                    if not self.nearest_weekday:  # L1264-1276: L, L-n
                        t = day
                        day = _last_day_of_month(mon, cl.get("year"))
                        day -= self.lastday_offset
                        if t > day:
                            mon += 1
                            if mon > 12:
                                mon = 1
                                tmon = 3333  # ensure test of mon != tmon further below fails
                                cl.add_year(1)
                            day = 1
                    else:  # L1277-1313: LW, L-nW
                        t = day
                        day = _last_day_of_month(mon, cl.get("year"))
                        day -= self.lastday_offset
                        tcal = _Calendar()  # L1282 Calendar.getInstance(): every field below is set
                        tcal.set("second", 0)
                        tcal.set("minute", 0)
                        tcal.set("hour", 0)
                        tcal.set("day", day)  # lenient: day 0 is the previous month's last day
                        tcal.set("month", mon - 1)
                        tcal.set("year", cl.get("year"))
                        ldom = _last_day_of_month(mon, cl.get("year"))
                        dow = tcal.day_of_week()
                        day = _shift_to_weekday(day, dow, ldom)  # L1293-1301
                        tcal.set("second", sec)
                        tcal.set("minute", min_)
                        tcal.set("hour", hr)
                        tcal.set("day", day)
                        tcal.set("month", mon - 1)
                        n_time = tcal.get_time()
                        if n_time < after_time:  # L1309 nTime.before(afterTime)
                            day = 1
                            mon += 1
                elif self.nearest_weekday:  # L1314-1349: nW (the smallest day of the set only)
                    t = day
                    day = self.days_of_month.first()
                    tcal = _Calendar()  # L1318
                    tcal.set("second", 0)
                    tcal.set("minute", 0)
                    tcal.set("hour", 0)
                    tcal.set("day", day)  # lenient: 31 in April is May 1
                    tcal.set("month", mon - 1)
                    tcal.set("year", cl.get("year"))
                    ldom = _last_day_of_month(mon, cl.get("year"))
                    dow = tcal.day_of_week()
                    day = _shift_to_weekday(day, dow, ldom)  # L1329-1337
                    tcal.set("second", sec)
                    tcal.set("minute", min_)
                    tcal.set("hour", hr)
                    tcal.set("day", day)
                    tcal.set("month", mon - 1)
                    n_time = tcal.get_time()
                    if n_time < after_time:  # L1346
                        day = self.days_of_month.first()
                        mon += 1
                elif st is not None:  # L1350-1358
                    t = day
                    day = st
                    # make sure we don't over-run a short month, such as february
                    last_day = _last_day_of_month(mon, cl.get("year"))
                    if day > last_day:
                        day = self.days_of_month.first()
                        mon += 1
                else:  # L1359-1362
                    day = self.days_of_month.first()
                    mon += 1

                if day != t or mon != tmon:  # L1364-1373
                    cl.set("second", 0)
                    cl.set("minute", 0)
                    cl.set("hour", 0)
                    cl.set("day", day)
                    cl.set("month", mon - 1)
                    continue
            elif day_of_w_spec and not day_of_m_spec:  # L1374: get day by day of week rule
                if self.lastday_of_week:  # L1375-1417: nL
                    dow = self.days_of_week.first()  # desired d-o-w
                    c_dow = cl.day_of_week()  # current d-o-w
                    days_to_add = 0
                    if c_dow < dow:
                        days_to_add = dow - c_dow
                    if c_dow > dow:
                        days_to_add = dow + (7 - c_dow)
                    l_day = _last_day_of_month(mon, cl.get("year"))
                    if day + days_to_add > l_day:  # did we already miss the last one?
                        cl.set("second", 0)
                        cl.set("minute", 0)
                        cl.set("hour", 0)
                        cl.set("day", 1)
                        cl.set("month", mon)  # no '- 1' here because we are promoting the month
                        continue
                    while (day + days_to_add + 7) <= l_day:  # find date of last occurrence of this day
                        days_to_add += 7
                    day += days_to_add
                    if days_to_add > 0:
                        cl.set("second", 0)
                        cl.set("minute", 0)
                        cl.set("hour", 0)
                        cl.set("day", day)
                        cl.set("month", mon - 1)
                        continue
                elif self.nthday_of_week != 0:  # L1418-1461: n#k
                    dow = self.days_of_week.first()  # desired d-o-w
                    c_dow = cl.day_of_week()  # current d-o-w
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
                    days_to_add = (self.nthday_of_week - week_of_month) * 7
                    day += days_to_add
                    if days_to_add < 0 or day > _last_day_of_month(mon, cl.get("year")):
                        cl.set("second", 0)
                        cl.set("minute", 0)
                        cl.set("hour", 0)
                        cl.set("day", 1)
                        cl.set("month", mon)  # no '- 1' here because we are promoting the month
                        continue
                    elif days_to_add > 0 or day_shifted:
                        cl.set("second", 0)
                        cl.set("minute", 0)
                        cl.set("hour", 0)
                        cl.set("day", day)
                        cl.set("month", mon - 1)  # '- 1' here because we are NOT promoting the month
                        continue
                else:  # L1462-1500: a set of weekdays
                    c_dow = cl.day_of_week()  # current d-o-w
                    dow = self.days_of_week.first()  # desired d-o-w
                    st = self.days_of_week.ceiling(c_dow)
                    if st is not None:
                        dow = st
                    days_to_add = 0
                    if c_dow < dow:
                        days_to_add = dow - c_dow
                    if c_dow > dow:
                        days_to_add = dow + (7 - c_dow)
                    l_day = _last_day_of_month(mon, cl.get("year"))
                    if day + days_to_add > l_day:  # will we pass the end of the month?
                        cl.set("second", 0)
                        cl.set("minute", 0)
                        cl.set("hour", 0)
                        cl.set("day", 1)
                        cl.set("month", mon)  # no '- 1' here because we are promoting the month
                        continue
                    elif days_to_add > 0:  # are we switching days?
                        cl.set("second", 0)
                        cl.set("minute", 0)
                        cl.set("hour", 0)
                        cl.set("day", day + days_to_add)
                        cl.set("month", mon - 1)
                        continue
            else:  # L1501-1504 (buildExpression already refuses this)
                raise _JavaRuntimeException("java.lang.UnsupportedOperationException: Support for specifying both "
                                            "a day-of-week AND a day-of-month parameter is not implemented.")
            cl.set("day", day)  # L1505

            mon = cl.get("month") + 1  # L1507-1517
            year = cl.get("year")
            t = -1
            if year > self.max_year:  # test for expressions that never generate a valid fire date
                return None

            st = self.months.ceiling(mon)  # L1519-1541: get month
            if st is not None:
                t = mon
                mon = st
            else:
                mon = self.months.first()
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
            st = self.years.ceiling(year)
            if st is not None:
                t = year
                year = st
            else:
                return None  # ran out of years...
            if year != t:
                cl.set("second", 0)
                cl.set("minute", 0)
                cl.set("hour", 0)
                cl.set("day", 1)
                cl.set("month", 0)
                cl.set("year", year)
                continue
            cl.set("year", year)

            got_one = True  # L1568

        return cl.get_time()  # L1571

    @staticmethod
    def set_calendar_hour(cal: _Calendar, hour: int) -> None:
        """L1581-1586 (in UTC the hour always sticks; 24 rolls into the next day)."""
        cal.set("hour", hour)
        if cal.get("hour") != hour and hour != 24:
            cal.set("hour", hour + 1)


def _shift_to_weekday(day: int, dow: int, ldom: int) -> int:
    """L1293-1301 = L1329-1337: a Saturday moves back a day (forward two on the 1st), a Sunday forward
    a day (back two on the month's last day). ``dow`` is of the leniently rolled date."""
    if dow == _SATURDAY and day == 1:
        day += 2
    elif dow == _SATURDAY:
        day -= 1
    elif dow == _SUNDAY and day == ldom:
        day -= 2
    elif dow == _SUNDAY:
        day += 1
    return day


# ------------------------------------------------------------------- helpers


def to_epoch(year: int, month: int, day: int, hour: int = 0, minute: int = 0, second: int = 0) -> int:
    """Epoch seconds of a UTC wall time."""
    return (dt.date(year, month, day).toordinal() - _EPOCH_ORDINAL) * 86400 + hour * 3600 + minute * 60 + second


def from_epoch(epoch_s: int) -> str:
    """``'YYYY-MM-DDTHH:MM:SS'`` of epoch seconds (UTC)."""
    return (dt.datetime(1970, 1, 1) + dt.timedelta(seconds=epoch_s)).isoformat()


def fires_after(cron: CronExpression, after: int, n: int, end: int | None = None) -> list[int]:
    """Up to ``n`` successive ``getTimeAfter`` results, starting strictly after ``after``, stopping before ``end``.

    This is how a ``CronTrigger`` walks its fire times (``CronTriggerImpl.getFireTimeAfter`` calls
    ``getTimeAfter`` on the previous fire time).
    """
    out: list[int] = []
    t = after
    while len(out) < n:
        nxt = cron.get_time_after(t)
        if nxt is None or (end is not None and nxt >= end):
            break
        out.append(nxt)
        t = nxt
    return out
