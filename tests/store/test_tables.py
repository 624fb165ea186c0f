"""LedgerStore layout (schema version 2): one table per scenario, its key checked by the write and the
table sealed by its CHECKs once filled, tables of earlier versions (a UNIQUE index) still read and replaced,
and the migration of a version-1 file (one ``occurrences`` table with a PRIMARY KEY)."""

from __future__ import annotations

import duckdb
import polars as pl
import pytest

import calsim
import calsim.store.migrations
import calsim.store.tables
from calsim.store import SCHEMA_VERSION, LedgerStore
from calsim.store.schema import DDL_V1

START, END = "2026-03-01T00:00Z", "2026-04-01T00:00Z"


@pytest.fixture(scope="module")
def runs() -> dict[str, calsim.Ledger]:
    fleet = [
        calsim.Schedule("hourly", "UTC", "2026-01-01T00:00", "FREQ=HOURLY",
                        policy=calsim.Policy(duration="1min", cost=1.5, account="tenant-a")),
        calsim.Schedule("ny-0230", "America/New_York", "2026-01-01T02:30", "FREQ=DAILY"),
        calsim.Schedule("o'brien", "Europe/Berlin", "2026-01-01T09:00", "FREQ=DAILY"),
    ]
    outage = [calsim.Outage("2026-03-10T03:30Z", "2026-03-12T07:10Z")]
    out = {}
    for name in ("all", "it's latest"):
        catchup = "all" if name == "all" else "latest"
        sc = calsim.Scenario(name, calsim.with_policy(fleet, catchup=catchup), START, END, release="2026f",
                             outages=outage)
        out[name] = calsim.simulate(sc, progress=False)
    return out


def table_of(store: LedgerStore, name: str) -> str:
    return store.sql("SELECT table_name FROM occurrence_tables WHERE scenario = $1", [name])["table_name"][0]


def user_tables(con) -> set[str]:
    return {r[0] for r in con.execute("SELECT table_name FROM duckdb_tables()").fetchall()}


def occ_constraints(store: LedgerStore, table: str) -> list[str]:
    return store.sql("SELECT constraint_text FROM duckdb_constraints() WHERE table_name = $1 "
                     "AND constraint_type = 'CHECK' ORDER BY ALL", [table])["constraint_text"].to_list()


