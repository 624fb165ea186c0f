"""LedgerStore: round trip, idempotence, atomicity, locking, reconciliation, bad input, views."""

from __future__ import annotations

import datetime as dt
import signal
import subprocess
import sys
import textwrap
import time

import duckdb
import numpy as np
import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import calsim
from calsim.simulation.ledger import LEDGER_SCHEMA
from calsim.store import (
    SCHEMA_VERSION,
    DuplicateKeyError,
    LedgerLockedError,
    LedgerSchemaError,
    LedgerStore,
    ScenarioExistsError,
    SchemaVersionError,
    StoreError,
    UnknownScenarioError,
)
from calsim.store.migrations import MIGRATIONS
from calsim.tzchanges import TZDIFF_SCHEMA

UTC = dt.timezone.utc
START, END = "2026-03-01T00:00Z", "2026-04-01T00:00Z"


def fleet(catchup: str = "all") -> list[calsim.Schedule]:
    pol = calsim.Policy(catchup=catchup, duration="1min", cost=1.5, account="tenant-a")
    return [
        calsim.Schedule("hourly", "UTC", "2026-01-01T00:00", "FREQ=HOURLY", policy=pol),
        # 02:30 New York meets the 2026-03-08 spring-forward gap (gap-skipped row, dst_gap_skipped note).
        calsim.Schedule("ny-0230", "America/New_York", "2026-01-01T02:30", "FREQ=DAILY", policy=pol),
        calsim.Schedule("berlin-0900", "Europe/Berlin", "2026-01-01T09:00", "FREQ=DAILY",
                        policy=calsim.Policy(catchup=catchup)),
    ]


def scenario(name: str, catchup: str = "all", outage: bool = True) -> calsim.Scenario:
    outages = [calsim.Outage("2026-03-10T03:30Z", "2026-03-12T07:10Z")] if outage else []
    return calsim.Scenario(name, fleet(catchup), START, END, release="2026f", outages=outages)


def assert_same_gaps(view: pl.DataFrame, want: pl.DataFrame) -> None:
    """The store's observation_gaps rows equal Ledger.gaps() with its Durations as seconds (as csv/json carry them)."""
    from polars.testing import assert_frame_equal

    from calsim.text_table import durations_as_seconds

    want = durations_as_seconds(want)
    assert view.columns == want.columns
    assert_frame_equal(view.select(pl.col(c).cast(want.schema[c]) for c in want.columns), want, check_exact=True)


@pytest.fixture(scope="module")
def runs() -> dict[str, calsim.Ledger]:
    return {n: calsim.simulate(scenario(n, n), progress=False) for n in ("all", "latest", "skip")}


def count(store: LedgerStore, table: str) -> int:
    return store.sql(f"SELECT count(*) AS n FROM {table}")["n"][0]


