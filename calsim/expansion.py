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
from dataclasses import dataclass, field

import numpy as np
import polars as pl
import pyarrow as pa

from . import limits
from .calendars import Calendar
from .errors import InputError
from .tzdb import Release, ReleaseLike, release as get_release
from .resolution import Resolved, resolve_wall
from .rules.every import Every
from .rules.rrule import RRule
from .schedule import Schedule, check_revisions
from .times import US, instant_us
from .tzif import ZoneTable

__all__ = ["expand", "expand_indexed", "OCCURRENCE_SCHEMA", "as_schedules"]

DAY = 86400 * US
_MARGIN = limits.MARGIN  # wall times within two days of the UTC window can land in it (offsets < 26 h)
_INVALID_NOTES = ("", "invalid_day_backward", "invalid_day_forward")
# A COUNT rule that finds no instance in 400 years (a full Gregorian cycle)
# never will: the search stops there instead of hanging.
_SEARCH_LIMIT = 400 * 365 * DAY
_MAX_WALL = 253402300799 * US  # 9999-12-31T23:59:59
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


def _candidates(s: Schedule, table: ZoneTable, lo: int, hi: int) -> tuple[np.ndarray, np.ndarray]:
    """Nominal walls of one schedule near ``[lo, hi)`` with their invalid_day codes (RFC 5545 set order)."""
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
        """One chunk; ``fold``, ``has_due``, ``dst``, ``inv`` may be None for their default (0, True, -1, 0)."""
        for name, value in zip(
            ("sched", "wall", "fold", "due", "has_due", "offset", "dst", "inv"),
            (sched, wall, fold, due, has_due, offset, dst, inv),
        ):
            getattr(self, name).append(value)

    def columns(self) -> dict[str, np.ndarray]:
        dtypes = {"sched": np.int32, "wall": np.int64, "fold": np.int8, "due": np.int64,
                  "has_due": bool, "offset": np.int32, "dst": np.int16, "inv": np.int8}
        defaults = {"fold": 0, "has_due": True, "dst": -1, "inv": 0}
        lengths = [len(w) for w in self.wall]
        n = sum(lengths)
        out = {}
        for name, dt_ in dtypes.items():
            chunks = getattr(self, name)
            if name not in defaults:
                out[name] = np.concatenate(chunks).astype(dt_, copy=False) if chunks else np.zeros(0, dt_)
                continue
            # Mostly defaults (few rows meet a gap, a fold or an invalid day):
            # one filled column, with only the chunks that were given copied in.
            col = np.full(n, defaults[name], dtype=dt_)
            at = 0
            for chunk, k in zip(chunks, lengths):
                if chunk is not None:
                    col[at:at + k] = chunk
                at += k
            out[name] = col
        return out


def _add_resolved(rows: _Rows, r: Resolved, sched: np.ndarray, inv: np.ndarray, vocab: dict[str, int]) -> None:
    gap_code = vocab.setdefault(r.note_vocab[0], len(vocab))
    fold_code = vocab.setdefault(r.note_vocab[1], len(vocab))
    # kind 0 ok, 1 gap, 2 fold -> note code (-1 none); a chunk of ok rows only keeps the default.
    dst = np.array([-1, gap_code, fold_code], np.int16)[r.kind] if r.kind.any() else None
    if r.row is not None:
        sched, inv = sched[r.row], inv[r.row]
    rows.add(sched, r.wall, r.fold, r.due, r.has_due, r.offset, dst, inv if inv.any() else None)


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
    release
        The tz database release (see :func:`calsim.release`).
    max_occurrences
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
    Rule expansion is vectorised per schedule; resolution runs once per
    (zone, gap, fold) group over all of its schedules' times, and merging,
    calendars and the window are column operations over the whole fleet.

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
                   max_occurrences: int | None = None, what: str = "expand"):
    """:func:`expand`, also returning the schedules in frame order and each row's index into them.

    For the simulation, which needs per-row policies without joining on ids.
    ``what`` names the caller in the message of a refusal over ``max_occurrences``.
    """
    rel = get_release(release)
    lo = instant_us(start, "start")
    hi = instant_us(end, "end")
    if hi <= lo:
        raise InputError(f"end: {end!r} is not after start {start!r} (the window [start, end) would be empty)")
    scheds = sorted(schedules, key=lambda s: (s.id, s.revision))
    check_revisions(scheds)
    limits.check(scheds, lo, hi, max_occurrences, what, rel)  # before anything is allocated
    lo_s = np.array([lo if s.from_utc is None else max(lo, s.from_utc) for s in scheds], dtype=np.int64)
    hi_s = np.array([hi if s.to_utc is None else min(hi, s.to_utc) for s in scheds], dtype=np.int64)
    # The row columns are passed on, not kept here: _finish frees each one
    # when done with it (the peak memory is the benchmark's too).
    frame, sched_of_row = _finish(scheds, *_collect(scheds, rel, lo_s, hi_s), lo_s, hi_s, rel.version)
    return frame, scheds, sched_of_row


