"""Bounded work: how many occurrences a call would produce, estimated before anything is allocated.

Every entry point that expands schedules (:func:`calsim.expand`,
:func:`calsim.simulate`, :func:`calsim.tzdiff`, :func:`calsim.preview`)
first asks :func:`check` whether the rows it is about to build stay under a
limit, and refuses with one :class:`~calsim.InputError` when they do not: a
rule of a few bytes (``FREQ=SECONDLY`` over a century, ``COUNT=10**12``)
must not cost gigabytes before anyone sees an error.

:func:`estimate` is an **upper bound** of the rows (and of the wall times
generated on the way: whole days, whole periods, the two-day margins),
computed per rule from its BY parts and fields (times a day x matching days,
periods selected by INTERVAL, COUNT, UNTIL, the schedule's validity window,
RDATEs, the extra rows of ``fold="both"``) in arithmetic: no expansion, a
few numpy operations per kind of rule, a dictionary lookup per schedule.
It is tight for the common rules (within a few percent over a year).

The limit is, in this order: the ``max_occurrences=`` argument, the one
set by :func:`scope` (how :func:`calsim.simulate` passes its argument to
the engine, and how a command line can set it once), the
``CALSIM_MAX_OCCURRENCES`` environment variable (a positive whole number;
empty means unset), :data:`DEFAULT_MAX_OCCURRENCES` (50 million: a fleet
of 20,000 schedules over a year is 21.7 million rows, estimated 21.9
million in about 0.04 s; expansion peaks at ~140 bytes a row, so the
default keeps a call under ~7 GB and a simulation under ~10 GB).

>>> import calsim
>>> from calsim import limits
>>> s = calsim.Schedule("every-second", "UTC", "2026-01-01T00:00", "FREQ=SECONDLY")
>>> limits.estimate([s], "2026-01-01T00:00Z", "2026-01-02T00:00Z")  # one day, two more after it
259200
>>> try:
...     calsim.expand([s], "2026-01-01T00:00Z", "2126-01-01T00:00Z")
... except calsim.InputError as exc:
...     print(exc)  # doctest: +NORMALIZE_WHITESPACE
expand: ~3,155,846,400 occurrences (schedule 'every-second' alone ~3,155,846,400) exceeds the limit
50,000,000; narrow the window, or raise it with max_occurrences=, the CALSIM_MAX_OCCURRENCES environment
variable or --max-occurrences
"""

from __future__ import annotations

import contextlib
import contextvars
import dataclasses
import functools
import math
import numbers
import os
import re
import reprlib
from typing import TYPE_CHECKING, Iterator, NamedTuple, Sequence, cast

import numpy as np

from .errors import InputError
from .resolution import policies
from .rules.bounds import EveryProfile, RRuleProfile
from .rules.every import Every
from .rules.rrule import RRule
from .schedule import Schedule
from .times import US, instant_us

if TYPE_CHECKING:
    from .tz.release import ReleaseLike

__all__ = ["DEFAULT_MAX_OCCURRENCES", "ENV", "max_occurrences", "scope", "estimate", "estimates", "check", "over_limit",
           "check_count", "per_day", "MARGIN"]

DEFAULT_MAX_OCCURRENCES = 50_000_000
ENV = "CALSIM_MAX_OCCURRENCES"
DAY = 86400 * US
HOUR = 3600 * US
# Wall times within two days of a UTC window can land in it (offsets < 26 h):
# expansion generates them, so the estimate counts them (calsim.expansion uses this).
MARGIN = 2 * DAY
_MIN_US = -719162 * DAY  # 0001-01-01, the first wall time an RRULE produces
_MAX_US = 2932897 * DAY  # 10000-01-01, past the last one
_HOW = (f"narrow the window, or raise it with max_occurrences=, the {ENV} environment variable "
        "or --max-occurrences")
_SCOPE: contextvars.ContextVar[int | None] = contextvars.ContextVar("calsim_max_occurrences", default=None)
_DIGITS = re.compile(r"[0-9]+(?:_[0-9]+)*")
_NO_LIMIT = 2**62  # more than any estimate (each is below 10**18 µs of spans)


# ---------------------------------------------------------------------------
# The limit
# ---------------------------------------------------------------------------


