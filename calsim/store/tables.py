"""Each scenario's own table: made, filled once and sealed, dropped; the ``occurrences`` view over them all.

Layout (schema version 2)
-------------------------
Each scenario's rows live in their own table ``occ_<n>`` whose
``schedule_id`` is a per-scenario ENUM type (``occ_<n>_schedule_id``, the
scenario's schedule ids, sorted). The key ``(scenario, schedule_id, revision,
nominal_local, fold, kind)`` holds in every table in three parts:

* ``CHECK (scenario = '<name>')`` pins every row of the table to its
  scenario, and ``occurrence_tables`` gives a scenario one table.
* The write checks the rest of the key before it publishes anything
  (:func:`.ledger_records.repeats_a_key`: the key packed into one
  int64 per row, sorted, neighbours compared, on the thread that computes
  the digest while DuckDB inserts the rows). A repeat refuses the write with
  :class:`DuplicateKeyError`; the filled table, never published, is dropped.
* The table is filled once, by that write. A second CHECK,
  ``getvariable('calsim_fill') IS NOT DISTINCT FROM 'occ_<n>/<nonce>'``
  (and the key columns, so that DuckDB checks it on an UPDATE of them),
  lets rows in only while :func:`fill_scenario_table` runs its INSERT
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

>>> checked_table("occ_12")
'occ_12'
"""

from __future__ import annotations

import contextlib
import re
import secrets
from typing import Any, Iterable

from ..errors import StoreError
from ..simulation.ledger_schema import LEDGER_SCHEMA
from .schema import KEY, WORKER_COLUMNS, columns_sql, sql_type
from .sql import identifier, literal, literals

__all__ = ["OCC_COLUMNS", "checked_table", "enum_of", "next_table", "fill_scenario_table", "create_scenario_table",
           "add_ledger_columns", "drop_orphans", "is_view", "forget_scenario", "refresh_occurrences_view",
           "occurrences_sql", "dataset_sql", "wrapped_dataset_sql"]

OCC_COLUMNS = ["seq", *LEDGER_SCHEMA.names()]
_TABLE = re.compile(r"occ_[0-9]{1,18}")


def checked_table(name: object) -> str:
    """A scenario table's name read from ``occurrence_tables``, refused unless calsim could have made it.

    The name is quoted wherever it goes into SQL, and the names of its ENUM
    type and index are made from it: a file that is not calsim's own cannot
    point the store at another table or type through it.
    """
    if not isinstance(name, str) or not _TABLE.fullmatch(name):
        shown = repr(name[:40]) if isinstance(name, str) else type(name).__name__
        raise StoreError(f"occurrence_tables: table name {shown} is not one calsim makes (occ_<n>); "
                         "the file is not a calsim store or was changed by hand")
    return name


def enum_of(table: str) -> str:
    """The name of ``table``'s ENUM type of schedule ids (``occ_<n>_schedule_id``)."""
    return f"{table}_schedule_id"


def next_table(con: Any) -> str:
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
    cols = " AND ".join(f"{identifier(c)} IS NOT NULL" for c in KEY[1:])
    return f"getvariable({literal(_FILL_VARIABLE)}) IS NOT DISTINCT FROM {literal(pass_)} AND {cols}"


def fill_scenario_table(con: Any, name: str, source: str, where: str = "") -> str:
    """Create one scenario's table (its ENUM of schedule ids, its CHECKs) and fill it from the table or view ``source``.

    ``where`` is a SQL ``WHERE`` clause (its values made by :func:`.sql.literal`).
    The caller has checked the key of the rows (a write) or takes them from a
    table that enforced it (a migration); after this, the table takes no row.
    The pass is new for each table, so a variable left set by a failed fill
    (an aborted transaction refuses the RESET) opens no other table.
    """
    table = next_table(con)
    enum, src = identifier(enum_of(table)), identifier(source)
    con.execute(f"CREATE TYPE {enum} AS ENUM (SELECT DISTINCT schedule_id FROM {src} {where} ORDER BY 1)")
    cols = columns_sql(LEDGER_SCHEMA, KEY, types={"schedule_id": enum})
    pass_ = f"{table}/{secrets.token_hex(8)}"
    con.execute(f"CREATE TABLE {identifier(table)} (\n  seq BIGINT NOT NULL,\n  {cols},\n  "
                f"CHECK (scenario = {literal(name)}),\n  CHECK ({_gate_check(pass_)}))")
    # A version-1 table being migrated predates the worker-level columns: they stay null. Any other
    # column the source lacks fails the INSERT, as before.
    have = {d[0] for d in con.execute(f"SELECT * FROM {src} LIMIT 0").description}
    names = ", ".join(identifier(c) for c in OCC_COLUMNS if c in have or c not in WORKER_COLUMNS)
    con.execute(f"SET VARIABLE {identifier(_FILL_VARIABLE)} = {literal(pass_)}")
    try:
        con.execute(f"INSERT INTO {identifier(table)} ({names}) SELECT {names} FROM {src} {where}")
    finally:
        with contextlib.suppress(Exception):  # the INSERT's own error is the one to report
            con.execute(f"RESET VARIABLE {identifier(_FILL_VARIABLE)}")
    return table


