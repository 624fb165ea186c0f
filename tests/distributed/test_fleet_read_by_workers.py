"""A fleet the Dask workers read (a schedules table, example:N): the client holds the plan, the ledger is the local one.

One small LocalCluster (2 worker processes, 1 thread each) serves the module.
"""

from __future__ import annotations

import dataclasses
import os

import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from polars.testing import assert_frame_equal


import calsim
from calsim import examples
from calsim.distributed import LedgerDataset, simulate
from calsim.distributed.fleet_source import coupling_keys, fleet_source, joined, partition_of
from calsim.errors import InputError
from calsim.simulation.scenario_records import schedule_rows
from calsim.store.schema import KEY

TENANTS = 5


def fleet(n: int = 150) -> list[calsim.Schedule]:
    out = []
    for i, s in enumerate(examples.fleet(n, seed=2)):
        account = None if i % 8 == 7 else f"tenant-{i % TENANTS}"
        out.append(dataclasses.replace(s, policy=calsim.Policy(catchup="latest", overlap="skip", duration="1min",
                                                               cost=1.0, account=account)))
    return out


def world(name: str = "w", **kw) -> calsim.Scenario:
    """March 2026 (DST in many zones) with an outage and daily budgets that bind: the world, no schedules."""
    kw.setdefault("budgets", [calsim.Budget(f"tenant-{t}", 12.0, "day", "Europe/Berlin") for t in range(TENANTS)])
    return calsim.Scenario(name, [], "2026-03-01T00:00Z", "2026-03-15T00:00Z", release="2026f", tick="1min",
                           seed=3, outages=[calsim.Outage("2026-03-08T01:01Z", "2026-03-09T01:01Z")], **kw)


def by_key(frame: pl.DataFrame) -> pl.DataFrame:
    return frame.sort(list(KEY))


@pytest.fixture(scope="module")
def table(tmp_path_factory) -> str:
    path = tmp_path_factory.mktemp("fleet") / "fleet.parquet"
    calsim.write_schedules(fleet(), path, row_group_size=40)  # 4 row groups: chunks of one group below
    return str(path)


@pytest.fixture(scope="module")
def local() -> pl.DataFrame:
    frame = calsim.simulate(dataclasses.replace(world(), schedules=fleet()), progress=False).frame
    assert (frame["reason"] == "budget").any() and (frame["state"] == "coalesced").any()  # (budgets bind)
    return frame


def test_a_fleet_read_from_a_table_by_the_workers_gives_the_local_ledger(client, table, local, tmp_path,
                                                                         monkeypatch):
    monkeypatch.setattr("calsim.distributed.fleet_source.CHUNK_ROWS", 40)
    ds = simulate(world(), client, tmp_path, partitions=6, schedules=table)
    assert ds.partitions >= 3
    assert_frame_equal(by_key(ds.frame), by_key(local), check_exact=True)
    assert ds.metadata["parameters"]["schedules"] == 150


def test_the_ledger_does_not_depend_on_how_the_table_is_chunked_or_partitioned(client, table, local, tmp_path):
    ds = calsim.simulate(world(), engine="dask", client=client, output=tmp_path, schedules=table)  # (the front door)
    assert_frame_equal(by_key(ds.frame), by_key(local), check_exact=True)


def test_a_table_run_with_a_date_level_gives_the_local_ledger(client, table, local, tmp_path):
    ds = simulate(world(), client, tmp_path, partitions=3, schedules=table, by_date=True)
    assert all("/date=2026-03-" in f for f in ds.files)
    assert_frame_equal(by_key(ds.frame), by_key(local), check_exact=True)


def test_a_budgets_schedules_land_in_one_partition(client, table, tmp_path):
    ds = simulate(world(), client, tmp_path, partitions=6, schedules=table)
    parts = {f: pl.read_parquet(f, columns=["schedule_id"])["schedule_id"].unique().to_list() for f in ds.files}
    account = {s.id: s.policy.account for s in fleet()}
    for t in range(TENANTS):
        assert sum(any(account[i] == f"tenant-{t}" for i in ids) for ids in parts.values()) == 1


