"""The store and worker-level ledgers (issue 19): written, read back, compared and queried; and stores of
layout 4 and earlier migrated to layout 5 (the new reasons, the worker-level columns null in old rows, every
scenario table still sealed, a failed migration or write leaving the file as it was)."""

from __future__ import annotations

import json

import duckdb
import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import calsim
import calsim.store.migrations
import calsim.store.writer
from calsim.distributed.metadata import metadata
from calsim.errors import DuplicateKeyError, ScenarioExistsError, SchemaVersionError, StoreError
from calsim.simulation import views
from calsim.simulation.ledger_schema import LEDGER_REASONS, LEDGER_SCHEMA, UTC
from calsim.store import SCHEMA_VERSION, LedgerStore
from calsim.store.ledger_records import digest
from calsim.store.schema import DDL_V1, KEY, WORKER_COLUMNS, columns_sql, enum_sql, sql_type

# What layout 4 knew: the reasons up to ``stuck`` and the columns up to ``budget_wait_s``.
V4_REASONS = LEDGER_REASONS[:LEDGER_REASONS.index("stuck") + 1]
V4_COLUMNS = [c for c in LEDGER_SCHEMA.names() if c not in WORKER_COLUMNS]
NEW_REASONS = ("lease_expired", "review", "permanent", "rate_limited", "breaker_open")


@pytest.fixture(scope="module")
def faulty() -> calsim.Ledger:
    """The issue's example (workers with leases, two crashing once, a token bucket, classed failures) with three
    workers rather than two: with two, the bucket's burst of two covers every start and no run waits for a token."""
    p = calsim.Policy(duration="60s", rate_limit="src", covers="own_window")
    s = [calsim.Schedule(f"s{i}", "UTC", "2026-01-01T00:00", "FREQ=HOURLY", policy=p) for i in range(3)]
    sc = calsim.Scenario("wf", s, "2026-01-01T00:00Z", "2026-01-02T00:00Z", workers=calsim.Workers(3, lease="90s"),
                         rate_limits=[calsim.RateLimit("src", rate="10/min", burst=2)],
                         events=[calsim.WorkerCrash("2026-01-01T05:00:30Z", workers=2)],
                         failures=calsim.Failures(0.3, max_attempts=3,
                                                  classes={"transient": .7, "review": .2, "permanent": .1}))
    return calsim.simulate(sc, progress=False)


@pytest.fixture(scope="module")
def duplicated() -> calsim.Ledger:
    """Two scheduler instances without a unique run key, and a crash: effects happen twice, a lease expires."""
    p = calsim.Policy(duration="60s", effect_at=0.5, ack_delay="30s")
    s = [calsim.Schedule(f"s{i}", "UTC", "2026-01-01T00:00", "FREQ=HOURLY", policy=p) for i in range(3)]
    sc = calsim.Scenario("dup", s, "2026-01-01T00:00Z", "2026-01-02T00:00Z", workers=calsim.Workers(2, lease="90s"),
                         schedulers=2, dedupe="none", events=[calsim.WorkerCrash("2026-01-01T05:00:30Z", workers=2)])
    return calsim.simulate(sc, progress=False)


def _hourly_scenario() -> calsim.Scenario:
    s = calsim.Schedule("h", "UTC", "2026-01-01T00:00", "FREQ=HOURLY", policy=calsim.Policy(catchup="latest"))
    return calsim.Scenario("hourly", [s], "2026-01-01T00:00Z", "2026-01-02T00:00Z",
                           outages=[calsim.Outage("2026-01-01T03:30Z", "2026-01-01T07:10Z")])


def _daily_scenario() -> calsim.Scenario:
    return calsim.Scenario("ds", [calsim.Schedule("d", "UTC", "2026-01-01T00:00", "FREQ=DAILY")],
                           "2026-01-01T00:00Z", "2026-01-10T00:00Z")


@pytest.fixture(scope="module")
def hourly() -> calsim.Ledger:
    return calsim.simulate(_hourly_scenario(), progress=False)


@pytest.fixture(scope="module")
def daily() -> calsim.Ledger:
    return calsim.simulate(_daily_scenario(), progress=False)


