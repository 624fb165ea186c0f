"""Reconciliation: an actual run history against a ledger's rows, the replay before a recovery.

A pure comparison of two frames: :func:`reconcile` is given the ledger's
rows (:meth:`calsim.LedgerStore.reconcile` reads them from the store, a
:class:`calsim.Ledger`'s frame serves as well) and the history, and knows
nothing of where either came from.

>>> import calsim
>>> s = calsim.Schedule("h", "UTC", "2026-01-01T00:00", "FREQ=HOURLY")
>>> ledger = calsim.simulate(calsim.Scenario("x", [s], "2026-01-01T00:00Z", "2026-01-01T03:00Z"), progress=False)
>>> ran = ledger.frame.select("schedule_id", "nominal_local", "started_utc").head(2)
>>> reconcile(ledger.frame, ran)["class"].to_list()
['matched', 'matched', 'missing']
"""

from __future__ import annotations

import datetime as dt
import os

import polars as pl

from ..simulation.ledger_schema import UTC

__all__ = ["reconcile", "RECONCILE_CLASSES"]

RECONCILE_CLASSES = ("matched", "missing", "duplicate", "unexpected", "late", "wrong_instant")
# The ledger columns reconcile reads (a ledger frame may have more).
LEDGER_COLUMNS = ("schedule_id", "revision", "nominal_local", "fold", "due_utc", "started_utc", "state", "reason")


