"""``expand``: many schedules over a UTC window -> one occurrence frame.

Each schedule's rule produces nominal wall times (vectorised per rule kind),
which are resolved in the schedule's zone with its gap and fold policies
(:mod:`calsim.resolve`). Then, in this order, as RFC 5545 builds the set:

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
from dataclasses import dataclass, field

import numpy as np
import polars as pl
import pyarrow as pa

from .errors import InputError
from .releases import Release, ReleaseLike, release as get_release
from .resolve import FOLD_NOTES, GAP_NOTES, Resolved, resolve_wall
from .rules.cron import Cron
from .rules.every import Every
from .rules.rrule import RRule
from .rules.window import Window
from .schedule import Schedule, check_revisions
from .times import US, instant_us
from .tzif import ZoneTable

__all__ = ["expand", "OCCURRENCE_SCHEMA", "as_schedules"]

DAY = 86400 * US
_MARGIN = 2 * DAY  # wall times within two days of the UTC window can land in it (offsets < 26 h)
_INVALID_NOTES = ("", "invalid_day_backward", "invalid_day_forward")
_YEAR = 366 * DAY
# A COUNT rule that finds no instance in 400 years (a full Gregorian cycle)
# never will: the search stops there instead of hanging.
_SEARCH_LIMIT = 400 * 365 * DAY

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


@dataclass
class _Part:
    """One schedule's rows, before the window and the frame."""

    schedule: Schedule
    wall: np.ndarray
    fold: np.ndarray
    due: np.ndarray
    has_due: np.ndarray
    offset: np.ndarray
    place: np.ndarray
    notes: list[tuple[np.ndarray, str]] = field(default_factory=list)