class TestKeyAndSealedTables:
    def test_each_scenario_has_its_own_table_sealed_by_its_checks(self, runs):
        with LedgerStore() as store:
            for ledger in runs.values():
                store.write(ledger)
            tables = store.sql("SELECT * FROM occurrence_tables ORDER BY scenario")
            assert tables["scenario"].to_list() == sorted(runs)
            # no index: the write checks the key (calsim.store.tables says why)
            assert store.sql("SELECT count(*) AS n FROM duckdb_indexes() WHERE table_name LIKE 'occ_%'")["n"][0] == 0
            checks = occ_constraints(store, table_of(store, "it's latest"))
            assert "CHECK((scenario = 'it''s latest'))" in checks
            assert any("getvariable('calsim_fill') IS NOT DISTINCT FROM" in c and "(nominal_local IS NOT NULL)" in c
                       for c in checks)
            assert store.sql("SELECT count(*) AS n FROM occurrences")["n"][0] == sum(len(r) for r in runs.values())
            # the view gives schedule_id back as text, whatever ENUM each table uses
            assert store.sql("SELECT schedule_id FROM occurrences LIMIT 1").schema["schedule_id"] == pl.String

    def test_a_row_inserted_or_a_key_updated_behind_the_stores_back_is_refused(self, runs):
        with LedgerStore() as store:
            store.write(runs["all"])
            t = table_of(store, "all")
            for sql in (f"INSERT INTO {t} SELECT * FROM {t} LIMIT 1",  # a duplicate
                        f"INSERT INTO {t} SELECT * REPLACE (nominal_local + INTERVAL 1 MICROSECOND AS nominal_local) "
                        f"FROM {t} LIMIT 1",  # a new key: the table takes no row after its fill
                        f"UPDATE {t} SET nominal_local = (SELECT min(nominal_local) FROM {t})",  # keys made equal
                        f"UPDATE {t} SET fold = 1 - fold"):
                with pytest.raises(duckdb.ConstraintException, match="(?i)check constraint failed"):
                    store._con.execute(sql)
            assert store.ledger("all").equals(runs["all"].frame)
            assert store.write(runs["all"]) is False

    def test_a_fill_that_failed_leaves_no_pass_that_opens_the_next_table(self, runs):
        # The INSERT fails (seq is NOT NULL), the transaction is aborted and refuses the RESET of the variable.
        from calsim.store.tables import fill_scenario_table

        with LedgerStore() as store:
            con = store._con
            con.register("_src", runs["all"].frame.with_columns(pl.lit(None, pl.Int64).alias("seq")).to_arrow())
            con.execute("BEGIN TRANSACTION")
            with pytest.raises(duckdb.ConstraintException, match="NOT NULL"):
                fill_scenario_table(con, "all", "_src")
            con.execute("ROLLBACK")
            stale = con.execute("SELECT getvariable('calsim_fill')").fetchone()[0]
            store.write(runs["all"])
            t = table_of(store, "all")
            assert stale is None or stale.startswith(t + "/")  # the same table name, made again
            with pytest.raises(duckdb.ConstraintException, match="(?i)check constraint failed"):
                con.execute(f"INSERT INTO {t} SELECT * REPLACE (fold + 1 AS fold) FROM {t} LIMIT 1")
            assert store.ledger("all").equals(runs["all"].frame)

    def test_a_table_of_an_earlier_version_is_read_rewritten_and_replaced(self, runs):
        """Tables written before the write checked the key carry a UNIQUE index and no fill CHECK."""
        with LedgerStore() as store:
            store.write(runs["all"])
            new = table_of(store, "all")
            old = "occ_9"
            con = store._con
            con.execute(f"CREATE TYPE {old}_schedule_id AS ENUM (SELECT DISTINCT schedule_id FROM {new} ORDER BY 1)")
            cols = ", ".join(f"CAST(schedule_id AS {old}_schedule_id) AS schedule_id" if c == "schedule_id" else c
                             for c in store.sql(f"SELECT * FROM {new} LIMIT 0").columns)
            con.execute(f"CREATE TABLE {old} AS SELECT {cols} FROM {new}")
            con.execute(f"CREATE UNIQUE INDEX {old}_key ON {old} (schedule_id, revision, nominal_local, fold, kind)")
            con.execute(f"UPDATE occurrence_tables SET table_name = '{old}' WHERE scenario = 'all'")
            con.execute(f"DROP TABLE {new}")
            con.execute(f"DROP TYPE {new}_schedule_id")
            calsim.store.tables.refresh_occurrences_view(con)
            assert store.ledger("all").equals(runs["all"].frame)
            assert store.write(runs["all"]) is False
            with pytest.raises(duckdb.ConstraintException, match="(?i)duplicate key"):
                con.execute(f"INSERT INTO {old} SELECT * FROM {old} LIMIT 1")
            other = runs["it's latest"].frame.with_columns(pl.lit("all").alias("scenario"))
            assert store.write(other, name="all", replace=True) is True
            assert table_of(store, "all") != old and old not in user_tables(con)
            assert store.ledger("all").equals(other)

    def test_replace_drops_the_old_table_and_its_type(self, runs):
        other = runs["it's latest"].frame.with_columns(pl.lit("all").alias("scenario"))
        with LedgerStore() as store:
            store.write(runs["all"])
            store.write(runs["it's latest"])
            store.write(other, name="all", replace=True)
            t = table_of(store, "all")
            assert {x for x in user_tables(store._con) if x.startswith("occ_")} == {t, table_of(store, "it's latest")}
            assert store.sql(f"SELECT DISTINCT scenario FROM {t}")["scenario"].to_list() == ["all"]
            types = store.sql("SELECT type_name FROM duckdb_types() WHERE type_name LIKE 'occ_%'")["type_name"]
            assert sorted(types.to_list()) == sorted(table_of(store, n) + "_schedule_id" for n in runs)
            assert store.ledger("all").equals(other)

    def test_empty_ledger_round_trips(self, runs):
        empty = runs["all"].frame.head(0)
        with LedgerStore() as store:
            assert store.write(empty, name="all") is True
            assert store.ledger("all").equals(empty)
            assert store.compare("all")["occurrences"].to_list() == [0]