def reconcile(ledger: pl.DataFrame, actual: pl.DataFrame | str | os.PathLike[str], *,
              grace: object = "5min", max_shift: object = "3h", start: object = None,
              end: object = None) -> pl.DataFrame:
    """Classify an actual run history against a ledger's rows.

    Parameters
    ----------
    ledger
        The ledger's rows: at least ``schedule_id``, ``revision``,
        ``nominal_local``, ``fold``, ``due_utc``, ``started_utc``, ``state``
        and ``reason`` (a :class:`calsim.Ledger`'s frame, or the rows
        :meth:`calsim.LedgerStore.reconcile` reads). Rows without a
        ``due_utc`` (never meant to run) are left out.
    actual
        A frame, or a CSV / Parquet file (read by
        :func:`calsim.importers.history.read_actual`: a regular file only,
        within the history caps, every value checked; a FIFO, a device or a
        file declaring more rows than the cap is refused before it is read), with ``schedule_id``, a scheduled
        time and ``started_utc`` (or ``started``), optionally ``status``
        and ``fold``. The scheduled time is ``nominal_local`` (naive wall
        time), ``scheduled_utc`` (an instant), or ``scheduled`` (naive:
        nominal, aware: instant). Naive ``started`` values are UTC.
    grace
        A run that starts later than the ledger's start (its due time when
        the ledger did not run it) plus ``grace`` is ``late``.
    max_shift
        With only UTC scheduled times: an unmatched run is paired with the
        nearest unpaired occurrence of its schedule within ``max_shift``
        (``wrong_instant``), else it is ``unexpected``. A run whose
        scheduled time is null (the history does not say it: syslog and
        journal lines) is paired with the latest unpaired occurrence due at
        or before its start, within ``max_shift``.
    start, end
        Compare only the window ``[start, end)`` (instants): ledger rows by
        ``due_utc``, runs by their scheduled instant, else their start.
        Default: everything.

    Returns
    -------
    pl.DataFrame
        One row per actual run plus one per missing occurrence: ``class``
        (matched | missing | duplicate | unexpected | late | wrong_instant),
        ``schedule_id``, ``revision``, ``nominal_local``, ``fold``,
        ``due_utc`` (ledger), ``scheduled_utc`` (actual), ``started_utc``,
        ``status``, ``lateness_s`` (actual start − ledger start),
        ``shift_s`` (actual instant − ledger instant), ``detail``.

    Notes
    -----
    Identity is the nominal local time when the history has one (DESIGN.md
    §1); then ``wrong_instant`` means the history's ``scheduled_utc``
    differs from the ledger's ``due_utc``. With only nominal times and
    start times, a run an hour after its instant is ``late``: nothing
    tells it apart from a slow start. Expected runs are the ledger's rows
    that started; a run of an occurrence the ledger coalesced, skipped or
    expired is ``unexpected`` (``detail`` names the state).
    """
    from ..durations import duration_us
    from ..importers.history import read_actual  # here, not at the top: `import calsim` loads this module
    from ..times import instant_us

    grace_s = duration_us(grace, "grace") / 1e6
    shift_us = duration_us(max_shift, "max_shift")
    act = read_actual(actual)
    lo, hi = (None if t is None else instant_us(t, f"reconcile: {n}") for t, n in ((start, "start"), (end, "end")))
    led = (ledger.select(LEDGER_COLUMNS).rename({"started_utc": "ledger_started"})
           .filter(pl.col("due_utc").is_not_null())
           .with_columns(pl.col("due_utc", "ledger_started").cast(UTC), pl.col("fold").cast(pl.Int8),
                         pl.col("state").cast(pl.String)))
    if lo is not None or hi is not None:
        run_at = (pl.coalesce("scheduled_utc", "started_utc") if "scheduled_utc" in act.columns
                  else pl.col("started_utc"))
        led = led.filter(_inside(pl.col("due_utc"), lo, hi))
        act = act.filter(_inside(run_at, lo, hi))
    act = _assign_groups(act, led)
    led = led.with_row_index("occ")
    act = act.with_row_index("run")
    if "nominal_local" in act.columns:
        on = ["schedule_id", "nominal_local"] + (["fold"] if "fold" in act.columns else [])
        if "fold" not in act.columns:  # without fold, a fold="both" pair takes runs in order
            led = led.with_columns(pl.col("fold").rank("ordinal").over("schedule_id", "nominal_local")
                                   .cast(pl.Int64).alias("_k"))
            act = act.with_columns(pl.col("started_utc").rank("ordinal").over("schedule_id", "nominal_local")
                                   .cast(pl.Int64).alias("_k"))
            nk = led.group_by("schedule_id", "nominal_local").agg(pl.len().cast(pl.Int64).alias("_n"))
            act = act.join(nk, on=["schedule_id", "nominal_local"], how="left").with_columns(
                pl.min_horizontal("_k", pl.col("_n").fill_null(1)).alias("_k")).drop("_n")
            on = on + ["_k"]
        pairs = act.join(led, on=on, how="left")
    else:
        exact = act.join(led, left_on=["schedule_id", "scheduled_utc"], right_on=["schedule_id", "due_utc"],
                         how="inner", maintain_order="left").select("run", "occ")
        rest = act.filter(~pl.col("run").is_in(exact["run"].implode()))
        free = led.filter(~pl.col("occ").is_in(exact["occ"].implode())).select(
            "schedule_id", "occ", pl.col("due_utc").alias("_due")).sort("_due")
        tol = dt.timedelta(microseconds=shift_us)
        near = (rest.filter(pl.col("scheduled_utc").is_not_null()).sort("scheduled_utc").join_asof(
            free, left_on="scheduled_utc", right_on="_due", by="schedule_id", strategy="nearest",
            tolerance=tol, check_sortedness=False).select("run", "occ"))
        # Without a scheduled time, a run belongs to the last occurrence due
        # before it started: cron, systemd timers and the CronJob controller
        # start a run at or after its due time, never before.
        unknown = rest.filter(pl.col("scheduled_utc").is_null())
        taken = pl.concat([exact["occ"], near["occ"].drop_nulls()])
        by_start = (unknown.sort("started_utc").join_asof(
            free.filter(~pl.col("occ").is_in(taken.implode())), left_on="started_utc", right_on="_due",
            by="schedule_id", strategy="backward", tolerance=tol, check_sortedness=False).select("run", "occ"))
        links = pl.concat([exact, near.filter(pl.col("occ").is_not_null()),
                           by_start.filter(pl.col("occ").is_not_null())])
        pairs = act.join(links, on="run", how="left").join(led, on="occ", how="left", suffix="_l")
        pairs = pairs.drop([c for c in pairs.columns if c.endswith("_l")])
    if "scheduled_utc" not in pairs.columns:
        pairs = pairs.with_columns(pl.lit(None, UTC).alias("scheduled_utc"))
    pairs = pairs.with_columns(
        pl.col("started_utc").rank("ordinal").over("occ").alias("_nth"),
        ((pl.col("started_utc") - pl.coalesce("ledger_started", "due_utc")).dt.total_microseconds() / 1e6)
        .alias("lateness_s"),
        ((pl.col("scheduled_utc") - pl.col("due_utc")).dt.total_microseconds() // 1_000_000).alias("shift_s"),
    )
    cls = (pl.when(pl.col("occ").is_null()).then(pl.lit("unexpected"))
           .when(pl.col("_nth") > 1).then(pl.lit("duplicate"))
           .when(pl.col("ledger_started").is_null()).then(pl.lit("unexpected"))
           .when(pl.col("shift_s").fill_null(0) != 0).then(pl.lit("wrong_instant"))
           .when(pl.col("lateness_s") > grace_s).then(pl.lit("late"))
           .otherwise(pl.lit("matched")))
    detail = (pl.when(pl.col("occ").is_null()).then(pl.lit("no occurrence in the ledger"))
              .when(pl.col("_nth") > 1).then(pl.lit("second run of one occurrence"))
              .when(pl.col("ledger_started").is_null())
              .then(pl.lit("ledger: ") + pl.col("state") + pl.lit("/") + pl.col("reason").cast(pl.String).fill_null(""))
              .otherwise(pl.lit(None, pl.String)))
    ran = pairs.with_columns(cls.alias("class"), detail.alias("detail"))
    missing = led.filter(pl.col("ledger_started").is_not_null()
                         & ~pl.col("occ").is_in(pairs["occ"].drop_nulls().implode())).with_columns(
        pl.lit("missing").alias("class"), pl.lit("expected, never ran").alias("detail"))
    cols = {"class": pl.Enum(list(RECONCILE_CLASSES)), "schedule_id": pl.String(), "revision": pl.Int64(),
            "nominal_local": pl.Datetime("us"), "fold": pl.Int8(), "due_utc": UTC, "scheduled_utc": UTC,
            "started_utc": UTC, "status": pl.String(), "lateness_s": pl.Float64(), "shift_s": pl.Int64(),
            "detail": pl.String()}

    def shape(f: pl.DataFrame) -> pl.DataFrame:
        return f.select([pl.col(c).cast(t) if c in f.columns else pl.lit(None, t).alias(c) for c, t in cols.items()])

    return pl.concat([shape(ran), shape(missing)]).sort(
        "schedule_id", "nominal_local", "started_utc", nulls_last=True, maintain_order=True)


def _assign_groups(act: pl.DataFrame, led: pl.DataFrame) -> pl.DataFrame:
    """Give a run named by a job with several triggers to the trigger that fired it.

    One job can be several schedules: a systemd timer's ``OnCalendar=``
    lines are ``backup:1``, ``backup:2``... while the journal only knows
    ``backup.service``, so its runs arrive as ``backup``. A timer elapses at
    the earliest next time of all its calendars (systemd.timer(5)), so a run
    belongs to the member due last at or before its scheduled time (else its
    start); ties go to the lowest id. Two members due at the same instant
    fire once in systemd, so the other member's occurrence shows as missing.
    """
    names = set(led["schedule_id"].unique().to_list())
    strays = set(act["schedule_id"].unique().to_list()) - names
    if not strays:
        return act
    members = (led.select("schedule_id", "due_utc")
               .with_columns(pl.col("schedule_id").str.replace(r":[0-9]+$", "").alias("_group"))
               .filter((pl.col("_group") != pl.col("schedule_id")) & pl.col("_group").is_in(sorted(strays)))
               .sort("due_utc", "schedule_id", descending=[False, True]))
    if members.is_empty():
        return act
    at = pl.coalesce("scheduled_utc", "started_utc") if "scheduled_utc" in act.columns else pl.col("started_utc")
    act = act.with_row_index("_row").with_columns(at.alias("_at"))
    fired = (act.filter(pl.col("_at").is_not_null()).sort("_at")
             .join_asof(members.rename({"schedule_id": "_member", "_group": "schedule_id"}), left_on="_at",
                        right_on="due_utc", by="schedule_id", strategy="backward", check_sortedness=False)
             .select("_row", "_member"))
    return (act.join(fired, on="_row", how="left")
            .with_columns(pl.coalesce("_member", "schedule_id").alias("schedule_id"))
            .sort("_row").drop("_row", "_at", "_member"))


def _inside(col: pl.Expr, lo: int | None, hi: int | None) -> pl.Expr:
    """``col`` in ``[lo, hi)`` (µs since the epoch; None: unbounded)."""
    cond = pl.lit(True)
    if lo is not None:
        cond = cond & (col >= pl.lit(lo).cast(pl.Datetime("us", "UTC")))
    if hi is not None:
        cond = cond & (col < pl.lit(hi).cast(pl.Datetime("us", "UTC")))
    return cond