def _shown(value: object) -> str:
    """A value for a message, cut to ~60 characters (never ``str()`` an attacker-sized value)."""
    if isinstance(value, numbers.Integral) and not isinstance(value, bool) and abs(int(value)) >= 10**30:
        return f"an integer of {abs(int(value)).bit_length()} bits"  # str() refuses over 4,300 digits
    if isinstance(value, str):
        return repr(value) if len(value) <= 60 else repr(value[:60]) + "..."
    text = reprlib.repr(value)  # bounded: a million-item list is not rendered first
    return text if len(text) <= 64 else text[:60] + "..."


def max_occurrences(explicit: object = None) -> int:
    """The limit in force: ``explicit``, else :func:`scope`'s, else ``$CALSIM_MAX_OCCURRENCES``, else the default.

    Raises
    ------
    InputError
        ``explicit`` or the environment variable is not a positive whole number.

    >>> max_occurrences(), max_occurrences(5_000)
    (50000000, 5000)
    """
    if explicit is not None:
        value = None
        if isinstance(explicit, numbers.Integral) and not isinstance(explicit, bool):
            value = int(explicit)
        elif isinstance(explicit, float) and math.isfinite(explicit) and explicit.is_integer():
            value = int(explicit)  # 1e8 is a common way to write a limit
        if value is None or value < 1:
            raise InputError(f"max_occurrences: expected a positive whole number (default "
                             f"{DEFAULT_MAX_OCCURRENCES:,}), got {type(explicit).__name__} {_shown(explicit)}")
        return min(value, _NO_LIMIT)  # past any estimate: the same as no limit
    scoped = _SCOPE.get()
    if scoped is not None:
        return scoped
    raw = os.environ.get(ENV)
    if raw is None or not raw.strip():  # empty means unset, as for Python's own variables
        return DEFAULT_MAX_OCCURRENCES
    text = raw.strip()
    if len(text) > 30 or not _DIGITS.fullmatch(text) or int(text) < 1:
        raise InputError(f"{ENV}: environment variable is {_shown(raw)}, not a positive whole number "
                         f"(e.g. 100000000; unset it for the default {DEFAULT_MAX_OCCURRENCES:,})")
    return min(int(text), _NO_LIMIT)


@contextlib.contextmanager
def scope(limit: object) -> Iterator[int]:
    """Within the block, ``max_occurrences()`` without an argument is ``limit``.

    How :func:`calsim.simulate` hands its ``max_occurrences=`` down to the
    expansions inside the engine (and to each Dask partition).

    >>> with scope(10):
    ...     max_occurrences()
    10
    """
    n = max_occurrences(limit)
    token = _SCOPE.set(n)
    try:
        yield n
    finally:
        _SCOPE.reset(token)


def check_count(n: object, limit: object = None, what: str = "preview", field: str = "n") -> int:
    """Refuse a requested number of occurrences ``n`` above the limit (or not a whole number >= 0).

    >>> check_count(99_999_999_999)
    Traceback (most recent call last):
        ...
    calsim.errors.InputError: preview: n=99,999,999,999 exceeds the limit 50,000,000 of occurrences; \
ask for fewer, or raise it with max_occurrences=, the CALSIM_MAX_OCCURRENCES environment variable or \
--max-occurrences
    """
    if isinstance(n, bool) or not isinstance(n, numbers.Integral) or n < 0:
        raise InputError(f"{field}: expected a whole number >= 0, got {type(n).__name__} {_shown(n)}")
    count = int(n)
    cap = max_occurrences(limit)
    if count > cap:
        shown = f"{count:,}" if count < 10**30 else _shown(n)
        raise InputError(f"{what}: {field}={shown} exceeds the limit {cap:,} of occurrences; ask for fewer, "
                         f"or raise it with max_occurrences=, the {ENV} environment variable or --max-occurrences")
    return count


def per_day(rule: RRule) -> int:
    """The most instances an RRULE has in one day (0: it has none at all), for sizing a search.

    >>> per_day(RRule.parse("FREQ=HOURLY;INTERVAL=6")), per_day(RRule.parse("FREQ=DAILY;BYSECOND=60"))
    (4, 0)
    """
    return _profile(rule).per_day