def create_scenario_table(con: Any, name: str, source: str, where: str = "") -> str:
    """Create and fill one scenario's table and make it ``name``'s, inside the caller's transaction (migrations)."""
    table = fill_scenario_table(con, name, source, where)
    con.execute("INSERT INTO occurrence_tables VALUES (?, ?)", [name, table])
    return table


# What DuckDB keeps of the view an attach made (``duckdb_views().sql``): the statement, then its query.
_VIEW_SQL = re.compile(r'CREATE VIEW "?occ_[0-9]{1,18}"? AS (.+?);?\s*', re.S)


def add_ledger_columns(con: Any, table: str, columns: tuple[str, ...]) -> None:
    """Give a scenario's table, or an attached dataset's view, the ledger ``columns`` it lacks, null in every row.

    A table gains them by ``ALTER TABLE ... ADD COLUMN``, which writes no row
    and keeps its CHECKs: the table stays pinned to its scenario and sealed
    (an INSERT, or an UPDATE, is still refused). A view is made again as its
    own query with the missing columns as typed NULLs (its files were written
    before those columns existed). Inside the caller's transaction (a migration).
    """
    table = checked_table(table)
    types = {c: sql_type(c, LEDGER_SCHEMA[c]) for c in columns}
    if not is_view(con, table):
        # Filled with NULL, and rolled back with the migration's transaction if a later step fails
        # (duckdb.org/docs/2.0/sql/statements/alter_table: "ADD COLUMN k INTEGER ... filled with the
        # default value NULL"; ALTER TABLE changes "can be fully reverted through a rollback").
        for c in columns:
            con.execute(f"ALTER TABLE {identifier(table)} ADD COLUMN IF NOT EXISTS {identifier(c)} {types[c]}")
        return
    # The catalog's column list, not a query of the view: that would read the Parquet files.
    have = {r[0] for r in con.execute("SELECT column_name FROM duckdb_columns() WHERE table_name = ?",
                                      [table]).fetchall()}
    missing = [c for c in columns if c not in have]
    if not missing:
        return
    found = _VIEW_SQL.fullmatch(con.execute("SELECT sql FROM duckdb_views() WHERE view_name = ?",
                                            [table]).fetchall()[0][0])
    if found is None:
        raise StoreError(f"occurrence_tables: view {table} is not one calsim makes (an attached dataset's); "
                         "the file was changed by hand")
    con.execute(f"CREATE OR REPLACE VIEW {identifier(table)} AS {wrapped_dataset_sql(found[1], missing)}")


def dataset_sql(files: list[str], have: Iterable[str] | None = None, columns: list[str] | None = None,
                name: str | None = None) -> str:
    """The query of an attached dataset's view: the ledger ``columns`` (by default today's) of the Parquet ``files``.

    A worker-level column the files lack (``have``: the columns they hold;
    None, all of them) reads as NULL, as does every column of a dataset
    without files; ``scenario``, which the files of a hive-partitioned
    dataset leave to their directory, reads as ``name``. Written by
    :meth:`~calsim.LedgerStore.attach` and compared by :mod:`.catalog` with
    what a store file holds: one definition for both.

    >>> dataset_sql([], columns=["scenario"])
    'SELECT CAST(NULL AS BIGINT) AS seq, CAST(NULL AS VARCHAR) AS "scenario" WHERE false'
    """
    columns = LEDGER_SCHEMA.names() if columns is None else columns
    types = {c: sql_type(c, LEDGER_SCHEMA[c]) for c in columns}
    if not files:
        return ("SELECT CAST(NULL AS BIGINT) AS seq, "
                + ", ".join(f"CAST(NULL AS {types[c]}) AS {identifier(c)}" for c in columns) + " WHERE false")
    present = set(columns) if have is None else set(have)

    def value(c: str) -> str:
        if c in present:
            return identifier(c)
        if c == "scenario" and name is not None:
            return literal(name)
        return "NULL" if c in WORKER_COLUMNS else identifier(c)

    cols = ", ".join(f"CAST({value(c)} AS {types[c]}) AS {identifier(c)}" for c in columns)
    return f"SELECT CAST(NULL AS BIGINT) AS seq, {cols} FROM read_parquet([{literals(files)}])"


