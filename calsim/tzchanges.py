"""What moves when the tz database changes: zone by zone, and occurrence by occurrence.

:func:`zone_changes` compares two releases' transition tables (never by
sampling): for every zone of either release, whether its UTC offsets differ
inside a window, from which instant to which, and how.
:func:`tzdiff` re-expands only the schedules in zones that changed, under both
releases, and lists every occurrence whose resolution differs.

Kinds of zone change (one row per zone and kind):

=====================  ===============================================================
``zone_added``         the zone exists only in the new release
``zone_removed``       the zone exists only in the old release
``now_link``           the name became a link to another zone (Europe/Kiev -> Kyiv);
                       reported even when the offsets are the same
``transition_moved``   transitions disappeared and others appeared (a DST date moved)
``transition_added``   only new transitions (a zone starts DST, a new offset change)
``transition_removed`` only fewer transitions (a zone abolishes DST)
``offset_changed``     the same transition instants, different offsets
=====================  ===============================================================

Kinds of occurrence change: ``moved`` (another instant), ``now_gap`` /
``no_longer_gap`` (the local time stops / starts existing), ``now_fold`` /
``no_longer_fold`` (it starts / stops happening twice), ``merged`` /
``unmerged`` (it now shares / no longer shares an instant with another
occurrence of its schedule).

>>> import calsim
>>> z = calsim.zone_changes("2022e", "2022f", "2022-01-01T00:00Z", "2024-01-01T00:00Z")
>>> z.filter(z["zone"] == "America/Mexico_City").select("kind", "first_utc", "old_offset_s", "new_offset_s").row(0)
('transition_removed', datetime.datetime(2023, 4, 2, 8, 0, tzinfo=zoneinfo.ZoneInfo(key='UTC')), -18000, -21600)

Before an upgrade (:func:`calsim.tzgate.upgrade_check`, what ``calsim tzdiff``
prints and gates on), each shift is said in words (:func:`describe_shifts`:
"1 h earlier in UTC, same local time"), and each changed schedule is either
**in effect** (its zone's offsets already differ before *now*: servers on
the old release run its jobs at the wrong instant, and upgrading fixes them)
or **future** (its zone's first difference is at or after *now*). Dates are
local dates in the schedule's zone (the calendar of its wall clock); instants
are UTC and say so.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
import polars as pl

import calsim.limits as limits
from .errors import InputError, UnknownZoneError
from .expansion import as_schedules, expand_indexed
from .times import US, instant_us, iso_z
from .tz.release import ReleaseLike, release as get_release

if TYPE_CHECKING:
    from polars.expr.whenthen import ChainedThen, Then

__all__ = ["zone_changes", "tzdiff", "tzdiff_summary", "describe_shifts", "shift_words", "ZONE_CHANGE_SCHEMA",
           "TZDIFF_SCHEMA"]

ZONE_CHANGE_SCHEMA = pl.Schema(
    {
        "zone": pl.String(),
        "kind": pl.String(),
        "first_utc": pl.Datetime("us", "UTC"),
        "last_utc": pl.Datetime("us", "UTC"),
        "old_offset_s": pl.Int32(),
        "new_offset_s": pl.Int32(),
    }
)
TZDIFF_SCHEMA = pl.Schema(
    {
        "schedule_id": pl.String(),
        "revision": pl.Int64(),
        "nominal_local": pl.Datetime("us"),
        "fold": pl.Int8(),
        "zone": pl.String(),
        "old_utc": pl.Datetime("us", "UTC"),
        "new_utc": pl.Datetime("us", "UTC"),
        "shift_s": pl.Int64(),
        "change": pl.String(),
        "old_notes": pl.List(pl.String),
        "new_notes": pl.List(pl.String),
    }
)


def _window(start: object, end: object) -> tuple[int, int]:
    lo, hi = instant_us(start, "start"), instant_us(end, "end")
    if hi <= lo:
        raise InputError(f"end: {end!r} is not after start {start!r} (the window [start, end) would be empty)")
    return lo, hi


def _year_of(us: int) -> int:
    return int(np.datetime64(int(us), "us").astype("datetime64[Y]").astype(int)) + 1970


def _compare(a, b, lo_s: int, hi_s: int):
    """Differences of two zone tables over UTC seconds ``[lo_s, hi_s)``: None, or
    (first, last_end, kind, off_a, off_b)."""
    ta, tb = a.utc, b.utc
    edges = np.unique(np.concatenate([[lo_s], ta[(ta > lo_s) & (ta < hi_s)], tb[(tb > lo_s) & (tb < hi_s)]]))
    oa = a.offsets[np.searchsorted(ta, edges, side="right")]
    ob = b.offsets[np.searchsorted(tb, edges, side="right")]
    differ = np.flatnonzero(oa != ob)
    if not len(differ):
        return None
    first = int(edges[differ[0]])
    last_end = int(edges[differ[-1] + 1]) if differ[-1] + 1 < len(edges) else hi_s
    in_a = set(ta[(ta >= lo_s) & (ta < hi_s)].tolist())
    in_b = set(tb[(tb >= lo_s) & (tb < hi_s)].tolist())
    added, removed = in_b - in_a, in_a - in_b
    if added and removed:
        kind = "transition_moved"
    elif added:
        kind = "transition_added"
    elif removed:
        kind = "transition_removed"
    else:
        kind = "offset_changed"
    return first, last_end, kind, int(oa[differ[0]]), int(ob[differ[0]])


def zone_changes(old: ReleaseLike, new: ReleaseLike, start: object, end: object) -> pl.DataFrame:
    """How every zone's UTC offsets differ between two releases inside ``[start, end)``.

    Returns
    -------
    polars.DataFrame
        ``zone``, ``kind`` (see the module docstring), ``first_utc`` (the first
        instant at which the offsets differ), ``last_utc`` (the end, exclusive,
        of the last span in which they differ), ``old_offset_s`` and
        ``new_offset_s`` (the offsets at ``first_utc``; null for a side
        without the zone). Zones whose TZif bytes are identical are skipped
        without parsing.
    """
    a, b = get_release(old), get_release(new)
    lo, hi = _window(start, end)
    lo_s, hi_s = lo // US, -(-hi // US)
    last_year = _year_of(hi) + 1
    names_a, names_b = set(a.zones), set(b.zones)
    links_a, links_b = a.links, b.links
    rows: list[tuple] = []
    for zone in sorted(names_a | names_b):
        if zone not in names_b:
            rows.append((zone, "zone_removed", lo, hi, None, None))
            continue
        if zone not in names_a:
            rows.append((zone, "zone_added", lo, hi, None, None))
            continue
        if zone in links_b and zone not in links_a:
            rows.append((zone, "now_link", lo, hi, None, None))
        raw_a, raw_b = a.tzif(zone), b.tzif(zone)
        if raw_a == raw_b:
            continue
        diff = _compare(a.table(zone).covering(last_year), b.table(zone).covering(last_year), lo_s, hi_s)
        if diff is not None:
            first, last_end, kind, off_a, off_b = diff
            rows.append((zone, kind, first * US, last_end * US, off_a, off_b))
    frame = pl.DataFrame(rows, schema={k: (pl.Int64 if k in ("first_utc", "last_utc") else v)
                                       for k, v in ZONE_CHANGE_SCHEMA.items()}, orient="row")
    return frame.with_columns(pl.col("first_utc", "last_utc").cast(pl.Datetime("us", "UTC")))


def _has(col: str, prefix: str) -> pl.Expr:
    return pl.col(col).fill_null([]).list.eval(pl.element().str.starts_with(prefix)).list.any()


def _change_kind() -> pl.Expr:
    """Classify a differing occurrence; a gap or fold appearing says more than the move it causes."""
    expr: Then | ChainedThen = pl.when(pl.lit(False)).then(pl.lit(None, pl.String))
    for prefix, appeared, vanished in (
        ("dst_gap", "now_gap", "no_longer_gap"),
        ("dst_fold", "now_fold", "no_longer_fold"),
        ("merged_", "merged", "unmerged"),
    ):
        expr = expr.when(_has("new_notes", prefix) & ~_has("old_notes", prefix)).then(pl.lit(appeared))
        expr = expr.when(_has("old_notes", prefix) & ~_has("new_notes", prefix)).then(pl.lit(vanished))
    return expr.otherwise(pl.lit("moved"))


def _moves_with_tzdata(schedule) -> bool:
    """Whether a release can move ``schedule``'s runs: a calendar rule's wall times resolve with the zone's
    offsets, and so do the walls of an ``Every`` on the zone's clock (``clock="local"``: each run the previous
    one's wall time plus the period, :mod:`calsim.expansion`'s walk). An elapsed ``Every`` counts from a UTC
    anchor: its runs are the same instants under any release, only their local labels change (joined on
    nominal time, every run would read as moved), so it moves no run."""
    rule = schedule.parsed_rule
    return not rule.elapsed or getattr(rule, "clock", None) == "local"  # (an elapsed kind says its clock)


def tzdiff(schedules: object, old: ReleaseLike, new: ReleaseLike, start: object, end: object, *,
           max_occurrences: int | None = None) -> pl.DataFrame:
    """Occurrences of ``schedules`` in ``[start, end)`` whose resolution differs between two releases.

    ``Every`` schedules of elapsed time (from a UTC anchor) are never listed:
    a release changes their local labels, not their instants; an ``Every``
    on the zone's wall clock (``clock="local"``) is, as a calendar rule is.
    Only schedules whose zone :func:`zone_changes` flags (over the window
    widened by two days, since a wall time resolves with offsets near it) are
    re-expanded; the others cannot move.

    ``max_occurrences`` (None: ``CALSIM_MAX_OCCURRENCES``, else 100 million)
    bounds each of the two expansions: when the estimated rows of the
    re-expanded schedules exceed it, the call is refused before either
    expansion starts (see :mod:`calsim.limits`).

    Returns
    -------
    polars.DataFrame
        ``schedule_id``, ``revision``, ``nominal_local``, ``fold``, ``zone``,
        ``old_utc``, ``new_utc``, ``shift_s`` (new - old in seconds; null when
        a side has no instant), ``change`` (see the module docstring),
        ``old_notes``, ``new_notes``; sorted by schedule, nominal time, fold.
        An occurrence that exists on one side only (a fold both-row, a time
        that stops being skipped...) has nulls on the other. An occurrence is
        listed when either of its instants is inside the window; the other
        may be outside it (a change that moves a run across the window's
        edge is a shift, never an instant paired with nothing).

    >>> import calsim
    >>> s = calsim.Schedule("mx", "America/Mexico_City", "2023-01-01T09:00", "FREQ=DAILY")
    >>> d = calsim.tzdiff([s], "2022e", "2022f", "2023-01-01T00:00Z", "2024-01-01T00:00Z")
    >>> d.height, d["change"].unique().to_list(), d["shift_s"].unique().to_list()
    (210, ['moved'], [3600])
    """
    a, b = get_release(old), get_release(new)
    lo, hi = _window(start, end)
    scheds = as_schedules(schedules)
    margin = 2 * 86400 * US
    changed = zone_changes(a, b, iso_z(lo - margin), iso_z(hi + margin))
    affected = set(changed.filter(pl.col("kind") != "now_link")["zone"].to_list())
    missing = sorted({s.zone for s in scheds if s.zone in affected and s.zone not in b.zones})
    if missing:
        raise UnknownZoneError(f"zone: {missing[0]!r} is not in tzdata {b.version}; "
                               "schedules in it cannot be resolved there")
    picked = [s for s in scheds if s.zone in affected and _moves_with_tzdata(s)]
    if not picked:
        return pl.DataFrame(schema=TZDIFF_SCHEMA)
    cap = limits.max_occurrences(max_occurrences)
    for rel in (a, b):  # both before either expansion starts (folds differ between releases)
        limits.check(picked, lo - margin, hi + margin, cap, "tzdiff", rel)  # the window expanded below
    key = ["schedule_id", "revision", "nominal_local", "fold"]
    cols = key + ["zone", "due_utc", "notes"]
    # Both sides are expanded over the window widened by the margin, so an occurrence
    # the change moves across a window edge is seen on both sides (a shift, not an
    # instant paired with nothing); it is listed when either instant is in the window.
    wlo, whi = iso_z(lo - margin), iso_z(hi + margin)
    fa = expand_indexed(picked, wlo, whi, a, max_occurrences=cap, what="tzdiff")[0].select(cols)
    fb = expand_indexed(picked, wlo, whi, b, max_occurrences=cap, what="tzdiff")[0].select(cols)
    j = fa.join(fb, on=key, how="full", coalesce=True, suffix="_new", nulls_equal=True)
    j = j.rename({"due_utc": "old_utc", "due_utc_new": "new_utc", "notes": "old_notes", "notes_new": "new_notes"})
    j = j.with_columns(pl.coalesce("zone", "zone_new").alias("zone"))
    differs = (
        (pl.col("old_utc") != pl.col("new_utc")).fill_null(True)
        & ~(pl.col("old_utc").is_null() & pl.col("new_utc").is_null())
    ) | (pl.col("old_notes").fill_null([]) != pl.col("new_notes").fill_null([]))
    t_lo, t_hi = pl.lit(lo).cast(pl.Datetime("us", "UTC")), pl.lit(hi).cast(pl.Datetime("us", "UTC"))
    inside = (pl.col("old_utc").is_between(t_lo, t_hi, closed="left").fill_null(False)
              | pl.col("new_utc").is_between(t_lo, t_hi, closed="left").fill_null(False))
    out = j.filter(differs & inside).with_columns(
        ((pl.col("new_utc") - pl.col("old_utc")).dt.total_seconds()).cast(pl.Int64).alias("shift_s"),
        _change_kind().alias("change"),
    )
    return out.select(TZDIFF_SCHEMA.names()).cast(dict(TZDIFF_SCHEMA)).sort(key)


def tzdiff_summary(diff: pl.DataFrame, schedules: object = None, now: object = None) -> pl.DataFrame:
    """One row per schedule that moves: what an operator reads before a tzdata upgrade.

    Parameters
    ----------
    diff
        A :func:`tzdiff` frame (with ``local_shift_s`` and ``shift`` when it
        went through :func:`describe_shifts`: then ``shifts`` says them in words).
    schedules
        The schedules it came from (optional): their labels (an imported
        job's command, else the id) fill ``label``.
    now
        The instant that splits the past from the future (default: the
        current time): a schedule whose first affected instant is before it
        has ``in_effect_since`` set, since servers still on the old release
        have been running it at the wrong instant from then.

    Returns
    -------
    polars.DataFrame
        ``schedule_id``, ``label``, ``zone``, ``first_affected`` and
        ``last_affected`` (nominal local times in the window), ``occurrences``,
        ``shifts_s`` (distinct non-null shifts), ``changes`` (distinct
        kinds), ``in_effect_since`` (the first affected instant, UTC, when it
        is before ``now``; else null), ``in_effect_since_local`` (the same run
        as a local wall time in ``zone``, the calendar of ``first_affected``),
        ``first_utc`` and ``first_local`` (the first affected run, in effect
        or not: its instant, and its local wall time in ``zone``),
        ``shifts`` (the distinct shifts in words, most frequent first; null
        unless ``diff`` has a ``shift`` column). Sorted by first affected
        instant, so what is already wrong comes first.

    >>> import calsim
    >>> s = calsim.Schedule("mx", "America/Mexico_City", "2023-01-01T09:00", "FREQ=DAILY")
    >>> d = calsim.tzdiff([s], "2022e", "2022f", "2023-01-01T00:00Z", "2024-01-01T00:00Z")
    >>> row = calsim.tzdiff_summary(d, now="2023-06-01T00:00Z").row(0, named=True)
    >>> row["label"], str(row["first_affected"]), row["occurrences"], row["shifts_s"], str(row["in_effect_since"])
    ('mx', '2023-04-02 09:00:00', 210, [3600], '2023-04-02 14:00:00+00:00')
    >>> str(row["in_effect_since_local"])
    '2023-04-02 09:00:00'
    """
    at = pl.min_horizontal("old_utc", "new_utc")
    now_us = instant_us(now, "now") if now is not None else int(np.datetime64("now", "us").astype(np.int64))
    labels = {}
    for s in as_schedules(schedules) if schedules is not None else ():
        src = getattr(s, "source", None)
        labels[s.id] = (getattr(src, "command", None) or s.id)
    if "shift" in diff.columns:  # the words, most frequent first (ties: alphabetically, so the order is stable)
        words = (diff.drop_nulls("shift").group_by("schedule_id", "shift").len()
                 .sort(["schedule_id", "len", "shift"], descending=[False, True, False])
                 .group_by("schedule_id", maintain_order=True).agg(pl.col("shift").alias("shifts")))
    else:
        words = pl.DataFrame(schema={"schedule_id": pl.String, "shifts": pl.List(pl.String)})
    first = diff.group_by("schedule_id").agg(
        at.min().alias("first_utc"), pl.col("nominal_local").sort_by(at).first().alias("first_local"))
    out = (
        diff.group_by("schedule_id", maintain_order=True)
        .agg(
            pl.col("zone").first(),
            pl.col("nominal_local").min().alias("first_affected"),
            pl.col("nominal_local").max().alias("last_affected"),
            pl.len().alias("occurrences"),
            pl.col("shift_s").drop_nulls().unique().sort().alias("shifts_s"),
            pl.col("change").unique().sort().alias("changes"),
        )
        .join(first, on="schedule_id", how="left", maintain_order="left")
        .join(words, on="schedule_id", how="left", maintain_order="left")
        .with_columns(
            pl.col("schedule_id").replace_strict(labels, default=pl.col("schedule_id"), return_dtype=pl.String)
            .alias("label"),
            (pl.col("first_utc") < pl.lit(now_us).cast(pl.Datetime("us", "UTC"))).alias("_in_effect"),
        )
        .with_columns(
            pl.when(pl.col("_in_effect")).then(pl.col("first_utc")).alias("in_effect_since"),
            pl.when(pl.col("_in_effect")).then(pl.col("first_local")).alias("in_effect_since_local"),
        )
        .sort("first_utc", "schedule_id", nulls_last=True)
    )
    return out.select("schedule_id", "label", "zone", "first_affected", "last_affected", "occurrences", "shifts_s",
                      "changes", "in_effect_since", "in_effect_since_local", "first_utc", "first_local",
                      pl.col("shifts").cast(pl.List(pl.String)))


# -- shifts in words ----------------------------------------------------------------------------------------------


def _amount(seconds: int) -> str:
    """``3600`` -> ``"1 h"``, ``5400`` -> ``"1 h 30 min"``, ``45`` -> ``"45 s"``, ``86400`` -> ``"1 d"``."""
    rest, parts = abs(int(seconds)), []
    for unit, size in (("d", 86_400), ("h", 3_600), ("min", 60), ("s", 1)):
        q, rest = divmod(rest, size)
        if q:
            parts.append(f"{q} {unit}")
    return " ".join(parts) or "0 s"


def shift_words(shift_s: int | None, local_shift_s: int | None = 0, *, old_runs: bool = True,
                new_runs: bool = True) -> str:
    """A run's change in words, from its UTC shift and its local shift (both new - old, seconds).

    The UTC shift says when the run happens; the local shift says what the
    wall clock reads when it does. A zone that changes its offsets moves
    the instant and keeps the local time; a run near a DST gap or fold can
    also move on the wall clock. ``old_runs`` / ``new_runs``: whether the
    occurrence has an instant under each release.

    >>> shift_words(-3600, 0)
    '1 h earlier in UTC, same local time'
    >>> shift_words(1800, 1800)
    '30 min later, local time moves too'
    >>> shift_words(3600, -1800), shift_words(0, 0)
    ('1 h later in UTC, 30 min earlier in local time', 'same instant, only the notes differ')
    >>> shift_words(None, None, old_runs=False), shift_words(None, None, new_runs=False)
    ('runs now, did not before', 'no longer runs')
    """
    if not old_runs and not new_runs:
        return "runs under neither release, only the notes differ"
    if not old_runs:
        return "runs now, did not before"
    if not new_runs:
        return "no longer runs"
    if shift_s is None:
        return "unknown shift"
    local = local_shift_s or 0
    if shift_s == 0:
        if local == 0:
            return "same instant, only the notes differ"
        return f"same instant, local time reads {_amount(local)} {'later' if local > 0 else 'earlier'}"
    way = "later" if shift_s > 0 else "earlier"
    if local == 0:
        return f"{_amount(shift_s)} {way} in UTC, same local time"
    if local == shift_s:
        return f"{_amount(shift_s)} {way}, local time moves too"
    return f"{_amount(shift_s)} {way} in UTC, {_amount(local)} {'later' if local > 0 else 'earlier'} in local time"


def _offsets_s(rel, zone: str, utc: pl.Series) -> pl.Series:
    """The UTC offset (seconds) ``rel`` gives ``zone`` at each instant of ``utc`` (null where it is null)."""
    us = utc.cast(pl.Int64)
    if zone not in rel.zones or us.null_count() == us.len():
        return pl.Series(utc.name, [None] * us.len(), pl.Int64)
    vals = us.fill_null(0).to_numpy()
    table = rel.table(zone).covering(_year_of(int(vals.max())) + 1)
    off = pl.Series(utc.name, table.offset_at_utc(np.floor_divide(vals, US)).astype(np.int64))
    return pl.select(pl.when(us.is_not_null()).then(off)).to_series().alias(utc.name)


def describe_shifts(diff: pl.DataFrame, old: ReleaseLike, new: ReleaseLike) -> pl.DataFrame:
    """A :func:`tzdiff` frame with ``local_shift_s`` and ``shift`` (words) after ``shift_s``.

    ``local_shift_s`` is how far the wall clock reading of the run moves: the
    new instant read with the new release's offset, minus the old instant
    read with the old one (null when a side has no instant). ``shift`` is
    :func:`shift_words` of the two: "1 h earlier in UTC, same local time"
    for a zone that changes its offsets, "30 min later, local time moves
    too" for a run pushed across a gap, "no longer runs"... The numeric
    columns stay for machines.

    >>> import calsim
    >>> s = calsim.Schedule("mx", "America/Mexico_City", "2023-01-01T09:00", "FREQ=DAILY")
    >>> d = describe_shifts(calsim.tzdiff([s], "2022e", "2022f", "2023-01-01T00:00Z", "2024-01-01T00:00Z"),
    ...                     "2022e", "2022f")
    >>> d.select("shift_s", "local_shift_s", "shift").unique().rows()
    [(3600, 0, '1 h later in UTC, same local time')]
    """
    a, b = get_release(old), get_release(new)
    parts = []
    for (zone,), part in diff.with_row_index("_i").partition_by("zone", as_dict=True, maintain_order=True).items():
        old_local = part["old_utc"].cast(pl.Int64) // US + _offsets_s(a, str(zone), part["old_utc"])
        new_local = part["new_utc"].cast(pl.Int64) // US + _offsets_s(b, str(zone), part["new_utc"])
        parts.append(part.select("_i").with_columns((new_local - old_local).alias("local_shift_s")))
    local = (pl.concat(parts).sort("_i")["local_shift_s"] if parts
             else pl.Series("local_shift_s", [], pl.Int64)).cast(pl.Int64)
    out = diff.with_columns(local)
    keys = ["shift_s", "local_shift_s", "_old", "_new"]
    out = out.with_columns(pl.col("old_utc").is_not_null().alias("_old"), pl.col("new_utc").is_not_null().alias("_new"))
    combos = out.select(keys).unique()
    combos = combos.with_columns(pl.Series("shift", [
        shift_words(sh, lo, old_runs=o, new_runs=n) for sh, lo, o, n in combos.iter_rows()], pl.String))
    out = out.join(combos, on=keys, how="left", nulls_equal=True, maintain_order="left").drop("_old", "_new")
    names = list(diff.columns)
    at = names.index("shift_s") + 1 if "shift_s" in names else len(names)
    return out.select(names[:at] + ["local_shift_s", "shift"] + names[at:])


# -- the upgrade check: what the first line says, what to do, and the CI gate -----------------------------------