class TestRoundTrip:
    def test_ledger_reads_back_equal_with_dtypes(self, runs):
        ledger = runs["latest"]
        with LedgerStore() as store:
            assert store.write(ledger, scenario=scenario("latest", "latest")) is True
            back = store.ledger("latest")
        assert back.schema == LEDGER_SCHEMA
        assert back.equals(ledger.frame)
        assert back["due_utc"].dtype == pl.Datetime("us", "UTC")
        assert back["nominal_local"].dtype == pl.Datetime("us")
        assert back.filter(pl.col("notes").list.contains("dst_gap_skipped")).height == 1

    def test_file_round_trip_survives_reopen(self, runs, tmp_path):
        path = tmp_path / "l.duckdb"
        with LedgerStore(path) as store:
            for ledger in runs.values():
                store.write(ledger)
        with LedgerStore(path, read_only=True) as store:
            for name, ledger in runs.items():
                assert store.ledger(name).equals(ledger.frame)

    def test_scenarios_record_horizon_release_parameters_and_versions(self, runs):
        with LedgerStore() as store:
            store.write(runs["all"], scenario=scenario("all"))
            store.write(runs["skip"])
            sc = store.scenarios()
            sched = store.sql("SELECT * FROM schedules WHERE scenario = 'all' ORDER BY schedule_id")
        assert sc["name"].to_list() == ["all", "skip"]
        row = sc.row(0, named=True)
        assert row["horizon_start"] == dt.datetime(2026, 3, 1, tzinfo=UTC)
        assert row["horizon_end"] == dt.datetime(2026, 4, 1, tzinfo=UTC)
        assert row["release"] == "2026f"
        assert row["calsim_version"] == calsim.__version__ and row["schema_version"] == SCHEMA_VERSION
        assert "\"name\": \"all\"" in row["parameters"] and "\"schedules\": 3" in row["parameters"]
        assert "\"name\": \"skip\"" in sc.row(1, named=True)["parameters"]  # a Ledger carries its Scenario
        assert sched["schedule_id"].to_list() == ["berlin-0900", "hourly", "ny-0230"]
        assert sched["rule"].to_list() == ["FREQ=DAILY", "FREQ=HOURLY", "FREQ=DAILY"]
        assert '"catchup": "all"' in sched["policy"][0]
        assert sched["account"].to_list() == [None, "tenant-a", "tenant-a"]

    def test_a_revision_made_by_a_revise_event_is_stored_with_its_rule_and_policy(self):
        # Before, the store wrote rule and policy of the fleet's schedules only: (a, 2) had nulls,
        # where a Dask dataset's _scenario.json recorded FREQ=HOURLY (calsim.simulation.scenario_records).
        from calsim.distributed.metadata import metadata

        new = calsim.Schedule("a", "UTC", "2026-01-01T00:00", "FREQ=HOURLY", policy=calsim.Policy(account="t2"))
        sc = calsim.Scenario("s", [calsim.Schedule("a", "UTC", "2026-01-01T00:00", "FREQ=DAILY")],
                             "2026-01-01T00:00Z", "2026-01-10T00:00Z",
                             events=[calsim.Revise("2026-01-05T00:00Z", new)])
        with LedgerStore() as store:
            store.write(calsim.simulate(sc, progress=False))
            rows = store.sql("SELECT schedule_id, revision, zone, account, rule, policy FROM schedules "
                             "ORDER BY schedule_id, revision").to_dicts()
        assert [(r["revision"], r["rule"], r["account"]) for r in rows] == [(1, "FREQ=DAILY", "t2"),
                                                                           (2, "FREQ=HOURLY", "t2")]
        assert rows[0]["policy"] is None and '"account": "t2"' in rows[1]["policy"]
        assert rows == metadata(sc, [], calsim.__version__, 0.0)["schedules"]  # what an attached dataset records


class TestWriteTwice:
    def test_writing_the_same_ledger_twice_changes_nothing(self, runs):
        with LedgerStore() as store:
            assert store.write(runs["all"]) is True
            before = store.sql("SELECT * FROM scenarios")
            assert store.write(runs["all"]) is False
            assert store.sql("SELECT * FROM scenarios").equals(before)
            assert count(store, "occurrences") == len(runs["all"])
            assert store.ledger("all").equals(runs["all"].frame)

    def test_a_different_ledger_under_an_existing_name_is_refused(self, runs):
        other = runs["latest"].frame.with_columns(pl.lit("all").alias("scenario"))
        with LedgerStore() as store:
            store.write(runs["all"])
            with pytest.raises(ScenarioExistsError,
                               match="a different ledger is already stored as 'all'.*replace=True"):
                store.write(other, name="all")
            assert store.ledger("all").equals(runs["all"].frame)

    def test_replace_true_replaces_atomically(self, runs):
        other = runs["latest"].frame.with_columns(pl.lit("all").alias("scenario"))
        with LedgerStore() as store:
            store.write(runs["all"])
            store.write(runs["skip"])
            assert store.write(other, name="all", replace=True) is True
            assert store.ledger("all").equals(other)
            assert store.ledger("skip").equals(runs["skip"].frame)
            assert count(store, "occurrences") == other.height + len(runs["skip"])


# A writer killed in the middle of a write must leave the file openable, the
# earlier scenarios intact and the interrupted one absent (or complete).
WRITER = textwrap.dedent("""
    import sys, polars as pl
    from calsim.store import LedgerStore
    from calsim.store.connection import Connection
    frame = pl.read_parquet(sys.argv[2])
    transaction = Connection.transaction
    def traced(self, body):  # say when the write transaction has begun
        def run(con):
            print("begun", flush=True)
            return body(con)
        return transaction(self, run)
    Connection.transaction = traced
    with LedgerStore(sys.argv[1]) as store:
        store.write(frame, name="big", replace=sys.argv[3] == "replace")
        print("done", flush=True)
""")


