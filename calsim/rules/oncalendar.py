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
``tests/test_systemd_calendar.py``):

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

import re
from dataclasses import dataclass

import numpy as np

from ..errors import CalsimError, RuleError
from ._rrule_expand import US, Days, day_table_wall_times, memo
from .calendarspec import next_usec

__all__ = ["OnCalendar", "PREFIX"]

PREFIX = "OnCalendar="
EMULATES = "systemd"  # the note suffix of rows whose DST the walk decides (dst_lost:systemd)
MIN_YEAR, MAX_YEAR = 1970, 2199  # calendarspec.c
MAX_PER_DAY = 1_000_000
_COMPONENTS_MAX = 240  # CALENDARSPEC_COMPONENTS_MAX
_INT_MAX = 2**31 - 1
_WEEKDAYS = (("monday", 0), ("mon", 0), ("tuesday", 1), ("tue", 1), ("wednesday", 2), ("wed", 2),
             ("thursday", 3), ("thu", 3), ("friday", 4), ("fri", 4), ("saturday", 5), ("sat", 5),
             ("sunday", 6), ("sun", 6))
_DAY_NAMES = ("Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun")
_ALL_WEEKDAYS = 127
# calendar_spec_from_string: shorthand -> (months, days, hours, minutes, seconds, weekday bits);
# None is '*'. Seconds are µs.
_SHORTHANDS: dict[str, tuple] = {
    "minutely": (None, None, None, None, (0,), 0),
    "hourly": (None, None, None, (0,), (0,), 0),
    "daily": (None, None, (0,), (0,), (0,), 0),
    "monthly": (None, (1,), (0,), (0,), (0,), 0),
    "weekly": (None, None, (0,), (0,), (0,), 1),
    "quarterly": ((1, 4, 7, 10), (1,), (0,), (0,), (0,), 0),
}
for _name in ("annually", "yearly", "anually"):
    _SHORTHANDS[_name] = ((1,), (1,), (0,), (0,), (0,), 0)
for _name in ("biannually", "bi-annually", "semiannually", "semi-annually"):
    _SHORTHANDS[_name] = ((1, 7), (1,), (0,), (0,), (0,), 0)
_SHORTHAND_LIST = "minutely, hourly, daily, weekly, monthly, yearly, annually, quarterly or semiannually"

Chain = tuple[tuple[int, int, int], ...] | None  # (start, stop, repeat) items; None: '*'


class _Bad(Exception):
    """A parse failure inside this module: turned into one RuleError naming the expression."""


def _error(text: str, what: str) -> RuleError:
    shown = text if len(text) <= 80 else text[:77] + "..."
    return RuleError(f"OnCalendar: {what} in {shown!r}")


class _Cursor:
    """The parser's position in the text (``const char *p`` of calendarspec.c)."""

    def __init__(self, text: str) -> None:
        self.s, self.i = text, 0

    def peek(self, k: int = 0) -> str:
        j = self.i + k
        return self.s[j] if j < len(self.s) else ""  # "" plays C's NUL

    def skip_spaces(self) -> None:
        while self.peek() == " ":
            self.i += 1


def _decimal(cur: _Cursor, usec: bool, part: str) -> int:
    """``parse_component_decimal``: digits (seconds: with up to 6 decimals, the 7th rounds)."""
    m = re.match(r"\d+", cur.s[cur.i:])
    if m is None:
        got = cur.peek() or "the end"
        raise _Bad(f"{part}: expected a number at {got!r} (allowed *, values, a..b ranges, /repetitions)")
    # systemd reads the digits with strtou32 and refuses an overflow; 20 digits already overflow,
    # and Python's int() refuses more than 4,300 of them with a ValueError.
    value = int(m.group()) if len(m.group()) <= 20 else 10**20
    cur.i += len(m.group())
    if usec:
        value *= US
        if cur.peek() == "." and cur.peek(1) != ".":
            cur.i += 1
            frac = re.match(r"\d+", cur.s[cur.i:])
            if frac is None:
                raise _Bad(f"{part}: a decimal point needs digits after it")
            digits = frac.group()
            add = int(digits[:6].ljust(6, "0")) + (1 if len(digits) > 6 and digits[6] >= "5" else 0)
            value += add
            cur.i += len(digits)
    if value > _INT_MAX:
        raise _Bad(f"{part}: value {m.group()!r} is too large")
    return value


