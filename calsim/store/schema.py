"""The store's SQL text: column types, the tables of a new store (layout version 1) and the views' queries.

A new store is made with :data:`DDL_V1` and brought to the current layout by
the same steps as an old file (:mod:`.migrations`). What a store holds:

``calsim_meta``   ``key``/``value``; ``schema_version`` is the store's layout version.
``scenarios``     one row per written ledger: ``name``, ``created``, ``horizon_start``,
                  ``horizon_end`` (from the scenario when given, else the ledger's
                  first and last ``due_utc``), ``release`` (the ``tzdata`` values),
                  ``parameters`` (JSON), ``calsim_version``, ``schema_version``,
                  ``rows``, ``digest`` (content hash used for idempotence).
``schedules``     one row per (scenario, schedule_id, revision): ``zone``, ``account``,
                  and when a scenario is known, ``rule`` text and ``policy`` JSON.
``occurrences``   a view: the ledger frame plus ``seq`` (row order), the
                  ``UNION ALL`` of one table per scenario (see :mod:`.tables`).
``occurrence_tables``  ``scenario`` -> ``table_name`` of that scenario's table (or,
                  for a Parquet dataset attached with :meth:`LedgerStore.attach`,
                  of the view that reads its files).
``tz_diffs``      :func:`calsim.tzdiff` frames by name (:meth:`LedgerStore.write_tzdiff`).

Views: ``state_counts``, ``observation_gaps`` (as :meth:`Ledger.gaps`, :func:`gaps_sql`),
``daily_cost`` (as :meth:`Ledger.daily_cost`), ``lateness`` (per scenario).

Instants are ``TIMESTAMPTZ``, nominal times ``TIMESTAMP``; ``kind``/``state``/``reason``
are DuckDB ENUMs (``calsim_kind``, ``calsim_state``, ``calsim_reason``). The ledger's
worker-level columns (:data:`WORKER_COLUMNS`, layout version 5) are null in the rows of
ledgers without worker-level features and in every row stored before version 5.

>>> sql_type("due_utc", UTC), sql_type("reason", pl.String), enum_sql(["a", "b'c"])
('TIMESTAMPTZ', 'calsim_reason', "ENUM ('a', 'b''c')")
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

import polars as pl

from ..simulation.ledger_schema import (BY_DESIGN_REASONS, KIND, LEDGER_REASONS, LEDGER_SCHEMA, LEDGER_STATES, UTC,
                                        WORKER_COLUMNS)
from ..tzchanges import TZDIFF_SCHEMA
from .sql import identifier, literals

__all__ = ["KEY", "UTC", "WORKER_COLUMNS", "DDL_V1", "OCCURRENCE_TABLES_DDL", "sql_type", "columns_sql", "enum_sql",
           "gaps_sql", "gaps_sql_v1"]

KEY = ("scenario", "schedule_id", "revision", "nominal_local", "fold", "kind")
#: The ledger columns layout version 5 added (worker-level simulation, issue 19): the tables, views
#: and attached Parquet files of older layouts lack them, and read them as null. Every read and
#: write names columns, so a column added to a table (last) need not sit where the frame has it.

_SQL_TYPES = {
    pl.String: "VARCHAR", pl.Int64: "BIGINT", pl.Int32: "INTEGER", pl.Int8: "TINYINT", pl.Float64: "DOUBLE",
}


def enum_sql(values: Iterable[str]) -> str:
    """An ``ENUM (...)`` type of ``values``, each a quoted literal."""
    return "ENUM (" + literals(values) + ")"


def sql_type(name: str, dtype: pl.DataType) -> str:
    """The DuckDB type of ledger column ``name`` (SQL text: a type, never a value)."""
    if name == "kind":
        return "calsim_kind"
    if name == "state":
        return "calsim_state"
    if name == "reason":
        return "calsim_reason"
    if dtype == UTC:
        return "TIMESTAMPTZ"
    if dtype == pl.Datetime("us"):
        return "TIMESTAMP"
    if dtype == pl.List(pl.String):
        return "VARCHAR[]"
    return _SQL_TYPES[dtype.base_type()]


def columns_sql(schema: pl.Schema, not_null: Iterable[str], types: Mapping[str, str] | None = None) -> str:
    """Column definitions of ``schema`` (``types`` overrides a column's type), ``not_null`` ones NOT NULL."""
    types, not_null = dict(types or {}), set(not_null)
    return ",\n  ".join(
        f"{identifier(c)} {types.get(c) or sql_type(c, t)}" + (" NOT NULL" if c in not_null else "")
        for c, t in schema.items()
    )


# Reasons of occurrences never meant to run: they open no gap (calsim.simulation.views.gaps).
_BY_DESIGN = literals(BY_DESIGN_REASONS)

# observation_gaps as schema versions 1 to 3 defined it (missed occurrences only, between done
# runs): kept as it was because ``DDL_V1`` is version 1 (a new store is created at version 1
# and migrated, and the migration tests build version-1 files with it); version 4 replaces it.
_GAPS_V1 = f"""WITH f AS (
  SELECT scenario, schedule_id, revision, nominal_local, fold, due_utc, started_utc, state = 'done' AS done,
         coalesce(started_utc, due_utc) AS happened
  FROM {{source}}
  WHERE kind = 'scheduled' AND (reason IS NULL OR reason NOT IN ({_BY_DESIGN}))
), span AS (
  SELECT scenario, schedule_id, min(happened) AS lo, max(happened) AS hi FROM f WHERE NOT done GROUP BY ALL
), lim AS (
  SELECT scenario, min(lo) - INTERVAL 35 DAY AS lo, max(hi) + INTERVAL 35 DAY AS hi FROM span GROUP BY scenario
), near AS (
  SELECT f.scenario, f.schedule_id, f.happened FROM f JOIN lim ON f.scenario = lim.scenario
  WHERE f.done AND f.happened BETWEEN lim.lo AND lim.hi
), bounds AS (
  SELECT s.scenario, s.schedule_id,
         coalesce(max(n.happened) FILTER (WHERE n.happened < s.lo), '-infinity'::TIMESTAMPTZ) AS lo,
         coalesce(min(n.happened) FILTER (WHERE n.happened > s.hi), 'infinity'::TIMESTAMPTZ) AS hi
  FROM span s LEFT JOIN near n ON n.scenario = s.scenario AND n.schedule_id = s.schedule_id
  GROUP BY ALL
), w AS (
  SELECT f.*, sum(CASE WHEN f.done THEN 1 ELSE 0 END) OVER (
           PARTITION BY f.scenario, f.schedule_id
           ORDER BY f.happened NULLS FIRST, f.due_utc NULLS FIRST, f.nominal_local, f.fold, f.revision
           ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW) AS run_id
  FROM f JOIN bounds b ON f.scenario = b.scenario AND f.schedule_id = b.schedule_id
  WHERE f.happened BETWEEN b.lo AND b.hi
), missing AS (
  SELECT scenario, schedule_id, run_id, count(*) AS missed, min(nominal_local) AS first_missed
  FROM w WHERE NOT done GROUP BY ALL
), runs AS (SELECT scenario, schedule_id, run_id, started_utc FROM w WHERE done)
SELECT m.scenario, m.schedule_id, a.started_utc AS from_utc, b.started_utc AS to_utc, m.missed, m.first_missed,
       epoch(b.started_utc) - epoch(a.started_utc) AS gap_s
FROM missing m
LEFT JOIN runs a ON a.scenario = m.scenario AND a.schedule_id = m.schedule_id AND a.run_id = m.run_id
LEFT JOIN runs b ON b.scenario = m.scenario AND b.schedule_id = m.schedule_id AND b.run_id = m.run_id + 1"""


def gaps_sql_v1(source: str) -> str:
    """``observation_gaps`` of layout versions 1 to 3 over the table or view ``source``."""
    return _GAPS_V1.format(source=identifier(source))


# ``observation_gaps`` (version 4): :func:`calsim.simulation.views.gaps`, row for row, with its
# durations as seconds (``gap_s``, ``catchup_lateness_s``; polars cannot read a DuckDB INTERVAL).
# ``source`` is ``occurrences`` for the view; compare() runs it on each scenario's own table,
# whose ENUM ``schedule_id`` joins as integers.
#
# Exact, and fast because it never orders a whole ledger: a window over the 10.8M rows of a
# fleet-year takes seconds, where most rows are on time and only a few schedules, over a few
# days, matter (measured through the store on the benchmark's 10.85M-row ledgers: 0.19 s with
# a 3-day outage, 0.08 s without one; the version-3 view took 0.66 s and 0.24 s, and saw no
# late run). Step by step:
#
# * ``cand``: an occurrence can be not on time only if it was never done or started after its
#   due instant (started at or before it, it started before the next one was due): one scan,
#   the cheap test first, the meant-to-run test (``_MEANT``) only on what passes it.
# * ``nxt``/``bad``: the next distinct due instant (views.classified) is only needed for those,
#   and is looked for only between a schedule's first candidate's due instant and its last
#   one's start: a next one due later cannot make a run late. ``bad`` is the ``late`` and
#   ``never`` ones.
# * ``near``/``mid``/``bounds``: a gap runs from the last done-run start at or before an
#   occurrence to the first one after it, so per schedule only the starts between the last one
#   at or before its first bad occurrence and the first one after its last matter. Those two
#   are looked for within 2 days (most schedules run daily or more often), then within 35 days
#   for the schedules still without them (monthly ones): one found in a window is the nearest
#   anywhere, and one not found is taken as infinitely far, which reads more starts (a schedule
#   that never ran before its outage) but never fewer. The windows reach the scans as bounds,
#   so DuckDB skips the row groups outside them (a ledger is written in time order).
# * ``w``: those starts and the bad occurrences in time order (at one instant, starts first: an
#   occurrence due as a run starts lies after it), each occurrence between the last start
#   before it and the first after; grouped by that pair.
_MEANT = f"kind = 'scheduled' AND due_utc IS NOT NULL AND (reason IS NULL OR reason NOT IN ({_BY_DESIGN}))"


def _edges_sql(name: str, window: str, todo: str, comment: str) -> str:
    """CTE ``name``: per schedule of ``todo``, the last done-run start at or before its first bad occurrence
    (``before``) and the first after its last (``after``), among the starts ``window`` allows (null: none there)."""
    return f"""), {name} AS MATERIALIZED ({comment}
  SELECT b.scenario, b.schedule_id, max(f.started_utc) FILTER (WHERE f.started_utc <= b.lo) AS before,
         min(f.started_utc) FILTER (WHERE f.started_utc > b.hi) AS after
  FROM f JOIN {todo} b ON f.scenario = b.scenario AND f.schedule_id = b.schedule_id
  WHERE f.done{window}
  GROUP BY ALL
"""


def _found(*names: str) -> str:
    """``bspan`` less the schedules whose two edges one of ``names`` found."""
    return "(SELECT b.* FROM bspan b" + "".join(
        f" ANTI JOIN {n} ON {n}.scenario = b.scenario AND {n}.schedule_id = b.schedule_id"
        f" AND {n}.before IS NOT NULL AND {n}.after IS NOT NULL" for n in names) + ")"


_GAPS = f"""WITH f AS NOT MATERIALIZED (  -- the occurrences meant to run (each use reads only what it needs)
  SELECT scenario, schedule_id, nominal_local, due_utc, started_utc, lateness_s, state = 'done' AS done
  FROM {{source}}
  WHERE {_MEANT}
), cand AS MATERIALIZED (  -- those that can be not on time: never done, or started after their due instant
  SELECT scenario, schedule_id, nominal_local, due_utc, started_utc, lateness_s, state = 'done' AS done
  FROM {{source}}
  WHERE CASE WHEN state <> 'done' OR started_utc > due_utc THEN {_MEANT} ELSE FALSE END
), cspan AS (        -- per schedule, the stretch whose due instants can decide them
  SELECT scenario, schedule_id, min(due_utc) AS lo, max(coalesce(started_utc, due_utc)) AS hi
  FROM cand GROUP BY ALL
), nxt AS (          -- there, each distinct due instant with the next one
  SELECT scenario, schedule_id, due_utc,
         lead(due_utc) OVER (PARTITION BY scenario, schedule_id ORDER BY due_utc) AS next_due
  FROM (SELECT DISTINCT f.scenario, f.schedule_id, f.due_utc
        FROM f JOIN cspan s ON f.scenario = s.scenario AND f.schedule_id = s.schedule_id
        WHERE f.due_utc BETWEEN s.lo AND s.hi)
), bad AS MATERIALIZED (  -- not on time: never done (missed), or done once the next one was due (late)
  SELECT c.scenario, c.schedule_id, c.nominal_local, c.due_utc, c.lateness_s, c.done AS late
  FROM cand c JOIN nxt n ON c.scenario = n.scenario AND c.schedule_id = n.schedule_id AND c.due_utc = n.due_utc
  WHERE NOT c.done OR c.started_utc >= n.next_due
), bspan AS MATERIALIZED (
  SELECT scenario, schedule_id, min(due_utc) AS lo, max(due_utc) AS hi FROM bad GROUP BY ALL
{_edges_sql("near", " AND f.started_utc BETWEEN b.lo - INTERVAL 2 DAY AND b.hi + INTERVAL 2 DAY", "bspan",
           "  -- the starts bounding them, within 2 days")
}{_edges_sql("mid", " AND f.started_utc BETWEEN b.lo - INTERVAL 35 DAY AND b.hi + INTERVAL 35 DAY", _found("near"),
             "  -- within 35 days, where not found")
}), bounds AS (       -- the starts that can bound a gap lie between these (infinite: not found near)
  SELECT b.scenario, b.schedule_id, coalesce(n.before, m.before, '-infinity'::TIMESTAMPTZ) AS lo,
         coalesce(n.after, m.after, 'infinity'::TIMESTAMPTZ) AS hi
  FROM bspan b LEFT JOIN near n ON n.scenario = b.scenario AND n.schedule_id = b.schedule_id
  LEFT JOIN mid m ON m.scenario = b.scenario AND m.schedule_id = b.schedule_id
), ev AS (           -- those starts, and the occurrences not on time
  SELECT f.scenario, f.schedule_id, f.started_utc AS happened, TRUE AS run, NULL::TIMESTAMP AS nominal_local,
         NULL::DOUBLE AS lateness_s, NULL::BOOLEAN AS late
  FROM f JOIN bounds b ON f.scenario = b.scenario AND f.schedule_id = b.schedule_id
  WHERE f.done AND f.started_utc BETWEEN b.lo AND b.hi
  UNION ALL
  SELECT scenario, schedule_id, due_utc, FALSE, nominal_local, lateness_s, late FROM bad
), w AS (            -- each occurrence between the last start at or before it and the first after it
  SELECT *,
    max(CASE WHEN run THEN happened END) OVER (PARTITION BY scenario, schedule_id ORDER BY happened, run DESC
                                               ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW) AS from_utc,
    min(CASE WHEN run THEN happened END) OVER (PARTITION BY scenario, schedule_id ORDER BY happened, run DESC
                                               ROWS BETWEEN CURRENT ROW AND UNBOUNDED FOLLOWING) AS to_utc
  FROM ev
)
SELECT scenario, schedule_id, from_utc, to_utc, (epoch_us(to_utc) - epoch_us(from_utc)) / 1e6 AS gap_s,
       count(*) FILTER (WHERE NOT late) AS missed, count(*) FILTER (WHERE late) AS late,
       min({{{{'d': happened, 'n': nominal_local}}}}).n AS first_missed_local, min(happened) AS first_missed_utc,
       round(max(lateness_s) FILTER (WHERE late) * 1e6) / 1e6 AS catchup_lateness_s
FROM w WHERE NOT run GROUP BY ALL"""


def gaps_sql(source: str) -> str:
    """``observation_gaps`` (layout 4) over the table or view ``source``, as :func:`calsim.simulation.views.gaps`."""
    return _GAPS.format(source=identifier(source))


#: Layout 2's table of each scenario's rows: ``scenario`` -> ``table_name`` (:mod:`.tables`).
OCCURRENCE_TABLES_DDL = ("CREATE TABLE occurrence_tables (scenario VARCHAR PRIMARY KEY, "
                         "table_name VARCHAR NOT NULL UNIQUE)")

DDL_V1 = [
    "CREATE TABLE calsim_meta (key VARCHAR PRIMARY KEY, value VARCHAR)",
    "CREATE TYPE calsim_kind AS " + enum_sql(KIND.categories.to_list()),
    "CREATE TYPE calsim_state AS " + enum_sql(LEDGER_STATES),
    "CREATE TYPE calsim_reason AS " + enum_sql(LEDGER_REASONS),
    """CREATE TABLE scenarios (
  name VARCHAR PRIMARY KEY, created TIMESTAMPTZ NOT NULL, horizon_start TIMESTAMPTZ, horizon_end TIMESTAMPTZ,
  release VARCHAR, parameters JSON, calsim_version VARCHAR, schema_version INTEGER NOT NULL,
  rows BIGINT NOT NULL, digest VARCHAR NOT NULL)""",
    """CREATE TABLE schedules (
  scenario VARCHAR NOT NULL, schedule_id VARCHAR NOT NULL, revision BIGINT NOT NULL, zone VARCHAR,
  account VARCHAR, rule VARCHAR, policy JSON, PRIMARY KEY (scenario, schedule_id, revision))""",
    "CREATE TABLE occurrences (\n  seq BIGINT NOT NULL,\n  "
    + columns_sql(LEDGER_SCHEMA, KEY)
    + ",\n  PRIMARY KEY (" + ", ".join(KEY) + "))",
    "CREATE TABLE tz_diffs (\n  name VARCHAR NOT NULL,\n  seq BIGINT NOT NULL,\n  "
    + columns_sql(TZDIFF_SCHEMA, ())
    + ",\n  PRIMARY KEY (name, seq))",
    """CREATE VIEW state_counts AS
SELECT scenario, kind, state, reason, count(*) AS rows
FROM occurrences GROUP BY ALL""",
    "CREATE VIEW observation_gaps AS\n" + gaps_sql_v1("occurrences"),
    """CREATE VIEW daily_cost AS
SELECT o.scenario, CAST(timezone('UTC', o.started_utc) AS DATE) AS day, s.account,
       sum(o.cost) AS cost, count(*) AS runs
FROM occurrences o LEFT JOIN schedules s
  ON s.scenario = o.scenario AND s.schedule_id = o.schedule_id AND s.revision = o.revision
WHERE o.started_utc IS NOT NULL GROUP BY ALL""",
    """CREATE VIEW lateness AS
SELECT scenario, count(*) AS runs, quantile_disc(lateness_s, 0.5) AS lateness_p50_s,
       quantile_disc(lateness_s, 0.95) AS lateness_p95_s, max(lateness_s) AS lateness_max_s,
       avg(lateness_s) AS lateness_mean_s
FROM occurrences WHERE started_utc IS NOT NULL GROUP BY scenario""",
]