def big_frame(ledger: calsim.Ledger, copies: int) -> pl.DataFrame:
    f = ledger.frame.with_columns(pl.lit("big").alias("scenario"))
    return pl.concat([f.with_columns(pl.col("schedule_id") + f"-{i}") for i in range(copies)])


class TestCrashSafety:
    @pytest.mark.parametrize("mode", ["new", "replace"])
    def test_sigkill_mid_write_leaves_previous_state(self, runs, tmp_path, mode):
        path, data = tmp_path / "l.duckdb", tmp_path / "big.parquet"
        big = big_frame(runs["all"], 600)  # ~500k rows: a write of a second or more
        big.write_parquet(data)
        small = runs["skip"].frame.with_columns(pl.lit("big").alias("scenario"))
        with LedgerStore(path) as store:
            store.write(runs["all"])
            if mode == "replace":
                store.write(small, name="big")
        proc = subprocess.Popen([sys.executable, "-c", WRITER, str(path), str(data), mode],
                                stdout=subprocess.PIPE, text=True)
        assert proc.stdout.readline().strip() == "begun"
        time.sleep(0.1)  # inside the INSERT of ~500k rows, which takes about a second
        proc.send_signal(signal.SIGKILL)
        rest = proc.stdout.read()
        proc.wait()
        assert proc.returncode == -signal.SIGKILL
        assert "done" not in rest, "the writer finished before it was killed: make the frame larger"
        with LedgerStore(path) as store:
            assert store.ledger("all").equals(runs["all"].frame)
            if mode == "new":
                assert store.scenarios()["name"].to_list() == ["all"]
            else:
                assert store.ledger("big").equals(small)
            assert count(store, "occurrences") == len(runs["all"]) + (small.height if mode == "replace" else 0)
            # The store still takes writes after the crash.
            assert store.write(big, name="big", replace=True) is True
            assert store.ledger("big").height == big.height


HOLDER = textwrap.dedent("""
    import sys, time
    from calsim.store import LedgerStore
    store = LedgerStore(sys.argv[1])
    print("ready", flush=True)
    time.sleep(60)
""")


class TestConcurrency:
    def test_a_second_writer_process_gets_ledger_locked_error(self, tmp_path):
        path = tmp_path / "l.duckdb"
        LedgerStore(path).close()
        holder = subprocess.Popen([sys.executable, "-c", HOLDER, str(path)], stdout=subprocess.PIPE, text=True)
        try:
            assert holder.stdout.readline().strip() == "ready"
            with pytest.raises(LedgerLockedError, match=f"{path}.*open for writing in another process.*read_only=True"):
                LedgerStore(path)
            with pytest.raises(LedgerLockedError):
                LedgerStore(path, read_only=True)
        finally:
            holder.kill()
            holder.wait()
        LedgerStore(path).close()  # the lock goes with the process

    def test_read_only_store_reads_and_refuses_writes(self, runs, tmp_path):
        path = tmp_path / "l.duckdb"
        with LedgerStore(path) as store:
            store.write(runs["all"])
        with LedgerStore(path, read_only=True) as a, LedgerStore(path, read_only=True) as b:
            assert a.ledger("all").equals(b.ledger("all"))
            with pytest.raises(StoreError, match="read_only=True"):
                a.write(runs["skip"])


