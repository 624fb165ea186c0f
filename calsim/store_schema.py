"""The ledger store's schema: SQL quoting and types, the tables and views, each scenario's keyed table, and the
migrations from older files (used by :mod:`calsim.store`).

DuckDB cannot alter an ENUM type nor a column an index, a view or a CHECK
depends on, which is why the migrations drop and restore those around a type
change (and a change of a key column's type would copy the table).

Layout (schema version 2)
-------------------------
Each scenario's rows live in their own table ``occ_<n>`` whose
``schedule_id`` is a per-scenario ENUM type (``occ_<n>_schedule_id``, the
scenario's schedule ids, sorted). The key ``(scenario, schedule_id, revision,
nominal_local, fold, kind)`` holds in every table in three parts:

* ``CHECK (scenario = '<name>')`` pins every row of the table to its
  scenario, and ``occurrence_tables`` gives a scenario one table.
* The write checks the rest of the key before it publishes anything
  (:func:`calsim.store_records._repeats_a_key`: the key packed into one
  int64 per row, sorted, neighbours compared, on the thread that computes
  the digest while DuckDB inserts the rows). A repeat refuses the write with
  :class:`DuplicateKeyError`; the filled table, never published, is dropped.
* The table is filled once, by that write. A second CHECK,
  ``getvariable('calsim_fill') IS NOT DISTINCT FROM 'occ_<n>/<nonce>'``
  (and the key columns, so that DuckDB checks it on an UPDATE of them),
  lets rows in only while :func:`_fill_scenario_table` runs its INSERT
  with that session variable set. Any other INSERT into the table, or
  UPDATE of its key, calsim's or a user's, is refused by the database, so no
  row can come to repeat a checked key (a DELETE cannot make one). DuckDB
  checks no constraint when it replays its log
  (``WriteAheadLogDeserializer::ReplayInsert``, duckdb/duckdb
  src/storage/wal_replay.cpp), so recovery is unaffected. ``getvariable``
  needs DuckDB 1.1 or later.

Why the database no longer checks the key itself with a UNIQUE index, as
DESIGN.md §6 had it and earlier versions did: measured on a 10.85M-row ledger
(DuckDB 2.0.1, polars 2.1, CPU seconds of this process), a raw DuckDB load of
the same Arrow table takes ~6.9 s and the store's insert the same, the
digest ~1.4 s. The cheapest UNIQUE index DuckDB builds on the filled table
took ~3.6 s (one packed BIGINT key computed in SQL; 2.7 s on a stored key
column, 1.5 s even for sorted, dense integers), where the write's check
takes ~0.45 s: with the index, a write took 1.84-2.03x the raw load (the
target is 1.6x), without it 1.41x (``benchmarks/store_benchmark.py``, wall
and CPU alike), and the file is half the size. What DuckDB does with indexes:

* A PRIMARY KEY declared on the table makes every INSERT probe and grow the
  ART row by row, and merges the transaction-local ART at commit: ~15 s.
* CREATE INDEX on a filled table sorts the keys (one fixed-width column;
  compound and VARCHAR keys are inserted key by key, twice the cost), builds
  an ART per 2048 keys and merges them into one
  (``PhysicalCreateARTIndex::SinkSorted``, duckdb/duckdb
  src/execution/operator/schema/physical_create_art_index.cpp).
* Tables written by earlier versions keep their UNIQUE index (and the range
  CHECKs its packed key needed): they read the same and stay checked.

Other choices, measured the same way:

* An ENUM ``schedule_id`` costs no more to insert than a VARCHAR (the
  string-to-code cast replaces the string's compression) and groups and joins
  as an integer; ``scenario``, constant per table, compresses to nothing.
* The ``occurrences`` view casts ``schedule_id`` back to VARCHAR (the
  ENUMs of two scenarios differ), and DuckDB pushes ``scenario = ...``
  filters into each branch, where the constant ``scenario`` column's zone
  map skips the other scenarios' tables.
"""

from __future__ import annotations