def as_v4(frame: pl.DataFrame) -> pl.DataFrame:
    """A ledger frame as calsim made it before issue 19: no worker-level columns, layout 4's reasons."""
    return frame.select(V4_COLUMNS).cast({"reason": pl.Enum(list(V4_REASONS))})


def write_old_dataset(directory, ledger: calsim.Ledger, scenario: calsim.Scenario) -> str:
    """A Parquet dataset as the Dask engine wrote one before issue 19 (one part, ``_scenario.json``)."""
    d = directory / f"scenario={ledger.name}"
    d.mkdir(parents=True)
    as_v4(ledger.frame).write_parquet(d / "part-00000.parquet")
    parts = [{"partition": 0, "path": "part-00000.parquet", "rows": ledger.frame.height, "schedules": 1, "bytes": 0,
              "states": {}, "releases": []}]
    (d / "_scenario.json").write_text(json.dumps(metadata(scenario, parts, "0.old", 0.0)))
    return str(d)


def make_v4(path, written: list[calsim.Ledger], attached: dict[str, str]) -> None:
    """A layout-4 file: ``written`` ledgers and ``attached`` datasets (name -> directory) as calsim stored them
    before issue 19. Made by today's store, then taken back: the worker-level columns dropped from each scenario
    table (its CHECKs stay), the reason ENUM cut to layout 4's, each attached view and the ``occurrences`` view
    naming layout 4's columns, and each scenario's digest that of its layout-4 frame. (The catalog this gives,
    tables, columns, types, CHECKs and views, was compared with that of a file written by calsim at commit
    a4f4b35, the last before issue 19: the same but for fill nonces and file paths.)"""
    with LedgerStore(path) as store:
        for ledger in written:
            store.write(ledger)
        for d in attached.values():
            store.attach(d)
    v4_types = {c: sql_type(c, LEDGER_SCHEMA[c]) for c in V4_COLUMNS}
    with duckdb.connect(str(path)) as con:
        views_ = con.execute("SELECT view_name, sql FROM duckdb_views() WHERE NOT internal").fetchall()
        occ = dict(con.execute("SELECT scenario, table_name FROM occurrence_tables").fetchall())
        for name, _ in views_:
            con.execute(f'DROP VIEW "{name}"')
        tables = [t for s, t in sorted(occ.items()) if s not in attached]
        for t in tables:
            for c in WORKER_COLUMNS:
                con.execute(f'ALTER TABLE "{t}" DROP COLUMN "{c}"')
            con.execute(f'ALTER TABLE "{t}" ALTER reason TYPE VARCHAR')
        con.execute("DROP TYPE calsim_reason")
        con.execute("CREATE TYPE calsim_reason AS " + enum_sql(V4_REASONS))
        for t in tables:
            con.execute(f'ALTER TABLE "{t}" ALTER reason TYPE calsim_reason')
        for name, d in attached.items():  # the view calsim's attach made then
            cols = ", ".join(f'CAST("{c}" AS {v4_types[c]}) AS "{c}"' for c in V4_COLUMNS)
            con.execute(f'CREATE VIEW "{occ[name]}" AS SELECT CAST(NULL AS BIGINT) AS seq, {cols} '
                        f"FROM read_parquet(['{d}/part-00000.parquet'])")
        cols = ", ".join('CAST(schedule_id AS VARCHAR) AS schedule_id' if c == "schedule_id" else f'"{c}"'
                         for c in ["seq", *V4_COLUMNS])
        con.execute("CREATE VIEW occurrences AS " + " UNION ALL ".join(
            f'SELECT {cols} FROM "{t}"' for _, t in sorted(occ.items())))
        for name, sql in views_:
            if name != "occurrences" and name not in occ.values():
                con.execute(sql)
        for ledger in written:
            con.execute("UPDATE scenarios SET digest = ? WHERE name = ?", [digest(as_v4(ledger.frame)), ledger.name])
        con.execute("UPDATE scenarios SET schema_version = 4")
        con.execute("UPDATE calsim_meta SET value = '4' WHERE key = 'schema_version'")