class TestSchemaVersion:
    def test_a_newer_schema_version_is_a_clear_error(self, tmp_path):
        path = tmp_path / "l.duckdb"
        LedgerStore(path).close()
        with duckdb.connect(str(path)) as con:
            con.execute("UPDATE calsim_meta SET value = '99' WHERE key = 'schema_version'")
        with pytest.raises(SchemaVersionError, match=f"schema version 99, newer than {SCHEMA_VERSION}.*upgrade calsim"):
            LedgerStore(path)
        with duckdb.connect(str(path)) as con:  # the failed open released the file
            assert con.execute("SELECT value FROM calsim_meta").fetchall() == [("99",)]

    def test_an_older_version_runs_the_migration_hook(self, tmp_path, monkeypatch):
        path = tmp_path / "l.duckdb"
        LedgerStore(path).close()
        with duckdb.connect(str(path)) as con:  # today's layout is also one layout 4 may be (columns aside)
            con.execute("UPDATE calsim_meta SET value = '4' WHERE key = 'schema_version'")
        # Stand in for the 4 -> 5 step (the real ones are tested in tests/store/test_tables.py and
        # tests/store/test_migrations.py): the hook runs, in the transaction that records version 5.
        monkeypatch.setitem(MIGRATIONS, 4, lambda con: con.execute("CREATE TABLE migrated (x INTEGER)"))
        with LedgerStore(path) as store:
            assert store.sql("SELECT value FROM calsim_meta")["value"].to_list() == [str(SCHEMA_VERSION)]
            assert count(store, "migrated") == 0

    @pytest.mark.parametrize("value", ["0", "-1", "x", "", " 5", "5.0", str(10**30)])
    def test_a_schema_version_that_is_no_known_layout_is_refused_before_any_migration(self, tmp_path, value):
        path = tmp_path / "l.duckdb"
        LedgerStore(path).close()
        with duckdb.connect(str(path)) as con:
            con.execute("UPDATE calsim_meta SET value = ? WHERE key = 'schema_version'", [value])
        for read_only in (False, True):
            with pytest.raises(StoreError, match=r"calsim_meta.schema_version is .*, expected a layout version, "
                                                 r"a whole number from 1 to 5$"):
                LedgerStore(path, read_only=read_only)

    def test_a_file_that_is_not_duckdb_is_a_store_error(self, tmp_path):
        path = tmp_path / "notes.txt"
        path.write_text("not a database\n" * 1000)
        with pytest.raises(StoreError, match="cannot open .*notes.txt.* as a DuckDB database"):
            LedgerStore(path)

    def test_a_foreign_duckdb_file_is_not_taken_for_a_store(self, tmp_path):
        path = tmp_path / "other.duckdb"
        with duckdb.connect(str(path)) as con:
            con.execute("CREATE TABLE t (x INTEGER)")
        with pytest.raises(StoreError, match="not a calsim ledger store"):
            LedgerStore(path)


class TestBadInput:
    @pytest.fixture
    def store(self, runs):
        with LedgerStore() as s:
            s.write(runs["skip"])
            yield s

    def assert_unchanged(self, store, runs):
        assert store.scenarios()["name"].to_list() == ["skip"]
        assert count(store, "occurrences") == len(runs["skip"])

    def test_missing_column(self, store, runs):
        with pytest.raises(LedgerSchemaError, match="ledger: missing column 'cost' \\(expected Float64\\)"):
            store.write(runs["all"].frame.drop("cost"), name="all")
        self.assert_unchanged(store, runs)

    def test_wrong_dtype(self, store, runs):
        bad = runs["all"].frame.with_columns(pl.col("due_utc").dt.replace_time_zone(None))
        with pytest.raises(LedgerSchemaError, match="column 'due_utc' has dtype Datetime.*expected Datetime.*UTC"):
            store.write(bad, name="all")
        self.assert_unchanged(store, runs)

    def test_duplicate_key_inside_one_ledger_is_refused_and_nothing_published(self, store, runs):
        f = runs["all"].frame
        with pytest.raises(DuplicateKeyError, match=r"ledger: 2 rows share a primary key in 'all', e.g. "
                                                    r"\(schedule_id=hourly, revision=1, "
                                                    r"nominal_local=2026-03-01 00:00:00, fold=0, kind=scheduled\); "
                                                    r"nothing written"):
            store.write(pl.concat([f, f.head(1)]), name="all")
        self.assert_unchanged(store, runs)

    def test_null_in_a_key_column(self, store, runs):
        bad = runs["all"].frame.with_columns(
            pl.when(pl.int_range(pl.len()) == 3).then(None).otherwise(pl.col("fold")).alias("fold"))
        with pytest.raises(LedgerSchemaError, match="key columns may not be null, got nulls in {'fold': 1}"):
            store.write(bad, name="all")
        self.assert_unchanged(store, runs)

    def test_a_failed_replace_keeps_the_old_ledger(self, store, runs):
        f = runs["all"].frame.with_columns(pl.lit("skip").alias("scenario"))
        with pytest.raises(DuplicateKeyError):
            store.write(pl.concat([f, f.tail(1)]), name="skip", replace=True)
        self.assert_unchanged(store, runs)
        assert store.ledger("skip").equals(runs["skip"].frame)

    @pytest.mark.parametrize("name", ["", "   ", "x" * 201])
    def test_empty_or_too_long_name(self, store, runs, name):
        f = runs["all"].frame.with_columns(pl.lit(name).alias("scenario"))
        with pytest.raises(calsim.InputError, match="name: "):
            store.write(f, name=name)
        self.assert_unchanged(store, runs)

    def test_scenario_column_must_match_the_name(self, store, runs):
        with pytest.raises(calsim.InputError, match="column 'scenario' holds 'all', expected 'other'"):
            store.write(runs["all"], name="other")
        self.assert_unchanged(store, runs)

    def test_unknown_scenario(self, store):
        with pytest.raises(UnknownScenarioError, match="no scenario 'nope'"):
            store.ledger("nope")
        with pytest.raises(KeyError):
            store.compare(["skip", "nope"])

    def test_bad_sql_is_a_store_error(self, store):
        with pytest.raises(StoreError, match="query: "):
            store.sql("SELECT * FROM no_such_table")