def _collect(scheds: list[Schedule], rel: Release, lo_s: np.ndarray,
             hi_s: np.ndarray) -> tuple[dict[str, np.ndarray], dict[str, int]]:
    """The rows of every schedule (nominal walls, resolved), as columns, and the note vocabulary."""
    rows, vocab = _Rows(), {}
    groups: dict[tuple[str, str, str], list[tuple[int, np.ndarray, np.ndarray]]] = {}
    for i, s in enumerate(scheds):
        if hi_s[i] <= lo_s[i]:
            continue
        table = rel.table(s.zone)
        if isinstance(s.parsed_rule, Every):
            wall, fold, inst, offset = _every_rows(s, s.parsed_rule, table, int(lo_s[i]), int(hi_s[i]))
            rows.add(np.full(len(wall), i, np.int32), wall, fold if fold.any() else None, inst, None, offset,
                     None, None)
            continue
        walls, inv = _candidates(s, table, int(lo_s[i]), int(hi_s[i]))
        if s.gap == "reject" or s.fold == "reject":  # resolved alone, so the error names it
            r = resolve_wall(walls, table, gap=s.gap, fold=s.fold, version=rel.version, schedule=s.id)
            _add_resolved(rows, r, np.full(len(walls), i, np.int32), inv, vocab)
            continue
        groups.setdefault((s.zone, s.gap, s.fold), []).append((i, walls, inv))
    for zone, gap, fold in list(groups):
        items = groups.pop((zone, gap, fold))  # its per-schedule arrays are freed once concatenated
        walls = np.concatenate([w for _, w, _ in items])
        inv = np.concatenate([v for _, _, v in items])
        sched = np.repeat(np.array([i for i, _, _ in items], np.int32), [len(w) for _, w, _ in items])
        del items
        r = resolve_wall(walls, rel.table(zone), gap=gap, fold=fold, version=rel.version)
        _add_resolved(rows, r, sched, inv, vocab)
    return rows.columns(), vocab