def _chain(cur: _Cursor, usec: bool, part: str) -> Chain:
    """``parse_chain``/``prepend_component``: ``*`` or a comma list of ``a``, ``a..b``, ``a/r``, ``a..b/r``."""
    if cur.peek() == "*":
        cur.i += 1
        return ((0, -1, US),) if usec else None
    items = []
    while True:
        if len(items) > _COMPONENTS_MAX:
            raise _Bad(f"{part}: more than {_COMPONENTS_MAX} list items")
        start, stop, repeat = _decimal(cur, usec, part), -1, 0
        if cur.peek() == "." and cur.peek(1) == ".":
            cur.i += 2
            stop = _decimal(cur, usec, part)
            repeat = US if usec else 1
        if cur.peek() == "/":
            cur.i += 1
            repeat = _decimal(cur, usec, part)
            if repeat == 0:
                raise _Bad(f"{part}: repetition /0 (allowed a repetition of more than 0)")
        elif usec and stop >= 0 and start + repeat > stop:
            raise _Bad(f"{part}: range shorter than one second needs a /repetition")
        if cur.peek() not in ("", " ", ",", "-", "~", ":"):
            raise _Bad(f"{part}: unexpected {cur.peek()!r} (allowed *, values, a..b ranges, /repetitions, lists)")
        items.append((start, stop, repeat))
        if cur.peek() != ",":
            return tuple(items)
        cur.i += 1


def _weekdays(cur: _Cursor) -> int:
    """``parse_weekdays``: bits Mon=1 .. Sun=64; 0 when the text does not start with a weekday."""
    bits, last, first = 0, -1, True
    while True:
        low = cur.s[cur.i:].lower()
        for name, nr in _WEEKDAYS:  # noqa: B007 (nr is read after the break)
            if low.startswith(name):
                break
        else:
            if first:
                return 0
            raise _Bad(f"weekday: expected a weekday name at {cur.s[cur.i:cur.i + 12]!r} (allowed Mon..Sun)")
        nxt = cur.peek(len(name))
        if nxt not in ("", "-", ".", ",", " "):
            raise _Bad(f"weekday: {cur.s[cur.i:cur.i + len(name) + 1]!r} is not a weekday (allowed Mon..Sun "
                       "or Monday..Sunday, lists with ',' and ranges with '..')")
        bits |= 1 << nr
        if last >= 0:
            if last > nr:
                raise _Bad(f"weekday: range ending at {_DAY_NAMES[nr]} is reversed (allowed Mon..Sun order)")
            for j in range(last + 1, nr):
                bits |= 1 << j
        cur.i += len(name)
        c = cur.peek()
        if c == "":
            return bits
        if c == " ":
            cur.skip_spaces()
            return bits
        if c == ".":
            if last >= 0 or cur.peek(1) != ".":
                raise _Bad("weekday: a range is written 'Mon..Fri' (one range per item)")
            last = nr
            cur.i += 2
        elif c == "-":  # systemd keeps '-' ranges for backwards compatibility
            if last >= 0:
                raise _Bad("weekday: a range is written 'Mon..Fri' (one range per item)")
            last = nr
            cur.i += 1
        elif c == ",":
            last = -1
            cur.i += 1
        if cur.peek() in ("", " "):  # a trailing comma is allowed, an open range is not
            cur.skip_spaces()
            if last >= 0:
                raise _Bad("weekday: the range has no end (allowed 'Mon..Fri')")
            return bits
        first = False


