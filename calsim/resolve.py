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

from .errors import AmbiguousTimeError, NonexistentTimeError, PolicyError, choices
from .releases import ReleaseLike, release as get_release
from .times import US, local_us
from .tzif import ZoneTable

__all__ = ["resolve", "GapPolicy", "FoldPolicy", "KIND", "Resolved", "resolve_wall", "check_policy"]

GapPolicy = Literal["skip", "shift", "next_valid", "shift_backward", "reject"]
FoldPolicy = Literal["first", "second", "both", "reject"]

KIND = pl.Enum(["ok", "gap", "fold"])
OK, GAP, FOLD = 0, 1, 2

GAP_NOTES = {
    "skip": "dst_gap_skipped",
    "shift": "dst_gap_shifted",
    "next_valid": "dst_gap_next_valid",
    "shift_backward": "dst_gap_shifted_backward",
}
FOLD_NOTES = {"first": "dst_fold_first", "second": "dst_fold_second", "both": "dst_fold_both"}


def check_policy(field: str, value: object, allowed: tuple[str, ...]) -> str:
    """Validate a policy name, raising :class:`PolicyError` naming field, value and choices."""
    if not isinstance(value, str) or value not in allowed:
        raise PolicyError(f"{field}: unknown policy {value!r} (allowed: {choices(allowed)})")
    return value