@pytest.fixture(scope="module")
def views_store(runs):
    with LedgerStore() as s:
        for ledger in runs.values():
            s.write(ledger)
        yield s


KEY_SCHEMA = {c: LEDGER_SCHEMA[c] for c in ("schedule_id", "revision", "nominal_local", "fold", "kind")}
_I64 = (-2**63, 2**63 - 1)


def keys_frame(rows: list[tuple]) -> pl.DataFrame:
    """A frame of key columns, ``nominal_local`` given in epoch microseconds."""
    out = pl.DataFrame(rows, schema={**KEY_SCHEMA, "nominal_local": pl.Int64}, orient="row")
    return out.with_columns(pl.col("nominal_local").cast(pl.Datetime("us")))


class TestKeyCheck:
    """The write's own check of the key (calsim.store.ledger_records.repeats_a_key), against polars' is_duplicated."""

    @settings(max_examples=150, deadline=None)
    @given(st.lists(st.tuples(
        st.sampled_from(["a", "b", "o'brien", "ü" * 3]),
        st.one_of(st.integers(0, 3), st.sampled_from(_I64)),
        st.one_of(st.sampled_from([0, 60_000_000, 86_400_000_000, 315_576_000_000_000, 1]), st.integers(*_I64)),
        st.integers(0, 1), st.sampled_from(["scheduled", "manual"])), min_size=0, max_size=12),
        st.data())
    def test_repeats_a_key_agrees_with_polars(self, rows, data):
        from calsim.store.ledger_records import repeats_a_key

        if rows and data.draw(st.booleans()):
            rows = rows + [rows[data.draw(st.integers(0, len(rows) - 1))]]  # often a real repeat
        frame = keys_frame(rows)
        assert repeats_a_key(frame) == bool(frame.select(pl.struct(list(KEY_SCHEMA)).is_duplicated().any()).item())

    @pytest.mark.parametrize("span_us, packs", [
        (365 * 86_400_000_000, True),  # a year in microseconds: packed as it is
        (10 * 365 * 86_400_000_000, True),  # ten years over 2**17 ids: minutes and microseconds past them
        (2**62, False),  # no room left: polars decides
    ])
    def test_keys_pack_into_one_int64_while_they_fit(self, span_us, packs):
        from calsim.store.ledger_records import packed_keys

        ids = [f"s{i}" for i in range(2**17)]
        times = [0, span_us] + [60_000_000] * (len(ids) - 2)
        frame = keys_frame([(i, 1, t, 0, "scheduled") for i, t in zip(ids, times)])
        key = packed_keys(frame)
        assert (key is not None) == packs
        if packs:
            assert len(np.unique(key)) == frame.height

    def test_keys_one_microsecond_or_one_fold_apart_are_different(self):
        from calsim.store.ledger_records import repeats_a_key

        day = 86_400_000_000
        frame = keys_frame([("a", 1, day, 0, "scheduled"), ("a", 1, day + 1, 0, "scheduled"),
                            ("a", 1, day, 1, "scheduled"), ("a", 1, day, 0, "manual"), ("a", 2, day, 0, "scheduled"),
                            ("b", 1, day, 0, "scheduled"), ("a", 1, 20 * 365 * day, 0, "scheduled")])
        assert not repeats_a_key(frame)
        assert repeats_a_key(pl.concat([frame, frame[1:2]]))


