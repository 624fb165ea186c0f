"""The grammar of systemd calendar expressions (``OnCalendar=``): parsed, checked and printed as systemd does.

Ported from systemd's ``src/shared/calendarspec.c`` (``calendar_spec_from_string``,
``calendar_spec_normalize``, ``chain_valid``, ``format_chain``): :func:`parse`
gives the fields of an :class:`~calsim.rules.oncalendar.OnCalendar`, each part
a *chain* of ``(start, stop, repeat)`` items (None: ``*``), and refuses what
systemd refuses (:class:`Bad`, with what is wrong); :func:`format_chain` and
:func:`format_weekdays` print a part as ``systemd-analyze calendar``'s
"Normalized form" does.
"""

from __future__ import annotations

import re

import numpy as np

from ..errors import CalsimError, RuleError
from ..times import US

__all__ = ["parse", "Bad", "error", "count_values", "format_chain", "format_weekdays", "Chain", "MIN_YEAR",
           "MAX_YEAR", "PREFIX", "ALL_WEEKDAYS"]

PREFIX = "OnCalendar="
MIN_YEAR, MAX_YEAR = 1970, 2199  # calendarspec.c
MAX_PER_DAY = 1_000_000
_COMPONENTS_MAX = 240  # CALENDARSPEC_COMPONENTS_MAX
_INT_MAX = 2**31 - 1
_WEEKDAYS = (("monday", 0), ("mon", 0), ("tuesday", 1), ("tue", 1), ("wednesday", 2), ("wed", 2),
             ("thursday", 3), ("thu", 3), ("friday", 4), ("fri", 4), ("saturday", 5), ("sat", 5),
             ("sunday", 6), ("sun", 6))
_DAY_NAMES = ("Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun")
ALL_WEEKDAYS = 127
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


class Bad(Exception):
    """A parse failure inside this module: turned into one RuleError naming the expression."""


def error(text: str, what: str) -> RuleError:
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
        raise Bad(f"{part}: expected a number at {got!r} (allowed *, values, a..b ranges, /repetitions)")
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
                raise Bad(f"{part}: a decimal point needs digits after it")
            digits = frac.group()
            add = int(digits[:6].ljust(6, "0")) + (1 if len(digits) > 6 and digits[6] >= "5" else 0)
            value += add
            cur.i += len(digits)
    if value > _INT_MAX:
        raise Bad(f"{part}: value {m.group()!r} is too large")
    return value


def _chain(cur: _Cursor, usec: bool, part: str) -> Chain:
    """``parse_chain``/``prepend_component``: ``*`` or a comma list of ``a``, ``a..b``, ``a/r``, ``a..b/r``."""
    if cur.peek() == "*":
        cur.i += 1
        return ((0, -1, US),) if usec else None
    items: list[tuple[int, int, int]] = []
    while True:
        if len(items) > _COMPONENTS_MAX:
            raise Bad(f"{part}: more than {_COMPONENTS_MAX} list items")
        start, stop, repeat = _decimal(cur, usec, part), -1, 0
        if cur.peek() == "." and cur.peek(1) == ".":
            cur.i += 2
            stop = _decimal(cur, usec, part)
            repeat = US if usec else 1
        if cur.peek() == "/":
            cur.i += 1
            repeat = _decimal(cur, usec, part)
            if repeat == 0:
                raise Bad(f"{part}: repetition /0 (allowed a repetition of more than 0)")
        elif usec and stop >= 0 and start + repeat > stop:
            raise Bad(f"{part}: range shorter than one second needs a /repetition")
        if cur.peek() not in ("", " ", ",", "-", "~", ":"):
            raise Bad(f"{part}: unexpected {cur.peek()!r} (allowed *, values, a..b ranges, /repetitions, lists)")
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
            raise Bad(f"weekday: expected a weekday name at {cur.s[cur.i:cur.i + 12]!r} (allowed Mon..Sun)")
        nxt = cur.peek(len(name))
        if nxt not in ("", "-", ".", ",", " "):
            raise Bad(f"weekday: {cur.s[cur.i:cur.i + len(name) + 1]!r} is not a weekday (allowed Mon..Sun "
                       "or Monday..Sunday, lists with ',' and ranges with '..')")
        bits |= 1 << nr
        if last >= 0:
            if last > nr:
                raise Bad(f"weekday: range ending at {_DAY_NAMES[nr]} is reversed (allowed Mon..Sun order)")
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
                raise Bad("weekday: a range is written 'Mon..Fri' (one range per item)")
            last = nr
            cur.i += 2
        elif c == "-":  # systemd keeps '-' ranges for backwards compatibility
            if last >= 0:
                raise Bad("weekday: a range is written 'Mon..Fri' (one range per item)")
            last = nr
            cur.i += 1
        elif c == ",":
            last = -1
            cur.i += 1
        if cur.peek() in ("", " "):  # a trailing comma is allowed, an open range is not
            cur.skip_spaces()
            if last >= 0:
                raise Bad("weekday: the range has no end (allowed 'Mon..Fri')")
            return bits
        first = False


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
            raise Bad(f"timestamp: expected @ and whole seconds since 1970, got {cur.s[cur.i:cur.i + 24]!r}")
        value = int(m.group(1)) if len(m.group(1)) <= 20 else 2**63
        if value >= 2**63:
            raise Bad(f"timestamp: @{value} is too large")
        cur.i = len(cur.s)
        t = np.datetime64(value, "s").astype(object) if value < 253402300800 else None
        if t is None:
            raise Bad(f"timestamp: @{value} is after year {MAX_YEAR}")
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
        raise Bad(f"date: unexpected {cur.peek()!r} (allowed year-month-day or month-day, '~' before the day)")
    cur.i += 1
    second = _chain(cur, False, "date")
    if cur.peek() in ("", " "):
        cur.skip_spaces()
        return None, None, first, second, eom
    if eom:
        raise Bad("date: '~' goes before the day, the last part of the date")
    eom = cur.peek() == "~"
    if not eom and cur.peek() != "-":
        raise Bad(f"date: unexpected {cur.peek()!r} (allowed year-month-day or month-day)")
    cur.i += 1
    third = _chain(cur, False, "date")
    if cur.peek() not in ("", " "):
        raise Bad(f"date: unexpected {cur.peek()!r} after the day")
    cur.skip_spaces()
    return None, first, second, third, eom


