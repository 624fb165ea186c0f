"""RFC 5545 §3.3.10 recurrence rules (RRULE), expanded to nominal wall times with numpy.

:class:`RRule` parses a rule (``"FREQ=MONTHLY;BYDAY=-1FR"``, with or without
the ``RRULE:`` prefix) and expands it to sorted ``int64`` microseconds since
1970-01-01T00:00 of **wall-clock** time (the unit of ``numpy.datetime64[us]``
and ``pl.Datetime("us")``). Nothing here knows about zones: 02:30 on a
spring-forward day is produced, and :mod:`calsim.resolve` decides what it
becomes. :func:`parse_block` reads a ``DTSTART``/``RRULE`` block.

Semantics: every rule part of RFC 5545 §3.3.10 (FREQ ``SECONDLY``..``YEARLY``,
INTERVAL, COUNT, UNTIL, BYSECOND, BYMINUTE, BYHOUR, BYDAY with ordinals,
BYMONTHDAY, BYYEARDAY, BYWEEKNO, BYMONTH, BYSETPOS, WKST), with the
expand/limit table on p. 44. DTSTART supplies what the rule leaves out
("Information, not contained in the rule, ... [is] derived from" DTSTART):
its time of day, its day of month (MONTHLY, YEARLY), its month (YEARLY) and
its weekday (WEEKLY). python-dateutil's ``rrulestr`` is the
reference for everything RFC 5545 leaves open; the tests compare the two.

Where calsim differs from RFC 5545 or from dateutil (each has a pinned test):

* **DTSTART** is an instance only when it matches the rule, as in dateutil
  (RFC 5545 §3.3.10: "The DTSTART property value always counts as the first
  occurrence"). A fractional second of DTSTART is dropped, as dateutil does:
  DATE-TIME has whole seconds.
* **COUNT and gaps.** :meth:`RRule.candidates` ignores COUNT and UNTIL: COUNT
  counts only instances that survive the DST-gap policy (RFC 5545 §3.3.10,
  DESIGN.md §2) and a ``Z`` UNTIL is compared with resolved instants, both
  of which need the zone, so the caller applies them. :meth:`RRule.wall_times`
  applies them on wall times (right in a zone without DST).
* **UNTIL as a DATE** (``UNTIL=20261231``) runs through the end of that day;
  dateutil stops at its midnight.
* **BYDAY mixing** ``MO,1TU``: the union, as RFC 5545 lists; dateutil
  intersects the plain and the numbered weekdays and yields nothing.
* **WEEKLY with BYSETPOS**: the first week's set is the whole week, days
  before DTSTART included (then dropped), as for every other frequency;
  dateutil starts that one set at DTSTART's day.
* **BYWEEKNO** is ISO 8601 week numbering with WKST as the first day, in both
  directions: a negative value also matches the days of the next year's week
  it names (dateutil checks only ``1`` there).
* **Rejected, where dateutil accepts**: COUNT with UNTIL, BYDAY ordinals
  outside MONTHLY/YEARLY or with BYWEEKNO, BYMONTHDAY with WEEKLY, BYYEARDAY
  with DAILY/WEEKLY/MONTHLY, BYWEEKNO outside YEARLY, BYSETPOS alone: each a
  MUST or MUST NOT of RFC 5545 §3.3.10. ``BYSECOND=60`` (allowed by the
  grammar for leap seconds) is accepted and never matches: wall clocks here
  have no leap seconds; dateutil raises.

**invalid_day** (RFC 7529 SKIP names, DESIGN.md §2) for a day the month lacks,
named by BYMONTHDAY or by DTSTART's day in a MONTHLY/YEARLY rule (the 31st in
April, Feb 29/30; ``BYMONTHDAY=-31`` in a 30-day month): ``"omit"`` (default,
RFC 5545: no instance), ``"backward"`` (the last day of that month, note 1
``invalid_day_backward``), ``"forward"`` (the first day of the next month,
note 2 ``invalid_day_forward``), time of day kept. RFC 7529 (§4.1, SKIP)
moves an invalid date after the BYxxx expansion and before BYSETPOS; calsim
therefore takes BYMONTH and the period (for INTERVAL and BYSETPOS) from the
month that named the day, while the other day parts (BYDAY, BYYEARDAY,
BYWEEKNO) see the real, moved day. A moved day that is
already an instance is kept once, with note 0. ``BYYEARDAY=366`` in a common
year, ``BYWEEKNO=53`` in a 52-week year and a fifth Monday a month lacks stay
omitted in every mode: they name no day of a month.
"""

