"""``expand``: many schedules over a UTC window -> one occurrence frame.

Each schedule's rule produces nominal wall times (vectorised per rule kind),
which are resolved in the schedule's zone with its gap and fold policies
(:mod:`calsim.resolution`). Then, in this order, as RFC 5545 builds the set:

1. **COUNT** counts nominal instances that survive the gap policy (a
   gap-skipped instance keeps its row and is not counted, RFC 5545 §3.3.10);
   RDATEs are added and not counted.
2. **UNTIL** is inclusive; a UTC (``Z``) UNTIL is compared with the resolved
   instant, a local one with the wall time.
3. **merge**: two nominal times of one schedule that resolve to the same
   instant (Pacific/Apia 2011-12-30 shifted onto the 31st) keep both rows;
   the earliest nominal keeps the instant (``merged_with:<other>``), the
   other loses it (``merged_into:<earliest>``).
4. **EXDATE** removes nominal times; **exclusion calendars** keep the row
   without an instant and note ``excluded:<calendar>@<version>``.
5. The window ``[start, end)`` selects rows by instant; a row without one is
   placed by its nominal time read with the offset before the gap.

>>> import calsim
>>> s = calsim.Schedule("nightly", "America/New_York", "2026-03-06T02:30", "FREQ=DAILY;COUNT=4")
>>> f = calsim.expand([s], "2026-03-01T00:00Z", "2026-04-01T00:00Z", release="2026f")
>>> [(str(r["nominal_local"].date()), r["due_utc"] is not None, r["notes"]) for r in f.iter_rows(named=True)]
[('2026-03-06', True, []), ('2026-03-07', True, []), ('2026-03-08', False, ['dst_gap_skipped']), ('2026-03-09', True, []), ('2026-03-10', True, [])]
"""

from __future__ import annotations

import datetime as dt
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import nullcontext
from dataclasses import dataclass

import numpy as np
import polars as pl
import pyarrow as pa

import calsim.limits as limits
from .calendars import Calendar
from .emulation import SCHEDULER, emulated_rows
from .errors import InputError
from .tz.release import Release, ReleaseLike, release as get_release
from .resolution import Resolved, resolve_wall
from .rules.every import Every
from .rules.rrule import RRule
from .schedule import Schedule, check_revisions
from .times import LAST_US, US, instant_us
from .tz.tzif import ZoneTable

__all__ = ["expand", "expand_indexed", "OCCURRENCE_SCHEMA", "as_schedules", "as_strings"]

DAY = 86400 * US
_MARGIN = limits.MARGIN  # wall times within two days of the UTC window can land in it (offsets < 26 h)
_INVALID_NOTES = ("", "invalid_day_backward", "invalid_day_forward")
# A COUNT rule that finds no instance in 400 years (a full Gregorian cycle)
# never will: the search stops there instead of hanging.
_SEARCH_LIMIT = 400 * 365 * DAY
_MAX_WALL = LAST_US  # 9999-12-31T23:59:59
_LAST_END = LAST_US - 14 * 3600 * US + US  # an end after 9999-12-31T09:59:59Z puts a UTC+14 wall time in year 10000
_EPOCH_DATE = dt.date(1970, 1, 1)
_THREAD_MIN_ROWS = 200_000  # below this, _finish's overlapped steps run one after the other

OCCURRENCE_SCHEMA = pl.Schema(
    {
        "schedule_id": pl.String,
        "revision": pl.Int64,
        "nominal_local": pl.Datetime("us"),
        "fold": pl.Int8,
        "zone": pl.String,
        "tzdata": pl.String,
        "due_utc": pl.Datetime("us", "UTC"),
        "utc_offset_s": pl.Int32,
        "notes": pl.List(pl.String),
    }
)


def as_schedules(schedules: object) -> list[Schedule]:
    if isinstance(schedules, Schedule):
        return [schedules]
    try:
        out = list(schedules)  # type: ignore[call-overload]
    except TypeError:
        raise InputError(f"schedules: expected a Schedule or a list of them, got {type(schedules).__name__}") from None
    for i, s in enumerate(out):
        if not isinstance(s, Schedule):
            raise InputError(f"schedules: item {i} is {type(s).__name__} {s!r}, not a Schedule")
    return out


def iso(us: int) -> str:
    """Naive ISO 8601 with seconds, the form notes use (``2011-12-31T09:00:00``)."""
    s = str(np.datetime64(int(us), "us"))
    return s[:19] if s.endswith(".000000") else s