def catalog(con) -> dict:
    """What a migration must keep or change, per scenario table: its columns and its CHECK expressions."""
    tables = [r[0] for r in con.execute("SELECT table_name FROM duckdb_tables() "
                                        "WHERE regexp_full_match(table_name, 'occ_[0-9]+') ORDER BY 1").fetchall()]
    return {t: (
        [r[0] for r in con.execute("SELECT column_name FROM duckdb_columns() WHERE table_name = ? "
                                   "ORDER BY column_index", [t]).fetchall()],
        [r[0] for r in con.execute("SELECT expression FROM duckdb_constraints() WHERE table_name = ? "
                                   "AND constraint_type = 'CHECK' ORDER BY 1", [t]).fetchall()]) for t in tables}


def reasons(con) -> list[str]:
    return [r[0] for r in con.execute("SELECT unnest(enum_range(NULL::calsim_reason))").fetchall()]


def version(con) -> str:
    return con.execute("SELECT value FROM calsim_meta WHERE key = 'schema_version'").fetchall()[0][0]


# -- worker-level ledgers in a new store -----------------------------------------------------------------------


def test_the_worker_columns_are_the_ledgers_last_five_with_their_dtypes():
    assert {c: LEDGER_SCHEMA[c] for c in WORKER_COLUMNS} == {
        "window_start_utc": UTC, "window_end_utc": UTC, "worker": pl.Int32, "effects": pl.Int32,
        "rate_wait_s": pl.Float64}
    assert set(NEW_REASONS) <= set(LEDGER_REASONS)


@pytest.mark.parametrize("which", ["faulty", "duplicated"])
def test_a_worker_level_ledger_reads_back_equal_and_its_columns_answer_sql(which, request, tmp_path):
    ledger = request.getfixturevalue(which)
    frame = ledger.frame
    assert frame["worker"].null_count() < frame.height  # the scenario is worker-level indeed
    with LedgerStore(tmp_path / "l.duckdb") as store:
        assert store.write(ledger) is True
        assert store.ledger(ledger.name).equals(frame)
        assert store.write(ledger) is False  # writing it again changes nothing
        cols = ", ".join(WORKER_COLUMNS)
        got = store.sql(f"SELECT {cols} FROM occurrences WHERE scenario = $1 ORDER BY seq", [ledger.name])
        assert got.equals(frame.select(WORKER_COLUMNS))
        by_reason = store.sql("SELECT reason::VARCHAR AS reason, count(*) AS n FROM occurrences "
                              "WHERE scenario = $1 AND reason IS NOT NULL GROUP BY 1 ORDER BY 1", [ledger.name])
    want = (frame.filter(pl.col("reason").is_not_null()).group_by(pl.col("reason").cast(pl.String)).len("n")
            .sort("reason"))
    assert by_reason.equals(want.cast({"n": pl.Int64}))
    assert set(by_reason["reason"]) & set(NEW_REASONS)


def test_every_new_reason_is_stored_and_read_back_from_the_file(hourly, tmp_path):
    frame = hourly.frame.with_columns(
        pl.Series("reason", list(NEW_REASONS) + [None] * (hourly.frame.height - len(NEW_REASONS)),
                  LEDGER_SCHEMA["reason"]))
    path = tmp_path / "l.duckdb"
    with LedgerStore(path) as store:
        store.write(frame, name="hourly")
    with LedgerStore(path, read_only=True) as store:
        assert store.ledger("hourly").equals(frame)
        assert [store.compare("hourly")[f"reason_{r}"][0] for r in NEW_REASONS] == [1] * 5


def test_a_changed_worker_column_makes_a_different_ledger(faulty):
    other = faulty.frame.with_columns(pl.when(pl.int_range(pl.len()) == 0).then(3).otherwise(pl.col("effects"))
                                      .cast(pl.Int32).alias("effects"))
    with LedgerStore() as store:
        store.write(faulty)
        with pytest.raises(ScenarioExistsError, match="a different ledger is already stored as 'wf'"):
            store.write(other, name="wf")
        assert store.write(other, name="wf", replace=True) is True
        assert store.ledger("wf").equals(other)