import contextlib
import re
import secrets
from typing import Any, Callable

import polars as pl

from .errors import SchemaVersionError, StoreError
from .simulation.ledger import LEDGER_REASONS, LEDGER_SCHEMA, LEDGER_STATES
from .tzchanges import TZDIFF_SCHEMA

__all__ = ["KEY", "MIGRATIONS"]

KEY = ("scenario", "schedule_id", "revision", "nominal_local", "fold", "kind")
UTC = pl.Datetime("us", "UTC")


def _q(name: str) -> str:
    """Quote one SQL identifier (the only place identifiers are quoted)."""
    return '"' + name.replace('"', '""') + '"'


_TABLE = re.compile(r"occ_[0-9]{1,18}")


def _checked_table(name: object) -> str:
    """A scenario table's name read from ``occurrence_tables``, refused unless calsim could have made it.

    The name is put into SQL unquoted (it is also the prefix of its ENUM type and
    index), so a file that is not calsim's own cannot smuggle SQL in through it.

    >>> _checked_table("occ_12")
    'occ_12'
    """
    if not isinstance(name, str) or not _TABLE.fullmatch(name):
        shown = repr(name[:40]) if isinstance(name, str) else type(name).__name__
        raise StoreError(f"occurrence_tables: table name {shown} is not one calsim makes (occ_<n>); "
                         "the file is not a calsim store or was changed by hand")
    return name


def _enum_sql(values: tuple[str, ...]) -> str:
    return "ENUM (" + ", ".join("'" + v + "'" for v in values) + ")"


_SQL_TYPES = {
    pl.String: "VARCHAR", pl.Int64: "BIGINT", pl.Int32: "INTEGER", pl.Int8: "TINYINT", pl.Float64: "DOUBLE",
}


def _sql_type(name: str, dtype: pl.DataType) -> str:
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


def _columns_sql(schema: pl.Schema, not_null: tuple[str, ...]) -> str:
    return ",\n  ".join(
        f"{_q(c)} {_sql_type(c, t)}" + (" NOT NULL" if c in not_null else "") for c, t in schema.items()
    )


