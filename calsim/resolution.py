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

A policy that depends on the hour: :class:`ByLocalHour` applies one policy
to a time whose local hour is in a set and another to the rest, as Dagster
1.13 repairs only the times of hours 1-3 (``DAYLIGHT_SAVINGS_HOURS``):
``gap=ByLocalHour((1, 2, 3), inside="next_valid", outside="shift")``,
``fold=ByLocalHour((1, 2, 3), inside="second", outside="first")``. Each row
carries the note of the policy it met.

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

from collections.abc import Iterable
from dataclasses import KW_ONLY, dataclass
from typing import Literal, cast, get_args

import numpy as np
import polars as pl
import pyarrow as pa

from .errors import (AmbiguousTimeError, NonexistentTimeError, PolicyError, check_choice, choices,
                     refuse_unknown_keywords, shown)
from .tz.release import ReleaseLike, release as get_release
from .times import DAY_US, US, local_us
from .tz.tzif import ZoneTable

__all__ = ["resolve", "GapPolicy", "FoldPolicy", "GapSetting", "FoldSetting", "ByLocalHour", "KIND", "Resolved",
           "resolve_wall", "check_gap", "check_fold", "policies"]

GapPolicy = Literal["skip", "shift", "next_valid", "shift_backward", "reject"]
FoldPolicy = Literal["first", "second", "both", "reject"]
HOUR_US = 3600 * US


@refuse_unknown_keywords()
@dataclass(frozen=True)
class ByLocalHour:
    """A gap or fold policy that depends on the local hour of the time that meets the change.

    A nominal time that falls in a gap (as ``gap=``) or a fold (as
    ``fold=``) takes ``inside`` when its local hour (0-23) is one of
    ``hours``, else ``outside``; times that meet no change resolve as
    always. For a one-hour change on the hour (every change of New York,
    Berlin, Santiago or Beirut) the hour of the time is the hour of the
    change; a change off the hour (Pacific/Chatham's 02:45) can put the times
    of one gap on both sides of the test. Each row carries the note of the
    policy it met (``dst_gap_next_valid``, ``dst_gap_shifted``...).

    Parameters
    ----------
    hours
        Whole hours 0-23 (any iterable; kept as a sorted tuple), at least one.
    inside, outside : str, keyword-only
        Both gap policies (``"skip"``, ``"shift"``, ``"next_valid"``,
        ``"shift_backward"``, ``"reject"``) for ``gap=``, or both fold
        policies (``"first"``, ``"second"``, ``"both"``, ``"reject"``) for ``fold=``.

    Dagster 1.13's cron iterator repairs a gap or fold time only when its
    hour is in ``DAYLIGHT_SAVINGS_HOURS = {1, 2, 3}``
    (``dagster/_utils/schedules.py`` 26, 100-129): a nonexistent time runs at
    the end of the gap, a repeated one in its second pass; at midnight
    changes the unrepaired 00:30 runs with the offset before the gap (01:30
    new time) and a repeated 23:30 in its first pass:

    >>> import calsim
    >>> gap = ByLocalHour((1, 2, 3), inside="next_valid", outside="shift")
    >>> [str(calsim.resolve([t], z, "2026f", gap=gap)["due_utc"][0]) for t, z in
    ...  (("2026-03-08T02:30", "America/New_York"), ("2026-09-06T00:30", "America/Santiago"))]
    ['2026-03-08 07:00:00+00:00', '2026-09-06 04:30:00+00:00']
    """

    hours: tuple[int, ...]
    _: KW_ONLY
    inside: str
    outside: str

    def __post_init__(self) -> None:
        given = self.hours
        if isinstance(given, (str, bytes)) or not isinstance(given, Iterable):
            raise PolicyError(f"ByLocalHour.hours: {shown(given)} is not a collection of hours "
                              "(allowed: whole hours 0-23, e.g. (1, 2, 3))")
        hours = []
        for h in given:
            if isinstance(h, bool) or not isinstance(h, (int, np.integer)) or not 0 <= int(h) <= 23:
                raise PolicyError(f"ByLocalHour.hours: {shown(h)} in {shown(given)} is not an hour "
                                  "(allowed: whole hours 0-23, e.g. (1, 2, 3))")
            hours.append(int(h))
        if not hours:
            raise PolicyError(f"ByLocalHour.hours: {shown(given)} names no hour (allowed: one or more whole "
                              "hours 0-23, e.g. (1, 2, 3); for one policy at every hour give the policy itself)")
        object.__setattr__(self, "hours", tuple(sorted(set(hours))))
        both = (*_GAP_ONLY, *_FOLD_ONLY, "reject")
        for part in ("inside", "outside"):
            check_choice(f"ByLocalHour.{part}", getattr(self, part), both, noun="policy")
        kinds = {"gap" if p in _GAP_ONLY else "fold" for p in (self.inside, self.outside) if p != "reject"}
        if len(kinds) > 1:
            raise PolicyError(f"ByLocalHour: inside={self.inside!r} and outside={self.outside!r} mix a gap and a "
                              f"fold policy (allowed: two of {choices(get_args(GapPolicy))} for gap=, or two of "
                              f"{choices(get_args(FoldPolicy))} for fold=)")