def test_compare_reports_duplicate_effects_and_rate_wait_max_as_ledger_summary_does(faulty, duplicated, hourly):
    with LedgerStore() as store:
        for ledger in (faulty, duplicated, hourly):
            store.write(ledger)
        cmp = store.compare(["wf", "dup", "hourly"])
    for row, ledger in zip(cmp.iter_rows(named=True), (faulty, duplicated, hourly)):
        summary = ledger.summary(full=True).row(0, named=True)  # every column, as compare has them
        assert (row["duplicate_effects"], row["rate_wait_max"]) == (summary["duplicate_effects"],
                                                                    summary["rate_wait_max"])
        for r in NEW_REASONS:
            assert row[f"reason_{r}"] == summary[r]
    assert cmp.schema["duplicate_effects"] == pl.Int64 and cmp.schema["rate_wait_max"] == pl.Duration("us")
    assert cmp["duplicate_effects"][1] > 0 and cmp["duplicate_effects"][2] == 0  # not a vacuous equality
    assert cmp["rate_wait_max"][0].total_seconds() > 0 and cmp["rate_wait_max"][2] is None


# Effects and rate waits as any frame may hold them: nulls, zero, negatives, Int32's extremes, waits to the
# microsecond up to ten years (what seconds_to_duration turns into Durations).
_effects = st.one_of(st.none(), st.integers(-2**31, 2**31 - 1), st.integers(-1, 4))
_waits = st.one_of(st.none(), st.just(0.0), st.integers(-10**6, 316 * 10**12).map(lambda us: us / 1e6))


@settings(max_examples=25, deadline=None)
@given(st.lists(st.tuples(_effects, _waits), min_size=24, max_size=24))
def test_compare_equals_summary_on_any_effects_and_rate_waits(hourly, values):
    frame = hourly.frame.with_columns(pl.Series("effects", [e for e, _ in values], pl.Int32),
                                      pl.Series("rate_wait_s", [w for _, w in values], pl.Float64))
    with LedgerStore() as store:
        store.write(frame, name="hourly")
        got = store.compare("hourly").select("duplicate_effects", "rate_wait_max")
    assert got.equals(views.summary(frame, "hourly").collect().select("duplicate_effects", "rate_wait_max"))


# -- attaching a dataset written before the worker-level columns -------------------------------------------------


def test_a_dataset_written_before_the_worker_columns_attaches_with_them_null(daily, tmp_path):
    d = write_old_dataset(tmp_path, daily, _daily_scenario())
    with LedgerStore() as store:
        assert store.attach(d) is True
        assert store.ledger("ds").equals(daily.frame)
        row = store.compare("ds").row(0, named=True)
    assert (row["done"], row["duplicate_effects"], row["rate_wait_max"]) == (daily.frame.height, 0, None)


def test_a_dataset_missing_another_column_is_refused_and_nothing_attached(daily, tmp_path):
    d = write_old_dataset(tmp_path, daily, _daily_scenario())
    part = f"{d}/part-00000.parquet"
    pl.read_parquet(part).drop("cost").write_parquet(part)
    with LedgerStore() as store:
        with pytest.raises(StoreError, match='cannot write dataset .*"cost"'):
            store.attach(d)
        assert store.scenarios().height == 0


# -- migrating a layout-4 store -----------------------------------------------------------------------------------


@pytest.fixture
def v4_file(hourly, daily, tmp_path):
    path = tmp_path / "v4.duckdb"
    make_v4(path, [hourly], {"ds": write_old_dataset(tmp_path / "data", daily, _daily_scenario())})
    with duckdb.connect(str(path), read_only=True) as con:  # the fixture is layout 4
        assert version(con) == "4" and reasons(con) == list(V4_REASONS)
        assert all(cols == ["seq", *V4_COLUMNS] for cols, _ in catalog(con).values())
        assert [d[0] for d in con.sql("SELECT * FROM occurrences").description] == ["seq", *V4_COLUMNS]
    return path


def test_a_version_4_store_must_be_opened_for_writing_once_to_migrate(v4_file):
    with pytest.raises(SchemaVersionError, match="version 4; open it without read_only once to migrate it to 5"):
        LedgerStore(v4_file, read_only=True)


