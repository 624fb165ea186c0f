"""The ledger's views — counts, summary, gaps, coverage, daily cost — each defined once, over a lazy frame.

Every function takes the ledger frame's columns (DESIGN.md §4) as a
``pl.LazyFrame`` (a ``DataFrame`` is made lazy) and returns a ``LazyFrame``:
:class:`~calsim.Ledger` collects them over its frame in memory, and the same
plans run on a lazy scan of Parquet files (a dataset written by the Dask
engine), where polars reads only the columns a view needs. ``schedule_id``
may be a string or an ``Enum`` (the engine's codes); results name schedules
as strings.

Durations in the results are ``pl.Duration("us")`` (lateness, waits, gaps)
**rounded to what they mean**: whole seconds (``resolution="1s"``, half away
from zero), or a scenario's tick when that is shorter (:func:`resolution_of`;
:meth:`Ledger.summary <calsim.Ledger.summary>` passes it), so polars prints
``2h 4m 34s``, not ``2h 4m 33s 913043µs``. The frame keeps the contract's
float seconds (``lateness_s``, ``budget_wait_s``) exact: other code and the
stores read them. (A zero Duration still prints as ``0µs`` in polars' own
table; calsim's text tables and chart labels say ``0s``.)

Rows are sorted by schedule id **naturally** (:func:`natural_key`: digit runs
compare as numbers, ``crontab:6`` before ``crontab:10``), then as plain
strings (``job-007`` and ``job-7`` keep a fixed order).

**On time, late, never** — the one rule :func:`gaps` and :func:`coverage`
share. The occurrences considered are the scheduled ones meant to run: not
manual runs, and not those that never could (reason ``dst_gap``, ``merged``,
``calendar``: :data:`BY_DESIGN_REASONS`; they have no instant). Each one's
*period* runs from its due instant to the schedule's next due instant (the
next distinct one, revisions included). An occurrence is

* ``on_time``: done, and started within its period (before the next one was
  due); the schedule's last occurrence has no next: done is on time;
* ``late``: done, but only once its period was over (a catch-up after an
  outage, a long wait for budget or capacity);
* ``never``: not done (coalesced, skipped, expired, cancelled, failed).

The rule needs no policy (a misfire grace or a tick is not in the frame), so
it reads the same on any ledger, and the ledger store's SQL can say the same;
a run late by less than its schedule's spacing is on time by it (a daily job
run 6 h late after an outage that hid no other due time). ``late_after=``
(a duration, e.g. the scenario's tick ``"1min"``) also counts late every
run whose lateness exceeds it: "did it wait", as the timeline chart marks
runs, rather than "did its period pass without it".

>>> import calsim
>>> from calsim.simulation import views
>>> s = calsim.Schedule("d", "UTC", "2026-01-01T00:00", "FREQ=DAILY", policy=calsim.Policy(catchup="all"))
>>> sc = calsim.Scenario("x", [s], "2026-01-01T00:00Z", "2026-01-08T00:00Z",
...                      outages=[calsim.Outage("2026-01-02T00:00Z", "2026-01-05T00:00Z")])
>>> g = views.gaps(calsim.simulate(sc).frame.lazy()).collect()
>>> g.select("missed", "late", "gap", "catchup_lateness").row(0)
(0, 3, datetime.timedelta(days=4), datetime.timedelta(days=3))
"""

from __future__ import annotations

import datetime as dt
import functools
from collections.abc import Callable, Iterable, Mapping
from typing import TYPE_CHECKING, cast

import numpy as np
import polars as pl

from ..durations import duration_us
from .ledger_schema import BY_DESIGN_REASONS, LEDGER_STATES, with_worker_columns
from .view_format import (US, natural_key, natural_sort_key, resolution_of, resolution_us, round_duration,  # noqa: F401
                          round_us, seconds_to_duration, to_duration)

if TYPE_CHECKING:  # pragma: no cover
    from ..tz.release import Release, ReleaseLike

__all__ = ["counts", "summary", "compact_summary", "summary_features", "SUMMARY_FEATURES", "nearest_quantiles",
           "gaps", "coverage", "daily_cost", "classified", "seconds_to_duration", "round_duration", "resolution_of",
           "natural_key", "natural_sort_key", "BY_DESIGN_REASONS", "CLASSIFIED_COLUMNS"]

