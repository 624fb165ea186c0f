"""``Ledger``: one row per occurrence (and per manual run) with its terminal state and why.

Columns (DESIGN.md §4): the occurrence frame's, plus ``scenario``, ``kind``
(scheduled | manual), ``eligible_utc`` (due + jitter), ``started_utc``,
``finished_utc``, ``lateness_s`` (start - eligible), ``state``, ``reason``
(null for ``done``), ``attempts``, ``cost``, ``budget_wait_s``.

States: ``done``, ``coalesced``, ``skipped``, ``expired``, ``cancelled``,
``failed``. Reasons: ``dst_gap``, ``merged``, ``calendar``, ``catchup``,
``max_lateness``, ``overlap``, ``budget``, ``paused``, ``revision``,
``superseded``, ``retries_exhausted``, ``stuck`` (a schedule left stuck by too many
missed times: Kubernetes' ">100 missed" rule, ``Policy(max_missed=...)``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Callable

import numpy as np
import polars as pl
import pyarrow as pa

from ..expansion import as_strings
import calsim.simulation.views as views
from .ledger_schema import (BY_DESIGN_REASONS, KIND, LEDGER_REASONS, LEDGER_SCHEMA, LEDGER_STATES,  # noqa: F401
                            REASON, STATE, UTC)

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd

    from .scenario import Scenario

__all__ = ["Ledger", "LEDGER_SCHEMA", "LEDGER_STATES", "LEDGER_REASONS", "BY_DESIGN_REASONS", "ledger_frame",
           "ledger_order"]

_CHUNK = 1 << 20  # rows per step of in-place conversions
#: A worker-level scenario's attempt log: the frame, the function that builds it on first read, or None.
AttemptLog = pl.DataFrame | Callable[[], pl.DataFrame] | None


def _codes(values: np.ndarray, dtype: pl.Enum) -> pl.Series:
    """int8 codes (-1: null) as ``dtype``, over the engine's own buffer (nulls as a validity bitmap)."""
    values = np.ascontiguousarray(values, dtype=np.int8)
    n = len(values)
    valid = values >= 0
    nulls = n - int(np.count_nonzero(valid))
    bitmap = pa.py_buffer(np.packbits(valid, bitorder="little")) if nulls else None
    return pl.Series(pa.Array.from_buffers(pa.uint8(), n, [bitmap, pa.py_buffer(values)],
                                           null_count=nulls)).cat.to(dtype)