class TestQuoting:
    """Every name and value put into the store's SQL text goes through calsim.store.sql."""

    def test_a_quote_inside_a_name_or_a_value_is_doubled(self):
        from calsim.store.sql import identifier, literal

        assert identifier('a"b') == '"a""b"' and literal("it's") == "'it''s'"
        name, value = 'a" b', "'x\""
        row = duckdb.connect().execute(f"SELECT {literal(value)} AS {identifier(name)}")
        assert [d[0] for d in row.description] == [name] and row.fetchone() == (value,)

    @pytest.mark.parametrize("value", [float("nan"), float("inf"), True, None, b"x"])
    def test_literal_refuses_what_sql_would_not_read_back(self, value):
        from calsim.store.sql import literal

        with pytest.raises((TypeError, ValueError), match="literal: expected"):
            literal(value)

    def test_the_gaps_sql_leaves_out_the_ledgers_by_design_reasons(self):
        from calsim.simulation.ledger_schema import BY_DESIGN_REASONS
        from calsim.store.schema import gaps_sql, gaps_sql_v1
        from calsim.store.sql import literals

        for sql in (gaps_sql("occurrences"), gaps_sql_v1("occurrences")):
            assert sql.count(f"reason NOT IN ({literals(BY_DESIGN_REASONS)})") >= 1

    def test_a_scenario_name_with_quotes_round_trips(self, runs):
        name = """it's "quoted" ' OR 1=1 --"""
        with LedgerStore() as store:
            frame = runs["all"].frame.with_columns(pl.lit(name).alias("scenario"))
            assert store.write(frame, name=name) is True
            assert store.ledger(name).equals(frame)
            assert store.compare([name])["scenario"].to_list() == [name]


