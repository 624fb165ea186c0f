"""The ledger store's schema: SQL quoting and types, the tables and views, each scenario's keyed table, and the
migrations from older files (used by :mod:`calsim.store`).

DuckDB cannot alter an ENUM type nor a column an index or view depends on,
which is why the migrations drop and restore those around a type change.

Layout (schema version 2)
-------------------------
Each scenario's rows live in their own table ``occ_<n>`` whose
``schedule_id`` is a per-scenario ENUM type (``occ_<n>_schedule_id``, the
scenario's schedule ids, sorted). The key ``(scenario, schedule_id, revision,
nominal_local, fold, kind)`` is enforced by the database in two parts: a
``CHECK (scenario = '<name>')`` pins every row of the table to its scenario
(and ``occurrence_tables`` gives a scenario one table), and a UNIQUE index on
``(schedule_id, revision, nominal_local, fold, kind)`` packed into one
integer refuses a duplicate within it (``store_schema._packed_key``: the
fields' bits follow from the ledger's ranges, which CHECKs then hold every
row of the table to, so the integer is one-to-one with the key; a table whose
key does not pack keeps the index on the five columns). Why (measured on a
10.85M-row ledger, DuckDB 2.0.1, CPU seconds):

* A PRIMARY KEY declared on the table makes every INSERT probe and grow the
  ART row by row, and the transaction-local ART is merged into the table's
  at commit: ~15 s of CPU for the key alone on top of ~8 s for the insert.
  Presorting the rows by key did not change that (same CPU).
* The index is declared on a filled table instead, built once from all
  rows. A write is two transactions: the first creates and fills the
  scenario's table, which nothing points to yet; the second builds the
  UNIQUE index (on a committed table DuckDB builds it in parallel: ~4 s for
  10.85M rows, against ~5.5 s on one thread when the table was created in the
  same transaction) and publishes the scenario (its ``scenarios`` and
  ``schedules`` rows, ``occurrence_tables``, the ``occurrences`` view). A
  duplicate key fails the second transaction; the unpublished table is then
  dropped. A writer killed between the two leaves an orphan table that no
  scenario, view or query sees, dropped by the next write: the interrupted
  scenario is absent, never partial. Later writes to a table (there are none
  from calsim) are still checked by its index.
* ART keys made of VARCHARs cost about twice fixed-width ones (the key
  bytes of a string are built and compared byte by byte); an ENUM is stored
  as a small integer, so the ENUM key builds in ~5 s of CPU instead of
  ~15 s, and ``scenario`` (a VARCHAR, constant per table) is left to the CHECK.
  The ENUM is the database's own bijection between ids and codes, so the
  key the database enforces is still the schedule id itself.
* One packed column halves that (3.6 s against 7.8 s side by side, the
  insert itself ~7 s): DuckDB builds a one-column index from sorted keys
  where it inserts a compound key row by row, and with the day as the lowest
  field a periodic schedule's keys are consecutive integers, which the ART
  packs densely (the file is ~60% smaller too).
* The ``occurrences`` view casts ``schedule_id`` back to VARCHAR (the
  ENUMs of two scenarios differ), and DuckDB pushes ``scenario = ...``
  filters into each branch, where the constant ``scenario`` column's zone
  map skips the other scenarios' tables.
"""

from __future__ import annotations

import re
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


