"""The occurrence frame: many schedules' rows as they are made, then sorted, merged and turned into columns.

:class:`Rows` keeps the rows of a whole fleet in a few preallocated columns
(window applied as they come, sort key packed with the schedule when short
enough); :func:`finish_frame` sorts them, merges the rows two schedules share
(none: one instant per schedule), applies calendars and EXDATEs, writes the
notes and builds the frame of :data:`OCCURRENCE_SCHEMA` (``schedule_id`` and
``zone`` as codes for the simulation, or strings: :func:`as_strings`).
:mod:`calsim.expansion` decides which wall times each schedule has.
"""

from __future__ import annotations

import datetime as dt
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import nullcontext
from dataclasses import dataclass
from typing import Any, Callable, cast

import numpy as np
import polars as pl
import pyarrow as pa

from .calendars import Calendar
from .resolution import Resolved
from .schedule import Schedule
from .times import LAST_US, US

__all__ = ["OCCURRENCE_SCHEMA", "Rows", "RowWindow", "add_resolved", "finish_frame", "as_strings", "iso"]

DAY = 86400 * US
_MAX_WALL = LAST_US  # 9999-12-31T23:59:59
_INVALID_NOTES = ("", "invalid_day_backward", "invalid_day_forward")
_EPOCH_DATE = dt.date(1970, 1, 1)
_THREAD_MIN_ROWS = 200_000  # below this, finish_frame's overlapped steps run one after the other

OCCURRENCE_SCHEMA = pl.Schema(
    {
        "schedule_id": pl.String(),
        "revision": pl.Int64(),
        "nominal_local": pl.Datetime("us"),
        "fold": pl.Int8(),
        "zone": pl.String(),
        "tzdata": pl.String(),
        "due_utc": pl.Datetime("us", "UTC"),
        "utc_offset_s": pl.Int32(),
        "notes": pl.List(pl.String()),
    }
)



def iso(us: int) -> str:
    """Naive ISO 8601 with seconds, the form notes use (``2011-12-31T09:00:00``)."""
    s = str(np.datetime64(int(us), "us"))
    return s[:19] if s.endswith(".000000") else s


@dataclass
class RowWindow:
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
    def of(cls, scheds: list[Schedule], lo_s: np.ndarray, hi_s: np.ndarray) -> RowWindow:
        one = bool(len(lo_s)) and bool((lo_s == lo_s[0]).all() and (hi_s == hi_s[0]).all())
        until = np.array([s.parsed_rule.until if s.parsed_rule.until_utc
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


class Rows:
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

    def __init__(self, win: RowWindow, capacity: int):
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


def add_resolved(rows: Rows, r: Resolved, sched, inv: np.ndarray, vocab: dict[str, int]) -> None:
    codes = [vocab.setdefault(note, len(vocab)) for note in r.note_vocab]
    # kind 0 ok, 1 gap, 2 fold (3 lost, 4 extra: calsim.emulation) -> note code (-1 none);
    # a chunk of ok rows only keeps the default.
    dst = np.array([-1, *codes], np.int16)[r.kind] if r.kind.any() else None
    if r.row is not None:
        inv = inv[r.row]
        sched = sched if np.ndim(sched) == 0 else sched[r.row]
    rows.add(sched, r.wall, r.due, r.offset, fold=r.fold, has_due=r.has_due, dst=dst,
             inv=inv if inv.any() else None)


def finish_frame(scheds: list[Schedule], rows: Rows, vocab: dict[str, int], version: str,
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
    return frame.with_columns([pl.DataFrame([pl.Series(c, cast(pl.Enum, frame.schema[c]).categories)])
                               [frame[c].to_physical()].to_series() for c in cols])


class _Inline:
    """``submit`` runs at once: a small frame is not worth a thread."""

    def submit(self, fn: Callable[..., Any], *args: Any) -> Future:
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