def ledger_frame(name: str, run, manual: list[dict]) -> pl.DataFrame:
    """Assemble the ledger frame from the engine's columns (internal).

    Numeric numpy columns become polars Series without a copy, so the frame
    shares the engine's buffers; ``schedule_id`` and ``zone`` stay the
    occurrence frame's codes (:class:`Ledger` turns them into strings when
    the frame is first read).
    """
    assert (run.state >= 0).all(), "an occurrence was left pending"
    has = run.has_due
    started = run.started  # every row is terminal (asserted): started means it ran

    def nullable(a: np.ndarray, mask: np.ndarray, arrow_type) -> pl.Series:
        """``a`` with nulls where ``mask`` is False: an Arrow validity bitmap over
        ``a``'s own buffer (no copy of the values, no scatter)."""
        n = len(a)
        valid = int(np.count_nonzero(mask))
        bitmap = None if valid == n else pa.py_buffer(np.packbits(mask, bitorder="little"))
        return pl.Series(pa.Array.from_buffers(arrow_type, n, [bitmap, pa.py_buffer(np.ascontiguousarray(a))],
                                               null_count=n - valid))

    def to_ts(a: np.ndarray, mask: np.ndarray) -> pl.Series:
        return nullable(a.astype(np.int64, copy=False), mask, pa.timestamp("us", "UTC"))

    # Cost first: its temporary is gone before lateness is allocated (one
    # column less at the peak, which is here at fleet scale).
    cost = pl.Series("cost", run.costs(), dtype=pl.Float64)
    # (start - eligible) / 1e6 in numpy, in place (polars divides by a literal
    # through its reciprocal, which can differ in the last bit).
    late = np.subtract(run.start, run.eligible)
    seconds = late.view(np.float64)
    # Chunk by chunk: an output that overlaps its input is copied first, and a
    # chunk's copy is small where the column's would be one column more.
    for lo in range(0, len(late), _CHUNK):
        np.divide(late[lo:lo + _CHUNK], 1e6, out=seconds[lo:lo + _CHUNK])
    late = nullable(seconds, started, pa.float64()).alias("lateness_s")

    frame = run.frame.with_columns(
        pl.lit(name, pl.String).alias("scenario"),
        pl.lit("scheduled", KIND).alias("kind") if run.backfill is None else
        pl.Series(np.where(run.backfill, "backfill", "scheduled")).cast(KIND).alias("kind"),
        # Without jitter eligible is due: the frame's own column (no second buffer once the run is gone).
        run.frame["due_utc"].alias("eligible_utc") if run.eligible is run.due else
        to_ts(run.eligible, has).alias("eligible_utc"),
        to_ts(run.start, started).alias("started_utc"),
        to_ts(run.finish, started).alias("finished_utc"),
        late,
        _codes(run.state, STATE).alias("state"),
        _codes(run.reason, REASON).alias("reason"),
        pl.Series("attempts", run.attempts_n, dtype=pl.Int32),
        cost,
        pl.Series("budget_wait_s", run.budget_wait, dtype=pl.Float64),
        *_worker_columns(run, nullable, to_ts),
    ).select(LEDGER_SCHEMA.names())
    if manual:
        import datetime as dt

        epoch = dt.datetime(1970, 1, 1)
        us = lambda v: epoch + dt.timedelta(microseconds=int(v))  # noqa: E731
        rows = []
        for m in manual:
            s = m["schedule"]
            at = us(m["at"])
            rows.append({
                "scenario": name, "schedule_id": s.id, "revision": s.revision,
                "nominal_local": us(m["wall"]), "fold": 0, "zone": s.zone,
                "tzdata": m["tzdata"],
                "due_utc": at, "utc_offset_s": m["offset"], "notes": [], "kind": "manual",
                "eligible_utc": at, "started_utc": us(m["start"]),
                "finished_utc": us(m["finish"]), "lateness_s": (m["start"] - m["at"]) / 1e6,
                "state": "done", "reason": None, "attempts": 1, "cost": m["cost"], "budget_wait_s": 0.0,
                "window_start_utc": None, "window_end_utc": None, "worker": None, "effects": None,
                "rate_wait_s": None,
            })
        schema = pl.Schema({**LEDGER_SCHEMA, "schedule_id": frame.schema["schedule_id"],
                            "zone": frame.schema["zone"]})
        extra = pl.DataFrame(rows, schema={k: (pl.Datetime("us") if v == UTC else v) for k, v in schema.items()})
        extra = extra.with_columns(
            pl.col("due_utc", "eligible_utc", "started_utc", "finished_utc").dt.replace_time_zone("UTC"))
        # nominal_local is naive wall time: replace_time_zone above did not touch it.
        frame = pl.concat([frame, extra.cast(schema)]).sort("due_utc", maintain_order=True, nulls_last=True)
    return frame


def _worker_columns(run, nullable, to_ts) -> list[pl.Series | pl.Expr]:
    """The worker-level columns (DESIGN §4): null where the scenario has none of those features.

    ``worker`` is null for a run that never started or had no numbered worker;
    ``effects`` and ``rate_wait_s`` are set for every scheduled row of a
    worker-level scenario (0 for one that never ran). ``rate_wait_s`` is the
    time the run's attempts waited for their tokens, summed (a wait for a
    worker is not in it: ``lateness_s`` has that for the first attempt).
    """
    out: list[pl.Series | pl.Expr] = []
    if run.window is None:
        out += [pl.lit(None, UTC).alias("window_start_utc"), pl.lit(None, UTC).alias("window_end_utc")]
    else:
        start, end, has = run.window
        out += [to_ts(start, has).alias("window_start_utc"), to_ts(end, has).alias("window_end_utc")]
    if run.worker is None:
        out += [pl.lit(None, pl.Int32).alias(c) for c in ("worker", "effects")]
        out.append(pl.lit(None, pl.Float64).alias("rate_wait_s"))
    else:
        out += [nullable(run.worker, run.worker >= 0, pa.int32()).alias("worker"),
                pl.Series("effects", run.effects, dtype=pl.Int32),
                pl.Series("rate_wait_s", run.rate_wait, dtype=pl.Float64)]
    return out