def test_a_version_4_store_is_migrated_and_reads_as_a_new_store_holding_the_same_ledgers(v4_file, hourly, daily):
    assert SCHEMA_VERSION == 5
    with LedgerStore(v4_file) as store:
        assert version(store._con) == "5" and reasons(store._con) == list(LEDGER_REASONS)
        occ_columns = [d[0] for d in store._con.sql("SELECT * FROM occurrences").description]
        assert occ_columns == ["seq", *LEDGER_SCHEMA.names()]
        assert store.ledger("hourly").equals(hourly.frame)  # the worker-level columns null
        assert store.ledger("ds").equals(daily.frame)
        assert store.write(hourly) is False  # its layout-4 digest is not comparable: the rows are, and match
        migrated = store.compare(["hourly", "ds"])
        gaps = store.sql("SELECT * FROM observation_gaps ORDER BY ALL")
        counts = store.sql("SELECT * FROM state_counts ORDER BY ALL")
    with LedgerStore() as fresh:
        fresh.write(hourly)
        fresh.write(daily)
        assert migrated.equals(fresh.compare(["hourly", "ds"]))
        assert gaps.equals(fresh.sql("SELECT * FROM observation_gaps ORDER BY ALL"))
        assert counts.equals(fresh.sql("SELECT * FROM state_counts ORDER BY ALL"))
    with LedgerStore(v4_file, read_only=True) as store:  # migrated once, for good
        assert store.ledger("hourly").equals(hourly.frame)


def test_a_migrated_store_refuses_a_different_ledger_under_an_old_name(v4_file, hourly):
    other = hourly.frame.with_columns(pl.col("cost") + 1.0)
    with LedgerStore(v4_file) as store:
        with pytest.raises(ScenarioExistsError, match="a different ledger is already stored as 'hourly'"):
            store.write(other, name="hourly")
        assert store.ledger("hourly").equals(hourly.frame)


def test_a_migrated_store_takes_worker_level_ledgers_beside_the_old_ones(v4_file, faulty, duplicated, hourly):
    with LedgerStore(v4_file) as store:
        store.write(faulty)
        store.write(duplicated)
    with LedgerStore(v4_file, read_only=True) as store:
        for ledger in (faulty, duplicated, hourly):
            assert store.ledger(ledger.name).equals(ledger.frame)
        cmp = store.compare(["wf", "dup", "hourly", "ds"])
        workers = store.sql("SELECT scenario, count(worker) AS n FROM occurrences GROUP BY 1 ORDER BY 1")
    want = pl.concat([faulty.summary(full=True), duplicated.summary(full=True)]).select("duplicate_effects",
                                                                                      "rate_wait_max")
    assert cmp.head(2).select(want.columns).equals(want) and want["duplicate_effects"][1] > 0
    assert cmp.tail(2).select(want.columns).rows() == [(0, None), (0, None)]
    assert dict(workers.iter_rows()) == {"ds": 0, "dup": duplicated.frame.height, "hourly": 0,
                                         "wf": faulty.frame.height}


def test_the_migration_keeps_every_scenario_table_sealed(v4_file):
    with duckdb.connect(str(v4_file), read_only=True) as con:
        before = catalog(con)
    with LedgerStore(v4_file) as store:
        after = catalog(store._con)
        assert list(after) == list(before) and len(after) == 1  # the attached dataset is a view
        for table, (cols, checks) in after.items():
            assert cols == before[table][0] + list(WORKER_COLUMNS)
            assert checks == before[table][1] and len(checks) == 2  # the scenario pin and the fill gate
            with pytest.raises(duckdb.ConstraintException):
                store._con.execute(f'INSERT INTO "{table}" SELECT * FROM "{table}" LIMIT 1')
            with pytest.raises(duckdb.ConstraintException):
                store._con.execute(f'UPDATE "{table}" SET worker = 1')
            assert store.sql(f'SELECT count(worker) AS n FROM "{table}"')["n"][0] == 0


def test_a_failed_migration_leaves_the_version_4_file_as_it_was(v4_file, hourly, monkeypatch):
    with duckdb.connect(str(v4_file), read_only=True) as con:
        before = catalog(con)
    real = calsim.store.migrations.add_ledger_columns
    seen = []

    def boom(con, table, columns):
        seen.append(table)
        if len(seen) == 2:  # the reasons rebuilt and the attached dataset's view ("ds") widened already
            raise RuntimeError("interrupted")
        return real(con, table, columns)

    monkeypatch.setattr(calsim.store.migrations, "add_ledger_columns", boom)
    with pytest.raises(RuntimeError, match="interrupted"):
        LedgerStore(v4_file)
    with duckdb.connect(str(v4_file), read_only=True) as con:
        assert version(con) == "4" and reasons(con) == list(V4_REASONS) and catalog(con) == before
    monkeypatch.undo()
    with LedgerStore(v4_file) as store:
        assert store.ledger("hourly").equals(hourly.frame)