def wrapped_dataset_sql(inner: str, missing: tuple[str, ...] | list[str]) -> str:
    """An older attached dataset's query ``inner`` with the ledger columns ``missing`` added as NULLs (a migration)."""
    nulls = ", ".join(f"CAST(NULL AS {sql_type(c, LEDGER_SCHEMA[c])}) AS {identifier(c)}" for c in missing)
    return f"SELECT v.*, {nulls} FROM ({inner}) AS v"


def drop_orphans(con: Any) -> None:
    """Drop ``occ_<n>`` tables no scenario points to: what a write killed between its two steps leaves."""
    for (table,) in con.execute(
            "SELECT table_name FROM duckdb_tables() WHERE regexp_full_match(table_name, 'occ_[0-9]+') "
            "AND table_name NOT IN (SELECT table_name FROM occurrence_tables)").fetchall():
        con.execute(f"DROP TABLE {identifier(table)}")
        con.execute(f"DROP TYPE IF EXISTS {identifier(enum_of(table))}")


def is_view(con: Any, table: str) -> bool:
    """Whether a scenario's rows are a view (an attached Parquet dataset) rather than a table."""
    # fetchall, not fetchone: DuckDB refuses the connection's next query while a result is unfinished.
    return bool(con.execute("SELECT count(*) FROM duckdb_views() WHERE view_name = ?", [table]).fetchall()[0][0])


def _drop_scenario_table(con: Any, name: str) -> None:
    row = con.execute("SELECT table_name FROM occurrence_tables WHERE scenario = ?", [name]).fetchone()
    if row:
        table = checked_table(row[0])
        if is_view(con, table):
            con.execute(f"DROP VIEW {identifier(table)}")  # an attached Parquet dataset: the files stay
        else:
            con.execute(f"DROP TABLE {identifier(table)}")  # drops its index too
            con.execute(f"DROP TYPE {identifier(enum_of(table))}")
        con.execute("DELETE FROM occurrence_tables WHERE scenario = ?", [name])


def forget_scenario(con: Any, name: str) -> None:
    """Remove a stored scenario entirely (its rows, schedules and scenario row), for ``replace=True``."""
    _drop_scenario_table(con, name)
    con.execute("DELETE FROM schedules WHERE scenario = ?", [name])
    con.execute("DELETE FROM scenarios WHERE name = ?", [name])


def refresh_occurrences_view(con: Any) -> None:
    """(Re)define ``occurrences`` as the UNION ALL of the scenario tables.

    The other views name ``occurrences`` and DuckDB binds a view's query
    when it is run, so they follow the new definition.
    """
    tables = [checked_table(r[0])
              for r in con.execute("SELECT table_name FROM occurrence_tables ORDER BY scenario").fetchall()]
    con.execute("CREATE OR REPLACE VIEW occurrences AS\n" + occurrences_sql(tables))


def occurrences_sql(tables: list[str], columns: list[str] | None = None) -> str:
    """The query of the ``occurrences`` view: the UNION ALL of ``tables``' ``columns`` (by default today's).

    Without tables, no row of those columns' types. Written by
    :func:`refresh_occurrences_view` and compared by :mod:`.catalog` with
    what a store file holds (layouts 2 to 4 named the columns without the
    worker-level ones).

    >>> occurrences_sql(["occ_1"], ["seq", "schedule_id"])
    'SELECT "seq", CAST(schedule_id AS VARCHAR) AS schedule_id FROM "occ_1"'
    """
    columns = OCC_COLUMNS if columns is None else columns
    if tables:
        cols = ", ".join("CAST(schedule_id AS VARCHAR) AS schedule_id" if c == "schedule_id" else identifier(c)
                         for c in columns)
        return "\nUNION ALL\n".join(f"SELECT {cols} FROM {identifier(t)}" for t in tables)
    types = {"seq": "BIGINT", **{c: sql_type(c, t) for c, t in LEDGER_SCHEMA.items()}}
    nulls = ", ".join(f"CAST(NULL AS {types[c]}) AS {identifier(c)}" for c in columns)
    return f"SELECT {nulls} WHERE false"