class Ledger:
    """The outcome of :func:`calsim.simulate`: ``frame`` plus views for reports.

    >>> import calsim
    >>> s = calsim.Schedule("h", "UTC", "2026-01-01T00:00", "FREQ=HOURLY", policy=calsim.Policy(catchup="latest"))
    >>> sc = calsim.Scenario("x", [s], "2026-01-01T00:00Z", "2026-01-02T00:00Z",
    ...                      outages=[calsim.Outage("2026-01-01T03:30Z", "2026-01-01T07:10Z")])
    >>> ledger = calsim.simulate(sc)
    >>> ledger.summary().select("done", "coalesced").row(0)
    (21, 3)
    >>> ledger.gaps().select("schedule_id", "missed", "late", "gap").row(0)
    ('h', 3, 0, datetime.timedelta(seconds=15000))
    >>> ledger.coverage().select("occurrences", "on_time", "late", "never").row(0)
    (24, 21, 0, 3)
    """

    def __init__(self, name: str, frame: pl.DataFrame, accounts: dict[str, str] | None = None,
                 scenario: Scenario | None = None):
        self.name = name
        self._frame = frame
        self.accounts = accounts or {}
        self.scenario = scenario  # the Scenario it came from (the ledger store records its parameters)
        # Rows to run settled by each path of the engine ("columns", "budget_periods", "event_loop"): diagnostics.
        self.settled: dict[str, int] = {}
        self._attempt_log: AttemptLog = None  # a frame, or the function that builds it (worker-level scenarios)

    @property
    def frame(self) -> pl.DataFrame:
        """The ledger frame (DESIGN.md §4).

        A simulation keeps ``schedule_id`` and ``zone`` as integer codes
        (3 bytes a row, not 32): they become strings here, the first time
        the frame is read, and stay so.
        """
        self._frame = as_strings(self._frame)
        return self._frame

    @frame.setter
    def frame(self, frame: pl.DataFrame) -> None:
        self._frame = frame

    @property
    def attempt_log(self) -> pl.DataFrame | None:
        """Worker-level scenarios (:mod:`.worker_loop`): one row per attempt, in start order.

        Columns: ``schedule_id``, ``nominal_local``, ``fold`` (the run's key),
        ``instance`` (the scheduler instance that executed it), ``attempt``
        (1-based, per execution), ``worker`` (null: none numbered),
        ``started_utc``, ``ended_utc`` (its end, or the crash or lease expiry
        that ended it), ``released_utc`` (its worker free again: after the
        acknowledgement) and ``outcome`` (``succeeded``, ``failed``, ``lost`` in
        a crash, ``timed_out`` by its lease). None for other scenarios, and for
        a ledger read back from a store (which keeps one row per occurrence).
        Built the first time it is read.
        """
        if callable(self._attempt_log):
            self._attempt_log = self._attempt_log()
        return self._attempt_log

    @attempt_log.setter
    def attempt_log(self, log: AttemptLog) -> None:
        self._attempt_log = log

    def __repr__(self) -> str:
        return f"Ledger({self.name!r}, {self._frame.height} rows)"

    def __len__(self) -> int:
        return self._frame.height

    def counts(self) -> pl.DataFrame:
        """Rows per (kind, state, reason)."""

        return views.counts(self._frame).collect()

    # The views are defined once, in :mod:`calsim.simulation.views`, over a
    # lazy frame: on the engine's frame here (codes, not strings: nothing is
    # converted), on Parquet files for a Dask dataset.
    def summary(self, *, full: bool = False) -> pl.DataFrame:
        """One row: counts by state, lateness percentiles (Durations), and what the scenario can fill.

        Compact by default: ``scenario``, ``occurrences``, the six state counts
        and ``lateness_p50``/``_p95``/``_max``, plus ``manual`` with Trigger
        events, ``cost`` with costs or budgets, the budget waits with budgets,
        and the worker-level counts and rate waits for a worker-level scenario
        (:func:`calsim.simulation.views.compact_summary`: a group whose values
        are not all 0 or null is always shown). Summaries of one fleet under
        several policies have the same columns. ``full=True``: all 25 columns
        whatever the scenario, the schema the Dask dataset's summary keeps
        (code that stacks summaries of different scenarios wants it). Spans
        are rounded to whole seconds (to the tick when it is shorter), as
        :meth:`LedgerStore.compare <calsim.LedgerStore.compare>` rounds them;
        the frame's ``lateness_s`` and ``budget_wait_s`` stay exact. See
        :func:`calsim.simulation.views.summary`.
        """

        out = views.summary(self._frame, self.name, resolution=f"{views.resolution_of(self.scenario)}us").collect()
        return out if full else views.compact_summary(out, views.summary_features(self._frame, self.scenario))

    def gaps(self, *, late_after: object = None) -> pl.DataFrame:
        """Silences: per schedule, spans between done-run starts in which something due did not start.

        Columns ``schedule_id``, ``from_utc``, ``to_utc``, ``gap`` (Duration),
        ``missed``, ``late``, ``first_missed_local``, ``first_missed_utc``,
        ``catchup_lateness`` (Duration). A ``catchup="all"`` outage is one gap
        whose occurrences all ran ``late``. A run is late when it started after
        its schedule's next occurrence was due, or (``late_after="1min"``, a
        duration) later than that after it was eligible. See
        :func:`calsim.simulation.views.gaps`.
        """

        return views.gaps(self._frame, late_after=late_after).collect()

    def coverage(self, *, late_after: object = None) -> pl.DataFrame:
        """Per schedule: occurrences meant to run, ``on_time``, ``late``, ``never``, the first never done.

        ``late_after`` as in :meth:`gaps`; see :func:`calsim.simulation.views.coverage`.
        """

        return views.coverage(self._frame, late_after=late_after).collect()

    def daily_cost(self) -> pl.DataFrame:
        """Cost and runs per UTC day of start, per account (null: no account)."""

        return views.daily_cost(self._frame, self.accounts).collect()

    def to_pandas(self) -> "pd.DataFrame":
        """The frame as pandas (pyarrow-backed, so instants keep their zone)."""
        return self.frame.to_pandas()