class TestMigrationFromVersion1:
    def make_v1(self, path, runs) -> None:
        """A version-1 file as calsim 0.1 wrote it: one occurrences table with the key as PRIMARY KEY."""
        with LedgerStore() as new:
            for ledger in runs.values():
                new.write(ledger)
            scen = new.sql("SELECT * FROM scenarios ORDER BY name").with_columns(
                pl.lit(1, pl.Int32).alias("schema_version"))
            sched = new.sql("SELECT * FROM schedules")
            occ = new.sql("SELECT * FROM occurrences")
        with duckdb.connect(str(path)) as con:
            con.execute("SET TimeZone = 'UTC'")
            for stmt in DDL_V1:
                con.execute(stmt)
            con.execute("INSERT INTO calsim_meta VALUES ('schema_version', '1')")
            for table, frame in (("scenarios", scen), ("schedules", sched), ("occurrences", occ)):
                con.register("src", frame.to_arrow())
                cols = ", ".join(f'"{c}"' for c in frame.columns)
                con.execute(f"INSERT INTO {table} ({cols}) SELECT {cols} FROM src")
                con.unregister("src")
            assert "occurrences" in user_tables(con)

    def test_a_version_1_file_is_migrated(self, runs, tmp_path):
        path = tmp_path / "v1.duckdb"
        self.make_v1(path, runs)
        with pytest.raises(calsim.store.SchemaVersionError, match="version 1; open it without read_only"):
            LedgerStore(path, read_only=True)
        with LedgerStore(path) as store:
            assert store.sql("SELECT value FROM calsim_meta WHERE key = 'schema_version'")["value"].to_list() == [
                str(SCHEMA_VERSION)]
            assert "occurrences" not in user_tables(store._con)  # now a view over occ_<n>
            for name, ledger in runs.items():
                assert store.ledger(name).equals(ledger.frame)
                assert store.write(ledger) is False  # digests carried over: still the same ledger
            migrated = store.compare(list(runs))
            gaps = store.sql("SELECT * FROM observation_gaps ORDER BY ALL")
        with LedgerStore() as fresh:
            for ledger in runs.values():
                fresh.write(ledger)
            assert migrated.equals(fresh.compare(list(runs)))
            assert gaps.equals(fresh.sql("SELECT * FROM observation_gaps ORDER BY ALL"))
        with LedgerStore(path, read_only=True) as store:  # migrated once, for good
            assert store.ledger("all").equals(runs["all"].frame)

    def test_a_failed_migration_leaves_the_version_1_file(self, runs, tmp_path, monkeypatch):
        path = tmp_path / "v1.duckdb"
        self.make_v1(path, runs)
        real = calsim.store.migrations.create_scenario_table

        def boom(con, name, *a, **k):
            if name == "it's latest":
                raise RuntimeError("interrupted")
            return real(con, name, *a, **k)

        monkeypatch.setattr(calsim.store.migrations, "create_scenario_table", boom)
        with pytest.raises(RuntimeError, match="interrupted"):
            LedgerStore(path)
        with duckdb.connect(str(path), read_only=True) as con:
            assert con.execute("SELECT value FROM calsim_meta").fetchall() == [("1",)]
            assert "occurrences" in user_tables(con) and "occurrence_tables" not in user_tables(con)


def test_a_write_killed_between_fill_and_publish_leaves_no_scenario_and_its_table_is_dropped(tmp_path):
    # What a SIGKILL between the two transactions of a write leaves: a filled table nothing points to.
    from calsim.store.tables import fill_scenario_table

    s = calsim.Schedule("h", "UTC", "2026-01-01T00:00", "FREQ=HOURLY")
    ledger = calsim.simulate(calsim.Scenario("kept", [s], "2026-01-01T00:00Z", "2026-01-02T00:00Z"), progress=False)
    other = calsim.simulate(calsim.Scenario("other", [s], "2026-01-01T00:00Z", "2026-01-03T00:00Z"), progress=False)
    path = tmp_path / "l.duckdb"
    with LedgerStore(path) as store:
        store.write(ledger)
        con = store._con
        con.register("_src", other.frame.with_row_index("seq").with_columns(pl.col("seq").cast(pl.Int64)).to_arrow())
        con.execute("BEGIN TRANSACTION")
        orphan = fill_scenario_table(con, "other", "_src")
        con.execute("COMMIT")
    with LedgerStore(path) as store:
        assert store.scenarios()["name"].to_list() == ["kept"]
        assert store.sql("SELECT count(*) AS n FROM occurrences")["n"][0] == ledger.frame.height
        assert orphan in store.sql("SELECT table_name FROM duckdb_tables()")["table_name"].to_list()
        store.write(other)  # the next write drops the orphan (and may reuse its name)
        tables = store.sql("SELECT table_name FROM duckdb_tables() WHERE regexp_full_match(table_name, 'occ_[0-9]+') "
                           "ORDER BY 1")
        published = store.sql("SELECT table_name FROM occurrence_tables ORDER BY 1")
        assert tables["table_name"].to_list() == published["table_name"].to_list() and published.height == 2
        assert store.ledger("other").equals(other.frame) and store.ledger("kept").equals(ledger.frame)