@dataclass(frozen=True)
class Resolved:
    """Columns of a resolution, one entry per output row (``fold="both"`` doubles fold rows).

    ``row`` maps each output row to its input position; ``due`` is UTC
    microseconds (undefined where ``has_due`` is false); ``note`` indexes
    ``note_vocab`` (-1: no note).
    """

    row: np.ndarray
    wall: np.ndarray
    fold: np.ndarray
    kind: np.ndarray
    due: np.ndarray
    has_due: np.ndarray
    offset: np.ndarray
    note: np.ndarray
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
    gap = check_policy("gap", gap, get_args(GapPolicy))
    fold = check_policy("fold", fold, get_args(FoldPolicy))
    wall = np.ascontiguousarray(wall, dtype=np.int64)
    if len(wall):
        last_year = 1970 + int(wall.max() // (US * 31_556_952)) + 1
        table.covering(last_year)
    offs = table.offsets.astype(np.int64) * US
    utc = table.utc * US
    before, after = offs[:-1], offs[1:]
    lower = utc + np.minimum(before, after)
    upper = utc + np.maximum(before, after)
    # PEP 495 / zoneinfo: fold 0 takes the offset of the period whose wall
    # clock runs *until* the upper end of an anomaly, fold 1 the offset of
    # the period that starts at its lower end.
    idx0 = np.searchsorted(upper, wall, side="right")
    idx1 = np.searchsorted(lower, wall, side="right")
    off0 = offs[idx0]
    off1 = offs[idx1]
    u0 = wall - off0
    u1 = wall - off1
    kind = np.where(u0 == u1, OK, np.where(u0 < u1, FOLD, GAP)).astype(np.int8)
    is_gap = kind == GAP
    is_fold = kind == FOLD

    if gap == "reject" and is_gap.any():
        raise NonexistentTimeError(_gap_message(wall, is_gap, idx0, table, version, schedule))
    if fold == "reject" and is_fold.any():
        raise AmbiguousTimeError(_fold_message(wall, is_fold, idx0, table, version, schedule))

    n = len(wall)
    vocab = (GAP_NOTES.get(gap, ""), FOLD_NOTES.get(fold, ""))
    note = np.where(is_gap, 0, np.where(is_fold, 1, -1)).astype(np.int8)
    has_due = np.ones(n, dtype=bool)
    # ok rows and fold "first": u0 with its own offset.
    due = u0.copy()
    offset = off0.copy()
    if is_gap.any():
        g = np.flatnonzero(is_gap)
        if gap == "skip":
            has_due[g] = False
        elif gap == "shift":
            due[g] = u0[g]
        elif gap == "shift_backward":
            due[g] = u1[g]
        elif gap == "next_valid":
            due[g] = utc[idx0[g]]
        if gap != "skip":
            # The offset in force at the chosen instant (after the jump for
            # shift/next_valid, before it for shift_backward).
            offset[g] = offs[np.searchsorted(utc, due[g], side="right")]
        else:
            offset[g] = 0
    if fold == "second":
        due = np.where(is_fold, u1, due)
        offset = np.where(is_fold, off1, offset)
    row = np.arange(n)
    fold_col = np.where(is_fold & (fold == "second"), 1, 0).astype(np.int8)
    if fold == "both" and is_fold.any():
        row = np.repeat(row, np.where(is_fold, 2, 1))
        second = np.zeros(len(row), dtype=bool)
        starts = np.flatnonzero(np.diff(row, prepend=-1) == 0)
        second[starts] = True
        fold_col = second.astype(np.int8)
        due = np.where(second, u1[row], due[row])
        offset = np.where(second, off1[row], offset[row])
        return Resolved(
            row, wall[row], fold_col, kind[row], due, has_due[row], offset // US, note[row], vocab
        )
    return Resolved(row, wall, fold_col, kind, due, has_due, offset // US, note, vocab)


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


def _gap_message(wall, is_gap, idx0, table, version, schedule) -> str:
    hits = np.flatnonzero(is_gap)
    i = int(hits[0])
    more = f" (and {len(hits) - 1} more)" if len(hits) > 1 else ""
    return (
        f"gap: {_where(schedule)}local time {_fmt_wall(wall[i])} does not exist in {table.name} "
        f"(tzdata {version}): {_describe(int(idx0[i]), table)}{more}; "
        f"with gap='reject' this is an error, choose gap={choices(tuple(GAP_NOTES))} to resolve it"
    )


def _fold_message(wall, is_fold, idx0, table, version, schedule) -> str:
    hits = np.flatnonzero(is_fold)
    i = int(hits[0])
    more = f" (and {len(hits) - 1} more)" if len(hits) > 1 else ""
    return (
        f"fold: {_where(schedule)}local time {_fmt_wall(wall[i])} happens twice in {table.name} "
        f"(tzdata {version}): {_describe(int(idx0[i]), table)}{more}; "
        f"with fold='reject' this is an error, choose fold={choices(tuple(FOLD_NOTES))} to resolve it"
    )


def notes_column(note: np.ndarray, vocab: tuple[str, ...]) -> pl.Series:
    """A ``list[str]`` column with zero or one note per row, built without a Python loop."""
    has = note >= 0
    offsets = np.zeros(len(note) + 1, dtype=np.int64)
    np.cumsum(has, out=offsets[1:])
    values = pa.array(vocab, pa.large_string()).take(pa.array(note[has].astype(np.int64)))
    arr = pa.LargeListArray.from_arrays(pa.array(offsets), values)
    return pl.Series("notes", arr, dtype=pl.List(pl.String))


def resolved_frame(r: Resolved) -> pl.DataFrame:
    """The public resolution frame of DESIGN.md §3 from kernel columns."""
    due = pl.Series("due_utc", r.due, dtype=pl.Int64)
    off = pl.Series("utc_offset_s", r.offset, dtype=pl.Int32)
    if not r.has_due.all():
        mask = pl.Series(~r.has_due)
        due = due.set(mask, None)
        off = off.set(mask, None)
    return pl.DataFrame(
        [
            pl.Series("nominal_local", r.wall, dtype=pl.Int64).cast(pl.Datetime("us")),
            pl.Series("fold", r.fold, dtype=pl.Int8),
            due.cast(pl.Datetime("us", "UTC")),
            off,
            pl.Series("kind", r.kind.astype(np.uint8)).cat.to(KIND),
            notes_column(r.note, r.note_vocab),
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
    check_policy("gap", gap, get_args(GapPolicy))
    check_policy("fold", fold, get_args(FoldPolicy))
    rel = get_release(release)
    wall = local_us(local_times)
    table = rel.table(zone)
    return resolved_frame(resolve_wall(wall, table, gap=gap, fold=fold, version=rel.version))
