"""Data windows: what a run processes (``Policy(covers=...)``), the ledger's ``window_start_utc``/``window_end_utc``.

A digest or collection run processes a left-closed, right-open window of
data that ends at its nominal instant (Airflow's data interval, Dagster's
``TimeWindow``: "closed at the start and open at the end"):

* ``"own_window"``: ``[previous nominal instant, this one)`` of the same
  schedule revision, whether the previous one ran or not, so windows tile
  time; a run that was coalesced or skipped leaves its window unprocessed.
  The first occurrence's window reaches back one spacing (its successor's
  distance): the schedule is taken as regular just before the horizon.
* ``"data_interval"``: the own window, as Airflow's data-interval timetables
  make it; the run is due at the window's end and the schedule's first time
  opened the first window (:func:`.occurrences.interval_openings`).
* ``"since_last_success"``: from the end of the window of the last run that
  succeeded before it (in due order) to this nominal instant (Airflow's
  ``prev_data_interval_end_success``); before any success, the own window.
  After a ``catchup="latest"`` outage the one run that catches up covers
  every window the outage hid.

The window is fixed when the run is materialised: every attempt, a retry
after a failure or a lease lost in a crash, and a duplicate execution resend
that same window ("resend, not reselect"). Only rows that started carry one;
:func:`.views.coverage` reads them.

>>> import calsim
>>> p = calsim.Policy(catchup="latest", covers="since_last_success")
>>> s = calsim.Schedule("d", "UTC", "2026-01-04T02:00", "FREQ=DAILY", policy=p)
>>> sc = calsim.Scenario("x", [s], "2026-01-04T00:00Z", "2026-01-09T00:00Z",
...                      outages=[calsim.Outage("2026-01-05T01:00Z", "2026-01-08T03:00Z")])
>>> calsim.simulate(sc).frame.filter(pl.col("state") == "done").select(
...     pl.col("window_start_utc", "window_end_utc").dt.strftime("%a %H:%M")).rows()
[('Sat 02:00', 'Sun 02:00'), ('Sun 02:00', 'Thu 02:00')]
"""

from __future__ import annotations

import numpy as np
import polars as pl

from .state import S, RunState

__all__ = ["data_windows", "COVERS"]

COVERS = {"own_window": 1, "since_last_success": 2, "data_interval": 3}


def data_windows(run: RunState) -> None:
    """Set ``run.window`` for the rows of schedules whose policy ``covers`` a window (None when none does)."""
    kind = np.array([COVERS.get(p.covers, 0) if p.covers else 0 for p in run.pol], dtype=np.int8)
    if not kind.any():
        return
    rows = np.flatnonzero(run.has_due & (kind[run.s] > 0))
    # A backfill run's window is its occurrence's (its due is its arrival): the windows are those of the
    # schedule's logical instants, scheduled and backfilled alike; "since the last success" counts each kind
    # of run apart (a backfill does not move the scheduled runs' last success).
    logical = run.due if run.logical is None else run.logical
    base = run.s[rows].astype(np.int64)
    f = pl.DataFrame({
        "row": rows, "base": base, "s": base * 2 + (0 if run.backfill is None else run.backfill[rows]),
        "due": logical[rows], "done": run.state[rows] == S["done"], "kind": kind[run.s[rows]],
    }).sort("s", "due", maintain_order=True)
    if run.backfill is None:
        prev, nxt = pl.col("due").shift(1).over("s"), pl.col("due").shift(-1).over("s")
    else:
        instants = f.select("base", "due").unique().sort("base", "due").with_columns(
            _prev=pl.col("due").shift(1).over("base"), _next=pl.col("due").shift(-1).over("base"))
        f = f.join(instants, on=["base", "due"], how="left", maintain_order="left")
        prev, nxt = pl.col("_prev"), pl.col("_next")
    spacing = nxt - pl.col("due")
    # The first occurrence's window starts where the schedule's first interval opened, else reaches back one
    # spacing (none known: an empty window).
    opened = pl.col("base").replace_strict(list(run.openings), list(run.openings.values()), default=None,
                                           return_dtype=pl.Int64) if run.openings else pl.lit(None, pl.Int64)
    own = pl.coalesce(prev, opened, pl.col("due") - spacing.fill_null(0))
    last_done = pl.when(pl.col("done")).then(pl.col("due")).shift(1).forward_fill().over("s")
    f = f.with_columns(
        start=pl.when(pl.col("kind") == COVERS["since_last_success"]).then(pl.coalesce(last_done, own)).otherwise(own))
    out_start = np.zeros(run.n, dtype=np.int64)
    has = np.zeros(run.n, dtype=bool)
    r = f["row"].to_numpy()
    out_start[r] = f["start"].to_numpy()
    has[r] = run.started[r]
    run.window = (out_start, logical, has)
