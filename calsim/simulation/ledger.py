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

from typing import TYPE_CHECKING

import numpy as np
import polars as pl
import pyarrow as pa

from ..expansion import OCCURRENCE_SCHEMA, as_strings

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd

__all__ = ["Ledger", "LEDGER_SCHEMA", "LEDGER_STATES", "LEDGER_REASONS", "ledger_frame"]

LEDGER_STATES = ("done", "coalesced", "skipped", "expired", "cancelled", "failed")
LEDGER_REASONS = ("dst_gap", "merged", "calendar", "catchup", "max_lateness", "overlap", "budget", "paused",
                  "revision", "superseded", "retries_exhausted", "stuck")
STATE = pl.Enum(list(LEDGER_STATES))
REASON = pl.Enum(list(LEDGER_REASONS))
KIND = pl.Enum(["scheduled", "manual"])
UTC = pl.Datetime("us", "UTC")
_CHUNK = 1 << 20  # rows per step of in-place conversions

LEDGER_SCHEMA = pl.Schema(
    {
        "scenario": pl.String,
        **OCCURRENCE_SCHEMA,
        "kind": KIND,
        "eligible_utc": UTC,
        "started_utc": UTC,
        "finished_utc": UTC,
        "lateness_s": pl.Float64,
        "state": STATE,
        "reason": REASON,
        "attempts": pl.Int32,
        "cost": pl.Float64,
        "budget_wait_s": pl.Float64,
    }
)


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
        pl.lit("scheduled", KIND).alias("kind"),
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
            })
        schema = {**LEDGER_SCHEMA, "schedule_id": frame.schema["schedule_id"], "zone": frame.schema["zone"]}
        extra = pl.DataFrame(rows, schema={k: (pl.Datetime("us") if v == UTC else v) for k, v in schema.items()})
        extra = extra.with_columns(pl.col("due_utc", "eligible_utc", "started_utc", "finished_utc").dt.replace_time_zone("UTC"))
        # nominal_local is naive wall time: replace_time_zone above did not touch it.
        frame = pl.concat([frame, extra.cast(schema)]).sort("due_utc", maintain_order=True, nulls_last=True)
    return frame