from __future__ import annotations

import datetime as dt
import re
from dataclasses import dataclass
from typing import ClassVar, get_args

import numpy as np

from ..errors import InputError, PolicyError, RuleError, choices
from .kind import InvalidDay, RuleKind
import calsim.rules._rrule_expand as _x
from .bounds import RRuleProfile, rrule_bound

__all__ = ["RRule", "InvalidDay", "FREQS", "WEEKDAYS"]

_INVALID_DAYS = get_args(InvalidDay)  # typing.get_args is slow enough to matter once per call
FREQS = ("SECONDLY", "MINUTELY", "HOURLY", "DAILY", "WEEKLY", "MONTHLY", "YEARLY")
WEEKDAYS = ("MO", "TU", "WE", "TH", "FR", "SA", "SU")
US = _x.US
DAY_US = _x.DAY_US
_EPOCH = dt.date(1970, 1, 1)
# Wall times outside years 1..9999 are never produced (the datetime range).
_MIN_US = (dt.date(1, 1, 1) - _EPOCH).days * DAY_US
_MAX_US = (dt.date(9999, 12, 31) - _EPOCH).days * DAY_US + DAY_US
# The plain-DAILY fast path keeps interval * DAY_US in int64 below this; larger
# intervals (at most one instance in any real window) take the general path.
_PLAIN_MAX_INTERVAL = 1_000_000
_WEEKDAY_NAMES = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")
_MONTH_NAMES = ("January", "February", "March", "April", "May", "June", "July",
                "August", "September", "October", "November", "December")

# name: (low, high, signed); signed parts also allow -high..-low (RFC 5545 §3.3.10 ABNF).
_RANGES = {
    "BYSECOND": (0, 60, False),
    "BYMINUTE": (0, 59, False),
    "BYHOUR": (0, 23, False),
    "BYMONTHDAY": (1, 31, True),
    "BYYEARDAY": (1, 366, True),
    "BYWEEKNO": (1, 53, True),
    "BYMONTH": (1, 12, False),
    "BYSETPOS": (1, 366, True),
}
_PARTS = ("FREQ", "UNTIL", "COUNT", "INTERVAL", *_RANGES, "BYDAY", "WKST")
_BYPARTS = tuple(p for p in _PARTS if p.startswith("BY"))
_ORDER = {f: i for i, f in enumerate(FREQS)}
_BYDAY_RE = re.compile(r"([+-]?)([0-9]{1,3})?(MO|TU|WE|TH|FR|SA|SU)", re.ASCII)
_INT_RE = re.compile(r"[+-]?[0-9]+", re.ASCII)
_DATE_RE = re.compile(r"([0-9]{4})([0-9]{2})([0-9]{2})(?:T([0-9]{2})([0-9]{2})([0-9]{2})(Z)?)?", re.ASCII)
_COUNT_UNTIL = ('RFC 5545 §3.3.10: "The UNTIL or COUNT rule parts are OPTIONAL, '
                "but they MUST NOT occur in the same 'recur'\"")


def _allowed(name: str) -> str:
    lo, hi, signed = _RANGES[name]
    return f"{lo}..{hi} or -{hi}..-{lo}" if signed else f"{lo}..{hi}"


def _int(token: str) -> int | None:
    """An ASCII decimal with optional sign; absurdly long ones are capped, not refused."""
    if not _INT_RE.fullmatch(token):
        return None
    sign = -1 if token[0] == "-" else 1
    digits = token.lstrip("+-").lstrip("0") or "0"
    return sign * (int(digits) if len(digits) <= 18 else 10**18)  # int() refuses > 4300 digits


