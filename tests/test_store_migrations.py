"""A version-2 store (reasons without ``stuck``) is migrated to version 3 and then takes every reason."""

from __future__ import annotations

import duckdb
import polars as pl
import pytest

import calsim
from calsim import presets
from calsim.simulation.ledger import LEDGER_REASONS
from calsim.store import SCHEMA_VERSION, LedgerStore


def hourly() -> calsim.Ledger:
    s = calsim.Schedule("h", "UTC", "2026-01-01T00:00", "FREQ=HOURLY", policy=calsim.Policy(catchup="latest"))
    return calsim.simulate(calsim.Scenario("hourly", [s], "2026-01-01T00:00Z", "2026-01-02T00:00Z",
                                           outages=[calsim.Outage("2026-01-01T03:30Z", "2026-01-01T07:10Z")]))


def stuck() -> calsim.Ledger:
    p = presets.kubernetes(too_many_missed="docs")
    s = p.apply(calsim.Schedule("k", "UTC", "2026-01-01T00:00", "* * * * *"))
    return calsim.simulate(calsim.Scenario("stuck", [s], "2026-01-01T00:00Z", "2026-01-01T04:00Z", release="2026f",
                                           tick="10s",
                                           outages=[calsim.Outage("2026-01-01T01:00:30Z", "2026-01-01T02:45Z")]))


def make_v2(path) -> None:
    """A version-2 file: the reason ENUM as it was before ``stuck`` (every other object as calsim writes it)."""
    with LedgerStore(path) as store:
        store.write(hourly())
    with duckdb.connect(str(path)) as con:
        indexes = con.execute("SELECT index_name, sql FROM duckdb_indexes() WHERE sql IS NOT NULL").fetchall()
        views = con.execute("SELECT view_name, sql FROM duckdb_views() WHERE NOT internal").fetchall()
        tables = [r[0] for r in con.execute("SELECT table_name FROM occurrence_tables").fetchall()]
        for name, _ in views:
            con.execute(f'DROP VIEW "{name}"')
        for name, _ in indexes:
            con.execute(f'DROP INDEX "{name}"')
        for t in tables:
            con.execute(f'ALTER TABLE "{t}" ALTER reason TYPE VARCHAR')
        con.execute("DROP TYPE calsim_reason")
        old = ", ".join("'" + r + "'" for r in LEDGER_REASONS if r != "stuck")
        con.execute(f"CREATE TYPE calsim_reason AS ENUM ({old})")
        for t in tables:
            con.execute(f'ALTER TABLE "{t}" ALTER reason TYPE calsim_reason')
        for _, sql in indexes:
            con.execute(sql)
        order = sorted(views, key=lambda v: (v[0] != "occurrences"))
        for _, sql in order:
            con.execute(sql)
        con.execute("UPDATE calsim_meta SET value = '2' WHERE key = 'schema_version'")


def test_a_version_2_store_is_migrated_and_then_takes_a_stuck_ledger(tmp_path):
    path = tmp_path / "v2.duckdb"
    make_v2(path)
    before = hourly()
    with LedgerStore(path) as store:
        version = store.sql("SELECT value FROM calsim_meta WHERE key = 'schema_version'")["value"].to_list()
        assert version == [str(SCHEMA_VERSION)] == ["3"]
        assert store.ledger("hourly").equals(before.frame)
        assert store.write(before) is False  # still the same ledger
        store.write(stuck())
        reasons = store.sql("SELECT reason::VARCHAR AS r, count(*) AS n FROM occurrences WHERE scenario = 'stuck' "
                            "GROUP BY 1 ORDER BY 1")
        assert "stuck" in reasons["r"].to_list()
        assert store.compare(["hourly", "stuck"]).height == 2
        # the key is still enforced after the migration
        table = store.sql("SELECT table_name FROM occurrence_tables WHERE scenario = 'hourly'")["table_name"][0]
        with pytest.raises(duckdb.ConstraintException):
            store._con.execute(f'INSERT INTO "{table}" SELECT * FROM "{table}" LIMIT 1')


def test_a_new_store_knows_every_reason(tmp_path):
    with LedgerStore(tmp_path / "new.duckdb") as store:
        got = store.sql("SELECT unnest(enum_range(NULL::calsim_reason)) AS r")["r"].to_list()
    assert got == list(LEDGER_REASONS)
    assert pl.Series(got).is_unique().all()
