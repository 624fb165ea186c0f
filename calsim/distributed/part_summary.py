"""A dataset's summary computed on the Dask workers, part by part, and combined on the client.

:func:`calsim.simulation.views.summary` is the definition. Every column of it
but the two percentiles is a count, a sum, a maximum or a mean, so each part
gives its partial aggregates (:data:`PARTIAL`: counts, sums and maxima, a
mean as its sum and count), a task per part on the workers, and the client
adds them up: a few numbers per part. The percentiles stay exact: the passes
of :func:`~calsim.simulation.views.nearest_quantiles` (counts, then
histograms of a narrowing range) run as tasks over the parts too. Sums add
part by part, in another order than one pass does, so a non-integral cost or
a mean wait can differ in the last bits (as the streamed summary's).
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable

import polars as pl

from ..simulation.ledger_schema import LEDGER_STATES
from ..simulation.views import WORKER_REASONS, _lazy, nearest_quantiles, resolution_us, seconds_to_duration, \
    to_duration
import calsim.distributed.dataset_files as fs

__all__ = ["summary_on_workers", "partial", "PARTIAL"]

_STARTED = pl.col("started_utc").is_not_null()
_WAITED = pl.col("budget_wait_s") > 0
_RATE_WAITED = pl.col("rate_wait_s") > 0

#: One part's partial aggregates, each combined by its name's rule: ``max`` for ``*_max``, else a sum.
PARTIAL = [
    (pl.col("kind") == "scheduled").sum().cast(pl.Int64).alias("occurrences"),
    (pl.col("kind") == "manual").sum().cast(pl.Int64).alias("manual"),
    *[(pl.col("state") == s).sum().cast(pl.Int64).alias(s) for s in LEDGER_STATES],
    pl.when(_STARTED).then(pl.col("lateness_s")).max().alias("lateness_max"),
    pl.col("cost").sum().cast(pl.Float64).alias("cost"),
    _WAITED.sum().cast(pl.Int64).alias("budget_waits"),
    pl.when(_WAITED).then(pl.col("budget_wait_s")).sum().alias("budget_wait_sum"),
    pl.when(_WAITED).then(pl.col("budget_wait_s")).max().alias("budget_wait_max"),
    *[(pl.col("reason") == r).sum().cast(pl.Int64).alias(r) for r in WORKER_REASONS],
    (pl.col("effects").cast(pl.Int64) - 1).clip(lower_bound=0).sum().fill_null(0).alias("duplicate_effects"),
    _RATE_WAITED.sum().fill_null(0).cast(pl.Int64).alias("rate_waits"),
    pl.when(_RATE_WAITED).then(pl.col("rate_wait_s")).sum().alias("rate_wait_sum"),
    pl.when(_RATE_WAITED).then(pl.col("rate_wait_s")).max().alias("rate_wait_max"),
]


def partial(path: str, plan: Callable[[pl.LazyFrame], pl.LazyFrame] | None = None,
            storage_options: dict | None = None) -> pl.DataFrame:
    """One part file's partial aggregates (a worker's task), or ``plan`` of it (a pass of the percentiles)."""
    lf = _lazy(fs.scan_parquet([path], storage_options))
    return (plan(lf) if plan is not None else lf.select(PARTIAL)).collect()


def summary_on_workers(name: str, run: Callable[..., list[pl.DataFrame]], storage_options: dict | None,
                       resolution: object = "1s") -> pl.DataFrame:
    """:func:`calsim.simulation.views.summary` of a dataset's ledger, from ``run(fn, *args)``: ``fn(file,
    *args)`` of each of its part files, run on the workers
    (:meth:`~calsim.distributed.LedgerDataset.summary` gives it)."""

    def on_parts(plan: Callable[[pl.LazyFrame], pl.LazyFrame] | None) -> list[pl.DataFrame]:
        return run(partial, plan, storage_options)

    parts = pl.concat(on_parts(None), how="vertical_relaxed")
    started_values = (lambda lf: lf.filter(_STARTED).select(v=pl.col("lateness_s")))  # noqa: E731
    p50, p95 = nearest_quantiles([], (0.5, 0.95), each=lambda plan: on_parts(lambda lf: plan(started_values(lf))))
    res = resolution_us(resolution)
    step = dt.timedelta(microseconds=res)
    maxed = [c for c in parts.columns if c.endswith("_max")]
    row = parts.select(*[pl.col(c).max() for c in maxed],
                       *[pl.col(c).sum() for c in parts.columns if c not in maxed])
    mean = (lambda total, n: pl.when(pl.col(n) > 0).then(pl.col(total) / pl.col(n)))  # noqa: E731
    return row.select(
        pl.lit(name, pl.String).alias("scenario"),
        "occurrences", "manual", *LEDGER_STATES,
        to_duration(pl.lit(p50, pl.Float64), res).alias("lateness_p50"),
        to_duration(pl.lit(p95, pl.Float64), res).alias("lateness_p95"),
        to_duration(pl.col("lateness_max"), res).alias("lateness_max"),
        "cost", "budget_waits",
        to_duration(mean("budget_wait_sum", "budget_waits"), res).alias("budget_wait_mean"),
        to_duration(pl.col("budget_wait_max"), res).alias("budget_wait_max"),
        *WORKER_REASONS, "duplicate_effects", "rate_waits",
        seconds_to_duration(mean("rate_wait_sum", "rate_waits"), step).alias("rate_wait_mean"),
        seconds_to_duration(pl.col("rate_wait_max"), step).alias("rate_wait_max"),
    )