class TestViews:
    @pytest.fixture
    def store(self, views_store):
        return views_store

    def test_compare_matches_ledger_summary(self, store, runs):
        cmp = store.compare(["latest", "all", "skip"])
        assert cmp["scenario"].to_list() == ["latest", "all", "skip"]
        for row in cmp.iter_rows(named=True):
            s = runs[row["scenario"]].summary(full=True).row(0, named=True)  # every column, as compare has them
            for k in ("occurrences", "manual", "done", "coalesced", "skipped", "expired", "cancelled", "failed",
                      "lateness_p50", "lateness_p95", "lateness_max"):
                assert row[k] == s[k], (row["scenario"], k)
            assert row["cost"] == pytest.approx(s["cost"])
        latest = cmp.row(0, named=True)
        assert latest["coalesced"] > 0 and latest["reason_catchup"] == latest["coalesced"]
        assert latest["reason_dst_gap"] == 1
        for row in cmp.iter_rows(named=True):
            gaps = runs[row["scenario"]].gaps()
            assert row["longest_gap"] == gaps["gap"].max()
            assert (row["most_missed"], row["most_late"]) == (gaps["missed"].max() or 0, gaps["late"].max() or 0)
        assert cmp.filter(pl.col("scenario") == "all")["most_late"].item() > 0  # catchup="all": late, not missed

    def test_compare_answers_spans_as_durations(self, store):
        cmp = store.compare(["latest", "all"])
        assert {c: cmp.schema[c] for c in ("lateness_p50", "lateness_p95", "lateness_max", "longest_gap")} == {
            c: pl.Duration("us") for c in ("lateness_p50", "lateness_p95", "lateness_max", "longest_gap")}
        assert not [c for c in cmp.columns if c.endswith("_s")]

    def test_observation_gaps_view_equals_ledger_gaps(self, store, runs):
        for name, ledger in runs.items():
            view = store.sql("SELECT * EXCLUDE (scenario) FROM observation_gaps WHERE scenario = $1 "
                             "ORDER BY schedule_id, from_utc NULLS FIRST", [name])
            assert_same_gaps(view, ledger.gaps())

    def test_observation_gaps_view_orders_a_late_catch_up_run_by_its_start(self):
        # catchup="earliest" runs the oldest missed occurrence at recovery: one outage, one gap.
        ledger = calsim.simulate(scenario("earliest", "earliest"), progress=False)
        with LedgerStore() as s:
            s.write(ledger)
            view = s.sql("SELECT * EXCLUDE (scenario) FROM observation_gaps ORDER BY schedule_id, from_utc NULLS FIRST")
        assert ledger.gaps().height
        assert_same_gaps(view, ledger.gaps())

    def test_daily_cost_view_equals_ledger_daily_cost(self, store, runs):
        view = store.sql("SELECT day, account, cost, runs FROM daily_cost WHERE scenario = 'all' "
                         "ORDER BY day, account NULLS FIRST")
        want = runs["all"].daily_cost()
        assert view.with_columns(pl.col("runs").cast(pl.UInt32)).equals(want)

    def test_state_counts_and_lateness_views(self, store, runs):
        sc = store.sql("SELECT state::VARCHAR AS state, sum(rows) AS n FROM state_counts WHERE scenario = 'latest' "
                       "GROUP BY ALL ORDER BY state")
        want = runs["latest"].frame.group_by(pl.col("state").cast(pl.String)).len("n").sort("state")
        assert dict(sc.iter_rows()) == dict(want.iter_rows())
        lat = store.sql("SELECT * FROM lateness ORDER BY scenario")
        assert lat["scenario"].to_list() == ["all", "latest", "skip"]

    def test_export_parquet_writes_every_table(self, store, runs, tmp_path):
        paths = store.export_parquet(tmp_path / "out")
        assert sorted(p.name for p in paths) == ["occurrences.parquet", "scenarios.parquet", "schedules.parquet",
                                                  "tz_diffs.parquet"]
        occ = pl.read_parquet(tmp_path / "out" / "occurrences.parquet")
        assert occ.height == sum(len(x) for x in runs.values())
        latest = occ.filter(pl.col("scenario") == "latest").drop("seq")
        assert latest.select(pl.col("state").cast(pl.String)).to_series().equals(
            runs["latest"].frame["state"].cast(pl.String))

    def test_tz_diffs_round_trip(self, store):
        diff = pl.DataFrame({
            "schedule_id": ["a"], "revision": [1], "nominal_local": [dt.datetime(2026, 10, 25, 2, 30)], "fold": [0],
            "zone": ["Europe/Berlin"], "old_utc": [dt.datetime(2026, 10, 25, 0, 30, tzinfo=UTC)],
            "new_utc": [dt.datetime(2026, 10, 25, 1, 30, tzinfo=UTC)], "shift_s": [3600], "change": ["moved"],
            "old_notes": [["dst_fold_first"]], "new_notes": [[]],
        }, schema=TZDIFF_SCHEMA)
        assert store.write_tzdiff("upgrade", diff) is True
        assert store.write_tzdiff("upgrade", diff) is False
        assert store.tzdiff("upgrade").equals(diff)


# Europe/Berlin daily at 09:00 over 2026-03-20..2026-04-01: the 2026-03-29
# spring-forward moves the instant from 08:00Z to 07:00Z, which a scheduler
# with stale tzdata would miss.
@pytest.fixture(scope="module")
def plan_store():
    s = calsim.Schedule("berlin", "Europe/Berlin", "2026-01-01T09:00", "FREQ=DAILY")
    sc = calsim.Scenario("plan", [s], "2026-03-20T00:00Z", "2026-04-01T00:00Z", release="2026f")
    with LedgerStore() as st:
        st.write(calsim.simulate(sc, progress=False))
        yield st