#: The ledger columns :func:`classified` (hence :func:`gaps` and :func:`coverage`) reads.
CLASSIFIED_COLUMNS = ("schedule_id", "kind", "reason", "state", "nominal_local", "due_utc", "started_utc",
                      "lateness_s")


def _lazy(frame: pl.LazyFrame | pl.DataFrame) -> pl.LazyFrame:
    names = frame.columns if isinstance(frame, pl.DataFrame) else frame.collect_schema().names()
    lf = frame.lazy() if isinstance(frame, pl.DataFrame) else frame
    # A ledger written before the worker-level columns existed reads them as null.
    return with_worker_columns(lf, names) if "state" in names else lf


def counts(frame: pl.LazyFrame | pl.DataFrame) -> pl.LazyFrame:
    """Rows per (kind, state, reason), column ``rows``."""
    return _lazy(frame).group_by("kind", "state", "reason").len("rows").sort("kind", "state", "reason")


def summary(frame: pl.LazyFrame | pl.DataFrame, name: str, *, streamed: bool = False,
            parts: list[pl.LazyFrame] | None = None, resolution: object = "1s") -> pl.LazyFrame:
    """One row: ``scenario``, counts (``occurrences``, ``manual``, one per state), lateness and waits.

    ``lateness_p50``/``_p95``/``_max``: over started runs, percentiles by
    nearest rank (polars' default); ``cost``; ``budget_waits`` (runs that
    waited for budget) with ``budget_wait_mean``/``_max``; the worker-level
    columns of :func:`worker_level_counts`. Spans are Durations rounded to
    ``resolution`` (whole seconds; :func:`seconds_to_duration`), null when
    nothing started (or waited).

    Always the full schema (25 columns), whatever the scenario: the ledger
    store's ``compare`` and the Dask dataset's summary are built from it and
    summaries of different scenarios stack. :meth:`Ledger.summary
    <calsim.Ledger.summary>` shows the compact form (:func:`compact_summary`)
    unless asked for ``full=True``.

    ``streamed``: for a scan larger than memory (a Dask dataset, ``parts``
    its files as lazy frames). Every column but the two percentiles streams
    in one pass; the percentiles are computed exactly by
    :func:`nearest_quantiles` (a few passes, one part at a time, never the
    whole column in memory) and the plan returned holds them as literals.
    """
    started = pl.col("started_utc").is_not_null()
    waited = pl.col("budget_wait_s") > 0
    # when/then (null elsewhere, which the aggregations skip) rather than
    # filter: polars' streaming engine runs it without a column in memory.
    lat = pl.when(started).then(pl.col("lateness_s"))
    wait = pl.when(waited).then(pl.col("budget_wait_s"))
    if streamed:
        sources: list[pl.LazyFrame | pl.DataFrame] = [*parts] if parts else [frame]
        p50, p95 = nearest_quantiles([_lazy(p).filter(started).select(v=pl.col("lateness_s")) for p in sources],
                                     (0.5, 0.95))
        q50, q95 = pl.lit(p50, pl.Float64), pl.lit(p95, pl.Float64)
    else:
        q50, q95 = lat.quantile(0.5), lat.quantile(0.95)
    res = resolution_us(resolution)
    # One select, one pass: no filtered copy of the frame (a fleet-year is tens of millions of rows).
    return _lazy(frame).select(
        pl.lit(name, pl.String).alias("scenario"),
        (pl.col("kind") == "scheduled").sum().cast(pl.Int64).alias("occurrences"),
        (pl.col("kind") == "manual").sum().cast(pl.Int64).alias("manual"),
        *[(pl.col("state") == s).sum().cast(pl.Int64).alias(s) for s in LEDGER_STATES],
        to_duration(q50, res).alias("lateness_p50"),
        to_duration(q95, res).alias("lateness_p95"),
        to_duration(lat.max(), res).alias("lateness_max"),
        pl.col("cost").sum().cast(pl.Float64).alias("cost"),
        waited.sum().cast(pl.Int64).alias("budget_waits"),
        to_duration(wait.mean(), res).alias("budget_wait_mean"),
        to_duration(wait.max(), res).alias("budget_wait_max"),
        *worker_level_counts(resolution=dt.timedelta(microseconds=res)),
    )