def _finish(scheds: list[Schedule], c: dict[str, np.ndarray], vocab: dict[str, int],
            lo_s: np.ndarray, hi_s: np.ndarray, version: str) -> tuple[pl.DataFrame, np.ndarray]:
    sched, wall, due, has_due = c["sched"], c["wall"], c["due"], c["has_due"]
    place = due  # due is never changed below (only has_due): a row without an instant keeps its placement
    # The order depends on placement and schedule only, which nothing below
    # changes: all rows are sorted in a thread (numpy sorts without the GIL)
    # while UNTIL, merging and calendars run here; the rows they drop are
    # then dropped from the sorted order, which keeps it sorted.
    with ThreadPoolExecutor(1) if len(place) >= _THREAD_MIN_ROWS else nullcontext(_Inline()) as pool:
        ordering = pool.submit(_order, place, sched, len(scheds))
        keep, extras = _survivors(scheds, c, vocab, lo_s, hi_s)
        # Most rows are plain: fold 0, an instant, no note, and an offset equal
        # to wall - instant (that is what resolving a wall time means; only a
        # gap policy moves the instant away from the wall time, and such a row
        # carries a dst note). Only the few other rows ("special") are looked
        # up one by one; the output gathers just the wall time (in the thread:
        # numpy gathers without the GIL too) and the schedule.
        special = (c["dst"] >= 0) | (c["inv"] != 0) | (c["fold"] != 0) | ~has_due
        for rows, _ in extras:
            special[rows] = True
        perm, place_out, sched_out = ordering.result()
        kept = keep[perm]
        del keep
        if not kept.all():
            perm, place_out, sched_out = perm[kept], place_out[kept], sched_out[kept]
        idx = perm
        del perm, kept
        n = len(idx)

        walls = pool.submit(_wall_and_offset, wall, idx, place_out)
        pos = np.flatnonzero(special[idx])  # output positions of special rows, ascending
        src = idx[pos]  # and their source rows
        del special
        # schedule_id and zone: one gather of a per-schedule table (polars
        # gathers both columns at once, on every core).
        per_sched = pl.DataFrame([
            pl.Series("schedule_id", [s.id for s in scheds], dtype=pl.String),
            pl.Series("zone", [s.zone for s in scheds], dtype=pl.String),
        ])[pl.Series(sched_out.astype(np.uint32))]  # polars indexes with u32
        wall_out, offset_out = walls.result()
    del idx, wall, due, place, sched
    for name in ("wall", "due", "sched"):  # no longer needed: only special rows are read from here on
        del c[name]
    offset_out[pos] = c["offset"][src]
    fold_out = np.zeros(n, np.int8)
    fold_out[pos] = c["fold"][src]
    valid = np.ones(n, dtype=bool)
    valid[pos] = has_due[src]
    nulls = n - int(np.count_nonzero(valid))
    # Nulls where there is no instant, as an Arrow validity bitmap over the
    # value buffers: no copy, no scatter.
    bitmap = pa.py_buffer(np.packbits(valid, bitorder="little")) if nulls else None
    del valid
    due_col = pl.Series("due_utc", pa.Array.from_buffers(
        pa.timestamp("us", "UTC"), n, [bitmap, pa.py_buffer(place_out)], null_count=nulls))
    offset_col = pl.Series("utc_offset_s", pa.Array.from_buffers(
        pa.int32(), n, [bitmap, pa.py_buffer(offset_out)], null_count=nulls))
    notes = _notes(n, pos, src, c["dst"][src], c["inv"][src], extras, vocab)
    revisions = {s.revision for s in scheds}
    frame = pl.DataFrame(
        [
            per_sched["schedule_id"],
            pl.Series("nominal_local", wall_out).cast(pl.Datetime("us")),
            pl.Series("fold", fold_out),
            per_sched["zone"],
            due_col,
            offset_col,
            notes,
        ]
    ).with_columns(
        pl.lit(version, pl.String).alias("tzdata"),
        # One revision everywhere (the usual case): a literal column, no gather.
        pl.lit(revisions.pop(), pl.Int64).alias("revision") if len(revisions) == 1
        else pl.Series("revision", np.array([s.revision for s in scheds], dtype=np.int64)[sched_out]),
    ).select(OCCURRENCE_SCHEMA.names())
    return frame, sched_out


class _Inline:
    """``submit`` runs at once: a small frame is not worth a thread."""

    def submit(self, fn, *args):
        done: Future = Future()
        done.set_result(fn(*args))
        return done


