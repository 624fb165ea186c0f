"""Reading a store: a ledger back, ``compare`` across scenarios, the rows ``reconcile`` needs, the Parquet export.

Each function takes the store's :class:`~.connection.Connection` first.
:meth:`calsim.LedgerStore.compare` answers in the units of
:meth:`calsim.Ledger.summary` (Durations, nearest-rank percentiles), and the
gaps come from the ``observation_gaps`` SQL (:func:`.schema.gaps_sql`), which is
tested equal to :meth:`calsim.Ledger.gaps`.

>>> import calsim
>>> from calsim.store.connection import Connection
>>> from calsim.store.writer import write
>>> s = calsim.Schedule("h", "UTC", "2026-01-01T00:00", "FREQ=HOURLY")
>>> db = Connection(":memory:", read_only=False)
>>> _ = write(db, calsim.simulate(calsim.Scenario("x", [s], "2026-01-01T00:00Z", "2026-01-02T00:00Z"), progress=False))
>>> compare(db, ["x"]).select("scenario", "occurrences", "done").row(0)
('x', 24, 24)
>>> db.close()
"""

from __future__ import annotations

import os
from pathlib import Path

import polars as pl

from ..atomic import check_writable, os_error_cause, show_path, write_atomically
from ..errors import InputError, StoreError, UnknownScenarioError
from ..simulation.ledger_schema import LEDGER_REASONS, LEDGER_SCHEMA, LEDGER_STATES
from ..simulation.views import seconds_to_duration, worker_level_counts
from ..tzchanges import TZDIFF_SCHEMA
from .connection import Connection
from .store_paths import cause
from .ledger_records import shown_name
from .schema import gaps_sql
from .sql import identifier, literal
from .tables import checked_table, is_view

__all__ = ["scenarios", "ledger", "ledger_rows", "compare", "tzdiff", "export_parquet"]


def scenarios(db: Connection) -> pl.DataFrame:
    """One row per stored scenario (name, created, horizon, release, parameters, versions, rows)."""
    return db.sql("SELECT * EXCLUDE (digest) FROM scenarios ORDER BY name")


def ledger(db: Connection, name: str) -> pl.DataFrame:
    """The ledger frame stored as ``name``, equal to the one written (order and dtypes)."""
    db.known([name])
    table = checked_table(
        db.sql("SELECT table_name FROM occurrence_tables WHERE scenario = $1", [name])["table_name"][0])
    if is_view(db.con, table):
        # An attached dataset: its rows in the order the local engine gives (see calsim.distributed).
        from ..simulation.ledger import ledger_order

        out = db.sql(f"SELECT * EXCLUDE (seq) FROM {identifier(table)}")
        return ledger_order(out.select(LEDGER_SCHEMA.names()).cast(LEDGER_SCHEMA))
    out = db.sql(f"SELECT * EXCLUDE (seq) FROM {identifier(table)} ORDER BY seq")
    return out.select(LEDGER_SCHEMA.names()).cast(LEDGER_SCHEMA)


def ledger_rows(db: Connection, name: str) -> pl.DataFrame:
    """What :func:`.reconcile.reconcile` compares a history with: the occurrences of ``name`` that have an instant."""
    db.known([name])
    return db.sql("""SELECT schedule_id, revision, nominal_local, fold, due_utc, started_utc, state, reason
                     FROM occurrences WHERE scenario = $1 AND due_utc IS NOT NULL""", [name])


#: compare()'s worker-level columns: :meth:`calsim.Ledger.summary`'s own.
WORKER_COMPARED = ("duplicate_effects", "rate_wait_max")


def _worker_level(db: Connection, ins: str, names: list[str]) -> pl.DataFrame:
    """Per scenario of ``names`` (``ins``: their filter), :data:`WORKER_COMPARED` as ``Ledger.summary`` has them.

    Defined once: the aggregations are :func:`calsim.simulation.views.worker_level_counts`,
    run in polars on the rows SQL hands over, those with an ``effects`` or a
    ``rate_wait_s`` (a row null in both adds to no sum or maximum). A ledger
    without worker-level features hands over none: its scan reads two
    all-null columns. A scenario without such rows is absent (0 and null).
    """
    rows = db.sql(f"SELECT scenario, effects, rate_wait_s FROM occurrences WHERE {ins} "
                  "AND (effects IS NOT NULL OR rate_wait_s IS NOT NULL)", names)
    aggs = [e for e in worker_level_counts() if e.meta.output_name() in WORKER_COMPARED]
    return rows.group_by("scenario").agg(aggs).select("scenario", *WORKER_COMPARED)