def _time(cur: _Cursor) -> tuple[Chain, Chain, Chain]:
    """``parse_calendar_time``: hour:minute[:second]; nothing means 00:00:00."""
    zero = ((0, -1, 0),)
    if cur.peek() == "":
        return zero, zero, zero
    hours = _chain(cur, False, "hour")
    if cur.peek() != ":":
        raise Bad(f"time: expected ':' after the hour, got {cur.peek() or 'the end'!r} (allowed hour:minute[:second])")
    cur.i += 1
    minutes = _chain(cur, False, "minute")
    if cur.peek() == "":
        return hours, minutes, zero
    if cur.peek() != ":":
        raise Bad(f"time: unexpected {cur.peek()!r} after the minute (allowed hour:minute[:second])")
    cur.i += 1
    seconds = _chain(cur, True, "second")
    if cur.peek() != "":
        raise Bad(f"time: unexpected {cur.s[cur.i:cur.i + 20]!r} after the seconds")
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
            raise Bad(f"{part} {item!r} is out of range (allowed {shown})")
        if repeat > hi - lo:
            raise Bad(f"{part} {item!r} repeats every {repeat / US if usec else repeat:g}, more than the range "
                       f"{shown}")
        if stop >= 0 and start + repeat > stop:
            raise Bad(f"{part} range {item!r} is reversed (allowed a..b with a < b)")
        if stop < 0 and eom and start - repeat < lo:
            raise Bad(f"{part} {item!r} repeats past the month's last day")
        if stop < 0 and not eom and start + repeat > hi:
            raise Bad(f"{part} {item!r} never repeats within {shown}")


def count_values(chain: Chain, size: int) -> int:
    """How many values ``< size`` the chain has, at most (overlapping items counted twice): no arrays built."""
    if chain is None:
        return size
    total = 0
    for start, stop, repeat in chain:
        end = min(stop if stop >= 0 else size - 1, size - 1)
        total += 1 if repeat == 0 else max(0, (end - start) // repeat + 1)
    return total


def format_weekdays(bits: int) -> str:
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
    """One item of ``format_chain`` (C's ``%`` on a negative stop gives a negative remainder)."""
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


def format_chain(chain: Chain, width: int, usec: bool) -> str:
    if chain is None or (usec and any(c == (0, -1, US) for c in chain)):
        return "*"
    return ",".join(_format_item(a, b, r, usec, width) for a, b, r in chain)


def parse(expr: str) -> tuple:
    """``calendar_spec_from_string`` then ``calendar_spec_normalize`` and ``calendar_spec_valid``: the fields of
    an :class:`~calsim.rules.oncalendar.OnCalendar` after its text (weekday bits, years, months, days, end of
    month, hours, minutes, seconds, zone). Raises :class:`Bad` with what is wrong."""
    zone = None
    body = expr
    if body.lower().endswith(" utc"):
        zone, body = "UTC", body[:-4]
    else:
        space = body.rfind(" ")
        if space != -1 and _is_zone(body[space + 1:]):
            zone, body = body[space + 1:], body[:space]
    if not body:
        raise Bad("nothing before the zone")
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
            raise Bad(f"unexpected {cur.s[cur.i:cur.i + 20]!r} after the expression")
    if weekday_bits <= 0 or weekday_bits >= ALL_WEEKDAYS:
        weekday_bits = -1
    if end_of_month and days is None:
        end_of_month = False
    years = _fix_years(years)
    chains = [_normalize(c) for c in (years, months, days, hours, minutes, seconds)]
    limits = (("year", MIN_YEAR, MAX_YEAR, False), ("month", 1, 12, False), ("day", 1, 31, end_of_month),
              ("hour", 0, 23, False), ("minute", 0, 59, False), ("second", 0, 60 * US - 1, False))
    for chain, (part, lo, hi, eom) in zip(chains, limits):
        _check(chain, part, lo, hi, eom)
    per_day = count_values(chains[3], 24) * count_values(chains[4], 60) * count_values(chains[5], 60 * US)
    if per_day > MAX_PER_DAY:
        raise Bad(f"{per_day:,} elapses a day (calsim allows at most {MAX_PER_DAY:,})")
    return (weekday_bits, *chains[:3], end_of_month, *chains[3:], zone)