def ledger_order(frame: pl.DataFrame) -> pl.DataFrame:
    """``frame`` sorted as the local engine sorts a ledger: by instant, then key.

    A row without an instant (gap-skipped, merged, excluded) is placed by its
    nominal time read with the offset before the gap (``gap="shift"``); when
    manual runs exist, rows without an instant come last (as the engine sorts
    them then). For frames read back from Parquet or the store.
    """
    if not frame.height:
        return frame
    key = ["schedule_id", "revision", "nominal_local", "fold"]
    if (frame["kind"] == "manual").any():
        order = ["due_utc", "kind", "_place", *key]
        return frame.with_columns(_place=_placement(frame)).sort(order, nulls_last=True).drop("_place")
    return frame.with_columns(_place=_placement(frame)).sort(["_place", *key]).drop("_place")


def _placement(frame: pl.DataFrame) -> pl.Series:
    """Each row's instant; a row without one: its nominal time read with the offset before the gap."""
    from ..errors import CalsimError
    from ..resolution import resolve

    due = frame["due_utc"]
    if not due.null_count():
        return due
    idx = frame.with_row_index("_i").filter(pl.col("due_utc").is_null()).select("_i", "zone", "tzdata", "nominal_local")
    rows, values = [], []
    for (zone, tzdata), part in idx.group_by("zone", "tzdata", maintain_order=True):
        try:
            v = resolve(part["nominal_local"], zone, release=tzdata or None, gap="shift", fold="first")["due_utc"]
        except CalsimError:  # a release this process cannot load: place by the wall time read as UTC
            v = part["nominal_local"].dt.replace_time_zone("UTC")
        rows.append(part["_i"])
        values.append(v.cast(due.dtype))
    return due.clone().scatter(pl.concat(rows), pl.concat(values))
