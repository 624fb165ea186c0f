"""robfig/cron v3 expressions (``robfig:`` rules): the parser and ``Next()`` a Kubernetes CronJob runs.

The Kubernetes CronJob controller parses ``spec.schedule`` with
``cron.ParseStandard`` of github.com/robfig/cron/v3 (v3.0.1, vendored by
Kubernetes) and asks ``SpecSchedule.Next`` for every schedule time. Both
are ported here from ``parser.go`` and ``spec.go`` of v3.0.1 (Debian's
``golang-github-robfig-cron-dev`` 3.0.1-1 ships the same files), and the
tests compare them with the real library, built and run on this machine
(``tests/oracles/robfig.py``).

**Grammar** (``ParseStandard``): five fields ``minute hour day-of-month
month day-of-week``, or ``@yearly``/``@annually``, ``@monthly``,
``@weekly``, ``@daily``/``@midnight``, ``@hourly`` (exactly so: robfig
compares the whole spec). Where it is not Vixie cron (:mod:`calsim.rules.cron`):

* day-of-week runs over ``0..6`` only: ``7`` is refused, and ``5/2`` means
  ``5-6/2``, Friday alone (in Vixie cron it runs to 7 and includes Sunday);
* ``a-a/n`` is ``{a}`` and ``a/n`` is ``a-max/n``, as in Vixie cron;
* day-of-month and day-of-week are ORed unless one has the *star bit*:
  ``*`` or ``?`` set it, ``*/1`` keeps it, ``*/2`` clears it. So
  ``0 0 */2 * MON`` fires on odd days *or* Mondays (Vixie: odd Mondays);
* ``?`` is ``*`` in every field, and ``*-5`` is read as ``*`` (robfig
  ignores the rest of a range that starts with ``*``);
* an empty list item is dropped (``1,,2`` is ``1,2``) and a field of
  commas alone matches nothing (the schedule never fires, as in robfig);
* a number may carry a ``+`` sign (``strconv.Atoi``); names ``jan``..``dec``
  and ``sun``..``sat`` in any case, but never inside a step;
* no ``L``, ``W``, ``#``, no seconds field, no ``TZ=``/``CRON_TZ=`` prefix
  (a CronJob names its zone in ``spec.timeZone``; calsim in the schedule's
  zone) and no ``@every`` (an elapsed interval: :class:`calsim.Every`).

A rule no day can match (``0 0 30 2 *``) parses, as in robfig, and never
fires: robfig's ``Next`` gives up after five years and a CronJob never runs.

**DST** (:meth:`RobfigCron.next_after`, for a schedule with
``gap="scheduler"``, ``fold="scheduler"``, as the ``kubernetes`` preset
sets): robfig walks the calendar in the
schedule's zone with Go's ``time.Date``, ``AddDate`` and ``Add``, and its
results near a transition are not those of any gap/fold policy: after
Lord Howe's 30-minute change its hour loop stays on ``:30`` and a day's
``0 0 * * *`` is lost; in a zone whose midnight falls in a gap (Beirut,
Cairo) the day is lost; the hour loop can cross a midnight gap onto the
wrong day; an hour whose ``:00`` is in a gap (Chatham's 02:45 change) is
skipped or fires at an hour the rule does not name; a second pass that is
not a whole hour (Lord Howe's) is skipped. Away from transitions it gives
every matching wall time, skipping a time that does not exist and firing
both passes of a repeated one (``gap="skip"``, ``fold="both"``).
:mod:`calsim.emulation` runs this port only where a transition lies
between two such times, so expansion stays columnar.

>>> import calsim
>>> rule = RobfigCron.parse("0 12 * * 5/2")
>>> sorted(rule.cron.weekdays)  # Friday only: robfig's day-of-week ends at 6
[5]
>>> s = calsim.Schedule("job", "Australia/Lord_Howe", "2026-10-01T00:00", "robfig:0 0 * * *",
...                     gap="scheduler", fold="scheduler")
>>> f = calsim.expand(s, "2026-10-02T00:00Z", "2026-10-06T00:00Z", release="2026f")
>>> [(str(r["nominal_local"]), r["notes"]) for r in f.iter_rows(named=True)]  # doctest: +NORMALIZE_WHITESPACE
[('2026-10-03 00:00:00', []), ('2026-10-04 00:00:00', []), ('2026-10-05 00:00:00', ['dst_lost:robfig']),
 ('2026-10-06 00:00:00', [])]
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from ..errors import RuleError
from .kind import RuleKind
from ..tz.clock import ZoneClock, wall_seconds
from .cron import MAX_TEXT, Cron
from .bounds import DayTable, cron_bound

__all__ = ["RobfigCron", "PREFIX"]

PREFIX = "robfig:"
EMULATES = "robfig"  # the note suffix of rows whose DST this port decides (dst_lost:robfig, dst_extra:robfig)
_STAR = 1 << 63  # robfig's starBit
_MONTHS = {name: i + 1 for i, name in enumerate("jan feb mar apr may jun jul aug sep oct nov dec".split())}
_DAYS = {name: i for i, name in enumerate("sun mon tue wed thu fri sat".split())}
# (name, min, max, names) as robfig's bounds: minutes, hours, dom, months, dow.
_BOUNDS = (("minute", 0, 59, None), ("hour", 0, 23, None), ("day-of-month", 1, 31, None),
           ("month", 1, 12, _MONTHS), ("day-of-week", 0, 6, _DAYS))
_DESCRIPTORS = {"@yearly": "0 0 1 1 *", "@annually": "0 0 1 1 *", "@monthly": "0 0 1 * *",
                "@weekly": "0 0 * * 0", "@daily": "0 0 * * *", "@midnight": "0 0 * * *", "@hourly": "0 * * * *"}
_YEAR_LIMIT = 5  # SpecSchedule.Next: "If no time is found within five years, return zero."


class _Bad(Exception):
    pass


def _atoi(text: str) -> int:
    """``mustParseInt``: ``strconv.Atoi`` (an optional sign, ASCII digits), never negative."""
    body = text[1:] if text[:1] in "+-" else text
    if not body or not (body.isascii() and body.isdigit()):
        raise _Bad(f"failed to parse int from {text!r}"
                   + (" (robfig/cron v3 has no L, W or #)" if set(text) & set("LW#") else ""))
    if len(body.lstrip("0")) > 18:  # Atoi's int64 range
        raise _Bad(f"number {text[:20]!r} is out of range")
    n = int(text)
    if n < 0:
        raise _Bad(f"negative number ({n}) not allowed")
    return n


def _range(expr: str, bounds: tuple) -> int:
    """``getRange``: the bits of one ``number | number "-" number ["/" number]`` (or ``*``, ``?``)."""
    name, lo, hi, names = bounds
    range_and_step = expr.split("/")
    low_and_high = range_and_step[0].split("-")
    single = len(low_and_high) == 1
    extra = 0
    if low_and_high[0] in ("*", "?"):
        start, end, extra = lo, hi, _STAR
    else:
        start = _int_or_name(low_and_high[0], names)
        if len(low_and_high) == 1:
            end = start
        elif len(low_and_high) == 2:
            end = _int_or_name(low_and_high[1], names)
        else:
            raise _Bad("too many hyphens")
    if len(range_and_step) == 1:
        step = 1
    elif len(range_and_step) == 2:
        step = _atoi(range_and_step[1])
        if single:  # "N/step" means "N-max/step"
            end = hi
        if step > 1:
            extra = 0
    else:
        raise _Bad("too many slashes")
    if start < lo:
        raise _Bad(f"beginning of range ({start}) below minimum ({lo})")
    if end > hi:
        raise _Bad(f"end of range ({end}) above maximum ({hi})")
    if start > end:
        raise _Bad(f"beginning of range ({start}) beyond end of range ({end})")
    if step == 0:
        raise _Bad("step of range should be a positive number")
    bits = 0
    for i in range(start, end + 1, step):
        bits |= 1 << i
    return bits | extra


def _int_or_name(text: str, names: dict | None) -> int:
    if names is not None and text.lower() in names:
        return names[text.lower()]
    return _atoi(text)


def _field(text: str, bounds: tuple) -> int:
    """``getField``: the OR of its comma-separated ranges (empty items dropped, as ``strings.FieldsFunc``)."""
    bits = 0
    for expr in (part for part in text.split(",") if part):
        try:
            bits |= _range(expr, bounds)
        except _Bad as exc:
            raise _Bad(f"{bounds[0]} item {expr[:40]!r}: {exc}") from None
    return bits


def _values(bits: int, lo: int, hi: int) -> tuple[int, ...]:
    return tuple(i for i in range(lo, hi + 1) if bits >> i & 1)


@dataclass(frozen=True)
class RobfigCron(RuleKind):
    """A parsed robfig/cron v3 standard spec; build it with :meth:`RobfigCron.parse`.

    ``bits`` holds robfig's five field bit sets (``minute, hour, dom,
    month, dow``; bit 63 is the star bit), ``cron`` the same times as a
    :class:`~calsim.rules.cron.Cron` (whose vectorised expansion gives the
    calendar-correct times). A schedule with ``gap="scheduler"`` and
    ``fold="scheduler"`` fires it as ``Next()`` walks (what a CronJob does);
    with ``gap="skip"``, ``fold="both"`` at every matching wall time (what
    the rule means).
    """

    kind: ClassVar[str] = "robfig"
    emulates: ClassVar[str] = EMULATES
    text: str
    bits: tuple[int, int, int, int, int]
    cron: Cron

    @classmethod
    def parse(cls, text: str) -> RobfigCron:
        """Parse a spec (with or without ``robfig:``) as ``cron.ParseStandard`` does.

        Raises
        ------
        RuleError
            robfig's own complaint (the field, the item, the bound), with the expression.
        """
        if not isinstance(text, str):
            raise RuleError(f"robfig: expected the expression as a str, got {type(text).__name__}")
        if len(text) > MAX_TEXT:  # as Cron.parse: listing every value of every field takes about 450
            raise RuleError(f"robfig: a spec of {len(text):,} characters is longer than {MAX_TEXT:,}")
        spec = text.strip() if text.strip()[: len(PREFIX)].lower() != PREFIX else text.strip()[len(PREFIX):].strip()
        try:
            return cls._parse(spec)
        except _Bad as exc:
            raise RuleError(f"robfig: {exc} in {text[:200]!r}") from None

    @classmethod
    def _parse(cls, spec: str) -> RobfigCron:
        if not spec:
            raise _Bad("empty spec string")
        if spec.startswith(("TZ=", "CRON_TZ=")):
            raise _Bad("a TZ=/CRON_TZ= prefix is not allowed (Kubernetes rejects it in spec.schedule; "
                       "the zone is spec.timeZone, the schedule's zone here)")
        if spec.startswith("@"):
            if spec.startswith("@every "):
                raise _Bad("'@every' is an elapsed interval, not a calendar spec (use calsim.Every, as "
                           "calsim.from_kubernetes does)")
            if spec not in _DESCRIPTORS:
                raise _Bad(f"unrecognized descriptor: {spec[:40]!r} (allowed {', '.join(_DESCRIPTORS)})")
            spec = _DESCRIPTORS[spec]
        fields = tuple(spec.split())  # strings.Fields
        if len(fields) != 5:
            raise _Bad(f"expected exactly 5 fields, found {len(fields)}")
        bits = tuple(_field(f, b) for f, b in zip(fields, _BOUNDS))
        minute, hour, dom, month, dow = bits
        cron = Cron(text=spec, fields=fields,
                    minutes=_values(minute, 0, 59), hours=_values(hour, 0, 23),
                    days=frozenset(_values(dom, 1, 31)), months=_values(month, 1, 12),
                    weekdays=frozenset(_values(dow, 0, 6)), last_day=False, last_weekday=False,
                    nearest_weekday=frozenset(), last_of_weekday=frozenset(), nth_weekday=frozenset(),
                    # dayMatches: AND when either field has the star bit, else OR.
                    day_or=not (dom & _STAR or dow & _STAR))
        return cls(text=spec, bits=(minute, hour, dom, month, dow), cron=cron)

    def rule_text(self) -> str:
        """The rule as a string :func:`calsim.schedule.parse_rule` reads back."""
        return PREFIX + self.text

    def bound(self) -> DayTable:
        """The bound of its wall times over a span, for :mod:`calsim.limits` (rule-kind protocol)."""
        return cron_bound(self.cron)  # its calendar times; the walk's few extra fires at transitions are rows it grows

    def wall_times(self, lo: int, hi: int) -> np.ndarray:
        """Every matching wall time in ``[lo, hi)`` (µs), as :meth:`Cron.wall_times` (no zone applied)."""
        if not self.cron.minutes or not self.cron.hours:
            return np.empty(0, np.int64)
        return self.cron.wall_times(lo, hi)

    def explain(self) -> str:
        return self.cron.explain() + " (robfig/cron v3)"

    # -- SpecSchedule.Next, spec.go (v3.0.1) lines 58-175, in Go's time arithmetic ------------------------------

    def next_after(self, clock: ZoneClock, t: int) -> int | None:
        """``Next(t)``: the first fire time after ``t``, in UTC seconds, or None (robfig's zero time)."""
        minute_bits, hour_bits, dom_bits, month_bits, dow_bits = self.bits
        star = dom_bits & _STAR or dow_bits & _STAR

        def day_matches(f) -> bool:
            dom_ok = dom_bits >> f[2] & 1
            dow_ok = dow_bits >> f[6] & 1
            return bool(dom_ok and dow_ok) if star else bool(dom_ok or dow_ok)

        def date(y: int, mo: int, d: int, h: int, mi: int, s: int) -> int:
            return _go_date(clock, y, mo, d, h, mi, s)

        t = t + 1  # "Start at the earliest possible time (the upcoming second)."
        added = False
        year_limit = clock.fields(t)[0] + _YEAR_LIMIT
        while True:  # WRAP:
            f = clock.fields(t)
            if f[0] > year_limit:
                return None
            wrapped = False
            while not month_bits >> f[1] & 1:
                if not added:
                    added = True
                    t = date(f[0], f[1], 1, 0, 0, 0)
                    f = clock.fields(t)
                t = date(f[0], f[1] + 1, f[2], f[3], f[4], f[5])  # t.AddDate(0, 1, 0)
                f = clock.fields(t)
                if f[1] == 1:
                    wrapped = True
                    break
            if wrapped:
                continue
            while not day_matches(f):
                if not added:
                    added = True
                    t = date(f[0], f[1], f[2], 0, 0, 0)
                    f = clock.fields(t)
                t = date(f[0], f[1], f[2] + 1, f[3], f[4], f[5])  # t.AddDate(0, 0, 1)
                f = clock.fields(t)
                # "Notice if the hour is no longer midnight due to DST."
                if f[3] != 0:
                    t += (24 - f[3]) * 3600 if f[3] > 12 else -f[3] * 3600
                    f = clock.fields(t)
                if f[2] == 1:
                    wrapped = True
                    break
            if wrapped:
                continue
            while not hour_bits >> f[3] & 1:
                if not added:
                    added = True
                    t = date(f[0], f[1], f[2], f[3], 0, 0)
                    f = clock.fields(t)
                t += 3600
                f = clock.fields(t)
                if f[3] == 0:
                    wrapped = True
                    break
            if wrapped:
                continue
            while not minute_bits >> f[4] & 1:
                if not added:
                    added = True
                    t -= t % 60  # t.Truncate(time.Minute): absolute, not wall, minutes
                    f = clock.fields(t)
                t += 60
                f = clock.fields(t)
                if f[4] == 0:
                    wrapped = True
                    break
            if wrapped:
                continue
            if f[5] != 0:  # the seconds field is 0 in a standard spec
                if not added:
                    added = True
                t += 60 - f[5]  # t.Add(1 * time.Second) until Second() == 0: that wraps
                continue
            return t


def _go_date(clock: ZoneClock, y: int, mo: int, d: int, h: int, mi: int, s: int) -> int:
    """Go's ``time.Date(y, mo, d, h, mi, s, 0, loc)`` as UTC seconds (go1.19 ``time.go`` lines 1440-1492).

    The fields are normalised leniently; the offset is first looked up at
    the wall time read as UTC and kept if the result lies in that offset's
    period, else the offset at the result is used. So a wall time in a gap
    takes the offset in force before or after it, whichever that first
    guess lands on, and a repeated one the pass the guess lands on.
    """
    unix = wall_seconds(y, mo, d, h, mi, s)
    offset, start, end = clock.period(unix)
    if offset != 0:
        utc = unix - offset
        if utc < start or utc >= end:
            offset = clock.offset(utc)
        unix -= offset
    return unix