def test_example_n_is_built_on_the_workers_and_gives_the_local_ledger(client, tmp_path):
    plain = world(budgets=[])
    ds = simulate(plain, client, tmp_path, partitions=4, schedules="example:120:6")
    local = calsim.simulate(dataclasses.replace(plain, schedules=examples.fleet(120, 6)), progress=False).frame
    assert ds.partitions >= 3
    assert_frame_equal(by_key(ds.frame), by_key(local), check_exact=True)


def test_a_fleet_file_is_parsed_by_the_workers_each_building_its_share(client, tmp_path, monkeypatch):
    import shutil

    from pathlib import Path

    monkeypatch.setattr("calsim.distributed.fleet_source.CHUNK_ROWS", 2)
    path = tmp_path / "fleet.toml"
    shutil.copy(Path(calsim.__file__).parents[1] / "data" / "examples" / "fleet.toml", path)
    schedules = calsim.load(path)
    plain = world(budgets=[])
    ds = simulate(plain, client, tmp_path / "out", partitions=4, schedules=str(path))
    local = calsim.simulate(dataclasses.replace(plain, schedules=schedules), progress=False).frame
    assert len(fleet_source(str(path), chunk_rows=2).chunks) >= 2
    assert_frame_equal(by_key(ds.frame), by_key(local), check_exact=True)


def test_schedules_joined_by_a_bucket_and_an_account_stay_together_and_equal_local(client, tmp_path):
    """A worker-level world (rate limits, an account breaker): the keys a schedule joins (its budgeted account
    and its bucket) are united from the pairs the workers report, so coupled schedules share a partition."""
    out = []
    for i, s in enumerate(examples.fleet(48, seed=5)):
        out.append(dataclasses.replace(s, policy=calsim.Policy(
            duration="2min", account=f"tenant-{i % 4}", rate_limit=("crm", "erp", None)[i % 3])))
    w = calsim.Scenario("wl", [], "2026-03-01T00:00Z", "2026-03-03T00:00Z", release="2026f", tick="1min", seed=4,
                        rate_limits=[calsim.RateLimit("crm", rate="2/min", burst=1),
                                     calsim.RateLimit("erp", rate="1/5min")],
                        breakers=[calsim.Breaker("account:tenant-3", after=2, open_for="10min")],
                        failures=calsim.Failures(0.3, max_attempts=2, backoff="1min"))
    path = tmp_path / "wl.parquet"
    calsim.write_schedules(out, path, row_group_size=12)
    ds = simulate(w, client, tmp_path / "out", partitions=6, schedules=str(path))
    local = calsim.simulate(dataclasses.replace(w, schedules=out), progress=False).frame
    assert_frame_equal(by_key(ds.frame), by_key(local), check_exact=True)
    # tenant-3 (its breaker) joins crm and erp through its schedules, and those buckets every tenant: one group
    roots = joined([k for s in out if len(k := coupling_keys(s, frozenset({"tenant-3"}),
                                                             frozenset({"crm", "erp"}))) > 1])
    assert len(set(roots.values())) == 1


def test_an_estimate_over_the_limit_is_refused_before_anything_is_simulated(client, table, tmp_path):
    with pytest.raises(InputError, match=r"simulate: ~[\d,]+ occurrences \(the 150 schedules of .*fleet\.parquet\) "
                                         r"exceeds the limit 1,000"):
        simulate(world(), client, tmp_path, schedules=table, max_occurrences=1_000)
    assert sorted(os.listdir(tmp_path / "scenario=w")) == []  # (no part, no plan left behind)


