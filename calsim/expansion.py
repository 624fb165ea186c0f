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
from dataclasses import dataclass, field

import numpy as np
import polars as pl
import pyarrow as pa

from .calendars import Calendar
from .errors import InputError
from .tzdb import ReleaseLike, release as get_release
from .resolution import Resolved, resolve_wall
from .rules.every import Every
from .rules.rrule import RRule
from .schedule import Schedule, check_revisions
from .times import US, instant_us
from .tzif import ZoneTable

__all__ = ["expand", "expand_indexed", "OCCURRENCE_SCHEMA", "as_schedules"]

DAY = 86400 * US
_MARGIN = 2 * DAY  # wall times within two days of the UTC window can land in it (offsets < 26 h)
_INVALID_NOTES = ("", "invalid_day_backward", "invalid_day_forward")
# A COUNT rule that finds no instance in 400 years (a full Gregorian cycle)
# never will: the search stops there instead of hanging.
_SEARCH_LIMIT = 400 * 365 * DAY
_MAX_WALL = 253402300799 * US  # 9999-12-31T23:59:59
_EPOCH_DATE = dt.date(1970, 1, 1)

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


def _counted_walls(s: Schedule, rule: RRule, dtstart: int, table: ZoneTable) -> tuple[np.ndarray, np.ndarray]:
    """Walls from DTSTART through the COUNT-th instance that survives the gap policy."""
    want = rule.count
    assert want is not None
    span = 60 * DAY
    while True:
        walls, inv = rule.candidates(dtstart, dtstart, dtstart + span, s.invalid_day)
        if len(walls):
            counted = np.ones(len(walls), dtype=bool)
            if s.gap == "skip":
                # Folds do not change what is counted: one nominal instance each.
                counted = resolve_wall(walls, table, gap="skip", fold="first").kind != 1
            if int(counted.sum()) >= want:
                last = int(np.flatnonzero(counted)[want - 1])
                return walls[: last + 1], inv[: last + 1]
        elif span > _SEARCH_LIMIT:
            return walls, inv  # a rule that never matches: empty, after a bounded search
        if dtstart + span > _MAX_WALL:
            return walls, inv
        span *= 2


def _candidates(s: Schedule, table: ZoneTable, lo: int, hi: int) -> tuple[np.ndarray, np.ndarray]:
    """Nominal walls of one schedule near ``[lo, hi)`` with their invalid_day codes (RFC 5545 set order)."""
    rule = s.parsed_rule
    dtstart = _start_wall(s, table)
    wlo, whi = max(lo - _MARGIN, dtstart), hi + _MARGIN
    if isinstance(rule, RRule) and rule.count is not None:
        walls, inv = _counted_walls(s, rule, dtstart, table)
        keep = (walls >= wlo) & (walls < whi)
        walls, inv = walls[keep], inv[keep]
    elif whi <= wlo:
        walls, inv = np.zeros(0, np.int64), np.zeros(0, np.int8)
    elif isinstance(rule, RRule):
        walls, inv = rule.candidates(dtstart, wlo, whi, s.invalid_day)
    else:
        walls = rule.wall_times(wlo, whi)
        inv = np.zeros(len(walls), np.int8)
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


@dataclass
class _Rows:
    """Column arrays of occurrences of many schedules (``sched`` indexes the sorted schedule list)."""

    sched: list = field(default_factory=list)
    wall: list = field(default_factory=list)
    fold: list = field(default_factory=list)
    due: list = field(default_factory=list)
    has_due: list = field(default_factory=list)
    offset: list = field(default_factory=list)
    dst: list = field(default_factory=list)  # note code into the vocabulary, -1 none
    inv: list = field(default_factory=list)  # 0 none, 1 backward, 2 forward

    def add(self, sched, wall, fold, due, has_due, offset, dst, inv) -> None:
        for name, value in zip(
            ("sched", "wall", "fold", "due", "has_due", "offset", "dst", "inv"),
            (sched, wall, fold, due, has_due, offset, dst, inv),
        ):
            getattr(self, name).append(value)

    def columns(self) -> dict[str, np.ndarray]:
        dtypes = {"sched": np.int32, "wall": np.int64, "fold": np.int8, "due": np.int64,
                  "has_due": bool, "offset": np.int32, "dst": np.int16, "inv": np.int8}
        return {
            name: np.concatenate(getattr(self, name)).astype(dt_, copy=False)
            if getattr(self, name) else np.zeros(0, dt_)
            for name, dt_ in dtypes.items()
        }