@dataclass(frozen=True)
class OnCalendar:
    """A parsed systemd calendar expression; build it with :meth:`OnCalendar.parse`.

    Attributes hold systemd's normalised chains of ``(start, stop, repeat)``
    (``stop`` -1: none; ``repeat`` 0: a single value; ``None``: ``*``):
    ``years``, ``months``, ``days`` (counted from the month's end when
    ``end_of_month``), ``hours``, ``minutes``, ``seconds`` (µs), the weekday
    bits (Mon = 1 .. Sun = 64, -1 any) and ``zone`` (a trailing zone, or
    None: the schedule's).
    """

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
            raise _error(text, "empty expression (allowed e.g. 'daily', 'Mon..Fri *-*-* 09:00')")
        try:
            return _parse(expr)
        except _Bad as exc:
            raise _error(expr, str(exc)) from None

    def normalized(self) -> str:
        """systemd's normalized form (``calendar_spec_to_string``), as ``systemd-analyze calendar`` prints it."""
        out = []
        if 0 < self.weekday_bits < _ALL_WEEKDAYS:
            out.append(_format_weekdays(self.weekday_bits) + " ")
        out.append(_format_chain(self.years, 4, False) + "-" + _format_chain(self.months, 2, False))
        out.append(("~" if self.end_of_month else "-") + _format_chain(self.days, 2, False) + " ")
        out.append(_format_chain(self.hours, 2, False) + ":" + _format_chain(self.minutes, 2, False) + ":")
        out.append(_format_chain(self.seconds, 2, True))
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
        if 0 < self.weekday_bits < _ALL_WEEKDAYS:
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


def _parse(expr: str) -> OnCalendar:
    """``calendar_spec_from_string`` then ``calendar_spec_normalize`` and ``calendar_spec_valid``."""
    zone = None
    body = expr
    if body.lower().endswith(" utc"):
        zone, body = "UTC", body[:-4]
    else:
        space = body.rfind(" ")
        if space != -1 and _is_zone(body[space + 1:]):
            zone, body = body[space + 1:], body[:space]
    if not body:
        raise _Bad("nothing before the zone")
    weekday_bits = 0
    years = months = days = hours = minutes = seconds = None
    end_of_month = False
    short = _SHORTHANDS.get(body.lower())
    if short is not None:
        m, d, h, mi, s, weekday_bits = short
        months, days, hours, minutes, seconds = (None if v is None else tuple((x, -1, 0) for x in v)
                                                 for v in (m, d, h, mi, s))
    else:
        cur = _Cursor(body)
        weekday_bits = _weekdays(cur)
        date_done, years, months, days, end_of_month = _date(cur, body, zone)
        if date_done:  # @epoch: an instant, read in UTC
            zone = "UTC"
            hours, minutes, seconds = date_done
        else:
            hours, minutes, seconds = _time(cur)
        if cur.peek() != "":
            raise _Bad(f"unexpected {cur.s[cur.i:cur.i + 20]!r} after the expression")
    if weekday_bits <= 0 or weekday_bits >= _ALL_WEEKDAYS:
        weekday_bits = -1
    if end_of_month and days is None:
        end_of_month = False
    years = _fix_years(years)
    chains = [_normalize(c) for c in (years, months, days, hours, minutes, seconds)]
    limits = (("year", MIN_YEAR, MAX_YEAR, False), ("month", 1, 12, False), ("day", 1, 31, end_of_month),
              ("hour", 0, 23, False), ("minute", 0, 59, False), ("second", 0, 60 * US - 1, False))
    for chain, (part, lo, hi, eom) in zip(chains, limits):
        _check(chain, part, lo, hi, eom)
    rule = OnCalendar(expr, weekday_bits, *chains[:3], end_of_month, *chains[3:], zone)
    per_day = _count(rule.hours, 24) * _count(rule.minutes, 60) * _count(rule.seconds, 60 * US)
    if per_day > MAX_PER_DAY:
        raise _Bad(f"{per_day:,} elapses a day (calsim allows at most {MAX_PER_DAY:,})")
    return rule