#: Reasons only worker-level scenarios give (:mod:`.worker_loop`), each counted by :func:`summary`.
WORKER_REASONS = ("lease_expired", "review", "permanent", "rate_limited", "breaker_open")


def worker_level_counts(*, resolution: object = "1s") -> list[pl.Expr]:
    """:func:`summary`'s worker-level columns (0 or null for other scenarios), as aggregations.

    One count per :data:`WORKER_REASONS`; ``duplicate_effects``: effects
    beyond the first (a crash between effect and acknowledgement, or a second
    scheduler without a unique key, where the sink is not idempotent);
    ``rate_waits`` (runs that waited for a token) with ``rate_wait_mean``/``_max``
    (Durations rounded to ``resolution``, as :func:`summary`'s).
    """
    rw = pl.col("rate_wait_s")
    waited = rw > 0
    return [
        *[(pl.col("reason") == r).sum().cast(pl.Int64).alias(r) for r in WORKER_REASONS],
        (pl.col("effects").cast(pl.Int64) - 1).clip(lower_bound=0).sum().fill_null(0).alias("duplicate_effects"),
        waited.sum().fill_null(0).cast(pl.Int64).alias("rate_waits"),
        seconds_to_duration(pl.when(waited).then(rw).mean(), resolution).alias("rate_wait_mean"),
        seconds_to_duration(pl.when(waited).then(rw).max(), resolution).alias("rate_wait_max"),
    ]


#: :func:`summary`'s columns that only some scenarios can fill, by the feature that fills them
#: (:func:`compact_summary` leaves a group out when the scenario lacks the feature and its values are all 0/null).
SUMMARY_FEATURES: dict[str, tuple[str, ...]] = {
    "manual": ("manual",),  # Trigger events
    "cost": ("cost",),  # a policy with a cost, or a budget
    "budget": ("budget_waits", "budget_wait_mean", "budget_wait_max"),  # budgets
    "worker": (*WORKER_REASONS, "duplicate_effects", "rate_waits", "rate_wait_mean", "rate_wait_max"),  # workers...
}


def summary_features(frame: pl.DataFrame | None = None, scenario: object = None) -> set[str]:
    """The :data:`SUMMARY_FEATURES` a ledger's scenario configures (read from the scenario, else the frame).

    ``worker``: the frame was simulated at worker level (its ``effects`` or
    ``rate_wait_s`` are set: the engine fills them for every scheduled row
    of such a scenario, whatever happened); ``budget``: the scenario has
    budgets; ``cost``: budgets, or a schedule (or a revision) whose policy
    has a cost; ``manual``: ``Trigger`` events. Without a scenario (a frame
    read back from a store) only ``worker`` is known; :func:`compact_summary`
    then goes by the values.
    """
    out: set[str] = set()
    if frame is not None and any(c in frame.columns and frame[c].null_count() < frame.height
                                 for c in ("effects", "rate_wait_s")):
        out.add("worker")
    if scenario is None:
        return out
    if getattr(scenario, "budgets", ()):
        out |= {"budget", "cost"}
    events = tuple(getattr(scenario, "events", ()) or ())
    schedules = [*(getattr(scenario, "schedules", ()) or ()), *(getattr(e, "schedule", None) for e in events)]
    if any((getattr(getattr(s, "policy", None), "cost", 0) or 0) > 0 for s in schedules):
        out.add("cost")
    if any(type(e).__name__ == "Trigger" for e in events):
        out.add("manual")
    return out