def compare(db: Connection, names: list[str]) -> pl.DataFrame:
    """One row per scenario of ``names``, in that order (the columns: :meth:`calsim.LedgerStore.compare`)."""
    if not names:
        raise InputError("names: expected at least one scenario name")
    db.known(names)
    # ``scenario IN ($1, ...)`` rather than list_contains: an IN list of
    # constants reaches the scan, which skips other scenarios' row groups.
    ins = "scenario IN (" + ", ".join(f"${i + 1}" for i in range(len(names))) + ")"
    # One grouped scan (enums hash fast), pivoted in polars.
    groups = db.sql(f"""
        SELECT scenario, kind::VARCHAR AS kind, state::VARCHAR AS state, reason::VARCHAR AS reason,
               count(*) AS n, sum(cost) AS cost,
               count(lateness_s) FILTER (WHERE started_utc IS NOT NULL) AS started,
               max(lateness_s) FILTER (WHERE started_utc IS NOT NULL) AS lateness_max
        FROM occurrences WHERE {ins} GROUP BY ALL""", names)
    order = pl.DataFrame({"scenario": names})
    by = lambda col, value: pl.col("n").filter(pl.col(col) == value).sum()  # noqa: E731
    base = groups.group_by("scenario").agg(
        by("kind", "scheduled").alias("occurrences"), by("kind", "manual").alias("manual"),
        *(by("state", st).alias(st) for st in LEDGER_STATES),
        *(by("reason", r).alias("reason_" + r) for r in LEDGER_REASONS),
        pl.col("started").sum().alias("_n"), pl.col("lateness_max").max(), pl.col("cost").sum())
    base = order.join(base, on="scenario", how="left")
    # Percentiles by nearest rank, as polars' default (Ledger.summary): the
    # value at index k = round((n - 1) q). DuckDB's quantile_disc picks index
    # ceil(n q') - 1, so q' = (k + 0.5) / n selects index k exactly; q' depends
    # on n, so each scenario gets its own (filtered) aggregate in one scan.
    aggs, params = [], list(names)
    for i, (scen, n) in enumerate(base.select("scenario", "_n").iter_rows()):
        for label, q in (("p50", 0.5), ("p95", 0.95)):
            qq = (int((n - 1) * q + 0.5) + 0.5) / n if n else 0.5
            aggs.append(f"quantile_disc(lateness_s, {literal(qq)}) FILTER (WHERE scenario = ${len(params) + 1}) "
                        f"AS {identifier(f'{label}_{i}')}")
            params.append(scen)
    row = db.sql(f"""SELECT {", ".join(aggs)} FROM occurrences
                     WHERE {ins} AND started_utc IS NOT NULL""", params).row(0)
    base = base.with_columns(pl.Series("lateness_p50", row[0::2], pl.Float64),
                             pl.Series("lateness_p95", row[1::2], pl.Float64)).drop("_n")
    tables = {s: checked_table(t) for s, t in db.sql("SELECT scenario, table_name FROM occurrence_tables").iter_rows()}
    # On each scenario's own table (its ENUM ids join as integers); a gap in microseconds, exact.
    gaps = pl.concat([
        db.sql("WITH g AS (" + gaps_sql(tables[n]) + ")\n"
               "SELECT CAST(scenario AS VARCHAR) AS scenario, "
               "CAST(max(epoch_us(to_utc) - epoch_us(from_utc)) AS BIGINT) AS longest_gap, "
               "CAST(max(missed) AS BIGINT) AS most_missed, CAST(max(late) AS BIGINT) AS most_late "
               "FROM g GROUP BY scenario")
        for n in dict.fromkeys(names)], how="vertical_relaxed")
    out = base.join(gaps, on="scenario", how="left").join(_worker_level(db, ins, names), on="scenario", how="left")
    counts = ["occurrences", "manual", *LEDGER_STATES, *("reason_" + r for r in LEDGER_REASONS)]
    return out.select(
        "scenario", pl.col(counts).fill_null(0).cast(pl.Int64),
        # Seconds to Durations as Ledger.summary() makes them, so the two are equal.
        *(seconds_to_duration(pl.col(c).cast(pl.Float64)).alias(c)
          for c in ("lateness_p50", "lateness_p95", "lateness_max")),
        pl.col("cost").fill_null(0.0).cast(pl.Float64),
        pl.col("longest_gap").cast(pl.Int64).cast(pl.Duration("us")),
        pl.col("most_missed", "most_late", "duplicate_effects").fill_null(0).cast(pl.Int64),
        pl.col("rate_wait_max").cast(pl.Duration("us")))


def tzdiff(db: Connection, name: str) -> pl.DataFrame:
    """The tz diff frame stored under ``name``."""
    out = db.sql("SELECT * FROM tz_diffs WHERE name = $1 ORDER BY seq", [name])
    if not out.height:
        raise UnknownScenarioError(f"name: no tz diff {shown_name(name)} in {db.shown}")
    return out.select(TZDIFF_SCHEMA.names()).cast(TZDIFF_SCHEMA)


# What each exported table is ordered by (a file's row order is part of what it says).
_EXPORT_ORDER = {"scenarios": ("name",), "schedules": ("scenario", "schedule_id", "revision"),
                 "occurrences": ("scenario", "seq"), "tz_diffs": ("name", "seq")}


def export_parquet(db: Connection, directory: str | os.PathLike[str]) -> list[Path]:
    """Write every table to ``<directory>/<table>.parquet``, each atomically; returns the paths."""
    import duckdb

    d = Path(directory)
    try:
        d.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise InputError(f"directory: cannot create {show_path(d)}: {os_error_cause(exc)}") from None
    targets = [(table, d / f"{table}.parquet") for table in _EXPORT_ORDER]
    for _, p in targets:  # refuse a bad target before writing any file
        check_writable(p, "directory")
    for table, p in targets:
        order = ", ".join(identifier(c) for c in _EXPORT_ORDER[table])

        def copy(tmp: str, table: str = table, order: str = order) -> None:
            db.con.execute(f"COPY (SELECT * FROM {identifier(table)} ORDER BY {order}) "
                           f"TO {literal(tmp)} (FORMAT parquet)")

        try:
            write_atomically(p, copy, "directory")
        except duckdb.Error as exc:
            raise StoreError(f"directory: cannot write {show_path(p)}: {cause(exc)}") from None
    return [p for _, p in targets]