# Mirrors Ledger.gaps(): rows are ordered by when things ``happened`` (a
# run's start, a missed occurrence's due time); rows never meant to run
# (dst_gap, merged, calendar) open no gap. Speed: a window over every row of a fleet-year takes seconds,
# so the window only covers, per schedule, the span from the last done run
# before its first missed row to the first done run after its last one
# (an outage touches a few days, not the year). Those bounds are looked for
# within 35 days of the scenario's missed rows (``near``); a schedule with no
# done run there (monthly, or down for long) falls back to +-infinity, which
# is only slower, never wrong.
# ``{source}`` is ``occurrences`` for the view; compare() runs it on each
# scenario's own table, whose ENUM ``schedule_id`` joins as integers (the
# view's VARCHAR ids made the joins ~0.5 s slower on two 10.8M-row scenarios).
# ``{where}`` filters scenarios before the joins.
_GAPS_SQL = """WITH f AS (
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
    "CREATE VIEW observation_gaps AS\n" + _GAPS_SQL.format(where="", source="occurrences"),
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
_INDEX_COLUMNS = ", ".join(_q(c) for c in KEY[1:])  # scenario: enforced by the table's CHECK


def _literal(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def _next_table(con: Any) -> str:
    """A fresh ``occ_<n>`` name (orphans and attached views included, so none is reused)."""
    n = con.execute(
        "SELECT coalesce(max(CAST(substr(name, 5) AS BIGINT)), 0) + 1 FROM ("
        "SELECT table_name AS name FROM duckdb_tables() UNION ALL SELECT view_name FROM duckdb_views()) "
        "WHERE regexp_full_match(name, 'occ_[0-9]+')").fetchall()[0][0]
    return f"occ_{n}"


_MINUTE_US, _DAY_US = 60_000_000, 86_400_000_000


def _packed_key(ids: int, revision: tuple[int, int], nominal_us: tuple[int, int], fold: tuple[int, int],
                within_minute_us: tuple[int, int]) -> tuple[str, list[str]] | None:
    """A scenario table's key packed into one integer: ``(index expression, CHECKs)``, or None.

    ``ids`` is the size of the table's schedule_id ENUM; the pairs are the
    smallest and largest revision, ``nominal_local`` (epoch microseconds),
    fold and microseconds past the minute of its rows. ``nominal_local`` is
    split into days, minute of the day and microseconds past the minute, and
    the fields are packed most significant first: schedule_id, revision,
    kind, fold, microseconds past the minute, minute, day. Each takes the bits
    its range needs, and the CHECKs keep every row the table lets in inside
    those ranges, so the integer is one-to-one with the key and a UNIQUE
    index on it enforces the key.

    Why days last: a periodic schedule's keys are then consecutive integers
    (the same minute on consecutive days), which DuckDB's ART packs up to 256
    to a leaf node; and one column is indexed from sorted keys, where a
    compound index inserts key by key. Measured on a 10.85M-row ledger
    (DuckDB 2.0.1, CPU): 3.6 s against 7.8 s for the compound index and
    4.7 s for the same fields with the time in microseconds. BIGINT keys
    where the fields fit 63 bits (HUGEINT arithmetic costs about twice);
    None when they need more than 127.

    >>> expr, checks = _packed_key(3, (1, 1), (0, 2 * 86_400_000_000), (0, 1), (0, 0))
    >>> print(*expr.split(" + "), sep="\\n+ ")
    (CAST(enum_code(schedule_id) AS BIGINT) << 15)
    + (CAST(enum_code(kind) AS BIGINT) << 14)
    + (CAST(fold AS BIGINT) << 13)
    + (((CAST(epoch_us(nominal_local) AS BIGINT) - CAST(0 AS BIGINT)) // 60000000 % 1440) << 2)
    + ((CAST(epoch_us(nominal_local) AS BIGINT) - CAST(0 AS BIGINT)) // 86400000000)
    >>> checks[0], checks[-1]
    ('revision BETWEEN 1 AND 1', '(CAST(epoch_us(nominal_local) AS BIGINT) - CAST(0 AS BIGINT)) % 60000000 BETWEEN 0 AND 0')
    >>> _packed_key(2**32, (-2**63, 2**63 - 1), (0, 2**62), (0, 1), (0, 59_999_999)) is None
    True
    """
    t0 = nominal_us[0] - nominal_us[0] % _DAY_US  # the midnight before the first nominal time
    fields = [(0, ids - 1), revision, (0, 1), fold, within_minute_us, (0, 1439), (0, (nominal_us[1] - t0) // _DAY_US)]
    bits = [(hi - lo).bit_length() for lo, hi in fields]
    if sum(bits) > 127:
        return None
    # BIGINT when the fields and the microseconds since t0 fit it; both are signed, so the sign bit stays clear.
    typ = "BIGINT" if sum(bits) <= 63 and -2**63 <= t0 and nominal_us[1] - t0 < 2**63 else "HUGEINT"
    since = f"(CAST(epoch_us(nominal_local) AS {typ}) - CAST({t0} AS {typ}))"
    values = ["enum_code(schedule_id)", "revision", "enum_code(kind)", "fold",
              f"{since} % {_MINUTE_US}", f"{since} // {_MINUTE_US} % 1440", f"{since} // {_DAY_US}"]
    terms, shift = [], sum(bits)
    for value, (lo, _), width in zip(values, fields, bits):
        shift -= width
        if not width:  # one value (its CHECK pins it): nothing to tell apart
            continue
        term = f"({value})" if value.startswith("(") else f"CAST({value} AS {typ})"
        if lo:
            term = f"({term} - CAST({lo} AS {typ}))"
        terms.append(f"({term} << {shift})" if shift else term)
    # schedule_id and kind are ENUMs (a row holds one of their codes), the minute and day follow from the time.
    checks = [f"revision BETWEEN {revision[0]} AND {revision[1]}",
              f"isfinite(nominal_local) AND nominal_local BETWEEN make_timestamp(CAST({nominal_us[0]} AS BIGINT)) "
              f"AND make_timestamp(CAST({nominal_us[1]} AS BIGINT))",
              f"fold BETWEEN {fold[0]} AND {fold[1]}",
              f"{since} % {_MINUTE_US} BETWEEN {within_minute_us[0]} AND {within_minute_us[1]}"]
    return " + ".join(terms), checks


def _key_layout(con: Any, source: str, enum: str, where: str = "") -> tuple[str, list[str]] | None:
    """:func:`_packed_key` for the rows of ``source``; None for no rows or an infinite ``nominal_local``.

    DuckDB reads the int64 extremes as ``-infinity``/``infinity`` (``epoch_us``
    of them is NULL, a NULL key is not indexed): such a table keeps the
    compound index, and the CHECK keeps them out of a packed one.
    """
    ids = con.execute(f"SELECT len(enum_range(NULL::{enum}))").fetchall()[0][0]
    past_minute = f"(epoch_us(nominal_local) % {_MINUTE_US} + {_MINUTE_US}) % {_MINUTE_US}"  # >= 0 before 1970 too
    row = con.execute(f"SELECT min(revision), max(revision), epoch_us(min(nominal_local)), "
                      f"epoch_us(max(nominal_local)), min(fold), max(fold), min({past_minute}), max({past_minute}), "
                      f"bool_or(NOT isfinite(nominal_local)) FROM {source} {where}").fetchall()[0]
    if row[0] is None or row[8]:  # no rows, or an infinite time (there is none between -2**63 and -infinity)
        return None
    return _packed_key(ids, row[0:2], row[2:4], row[4:6], row[6:8])


def _fill_scenario_table(con: Any, name: str, source: str, where: str = "") -> str:
    """Create one scenario's table (its ENUM of schedule ids, its CHECKs) and fill it from ``source``."""
    table = _next_table(con)
    enum = f"{table}_schedule_id"
    con.execute(f"CREATE TYPE {enum} AS ENUM (SELECT DISTINCT schedule_id FROM {source} {where} ORDER BY 1)")
    cols = _columns_sql(LEDGER_SCHEMA, KEY).replace('"schedule_id" VARCHAR', f'"schedule_id" {enum}', 1)
    layout = _key_layout(con, source, enum, where)
    checks = [f"scenario = {_literal(name)}", *(layout[1] if layout else ())]
    con.execute(f"CREATE TABLE {table} (\n  seq BIGINT NOT NULL,\n  {cols},\n  "
                + ",\n  ".join(f"CHECK ({c})" for c in checks) + ")")
    names = ", ".join(_q(c) for c in _OCC_COLUMNS)
    con.execute(f"INSERT INTO {table} ({names}) SELECT {names} FROM {source} {where}")
    return table


def _key_index_sql(con: Any, table: str) -> str:
    """``CREATE UNIQUE INDEX`` of a filled scenario table: on its packed key, or on the key's columns.

    The packed key is what :func:`_fill_scenario_table` checked (the same
    rows give the same layout). DuckDB builds a one-column index from
    sorted keys; a compound one inserts key by key, ~1.7x the CPU (7.8 s
    against 4.5 s for 10.85M rows, DuckDB 2.0.1). The compound index stays
    for a table whose key does not pack (ranges over 127 bits, an infinite time).
    """
    layout = _key_layout(con, table, f"{table}_schedule_id")
    if layout is None:
        return f"CREATE UNIQUE INDEX {table}_key ON {table} ({_INDEX_COLUMNS})"
    # NULL (not indexed) outside the CHECKs' ranges: such a row is then refused by its CHECK (DuckDB
    # looks at the index first), not reported as the duplicate of the row its fields overflow into.
    inside = " AND ".join(f"({c})" for c in layout[1])
    return f"CREATE UNIQUE INDEX {table}_key ON {table} ((CASE WHEN {inside} THEN {layout[0]} END))"


def _key_scenario_table(con: Any, name: str, table: str) -> None:
    """Declare the table's UNIQUE key index and make it ``name``'s table."""
    con.execute(_key_index_sql(con, table))
    con.execute("INSERT INTO occurrence_tables VALUES (?, ?)", [name, table])


def _create_scenario_table(con: Any, name: str, source: str, where: str = "") -> str:
    """Create, fill and key one scenario's table inside the caller's transaction (used by migrations).

    The UNIQUE index declared after the bulk insert of a table created in the
    same transaction is built at COMMIT from all rows at once.
    """
    table = _fill_scenario_table(con, name, source, where)
    _key_scenario_table(con, name, table)
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


# Migration hook: MIGRATIONS[v] upgrades a version-v store to v + 1 inside
# one transaction. A new store is created at version 1 and migrated too.
MIGRATIONS: dict[int, Callable[[Any], None]] = {1: _migrate_1_to_2, 2: _migrate_2_to_3}