def _start_wall(s: Schedule, table: ZoneTable) -> int:
    if s.start_wall is not None:
        return s.start_wall
    assert s.start_utc is not None
    return s.start_utc + int(table.offset_at_utc(np.array([s.start_utc // US]))[0]) * US


def _resolve(s: Schedule, walls: np.ndarray, table: ZoneTable, version: str) -> Resolved:
    return resolve_wall(walls, table, gap=s.gap, fold=s.fold, version=version, schedule=s.id)


def _rule_walls(s: Schedule, rule, dtstart: int, lo: int, hi: int) -> tuple[np.ndarray, np.ndarray]:
    lo = max(lo, dtstart)
    if hi <= lo:
        return np.zeros(0, np.int64), np.zeros(0, np.int8)
    if isinstance(rule, RRule):
        return rule.candidates(dtstart, lo, hi, s.invalid_day)
    walls = rule.wall_times(lo, hi)
    return walls, np.zeros(len(walls), np.int8)


def _counted_walls(s: Schedule, rule: RRule, dtstart: int, table: ZoneTable, version: str):
    """Walls from DTSTART through the COUNT-th instance that survives the gap policy."""
    want = rule.count
    assert want is not None
    span = 60 * DAY
    hi = dtstart + span
    searched_empty = 0
    while True:
        walls, inv = rule.candidates(dtstart, dtstart, hi, s.invalid_day)
        if len(walls):
            counted = np.ones(len(walls), dtype=bool)
            if s.gap == "skip":
                # Folds do not change what is counted: one nominal instance each.
                counted = resolve_wall(walls, table, gap="skip", fold="first").kind != 1
            if int(counted.sum()) >= want:
                last = int(np.flatnonzero(counted)[want - 1])
                return walls[: last + 1], inv[: last + 1]
            searched_empty = 0
        else:
            searched_empty = hi - dtstart
        if searched_empty > _SEARCH_LIMIT or hi > 253402300799 * US:
            return walls, inv
        span *= 2
        hi = dtstart + span


def _expand_one(s: Schedule, rel: Release, lo_u: int, hi_u: int) -> _Part | None:
    table = rel.table(s.zone)
    rule = s.parsed_rule
    lo = lo_u if s.from_utc is None else max(lo_u, s.from_utc)
    hi = hi_u if s.to_utc is None else min(hi_u, s.to_utc)
    if hi <= lo:
        return None
    if isinstance(rule, Every):
        return _expand_every(s, rule, table, rel.version, lo, hi)

    dtstart = _start_wall(s, table)
    if isinstance(rule, RRule) and rule.count is not None:
        walls, inv = _counted_walls(s, rule, dtstart, table, rel.version)
        walls_lo = lo - _MARGIN
        keep = walls >= walls_lo
        walls, inv = walls[keep], inv[keep]
        keep = walls < hi + _MARGIN
        walls, inv = walls[keep], inv[keep]
    else:
        walls, inv = _rule_walls(s, rule, dtstart, lo - _MARGIN, hi + _MARGIN)
    if isinstance(rule, RRule) and rule.until is not None and not rule.until_utc:
        keep = walls <= rule.until  # UNTIL is inclusive (RFC 5545 §3.3.10)
        walls, inv = walls[keep], inv[keep]
    if s.rdate_wall:
        extra = np.array(s.rdate_wall, dtype=np.int64)
        extra = extra[(extra >= lo - _MARGIN) & (extra < hi + _MARGIN) & ~np.isin(extra, walls)]
        if len(extra):
            walls = np.concatenate([walls, extra])
            inv = np.concatenate([inv, np.zeros(len(extra), np.int8)])
            order = np.argsort(walls, kind="stable")
            walls, inv = walls[order], inv[order]
    if s.exdate_wall:
        keep = ~np.isin(walls, np.array(s.exdate_wall, dtype=np.int64))
        walls, inv = walls[keep], inv[keep]

    r = _resolve(s, walls, table, rel.version)
    row = r.row if r.row is not None else np.arange(len(walls))
    has_due = np.ones(len(row), dtype=bool) if r.has_due is None else r.has_due.copy()
    fold = np.zeros(len(row), np.int8) if r.fold is None else r.fold
    part = _Part(s, r.wall, fold, r.due, has_due, r.offset, r.due.copy())
    _dst_notes(part, r)
    inv_rows = inv[row]
    for code in (1, 2):
        hit = np.flatnonzero(inv_rows == code)
        if len(hit):
            part.notes.append((hit, _INVALID_NOTES[code]))
    if isinstance(rule, RRule) and rule.until is not None and rule.until_utc:
        keep = part.place <= rule.until
        _take(part, keep)
    _merge(part)
    _exclude(part)
    _take(part, (part.place >= lo) & (part.place < hi))
    return part


def _dst_notes(part: _Part, r: Resolved) -> None:
    gap_note, fold_note = r.note_vocab
    gaps = np.flatnonzero(r.kind == 1)
    if len(gaps):
        part.notes.append((gaps, gap_note))
    folds = np.flatnonzero(r.kind == 2)
    if len(folds):
        part.notes.append((folds, fold_note))


def _take(part: _Part, keep: np.ndarray) -> None:
    if keep.all():
        return
    new_index = np.cumsum(keep) - 1
    for name in ("wall", "fold", "due", "has_due", "offset", "place"):
        setattr(part, name, getattr(part, name)[keep])
    notes = []
    for rows, note in part.notes:
        rows = rows[keep[rows]]
        if len(rows):
            notes.append((new_index[rows], note))
    part.notes = notes


def _merge(part: _Part) -> None:
    """Rows of one schedule with the same instant: the earliest nominal keeps it (DESIGN.md §2)."""
    idx = np.flatnonzero(part.has_due)
    if len(idx) < 2:
        return
    due = part.due[idx]
    order = np.lexsort((part.wall[idx], due))
    sorted_due = due[order]
    dup = np.flatnonzero(sorted_due[1:] == sorted_due[:-1]) + 1
    if not len(dup):
        return
    for j in dup:  # merges are rare (a handful per zone and century): a loop is fine
        loser = int(idx[order[j]])
        k = j
        while k > 0 and sorted_due[k - 1] == sorted_due[j]:
            k -= 1
        keeper = int(idx[order[k]])
        part.has_due[loser] = False
        part.notes.append((np.array([keeper]), f"merged_with:{iso(part.wall[loser])}"))
        part.notes.append((np.array([loser]), f"merged_into:{iso(part.wall[keeper])}"))


def _exclude(part: _Part) -> None:
    if not part.schedule.calendars or not len(part.wall):
        return
    day = part.wall // DAY
    first = dt.date(1970, 1, 1) + dt.timedelta(days=int(day.min()))
    last = dt.date(1970, 1, 1) + dt.timedelta(days=int(day.max()))
    for cal in part.schedule.calendars:
        days = cal.days(first, last).astype(np.int64)
        hit = np.flatnonzero(np.isin(day, days))
        if len(hit):
            part.has_due[hit] = False
            part.notes.append((hit, cal.note))


def _expand_every(s: Schedule, rule: Every, table: ZoneTable, version: str, lo: int, hi: int) -> _Part:
    if s.start_utc is not None:
        start_utc = s.start_utc
    elif s.start_wall is not None:
        # A naive start is wall time: its instant (gap -> shift, fold -> first) starts the interval.
        start_utc = int(resolve_wall(np.array([s.start_wall]), table, gap="shift", fold="first").due[0])
    else:
        start_utc = rule.anchor_us(0)
    # Runs fall on anchor + k * period (the anchor defaults to the start), never before the start.
    inst = rule.instants(max(lo, start_utc), hi, rule.anchor_us(start_utc))
    offset = table.offset_at_utc(inst // US)
    wall = inst + offset.astype(np.int64) * US
    # An instant in the second pass of a repeated hour has fold 1 (PEP 495).
    first = resolve_wall(wall, table, gap="shift", fold="first").due
    fold = (first != inst).astype(np.int8)
    return _Part(s, wall, fold, inst, np.ones(len(inst), bool), offset, inst.copy())


def expand(schedules: object, start: object, end: object, release: ReleaseLike = None) -> pl.DataFrame:
    """Expand schedules into occurrences over the UTC window ``[start, end)``.

    Parameters
    ----------
    schedules
        A :class:`~calsim.Schedule` or a list of them (several revisions of
        one id allowed, with non-overlapping validity windows).
    start, end
        Instants (ISO with ``Z``/offset, aware datetimes); naive means UTC.
    release
        The tz database release (see :func:`calsim.release`).

    Returns
    -------
    polars.DataFrame
        The occurrence frame of DESIGN.md §4: ``schedule_id``, ``revision``,
        ``nominal_local``, ``fold``, ``zone``, ``tzdata``, ``due_utc`` (null
        when there is no run: gap-skipped, merged, excluded),
        ``utc_offset_s``, ``notes``; sorted by instant (a row without one by
        its placement), then schedule, revision, nominal time and fold.
    """
    rel = get_release(release)
    lo = instant_us(start, "start")
    hi = instant_us(end, "end")
    if hi <= lo:
        raise InputError(f"end: {end!r} is not after start {start!r} (the window [start, end) would be empty)")
    scheds = as_schedules(schedules)
    check_revisions(scheds)
    order = sorted(range(len(scheds)), key=lambda i: (scheds[i].id, scheds[i].revision))
    parts = [p for p in (_expand_one(scheds[i], rel, lo, hi) for i in order) if p is not None]
    return occurrence_frame(parts, rel.version)


def occurrence_frame(parts: list[_Part], version: str) -> pl.DataFrame:
    """Concatenate parts (already in schedule, revision order) into the sorted occurrence frame."""
    sizes = np.array([len(p.wall) for p in parts], dtype=np.int64)
    n = int(sizes.sum())
    if n == 0:
        return pl.DataFrame(schema=OCCURRENCE_SCHEMA)
    cat = lambda name: np.concatenate([getattr(p, name) for p in parts])  # noqa: E731
    wall, fold, due, has_due = cat("wall"), cat("fold"), cat("due"), cat("has_due")
    offset, place = cat("offset"), cat("place")
    part_of = np.repeat(np.arange(len(parts)), sizes)
    starts = np.concatenate([[0], np.cumsum(sizes)[:-1]])

    # Rows are in (schedule, revision, nominal, fold) order already; a stable
    # sort by placement instant gives the contract's order.
    perm = np.argsort(place, kind="stable")
    inverse = np.empty(n, dtype=np.int64)
    inverse[perm] = np.arange(n)

    vocab: dict[str, int] = {}
    note_rows, note_codes = [], []
    for k, p in enumerate(parts):
        for rows, note in p.notes:
            code = vocab.setdefault(note, len(vocab))
            note_rows.append(inverse[rows + starts[k]])
            note_codes.append(np.full(len(rows), code, dtype=np.int32))
    if note_rows:
        nr = np.concatenate(note_rows)
        nc = np.concatenate(note_codes)
        o = np.argsort(nr, kind="stable")
        nr, nc = nr[o], nc[o]
        offsets = np.zeros(n + 1, dtype=np.int64)
        np.cumsum(np.bincount(nr, minlength=n), out=offsets[1:])
        values = pa.array(list(vocab), pa.large_string()).take(pa.array(nc))
    else:
        offsets = np.zeros(n + 1, dtype=np.int64)
        values = pa.array([], pa.large_string())
    notes = pl.Series("notes", pa.LargeListArray.from_arrays(pa.array(offsets), values), dtype=pl.List(pl.String))

    ids = pl.Series("schedule_id", [p.schedule.id for p in parts], dtype=pl.String)
    zones = pl.Series("zone", [p.schedule.zone for p in parts], dtype=pl.String)
    revs = np.array([p.schedule.revision for p in parts], dtype=np.int64)
    pidx = pl.Series(part_of[perm])
    due_s = pl.Series("due_utc", due[perm], dtype=pl.Int64)
    off_s = pl.Series("utc_offset_s", offset[perm].astype(np.int32), dtype=pl.Int32)
    if not has_due.all():
        mask = pl.Series(~has_due[perm])
        due_s = due_s.set(mask, None)
        off_s = off_s.set(mask, None)
    return pl.DataFrame(
        [
            ids.gather(pidx),
            pl.Series("revision", revs[part_of[perm]], dtype=pl.Int64),
            pl.Series("nominal_local", wall[perm], dtype=pl.Int64).cast(pl.Datetime("us")),
            pl.Series("fold", fold[perm], dtype=pl.Int8),
            zones.gather(pidx),
            pl.repeat(version, n, dtype=pl.String, eager=True).alias("tzdata"),
            due_s.cast(pl.Datetime("us", "UTC")),
            off_s,
            notes,
        ]
    )