def compact_summary(full: pl.DataFrame, features: Iterable[str] = ()) -> pl.DataFrame:
    """:func:`summary`'s rows with only the columns the scenario can fill: what :meth:`Ledger.summary` shows.

    Always: ``scenario``, ``occurrences``, the six state counts and the
    lateness percentiles. Each group of :data:`SUMMARY_FEATURES` (``manual``;
    ``cost``; the budget waits; the worker-level counts and rate waits) is
    kept when ``features`` (:func:`summary_features`) names it, or when any
    of its values is not 0 or null: the compact form never hides a number
    that says something. It depends on the scenario's configuration, not on
    the outcome, so summaries of one fleet under several policies have the
    same columns and stack (``pl.concat``); those of different kinds of
    scenario stack with ``how="diagonal"``, or use ``full=True``.

    >>> import datetime as dt
    >>> row = {"scenario": "x", "occurrences": 3, "manual": 0, "done": 3, "cost": 0.0, "budget_waits": 0,
    ...        "budget_wait_max": None, "rate_waits": 2, "rate_wait_max": dt.timedelta(seconds=5)}
    >>> compact_summary(pl.DataFrame([row])).columns
    ['scenario', 'occurrences', 'done', 'rate_waits', 'rate_wait_max']
    >>> compact_summary(pl.DataFrame([row]), {"budget"}).columns
    ['scenario', 'occurrences', 'done', 'budget_waits', 'budget_wait_max', 'rate_waits', 'rate_wait_max']
    """
    wanted = set(features)
    group_of = {c: g for g, cols in SUMMARY_FEATURES.items() for c in cols}

    def says_something(c: str) -> bool:
        return any(v is not None and v not in (0, 0.0, dt.timedelta(0)) for v in full[c].to_list())

    shown = {g for g, cols in SUMMARY_FEATURES.items()
             if g in wanted or any(says_something(c) for c in cols if c in full.columns)}
    return full.select(c for c in full.columns if group_of.get(c) in shown or c not in group_of)


def nearest_quantiles(values: pl.LazyFrame | list[pl.LazyFrame], qs: tuple[float, ...], *, bins: int = 4096,
                      small: int = 1 << 20, each: Callable | None = None) -> list[float | None]:
    """Exact quantiles by nearest rank (as polars' ``quantile``) of column ``v``, without holding the column.

    ``values``: one lazy frame, or its parts (a dataset's files), read one at
    a time, so that memory is one part's whatever the number of parts.
    The rank of ``q`` over ``n`` values is ``q * (n - 1)`` rounded half away
    from zero (polars' "nearest"). Each pass reads the values once: the
    first counts them and finds their range; each next one counts them in
    ``bins`` equal-width bins of the range still searched (with each bin's
    own smallest and largest value) and keeps the bin holding the rank: its
    values are contiguous in sorted order, so ``[its min, its max]`` is the
    next range and the values below it are counted exactly. When a range
    holds at most ``small`` values they are read and sorted; a range of one
    value is the answer. Memory: one part, ``bins`` rows per pass and at
    most ``small`` values. ``each(plan)``: runs a pass elsewhere (``plan`` of
    every part, collected: a Dask dataset's workers), ``values`` then unused.

    >>> lf = pl.LazyFrame({"v": [5.0, 1.0, 3.0, 2.0, 4.0]})
    >>> nearest_quantiles(lf, (0.5, 0.95), small=1), [pl.Series([5.0, 1, 3, 2, 4]).quantile(q) for q in (0.5, 0.95)]
    ([3.0, 5.0], [3.0, 5.0])
    """
    import math

    parts = [values] if isinstance(values, pl.LazyFrame) else list(values)
    v = pl.col("v")

    def each_part(plan) -> pl.DataFrame:  # a plan over every part, one part at a time (or where each runs it)
        got = each(plan) if each is not None else [plan(p).collect() for p in parts]
        return pl.concat(got, how="vertical") if got else pl.DataFrame()

    head = each_part(lambda p: p.select(pl.len().alias("n"), v.min().alias("lo"), v.max().alias("hi")))
    n = int(head["n"].sum()) if head.height else 0
    if not n:
        return [None for _ in qs]
    # (a numeric column's min/max: polars types them as any scalar a column can hold)
    lo0, hi0 = cast(float, head["lo"].min()), cast(float, head["hi"].max())
    out: list[float | None] = []
    for q in qs:
        x = q * (n - 1)
        k = math.floor(x) + (1 if x - math.floor(x) >= 0.5 else 0)  # half away from zero (x >= 0)
        lo, hi, below, count = lo0, hi0, 0, n
        while True:
            if lo == hi:
                out.append(lo)
                break
            inside = lambda p, lo=lo, hi=hi: p.filter(v.is_between(lo, hi))  # noqa: E731
            if count <= small:
                out.append(each_part(lambda p, inside=inside: inside(p).select(v))["v"].sort()[k - below])
                break
            width = (hi - lo) / bins
            if width > 0 and math.isfinite(width) and math.isfinite(1 / width):  # (polars may multiply by 1/width)
                b = ((v - lo) / width).floor().clip(0, bins - 1).cast(pl.Int32).alias("b")
            else:  # a range too narrow (subnormal) or too wide (overflow) to cut evenly: lo apart from the rest
                b = (v > lo).cast(pl.Int32).alias("b")
            hist = (each_part(lambda p, b=b, inside=inside: inside(p).group_by(b).agg(pl.len().alias("c"),
                                                                                      v.min().alias("lo"),
                                                                                      v.max().alias("hi")))
                    .group_by("b").agg(pl.col("c").sum(), pl.col("lo").min(), pl.col("hi").max()).sort("b"))
            before = hist["c"].cum_sum() - hist["c"]
            j = int(((before + below) <= k).arg_true()[-1])  # the last bin starting at or before the rank
            lo, hi = hist["lo"][j], hist["hi"][j]
            below += int(before[j])
            count = int(hist["c"][j])
    return out


