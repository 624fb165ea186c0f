"""The ledger's vocabulary and columns (DESIGN.md §4): states, reasons, kinds and the frame's schema.

Defined here, below :mod:`.ledger` and :mod:`.views` (both read them), so
that the views need nothing of the :class:`~calsim.Ledger` class.

>>> from calsim.simulation.ledger_schema import LEDGER_SCHEMA, BY_DESIGN_REASONS
>>> LEDGER_SCHEMA["state"].categories.to_list()[:2], BY_DESIGN_REASONS
(['done', 'coalesced'], ('dst_gap', 'merged', 'calendar'))
"""

from __future__ import annotations

import polars as pl

from ..expansion import OCCURRENCE_SCHEMA

__all__ = ["LEDGER_SCHEMA", "WORKER_COLUMNS", "with_worker_columns", "LEDGER_STATES", "LEDGER_REASONS",
           "BY_DESIGN_REASONS", "STATE", "REASON", "KIND", "UTC"]

LEDGER_STATES = ("done", "coalesced", "skipped", "expired", "cancelled", "failed")
LEDGER_REASONS = ("dst_gap", "merged", "calendar", "catchup", "max_lateness", "overlap", "budget", "paused",
                  "revision", "superseded", "retries_exhausted", "stuck",
                  # worker-level (:mod:`.worker_loop`): a lost lease with no attempt left, a failure class that
                  # stops (manual review) or dead-letters, a token too late, a breaker open.
                  "lease_expired", "review", "permanent", "rate_limited", "breaker_open")
#: Reasons of occurrences never meant to run (no instant): not missed, they open no gap.
BY_DESIGN_REASONS = ("dst_gap", "merged", "calendar")
STATE = pl.Enum(list(LEDGER_STATES))
REASON = pl.Enum(list(LEDGER_REASONS))
KIND = pl.Enum(["scheduled", "manual", "backfill"])
UTC = pl.Datetime("us", "UTC")

LEDGER_SCHEMA = pl.Schema(
    {
        "scenario": pl.String(),
        **OCCURRENCE_SCHEMA,
        "kind": KIND,
        "eligible_utc": UTC,
        "started_utc": UTC,
        "finished_utc": UTC,
        "lateness_s": pl.Float64(),
        "state": STATE,
        "reason": REASON,
        "attempts": pl.Int32(),
        "cost": pl.Float64(),
        "budget_wait_s": pl.Float64(),
        # Worker-level columns (null in scenarios without those features, DESIGN §4).
        "window_start_utc": UTC,
        "window_end_utc": UTC,
        "worker": pl.Int32(),
        "effects": pl.Int32(),
        "rate_wait_s": pl.Float64(),
    }
)

#: DESIGN §4's worker-level columns (issue 19): null in scenarios without those features, and read as
#: null from ledgers written before they existed (store layouts < 5, older Dask datasets).
WORKER_COLUMNS = ("window_start_utc", "window_end_utc", "worker", "effects", "rate_wait_s")


def with_worker_columns(lf: pl.LazyFrame, names: list[str]) -> pl.LazyFrame:
    """``lf`` (whose columns are ``names``) with every missing :data:`WORKER_COLUMNS` as a typed null."""
    missing = [c for c in WORKER_COLUMNS if c not in names]
    return lf.with_columns(pl.lit(None, LEDGER_SCHEMA[c]).alias(c) for c in missing) if missing else lf