def _start_wall(s: Schedule, table: ZoneTable) -> int:
    if s.start_wall is not None:
        return s.start_wall
    assert s.start_utc is not None
    return s.start_utc + int(table.offset_at_utc(np.array([s.start_utc // US]))[0]) * US


def _counted_walls(s: Schedule, rule: RRule, dtstart: int, table: ZoneTable,
                   cap: int) -> tuple[np.ndarray, np.ndarray]:
    """Walls from DTSTART through the COUNT-th instance that survives the gap policy, none at or after ``cap``.

    Instances at or after ``cap`` (the window's end) can never be rows, so
    the search stops there: COUNT=10**12 costs what the instances up to the
    window's end cost (what :func:`calsim.limits.estimate` counts), never
    more. The search goes forward in chunks: the first about as long as
    COUNT instances take at the rule's densest (so a COUNT=10 rule that
    fires every second looks at one day, not sixty), then doubling, so a
    rule that skips months or years needs few rounds. What is kept is at
    most COUNT instances plus the skipped ones.
    """
    want = rule.count
    assert want is not None
    per_day = limits.per_day(rule)
    if per_day == 0:
        return np.zeros(0, np.int64), np.zeros(0, np.int8)
    span = max(DAY, -(-want // per_day) * DAY)
    parts: list[tuple[np.ndarray, np.ndarray]] = []
    found = 0
    at = dtstart
    while at < cap and at < _MAX_WALL:
        end = min(at + span, cap)
        walls, inv = rule.candidates(dtstart, at, end, s.invalid_day)
        if len(walls):
            counted = np.ones(len(walls), dtype=bool)
            if s.gap == "skip":
                # Folds do not change what is counted: one nominal instance each.
                counted = resolve_wall(walls, table, gap="skip", fold="first").kind != 1
            n = int(counted.sum())
            if found + n >= want:
                last = int(np.flatnonzero(counted)[want - found - 1])
                parts.append((walls[: last + 1], inv[: last + 1]))
                break
            found += n
            parts.append((walls, inv))
        elif not parts and end - dtstart > _SEARCH_LIMIT:
            break  # a rule that never matches: empty, after a bounded search
        at = end
        span *= 2
    if not parts:
        return np.zeros(0, np.int64), np.zeros(0, np.int8)
    if len(parts) == 1:
        return parts[0]
    return np.concatenate([w for w, _ in parts]), np.concatenate([v for _, v in parts])


def _candidates(s: Schedule, table: ZoneTable, lo: int, hi: int,
                memo: dict | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Nominal walls of one schedule near ``[lo, hi)`` with their invalid_day codes (RFC 5545 set order).

    ``memo`` shares the walls of equal rules over equal spans between
    schedules (a fleet repeats its rules: half of ``examples.fleet``'s
    calls); the arrays are read-only from here on.
    """
    memo = {} if memo is None else memo
    rule = s.parsed_rule
    # An RRULE's start comes here in whole seconds (Schedule drops the fraction,
    # RRule.anchor), so it is both the anchor and the lower bound. For cron and
    # Window the start is only a lower bound, fraction kept: no rule anchors at
    # it, and 09:00:00 is before a 09:00:00.5 start.
    dtstart = _start_wall(s, table)
    wlo, whi = max(lo - _MARGIN, dtstart), hi + _MARGIN
    if isinstance(rule, RRule) and rule.until is not None:
        # Nothing after UNTIL is generated: a local UNTIL is a wall time, a UTC
        # one an instant, whose wall time is less than a margin later.
        whi = min(whi, rule.until + (_MARGIN if rule.until_utc else 1))
    if isinstance(rule, RRule) and rule.count is not None:
        walls, inv = _counted_walls(s, rule, dtstart, table, whi)
        keep = (walls >= wlo) & (walls < whi)
        walls, inv = walls[keep], inv[keep]
    elif whi <= wlo:
        walls, inv = np.zeros(0, np.int64), np.zeros(0, np.int8)
    elif isinstance(rule, RRule):
        walls, inv = _shared(memo, (rule, dtstart, wlo, whi, s.invalid_day),  # DTSTART anchors an RRULE
                             lambda: rule.candidates(dtstart, wlo, whi, s.invalid_day))
    else:
        # A cron or window's start is only a lower bound (in wlo).
        walls, inv = _shared(memo, (rule, wlo, whi), lambda: _no_notes(rule.wall_times(wlo, whi)))
    if isinstance(rule, RRule) and rule.until is not None and not rule.until_utc:
        keep = walls <= rule.until  # a local UNTIL is inclusive, on wall time (RFC 5545 §3.3.10)
        walls, inv = walls[keep], inv[keep]
    if s.rdate_wall:  # RDATEs join the set, uncounted by COUNT (RFC 5545 §3.8.5.2)
        extra = np.array(s.rdate_wall, dtype=np.int64)
        extra = extra[(extra >= lo - _MARGIN) & (extra < whi) & ~np.isin(extra, walls)]
        if len(extra):
            walls = np.concatenate([walls, extra])
            inv = np.concatenate([inv, np.zeros(len(extra), np.int8)])
            order = np.argsort(walls, kind="stable")
            walls, inv = walls[order], inv[order]
    if s.exdate_wall:  # EXDATE applies after COUNT (RFC 5545 §3.8.5.1)
        keep = ~np.isin(walls, np.array(s.exdate_wall, dtype=np.int64))
        walls, inv = walls[keep], inv[keep]
    return walls, inv


def _shared(memo: dict, key: tuple, make):
    """``make()``, once per equal ``key`` (a rule that cannot be hashed is made each time)."""
    try:
        hash(key)
    except TypeError:  # e.g. a Window built with a list of days
        return make()
    if key not in memo:
        memo[key] = make()
    return memo[key]


def _no_notes(walls: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    return walls, np.zeros(len(walls), np.int8)


@dataclass
class _Window:
    """What decides a row's fate before it is kept: each schedule's window, UTC UNTILs, and the sort key's layout.

    The window and a UTC UNTIL select rows by placement alone, and rows that
    merge share one (same schedule, same instant), so both apply as rows are
    made. Kept rows sort by ``(placement - base) << sbits | schedule``: one
    int64 for two columns (``keyed``), when the window is short enough.
    """

    lo_s: np.ndarray
    hi_s: np.ndarray
    lo: int | None  # the one window every schedule shares, if so
    hi: int | None
    until: np.ndarray | None  # per schedule, a UTC UNTIL (compared with the instant); None: none has one
    base: int
    sbits: int
    keyed: bool

    @classmethod
    def of(cls, scheds: list[Schedule], lo_s: np.ndarray, hi_s: np.ndarray) -> _Window:
        one = bool(len(lo_s)) and bool((lo_s == lo_s[0]).all() and (hi_s == hi_s[0]).all())
        until = np.array([s.parsed_rule.until if isinstance(s.parsed_rule, RRule) and s.parsed_rule.until_utc
                          else _MAX_WALL for s in scheds], dtype=np.int64)
        base = int(lo_s.min()) if len(lo_s) else 0
        sbits = max(1, int(len(scheds) - 1).bit_length())
        span = int(hi_s.max()) - base if len(hi_s) else 0
        return cls(lo_s, hi_s, int(lo_s[0]) if one else None, int(hi_s[0]) if one else None,
                   until if (until < _MAX_WALL).any() else None, base, sbits,
                   max(span, 0).bit_length() + sbits <= 62)

    def keep(self, sched, place: np.ndarray) -> np.ndarray | None:
        """Rows placed in their schedule's window and not after its UTC UNTIL (RFC 5545 §3.3.10); None: all."""
        if self.lo is not None:
            keep = (place >= self.lo) & (place < self.hi)
        else:
            keep = (place >= self.lo_s[sched]) & (place < self.hi_s[sched])
        if self.until is not None:
            keep &= place <= self.until[sched]
        return None if keep.all() else keep


_SPECIAL = (("fold", np.int8, 0), ("dst", np.int16, -1), ("inv", np.int8, 0), ("has_due", bool, True),
            ("offset", np.int32, 0))


class _Rows:
    """The rows of many schedules as they are made, window applied, as few columns as possible.

    Every row keeps its sort key (or placement and schedule, for a window
    too long for one key) and its wall time, written straight into columns
    sized by :func:`calsim.limits.check`'s estimate (an upper bound: pages
    never written cost no memory; the columns grow if it is ever short).
    No chunk is kept and no column is concatenated: a fleet-year's chunks
    would otherwise stay in the C heap long after they were freed. Most
    rows are plain: fold 0, an instant, no note, and an offset equal to
    wall - instant (what resolving a wall time means; only a gap policy
    moves the instant, and such a row has a dst note). The few others
    ("special") keep their fold, note codes, instant flag and offset aside.
    """

    def __init__(self, win: _Window, capacity: int):
        self.win = win
        self.n = 0
        names = ("key", "wall") if win.keyed else ("place", "sched", "wall")
        self.cols = {name: np.empty(max(capacity, 1), np.int32 if name == "sched" else np.int64) for name in names}
        self.rows: list[np.ndarray] = []  # special rows' numbers, ascending
        self.special: dict[str, list[np.ndarray]] = {name: [] for name, _, _ in _SPECIAL}

    def _room(self, m: int) -> dict[str, np.ndarray]:
        """Each column's next ``m`` slots."""
        n = self.n
        cap = len(self.cols["wall"])
        if n + m > cap:  # the estimate was short: grow by half again
            for name, col in self.cols.items():
                grown = np.empty(max(n + m, cap + cap // 2), col.dtype)
                grown[:n] = col[:n]
                self.cols[name] = grown
        return {name: col[n:n + m] for name, col in self.cols.items()}

    def add(self, sched, wall: np.ndarray, due: np.ndarray, offset: np.ndarray, **given) -> None:
        """One chunk of rows; ``sched`` is one schedule's index or one per row; ``given``: fold, dst, inv,
        has_due when not all default (0, -1, 0, True)."""
        given = {k: v for k, v in given.items() if v is not None}
        keep = self.win.keep(sched, due)
        if keep is not None:
            wall, due, offset = wall[keep], due[keep], offset[keep]
            sched = sched if np.ndim(sched) == 0 else sched[keep]
            given = {k: v[keep] for k, v in given.items()}
        m = len(wall)
        if not m:
            return
        special = np.zeros(m, dtype=bool)
        for name, v in given.items():
            special |= ~v if name == "has_due" else v != (-1 if name == "dst" else 0)
        sp = np.flatnonzero(special)
        if len(sp):
            self.rows.append(sp + self.n)
            given["offset"] = offset
            for name, dtype, default in _SPECIAL:
                v = given.get(name)
                self.special[name].append(np.full(len(sp), default, dtype) if v is None else v[sp].astype(dtype))
        out = self._room(m)
        if self.win.keyed:
            key = out["key"]
            np.subtract(due, self.win.base, out=key)
            key <<= self.win.sbits
            key |= sched
        else:
            out["place"][:] = due
            out["sched"][:] = sched
        out["wall"][:] = wall
        self.n += m

    def take(self, name: str) -> np.ndarray:
        """A column, which this object no longer holds (the caller frees it when done)."""
        return self.cols.pop(name)[: self.n]

    def take_special(self) -> tuple[np.ndarray, dict[str, np.ndarray]]:
        rows = np.concatenate(self.rows) if self.rows else np.zeros(0, np.int64)
        return rows, {name: np.concatenate(self.special[name]) if self.special[name] else np.zeros(0, dtype)
                      for name, dtype, _ in _SPECIAL}


def _add_resolved(rows: _Rows, r: Resolved, sched, inv: np.ndarray, vocab: dict[str, int]) -> None:
    codes = [vocab.setdefault(note, len(vocab)) for note in r.note_vocab]
    # kind 0 ok, 1 gap, 2 fold (3 lost, 4 extra: calsim.emulation) -> note code (-1 none);
    # a chunk of ok rows only keeps the default.
    dst = np.array([-1, *codes], np.int16)[r.kind] if r.kind.any() else None
    if r.row is not None:
        inv = inv[r.row]
        sched = sched if np.ndim(sched) == 0 else sched[r.row]
    rows.add(sched, r.wall, r.due, r.offset, fold=r.fold, has_due=r.has_due, dst=dst,
             inv=inv if inv.any() else None)


def _every_rows(s: Schedule, rule: Every, table: ZoneTable, lo: int, hi: int):
    if s.start_utc is not None:
        start_utc = s.start_utc
    elif s.start_wall is not None:
        # A naive start is wall time: its instant (gap -> shift, fold -> first) starts the interval.
        start_utc = int(resolve_wall(np.array([s.start_wall]), table, gap="shift", fold="first").due[0])
    else:
        start_utc = rule.anchor_us(0)
    # Runs fall on anchor + k * period (the anchor defaults to the start), never before the start.
    inst = rule.instants(max(lo, start_utc), hi, rule.anchor_us(start_utc))
    if len(inst):
        table.covering(1970 + int(inst[-1] // (US * 31_556_952)) + 1)  # footer transitions through the last instant
    inst_s = inst // US
    after = np.searchsorted(table.utc, inst_s, side="right")  # offsets[after] is in force at each instant
    offset = table.offsets[after]
    wall = inst + offset.astype(np.int64) * US
    # An instant in the second pass of a repeated hour has fold 1 (PEP 495).
    # Only an instant less than the longest fold of the zone (clocks going
    # back by ``offsets[i] - offsets[i + 1]``) after the latest transition
    # can be one: if it follows fold j's transition by less than fold j's
    # length, it follows the latest transition (at or after j's) by less
    # still. Those few are checked by resolving their wall time (fold 0
    # reads it as the first pass); the others keep fold 0.
    fold = np.zeros(len(inst), np.int8)
    back = table.offsets[:-1].astype(np.int64) - table.offsets[1:]
    longest = int(back.max(initial=0))
    if longest > 0 and len(inst):
        since = inst_s - table.utc[np.maximum(after - 1, 0)]
        near = np.flatnonzero((after > 0) & (since < longest))
        if len(near):
            first = resolve_wall(wall[near], table, gap="shift", fold="first").due
            fold[near] = first != inst[near]
    return wall, fold, inst, offset



def expand(schedules: object, start: object, end: object, release: ReleaseLike = None, *,
           max_occurrences: int | None = None) -> pl.DataFrame:
    """Expand schedules into occurrences over the UTC window ``[start, end)``.

    Parameters
    ----------
    schedules
        A :class:`~calsim.Schedule` or a list of them (several revisions of
        one id allowed, with non-overlapping validity windows).
    start, end
        Instants (ISO with ``Z``/offset, aware datetimes); naive means UTC.
    release : str, path, Release or None
        The tz database release (see :func:`calsim.release`): a version such
        as ``"2026f"``, a tzdata wheel or zoneinfo directory, a
        :class:`~calsim.Release`, or None for the installed ``tzdata``.
    max_occurrences : int >= 1 or None, keyword-only
        Refuse, before expanding, a call whose estimated rows
        (:func:`calsim.limits.estimate`, an upper bound) exceed this; None:
        the ``CALSIM_MAX_OCCURRENCES`` environment variable, else 100 million.

    Returns
    -------
    polars.DataFrame
        The occurrence frame of DESIGN.md §4: ``schedule_id``, ``revision``,
        ``nominal_local``, ``fold``, ``zone``, ``tzdata``, ``due_utc`` (null
        when there is no run: gap-skipped, merged, excluded),
        ``utc_offset_s``, ``notes``; sorted by instant (a row without one by
        its placement), then schedule, revision, nominal time and fold.

    Notes
    -----
    Rule expansion is vectorised per schedule (equal rules over equal spans
    are expanded once); resolution runs once per (zone, gap, fold) group
    over all of its schedules' times; the window applies as rows are made;
    one sort orders the fleet, after which rows to merge are neighbours and
    calendars are column operations. Schedule ids and zones are integer
    codes until the end, where one gather makes them strings.

    Raises
    ------
    InputError
        Among others, when the estimate exceeds ``max_occurrences``: the
        message gives the estimate, the heaviest schedule, the limit and how
        to raise it.
    """
    frame, _, _ = expand_indexed(as_schedules(schedules), start, end, release, max_occurrences=max_occurrences)
    return frame


def expand_indexed(schedules: list[Schedule], start: object, end: object, release: ReleaseLike = None, *,
                   max_occurrences: int | None = None, what: str = "expand", codes: bool = False):
    """:func:`expand`, also returning the schedules in frame order and each row's index into them.

    For the simulation, which needs per-row policies without joining on ids.
    ``what`` names the caller in the message of a refusal over ``max_occurrences``.
    ``codes=True`` leaves ``schedule_id`` and ``zone`` as ``pl.Enum`` columns
    (integer codes, 2 + 1 bytes a row instead of two 16-byte string views);
    :func:`as_strings` gives the public frame.
    """
    rel = get_release(release)
    lo = instant_us(start, "start")
    hi = instant_us(end, "end")
    if hi <= lo:
        raise InputError(f"end: {end!r} is not after start {start!r} (the window [start, end) would be empty)")
    if hi > _LAST_END:
        # An instant later than this is a local time in year 10000 somewhere (UTC+14), which no datetime holds.
        raise InputError(f"end: {end!r} is after 9999-12-31T09:59:59Z, the last instant whose local time is in "
                         "year 9999 in every zone (allowed: an end up to then)")
    scheds = sorted(schedules, key=lambda s: (s.id, s.revision))
    check_revisions(scheds)
    estimate = limits.check(scheds, lo, hi, max_occurrences, what, rel)  # before anything is allocated
    lo_s = np.array([lo if s.from_utc is None else max(lo, s.from_utc) for s in scheds], dtype=np.int64)
    hi_s = np.array([hi if s.to_utc is None else min(hi, s.to_utc) for s in scheds], dtype=np.int64)
    rows, vocab = _collect(scheds, rel, _Rows(_Window.of(scheds, lo_s, hi_s), estimate))
    frame, sched_of_row = _finish(scheds, rows, vocab, rel.version, codes)
    return frame, scheds, sched_of_row


def _collect(scheds: list[Schedule], rel: Release, rows: _Rows) -> tuple[_Rows, dict[str, int]]:
    """The rows of every schedule (nominal walls, resolved, in the window) and the note vocabulary."""
    win, vocab = rows.win, {}
    groups: dict[tuple[str, str, str], list[tuple[int, np.ndarray, np.ndarray]]] = {}
    tables: dict[str, ZoneTable] = {}
    memo: dict = {}
    for i, s in enumerate(scheds):
        lo, hi = int(win.lo_s[i]), int(win.hi_s[i])
        if hi <= lo:
            continue
        table = tables.get(s.zone) or tables.setdefault(s.zone, rel.table(s.zone))
        if isinstance(s.parsed_rule, Every):
            wall, fold, inst, offset = _every_rows(s, s.parsed_rule, table, lo, hi)
            rows.add(i, wall, inst, offset, fold=fold if fold.any() else None)
            continue
        if s.gap == SCHEDULER:  # the rule's scheduler's own walk decides DST (calsim.emulation)
            _emulated(rows, i, s, table, lo, hi, memo, vocab)
            continue
        walls, inv = _candidates(s, table, lo, hi, memo)
        if s.gap == "reject" or s.fold == "reject":  # resolved alone, so the error names it
            r = resolve_wall(walls, table, gap=s.gap, fold=s.fold, version=rel.version, schedule=s.id)
            _add_resolved(rows, r, i, inv, vocab)
            continue
        groups.setdefault((s.zone, s.gap, s.fold), []).append((i, walls, inv))
    for zone, gap, fold in list(groups):
        items = groups.pop((zone, gap, fold))  # its per-schedule arrays are freed once concatenated
        walls = np.concatenate([w for _, w, _ in items])
        inv = np.concatenate([v for _, _, v in items])
        sched = np.repeat(np.array([i for i, _, _ in items], np.int32), [len(w) for _, w, _ in items])
        del items
        r = resolve_wall(walls, tables[zone], gap=gap, fold=fold, version=rel.version)
        _add_resolved(rows, r, sched, inv, vocab)
    return rows, vocab


def _emulated(rows: _Rows, i: int, s: Schedule, table: ZoneTable, lo: int, hi: int, memo: dict,
              vocab: dict[str, int]) -> None:
    """One schedule whose rule names a scheduler whose DST calsim reproduces by walking as it does.

    Its gap and fold policies are not consulted (:mod:`calsim.emulation`):
    the scheduler's walk decides. Equal rules in one zone over one span
    (a fleet's) share one walk.
    """
    walls, _ = _candidates(s, table, lo, hi, memo)
    # Walls run to hi + _MARGIN: every instant before that less the largest offset (+14 h) has its wall time there.
    until = hi + _MARGIN - 15 * 3600 * US
    floor = _start_wall(s, table)  # no fire before the start: the walk starts there at the earliest
    key = ("emulated", s.parsed_rule, s.zone, lo, hi, floor, s.rdate_wall, s.exdate_wall)
    wlo = max(lo - _MARGIN, floor)  # where _candidates' walls start
    r = _shared(memo, key, lambda: emulated_rows(s.parsed_rule, table, walls, wlo, until, floor))
    _add_resolved(rows, r, i, np.zeros(len(r.wall), np.int8), vocab)


def _finish(scheds: list[Schedule], rows: _Rows, vocab: dict[str, int], version: str,
            codes: bool) -> tuple[pl.DataFrame, np.ndarray]:
    """Sort the rows, merge, apply calendars and build the frame (``schedule_id``, ``zone`` as ``codes`` or strings).

    Each step frees what it no longer needs (the peak memory is the
    simulation's too). Returns the frame and each row's schedule index.
    """
    win, n = rows.win, rows.n
    # The narrowest schedule index the simulation reads (RunState keeps it).
    sdtype = np.int16 if len(scheds) < 2**15 else np.int32
    if win.keyed:
        perm, place, sched = _sort_keys(rows.take("key"), win.sbits, win.base, sdtype)
    else:
        perm, place, sched = _order(rows.take("place"), rows.take("sched"), len(scheds))
        sched = sched.astype(sdtype)
    special = np.zeros(n, dtype=bool)
    sp_rows, sp = rows.take_special()
    special[sp_rows] = True
    wall = rows.take("wall")
    with ThreadPoolExecutor(1) if n >= _THREAD_MIN_ROWS else nullcontext(_Inline()) as pool:
        # Two gathers by the same permutation, side by side (numpy gathers without the GIL).
        walls = pool.submit(np.take, wall, perm)
        pos = np.flatnonzero(special[perm])  # output positions of special rows, ascending
        del special
        # Each special row's entry in ``sp`` (its source row is there, rows ascending).
        at = np.searchsorted(sp_rows, perm[pos])
        del perm, sp_rows
        sp = {name: v[at] for name, v in sp.items()}
        # Ids and zones before the notes column: in this order a process under
        # a 2 GiB address-space limit (tests/test_limits.py) has room for the
        # strings; the other order failed one run in two there.
        ids = _code_columns(scheds, sched) if codes else _string_columns(scheds, sched)
        wall = walls.result()
    has = sp["has_due"]
    moved = np.zeros(len(vocab) + 1, dtype=bool)
    moved[np.array([c for note, c in vocab.items() if note.startswith("dst_gap_") and note != "dst_gap_skipped"],
                   dtype=np.int64) + 1] = True
    extras: list[tuple[np.ndarray, str]] = []
    lost = _merge(pos[moved[sp["dst"] + 1] & has], place, sched, wall, pos, has, extras)
    lost += _exclude(scheds, sched, wall, extras)

    offset = np.subtract(wall, place)
    np.floor_divide(offset, US, out=offset)  # wall - instant, right for every row but the special ones
    offset = offset.astype(np.int32)
    offset[pos] = sp["offset"]
    fold = np.zeros(n, np.int8)
    fold[pos] = sp["fold"]
    valid = np.ones(n, dtype=bool)
    valid[pos] = has
    for rows_ in lost:
        valid[rows_] = False
    nulls = n - int(np.count_nonzero(valid))
    bitmap = None
    if nulls:
        # Nulls where there is no instant, as an Arrow validity bitmap over the
        # value buffers: no copy, no scatter. Their values are 0 (as RunState reads them).
        place[~valid] = 0
        bitmap = pa.py_buffer(np.packbits(valid, bitorder="little"))
    del valid
    due = pl.Series("due_utc", pa.Array.from_buffers(
        pa.timestamp("us", "UTC"), n, [bitmap, pa.py_buffer(place)], null_count=nulls))
    offset = pl.Series("utc_offset_s", pa.Array.from_buffers(pa.int32(), n, [bitmap, pa.py_buffer(offset)],
                                                             null_count=nulls))
    notes = _notes(n, pos, sp["dst"], sp["inv"], extras, vocab)
    revisions = {s.revision for s in scheds}
    frame = pl.DataFrame(
        [
            pl.Series("nominal_local", wall).cast(pl.Datetime("us")),
            pl.Series("fold", fold),
            due,
            offset,
            notes,
            *ids,
        ]
    ).with_columns(
        pl.lit(version, pl.String).alias("tzdata"),
        # One revision everywhere (the usual case): a literal column, no gather.
        pl.lit(revisions.pop(), pl.Int64).alias("revision") if len(revisions) == 1
        else pl.Series("revision", np.array([s.revision for s in scheds], dtype=np.int64)[sched]),
    ).select(OCCURRENCE_SCHEMA.names())
    return frame, sched


def _code_columns(scheds: list[Schedule], sched: np.ndarray) -> list[pl.Series]:
    """``schedule_id`` and ``zone`` as ``pl.Enum`` codes (sorted categories: order and comparisons as strings')."""
    out = []
    for name, values in (("schedule_id", [s.id for s in scheds]), ("zone", [s.zone for s in scheds])):
        cats = sorted(set(values))
        dtype = pl.Enum(cats)
        phys = pl.Series([], dtype=dtype).to_physical().to_numpy().dtype  # the width polars picks
        index = {v: k for k, v in enumerate(cats)}
        of_sched = np.array([index[v] for v in values], dtype=phys)
        if name == "schedule_id" and len(cats) == len(values) and phys.itemsize == sched.itemsize:
            codes = sched.view(phys)  # one id per schedule, sorted: the schedule index is the code (no copy)
        else:
            codes = of_sched[sched]
        out.append(pl.Series(name, codes).cat.to(dtype))
    return out


def _string_columns(scheds: list[Schedule], sched: np.ndarray) -> list[pl.Series]:
    """``schedule_id`` and ``zone`` as strings: one gather of a per-schedule table (both columns at once)."""
    table = pl.DataFrame([pl.Series("schedule_id", [s.id for s in scheds], dtype=pl.String),
                          pl.Series("zone", [s.zone for s in scheds], dtype=pl.String)])
    return table[pl.Series(sched.astype(np.uint32, copy=False))].get_columns()  # polars indexes with u32


def as_strings(frame: pl.DataFrame) -> pl.DataFrame:
    """``frame`` with its ``pl.Enum`` columns ``schedule_id`` and ``zone`` as strings (the public dtype).

    One gather of each column's categories by its codes: what a user reads
    is built once, at the end (a cast from Enum costs twice as much).
    """
    cols = [c for c in ("schedule_id", "zone") if c in frame.columns and isinstance(frame.schema[c], pl.Enum)]
    if not cols:
        return frame
    return frame.with_columns([pl.DataFrame([pl.Series(c, frame.schema[c].categories)])[frame[c].to_physical()]
                               .to_series() for c in cols])


class _Inline:
    """``submit`` runs at once: a small frame is not worth a thread."""

    def submit(self, fn, *args):
        done: Future = Future()
        done.set_result(fn(*args))
        return done


def _sort_keys(key: np.ndarray, sbits: int, base: int, sdtype=np.int32):
    """Sort by ``key = (placement - base) << sbits | schedule``: the permutation, placement and schedule in order.

    Each schedule's rows are one contiguous run, in (nominal, fold) order, so
    a stable sort by (placement, schedule) gives the contract's order. The
    sorted keys give placement and schedule back without gathering them.
    Timsort (numpy's stable sort) merges the already sorted runs of each
    schedule: faster here than a parallel sort on a busy machine.
    """
    perm = np.argsort(key, kind="stable")
    key = key[perm]  # the caller's array is freed when it drops it
    sched = np.empty(len(key), dtype=sdtype)
    np.bitwise_and(key, (1 << sbits) - 1, out=sched, casting="unsafe")
    key >>= sbits
    key += base
    return perm, key, sched


def _order(place: np.ndarray, sched: np.ndarray, n_sched: int):
    """The contract's row order: by placement, then schedule, nominal time and fold.

    Returns the permutation of the rows, and ``place`` and ``sched`` in that
    order (see :func:`_sort_keys`); for a window too long for one key, blocks
    are put in schedule order (a cheap permutation), then stably sorted by
    placement alone.
    """
    n = len(place)
    sbits = max(1, int(n_sched - 1).bit_length())
    pmin = int(place.min()) if n else 0
    span = int(place.max()) - pmin if n else 0
    if span.bit_length() + sbits <= 62:
        key = place - pmin
        key <<= sbits
        key |= sched
        return _sort_keys(key, sbits, pmin)
    starts = np.flatnonzero(np.concatenate([[True], sched[1:] != sched[:-1]])) if n else np.zeros(0, np.int64)
    lens = np.diff(np.append(starts, n))
    by_sched = np.argsort(sched[starts], kind="stable")
    block_len, block_start = lens[by_sched], starts[by_sched]
    shift = block_start - np.concatenate([[0], np.cumsum(block_len)[:-1]])
    perm = np.repeat(shift, block_len) + np.arange(n)
    perm = perm[np.argsort(place[perm], kind="stable")]
    return perm, place[perm], sched[perm]


def _member(values: np.ndarray, sorted_set: np.ndarray) -> np.ndarray:
    """``np.isin`` for a small sorted set: a binary search per value, no sort of ``values``."""
    if not len(sorted_set):
        return np.zeros(len(values), dtype=bool)
    pos = np.searchsorted(sorted_set, values)
    np.minimum(pos, len(sorted_set) - 1, out=pos)
    return sorted_set[pos] == values


def _merge(cand, place, sched, wall, pos, has, extras) -> list[np.ndarray]:
    """Rows of one schedule with the same instant: the earliest nominal keeps it (DESIGN.md §2).

    Rows are in output order, where such rows are neighbours (one sort key).
    Distinct wall times resolve to distinct instants unless a gap policy moved
    one: only runs around moved rows with an instant (``cand``) are looked at.
    ``pos``/``has``: the special rows' positions and whether they have an
    instant (every other row has one). Returns the rows that lose theirs.
    """
    if not len(cand):
        return []
    n = len(place)

    def same(a, b):
        return (place[a] == place[b]) & (sched[a] == sched[b])

    lo, hi = cand.copy(), cand + 1  # each candidate's run of equal keys [lo, hi), grown a row at a time
    while len(m := np.flatnonzero(lo > 0)) and len(m := m[same(lo[m] - 1, lo[m])]):
        lo[m] -= 1
    while len(m := np.flatnonzero(hi < n)) and len(m := m[same(hi[m], hi[m] - 1)]):
        hi[m] += 1
    lost = []
    for a, b in sorted(set(zip(lo.tolist(), hi.tolist()))):  # merges are rare (a few per zone and century)
        rows = np.arange(a, b)
        k = np.minimum(np.searchsorted(pos, rows), len(pos) - 1)
        rows = rows[(pos[k] != rows) | has[k]]  # a row without an instant (gap-skipped) takes no part
        if len(rows) < 2:
            continue
        rows = rows[np.argsort(wall[rows], kind="stable")]
        keeper = int(rows[0])
        for loser in rows[1:].tolist():
            lost.append(np.array([loser]))
            extras.append((np.array([keeper]), f"merged_with:{iso(wall[loser])}"))
            extras.append((np.array([loser]), f"merged_into:{iso(wall[keeper])}"))
    return lost


def _exclude(scheds, sched, wall, extras) -> list[np.ndarray]:
    """Rows of a calendar's schedules on its days lose their instant (``excluded:<calendar>@<version>``)."""
    by_calendar: dict[Calendar, list[int]] = {}
    for i, s in enumerate(scheds):
        for cal in s.calendars:
            by_calendar.setdefault(cal, []).append(i)
    lost = []
    for cal, members in by_calendar.items():
        member = np.zeros(len(scheds), dtype=bool)
        member[members] = True
        rows = np.flatnonzero(member[sched])
        if not len(rows):
            continue
        d = wall[rows] // DAY  # days of the members' rows only (a few schedules have calendars)
        first = _EPOCH_DATE + dt.timedelta(days=int(d.min()))
        last = _EPOCH_DATE + dt.timedelta(days=int(d.max()))
        hit = rows[_member(d, cal.days(first, last).astype(np.int64))]
        lost.append(hit)
        extras.append((hit, cal.note))
    return lost


def _notes(n: int, pos: np.ndarray, dst: np.ndarray, inv: np.ndarray,
           extras: list[tuple[np.ndarray, str]], vocab: dict[str, int]) -> pl.Series:
    """The ``notes`` list column (dst, invalid_day, merged, excluded, in that order) via Arrow offsets.

    ``pos``: the special rows' positions, with their ``dst`` and ``inv``
    codes; ``extras``: (positions, note) in the order they are written.
    """
    inv_codes = np.array([-1] + [vocab.setdefault(_INVALID_NOTES[k], len(vocab)) for k in (1, 2)], np.int32)
    r_dst = np.flatnonzero(dst >= 0)
    r_inv = np.flatnonzero(inv > 0)
    where = [pos[r_dst], pos[r_inv]] + [rows for rows, _ in extras]
    codes = [dst[r_dst].astype(np.int32), inv_codes[inv[r_inv]]] + \
        [np.full(len(rows), vocab.setdefault(note, len(vocab)), np.int32) for rows, note in extras]
    where_, codes_ = np.concatenate(where).astype(np.int64), np.concatenate(codes)
    order = np.argsort(where_, kind="stable")  # per row: in the order above
    where_, codes_ = where_[order], codes_[order]
    # offsets[i + 1] - offsets[i] notes on row i: counts at the noted rows, then a running sum
    offsets = np.zeros(n + 1, dtype=np.int64)
    np.add.at(offsets, where_ + 1, 1)
    np.cumsum(offsets, out=offsets)
    values = pa.array(list(vocab), pa.large_string()).take(pa.array(codes_, pa.int32()))
    return pl.Series("notes", pa.LargeListArray.from_arrays(pa.array(offsets), values), dtype=pl.List(pl.String))