def _late(started: str, lateness: str, late_after: object) -> pl.Expr:
    """The module's "late" rule on a run that started at ``started`` with ``lateness`` (seconds): only once
    the next occurrence was due (``next_due_utc``), or, with ``late_after``, also past that duration."""
    late = pl.col(started) >= pl.col("next_due_utc")
    if late_after is not None:
        limit = duration_us(late_after, "late_after", allow_zero=True)
        late = late.fill_null(False) | ((pl.col(lateness) * 1_000_000).round() > limit)
    return late


def classified(frame: pl.LazyFrame | pl.DataFrame, *, late_after: object = None) -> pl.LazyFrame:
    """The occurrences meant to run, each with ``status`` ``on_time|late|never`` (the module's rule).

    ``late_after``: None, or a duration (``"1min"``, ``"PT5M"``, a
    ``timedelta``, seconds) past which a run's lateness makes it late too.

    Columns: ``schedule_id``, ``nominal_local``, ``due_utc``, ``started_utc``,
    ``lateness_s``, ``next_due_utc`` and ``status``; sorted by due instant.
    """
    meant = (pl.col("kind") == "scheduled") & pl.col("due_utc").is_not_null() \
        & ~pl.col("reason").is_in(list(BY_DESIGN_REASONS)).fill_null(False)
    done = pl.col("state") == "done"
    nxt = pl.col("due_utc").shift(-1).over("schedule_id")
    late = _late("started_utc", "lateness_s", late_after)
    # Sorted by instant only, stably: a ledger already is (checking that is
    # cheap), where sorting by schedule first costs ten times as much; the
    # windows below follow that order within each schedule.
    return (
        _lazy(frame).filter(meant)
        .select("schedule_id", "nominal_local", "due_utc", "started_utc", "lateness_s", done.alias("_done"))
        .sort("due_utc", maintain_order=True)
        # The next *distinct* due instant: a tie (two revisions, or two rows
        # due at once) takes the value of the last row of the tie.
        .with_columns(next_due_utc=pl.when(nxt != pl.col("due_utc")).then(nxt))
        .with_columns(pl.col("next_due_utc").backward_fill().over("schedule_id"))
        .with_columns(status=pl.when(~pl.col("_done")).then(pl.lit("never"))
                      .when(late).then(pl.lit("late"))
                      .otherwise(pl.lit("on_time")))
        .drop("_done")
    )