def _is_zone(name: str) -> bool:
    from ..tz.release import release

    if not name or not re.fullmatch(r"[A-Za-z][A-Za-z0-9_+\-/]*", name):
        return False
    try:
        release().table(name)
    except CalsimError:
        return False
    return True


def _date(cur: _Cursor, body: str, zone: str | None):
    """``parse_date``: ``(epoch time chains or None, years, months, days, end_of_month)``."""
    if cur.peek() == "":
        return None, None, None, None, False
    if cur.peek() == "@":
        m = re.match(r"@(\d+)$", cur.s[cur.i:])
        if m is None:
            raise _Bad(f"timestamp: expected @ and whole seconds since 1970, got {cur.s[cur.i:cur.i + 24]!r}")
        value = int(m.group(1)) if len(m.group(1)) <= 20 else 2**63
        if value >= 2**63:
            raise _Bad(f"timestamp: @{value} is too large")
        cur.i = len(cur.s)
        t = np.datetime64(value, "s").astype(object) if value < 253402300800 else None
        if t is None:
            raise _Bad(f"timestamp: @{value} is after year {MAX_YEAR}")
        def const(v: int) -> Chain:  # calendarspec_from_time_t's const_chain()
            return ((v, -1, 0),)

        return (const(t.hour), const(t.minute), const(t.second * US)), const(t.year), const(t.month), \
            const(t.day), False
    save = cur.i
    first = _chain(cur, False, "date")
    if cur.peek() in ("", ":"):  # a time, not a date
        cur.i = save
        return None, None, None, None, False
    eom = cur.peek() == "~"
    if not eom and cur.peek() != "-":
        raise _Bad(f"date: unexpected {cur.peek()!r} (allowed year-month-day or month-day, '~' before the day)")
    cur.i += 1
    second = _chain(cur, False, "date")
    if cur.peek() in ("", " "):
        cur.skip_spaces()
        return None, None, first, second, eom
    if eom:
        raise _Bad("date: '~' goes before the day, the last part of the date")
    eom = cur.peek() == "~"
    if not eom and cur.peek() != "-":
        raise _Bad(f"date: unexpected {cur.peek()!r} (allowed year-month-day or month-day)")
    cur.i += 1
    third = _chain(cur, False, "date")
    if cur.peek() not in ("", " "):
        raise _Bad(f"date: unexpected {cur.peek()!r} after the day")
    cur.skip_spaces()
    return None, first, second, third, eom


def _time(cur: _Cursor) -> tuple[Chain, Chain, Chain]:
    """``parse_calendar_time``: hour:minute[:second]; nothing means 00:00:00."""
    zero = ((0, -1, 0),)
    if cur.peek() == "":
        return zero, zero, zero
    hours = _chain(cur, False, "hour")
    if cur.peek() != ":":
        raise _Bad(f"time: expected ':' after the hour, got {cur.peek() or 'the end'!r} (allowed hour:minute[:second])")
    cur.i += 1
    minutes = _chain(cur, False, "minute")
    if cur.peek() == "":
        return hours, minutes, zero
    if cur.peek() != ":":
        raise _Bad(f"time: unexpected {cur.peek()!r} after the minute (allowed hour:minute[:second])")
    cur.i += 1
    seconds = _chain(cur, True, "second")
    if cur.peek() != "":
        raise _Bad(f"time: unexpected {cur.s[cur.i:cur.i + 20]!r} after the seconds")
    return hours, minutes, seconds


def _fix_years(chain: Chain) -> Chain:
    """``fix_year``: 12 -> 2012, 89 -> 1989 (start and stop, not the repetition)."""
    if chain is None:
        return None

    def fix(v: int) -> int:
        return v + 2000 if 0 <= v < 70 else v + 1900 if 70 <= v < 100 else v

    return tuple((fix(a), fix(b), r) for a, b, r in chain)