def _wall_and_offset(wall: np.ndarray, idx: np.ndarray, place: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Output wall times, and offsets as wall - instant (right for every row but the special ones)."""
    wall_out = wall[idx]
    off = np.subtract(wall_out, place)
    np.floor_divide(off, US, out=off)
    return wall_out, off.astype(np.int32)


def _survivors(scheds: list[Schedule], c: dict[str, np.ndarray], vocab: dict[str, int],
               lo_s: np.ndarray, hi_s: np.ndarray) -> tuple[np.ndarray, list[tuple[np.ndarray, str]]]:
    """Which rows the frame keeps (UNTIL, window), after merging and calendars (which update ``has_due``).

    Returns the keep mask and the extra notes, ``(source rows, note)`` in
    the order they are written.
    """
    sched, wall, due, has_due = c["sched"], c["wall"], c["due"], c["has_due"]
    place = due
    alive = np.ones(len(wall), dtype=bool)
    extras: list[tuple[np.ndarray, str]] = []

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
    return keep, extras


def _order(place: np.ndarray, sched: np.ndarray, n_sched: int):
    """The contract's row order: by placement, then schedule, nominal time and fold.

    Returns the permutation of the rows, and ``place`` and ``sched`` in that
    order. Each schedule's rows are one contiguous block, in (nominal, fold)
    order, so a stable sort by (placement, schedule) gives the contract's order.
    """
    n = len(place)
    sbits = max(1, int(n_sched - 1).bit_length())
    pmin = int(place.min()) if n else 0
    span = int(place.max()) - pmin if n else 0
    if span.bit_length() + sbits <= 62:
        # Both keys in one int64: (placement - min) << sbits | schedule. The
        # sorted keys give placement and schedule back without gathering them.
        key = place - pmin
        key <<= sbits
        key |= sched
        # Timsort (numpy's stable sort) merges the already sorted runs of
        # each schedule: faster here than a parallel sort on a busy machine.
        perm = np.argsort(key, kind="stable")
        key = key[perm]
        sched_out = np.empty(n, dtype=np.int32)
        np.bitwise_and(key, (1 << sbits) - 1, out=sched_out, casting="unsafe")
        key >>= sbits
        key += pmin
        return perm, key, sched_out
    # A window too long for one key: blocks put in schedule order (a cheap
    # permutation), then a stable sort by placement alone.
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
        extras.append((np.array([keeper]), f"merged_with:{iso(wall[loser])}"))
        extras.append((np.array([loser]), f"merged_into:{iso(wall[keeper])}"))


def _exclude(scheds, sched, wall, has_due, alive, extras) -> None:
    by_calendar: dict[Calendar, list[int]] = {}
    for i, s in enumerate(scheds):
        for cal in s.calendars:
            by_calendar.setdefault(cal, []).append(i)
    if not by_calendar:
        return
    for cal, members in by_calendar.items():
        member = np.zeros(len(scheds), dtype=bool)
        member[members] = True
        rows = np.flatnonzero(member[sched] & alive)
        if not len(rows):
            continue
        d = wall[rows] // DAY  # days of the members' rows only (a few schedules have calendars)
        first = _EPOCH_DATE + dt.timedelta(days=int(d.min()))
        last = _EPOCH_DATE + dt.timedelta(days=int(d.max()))
        hit = rows[_member(d, cal.days(first, last).astype(np.int64))]
        has_due[hit] = False
        extras.append((hit, cal.note))


def _notes(n: int, pos: np.ndarray, src: np.ndarray, dst: np.ndarray, inv: np.ndarray,
           extras: list[tuple[np.ndarray, str]], vocab: dict[str, int]) -> pl.Series:
    """The ``notes`` list column (dst, invalid_day, merged, excluded, in that order) via Arrow offsets.

    Only the output rows at ``pos`` (ascending) can carry notes; ``src`` are
    their source rows, ``dst`` and ``inv`` their codes; ``extras`` name
    source rows (each one is among ``src`` when it is in the output).
    """
    inv_codes = np.array([-1] + [vocab.setdefault(_INVALID_NOTES[k], len(vocab)) for k in (1, 2)], np.int32)
    r_dst = np.flatnonzero(dst >= 0)
    r_inv = np.flatnonzero(inv > 0)
    if extras:
        ex_rows = np.concatenate([rows for rows, _ in extras]).astype(np.int64, copy=False)
        ex_codes = np.repeat(np.array([vocab.setdefault(note, len(vocab)) for _, note in extras], np.int32),
                             [len(rows) for rows, _ in extras])
        # Where each noted source row is among src (absent: not in the output).
        by_src = np.argsort(src, kind="stable")
        at = np.minimum(np.searchsorted(src, ex_rows, sorter=by_src), max(len(src) - 1, 0))
        found = by_src[at] if len(src) else np.zeros(len(ex_rows), np.int64)
        hit = (src[found] == ex_rows) if len(src) else np.zeros(len(ex_rows), bool)
        ex_k, ex_codes = found[hit], ex_codes[hit]
    else:
        ex_k, ex_codes = np.zeros(0, np.int64), np.zeros(0, np.int32)
    k = np.concatenate([r_dst, r_inv, ex_k])  # indexes into pos
    codes = np.concatenate([dst[r_dst].astype(np.int32), inv_codes[inv[r_inv]], ex_codes])
    order = np.argsort(k, kind="stable")
    k, codes = k[order], codes[order]
    # offsets[i + 1] - offsets[i] notes on output row i: counts at the noted rows, then a running sum
    offsets = np.zeros(n + 1, dtype=np.int64)
    np.add.at(offsets, pos[k] + 1, 1)
    np.cumsum(offsets, out=offsets)
    values = pa.array(list(vocab), pa.large_string()).take(pa.array(codes, pa.int32()))
    return pl.Series("notes", pa.LargeListArray.from_arrays(pa.array(offsets), values), dtype=pl.List(pl.String))