def gaps(frame: pl.LazyFrame | pl.DataFrame, *, late_after: object = None, resolution: object = "1s") -> pl.LazyFrame:
    """Silences: per schedule, spans between done-run starts in which something due did not start.

    A schedule's done runs, taken at their starts, cut its time line into
    spans ``[from_utc, to_utc)`` from one start to the next later one (null
    before the first and after the last). A span is a gap when an occurrence
    *not on time* (module docstring: ``never`` or ``late``) was due in it; each
    such occurrence is in exactly one gap, and gaps never overlap. After a
    ``catchup="all"`` outage the span from the last run before it to the
    catch-up burst is one gap whose occurrences are all ``late``.

    Columns: ``schedule_id``, ``from_utc``, ``to_utc``, ``gap`` (Duration,
    ``to - from``; null when open), ``missed`` (due in it, never done),
    ``late`` (due in it, done after their period), ``first_missed_local`` and
    ``first_missed_utc`` (nominal time and due instant of the first of
    either), ``catchup_lateness`` (Duration: the largest lateness of the
    ``late`` ones; null when none). Both Durations are rounded to
    ``resolution`` (whole seconds: :func:`seconds_to_duration`; ``"1us"``
    keeps them exact, as the store's ``observation_gaps`` SQL has them);
    ``from_utc`` and ``to_utc`` are the runs' exact starts. Sorted by ``schedule_id``
    (naturally: :func:`natural_key`), ``from_utc`` (an open start first).
    ``late_after``: as :func:`classified`.
    """
    res = resolution_us(resolution)
    c = classified(frame, late_after=late_after)
    late = pl.col("status") == "late"
    missing = c.filter(pl.col("status") != "on_time").select(
        "schedule_id", pl.col("due_utc").alias("_at"), pl.lit(False).alias("_run"), "nominal_local", "due_utc",
        late.alias("_late"), "lateness_s")
    # Only the runs of schedules with something missing bound a gap.
    runs = (c.filter(pl.col("status") != "never").join(missing.select("schedule_id").unique(), on="schedule_id",
                                                       how="semi")
            .select("schedule_id", pl.col("started_utc").alias("_at"), pl.lit(True).alias("_run")))
    run_at = pl.when(pl.col("_run")).then(pl.col("_at"))
    return (
        pl.concat([runs, missing], how="diagonal")
        # At one instant, runs first: an occurrence due as a run starts lies after it.
        # By time only (the windows follow it within each schedule): cheaper than by schedule first.
        .sort("_at", "_run", descending=[False, True])
        .with_columns(from_utc=run_at.forward_fill().over("schedule_id"),
                      to_utc=run_at.backward_fill().over("schedule_id"))
        .filter(~pl.col("_run"))
        .group_by("schedule_id", "from_utc", "to_utc")
        .agg((~pl.col("_late")).sum().cast(pl.Int64).alias("missed"),
             pl.col("_late").sum().cast(pl.Int64).alias("late"),
             pl.col("nominal_local").sort_by("due_utc", "nominal_local").first().alias("first_missed_local"),
             pl.col("due_utc").min().alias("first_missed_utc"),
             to_duration(pl.col("lateness_s").filter(pl.col("_late")).max(), res).alias("catchup_lateness"))
        .select(pl.col("schedule_id").cast(pl.String), "from_utc", "to_utc",
                round_us((pl.col("to_utc") - pl.col("from_utc")).dt.total_microseconds(), res).cast(US).alias("gap"),
                "missed", "late", "first_missed_local", "first_missed_utc", "catchup_lateness")
        .pipe(gaps_order)
    )


def gaps_order(frame: pl.LazyFrame | pl.DataFrame):
    """:func:`gaps`' rows in its order: schedules in natural order, each one's gaps by start (the order parts
    of a ledger computed apart are put back in: :meth:`calsim.distributed.LedgerDataset.gaps`)."""
    return frame.sort(natural_key(pl.col("schedule_id")), "schedule_id", "from_utc", nulls_last=False)


def coverage_order(frame: pl.LazyFrame | pl.DataFrame):
    """:func:`coverage`'s rows in its order: schedules in natural order."""
    return frame.sort(natural_key(pl.col("schedule_id")), "schedule_id")


