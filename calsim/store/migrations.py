"""The store's layout versions and the steps from each to the next (:data:`MIGRATIONS`).

A store file records its layout in ``calsim_meta.schema_version``; opening
one of an older version runs the steps up to :data:`SCHEMA_VERSION`, each in
its own transaction (:mod:`.connection`). A new store is created at version
1 (:data:`.schema.DDL_V1`) and migrated by the same steps, so a new file and
a migrated one cannot drift apart.

DuckDB cannot alter an ENUM type nor a column an index, a view or a CHECK
depends on, which is why the steps drop and restore those around a type
change (and a change of a key column's type would copy the table).

>>> SCHEMA_VERSION, sorted(MIGRATIONS)
(5, [1, 2, 3, 4])
"""

from __future__ import annotations

from typing import Any, Callable

from ..errors import SchemaVersionError
from ..simulation.ledger_schema import LEDGER_REASONS
from .schema import OCCURRENCE_TABLES_DDL, WORKER_COLUMNS, enum_sql, gaps_sql
from .sql import identifier, literal
from .tables import add_ledger_columns, create_scenario_table, refresh_occurrences_view

__all__ = ["SCHEMA_VERSION", "MIGRATIONS"]

SCHEMA_VERSION = 5


def _migrate_1_to_2(con: Any) -> None:
    """Version 1 kept every scenario in one ``occurrences`` table with a PRIMARY KEY; move each to its own table."""
    con.execute(OCCURRENCE_TABLES_DDL)
    con.execute("ALTER TABLE occurrences RENAME TO occurrences_v1")
    for (name,) in con.execute("SELECT DISTINCT scenario FROM occurrences_v1 ORDER BY 1").fetchall():
        create_scenario_table(con, name, "occurrences_v1", f"WHERE scenario = {literal(name)}")
    con.execute("DROP TABLE occurrences_v1")
    refresh_occurrences_view(con)


def _migrate_2_to_3(con: Any) -> None:
    """Version 3 knows ``stuck`` (:func:`_know_every_reason`)."""
    _know_every_reason(con)


def _know_every_reason(con: Any) -> None:
    """Make ``calsim_reason`` hold every reason of LEDGER_REASONS, of which the store's type holds the first ones.

    DuckDB cannot add a value to an ENUM type, nor alter a column that an
    index or a view depends on: the views and indexes are dropped, the reason
    columns go through VARCHAR while the type is made again, then the indexes
    and views come back as they were. A store whose type has every reason
    already (a new one, or one an earlier step brought up to today's list) is
    left as it is.
    """
    have = [r[0] for r in con.execute("SELECT unnest(enum_range(NULL::calsim_reason))").fetchall()]
    if have == list(LEDGER_REASONS):
        return
    if have != list(LEDGER_REASONS[:len(have)]):
        raise SchemaVersionError(f"calsim_reason: unexpected values {have} "
                                 f"(expected a prefix of {list(LEDGER_REASONS)})")
    views = con.execute("SELECT view_name, sql FROM duckdb_views() WHERE NOT internal ORDER BY view_oid").fetchall()
    tables = {r[0] for r in con.execute("SELECT table_name FROM duckdb_tables()").fetchall()}
    occ = [r[0] for r in con.execute("SELECT table_name FROM occurrence_tables ORDER BY scenario").fetchall()
           if r[0] in tables]
    indexes = con.execute("SELECT index_name, sql FROM duckdb_indexes() WHERE sql IS NOT NULL").fetchall()
    for name, _ in views:
        con.execute(f"DROP VIEW {identifier(name)}")
    for name, _ in indexes:
        con.execute(f"DROP INDEX {identifier(name)}")
    for table in occ:
        con.execute(f"ALTER TABLE {identifier(table)} ALTER reason TYPE VARCHAR")
    con.execute("DROP TYPE calsim_reason")
    con.execute("CREATE TYPE calsim_reason AS " + enum_sql(LEDGER_REASONS))
    for table in occ:
        con.execute(f"ALTER TABLE {identifier(table)} ALTER reason TYPE calsim_reason")
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
    con.execute("CREATE OR REPLACE VIEW observation_gaps AS\n" + gaps_sql("occurrences"))


def _migrate_4_to_5(con: Any) -> None:
    """Version 5 stores worker-level ledgers (issue 19): the reasons they add (``lease_expired``, ``review``,
    ``permanent``, ``rate_limited``, ``breaker_open``) and the columns :data:`.schema.WORKER_COLUMNS`.

    Every scenario's table gains the columns, null in its rows, and keeps its
    seal; an attached dataset's view reads them as null; the ``occurrences``
    view names them. Digests of ledgers written before cover fewer columns
    (:func:`.ledger_records.comparable`), which the scenario rows' ``schema_version`` tells.
    """
    _know_every_reason(con)
    for (table,) in con.execute("SELECT table_name FROM occurrence_tables ORDER BY scenario").fetchall():
        add_ledger_columns(con, table, WORKER_COLUMNS)
    refresh_occurrences_view(con)


# Migration hook: MIGRATIONS[v] upgrades a version-v store to v + 1 inside
# one transaction. A new store is created at version 1 and migrated too.
MIGRATIONS: dict[int, Callable[[Any], None]] = {1: _migrate_1_to_2, 2: _migrate_2_to_3, 3: _migrate_3_to_4,
                                                 4: _migrate_4_to_5}