class Ledger:
    """The outcome of :func:`calsim.simulate`: ``frame`` plus views for reports.

    >>> import calsim
    >>> s = calsim.Schedule("h", "UTC", "2026-01-01T00:00", "FREQ=HOURLY", policy=calsim.Policy(catchup="latest"))
    >>> sc = calsim.Scenario("x", [s], "2026-01-01T00:00Z", "2026-01-02T00:00Z",
    ...                      outages=[calsim.Outage("2026-01-01T03:30Z", "2026-01-01T07:10Z")])
    >>> ledger = calsim.simulate(sc)
    >>> ledger.summary().select("done", "coalesced").row(0)
    (21, 3)
    >>> ledger.gaps().select("schedule_id", "missed").row(0)
    ('h', 3)
    """

    def __init__(self, name: str, frame: pl.DataFrame, accounts: dict[str, str] | None = None,
                 scenario: object = None):
        self.name = name
        self._frame = frame
        self.accounts = accounts or {}
        self.scenario = scenario  # the Scenario it came from (the ledger store records its parameters)
        # Rows to run settled by each path of the engine ("columns", "budget_periods", "event_loop"): diagnostics.
        self.settled: dict[str, int] = {}

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

    def __repr__(self) -> str:
        return f"Ledger({self.name!r}, {self._frame.height} rows)"

    def __len__(self) -> int:
        return self._frame.height

    def counts(self) -> pl.DataFrame:
        """Rows per (kind, state, reason)."""
        return self._frame.group_by("kind", "state", "reason").len("rows").sort("kind", "state", "reason")

    def summary(self) -> pl.DataFrame:
        """One row: counts by state, lateness percentiles (s), cost and budget-wait ages (s)."""
        f = self._frame  # no string column is read: codes will do
        # Column by column: filtering the whole frame would copy every column
        # of every started row (as much memory again as the ledger).
        kind = f["kind"]
        row = {"scenario": self.name, "occurrences": int((kind == "scheduled").sum()),
               "manual": int((kind == "manual").sum())}
        counts = dict(f.select(pl.col("state").value_counts()).unnest("state").iter_rows())
        for s in LEDGER_STATES:
            row[s] = int(counts.get(s, 0))
        lat = f["lateness_s"].filter(f["started_utc"].is_not_null())
        wait = f["budget_wait_s"]
        wait = wait.filter(wait > 0)
        row.update(
            lateness_p50_s=lat.quantile(0.5) if len(lat) else None,
            lateness_p95_s=lat.quantile(0.95) if len(lat) else None,
            lateness_max_s=lat.max() if len(lat) else None,
            cost=float(f["cost"].sum()),
            budget_waits=len(wait),
            budget_wait_mean_s=wait.mean() if len(wait) else None,
            budget_wait_max_s=wait.max() if len(wait) else None,
        )
        return pl.DataFrame([row])

    def gaps(self) -> pl.DataFrame:
        """Observation gaps: per schedule, spans between consecutive done runs with missed occurrences.

        Runs are taken in the order they started and missed occurrences at
        their due time. Occurrences that were never meant to run (DST gap,
        merged, calendar) do not open a gap. Columns: ``schedule_id``, ``from_utc`` (start of
        the last done run before, null if none), ``to_utc`` (start of the
        next done run, null if none), ``missed`` (occurrences in between that
        did not run), ``first_missed`` (nominal time of the first of them),
        ``gap_s``.
        """
        by_design = pl.col("reason").is_in(["dst_gap", "merged", "calendar"]).fill_null(False)
        # Rows are ordered by when things happened: a done run at its start, a
        # missed occurrence at its due time. Ordering by due time alone would
        # put a late catch-up run (``catchup="earliest"`` runs the oldest missed
        # occurrence at recovery) before the occurrences it replaced, and split
        # one outage into a long gap and a zero-length one.
        # On codes when the frame has them (Enum categories are sorted: the
        # same order as the strings); the result's ids are strings.
        f = (
            self._frame.filter((pl.col("kind") == "scheduled") & ~by_design)
            .with_columns(_at=pl.coalesce("started_utc", "due_utc"))
            .sort("schedule_id", "_at", "due_utc", "nominal_local", "fold")
            .with_columns(done=pl.col("state") == "done")
            .with_columns(run_id=pl.col("done").cast(pl.Int32).cum_sum().over("schedule_id"))
        )
        last_done = f.filter(pl.col("done")).select("schedule_id", "run_id", pl.col("started_utc").alias("from_utc"))
        next_done = f.filter(pl.col("done")).select(
            "schedule_id", (pl.col("run_id") - 1).alias("run_id"), pl.col("started_utc").alias("to_utc")
        )
        missing = (
            f.filter(~pl.col("done"))
            .group_by("schedule_id", "run_id")
            .agg(pl.len().alias("missed"), pl.col("nominal_local").min().alias("first_missed"))
        )
        out = (
            missing.join(last_done, on=["schedule_id", "run_id"], how="left")
            .join(next_done, on=["schedule_id", "run_id"], how="left")
            .with_columns(gap_s=(pl.col("to_utc") - pl.col("from_utc")).dt.total_seconds())
            .select(pl.col("schedule_id").cast(pl.String), "from_utc", "to_utc", pl.col("missed").cast(pl.Int64),
                    "first_missed", "gap_s")
            .sort("schedule_id", "first_missed")
        )
        return out

    def daily_cost(self) -> pl.DataFrame:
        """Cost and runs per UTC day of start, per account (null: no account)."""
        acct = pl.col("schedule_id").replace_strict(self.accounts, default=None, return_dtype=pl.String) \
            if self.accounts else pl.lit(None, pl.String)
        return (
            self._frame.filter(pl.col("started_utc").is_not_null())
            .with_columns(day=pl.col("started_utc").dt.date(), account=acct)
            .group_by("day", "account")
            .agg(pl.col("cost").sum(), pl.len().alias("runs"))
            .sort("day", "account")
        )

    def to_pandas(self) -> "pd.DataFrame":
        """The frame as pandas (pyarrow-backed, so instants keep their zone)."""
        return self.frame.to_pandas()
