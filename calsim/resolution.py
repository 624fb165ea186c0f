"""Resolution: nominal local wall times -> UTC instants, whole columns at a time.

A nominal time is what a rule produces in local wall time; resolving it with
a release gives the instant it really happens. Around a transition a wall
time can be missing (a *gap*: clocks jump forward) or happen twice (a *fold*:
clocks fall back). What calsim then does is a policy, and every row that met
a gap or a fold says so in its ``notes``.

Gap policies, for 02:30 on America/New_York's 2026-03-08 jump 02:00 -> 03:00:

==================  ===================================  ===========================================
``gap=``            result                               precedent
==================  ===================================  ===========================================
``"skip"`` default  no instant, note ``dst_gap_skipped``  RFC 5545 §3.3.10 ("MUST be ignored")
``"shift"``         07:30Z = 03:30 EDT (offset before)   RFC 5545 §3.3.5, PEP 495 fold=0,
                                                         whenever "compatible"
``"next_valid"``    07:00Z = 03:00 EDT (the jump)        Apple ``.nextTime``, cron running at the
                                                         change
``"shift_backward"`` 06:30Z = 01:30 EST (offset after)   whenever "earlier", PEP 495 fold=1
``"reject"``        :class:`NonexistentTimeError`        strict
==================  ===================================  ===========================================

RFC 5545 §3.3.10 says both that such instances "MUST be ignored" and (via
§3.3.5, erratum 4271) that they are shifted; the default follows the first
sentence, as DESIGN.md records, and ``gap="shift"`` gives the other reading.

Fold policies, for 01:30 on 2026-11-01 (02:00 EDT -> 01:00 EST):
``"first"`` (default, RFC 5545 §3.3.5) 05:30Z, fold 0; ``"second"`` 06:30Z,
fold 1; ``"both"`` two rows, fold 0 then 1; ``"reject"``
:class:`AmbiguousTimeError`.

How it works: each transition ``i`` of a zone table, at UTC ``t`` from offset
``b`` to ``a``, makes the wall-clock interval ``[t + min(a, b), t + max(a, b))``
anomalous (a gap when ``a > b``, a fold when ``a < b``). Exactly as PEP 495's
``zoneinfo`` does, the offset for fold 0 is found by bisecting the upper ends
and the one for fold 1 by bisecting the lower ends; the two candidate
instants ``u0`` and ``u1`` then agree (an ordinary time), ``u0 < u1`` (a
fold) or ``u0 > u1`` (a gap). Two ``numpy.searchsorted`` calls per column.

Examples
--------
>>> import calsim
>>> calsim.resolve(["2026-03-08T02:30", "2026-11-01T01:30"], "America/New_York", "2026f",
...                gap="shift", fold="both").select("nominal_local", "fold", "due_utc", "kind", "notes")
shape: (3, 5)
┌─────────────────────┬──────┬─────────────────────────┬──────┬─────────────────────┐
│ nominal_local       ┆ fold ┆ due_utc                 ┆ kind ┆ notes               │
│ ---                 ┆ ---  ┆ ---                     ┆ ---  ┆ ---                 │
│ datetime[μs]        ┆ i8   ┆ datetime[μs, UTC]       ┆ enum ┆ list[str]           │
╞═════════════════════╪══════╪═════════════════════════╪══════╪═════════════════════╡
│ 2026-03-08 02:30:00 ┆ 0    ┆ 2026-03-08 07:30:00 UTC ┆ gap  ┆ ["dst_gap_shifted"] │
│ 2026-11-01 01:30:00 ┆ 0    ┆ 2026-11-01 05:30:00 UTC ┆ fold ┆ ["dst_fold_both"]   │
│ 2026-11-01 01:30:00 ┆ 1    ┆ 2026-11-01 06:30:00 UTC ┆ fold ┆ ["dst_fold_both"]   │
└─────────────────────┴──────┴─────────────────────────┴──────┴─────────────────────┘
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, get_args

import numpy as np
import polars as pl
import pyarrow as pa

from .errors import AmbiguousTimeError, NonexistentTimeError, check_choice, choices
from .tz.release import ReleaseLike, release as get_release
from .times import DAY_US, US, local_us
from .tz.tzif import ZoneTable

__all__ = ["resolve", "GapPolicy", "FoldPolicy", "GapSetting", "FoldSetting", "KIND", "Resolved", "resolve_wall"]

GapPolicy = Literal["skip", "shift", "next_valid", "shift_backward", "reject"]
FoldPolicy = Literal["first", "second", "both", "reject"]
# What a Schedule or a Preset may hold: a policy above, or "scheduler" (calsim.emulation.SCHEDULER): fire the
# rule as its own scheduler walks it. Emulation settles those rows before resolution sees a policy.
GapSetting = GapPolicy | Literal["scheduler"]
FoldSetting = FoldPolicy | Literal["scheduler"]

KIND = pl.Enum(["ok", "gap", "fold"])
OK, GAP, FOLD = 0, 1, 2

GAP_NOTES = {
    "skip": "dst_gap_skipped",
    "shift": "dst_gap_shifted",
    "next_valid": "dst_gap_next_valid",
    "shift_backward": "dst_gap_shifted_backward",
}
FOLD_NOTES = {"first": "dst_fold_first", "second": "dst_fold_second", "both": "dst_fold_both"}


@dataclass(frozen=True)
class Resolved:
    """Columns of a resolution, one entry per output row (``fold="both"`` doubles fold rows).

    ``row`` maps each output row to its input position (None: one row per input);
    ``fold`` None means all 0 and ``has_due`` None means all true;
    ``kind`` codes 0 ok, 1 gap, 2 fold, and a gap row carries ``note_vocab[0]``,
    a fold row ``note_vocab[1]``. ``due`` is UTC
    microseconds (undefined where ``has_due`` is false); ``offset`` seconds.
    """

    row: np.ndarray | None
    wall: np.ndarray
    fold: np.ndarray | None
    kind: np.ndarray
    due: np.ndarray
    has_due: np.ndarray | None
    offset: np.ndarray
    note_vocab: tuple[str, ...]


def _fmt_wall(us: int) -> str:
    return str(np.datetime64(int(us), "us").astype("datetime64[s]"))


def _fmt_off(seconds: int) -> str:
    sign = "+" if seconds >= 0 else "-"
    s = abs(int(seconds))
    h, rem = divmod(s, 3600)
    m, sec = divmod(rem, 60)
    return f"UTC{sign}{h:02d}:{m:02d}" + (f":{sec:02d}" if sec else "")


def resolve_wall(
    wall: np.ndarray,
    table: ZoneTable,
    *,
    gap: str = "skip",
    fold: str = "first",
    version: str = "?",
    schedule: str | None = None,
) -> Resolved:
    """Resolve int64 wall-clock microseconds against one zone table (the vectorised kernel)."""
    gap = check_choice("gap", gap, get_args(GapPolicy), noun="policy")
    fold = check_choice("fold", fold, get_args(FoldPolicy), noun="policy")
    wall = np.ascontiguousarray(wall, dtype=np.int64)
    if len(wall):
        w_min, w_max = int(wall.min()), int(wall.max())
        last_year = 1970 + w_max // (US * 31_556_952) + 1
        table.covering(last_year)
    offs_s = table.offsets  # int32 seconds; gathers stay small
    offs = offs_s.astype(np.int64) * US
    utc = table.utc * US
    before, after = offs[:-1], offs[1:]
    lower = utc + np.minimum(before, after)
    upper = utc + np.maximum(before, after)
    # PEP 495 / zoneinfo: fold 0 takes the offset of the period whose wall
    # clock runs *until* the upper end of an anomaly, fold 1 the offset of
    # the period that starts at its lower end.
    if len(upper) < 2 or bool(np.all(upper[:-1] <= lower[1:])):
        # Anomalies are disjoint and ordered (every tzdata zone): the fold-1
        # index is the fold-0 one, plus one inside the anomaly ahead.
        if len(wall):
            i = int(np.searchsorted(upper, w_min, side="right"))
            if i == int(np.searchsorted(upper, w_max, side="right")) and (i == len(lower) or lower[i] > w_max):
                # No transition reaches the walls' range (a zone without DST, or
                # a short range): one offset for all, no gap, no fold -- what
                # the per-row search below gives, without searching per row.
                off = offs_s[i]
                due = wall - np.int64(off) * US
                vocab = (GAP_NOTES.get(gap, ""), FOLD_NOTES.get(fold, ""))
                return Resolved(None, wall, None, np.zeros(len(wall), np.int8), due, None,
                                np.full(len(wall), off, dtype=offs_s.dtype), vocab)
        (idx0,) = _searchsorted_right((upper,), wall)
        padded = np.append(lower, _INT64_MAX)
        idx1 = idx0 + (padded[idx0] <= wall).view(np.int8)
        off0 = offs_s[idx0]
        off1 = offs_s[idx1]
        # u0 - u1 = off1 - off0: a gap when the fold-1 reading has the larger
        # offset (u0 later than u1), a fold when it has the smaller one.
        diff = off1 - off0
        is_gap = diff > 0
        is_fold = diff < 0
    else:
        idx0, idx1, is_gap = _crowded_indices(wall, utc, offs)
        off0 = offs_s[idx0]
        off1 = offs_s[idx1]
        is_fold = idx0 != idx1
        is_fold &= ~is_gap
    kind = is_gap.view(np.int8) + 2 * is_fold.view(np.int8)
    any_gap, any_fold = bool(is_gap.any()), bool(is_fold.any())

    if gap == "reject" and any_gap:
        raise NonexistentTimeError(_reject_message("gap", is_gap, wall, idx0, table, version, schedule))
    if fold == "reject" and any_fold:
        raise AmbiguousTimeError(_reject_message("fold", is_fold, wall, idx0, table, version, schedule))

    n = len(wall)
    vocab = (GAP_NOTES.get(gap, ""), FOLD_NOTES.get(fold, ""))
    has_due = None if not (any_gap and gap == "skip") else ~is_gap
    # ok rows and fold "first": u0 with its own offset.
    offset = off0.copy() if any_gap or (any_fold and fold == "second") else off0
    due = off0.astype(np.int64)
    due *= -US
    due += wall
    if any_gap:
        g = np.flatnonzero(is_gap)
        if gap == "skip":
            offset[g] = 0
        else:
            if gap == "shift_backward":
                due[g] = wall[g] - off1[g].astype(np.int64) * US
            elif gap == "next_valid":
                due[g] = utc[idx0[g]]
            # The offset in force at the chosen instant (after the jump for
            # shift/next_valid, before it for shift_backward).
            offset[g] = offs_s[np.searchsorted(utc, due[g], side="right")]
    fold_col = None
    if any_fold and fold == "second":
        f = np.flatnonzero(is_fold)
        due[f] = wall[f] - off1[f].astype(np.int64) * US
        offset[f] = off1[f]
        fold_col = is_fold.view(np.int8)
    if any_fold and fold == "both":
        row = np.repeat(np.arange(n), np.where(is_fold, 2, 1))
        second = np.zeros(len(row), dtype=bool)
        second[1:] = row[1:] == row[:-1]
        u1 = wall[row] - off1[row].astype(np.int64) * US
        return Resolved(
            row,
            wall[row],
            second.view(np.int8),
            kind[row],
            np.where(second, u1, due[row]),
            None if has_due is None else has_due[row],
            np.where(second, off1[row], offset[row]),
            vocab,
        )
    return Resolved(None, wall, fold_col, kind, due, has_due, offset, vocab)

_INT64_MAX = np.iinfo(np.int64).max


def _searchsorted_right(edge_arrays: tuple[np.ndarray, ...], q: np.ndarray) -> list[np.ndarray]:
    """``np.searchsorted(edges, q, side="right")`` for each edge array, via a day-bucket index.

    A zone has a few hundred transitions and a query column can have
    millions of unsorted times; a binary search per query then misses the
    cache at every step. Instead each query's day picks, from a small
    per-day table, the number of edges before that day, and at most ``m``
    comparisons (``m``, the most edges in one day, is 1 or 2 in real zones)
    finish the count. Falls back to ``np.searchsorted`` when the queries span
    far more days than there are queries.
    """
    if len(q) == 0:
        return [np.zeros(0, dtype=np.int64) for _ in edge_arrays]
    lo, hi = int(q.min()), int(q.max())
    origin = lo - lo % DAY_US
    days = (hi - origin) // DAY_US + 1
    if days > 4 * len(q) + 4096:
        return [np.searchsorted(e, q, side="right") for e in edge_arrays]
    starts = origin + np.arange(days + 1, dtype=np.int64) * DAY_US
    bucket = (q - origin) // DAY_US
    out = []
    for edges in edge_arrays:
        per_day = np.searchsorted(edges, starts, side="left")
        m = int(np.max(per_day[1:] - per_day[:-1]))
        base = per_day[:-1].astype(np.int32)[bucket]
        idx = base
        if m:
            padded = np.concatenate([edges, np.full(m, _INT64_MAX, dtype=np.int64)])
            idx = base + (padded[base] <= q).view(np.int8)
            for k in range(1, m):
                idx += (padded[base + k] <= q).view(np.int8)
        out.append(idx)
    return out


def _crowded_indices(wall: np.ndarray, utc: np.ndarray, offs: np.ndarray):
    """Period indices for tables whose anomalies overlap (transitions closer than their jumps).

    tzdata has none, but a synthetic or what-if zone can. zoneinfo's
    bisection is ill-defined there, so calsim uses the definition itself:
    period ``k`` (offset ``offs[k]`` over UTC ``[utc[k-1], utc[k])``) shows
    wall time ``L`` iff ``L - offs[k]`` lies in it; fold 0 is the earliest
    such period, fold 1 the latest, and a time no period shows is a gap
    between the last period that ended before it and the next one. One
    vectorised pass per period: O(periods x times), only on such tables.
    """
    n = len(offs)
    start = np.concatenate([[-(2**62)], utc]) + offs  # no overflow when offs < 0
    end = np.concatenate([utc + offs[:-1], [_INT64_MAX]])
    first = np.full(len(wall), -1, dtype=np.int64)
    last = np.full(len(wall), -1, dtype=np.int64)
    ended = np.zeros(len(wall), dtype=np.int64)
    for k in range(n):
        hit = (wall >= start[k]) & (wall < end[k])
        first = np.where(hit & (first < 0), k, first)
        last = np.where(hit, k, last)
        ended = np.where(wall >= end[k], k, ended)
    is_gap = first < 0
    idx0 = np.where(is_gap, ended, first)
    idx1 = np.where(is_gap, np.minimum(ended + 1, n - 1), last)
    return idx0, idx1, is_gap


def _describe(idx0: int, table: ZoneTable) -> str:
    before, after = int(table.offsets[idx0]), int(table.offsets[idx0 + 1])
    t = int(table.utc[idx0])
    lo = _fmt_wall((t + min(before, after)) * US)[11:]
    hi = _fmt_wall((t + max(before, after)) * US)[11:]
    if after > before:
        return f"clocks jump from {lo} to {hi} ({_fmt_off(before)} -> {_fmt_off(after)})"
    return f"clocks fall back from {hi} to {lo} ({_fmt_off(before)} -> {_fmt_off(after)})"


def _where(schedule: str | None) -> str:
    return f"schedule {schedule!r}: " if schedule else ""


def _reject_message(field: str, mask, wall, idx0, table, version, schedule) -> str:
    """One message for gap='reject' and fold='reject': the first offending time, and how many more."""
    hits = np.flatnonzero(mask)
    i = int(hits[0])
    more = f" (and {len(hits) - 1} more)" if len(hits) > 1 else ""
    what, options = ("does not exist", GAP_NOTES) if field == "gap" else ("happens twice", FOLD_NOTES)
    return (
        f"{field}: {_where(schedule)}local time {_fmt_wall(wall[i])} {what} in {table.name} "
        f"(tzdata {version}): {_describe(int(idx0[i]), table)}{more}; "
        f"with {field}='reject' this is an error, choose {field}={choices(tuple(options))} to resolve it"
    )


def notes_column(kind: np.ndarray, vocab: tuple[str, ...]) -> pl.Series:
    """A ``list[str]`` column: no note for ok rows, ``vocab[0]`` for gaps, ``vocab[1]`` for folds.

    Built through Arrow list offsets, without a Python object per row.
    """
    note = kind.astype(np.int8) - 1
    has = note >= 0
    offsets = np.zeros(len(note) + 1, dtype=np.int64)
    np.cumsum(has, out=offsets[1:])
    values = pa.array(vocab, pa.large_string()).take(pa.array(note[has].astype(np.int64)))
    arr = pa.LargeListArray.from_arrays(pa.array(offsets), values)
    return pl.Series("notes", arr, dtype=pl.List(pl.String))


def resolved_frame(r: Resolved) -> pl.DataFrame:
    """The public resolution frame of DESIGN.md §3 from kernel columns."""
    n = len(r.wall)
    due = pl.Series("due_utc", r.due, dtype=pl.Int64)
    off = pl.Series("utc_offset_s", r.offset, dtype=pl.Int32)
    if r.has_due is not None:
        mask = pl.Series(~r.has_due)
        due = due.set(mask, None)
        off = off.set(mask, None)
    return pl.DataFrame(
        [
            pl.Series("nominal_local", r.wall, dtype=pl.Int64).cast(pl.Datetime("us")),
            (pl.Series("fold", r.fold, dtype=pl.Int8) if r.fold is not None
             else pl.zeros(n, pl.Int8, eager=True).alias("fold")),
            due.cast(pl.Datetime("us", "UTC")),
            off,
            pl.Series("kind", r.kind.astype(np.uint8)).cat.to(KIND),
            notes_column(r.kind, r.note_vocab),
        ]
    )


def resolve(
    local_times: object,
    zone: str,
    release: ReleaseLike = None,
    gap: GapPolicy = "skip",
    fold: FoldPolicy = "first",
) -> pl.DataFrame:
    """Resolve nominal local wall times in ``zone`` to UTC instants.

    Parameters
    ----------
    local_times
        Naive datetimes, naive ISO strings, a numpy ``datetime64`` array or a
        polars ``Datetime`` series without a time zone. Aware inputs raise
        :class:`~calsim.InputError`: a nominal time is wall time in ``zone``.
    zone
        IANA zone name, e.g. ``"America/New_York"``.
    release
        Version (``"2026f"``), ``"installed"``, ``"system"``, a path or a
        :class:`~calsim.Release`; None is the installed tzdata package.
    gap : {"skip", "shift", "next_valid", "shift_backward", "reject"}
        What a time that does not exist becomes (see the module docstring).
    fold : {"first", "second", "both", "reject"}
        What a time that happens twice becomes.

    Returns
    -------
    polars.DataFrame
        One row per input (two for a fold under ``"both"``), in input order:
        ``nominal_local`` Datetime(us), ``fold`` i8 (PEP 495: 1 only for the
        second pass), ``due_utc`` Datetime(us, UTC) (null when skipped),
        ``utc_offset_s`` i32 (offset in force at ``due_utc``, null without an
        instant), ``kind`` Enum ok|gap|fold, ``notes`` list[str].

    Raises
    ------
    NonexistentTimeError, AmbiguousTimeError
        With ``gap="reject"`` / ``fold="reject"``.
    UnknownZoneError, UnknownReleaseError, InputError, PolicyError
    """
    check_choice("gap", gap, get_args(GapPolicy), noun="policy")
    check_choice("fold", fold, get_args(FoldPolicy), noun="policy")
    rel = get_release(release)
    wall = local_us(local_times)
    table = rel.table(zone)
    return resolved_frame(resolve_wall(wall, table, gap=gap, fold=fold, version=rel.version))