def _build(rule: object):
    """The rule's bound (a profile of :mod:`calsim.rules.bounds`): each rule kind states its own (``bound()``)."""
    bound = getattr(rule, "bound", None)
    if bound is None:
        raise InputError(f"rule: cannot estimate a rule of type {type(rule).__name__}")
    return bound()


class _Info(NamedTuple):
    """What the estimate needs of a rule, derived once per distinct rule."""

    prof: object  # interned: equal profiles are one object, so schedules group by identity
    kind: int  # _CAL, _RRULE or _EVERY
    until_end: int  # RRULE: no wall time at or after this is generated
    count_end: int  # RRULE COUNT plus one period (the search builds whole periods), -1 without COUNT
    anchor: int | None  # Every's own anchor


_CAL, _RRULE, _EVERY = 0, 1, 2
_INFOS: dict = {}  # rule -> _Info; bounded below
_INTERNED: dict = {}


def _info(rule: object) -> _Info:
    prof = _build(rule)
    prof = _INTERNED.setdefault(prof, prof)
    # The profile's kind says what else bounds the rule: an RRULE's UNTIL and COUNT, an Every's own anchor.
    if isinstance(prof, RRuleProfile):
        r = cast(RRule, rule)  # (an RRuleProfile is an RRule's bound)
        until_end = _MAX_US if r.until is None else r.until + (MARGIN if r.until_utc else 1)
        count = -1 if r.count is None else min(int(r.count), 2**62) + max(prof.per_period, prof.per_day)
        return _Info(prof, _RRULE, until_end, count, None)
    if isinstance(prof, EveryProfile):
        return _Info(prof, _EVERY, _MAX_US, -1, cast(Every, rule)._anchor_us)
    return _Info(prof, _CAL, _MAX_US, -1, None)


def _infos(rules: list) -> list[_Info]:
    """:func:`_info` of each rule, cached by the (frozen) rule's value; an unhashable rule is derived afresh."""
    if len(_INFOS) > 20_000 or len(_INTERNED) > 20_000:
        _INFOS.clear()
        _INTERNED.clear()
    get = _INFOS.get
    out = []
    for r in rules:
        try:
            inf = get(r)
        except TypeError:  # e.g. a Window whose days= is a list
            out.append(_info(r))
            continue
        if inf is None:
            inf = _INFOS[r] = _info(r)
        out.append(inf)
    return out


@functools.lru_cache(maxsize=1024)
def _forward(prof: RRuleProfile) -> RRuleProfile:
    return dataclasses.replace(prof, forward=True)


def _profile(rule: object):
    """The rule's profile (cached)."""
    return _infos([rule])[0].prof


# ---------------------------------------------------------------------------
# Zones: how many folds (and gaps) a span meets, and how long the longest is
# ---------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class _Edges:
    fold_t: np.ndarray  # UTC seconds of transitions that set clocks back
    fold_len: int  # the longest, µs
    gap_t: np.ndarray
    gap_len: int
    end_s: int  # the table's transitions run to here; after it, at most one of each a year
    footer: bool  # the footer has DST (so folds and gaps go on after end_s)


def _edges(table) -> _Edges:
    utc = np.asarray(table.utc, np.int64)
    off = np.asarray(table.offsets, np.int64)
    back = off[:-1] - off[1:]  # transition i: offsets[i] -> offsets[i + 1]
    footer = table.footer
    has_dst = bool(footer is not None and footer.has_dst)
    extra = abs(int(footer.dst_offset) - int(footer.std_offset)) if has_dst else 0
    fold_len = max(int(back.max(initial=0)), extra)
    gap_len = max(int((-back).max(initial=0)), extra)
    end_s = int((np.datetime64(int(table.until_year) + 1 - 1970, "Y").astype("datetime64[s]")).astype(np.int64))
    return _Edges(utc[back > 0], fold_len * US, utc[back < 0], gap_len * US, end_s, has_dst)