def _normalize(chain: Chain) -> Chain:
    """``normalize_chain``: trim ``stop`` to a multiple of ``repeat``, single values, sorted, unique."""
    if chain is None:
        return None
    out = []
    for start, stop, repeat in chain:
        if stop > start and repeat > 0:
            stop -= (stop - start) % repeat
        if (stop > start and repeat > 0 and start + repeat > stop) or start == stop:
            repeat, stop = 0, -1
        out.append((start, stop, repeat))
    return tuple(sorted(set(out)))


def _check(chain: Chain, part: str, lo: int, hi: int, eom: bool) -> None:
    """``chain_valid``, with a message naming the part and the allowed values."""
    if chain is None:
        return
    usec = part == "second"
    for start, stop, repeat in chain:
        if eom:
            # systemd: "Forbid dates more than 28 days from the end of the month". Its
            # chain_valid() passes the lowered bound on to the next item, so each item
            # of a '~' list is allowed 3 days less (~12,13 is valid, ~12,26 is not).
            hi -= 3
        shown = f"{lo}..{hi / US:g}" if usec else f"~1..~{hi}" if eom else f"{lo}..{hi}"
        item = ("~" if eom else "") + _format_item(start, stop, repeat, usec)
        if not lo <= start <= hi or (stop >= 0 and not lo <= stop <= hi):
            raise _Bad(f"{part} {item!r} is out of range (allowed {shown})")
        if repeat > hi - lo:
            raise _Bad(f"{part} {item!r} repeats every {repeat / US if usec else repeat:g}, more than the range "
                       f"{shown}")
        if stop >= 0 and start + repeat > stop:
            raise _Bad(f"{part} range {item!r} is reversed (allowed a..b with a < b)")
        if stop < 0 and eom and start - repeat < lo:
            raise _Bad(f"{part} {item!r} repeats past the month's last day")
        if stop < 0 and not eom and start + repeat > hi:
            raise _Bad(f"{part} {item!r} never repeats within {shown}")


def _count(chain: Chain, size: int) -> int:
    """How many values ``< size`` the chain has, at most (overlapping items counted twice): no arrays built."""
    if chain is None:
        return size
    total = 0
    for start, stop, repeat in chain:
        end = min(stop if stop >= 0 else size - 1, size - 1)
        total += 1 if repeat == 0 else max(0, (end - start) // repeat + 1)
    return total


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
    for a in out:
        a.setflags(write=False)  # shared through the cache
    return out


def _format_weekdays(bits: int) -> str:
    """``format_weekdays``: runs of three or more as ``Mon..Wed``, two as ``Mon,Tue``."""
    out, need_comma, last = [], False, -1
    for x in range(8):
        on = x < 7 and bits & (1 << x)
        if on and last < 0:
            out.append(("," if need_comma else "") + _DAY_NAMES[x])
            need_comma, last = True, x
        elif not on and last >= 0:
            if x > last + 1:
                out.append((".." if x > last + 2 else ",") + _DAY_NAMES[x - 1])
            last = -1
    return "".join(out)


def _format_item(start: int, stop: int, repeat: int, usec: bool, width: int = 2) -> str:
    """One item of ``_format_chain`` (C's ``%`` on a negative stop gives a negative remainder)."""
    d = US if usec else 1
    s = f"{start // d:0{width}d}" + (f".{start % d:06d}" if start % d else "")
    if stop > 0:
        s += f"..{stop // d:0{width}d}"
        if stop % d:
            s += f".{stop % d:06d}"
    if repeat > 0 and not (stop > 0 and repeat == d):
        s += f"/{repeat // d}"
    if repeat % d:
        s += f".{repeat % d:06d}"
    return s


def _format_chain(chain: Chain, width: int, usec: bool) -> str:
    if chain is None or (usec and any(c == (0, -1, US) for c in chain)):
        return "*"
    return ",".join(_format_item(a, b, r, usec, width) for a, b, r in chain)