def _add_resolved(rows: _Rows, r: Resolved, sched: np.ndarray, inv: np.ndarray, vocab: dict[str, int]) -> None:
    n = len(r.wall)
    gap_code = vocab.setdefault(r.note_vocab[0], len(vocab))
    fold_code = vocab.setdefault(r.note_vocab[1], len(vocab))
    dst = np.where(r.kind == 1, gap_code, np.where(r.kind == 2, fold_code, -1)).astype(np.int16)
    if r.row is not None:
        sched, inv = sched[r.row], inv[r.row]
    rows.add(
        sched, r.wall, np.zeros(n, np.int8) if r.fold is None else r.fold, r.due,
        np.ones(n, bool) if r.has_due is None else r.has_due, r.offset, dst, inv,
    )


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
    offset = table.offset_at_utc(inst // US)
    wall = inst + offset.astype(np.int64) * US
    # An instant in the second pass of a repeated hour has fold 1 (PEP 495).
    fold = (resolve_wall(wall, table, gap="shift", fold="first").due != inst).astype(np.int8)
    return wall, fold, inst, offset


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

    Notes
    -----
    Rule expansion is vectorised per schedule; resolution runs once per
    (zone, gap, fold) group over all of its schedules' times, and merging,
    calendars and the window are column operations over the whole fleet.
    """
    frame, _, _ = expand_indexed(as_schedules(schedules), start, end, release)
    return frame


def expand_indexed(schedules: list[Schedule], start: object, end: object, release: ReleaseLike = None):
    """:func:`expand`, also returning the schedules in frame order and each row's index into them.

    For the simulation, which needs per-row policies without joining on ids.
    """
    rel = get_release(release)
    lo = instant_us(start, "start")
    hi = instant_us(end, "end")
    if hi <= lo:
        raise InputError(f"end: {end!r} is not after start {start!r} (the window [start, end) would be empty)")
    scheds = sorted(schedules, key=lambda s: (s.id, s.revision))
    check_revisions(scheds)
    lo_s = np.array([lo if s.from_utc is None else max(lo, s.from_utc) for s in scheds], dtype=np.int64)
    hi_s = np.array([hi if s.to_utc is None else min(hi, s.to_utc) for s in scheds], dtype=np.int64)

    rows, vocab = _Rows(), {}
    groups: dict[tuple[str, str, str], list[tuple[int, np.ndarray, np.ndarray]]] = {}
    for i, s in enumerate(scheds):
        if hi_s[i] <= lo_s[i]:
            continue
        table = rel.table(s.zone)
        if isinstance(s.parsed_rule, Every):
            wall, fold, inst, offset = _every_rows(s, s.parsed_rule, table, int(lo_s[i]), int(hi_s[i]))
            n = len(wall)
            rows.add(np.full(n, i, np.int32), wall, fold, inst, np.ones(n, bool), offset,
                     np.full(n, -1, np.int16), np.zeros(n, np.int8))
            continue
        walls, inv = _candidates(s, table, int(lo_s[i]), int(hi_s[i]))
        if s.gap == "reject" or s.fold == "reject":  # resolved alone, so the error names it
            r = resolve_wall(walls, table, gap=s.gap, fold=s.fold, version=rel.version, schedule=s.id)
            _add_resolved(rows, r, np.full(len(walls), i, np.int32), inv, vocab)
            continue
        groups.setdefault((s.zone, s.gap, s.fold), []).append((i, walls, inv))
    for (zone, gap, fold), items in groups.items():
        walls = np.concatenate([w for _, w, _ in items])
        inv = np.concatenate([v for _, _, v in items])
        sched = np.repeat(np.array([i for i, _, _ in items], np.int32), [len(w) for _, w, _ in items])
        r = resolve_wall(walls, rel.table(zone), gap=gap, fold=fold, version=rel.version)
        _add_resolved(rows, r, sched, inv, vocab)
    c = rows.columns()
    frame, sched_of_row = _finish(scheds, c, vocab, lo_s, hi_s, rel.version)
    return frame, scheds, sched_of_row


def _finish(scheds: list[Schedule], c: dict[str, np.ndarray], vocab: dict[str, int],
            lo_s: np.ndarray, hi_s: np.ndarray, version: str) -> pl.DataFrame:
    sched, wall, due, has_due = c["sched"], c["wall"], c["due"], c["has_due"]
    place = due  # due is never changed below (only has_due): a row without an instant keeps its placement
    alive = np.ones(len(wall), dtype=bool)
    extras: list[tuple[int, str]] = []

    # A UTC UNTIL is compared with the resolved instant (RFC 5545 §3.3.10).
    until = np.array([s.parsed_rule.until if isinstance(s.parsed_rule, RRule) and s.parsed_rule.until_utc
                      else _MAX_WALL for s in scheds], dtype=np.int64)
    if (until < _MAX_WALL).any():
        alive &= place <= until[sched]

    moved_codes = [code for note, code in vocab.items() if note.startswith("dst_gap_") and note != "dst_gap_skipped"]
    moved = np.zeros(len(vocab) + 1, dtype=bool)
    moved[np.array(moved_codes, dtype=np.int64) + 1] = True
    _merge(sched, wall, due, has_due, alive, moved[c["dst"] + 1], extras)
    _exclude(scheds, sched, wall, has_due, alive, extras)
    if len(lo_s) and (lo_s == lo_s[0]).all() and (hi_s == hi_s[0]).all():  # one window for all: no per-row gather
        keep = alive & (place >= lo_s[0]) & (place < hi_s[0])
    else:
        keep = alive & (place >= lo_s[sched]) & (place < hi_s[sched])

    # Order. Each schedule's rows are one contiguous block, in (nominal, fold)
    # order; putting the blocks in schedule order is a cheap permutation, and
    # a stable sort by placement then gives the contract's order.
    idx = np.flatnonzero(keep)
    s_in = sched[idx]
    starts = np.flatnonzero(np.concatenate([[True], s_in[1:] != s_in[:-1]])) if len(idx) else np.zeros(0, np.int64)
    lens = np.diff(np.append(starts, len(idx)))
    by_sched = np.argsort(s_in[starts], kind="stable")
    block_len, block_start = lens[by_sched], starts[by_sched]
    shift = block_start - np.concatenate([[0], np.cumsum(block_len)[:-1]])
    idx = idx[np.repeat(shift, block_len) + np.arange(len(idx))]
    idx = idx[_stable_argsort(place[idx])]

    # The permutation is close to random (ordered by instant across
    # schedules); polars gathers all columns at once, on every core.
    unsorted = pl.DataFrame(
        {name: pl.Series(name, c[name]) for name in ("sched", "wall", "due", "offset", "fold", "has_due", "dst", "inv")}
    )
    out = unsorted[pl.Series(idx)]
    del unsorted
    dst, inv = out["dst"].to_numpy(), out["inv"].to_numpy()
    notes = _notes(idx, dst, inv, extras, vocab)
    ids = pl.Series("schedule_id", [s.id for s in scheds], dtype=pl.String)
    zones = pl.Series("zone", [s.zone for s in scheds], dtype=pl.String)
    ps = out["sched"].cast(pl.UInt32)
    missing = np.flatnonzero(~out["has_due"].to_numpy())
    due = out["due"].cast(pl.Datetime("us", "UTC")).alias("due_utc")
    offset = out["offset"].alias("utc_offset_s")
    if len(missing):  # nulls written where there is no instant: touches only those rows
        due = due.scatter(missing, None)
        offset = offset.scatter(missing, None)
    revisions = {s.revision for s in scheds}
    frame = pl.DataFrame(
        [
            ids.gather(ps),
            out["wall"].cast(pl.Datetime("us")).alias("nominal_local"),
            out["fold"],
            zones.gather(ps),
            due,
            offset,
            notes,
        ]
    ).with_columns(
        pl.lit(version, pl.String).alias("tzdata"),
        # One revision everywhere (the usual case): a literal column, no gather.
        pl.lit(revisions.pop(), pl.Int64).alias("revision") if len(revisions) == 1
        else pl.Series("revision", [s.revision for s in scheds], dtype=pl.Int64).gather(ps),
    ).select(OCCURRENCE_SCHEMA.names())
    return frame, out["sched"].to_numpy()


def _stable_argsort(keys: np.ndarray) -> np.ndarray:
    """``np.argsort(keys, kind="stable")``, on two cores for large columns.

    numpy releases the GIL while sorting: the rows are split at the median
    key (all rows below it, then the rest, each keeping its order), the two
    halves are sorted in two threads, and concatenated.
    """
    if len(keys) < 2_000_000:
        return np.argsort(keys, kind="stable")
    from concurrent.futures import ThreadPoolExecutor

    pivot = np.partition(keys[:: max(1, len(keys) // 100_001)], 50_000)[50_000]
    low = np.flatnonzero(keys < pivot)
    high = np.flatnonzero(keys >= pivot)
    with ThreadPoolExecutor(2) as pool:
        a, b = pool.map(lambda part: part[np.argsort(keys[part], kind="stable")], (low, high))
    return np.concatenate([a, b])


def _member(values: np.ndarray, sorted_set: np.ndarray) -> np.ndarray:
    """``np.isin`` for a small sorted set: a binary search per value, no sort of ``values``."""
    if not len(sorted_set):
        return np.zeros(len(values), dtype=bool)
    pos = np.searchsorted(sorted_set, values)
    np.minimum(pos, len(sorted_set) - 1, out=pos)
    return sorted_set[pos] == values


def _merge(sched, wall, due, has_due, alive, moved, extras) -> None:
    """Rows of one schedule with the same instant: the earliest nominal keeps it (DESIGN.md §2).

    Distinct wall times resolve to distinct instants unless a gap policy moved
    one (``moved``): only instants of moved rows are searched for partners.
    """
    cand = moved & has_due & alive
    if not cand.any():
        return
    involved = np.zeros(int(sched.max()) + 1, dtype=bool)
    involved[sched[cand]] = True  # only schedules with a moved row can merge
    rows = np.flatnonzero(involved[sched] & has_due & alive)
    idx = rows[_member(due[rows], np.unique(due[cand]))]
    if len(idx) < 2:
        return
    order = idx[np.lexsort((wall[idx], due[idx], sched[idx]))]
    same = (sched[order][1:] == sched[order][:-1]) & (due[order][1:] == due[order][:-1])
    if not same.any():
        return
    keeper = -1
    for k in np.flatnonzero(same) + 1:  # merges are rare (a few per zone and century): a loop is fine
        if k == 1 or not same[k - 2]:  # order[k - 1] opens a run of equal instants: it keeps the instant
            keeper = int(order[k - 1])
        loser = int(order[k])
        has_due[loser] = False
        extras.append((keeper, f"merged_with:{iso(wall[loser])}"))
        extras.append((loser, f"merged_into:{iso(wall[keeper])}"))


def _exclude(scheds, sched, wall, has_due, alive, extras) -> None:
    by_calendar: dict[Calendar, list[int]] = {}
    for i, s in enumerate(scheds):
        for cal in s.calendars:
            by_calendar.setdefault(cal, []).append(i)
    if not by_calendar:
        return
    day = wall // DAY
    for cal, members in by_calendar.items():
        member = np.zeros(len(scheds), dtype=bool)
        member[members] = True
        rows = np.flatnonzero(member[sched] & alive)
        if not len(rows):
            continue
        d = day[rows]
        first = _EPOCH_DATE + dt.timedelta(days=int(d.min()))
        last = _EPOCH_DATE + dt.timedelta(days=int(d.max()))
        hit = rows[_member(d, cal.days(first, last).astype(np.int64))]
        has_due[hit] = False
        extras.extend((int(r), cal.note) for r in hit)


def _notes(idx: np.ndarray, dst: np.ndarray, inv: np.ndarray,
           extras: list[tuple[int, str]], vocab: dict[str, int]) -> pl.Series:
    """The ``notes`` list column (dst, invalid_day, merged, excluded, in that order) via Arrow offsets.

    ``dst`` and ``inv`` are already in output order; ``extras`` name source
    rows, found in the output through ``idx`` (the output's source rows).
    """
    n = len(idx)
    inv_codes = np.array([-1] + [vocab.setdefault(_INVALID_NOTES[k], len(vocab)) for k in (1, 2)], np.int32)
    r_dst = np.flatnonzero(dst >= 0)
    r_inv = np.flatnonzero(inv > 0)
    ex_rows = np.array([r for r, _ in extras], dtype=np.int64)
    ex_codes = np.array([vocab.setdefault(note, len(vocab)) for _, note in extras], dtype=np.int32)
    if len(ex_rows):
        marked = np.zeros(int(max(idx.max(initial=0), ex_rows.max())) + 1, dtype=bool)
        marked[ex_rows] = True
        out_pos = np.flatnonzero(marked[idx])  # output rows that carry an extra note
        pos_of = dict(zip(idx[out_pos].tolist(), out_pos.tolist()))
        found = np.array([pos_of.get(r, -1) for r in ex_rows.tolist()], dtype=np.int64)
        ex_pos, ex_codes = found[found >= 0], ex_codes[found >= 0]
    else:
        ex_pos = np.zeros(0, np.int64)
    rows = np.concatenate([r_dst, r_inv, ex_pos])
    codes = np.concatenate([dst[r_dst].astype(np.int32), inv_codes[inv[r_inv]], ex_codes])
    order = np.argsort(rows, kind="stable")
    rows, codes = rows[order], codes[order]
    offsets = np.zeros(n + 1, dtype=np.int64)
    if len(rows):
        np.cumsum(np.bincount(rows, minlength=n), out=offsets[1:])
    values = pa.array(list(vocab), pa.large_string()).take(pa.array(codes, pa.int32()))
    return pl.Series("notes", pa.LargeListArray.from_arrays(pa.array(offsets), values), dtype=pl.List(pl.String))