def date_us(token: str) -> tuple[int, bool, bool] | None:
    """``YYYYMMDD[THHMMSS[Z]]`` -> (wall µs, is_date, is_utc), or None when malformed."""
    m = _DATE_RE.fullmatch(token)
    if not m:
        return None
    y, mo, d, hh, mi, ss, z = m.groups()
    try:
        day = (dt.date(int(y), int(mo), int(d)) - _EPOCH).days
        if hh is None:
            return day * DAY_US, True, False
        # RFC 5545 §3.3.12 allows second 60 (a leap second); a wall clock here has
        # none, so 23:59:60 is read as 23:59:59, the same bound for whole seconds.
        secs = dt.time(int(hh), int(mi), 59 if ss == "60" else int(ss))
    except ValueError:
        return None
    return day * DAY_US + (secs.hour * 3600 + secs.minute * 60 + secs.second) * US, False, z is not None


def _fmt_day(n: int, wd: int) -> str:
    return f"{n}{WEEKDAYS[wd]}" if n else WEEKDAYS[wd]


@dataclass(frozen=True)
class RRule(RuleKind):
    """One RFC 5545 recurrence rule; build it with :meth:`parse`.

    Parameters
    ----------
    text : str
        The rule as given (without a leading ``RRULE:``), quoted in messages.
    freq : {"SECONDLY", "MINUTELY", "HOURLY", "DAILY", "WEEKLY", "MONTHLY", "YEARLY"}
    interval : int
        Every ``interval``-th period, counted from DTSTART's period.
    count : int or None
        The number of instances (applied by :meth:`wall_times` or the caller).
    until : int or None
        Inclusive last instance, ``int64`` µs: wall clock when ``until_utc`` is
        False, else a UTC instant. A DATE UNTIL is stored as its day's last µs.
    until_utc : bool
        UNTIL was given with a trailing ``Z``.
    bysecond, byminute, byhour, bymonthday, byyearday, byweekno, bymonth, bysetpos : tuple of int
        Sorted unique values; ``()`` when the part is absent.
    byday : tuple of (int, int)
        ``(ordinal, weekday)`` pairs, weekday 0 = Monday, ordinal 0 = every.
    wkst : int
        First day of the week, 0 = Monday (the RFC 5545 default).

    Examples
    --------
    "The last work day of the month" (RFC 5545 §3.3.10, BYSETPOS), from a 17:00 DTSTART:

    >>> import numpy as np
    >>> rule = RRule.parse("FREQ=MONTHLY;BYDAY=MO,TU,WE,TH,FR;BYSETPOS=-1;COUNT=3")
    >>> start = int(np.datetime64("2026-01-01T17:00", "us").astype(np.int64))
    >>> wall, note = rule.wall_times(start, start + 400 * 86_400 * 10**6)
    >>> np.datetime_as_string(wall.astype("datetime64[us]"), unit="s").tolist()
    ['2026-01-30T17:00:00', '2026-02-27T17:00:00', '2026-03-31T17:00:00']
    >>> rule.explain()
    'every month on Monday, Tuesday, Wednesday, Thursday and Friday, position -1 of each set, 3 times'

    The 31st of each month, moved back to the last day where the month lacks it:

    >>> rule = RRule.parse("FREQ=MONTHLY;BYMONTHDAY=31")
    >>> wall, note = rule.candidates(start, start, start + 120 * 86_400 * 10**6, invalid_day="backward")
    >>> np.datetime_as_string(wall.astype("datetime64[us]"), unit="D").tolist(), note.tolist()
    (['2026-01-31', '2026-02-28', '2026-03-31', '2026-04-30'], [0, 1, 0, 1])
    """

    kind: ClassVar[str] = "rrule"
    anchored: ClassVar[bool] = True  # DTSTART is its first instance (RFC 5545 §3.8.5.3), not only a bound
    text: str
    freq: str
    interval: int = 1
    count: int | None = None
    until: int | None = None
    until_utc: bool = False
    bysecond: tuple[int, ...] = ()
    byminute: tuple[int, ...] = ()
    byhour: tuple[int, ...] = ()
    byday: tuple[tuple[int, int], ...] = ()
    bymonthday: tuple[int, ...] = ()
    byyearday: tuple[int, ...] = ()
    byweekno: tuple[int, ...] = ()
    bymonth: tuple[int, ...] = ()
    bysetpos: tuple[int, ...] = ()
    wkst: int = 0

    def _error(self, message: str) -> RuleError:
        return RuleError(f"rrule: {message} in {self.text!r}")

    def __post_init__(self) -> None:
        """Check the cross-part rules of RFC 5545 §3.3.10 (and ranges, for direct construction)."""
        if self.freq not in FREQS:
            raise self._error(f"FREQ={self.freq} is invalid (allowed {', '.join(FREQS)})")
        for name, value in (("INTERVAL", self.interval), ("COUNT", self.count)):
            if value is not None and value < 1:
                raise self._error(f"{name}={value} is invalid (allowed a positive integer)")
        for name in _RANGES:
            lo, hi, signed = _RANGES[name]
            for v in getattr(self, name.lower()):
                if not (lo <= v <= hi or (signed and -hi <= v <= -lo)):
                    raise self._error(f"{name}={v} is invalid (allowed {_allowed(name)})")
        for n, wd in self.byday:
            if not (0 <= wd <= 6 and -53 <= n <= 53):
                raise self._error(f"BYDAY=({n}, {wd}) is invalid (allowed weekday 0..6, ordinal -53..53)")
        if not 0 <= self.wkst <= 6:
            raise self._error(f"WKST={self.wkst} is invalid (allowed 0..6, 0 = MO)")
        if self.count is not None and self.until is not None:
            raise self._error(f"COUNT and UNTIL are both given ({_COUNT_UNTIL})")
        table = (  # RFC 5545 §3.3.10: the "N/A" cells of the p. 44 table, and its MUST NOTs
            ("BYMONTHDAY", self.bymonthday, ("WEEKLY",), "every FREQ but WEEKLY"),
            ("BYYEARDAY", self.byyearday, ("DAILY", "WEEKLY", "MONTHLY"),
             "FREQ=YEARLY, HOURLY, MINUTELY or SECONDLY"),
            ("BYWEEKNO", self.byweekno, tuple(f for f in FREQS if f != "YEARLY"), "FREQ=YEARLY only"),
        )
        for name, values, bad_freqs, allowed in table:
            if values and self.freq in bad_freqs:
                raise self._error(f"{name} is not allowed with FREQ={self.freq} "
                                  f"(RFC 5545 §3.3.10 p. 44; allowed with {allowed})")
        for n, wd in self.byday:
            if n and self.freq not in ("MONTHLY", "YEARLY"):
                raise self._error(
                    f"BYDAY={_fmt_day(n, wd)} is invalid with FREQ={self.freq} (RFC 5545 §3.3.10: a "
                    "numeric value MUST NOT be given when FREQ is not MONTHLY or YEARLY; "
                    f"allowed {WEEKDAYS[wd]})")
            if n and self.byweekno:
                raise self._error(
                    f"BYDAY={_fmt_day(n, wd)} is invalid with BYWEEKNO (RFC 5545 §3.3.10: a numeric "
                    "value MUST NOT be given with FREQ=YEARLY when BYWEEKNO is present; "
                    f"allowed {WEEKDAYS[wd]})")
        if self.bysetpos and not any(getattr(self, p.lower()) for p in _BYPARTS if p != "BYSETPOS"):
            raise self._error('BYSETPOS needs another BYxxx rule part (RFC 5545 §3.3.10: "It MUST '
                              'only be used in conjunction with another BYxxx rule part")')

    @classmethod
    def parse(cls, text: str) -> RRule:
        """Parse ``'FREQ=...;...'`` or ``'RRULE:FREQ=...'`` (names and values in any case).

        Raises
        ------
        RuleError
            For every malformed rule, naming the part, the bad value, what is
            allowed and quoting the rule; no other exception escapes for a str.
        """
        if not isinstance(text, str):
            raise RuleError(f"rrule: expected the rule as a str, got {type(text).__name__}")
        quoted = text.strip()

        def error(message: str) -> RuleError:
            return RuleError(f"rrule: {message} in {quoted!r}")

        body = quoted[6:] if quoted[:6].upper() == "RRULE:" else quoted
        if "\n" in body or "\r" in body:
            raise error("the rule spans several lines (use parse_block for a DTSTART/RRULE block)")
        if not body:
            raise error("the rule is empty (expected NAME=VALUE parts separated by ';', e.g. 'FREQ=DAILY')")
        values: dict[str, str] = {}
        for part in body.split(";"):
            name, eq, value = part.partition("=")
            name = name.upper()
            if not eq:
                raise error(f"rule part {part!r} has no '=' (expected NAME=VALUE parts separated by ';')")
            if name not in _PARTS:
                hint = " (use invalid_day= instead of RFC 7529 SKIP)" if name in ("SKIP", "RSCALE") else ""
                raise error(f"unknown rule part {name!r}{hint} (allowed {', '.join(_PARTS)})")
            if name in values:
                raise error(f"rule part {name} appears twice (RFC 5545 §3.3.10: it MUST NOT occur "
                            "more than once)")
            values[name] = value
        if "FREQ" not in values:
            raise error(f"FREQ is missing (required; allowed {', '.join(FREQS)})")
        kw: dict = {"text": body, "freq": values["FREQ"].upper()}
        if kw["freq"] not in FREQS:
            raise error(f"FREQ={values['FREQ']} is invalid (allowed {', '.join(FREQS)})")
        for name in ("INTERVAL", "COUNT"):
            if name in values:
                v = values[name]
                n = _int(v) if v[:1].isdigit() else None
                if n is None or n < 1:
                    raise error(f"{name}={v} is invalid (allowed a positive integer)")
                kw[name.lower()] = n
        if "UNTIL" in values:
            parsed = date_us(values["UNTIL"].upper())
            if parsed is None:
                raise error(f"UNTIL={values['UNTIL']} is invalid (allowed a date YYYYMMDD or a date-time "
                            "YYYYMMDDTHHMMSS with an optional Z, e.g. 20261231T235959Z)")
            us, is_date, kw["until_utc"] = parsed
            # Differs from dateutil (which stops at the date's midnight): a DATE UNTIL
            # includes the whole day, the reading of a DATE DTSTART's instances.
            kw["until"] = us + DAY_US - 1 if is_date else us
        for name in _RANGES:
            if name in values:
                lo, hi, signed = _RANGES[name]
                items = []
                for token in values[name].split(","):
                    if token == "":
                        raise error(f"{name} has an empty value (allowed {_allowed(name)})")
                    n = _int(token) if (signed or token[:1].isdigit()) else None
                    if n is None or not (lo <= n <= hi or (signed and -hi <= n <= -lo)):
                        raise error(f"{name}={token} is invalid (allowed {_allowed(name)})")
                    items.append(n)
                kw[name.lower()] = tuple(sorted(set(items)))
        if "BYDAY" in values:
            days = set()
            for token in values["BYDAY"].split(","):
                m = _BYDAY_RE.fullmatch(token.upper())
                n = int(m.group(2)) if m and m.group(2) else 0
                if not m or (m.group(2) is not None and not 1 <= n <= 53) or (m.group(1) and not m.group(2)):
                    raise error(f"BYDAY={token} is invalid (allowed MO, TU, WE, TH, FR, SA or SU, with an "
                                "optional ordinal 1..53 or -53..-1, e.g. 1MO or -1FR)")
                days.add((-n if m.group(1) == "-" else n, WEEKDAYS.index(m.group(3))))
            kw["byday"] = tuple(sorted(days, key=lambda p: (p[1], p[0])))
        if "WKST" in values:
            w = values["WKST"].upper()
            if w not in WEEKDAYS:
                raise error(f"WKST={values['WKST']} is invalid (allowed MO, TU, WE, TH, FR, SA or SU)")
            kw["wkst"] = WEEKDAYS.index(w)
        return cls(**kw)

    def _plan(self, dtstart_s: int, invalid_day: str) -> _x.Plan:
        """Fill the parts DTSTART supplies (RFC 5545 §3.3.10, as dateutil does)."""
        day, tod = divmod(dtstart_s, 86_400)
        date = _EPOCH + dt.timedelta(days=day)
        order = _ORDER[self.freq]
        bymonth, bymonthday, byday = self.bymonth, self.bymonthday, self.byday
        if not (self.byweekno or self.byyearday or self.bymonthday or self.byday):
            if self.freq == "YEARLY":
                bymonth = bymonth or (date.month,)
                bymonthday = (date.day,)
            elif self.freq == "MONTHLY":
                bymonthday = (date.day,)
            elif self.freq == "WEEKLY":
                byday = ((0, date.weekday()),)
        # "...the hour/minute/second are taken from DTSTART" when coarser than the part.
        hours = self.byhour or ((tod // 3600,) if order > _ORDER["HOURLY"] else ())
        minutes = self.byminute or ((tod // 60 % 60,) if order > _ORDER["MINUTELY"] else ())
        seconds = self.bysecond or ((tod % 60,) if order > _ORDER["SECONDLY"] else ())
        if self.freq in ("YEARLY", "MONTHLY"):
            p0 = (date.year - 1970) * 12 + date.month - 1
            p0 = p0 // 12 if self.freq == "YEARLY" else p0
        elif self.freq == "WEEKLY":
            p0 = (day + 3 - self.wkst) // 7
        elif self.freq == "DAILY":
            p0 = day
        else:
            p0 = dtstart_s // _x.UNIT_S[self.freq]
        return _x.Plan(self.freq, min(self.interval, _x.MAX_INTERVAL), self.wkst, bymonth, self.byweekno,
                       self.byyearday, bymonthday, byday, hours, minutes, seconds, self.bysetpos,
                       invalid_day, p0)

    @staticmethod
    def anchor(dtstart: int) -> int:
        """DTSTART as a rule reads it: wall µs with the fraction of a second dropped.

        RFC 5545 DATE-TIME (§3.3.5) has whole seconds, and python-dateutil's
        ``rrule.__init__`` does ``dtstart.replace(microsecond=0)``, so 09:00:00.5
        anchors a 09:00:00 rule whose first instance is 09:00:00
        (dateutil's ``testDTStartWithMicroseconds``). Every use of DTSTART,
        as the anchor and as the lower bound of the instances, goes through
        here, so the two can never disagree.

        >>> RRule.anchor(1_500_000), RRule.anchor(-500_000)
        (1000000, -1000000)
        """
        return int(dtstart) // US * US

    def candidates(self, dtstart: int, lo: int, hi: int,
                   invalid_day: InvalidDay = "omit") -> tuple[np.ndarray, np.ndarray]:
        """Every instance anchored at ``dtstart`` with wall time in ``[lo, hi)``, ignoring COUNT and UNTIL.

        Parameters
        ----------
        dtstart : int
            DTSTART, wall-clock µs since 1970-01-01; it sets the INTERVAL phase
            and the defaults of the absent BYxxx parts. A fractional second is
            dropped. Instances before it are never returned.
        lo, hi : int
            The half-open window of wall times, µs. ``lo`` far after ``dtstart``
            costs nothing extra: periods are counted arithmetically.
        invalid_day : {"omit", "backward", "forward"}
            What a day the month lacks becomes (see the module docstring).

        Returns
        -------
        wall : numpy.ndarray of int64
            Sorted unique wall times, µs.
        note : numpy.ndarray of int8
            Per instance: 0 none, 1 ``invalid_day_backward``, 2 ``invalid_day_forward``.

        Raises
        ------
        PolicyError
            For an unknown ``invalid_day``.
        """
        if invalid_day not in _INVALID_DAYS:
            raise PolicyError(f"invalid_day: unknown policy {invalid_day!r} "
                              f"(allowed: {choices(_INVALID_DAYS)})")
        # Differs from RFC 5545 §3.3.10 ("The DTSTART property value always counts as the first occurrence"):
        # like dateutil, DTSTART is an instance only when the rule matches it.
        if not _MIN_US <= int(dtstart) < _MAX_US:
            raise InputError(f"dtstart: {int(dtstart)} µs is outside years 1..9999 (allowed "
                             f"{_MIN_US}..{_MAX_US - 1})")
        dtstart_s = self.anchor(dtstart) // US
        start = max(int(lo), dtstart_s * US)
        end = min(int(hi), _MAX_US)
        if self._plain_daily() and self.interval <= _PLAIN_MAX_INTERVAL:
            # FREQ=DAILY with no BYxxx part (the commonest rule): DTSTART's
            # time of day on every interval-th day from DTSTART's, that is
            # DTSTART + k * interval days, k >= 0 -- what the general
            # expansion computes, without its per-call planning.
            step = self.interval * DAY_US
            w0 = dtstart_s * US
            k0 = -(-(start - w0) // step)  # start >= w0: k0 >= 0
            k1 = max(k0, -(-(end - w0) // step))
            wall = w0 + np.arange(k0, k1, dtype=np.int64) * step
            return wall, np.zeros(len(wall), np.int8)
        return _x.expand(self._plan(dtstart_s, invalid_day), start, end)

    def _plain_daily(self) -> bool:
        return self.freq == "DAILY" and not (
            self.bysecond or self.byminute or self.byhour or self.bymonthday or self.byyearday
            or self.byweekno or self.bymonth or self.bysetpos or self.byday)

    def bound(self) -> RRuleProfile:
        """The bound of its wall times over a span, for :mod:`calsim.limits` (rule-kind protocol)."""
        return rrule_bound(self)

    def wall_times(self, dtstart: int, hi: int,  # type: ignore[override]  # anchored: from DTSTART, with notes
                   invalid_day: InvalidDay = "omit") -> tuple[np.ndarray, np.ndarray]:
        """Instances from ``dtstart`` to ``hi`` with COUNT and UNTIL (inclusive) applied on wall times.

        Right for a zone without DST; in other zones the caller applies COUNT
        after the gap policy (DESIGN.md §2). A ``Z`` UNTIL is read here as a
        wall time in UTC.

        Returns
        -------
        wall : numpy.ndarray of int64
        note : numpy.ndarray of int8
            As :meth:`candidates`.
        """
        if self.until is not None:
            hi = min(int(hi), self.until + 1)
        wall, note = self.candidates(dtstart, self.anchor(dtstart), hi, invalid_day)
        if self.count is not None:
            wall, note = wall[: self.count], note[: self.count]
        return wall, note

    def explain(self) -> str:
        """A short English description, e.g. ``'every 2 weeks on Tuesday and Thursday'``."""
        unit = {"SECONDLY": "second", "MINUTELY": "minute", "HOURLY": "hour", "DAILY": "day",
                "WEEKLY": "week", "MONTHLY": "month", "YEARLY": "year"}[self.freq]
        out = [f"every {self.interval} {unit}s" if self.interval > 1 else f"every {unit}"]

        def join(items: list[str]) -> str:
            return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]

        def ordinal(n: int) -> str:
            return {1: "first", 2: "second", 3: "third", -1: "last", -2: "second to last"}.get(n, f"#{n}")

        if self.bymonth:
            out.append("in " + join([_MONTH_NAMES[m - 1] for m in self.bymonth]))
        if self.byweekno:
            out.append("in week " + join([str(w) for w in self.byweekno]))
        if self.byyearday:
            out.append("on day " + join([str(d) for d in self.byyearday]) + " of the year")
        if self.bymonthday:
            out.append("on day " + join([str(d) for d in self.bymonthday]) + " of the month")
        if self.byday:
            out.append("on " + join([(ordinal(n) + " " if n else "") + _WEEKDAY_NAMES[wd]
                                     for n, wd in sorted(self.byday, key=lambda p: (p[1], p[0]))]))
        for name, values in (("hour", self.byhour), ("minute", self.byminute), ("second", self.bysecond)):
            if values:
                out.append(f"at {name} " + join([str(v) for v in values]))
        if self.bysetpos:
            out.append("position " + join([str(p) for p in self.bysetpos]) + " of each set")
        if self.count is not None:
            out.append(f"{self.count} times")
        if self.until is not None:
            stamp = np.datetime64(self.until, "us").astype("datetime64[s]")
            out.append(f"until {stamp}" + ("Z" if self.until_utc else ""))
        return " ".join(out[:1] + [", ".join(out[1:])]) if len(out) > 1 else out[0]