def test_a_version_1_file_from_before_the_worker_columns_is_migrated_to_5(hourly, tmp_path):
    """Layout 1 kept every scenario in one ``occurrences`` table with a PRIMARY KEY (and no ``stuck``)."""
    path = tmp_path / "v1.duckdb"

    def v1(stmt: str) -> str:  # DDL_V1 as it was: layout 1's reasons, the ledger's columns of then
        if stmt.startswith("CREATE TYPE calsim_reason"):
            return "CREATE TYPE calsim_reason AS " + enum_sql(V4_REASONS[:-1])
        if stmt.startswith("CREATE TABLE occurrences"):
            return ("CREATE TABLE occurrences (seq BIGINT NOT NULL, "
                    + columns_sql(pl.Schema({c: LEDGER_SCHEMA[c] for c in V4_COLUMNS}), KEY)
                    + ", PRIMARY KEY (" + ", ".join(KEY) + "))")
        return stmt

    with LedgerStore() as new:
        new.write(hourly)
        scen = new.sql("SELECT * FROM scenarios").with_columns(pl.lit(1, pl.Int32).alias("schema_version"),
                                                             pl.lit(digest(as_v4(hourly.frame))).alias("digest"))
        sched = new.sql("SELECT * FROM schedules")
        occ = new.sql("SELECT * FROM occurrences").select("seq", *V4_COLUMNS)
    with duckdb.connect(str(path)) as con:
        con.execute("SET TimeZone = 'UTC'")
        for stmt in DDL_V1:
            con.execute(v1(stmt))
        con.execute("INSERT INTO calsim_meta VALUES ('schema_version', '1')")
        for table, frame in (("scenarios", scen), ("schedules", sched), ("occurrences", occ)):
            con.register("src", frame.to_arrow())
            con.execute(f"INSERT INTO {table} BY NAME SELECT * FROM src")
            con.unregister("src")
    with LedgerStore(path) as store:
        assert version(store._con) == "5" and reasons(store._con) == list(LEDGER_REASONS)
        assert store.ledger("hourly").equals(hourly.frame)
        assert store.write(hourly) is False


# -- a failed write leaves the store as it was -----------------------------------------------------------------------


def snapshot(store: LedgerStore) -> tuple:
    con = store._con
    return (catalog(con), con.execute("SELECT type_name FROM duckdb_types() WHERE type_name LIKE 'occ_%' "
                                      "ORDER BY 1").fetchall(),
            con.execute("SELECT * EXCLUDE (created) FROM scenarios ORDER BY name").fetchall(),
            con.execute("SELECT * FROM schedules ORDER BY ALL").fetchall(),
            con.execute("SELECT scenario, count(*), count(worker) FROM occurrences GROUP BY 1 ORDER BY 1").fetchall())


def test_a_worker_level_ledger_with_a_repeated_key_is_refused_and_the_store_unchanged(v4_file, faulty):
    twice = pl.concat([faulty.frame, faulty.frame.tail(1)])
    with LedgerStore(v4_file) as store:
        before = snapshot(store)
        with pytest.raises(DuplicateKeyError, match="share a primary key in 'wf'"):
            store.write(twice, name="wf")
        assert snapshot(store) == before


def test_a_worker_level_write_failing_at_publication_leaves_the_store_unchanged(v4_file, faulty, monkeypatch):
    with LedgerStore(v4_file) as store:
        store.write(faulty)
        before = snapshot(store)

        def boom(*a, **k):
            raise RuntimeError("disk gone")

        monkeypatch.setattr(calsim.store.writer, "schedules_frame", boom)
        other = faulty.frame.with_columns(pl.col("rate_wait_s") + 1.0)
        with pytest.raises(RuntimeError, match="disk gone"):
            store.write(other, name="wf", replace=True)
        assert snapshot(store) == before
        assert store.ledger("wf").equals(faulty.frame)