def test_the_store_attaches_the_schedule_records_the_workers_wrote(client, table, tmp_path):
    ds = simulate(world(), client, tmp_path / "out", schedules=table)
    store = calsim.LedgerStore(tmp_path / "s.duckdb")
    store.attach(ds)
    got = store.sql("SELECT schedule_id, revision, zone, account, rule, policy FROM schedules ORDER BY 1, 2")
    want = pl.DataFrame(schedule_rows(dataclasses.replace(world(), schedules=fleet())))
    assert got.rows() == want.select(got.columns).rows()
    reopened = LedgerDataset.open(tmp_path / "out", "w")
    assert reopened.schedule_records().height == 150
    assert reopened.to_ledger().accounts == {s.id: s.policy.account for s in fleet() if s.policy.account}


def test_a_scenario_with_its_own_schedules_and_a_table_is_refused(client, table, tmp_path):
    with pytest.raises(InputError, match=r"schedules: given with a scenario that has 150 schedules of its own"):
        simulate(dataclasses.replace(world(), schedules=fleet()), client, tmp_path, schedules=table)


def test_schedules_with_the_local_engine_is_refused_saying_where_they_go(table):
    with pytest.raises(InputError, match=r"schedules: .* is read by the workers of engine='dask'"):
        calsim.simulate(world(), schedules=table)


def test_a_source_is_planned_from_the_tables_footer_and_hashes_keys_stably(table):
    src = fleet_source(table, chunk_rows=80)
    assert src.chunks == ((0, 1), (2, 3)) and src.rows == 150
    # blake2b of the key, not Python's salted hash(): every worker process agrees
    assert partition_of(("account", "tenant-1"), 7) == int.from_bytes(
        __import__("hashlib").blake2b(b"account\0tenant-1", digest_size=8).digest(), "little") % 7
    with pytest.raises(InputError, match=r"schedules: 'example:x' is not 'example:N' or 'example:N:SEED'"):
        fleet_source("example:x")


def test_a_fifo_given_as_the_schedules_is_refused_without_blocking(tmp_path):
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    with pytest.raises(InputError, match=r"schedules: .*fifo' is not a regular file"):
        fleet_source(str(fifo))


@settings(max_examples=80, deadline=None)
@given(rows=st.lists(st.tuples(st.sampled_from([None, "t0", "t1", "t2", "t3"]), st.sampled_from([None, "p0", "p1"]),
                               st.sampled_from([None, "crm", "erp"])), min_size=1, max_size=30),
       budgeted=st.sets(st.sampled_from(["t0", "t1", "t2", "t3"])), partitions=st.integers(1, 7))
def test_the_workers_keys_put_every_coupled_group_in_one_partition(rows, budgeted, partitions):
    """What the workers compute per schedule (its coupling keys, their union-find roots from the pairs the
    chunks report, a hash) sends every group :func:`calsim.simulation.couplings.couplings` finds to one
    partition: the two descriptions of what couples schedules agree."""
    from calsim.simulation.couplings import couplings

    scheds = [calsim.Schedule(f"s{i}", "UTC", "2026-01-01T00:00", "FREQ=DAILY",
                              policy=calsim.Policy(account=a, pool=p, rate_limit=b))
              for i, (a, p, b) in enumerate(rows)]
    pools = {p for _, p, _ in rows if p}
    w = calsim.Scenario("k", scheds, "2026-01-01T00:00Z", "2026-01-02T00:00Z",
                        budgets=[calsim.Budget(t, 5.0) for t in sorted(budgeted)],
                        rate_limits=[calsim.RateLimit(b, rate="1/min") for b in ("crm", "erp")],
                        capacity={p: 1 for p in sorted(pools)} or None)
    kinds = (frozenset(budgeted), frozenset({"crm", "erp"}), frozenset(pools))
    roots = joined([k for s in scheds if len(k := coupling_keys(s, *kinds)) > 1])

    def part(s) -> int:
        keys = coupling_keys(s, *kinds)
        return partition_of(roots.get(keys[0], keys[0]) if keys else ("id", s.id), partitions)

    by_id = {s.id: s for s in scheds}
    for group in couplings(w):
        assert len({part(by_id[i]) for i in group}) == 1, group
