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
>>> for r in f.iter_rows(named=True):
...     print(r["nominal_local"].date(), r["due_utc"] is not None, r["notes"])
2026-03-06 True []
2026-03-07 True []
2026-03-08 False ['dst_gap_skipped']
2026-03-09 True []
2026-03-10 True []
"""

from __future__ import annotations

from typing import Any, Iterable, cast

import numpy as np
import polars as pl

import calsim.limits as limits
from .emulation import SCHEDULER, emulated_rows
from .errors import InputError
from .tz.release import Release, ReleaseLike, release as get_release
from .resolution import Resolved, policies, resolve_wall
from .rules.every import Every
from .rules.rrule import RRule
from .schedule import Schedule, check_revisions
from .times import LAST_US, US, instant_us
from .tz.tzif import ZoneTable
from .occurrence_rows import OCCURRENCE_SCHEMA, add_resolved, finish_frame, Rows, RowWindow, as_strings

__all__ = ["expand", "expand_indexed", "OCCURRENCE_SCHEMA", "as_schedules", "as_strings"]

DAY = 86400 * US
_MARGIN = limits.MARGIN  # wall times within two days of the UTC window can land in it (offsets < 26 h)
# A COUNT rule that finds no instance in 400 years (a full Gregorian cycle)
# never will: the search stops there instead of hanging.
_SEARCH_LIMIT = 400 * 365 * DAY
_MAX_WALL = LAST_US  # 9999-12-31T23:59:59
_LAST_END = LAST_US - 14 * 3600 * US + US  # an end after 9999-12-31T09:59:59Z puts a UTC+14 wall time in year 10000
def as_schedules(schedules: object) -> list[Schedule]:
    if isinstance(schedules, Schedule):
        return [schedules]
    try:
        out = list(cast(Iterable[Any], schedules))  # (what is not iterable raises TypeError here)
    except TypeError:
        raise InputError(f"schedules: expected a Schedule or a list of them, got {type(schedules).__name__}") from None
    for i, s in enumerate(out):
        if not isinstance(s, Schedule):
            raise InputError(f"schedules: item {i} is {type(s).__name__} {s!r}, not a Schedule")
    return out


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
            if "skip" in policies(s.gap):
                # Folds do not change what is counted: one nominal instance each.
                skipped = resolve_wall(walls, table, gap=s.gap, fold="first").has_due
                counted = counted if skipped is None else skipped
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
    if rule.until is not None:
        # Nothing after UNTIL is generated: a local UNTIL is a wall time, a UTC
        # one an instant, whose wall time is less than a margin later.
        whi = min(whi, rule.until + (_MARGIN if rule.until_utc else 1))
    if rule.count is not None:
        walls, inv = _counted_walls(s, cast(RRule, rule), dtstart, table, whi)  # (a COUNT is an RRULE's)
        keep = (walls >= wlo) & (walls < whi)
        walls, inv = walls[keep], inv[keep]
    elif whi <= wlo:
        walls, inv = np.zeros(0, np.int64), np.zeros(0, np.int8)
    elif rule.anchored:
        walls, inv = _shared(memo, (rule, dtstart, wlo, whi, s.invalid_day),  # DTSTART anchors an RRULE
                             lambda: rule.candidates(dtstart, wlo, whi, s.invalid_day))
    else:
        # A cron or window's start is only a lower bound (in wlo).
        walls, inv = _shared(memo, (rule, wlo, whi), lambda: _no_notes(rule.wall_times(wlo, whi)))
    if rule.until is not None and not rule.until_utc:
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


def _local_every(s: Schedule, rule: Every, table: ZoneTable, lo: int, hi: int, version: str) -> Resolved:
    """An ``Every(..., clock="local")``: its walk's nominal walls near ``[lo, hi)``, resolved with the schedule's
    gap and fold (the walk itself follows the gap policy: :meth:`Every.local_walls`).

    An anchor given as an instant is the first run exactly (its own fold), not a wall time to resolve.
    """
    floor = _start_wall(s, table) if s.start_wall is not None or s.start_utc is not None else None
    origin, exact = rule.origin(table, s.start_wall, s.start_utc)
    wlo = lo - _MARGIN if floor is None else max(lo - _MARGIN, floor)
    walls = rule.local_walls(table, origin, wlo, hi + _MARGIN, s.gap, version=version, schedule=s.id)
    if exact is None or not len(walls) or walls[0] != origin:
        return resolve_wall(walls, table, gap=s.gap, fold=s.fold, version=version, schedule=s.id)
    r = resolve_wall(walls[1:], table, gap=s.gap, fold=s.fold, version=version, schedule=s.id)
    m = len(r.wall)
    offset = table.offsets[np.searchsorted(table.utc, [exact // US], side="right")]
    fold0 = resolve_wall(walls[:1], table, gap="shift", fold="first").due != exact  # PEP 495's fold of the anchor
    return Resolved(
        row=np.concatenate([[0], (np.arange(m) if r.row is None else r.row) + 1]),
        wall=np.concatenate([walls[:1], r.wall]),
        fold=np.concatenate([fold0, np.zeros(m, bool) if r.fold is None else r.fold]).astype(np.int8),
        kind=np.concatenate([[0], r.kind]).astype(r.kind.dtype),
        due=np.concatenate([[exact], r.due]),
        has_due=None if r.has_due is None else np.concatenate([[True], r.has_due]),
        offset=np.concatenate([offset, r.offset]).astype(r.offset.dtype),
        note_vocab=r.note_vocab)


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
    rows, vocab = _collect(scheds, rel, Rows(RowWindow.of(scheds, lo_s, hi_s), estimate))
    frame, sched_of_row = finish_frame(scheds, rows, vocab, rel.version, codes)
    return frame, scheds, sched_of_row


def _collect(scheds: list[Schedule], rel: Release, rows: Rows) -> tuple[Rows, dict[str, int]]:
    """The rows of every schedule (nominal walls, resolved, in the window) and the note vocabulary."""
    win = rows.win
    vocab: dict[str, int] = {}
    groups: dict[tuple, list[tuple[int, np.ndarray, np.ndarray]]] = {}  # (zone, gap, fold) -> walls
    tables: dict[str, ZoneTable] = {}
    memo: dict = {}
    for i, s in enumerate(scheds):
        lo, hi = int(win.lo_s[i]), int(win.hi_s[i])
        if hi <= lo:
            continue
        table = tables.get(s.zone) or tables.setdefault(s.zone, rel.table(s.zone))
        if s.parsed_rule.elapsed:
            every = cast(Every, s.parsed_rule)  # (elapsed: Every)
            if every.clock == "local":  # the period on the zone's wall clock: walls resolved with gap and fold
                r = _local_every(s, every, table, lo, hi, rel.version)
                add_resolved(rows, r, i, np.zeros(len(r.wall), np.int8), vocab)
                continue
            wall, fold, inst, offset = _every_rows(s, every, table, lo, hi)
            rows.add(i, wall, inst, offset, fold=fold if fold.any() else None)
            continue
        if s.gap == SCHEDULER:  # the rule's scheduler's own walk decides DST (calsim.emulation)
            _emulated(rows, i, s, table, lo, hi, memo, vocab)
            continue
        walls, inv = _candidates(s, table, lo, hi, memo)
        if "reject" in policies(s.gap) or "reject" in policies(s.fold):  # resolved alone, so the error names it
            r = resolve_wall(walls, table, gap=s.gap, fold=s.fold, version=rel.version, schedule=s.id)
            add_resolved(rows, r, i, inv, vocab)
            continue
        groups.setdefault((s.zone, s.gap, s.fold), []).append((i, walls, inv))
    for zone, gap, fold in list(groups):
        items = groups.pop((zone, gap, fold))  # its per-schedule arrays are freed once concatenated
        walls = np.concatenate([w for _, w, _ in items])
        inv = np.concatenate([v for _, _, v in items])
        sched = np.repeat(np.array([i for i, _, _ in items], np.int32), [len(w) for _, w, _ in items])
        del items
        r = resolve_wall(walls, tables[zone], gap=gap, fold=fold, version=rel.version)
        add_resolved(rows, r, sched, inv, vocab)
    return rows, vocab


def _emulated(rows: Rows, i: int, s: Schedule, table: ZoneTable, lo: int, hi: int, memo: dict,
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
    add_resolved(rows, r, i, np.zeros(len(r.wall), np.int8), vocab)


