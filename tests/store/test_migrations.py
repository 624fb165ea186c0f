"""Older stores are migrated when opened for writing: version 2 (reasons without ``stuck``) and version 3
(``observation_gaps`` with missed occurrences only, as ``gap_s`` and ``first_missed``) to version 5."""

from __future__ import annotations

import duckdb
import polars as pl
import pytest

import calsim
from calsim import presets
from calsim.simulation.ledger import LEDGER_REASONS
from calsim.store import SCHEMA_VERSION, LedgerStore, SchemaVersionError
from calsim.store.schema import gaps_sql_v1
from calsim.text_table import durations_as_seconds


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
        old = ", ".join("'" + r + "'" for r in LEDGER_REASONS[:LEDGER_REASONS.index("stuck")])  # version 2's
        con.execute(f"CREATE TYPE calsim_reason AS ENUM ({old})")
        for t in tables:
            con.execute(f'ALTER TABLE "{t}" ALTER reason TYPE calsim_reason')
        for _, sql in indexes:
            con.execute(sql)
        order = sorted(views, key=lambda v: (v[0] != "occurrences"))
        for _, sql in order:
            con.execute(sql)
        con.execute("CREATE OR REPLACE VIEW observation_gaps AS " + gaps_sql_v1("occurrences"))
        con.execute("UPDATE calsim_meta SET value = '2' WHERE key = 'schema_version'")


def test_a_version_2_store_is_migrated_and_then_takes_a_stuck_ledger(tmp_path):
    path = tmp_path / "v2.duckdb"
    make_v2(path)
    before = hourly()
    with LedgerStore(path) as store:
        version = store.sql("SELECT value FROM calsim_meta WHERE key = 'schema_version'")["value"].to_list()
        assert version == [str(SCHEMA_VERSION)] == ["5"]
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


def make_v3(path, *ledgers: calsim.Ledger) -> None:
    """A version-3 file: ``observation_gaps`` as versions 1 to 3 defined it (every other object as calsim writes it)."""
    with LedgerStore(path) as store:
        for ledger in ledgers:
            store.write(ledger)
    with duckdb.connect(str(path)) as con:
        con.execute("CREATE OR REPLACE VIEW observation_gaps AS " + gaps_sql_v1("occurrences"))
        con.execute("UPDATE calsim_meta SET value = '3' WHERE key = 'schema_version'")


def catch_up_all() -> calsim.Ledger:
    """Hourly, catch-up ``all`` through an outage from 03:30 to 07:10: nothing missed, and 04:00, 05:00 and 06:00
    late (run at 07:10, once the next was due; 07:00 ran before 08:00 was)."""
    s = calsim.Schedule("h", "UTC", "2026-01-01T00:00", "FREQ=HOURLY", policy=calsim.Policy(catchup="all"))
    return calsim.simulate(calsim.Scenario("all", [s], "2026-01-01T00:00Z", "2026-01-02T00:00Z",
                                           outages=[calsim.Outage("2026-01-01T03:30Z", "2026-01-01T07:10Z")]),
                           progress=False)


def test_a_version_3_store_is_migrated_and_its_gaps_view_follows_ledger_gaps(tmp_path):
    path = tmp_path / "v3.duckdb"
    ledgers = hourly(), catch_up_all()
    make_v3(path, *ledgers)
    with duckdb.connect(str(path), read_only=True) as con:  # what version 3 answered: no late runs, in seconds
        assert "first_missed" in [d[0] for d in con.sql("SELECT * FROM observation_gaps").description]
        assert con.execute("SELECT count(*) FROM observation_gaps WHERE scenario = 'all'").fetchall() == [(0,)]
    with pytest.raises(SchemaVersionError, match="version 3; open it without read_only once to migrate it to 5"):
        LedgerStore(path, read_only=True)
    with LedgerStore(path) as store:
        assert store.sql("SELECT value FROM calsim_meta WHERE key = 'schema_version'")["value"].to_list() == ["5"]
        for ledger in ledgers:
            view = store.sql("SELECT * EXCLUDE (scenario) FROM observation_gaps WHERE scenario = $1 "
                             "ORDER BY schedule_id, from_utc NULLS FIRST", [ledger.name])
            want = durations_as_seconds(ledger.gaps())
            assert view.columns == want.columns and want.height
            assert view.select(pl.col(c).cast(want.schema[c]) for c in want.columns).equals(want)
            assert store.ledger(ledger.name).equals(ledger.frame)
            assert store.write(ledger) is False  # still the same ledger
        late = store.compare(["all"]).row(0, named=True)
        assert (late["most_missed"], late["most_late"]) == (0, 3)
    with LedgerStore(path, read_only=True) as store:  # migrated once, for good
        assert store.sql("SELECT count(*) AS n FROM observation_gaps WHERE scenario = 'all'")["n"][0] == 1


@pytest.mark.parametrize("change, said", [
    ("CREATE MACRO enum_range(x) AS ['dst_gap']", "it holds macro 'enum_range'"),
    ("CREATE OR REPLACE VIEW state_counts AS SELECT * FROM read_text('/etc/hostname')",
     "view 'state_counts' is not the definition calsim writes for it (layout 3"),
    ("ALTER TABLE scenarios ADD COLUMN note VARCHAR",
     "table scenarios has a column 'note' that calsim does not write")])
def test_a_store_to_migrate_is_checked_before_it_is_changed(tmp_path, change, said):
    """The migration reads the reason type, recreates every view from its text and rewrites the tables: a file
    that is not calsim's layout 3 is refused first, and stays as it was (version 3, byte for byte)."""
    import hashlib

    from calsim.errors import StoreError

    path = tmp_path / "v3.duckdb"
    make_v3(path, hourly())
    with duckdb.connect(str(path)) as con:
        con.execute(change)
    before = hashlib.sha256(path.read_bytes()).hexdigest()
    with pytest.raises(StoreError, match="is not a ledger store as calsim writes it: " + said.replace("(", r"\(")):
        LedgerStore(path)
    assert hashlib.sha256(path.read_bytes()).hexdigest() == before
    with duckdb.connect(str(path), read_only=True) as con:
        assert con.execute("SELECT value FROM calsim_meta").fetchall() == [("3",)]