def _meets(edges: _Edges, kind: str, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """How many folds (``kind="fold"``) or gaps the wall times ``[a, b)`` can meet."""
    t = edges.fold_t if kind == "fold" else edges.gap_t
    a_s, b_s = a // US - 2 * 86400, -(-b // US) + 2 * 86400  # a wall time is within 26 h of its instant
    n = np.searchsorted(t, b_s) - np.searchsorted(t, a_s)
    if edges.footer:
        later = np.maximum(b_s - np.maximum(a_s, edges.end_s), 0)
        n = n + np.where(later > 0, later // (365 * 86400) + 2, 0)
    return n


# ---------------------------------------------------------------------------
# The estimate
# ---------------------------------------------------------------------------


def _as_us(value: object, field: str) -> int:
    if isinstance(value, (int, np.integer)) and not isinstance(value, bool):
        return int(value)
    return instant_us(value, field)


def estimates(schedules: Sequence[Schedule], lo: object, hi: object, release: ReleaseLike = None) -> np.ndarray:
    """Per schedule (in the order given), an upper bound of the rows :func:`calsim.expand` gives over ``[lo, hi)``.

    ``schedules`` is a list of :class:`~calsim.Schedule` that the entry point
    has already checked (``calsim.expansion.as_schedules``): this module sits
    below expansion and does not import it back.
    ``lo`` and ``hi`` are instants (int µs, ISO text, aware datetimes);
    ``release`` is used only for the folds (``fold="both"`` adds rows) and
    gaps (a skipped time is not counted by COUNT) of each zone. The work per
    schedule is a few attribute reads; the bounds are computed in numpy,
    once per group of schedules with equal profiles.
    """
    from .tz.release import release as get_release

    scheds = list(schedules)
    lo, hi = _as_us(lo, "start"), _as_us(hi, "end")
    n = len(scheds)
    if not n:
        return np.zeros(0, np.int64)
    infos = _infos([s.parsed_rule for s in scheds])
    lo_i = np.array([lo if s.from_utc is None else max(lo, s.from_utc) for s in scheds], np.int64)
    hi_i = np.array([hi if s.to_utc is None else min(hi, s.to_utc) for s in scheds], np.int64)
    # Where a rule starts: DTSTART (an instant's wall time is within a margin of it).
    start = np.array([s.start_wall if s.start_wall is not None else
                      (s.start_utc - MARGIN if s.start_utc is not None else _MIN_US) for s in scheds], np.int64)
    kind = np.array([inf.kind for inf in infos], np.int8)
    until_end = np.array([inf.until_end for inf in infos], np.int64)
    count = np.array([inf.count_end for inf in infos], np.int64)
    # (a ByLocalHour applies either of its policies: what one of them can add, the estimate counts)
    both = np.array(["both" in policies(s.fold) for s in scheds], bool)
    live = hi_i > lo_i

    # Calendar rules: wall times over the window and its margins, from DTSTART,
    # before UNTIL; COUNT: every instance from DTSTART on may be built.
    a = np.maximum(lo_i - MARGIN, start)
    b = np.minimum(hi_i + MARGIN, until_end)
    counted = (count >= 0) & (start > _MIN_US)
    a[counted] = start[counted]
    rr = kind == _RRULE
    a[rr] = np.maximum(a[rr], _MIN_US)
    b[rr] = np.minimum(b[rr], _MAX_US)
    profs = [inf.prof for inf in infos]
    for i in np.flatnonzero(kind == _EVERY):  # instants: anchor + k * period, from the start and the anchor
        s, inf = scheds[i], infos[i]
        first = s.start_utc if s.start_utc is not None else (
            s.start_wall - MARGIN if s.start_wall is not None else inf.anchor)
        a[i] = max(lo_i[i], first, inf.anchor if inf.anchor is not None else first)
        b[i] = hi_i[i]
    for i in np.flatnonzero(rr):
        p = cast(RRuleProfile, profs[i])  # (kind _RRULE: an RRule's bound)
        if p.freq == "MONTHLY" and scheds[i].invalid_day == "forward":
            profs[i] = _forward(p)
    rdates = np.array([len(s.rdate_wall) for s in scheds], np.int64) * np.where(both, 2, 1) * live
    live &= b > a

    # One numpy pass per distinct profile (few: "30 2 * * *" and "15 9 * * *" are one).
    est = np.zeros(n, np.int64)
    distinct = list({id(p): p for p in profs}.values())
    codes = {id(p): c for c, p in enumerate(distinct)}
    code = np.array([codes[id(p)] for p in profs], np.int64)
    order = np.flatnonzero(live)
    order = order[np.argsort(code[order], kind="stable")]
    cuts = np.flatnonzero(np.diff(code[order])) + 1
    for idx in np.split(order, cuts) if len(order) else ():
        est[idx] = distinct[code[idx[0]]].count(a[idx], b[idx])
    fold_both = np.flatnonzero(both & live & (kind != _EVERY))
    gap_skip = np.flatnonzero(counted & live & np.array(["skip" in policies(s.gap) for s in scheds], bool))
    if len(fold_both) or len(gap_skip):
        rel = get_release(release)
        by_zone = {z: _edges(rel.table(z)) for z in {scheds[i].zone for i in (*fold_both, *gap_skip)}}
    if len(gap_skip):
        # COUNT counts the instances that run: the gap-skipped ones come on top.
        count[gap_skip] = np.minimum(count[gap_skip] + _extras(scheds, profs, gap_skip, by_zone, "gap", a, b),
                                     2**62)
    est[counted] = np.minimum(est[counted], count[counted])
    if len(fold_both):  # a time in a fold is two rows
        est[fold_both] += _extras(scheds, profs, fold_both, by_zone, "fold", a, b)
    return est + rdates


def _extras(scheds, profs: list, rows: np.ndarray, by_zone: dict[str, _Edges], kind: str, a: np.ndarray,
            b: np.ndarray) -> np.ndarray:
    """Rows added by the folds (``kind="fold"``) or gaps that each schedule of ``rows`` meets."""
    codes: dict[str, int] = {}
    zone_of = np.array([codes.setdefault(scheds[i].zone, len(codes)) for i in rows], np.int64)
    met = np.zeros(len(rows), np.int64)
    length = np.zeros(len(rows), np.int64)
    for z, code in codes.items():
        at = np.flatnonzero(zone_of == code)
        e = by_zone[z]
        met[at] = _meets(e, kind, a[rows[at]], b[rows[at]])
        length[at] = e.fold_len if kind == "fold" else e.gap_len
    out = np.zeros(len(rows), np.int64)
    by_prof: dict[object, list[int]] = {}
    for k, i in enumerate(rows):
        by_prof.setdefault(id(profs[i]), []).append(k)
    for ks in by_prof.values():
        at = np.array(ks, np.int64)
        prof = profs[rows[ks[0]]]
        out[at] = np.where(length[at] > 0, met[at] * prof.dense(length[at]), 0)
    return out


def _total(est: np.ndarray) -> int:
    if not len(est):
        return 0
    if int(est.max()) < 2**62 // max(1, len(est)):
        return int(est.sum())
    return sum(int(x) for x in est)  # no int64 overflow, whatever the fleet


def estimate(schedules: Sequence[Schedule], lo: object, hi: object, release: ReleaseLike = None) -> int:
    """An upper bound of the rows of ``calsim.expand(schedules, lo, hi)``, without expanding.

    >>> import calsim
    >>> s = calsim.Schedule("daily", "Europe/Berlin", "2026-01-01T09:00", "0 9 * * *")
    >>> estimate([s], "2026-01-01T00:00Z", "2027-01-01T00:00Z")  # 365 rows, and two days of margin
    367
    """
    return _total(estimates(schedules, lo, hi, release))


def check(schedules: Sequence[Schedule], lo: object, hi: object, limit: object = None, what: str = "expand",
          release: ReleaseLike = None) -> int:
    """Refuse, before anything is allocated, a call whose :func:`estimate` exceeds the limit.

    ``schedules`` as for :func:`estimates` (checked by the caller);
    ``limit`` None is :func:`max_occurrences`'s; ``what`` names the entry
    point in the message. Returns the estimate.

    Raises
    ------
    InputError
        One line: the estimate, the heaviest schedule, the limit and how to raise it.
    """
    cap = max_occurrences(limit)
    scheds = list(schedules)
    est = estimates(scheds, lo, hi, release)
    total = _total(est)
    if total > cap:
        i = int(np.argmax(est))
        raise over_limit(what, total, f"schedule {_shown(scheds[i].id)} alone ~{int(est[i]):,}", cap)
    return total


def over_limit(what: str, total: int, detail: str, cap: int) -> InputError:
    """The one-line refusal of ``total`` estimated occurrences over ``cap`` (``detail``: what weighs most)."""
    return InputError(f"{what}: ~{total:,} occurrences ({detail}) exceeds the limit {cap:,}; {_HOW}")