_GAP_ONLY = ("skip", "shift", "next_valid", "shift_backward")
_FOLD_ONLY = ("first", "second", "both")

# What a Schedule or a Preset may hold: a policy above, a ByLocalHour of them, or "scheduler"
# (calsim.emulation.SCHEDULER): fire the rule as its own scheduler walks it. Emulation settles those rows
# before resolution sees a policy.
GapSetting = GapPolicy | Literal["scheduler"] | ByLocalHour
FoldSetting = FoldPolicy | Literal["scheduler"] | ByLocalHour


def check_gap(value: object, *, field: str = "gap", extra: tuple[str, ...] = ()) -> GapSetting:
    """``value`` if it is a gap policy, one of ``extra`` or a :class:`ByLocalHour` of gap policies, else
    :class:`~calsim.PolicyError` naming ``field``, the value and what is allowed."""
    return cast(GapSetting, _check(value, field, get_args(GapPolicy), extra))


def check_fold(value: object, *, field: str = "fold", extra: tuple[str, ...] = ()) -> FoldSetting:
    """:func:`check_gap` for fold policies."""
    return cast(FoldSetting, _check(value, field, get_args(FoldPolicy), extra))


def _check(value: object, field: str, allowed: tuple[str, ...], extra: tuple[str, ...]) -> object:
    if isinstance(value, ByLocalHour):
        for part in ("inside", "outside"):
            check_choice(f"{field}: ByLocalHour.{part}", getattr(value, part), allowed, noun="policy")
        return value
    return check_choice(field, value, (*allowed, *extra), noun="policy")


def policies(setting: object) -> tuple[str, ...]:
    """The policies a setting can apply: ``("shift",)``, or a ByLocalHour's ``(inside, outside)``."""
    return (setting.inside, setting.outside) if isinstance(setting, ByLocalHour) else (str(setting),)

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
    ``kind`` codes 0 ok, 1 gap, 2 fold (3 gap, 4 fold under a :class:`ByLocalHour`'s
    ``outside``), and a row of code ``k > 0`` carries ``note_vocab[k - 1]``. ``due`` is UTC
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
    gap: str | ByLocalHour = "skip",
    fold: str | ByLocalHour = "first",
    version: str = "?",
    schedule: str | None = None,
) -> Resolved:
    """Resolve int64 wall-clock microseconds against one zone table (the vectorised kernel).

    ``gap``/``fold`` may be a :class:`ByLocalHour`: its rows under ``outside``
    get kind codes 3 (gap) and 4 (fold) and the notes ``note_vocab[2:4]``.
    """
    gap = check_gap(gap)
    fold = check_fold(fold)
    vocab = _vocab(gap, fold)
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
    # Each policy with the rows it applies to (a ByLocalHour splits its rows by their local hour).
    gaps = _by_policy(gap, is_gap, wall, kind) if is_gap.any() else []
    folds = _by_policy(fold, is_fold, wall, kind) if is_fold.any() else []

    for p, m in gaps:
        if p == "reject" and m.any():
            raise NonexistentTimeError(_reject_message("gap", m, wall, idx0, table, version, schedule))
    for p, m in folds:
        if p == "reject" and m.any():
            raise AmbiguousTimeError(_reject_message("fold", m, wall, idx0, table, version, schedule))

    n = len(wall)
    # (A ByLocalHour with two equal policies is one: each policy has at most one row mask.)
    skipped = [m for p, m in gaps if p == "skip" and m.any()]
    has_due = ~skipped[0] if skipped else None
    second = [m for p, m in folds if p == "second" and m.any()]
    # ok rows and fold "first": u0 with its own offset.
    offset = off0.copy() if gaps or second else off0
    due = off0.astype(np.int64)
    due *= -US
    due += wall
    for p, m in gaps:
        g = np.flatnonzero(m)
        if p == "skip":
            offset[g] = 0
        elif len(g):
            if p == "shift_backward":
                due[g] = wall[g] - off1[g].astype(np.int64) * US
            elif p == "next_valid":
                due[g] = utc[idx0[g]]
            # The offset in force at the chosen instant (after the jump for
            # shift/next_valid, before it for shift_backward).
            offset[g] = offs_s[np.searchsorted(utc, due[g], side="right")]
    fold_col = None
    if second:
        f = np.flatnonzero(second[0])
        due[f] = wall[f] - off1[f].astype(np.int64) * US
        offset[f] = off1[f]
        fold_col = second[0].view(np.int8)
    both = [m for p, m in folds if p == "both" and m.any()]
    if both:
        row = np.repeat(np.arange(n), np.where(both[0], 2, 1))
        again = np.zeros(len(row), dtype=bool)
        again[1:] = row[1:] == row[:-1]
        u1 = wall[row] - off1[row].astype(np.int64) * US
        return Resolved(
            row,
            wall[row],
            again.view(np.int8) if fold_col is None else fold_col[row] | again.view(np.int8),
            kind[row],
            np.where(again, u1, due[row]),
            None if has_due is None else has_due[row],
            np.where(again, off1[row], offset[row]),
            vocab,
        )
    return Resolved(None, wall, fold_col, kind, due, has_due, offset, vocab)