@pytest.fixture(scope="module")
def history(plan_store):
    plan = plan_store.ledger("plan").select("schedule_id", "nominal_local", pl.col("due_utc").alias("scheduled_utc"),
                                            pl.col("started_utc"), pl.lit("succeeded").alias("status"))
    day = lambda d: plan.filter(pl.col("nominal_local") == dt.datetime(2026, 3, d, 9))  # noqa: E731
    hour = pl.duration(hours=1)
    rows = [
        plan.filter(~pl.col("nominal_local").dt.day().is_in([22, 30])),  # 22nd: missed
        day(24).with_columns(pl.col("started_utc") + pl.duration(seconds=40)),  # duplicate
        # 30th: stale tzdata resolved 09:00 with the winter offset, an hour late
        day(30).with_columns(pl.col("scheduled_utc") + hour, pl.col("started_utc") + hour),
        pl.DataFrame({"schedule_id": ["berlin"], "nominal_local": [dt.datetime(2026, 3, 25, 13)],
                      "scheduled_utc": [dt.datetime(2026, 3, 25, 12, tzinfo=UTC)],
                      "started_utc": [dt.datetime(2026, 3, 25, 12, tzinfo=UTC)], "status": ["succeeded"]},
                     schema=plan.schema),  # stray
    ]
    out = pl.concat(rows)
    # 27th: started 20 minutes late
    return out.with_columns(pl.when(pl.col("nominal_local") == dt.datetime(2026, 3, 27, 9))
                            .then(pl.col("started_utc") + pl.duration(minutes=20)).otherwise("started_utc"))


class TestReconcile:
    @pytest.fixture
    def store(self, plan_store):
        return plan_store

    EXPECT = {22: "missing", 24: "duplicate", 25: "unexpected", 27: "late", 30: "wrong_instant"}

    def check(self, out: pl.DataFrame) -> None:
        by = out.group_by("class").len()
        assert dict(by.iter_rows()) == {"matched": 9, "missing": 1, "duplicate": 1, "unexpected": 1, "late": 1,
                                        "wrong_instant": 1}
        odd = out.filter(pl.col("class") != "matched")
        days = {(r["nominal_local"] or dt.datetime(2026, 3, 25)).day: r["class"]
                for r in odd.iter_rows(named=True)}
        assert days == self.EXPECT
        wrong = odd.filter(pl.col("class") == "wrong_instant").row(0, named=True)
        assert wrong["shift_s"] == 3600 and wrong["due_utc"] == dt.datetime(2026, 3, 30, 7, tzinfo=UTC)

    def test_history_with_nominal_and_utc_times(self, store, history):
        self.check(store.reconcile("plan", history))

    def test_history_with_a_fold_column(self, store, history):
        self.check(store.reconcile("plan", history.with_columns(pl.lit(0, pl.Int64).alias("fold"))))

    def test_history_with_utc_times_only_from_csv(self, store, history, tmp_path):
        p = tmp_path / "runs.csv"
        history.drop("nominal_local").write_csv(p)
        out = store.reconcile("plan", p)
        # The stray run at 12:00Z is within max_shift of no free occurrence (the 25th's 08:00Z is taken).
        self.check(out.with_columns(pl.col("nominal_local")))

    def test_history_from_parquet_with_scheduled_column(self, store, history, tmp_path):
        p = tmp_path / "runs.parquet"
        history.drop("scheduled_utc").rename({"nominal_local": "scheduled"}).write_parquet(p)
        out = store.reconcile("plan", p)
        # Without the production instant, the stale-tzdata run only shows as late.
        by = dict(out.group_by("class").len().iter_rows())
        assert by == {"matched": 9, "missing": 1, "duplicate": 1, "unexpected": 1, "late": 2}

    def test_reconcile_changes_nothing(self, store, history):
        before = store.ledger("plan")
        store.reconcile("plan", history)
        assert store.ledger("plan").equals(before)
        assert store.scenarios()["name"].to_list() == ["plan"]

    def test_reconcile_compares_a_ledger_frame_as_it_compares_the_stored_rows(self, store, history):
        from calsim.store.reconcile import reconcile

        assert reconcile(store.ledger("plan"), history).equals(store.reconcile("plan", history))

    def test_reconcile_of_an_unknown_scenario_names_the_stored_ones(self, store, history):
        with pytest.raises(UnknownScenarioError, match="no scenario 'nope' .* \\(stored: 'plan'\\)"):
            store.reconcile("nope", history)

    def test_history_without_a_scheduled_time_is_refused(self, store, history):
        with pytest.raises(LedgerSchemaError, match="needs 'nominal_local', 'scheduled_utc' or 'scheduled'"):
            store.reconcile("plan", history.drop("nominal_local", "scheduled_utc"))