# observation_gaps as schema versions 1 to 3 defined it (missed occurrences only, between done
# runs): kept as it was because ``_DDL_V1`` is version 1 (a new store is created at version 1
# and migrated, and the migration tests build version-1 files with it); version 4 replaces it.
_GAPS_SQL_V1 = """WITH f AS (
  SELECT scenario, schedule_id, revision, nominal_local, fold, due_utc, started_utc, state = 'done' AS done,
         coalesce(started_utc, due_utc) AS happened
  FROM {source}
  WHERE kind = 'scheduled' AND (reason IS NULL OR reason NOT IN ('dst_gap', 'merged', 'calendar')){where}
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

# ``observation_gaps`` (version 4): :func:`calsim.simulation.views.gaps`, row for row, with its
# durations as seconds (``gap_s``, ``catchup_lateness_s``; polars cannot read a DuckDB INTERVAL).
# ``{source}`` is ``occurrences`` for the view; compare() runs it on each scenario's own table,
# whose ENUM ``schedule_id`` joins as integers; ``{where}`` filters rows before anything else.
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
_MEANT = "kind = 'scheduled' AND due_utc IS NOT NULL AND (reason IS NULL OR reason NOT IN ('dst_gap', 'merged', 'calendar'))"


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


_GAPS_SQL = f"""WITH f AS NOT MATERIALIZED (  -- the occurrences meant to run (each use reads only what it needs)
  SELECT scenario, schedule_id, nominal_local, due_utc, started_utc, lateness_s, state = 'done' AS done
  FROM {{source}}
  WHERE {_MEANT}{{where}}
), cand AS MATERIALIZED (  -- those that can be not on time: never done, or started after their due instant
  SELECT scenario, schedule_id, nominal_local, due_utc, started_utc, lateness_s, state = 'done' AS done
  FROM {{source}}
  WHERE CASE WHEN state <> 'done' OR started_utc > due_utc THEN {_MEANT} ELSE FALSE END{{where}}
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

_DDL_V1 = [
    "CREATE TABLE calsim_meta (key VARCHAR PRIMARY KEY, value VARCHAR)",
    "CREATE TYPE calsim_kind AS " + _enum_sql(("scheduled", "manual")),
    "CREATE TYPE calsim_state AS " + _enum_sql(LEDGER_STATES),
    "CREATE TYPE calsim_reason AS " + _enum_sql(LEDGER_REASONS),
    """CREATE TABLE scenarios (
  name VARCHAR PRIMARY KEY, created TIMESTAMPTZ NOT NULL, horizon_start TIMESTAMPTZ, horizon_end TIMESTAMPTZ,
  release VARCHAR, parameters JSON, calsim_version VARCHAR, schema_version INTEGER NOT NULL,
  rows BIGINT NOT NULL, digest VARCHAR NOT NULL)""",
    """CREATE TABLE schedules (
  scenario VARCHAR NOT NULL, schedule_id VARCHAR NOT NULL, revision BIGINT NOT NULL, zone VARCHAR,
  account VARCHAR, rule VARCHAR, policy JSON, PRIMARY KEY (scenario, schedule_id, revision))""",
    "CREATE TABLE occurrences (\n  seq BIGINT NOT NULL,\n  "
    + _columns_sql(LEDGER_SCHEMA, KEY)
    + ",\n  PRIMARY KEY (" + ", ".join(KEY) + "))",
    "CREATE TABLE tz_diffs (\n  name VARCHAR NOT NULL,\n  seq BIGINT NOT NULL,\n  "
    + _columns_sql(TZDIFF_SCHEMA, ())
    + ",\n  PRIMARY KEY (name, seq))",
    """CREATE VIEW state_counts AS
SELECT scenario, kind, state, reason, count(*) AS rows
FROM occurrences GROUP BY ALL""",
    "CREATE VIEW observation_gaps AS\n" + _GAPS_SQL_V1.format(where="", source="occurrences"),
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

_OCC_COLUMNS = ["seq", *LEDGER_SCHEMA.names()]
_BATCH_ROWS = 122_880  # DuckDB's row group size


def _literal(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def _next_table(con: Any) -> str:
    """A fresh ``occ_<n>`` name (orphans and attached views included, so none is reused)."""
    n = con.execute(
        "SELECT coalesce(max(CAST(substr(name, 5) AS BIGINT)), 0) + 1 FROM ("
        "SELECT table_name AS name FROM duckdb_tables() UNION ALL SELECT view_name FROM duckdb_views()) "
        "WHERE regexp_full_match(name, 'occ_[0-9]+')").fetchall()[0][0]
    return f"occ_{n}"


_FILL_VARIABLE = "calsim_fill"  # while a table is filled: its name and a nonce, which its CHECK asks for


def _gate_check(pass_: str) -> str:
    """The CHECK that lets rows into a table only while the session variable holds ``pass_``.

    It names the key columns so that DuckDB checks it on an UPDATE of them
    (a CHECK is checked on UPDATE only when the update touches its columns).
    """
    cols = " AND ".join(f"{_q(c)} IS NOT NULL" for c in KEY[1:])
    return f"getvariable('{_FILL_VARIABLE}') IS NOT DISTINCT FROM {_literal(pass_)} AND {cols}"


def _fill_scenario_table(con: Any, name: str, source: str, where: str = "") -> str:
    """Create one scenario's table (its ENUM of schedule ids, its CHECKs) and fill it from ``source``.

    The caller has checked the key of the rows (a write) or takes them from a
    table that enforced it (a migration); after this, the table takes no row.
    The pass is new for each table, so a variable left set by a failed fill
    (an aborted transaction refuses the RESET) opens no other table.
    """
    table = _next_table(con)
    enum = f"{table}_schedule_id"
    con.execute(f"CREATE TYPE {enum} AS ENUM (SELECT DISTINCT schedule_id FROM {source} {where} ORDER BY 1)")
    cols = _columns_sql(LEDGER_SCHEMA, KEY).replace('"schedule_id" VARCHAR', f'"schedule_id" {enum}', 1)
    pass_ = f"{table}/{secrets.token_hex(8)}"
    con.execute(f"CREATE TABLE {table} (\n  seq BIGINT NOT NULL,\n  {cols},\n  "
                f"CHECK (scenario = {_literal(name)}),\n  CHECK ({_gate_check(pass_)}))")
    names = ", ".join(_q(c) for c in _OCC_COLUMNS)
    con.execute(f"SET VARIABLE {_FILL_VARIABLE} = {_literal(pass_)}")
    try:
        con.execute(f"INSERT INTO {table} ({names}) SELECT {names} FROM {source} {where}")
    finally:
        with contextlib.suppress(Exception):  # the INSERT's own error is the one to report
            con.execute(f"RESET VARIABLE {_FILL_VARIABLE}")
    return table


def _create_scenario_table(con: Any, name: str, source: str, where: str = "") -> str:
    """Create and fill one scenario's table and make it ``name``'s, inside the caller's transaction (migrations)."""
    table = _fill_scenario_table(con, name, source, where)
    con.execute("INSERT INTO occurrence_tables VALUES (?, ?)", [name, table])
    return table


def _drop_orphans(con: Any) -> None:
    """Drop ``occ_<n>`` tables no scenario points to: what a write killed between its two steps leaves."""
    for (table,) in con.execute(
            "SELECT table_name FROM duckdb_tables() WHERE regexp_full_match(table_name, 'occ_[0-9]+') "
            "AND table_name NOT IN (SELECT table_name FROM occurrence_tables)").fetchall():
        con.execute(f"DROP TABLE {table}")
        con.execute(f"DROP TYPE IF EXISTS {table}_schedule_id")


def _drop_scenario_table(con: Any, name: str) -> None:
    row = con.execute("SELECT table_name FROM occurrence_tables WHERE scenario = ?", [name]).fetchone()
    if row:
        _checked_table(row[0])
        if con.execute("SELECT count(*) FROM duckdb_views() WHERE view_name = ?", [row[0]]).fetchone()[0]:
            con.execute(f"DROP VIEW {row[0]}")  # an attached Parquet dataset: the files stay
        else:
            con.execute(f"DROP TABLE {row[0]}")  # drops its index too
            con.execute(f"DROP TYPE {row[0]}_schedule_id")
        con.execute("DELETE FROM occurrence_tables WHERE scenario = ?", [name])


def _forget_scenario(con: Any, name: str) -> None:
    """Remove a stored scenario entirely (its rows, schedules and scenario row), for ``replace=True``."""
    _drop_scenario_table(con, name)
    for table, col in (("schedules", "scenario"), ("scenarios", "name")):
        con.execute(f"DELETE FROM {_q(table)} WHERE {_q(col)} = ?", [name])


def _refresh_occurrences_view(con: Any) -> None:
    """(Re)define ``occurrences`` as the UNION ALL of the scenario tables.

    The other views name ``occurrences`` and DuckDB binds a view's query
    when it is run, so they follow the new definition.
    """
    tables = [_checked_table(r[0])
              for r in con.execute("SELECT table_name FROM occurrence_tables ORDER BY scenario").fetchall()]
    if tables:
        cols = ", ".join("CAST(schedule_id AS VARCHAR) AS schedule_id" if c == "schedule_id" else _q(c)
                         for c in _OCC_COLUMNS)
        body = "\nUNION ALL\n".join(f"SELECT {cols} FROM {t}" for t in tables)
    else:
        types = {"seq": "BIGINT", **{c: _sql_type(c, t) for c, t in LEDGER_SCHEMA.items()}}
        body = "SELECT " + ", ".join(f"CAST(NULL AS {types[c]}) AS {_q(c)}" for c in _OCC_COLUMNS) + " WHERE false"
    con.execute("CREATE OR REPLACE VIEW occurrences AS\n" + body)


def _migrate_1_to_2(con: Any) -> None:
    """Version 1 kept every scenario in one ``occurrences`` table with a PRIMARY KEY; move each to its own table."""
    con.execute("CREATE TABLE occurrence_tables (scenario VARCHAR PRIMARY KEY, table_name VARCHAR NOT NULL UNIQUE)")
    con.execute("ALTER TABLE occurrences RENAME TO occurrences_v1")
    for (name,) in con.execute("SELECT DISTINCT scenario FROM occurrences_v1 ORDER BY 1").fetchall():
        _create_scenario_table(con, name, "occurrences_v1", f"WHERE scenario = {_literal(name)}")
    con.execute("DROP TABLE occurrences_v1")
    _refresh_occurrences_view(con)


def _migrate_2_to_3(con: Any) -> None:
    """Version 3 knows every reason of LEDGER_REASONS (``stuck`` was added).

    DuckDB cannot add a value to an ENUM type, nor alter a column that an
    index or a view depends on: the views and indexes are dropped, the reason
    columns go through VARCHAR while the type is made again, then the indexes
    and views come back as they were. A store created with every reason
    already (a new one) is left as it is.
    """
    have = [r[0] for r in con.execute("SELECT unnest(enum_range(NULL::calsim_reason))").fetchall()]
    if have == list(LEDGER_REASONS):
        return
    if have != list(LEDGER_REASONS[:len(have)]):
        raise SchemaVersionError(f"calsim_reason: unexpected values {have} (expected a prefix of {list(LEDGER_REASONS)})")
    views = con.execute("SELECT view_name, sql FROM duckdb_views() WHERE NOT internal ORDER BY view_oid").fetchall()
    tables = {r[0] for r in con.execute("SELECT table_name FROM duckdb_tables()").fetchall()}
    occ = [r[0] for r in con.execute("SELECT table_name FROM occurrence_tables ORDER BY scenario").fetchall()
           if r[0] in tables]
    indexes = con.execute("SELECT index_name, sql FROM duckdb_indexes() WHERE sql IS NOT NULL").fetchall()
    for name, _ in views:
        con.execute(f"DROP VIEW {_q(name)}")
    for name, _ in indexes:
        con.execute(f"DROP INDEX {_q(name)}")
    for table in occ:
        con.execute(f"ALTER TABLE {_q(table)} ALTER reason TYPE VARCHAR")
    con.execute("DROP TYPE calsim_reason")
    con.execute("CREATE TYPE calsim_reason AS " + _enum_sql(LEDGER_REASONS))
    for table in occ:
        con.execute(f"ALTER TABLE {_q(table)} ALTER reason TYPE calsim_reason")
    for _, sql in indexes:
        con.execute(sql)
    # Views are bound when made: attached scenarios' views first, then the
    # occurrences view over every scenario, then the views over it.
    attached = {r[0] for r in con.execute("SELECT table_name FROM occurrence_tables").fetchall()}
    rank = lambda name: 0 if name in attached else (1 if name == "occurrences" else 2)  # noqa: E731
    for _, sql in sorted(views, key=lambda v: rank(v[0])):
        con.execute(sql)


def _migrate_3_to_4(con: Any) -> None:
    """Version 4: ``observation_gaps`` follows :func:`calsim.simulation.views.gaps` (silences with their
    ``missed`` and ``late`` occurrences, ``gap_s``, ``catchup_lateness_s``); nothing else changes."""
    con.execute("CREATE OR REPLACE VIEW observation_gaps AS\n" + _GAPS_SQL.format(where="", source="occurrences"))


# Migration hook: MIGRATIONS[v] upgrades a version-v store to v + 1 inside
# one transaction. A new store is created at version 1 and migrated too.
MIGRATIONS: dict[int, Callable[[Any], None]] = {1: _migrate_1_to_2, 2: _migrate_2_to_3, 3: _migrate_3_to_4}