def _vocab(gap: object, fold: object) -> tuple[str, ...]:
    """The notes of kind codes 1 (gap) and 2 (fold), then 3 and 4 (their ``outside`` policy) for a ByLocalHour."""
    g, f = policies(gap), policies(fold)
    vocab: tuple[str, ...] = (GAP_NOTES.get(g[0], ""), FOLD_NOTES.get(f[0], ""))
    if len(g) + len(f) > 2:
        vocab += (GAP_NOTES.get(g[-1], ""), FOLD_NOTES.get(f[-1], ""))
    return vocab


def _by_policy(setting: object, is_x: np.ndarray, wall: np.ndarray, kind: np.ndarray) -> list[tuple[str, np.ndarray]]:
    """``[(policy, rows)]`` for the anomaly rows ``is_x``; rows under a ByLocalHour's ``outside`` get kind + 2."""
    if not isinstance(setting, ByLocalHour) or setting.inside == setting.outside:
        return [(policies(setting)[0], is_x)]
    at = np.flatnonzero(is_x)
    out = at[~np.isin(wall[at] // HOUR_US % 24, setting.hours)]  # the local hour of each (floor: before 1970 too)
    if not len(out):
        return [(setting.inside, is_x)]
    outside = np.zeros(len(is_x), dtype=bool)
    outside[out] = True
    kind[out] += 2
    return [(setting.inside, is_x & ~outside), (setting.outside, outside)]


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


_KIND_OF = np.array([OK, GAP, FOLD, GAP, FOLD], np.uint8)  # kind code -> KIND (3, 4: a ByLocalHour's outside)


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
            pl.Series("kind", _KIND_OF[r.kind]).cat.to(KIND),
            notes_column(r.kind, r.note_vocab),
        ]
    )


def resolve(
    local_times: object,
    zone: str,
    release: ReleaseLike = None,
    gap: GapPolicy | ByLocalHour = "skip",
    fold: FoldPolicy | ByLocalHour = "first",
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
    gap : {"skip", "shift", "next_valid", "shift_backward", "reject"} or ByLocalHour
        What a time that does not exist becomes (see the module docstring);
        a :class:`ByLocalHour` picks one of two by the time's local hour.
    fold : {"first", "second", "both", "reject"} or ByLocalHour
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
    check_gap(gap)
    check_fold(fold)
    rel = get_release(release)
    wall = local_us(local_times)
    table = rel.table(zone)
    return resolved_frame(resolve_wall(wall, table, gap=gap, fold=fold, version=rel.version))