def coverage(frame: pl.LazyFrame | pl.DataFrame, *, late_after: object = None) -> pl.LazyFrame:
    """Per schedule, how its data windows were processed: ``on_time + late + never == occurrences``.

    Each occurrence meant to run owns a window, ``[previous due instant, its
    due instant)``; a window is processed by the first successful run whose
    data window (``window_start_utc``/``window_end_utc``, :mod:`.data_windows`)
    contains it, or, for a schedule whose runs carry no window, by its own
    run. A window is ``on_time`` when that run started within the owner's
    period (the module's rule), ``late`` when later, ``never`` when no
    successful run covered it, and also ``twice`` when it was processed more
    than once (the covering run's ``effects`` >= 2: a crash between effect and
    acknowledgement, or duplicate schedulers, with a sink that is not
    idempotent). With ``covers="own_window"`` the windows a ``latest``
    catch-up coalesced are ``never``; with ``"since_last_success"`` the run
    that caught up processed them, ``late``.

    Columns: ``schedule_id``, ``occurrences``, ``on_time``, ``late``,
    ``never``, ``twice``, ``first_never_local`` and ``first_never_utc`` (the
    owner of the first window never processed; null when none). Every
    schedule with a scheduled row has a row. Sorted by ``schedule_id``
    (naturally: :func:`natural_key`). ``late_after``: as :func:`classified`.
    """
    lf = _lazy(frame)
    status = pl.col("status")
    never = status == "never"
    per = windows_processed(lf, late_after=late_after).group_by("schedule_id").agg(
        pl.len().cast(pl.Int64).alias("occurrences"),
        *[(status == s).sum().cast(pl.Int64).alias(s) for s in ("on_time", "late", "never")],
        pl.col("twice").sum().cast(pl.Int64),
        pl.col("nominal_local").filter(never).first().alias("first_never_local"),
        pl.col("due_utc").filter(never).first().alias("first_never_utc"))
    ids = lf.filter(pl.col("kind") == "scheduled").select("schedule_id").unique()
    return (
        ids.join(per, on="schedule_id", how="left")
        .select(pl.col("schedule_id").cast(pl.String),
                pl.col("occurrences", "on_time", "late", "never", "twice").fill_null(0),
                "first_never_local", "first_never_utc")
        .pipe(coverage_order)
    )


def windows_processed(frame: pl.LazyFrame | pl.DataFrame, *, late_after: object = None) -> pl.LazyFrame:
    """Each occurrence's own window with ``status`` (``on_time|late|never``) and ``twice`` (:func:`coverage`).

    Without data windows this is :func:`classified`: a window is processed by
    its own run. With them, the covering run of the window owned by the
    occurrence due at ``d`` is the successful run with the earliest window end
    at or after ``d`` whose window starts before ``d`` (runs' windows do not
    overlap: each starts where the last success's ended, :mod:`.data_windows`).
    """
    lf = _lazy(frame)
    base = classified(lf, late_after=late_after)
    done = (pl.col("kind") == "scheduled") & (pl.col("state") == "done")
    covers = (
        lf.filter(done)
        .select(pl.col("schedule_id"),
                pl.coalesce("window_end_utc", "due_utc").alias("_end"),
                # A run without a window covers its own window only: it starts 1 µs before its due instant.
                pl.coalesce("window_start_utc", pl.col("due_utc") - pl.duration(microseconds=1)).alias("_from"),
                pl.col("started_utc").alias("_started"), pl.col("lateness_s").alias("_lateness"),
                pl.col("effects").fill_null(1).alias("_effects"))
        .sort("_end")
    )
    late = _late("_started", "_lateness", late_after)
    hit = pl.col("_end").is_not_null() & (pl.col("_from") < pl.col("due_utc"))
    return (
        base.sort("due_utc")
        .join_asof(covers, left_on="due_utc", right_on="_end", by="schedule_id", strategy="forward",
                   check_sortedness=False)
        .with_columns(status=pl.when(~hit).then(pl.lit("never")).when(late).then(pl.lit("late"))
                      .otherwise(pl.lit("on_time")),
                      twice=hit & (pl.col("_effects") >= 2))
        .drop("_end", "_from", "_started", "_lateness", "_effects")
    )


def daily_cost(frame: pl.LazyFrame | pl.DataFrame, accounts: Mapping[str, str] | None = None, *,
               zones: object = None, release: ReleaseLike = None) -> pl.LazyFrame:
    """Cost and runs per day of start, per account (``accounts``: schedule id -> account; null: none).

    Days are UTC days unless ``zones`` gives an account's calendar: a mapping
    account -> zone name, or the scenario's :class:`~calsim.Budget` objects
    (each account's budget zone). Then that account's days are local days in
    its zone, read exactly as the simulation's budget periods are
    (:func:`calsim.simulation.run_rules.period_index`, from ``release``: None
    means the release named by the frame's ``tzdata`` column, never polars'
    bundled tz data), so a day's cost compares with the budget's daily
    limit; a ``zone`` column then says each row's calendar (``UTC`` for an
    account without one). Sorted by ``day``, then ``account`` (naturally).

    >>> import calsim
    >>> s = calsim.Schedule("h", "UTC", "2026-01-01T00:00", "FREQ=HOURLY", policy=calsim.Policy(cost=1.0, account="a"))
    >>> led = calsim.simulate(calsim.Scenario("x", [s], "2026-01-01T00:00Z", "2026-01-02T00:00Z"), progress=False)
    >>> daily_cost(led.frame, led.accounts).collect().rows()
    [(datetime.date(2026, 1, 1), 'a', 24.0, 24)]
    >>> daily_cost(led.frame, led.accounts, zones={"a": "Asia/Tokyo"}).collect().rows()   # 09:00 is midnight there
    [(datetime.date(2026, 1, 1), 'a', 'Asia/Tokyo', 15.0, 15), (datetime.date(2026, 1, 2), 'a', 'Asia/Tokyo', 9.0, 9)]
    """
    acct = pl.col("schedule_id").cast(pl.String).replace_strict(dict(accounts), default=None,
                                                                return_dtype=pl.String) \
        if accounts else pl.lit(None, pl.String)
    lf = _lazy(frame).filter(pl.col("started_utc").is_not_null()).with_columns(account=acct)
    calendars = _calendars(zones)
    if calendars is None:
        return (lf.with_columns(day=pl.col("started_utc").dt.date())
                .group_by("day", "account")
                .agg(pl.col("cost").sum(), pl.len().alias("runs"))
                .sort("day", natural_key(pl.col("account")), "account"))
    rel = _release_for(frame, release)
    day = pl.col("started_utc").dt.date()
    zone = pl.lit("UTC", pl.String)
    for z in sorted(set(calendars.values()) - {"UTC"}):
        mine = pl.col("account").is_in([a for a, az in calendars.items() if az == z]).fill_null(False)
        local = pl.col("started_utc").dt.epoch("us").map_batches(
            functools.partial(_local_dates, table=rel.table(z)), return_dtype=pl.Date, is_elementwise=True)
        day = pl.when(mine).then(local).otherwise(day)
        zone = pl.when(mine).then(pl.lit(z, pl.String)).otherwise(zone)
    return (lf.with_columns(day=day, zone=zone)
            .group_by("day", "account", "zone")
            .agg(pl.col("cost").sum(), pl.len().alias("runs"))
            .sort("day", natural_key(pl.col("account")), "account"))


def _calendars(zones: object) -> dict[str, str] | None:
    """``daily_cost``'s ``zones``: account -> zone, from a mapping or from Budgets (None: UTC days)."""
    from ..errors import InputError, shown

    if zones is None:
        return None
    if isinstance(zones, Mapping):
        out = {str(k): str(v) for k, v in zones.items()}
    else:
        try:
            out = {str(b.account): str(b.zone) for b in cast(Iterable, zones)}
        except (TypeError, AttributeError):
            raise InputError(f"zones: expected a mapping account -> zone or calsim.Budget objects, got "
                             f"{type(zones).__name__} {shown(zones)}") from None
    return out


def _release_for(frame: pl.LazyFrame | pl.DataFrame, release: ReleaseLike) -> Release:
    """The release to read local days with: ``release``, else the one the frame's ``tzdata`` names."""
    from ..tz.release import release as get_release

    if release is None:
        names = _lazy(frame).select(pl.col("tzdata").drop_nulls().first()).collect()
        release = names.item() if names.height else None
    return get_release(release)


def _local_dates(utc_us: pl.Series, table) -> pl.Series:
    """Local dates (in ``table``'s zone) of instants in µs, as the budget's periods count days."""
    from .run_rules import period_index

    days = period_index(table, "day", utc_us.fill_null(0).to_numpy().astype(np.int64))
    dates = pl.Series(utc_us.name, days).cast(pl.Int32).cast(pl.Date)
    return dates if not utc_us.null_count() else dates.zip_with(utc_us.is_not_null(),
                                                                pl.Series([None] * len(dates), dtype=pl.Date))
