"""calsim.distributed: the Dask engine writes the same ledger as the local one, as Parquet, safely.

One small LocalCluster (2 worker processes, 1 thread each) serves the module.
The scenario is a 60-schedule fleet over March 2026 (a DST month in many of
its zones) with per-tenant daily budgets that bind, latest catch-up after an
outage, jitter, failures with retries, overlap, a pause, a manual trigger,
a revision that moves a schedule to another tenant's budget and a tzdata
upgrade: everything the partitioning must route.
"""

from __future__ import annotations

import dataclasses
import json
import os
import re
import signal
import subprocess
import sys
import threading

import polars as pl
import pytest
from polars.testing import assert_frame_equal

import distributed  # a test dependency: the README's test command installs it

import calsim
from calsim import examples
from calsim.distributed import LedgerDataset, couplings, simulate
from calsim.errors import CalsimError, InputError, NonexistentTimeError
from calsim.simulation import views
from calsim.store.schema import KEY

TENANTS = 7


def fleet_scenario(name: str = "fleet60", **world) -> calsim.Scenario:
    fleet = examples.fleet(60, seed=3)
    out = []
    for i, s in enumerate(fleet):
        # examples.fleet(60) has a single tenant: spread the schedules over TENANTS
        # tenants (every tenth pays from no account, so it couples with nothing).
        account = None if i % 10 == 9 else f"tenant-{i % TENANTS}"
        base = s.policy if isinstance(s.policy, calsim.Policy) else calsim.Policy()
        policy = dataclasses.replace(base, catchup="latest", overlap="skip", duration="1min", cost=1.0,
                                     account=account, jitter="2min" if i % 3 == 0 else None)
        out.append(dataclasses.replace(s, policy=policy))
    ids = [s.id for s in out]
    moved = dataclasses.replace(out[1], rule="FREQ=HOURLY;BYMINUTE=7",
                                policy=dataclasses.replace(out[1].policy, account="tenant-5"))
    kw = dict(
        release="2026f", tick="1min", seed=11,
        outages=[calsim.Outage("2026-03-10T01:01Z", "2026-03-12T01:01Z")],
        budgets=[calsim.Budget(f"tenant-{t}", 20.0, "day", "Europe/Berlin") for t in range(TENANTS)],
        failures=calsim.Failures(probability=0.1, max_attempts=2, backoff="1min"),
        events=[calsim.Pause("2026-03-03T00:00Z", ids[4]), calsim.Resume("2026-03-04T12:00Z", ids[4]),
                calsim.Trigger("2026-03-05T10:00Z", ids[7]),
                calsim.Revise("2026-03-20T00:00Z", moved),
                calsim.TzUpgrade("2026-03-25T00:00Z", to="2026a")],
    )
    kw.update(world)
    return calsim.Scenario(name, out, "2026-03-01T00:00Z", "2026-04-01T00:00Z", **kw)


def by_key(frame: pl.DataFrame) -> pl.DataFrame:
    return frame.sort(list(KEY))


@pytest.fixture(scope="module")
def scenario() -> calsim.Scenario:
    return fleet_scenario()


@pytest.fixture(scope="module")
def local(scenario) -> calsim.Ledger:
    return calsim.simulate(scenario, progress=False)


def test_scenario_exercises_budgets_catchup_and_events(local):
    # Guards the other tests' meaning: the couplings they route are really at work.
    counts = dict(local.frame.group_by("reason").len().iter_rows())
    assert local.frame.filter(pl.col("budget_wait_s") > 0).height > 0
    assert all(counts.get(r, 0) > 0 for r in ("catchup", "paused", "overlap", "budget", "retries_exhausted"))
    assert local.frame.filter(pl.col("eligible_utc") != pl.col("due_utc")).height > 0  # jitter
    assert local.frame.filter(pl.col("kind") == "manual").height == 1
    assert set(local.frame["tzdata"].unique()) == {"2026f", "2026a"}


def test_dask_engine_equals_local_engine(client, scenario, local, tmp_path):
    ds = simulate(scenario, client=client, output=tmp_path)
    assert isinstance(ds, LedgerDataset) and ds.rows == local.frame.height
    assert_frame_equal(by_key(ds.frame), by_key(local.frame), check_exact=True)


def test_calsim_simulate_with_engine_dask_writes_the_same_ledger(client, scenario, local, tmp_path):
    ds = calsim.simulate(scenario, engine="dask", client=client, output=tmp_path)
    assert isinstance(ds, calsim.distributed.LedgerDataset)
    assert by_key(ds.frame).equals(by_key(local.frame))


def test_frame_comes_in_the_local_ledgers_order(client, scenario, local, tmp_path):
    ds = simulate(scenario, client=client, output=tmp_path, partitions=3)
    assert ds.frame.equals(local.frame)


@pytest.mark.parametrize("partitions", [1, 3, 7])
def test_ledger_is_the_same_for_any_number_of_partitions(client, scenario, local, tmp_path, partitions):
    ds = simulate(scenario, client=client, output=tmp_path, partitions=partitions)
    assert ds.partitions == partitions
    assert_frame_equal(by_key(ds.frame), by_key(local.frame), check_exact=True)


def test_default_client_is_used_when_none_is_given(client, scenario, local, tmp_path):
    ds = simulate(scenario, output=str(tmp_path))
    assert ds.rows == local.frame.height


def test_budget_coupled_schedules_land_in_one_partition(client, scenario, tmp_path):
    ds = simulate(scenario, client=client, output=tmp_path, partitions=7)
    account = {r["schedule_id"]: r["account"] for r in ds.metadata["schedules"]}
    part_of: dict[str, set[int]] = {}
    for k, f in enumerate(ds.files):
        for sid in pl.read_parquet(f, columns=["schedule_id"])["schedule_id"].unique():
            part_of.setdefault(sid, set()).add(k)
    assert all(len(parts) == 1 for parts in part_of.values())  # a schedule is never split
    files_of_account: dict[str, set[int]] = {}
    for sid, parts in part_of.items():
        if account.get(sid):
            files_of_account.setdefault(account[sid], set()).update(parts)
    assert files_of_account and all(len(p) == 1 for p in files_of_account.values())
    # The revision moved schedule 1 to tenant-5, so tenants 1 and 5 share a partition.
    assert files_of_account["tenant-1"] == files_of_account["tenant-5"]
    assert ["tenant-000/job-00001", "tenant-000/job-00005"] <= next(g for g in couplings(scenario)
                                                                    if "tenant-000/job-00001" in g)


def worker_level_scenario() -> calsim.Scenario:
    """Worker-level without a shared pool: three rate-limit buckets, breakers by account and by bucket, classed
    failures with jittered backoff, two scheduler instances without a run key (effects twice)."""
    out = []
    for i, s in enumerate(examples.fleet(24, seed=5)):
        base = s.policy if isinstance(s.policy, calsim.Policy) else calsim.Policy()
        out.append(dataclasses.replace(s, policy=dataclasses.replace(
            base, duration="2min", effect_at=0.5, account=f"tenant-{i % 4}",
            rate_limit=("crm", "erp", "mail", None)[i % 4] if i % 5 else "crm")))
    return calsim.Scenario(
        "workerlevel", out, "2026-03-01T00:00Z", "2026-03-04T00:00Z", release="2026f", tick="1min", seed=4,
        rate_limits=[calsim.RateLimit("crm", rate="2/min", burst=1), calsim.RateLimit("erp", rate="1/5min"),
                     calsim.RateLimit("mail", rate="10/min", burst=3)],
        breakers=[calsim.Breaker("account:tenant-3", after=2, open_for="10min"),
                  calsim.Breaker("source:erp", after=3, open_for="5min")],
        failures=calsim.Failures(0.3, max_attempts=3, backoff="1min", jitter="full",
                                 classes={"transient": .7, "review": .2, "permanent": .1}),
        schedulers=2, scheduler_skew="10s", dedupe="none")


def test_a_worker_level_scenario_without_a_shared_pool_is_cut_by_bucket_and_breaker_and_equals_local(client, tmp_path):
    sc = worker_level_scenario()
    local = calsim.simulate(sc, progress=False).frame
    # (its meaning: tokens waited for, breakers opened, effects repeated by the second instance)
    assert local["rate_wait_s"].max() > 0 and (local["reason"] == "breaker_open").any()
    assert local["effects"].max() == 2
    ds = simulate(sc, client=client, output=tmp_path, partitions=6)
    assert ds.partitions >= 3
    assert_frame_equal(by_key(ds.frame), by_key(local), check_exact=True)
    group_of = {i: k for k, g in enumerate(couplings(sc)) for i in g}
    for together in ({s.id for s in sc.schedules if s.policy.rate_limit == b} for b in ("crm", "erp", "mail")):
        assert len({group_of[i] for i in together}) == 1  # a bucket's schedules share its tokens
    assert len({group_of[s.id] for s in sc.schedules if s.policy.account == "tenant-3"}) == 1  # and a breaker


@pytest.mark.parametrize("world,named", [({"capacity": 3}, "capacity=3"),
                                         ({"workers": calsim.Workers(3, lease="1h")}, "workers=Workers(3)")])
def test_a_fleet_wide_resource_runs_as_one_task_and_says_which(client, tmp_path, world, named):
    sc = worker_level_scenario() if "workers" in world else fleet_scenario("cap")
    sc = dataclasses.replace(sc, **world)
    with pytest.warns(UserWarning, match=rf"engine='dask': {re.escape(named)} is shared by every schedule") as w:
        ds = calsim.simulate(sc, engine="dask", client=client, output=tmp_path)
    assert ds.partitions == 1 and len(ds.files) == 1
    assert [x.filename for x in w] == [__file__]  # (the warning names the caller's line, not calsim's)
    assert_frame_equal(by_key(ds.frame), by_key(calsim.simulate(sc, progress=False).frame), check_exact=True)


def test_files_are_one_per_partition_and_a_rerun_replaces_them(client, scenario, local, tmp_path):
    first = simulate(scenario, client=client, output=tmp_path, partitions=3)
    directory = tmp_path / "scenario=fleet60"
    assert sorted(os.listdir(directory)) == ["_scenario.json", "part-00000.parquet", "part-00001.parquet",
                                             "part-00002.parquet"]
    # Leftovers of an interrupted writer, and of an earlier run with more partitions.
    (directory / ".part-00001.parquet.0123456789abcdef0123456789abcdef.tmp").write_bytes(b"half a file")
    (directory / "part-00004.parquet").write_bytes(b"stale")
    again = simulate(scenario, client=client, output=tmp_path, partitions=3)
    assert again == first
    assert sorted(os.listdir(directory)) == ["_scenario.json", "part-00000.parquet", "part-00001.parquet",
                                             "part-00002.parquet"]
    fewer = simulate(scenario, client=client, output=tmp_path, partitions=2)
    assert sorted(os.listdir(directory)) == ["_scenario.json", "part-00000.parquet", "part-00001.parquet"]
    # Reading the dataset as a whole (hive-partitioned: the directory names the scenario) sees each row once.
    everything = pl.read_parquet(str(tmp_path / "*" / "*.parquet"), hive_partitioning=True)
    assert everything.height == fewer.rows == local.frame.height
    assert not everything.select(list(KEY)).is_duplicated().any()


@pytest.fixture(scope="module")
def two_scenarios(client, scenario, tmp_path_factory):
    """An output directory holding two complete scenarios (the module's, and the same fleet without its outage)."""
    out = tmp_path_factory.mktemp("hive")
    other = dataclasses.replace(scenario, name="no-outage", outages=())
    return out, [simulate(sc, client=client, output=out, partitions=3) for sc in (scenario, other)]


def test_the_output_is_a_hive_partitioned_dataset_duckdb_polars_pyarrow_and_pandas_read_as_it_is(two_scenarios):
    import duckdb
    import pandas as pd
    import pyarrow.dataset as pds

    out, datasets = two_scenarios
    want = {ds.name: ds.rows for ds in datasets}
    by_duckdb = dict(duckdb.sql(f"SELECT scenario, count(*) FROM read_parquet('{out}/*/*.parquet', "
                                "hive_partitioning = true) GROUP BY ALL").fetchall())
    by_polars = dict(pl.scan_parquet(out / "*" / "*.parquet", hive_partitioning=True).group_by("scenario").len()
                     .collect().rows())
    by_pyarrow = pds.dataset(out, format="parquet", partitioning="hive").to_table(columns=["scenario"])
    by_pandas = pd.read_parquet(out, columns=["scenario", "state"])
    assert by_duckdb == by_polars == want
    assert dict(pl.from_arrow(by_pyarrow).group_by("scenario").len().rows()) == want
    assert by_pandas.groupby("scenario", observed=True).size().to_dict() == want
    # (the same rows as the local ledger, the scenario read from the directory)
    frame = pl.read_parquet(out / "scenario=fleet60" / "*.parquet", hive_partitioning=False)
    assert "scenario" not in frame.columns and frame.height == want["fleet60"]


def test_the_summary_file_lists_every_part_of_every_complete_scenario(two_scenarios):
    import pyarrow.dataset as pds
    import pyarrow.parquet as pq

    out, datasets = two_scenarios
    meta = pq.read_metadata(out / "_metadata")
    paths = sorted({meta.row_group(i).column(0).file_path for i in range(meta.num_row_groups)})
    assert paths == sorted(f"scenario={ds.name}/part-{k:05d}.parquet" for ds in datasets for k in range(3))
    assert meta.num_rows == sum(ds.rows for ds in datasets)
    planned = pds.parquet_dataset(out / "_metadata", partitioning="hive")  # (a reader planning from one file)
    assert planned.count_rows() == meta.num_rows
    assert pq.read_schema(out / "_common_metadata").names == [c for c in datasets[0].scan().collect_schema().names()
                                                             if c != "scenario"]


def test_a_run_in_progress_is_not_in_the_summary(two_scenarios, client, scenario):
    out, datasets = two_scenarios
    (out / "scenario=fleet60" / "_scenario.json").rename(out / "held.json")  # (as while a run is going)
    try:
        from calsim.distributed.dataset_files import write_summary
        assert write_summary(str(out), None) == 3  # the other scenario's parts only
    finally:
        (out / "held.json").rename(out / "scenario=fleet60" / "_scenario.json")
        write_summary(str(out), None)


def test_scenario_json_describes_the_dataset(client, scenario, local, tmp_path):
    ds = simulate(scenario, client=client, output=tmp_path, partitions=3)
    meta = json.loads((tmp_path / "scenario=fleet60" / "_scenario.json").read_text())
    assert meta["name"] == "fleet60" and meta["seed"] == 11 and meta["partitions"] == 3
    assert meta["horizon_start"] == "2026-03-01T00:00:00+00:00" and meta["horizon_end"] == "2026-04-01T00:00:00+00:00"
    assert meta["release"] == "2026a,2026f" and meta["calsim_version"] == calsim.__version__
    assert meta["rows"] == local.frame.height == sum(f["rows"] for f in meta["files"])
    assert [f["path"] for f in meta["files"]] == ["part-00000.parquet", "part-00001.parquet", "part-00002.parquet"]
    rows = {(r["schedule_id"], r["revision"]): r for r in meta["schedules"]}
    # Every schedule revision, those without an occurrence in the horizon too (as the store keeps them).
    assert set(rows) == {(s.id, s.revision) for s in scenario.schedules} | {("tenant-000/job-00001", 2)}
    assert set(local.frame.select("schedule_id", "revision").unique().iter_rows()) <= set(rows)
    revised = rows[("tenant-000/job-00001", 2)]
    assert revised["rule"] == "FREQ=HOURLY;BYMINUTE=7" and revised["account"] == "tenant-5"
    assert json.loads(revised["policy"])["catchup"] == "latest"
    assert LedgerDataset.open(tmp_path, "fleet60") == ds


@pytest.mark.parametrize("where", ["workers", "here"])
def test_summary_and_counts_match_the_local_ledgers(client, scenario, local, tmp_path, where):
    ds = simulate(scenario, client=client, output=tmp_path, partitions=3)
    on = None if where == "workers" else False  # (None: part by part on the running client's workers)
    # (a dataset's summary is full)
    assert_frame_equal(ds.summary(client=on), local.summary(full=True), check_exact=True)
    assert_frame_equal(ds.counts(), local.counts())


def test_a_worker_level_summary_on_the_workers_equals_the_local_one(client, tmp_path):
    sc = worker_level_scenario()
    ds = simulate(sc, client=client, output=tmp_path, partitions=6)
    got = ds.summary()
    assert got["rate_waits"][0] > 0 and got["breaker_open"][0] > 0
    assert_frame_equal(got, calsim.simulate(sc, progress=False).summary(full=True), check_exact=True)


@pytest.mark.parametrize("where", ["workers", "here"])
def test_gaps_and_coverage_computed_part_by_part_match_the_local_ledgers(client, scenario, local, tmp_path, where):
    ds = simulate(scenario, client=client, output=tmp_path, partitions=3)
    on = None if where == "workers" else False  # (None: the running client's workers; False: one part at a time)
    gaps = ds.gaps(client=on)
    assert gaps.height and gaps.schema["gap"] == pl.Duration("us")
    assert_frame_equal(gaps, local.gaps(), check_exact=True)
    assert_frame_equal(ds.coverage(client=on), local.coverage(), check_exact=True)


KILL_PLUGIN = "calsim-test-kill-first"


def kill_first_task(marker: str, prefix: str) -> distributed.WorkerPlugin:
    """A plugin that SIGKILLs its worker shortly after the first task whose key starts with ``prefix`` starts
    executing (once, cluster-wide: ``marker`` is created then). (Defined here: cloudpickle sends a local class
    by value, where the workers could not import this test module.)"""

    class KillFirstTask(distributed.WorkerPlugin):
        name = KILL_PLUGIN

        def transition(self, key, start, finish, **kwargs):
            if finish != "executing" or not str(key).startswith(prefix):
                return
            try:
                os.close(os.open(marker, os.O_CREAT | os.O_EXCL | os.O_WRONLY))
            except FileExistsError:
                return
            threading.Timer(0.05, os.kill, (os.getpid(), signal.SIGKILL)).start()

    return KillFirstTask()


def simulate_killing_a_worker(client, sc: calsim.Scenario, out, partitions: int = 4) -> LedgerDataset:
    """``simulate`` while the first partition task's worker is SIGKILLed (the nanny starts another; Dask reruns
    the task): checked to have happened, and the cluster back to two workers."""
    marker = out.parent / f"{out.name}.killed"
    before = set(client.scheduler_info()["workers"])
    client.register_plugin(kill_first_task(str(marker), "calsim-partition-"))
    try:
        ds = simulate(sc, client=client, output=out, partitions=partitions, retries=2)
    finally:
        client.unregister_worker_plugin(KILL_PLUGIN)
    assert marker.exists()
    client.wait_for_workers(2, timeout=60)
    assert set(client.scheduler_info()["workers"]) != before  # the nanny started a new worker
    assert not ds.frame.select(list(KEY)).is_duplicated().any()
    return ds


def test_worker_killed_mid_run_is_retried_without_duplicate_rows(client, scenario, local, tmp_path):
    ds = simulate_killing_a_worker(client, scenario, tmp_path / "out")
    assert_frame_equal(by_key(ds.frame), by_key(local.frame), check_exact=True)
    assert sorted(os.listdir(tmp_path / "out" / "scenario=fleet60")) == [
        "_scenario.json", *(f"part-{k:05d}.parquet" for k in range(4))]


def test_a_capacity_pool_scenario_runs_across_at_least_three_partitions_and_equals_local(client, tmp_path):
    from capacity_pools import pooled

    sc = pooled()
    ds = simulate(sc, client=client, output=tmp_path, partitions=6)
    assert ds.partitions >= 3
    assert_frame_equal(by_key(ds.frame), by_key(calsim.simulate(sc, progress=False).frame), check_exact=True)


def test_a_worker_killed_in_the_middle_of_a_capacity_scenario_loses_and_doubles_no_row(client, tmp_path):
    from capacity_pools import pooled

    sc = pooled()
    ds = simulate_killing_a_worker(client, sc, tmp_path / "out")
    assert ds.partitions >= 3
    assert_frame_equal(by_key(ds.frame), by_key(calsim.simulate(sc, progress=False).frame), check_exact=True)


SWEEP_GRID = {"catchup": ["all", "latest", "skip"], "budget_limit": [20.0, 40.0], "max_active": [1, 2]}


def test_a_sweep_on_dask_gives_the_local_rows_from_at_least_three_tasks(client, scenario):
    local = calsim.sweep(scenario, SWEEP_GRID, jobs=1)
    on_dask = calsim.sweep(scenario, SWEEP_GRID, engine="dask", client=client)
    assert local.height == 12
    assert_frame_equal(on_dask, local, check_exact=True)
    assert on_dask["late"].sum() > 0 and on_dask["budget_waits"].sum() > 0  # (its meaning: budgets bind)
    from calsim.distributed.sweep_tasks import MIN_TASKS, shares
    assert len(shares(12, max(MIN_TASKS, 2 * sum(client.nthreads().values())))) >= 3


def test_a_worker_killed_in_the_middle_of_a_sweep_loses_and_doubles_no_row(client, scenario, tmp_path):
    marker = tmp_path / "killed"

    sc = dataclasses.replace(scenario, name="killed-sweep")  # (other task keys than the test above)
    client.register_plugin(kill_first_task(str(marker), "calsim-sweep-"))
    try:
        on_dask = calsim.sweep(sc, SWEEP_GRID, engine="dask", client=client)
    finally:
        client.unregister_worker_plugin(KILL_PLUGIN)
    assert marker.exists()
    client.wait_for_workers(2, timeout=60)
    assert not on_dask["scenario"].is_duplicated().any()
    assert_frame_equal(on_dask, calsim.sweep(sc, SWEEP_GRID, jobs=1), check_exact=True)


@pytest.mark.parametrize("kwargs,message", [
    ({"engine": "dask", "store": "x.duckdb"}, r"^sweep\.store: 'x\.duckdb' is not used by engine='dask'"),
    ({"engine": "dask", "jobs": 2}, r"^sweep\.jobs: 2 is not used by engine='dask'"),
    ({"engine": "local", "client": "tcp://nowhere:8786"}, r"^sweep\.client: 'tcp://nowhere:8786' is not used by "
                                                           r"engine='local'"),
    ({"engine": "dusk"}, r"^sweep\.engine: unknown engine 'dusk'"),
])
def test_a_sweep_option_the_engine_would_not_honour_is_refused_naming_it(scenario, kwargs, message):
    with pytest.raises(InputError, match=message):
        calsim.sweep(scenario, {"catchup": ["all"]}, **kwargs)


def test_engine_errors_come_back_as_calsim_errors(client, tmp_path):
    s = calsim.Schedule("strict", "America/New_York", "2026-03-01T02:30", "FREQ=DAILY", gap="reject")
    sc = calsim.Scenario("strict", [s], "2026-03-01T00:00Z", "2026-03-10T00:00Z")
    with pytest.raises(NonexistentTimeError):
        simulate(sc, client=client, output=tmp_path, retries=0)
    assert not (tmp_path / "scenario=strict" / "_scenario.json").exists()


@pytest.mark.parametrize(("kwargs", "message"), [
    ({"output": None}, "output: required"),
    ({"partitions": 0}, "partitions: 0"),
    ({"partitions": True}, "partitions: True"),
    ({"partitions": "3"}, "partitions: '3'"),
    ({"retries": -1}, "retries: -1"),
    ({"client": 42}, "client: expected a distributed.Client"),
    ({"output": "nope://bucket/x"}, "output: cannot open 'nope://bucket/x'"),
])
def test_bad_input_names_the_field_and_value(client, scenario, tmp_path, kwargs, message):
    args = {"client": client, "output": tmp_path, **kwargs}
    with pytest.raises(InputError, match=message.replace("(", r"\(")):
        simulate(scenario, **args)


def test_output_that_is_a_file_is_refused(client, scenario, tmp_path):
    f = tmp_path / "file"
    f.write_text("x")
    with pytest.raises(InputError, match="output: .* is not a directory"):
        simulate(scenario, client=client, output=f)
    with pytest.raises(InputError, match="scenario: expected a calsim.Scenario"):
        simulate("fleet", client=client, output=tmp_path)


def test_no_client_running_says_to_start_one(tmp_path):
    code = ("import calsim, calsim.distributed as d\n"
            "s = calsim.Schedule('a', 'UTC', '2026-01-01T00:00', 'FREQ=DAILY')\n"
            "sc = calsim.Scenario('x', [s], '2026-01-01T00:00Z', '2026-01-02T00:00Z')\n"
            "try:\n    d.simulate(sc, output=%r)\n"
            "except calsim.errors.InputError as e:\n    print(e)\n" % str(tmp_path))
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert out.stdout.startswith("client: no Dask client is running; start one"), out.stderr
    assert issubclass(InputError, CalsimError)


def test_fsspec_url_output_writes_and_reads_back(scenario, local):
    # memory:// lives in one process, so this cluster's workers are threads of it.
    import fsspec  # installed with dask
    with distributed.Client(processes=False, n_workers=1, threads_per_worker=2, dashboard_address=":0",
                            set_as_default=False) as threads:
        ds = simulate(scenario, client=threads, output="memory://calsim-test/ledgers", partitions=3)
    fs = fsspec.filesystem("memory")
    assert sorted(p.rsplit("/", 1)[-1] for p in fs.ls("/calsim-test/ledgers/scenario=fleet60", detail=False)) == [
        "_scenario.json", "part-00000.parquet", "part-00001.parquet", "part-00002.parquet"]
    assert ds.files[0] == "memory://calsim-test/ledgers/scenario=fleet60/part-00000.parquet"
    assert_frame_equal(by_key(ds.frame), by_key(local.frame), check_exact=True)
    assert LedgerDataset.open("memory://calsim-test/ledgers", "fleet60") == ds


@pytest.fixture(scope="module")
def attached(client, scenario, local, tmp_path_factory):
    out = tmp_path_factory.mktemp("attach")
    ds = simulate(scenario, client=client, output=out)
    store = calsim.LedgerStore(out / "ledger.duckdb")
    assert store.attach(ds) is True
    written = calsim.LedgerStore()
    written.write(local)
    yield ds, store, written
    store.close()
    written.close()


class TestAttachToLedgerStore:
    """A dataset attached to a LedgerStore answers like the same ledger written into it."""

    def test_ledger_reads_back_equal_to_the_local_ledger(self, attached, local):
        ds, store, _ = attached
        assert store.ledger(ds.name).equals(local.frame)

    def test_compare_and_views_equal_those_of_the_written_ledger(self, attached):
        ds, store, written = attached
        assert store.compare([ds.name]).equals(written.compare([ds.name]))
        for view, order in (("state_counts", "kind, state, reason"),
                            ("observation_gaps", "schedule_id, from_utc NULLS FIRST"),
                            ("daily_cost", "day, account"), ("lateness", "scenario")):
            q = f"SELECT * FROM {view} ORDER BY {order}"
            a, b = store.sql(q), written.sql(q)
            if view == "lateness":  # a mean sums floats in scan order: equal up to rounding
                assert a["lateness_mean_s"][0] == pytest.approx(b["lateness_mean_s"][0], rel=1e-12)
                a, b = a.drop("lateness_mean_s"), b.drop("lateness_mean_s")
            assert a.equals(b), view
        a = store.sql("SELECT schedule_id, revision, zone, account FROM schedules ORDER BY ALL")
        assert a.equals(written.sql("SELECT schedule_id, revision, zone, account FROM schedules ORDER BY ALL"))

    def test_observation_gaps_over_the_parquet_files_equal_the_local_ledgers_gaps(self, attached, local):
        from calsim.text_table import durations_as_seconds

        ds, store, _ = attached
        view = store.sql("SELECT * EXCLUDE (scenario) FROM observation_gaps ORDER BY schedule_id, from_utc NULLS FIRST")
        # The SQL keeps exact spans: views.gaps at a microsecond's resolution (Ledger.gaps rounds to seconds).
        want = durations_as_seconds(views.gaps(local.frame, resolution="1us").collect())
        assert want.height and view.columns == want.columns
        assert view.select(pl.col(c).cast(want.schema[c]) for c in want.columns).equals(want)

    def test_attaching_again_changes_nothing_and_survives_reopening(self, attached):
        ds, store, _ = attached
        assert store.attach(ds.path) is False
        path = store.path
        store.close()
        with calsim.LedgerStore(path, read_only=True) as again:
            assert again.scenarios()["name"].to_list() == [ds.name]
            assert again.sql("SELECT count(*) AS n FROM occurrences")["n"][0] == ds.rows
        store.__init__(path)  # reopen for the fixture's teardown

    def test_a_dataset_with_a_repeated_key_is_refused_and_nothing_attached(self, attached):
        ds, _, _ = attached
        twice = dataclasses.replace(ds, files=ds.files + ds.files[:1])
        with calsim.LedgerStore() as fresh:
            with pytest.raises(calsim.errors.DuplicateKeyError, match="share a key"):
                fresh.attach(twice)
            assert fresh.scenarios().height == 0


def test_a_date_level_partitions_the_files_readers_prune_by_it_and_the_ledger_is_the_same(client, scenario, local,
                                                                                         tmp_path):
    import duckdb

    ds = simulate(scenario, client=client, output=tmp_path, partitions=3, by_date=True)
    assert_frame_equal(by_key(ds.frame), by_key(local.frame), check_exact=True)
    directory = tmp_path / "scenario=fleet60"
    days = sorted(p.name for p in directory.iterdir() if p.name.startswith("date="))
    assert days[0] == "date=2026-03-01" and len(days) == 31 + ("date=__HIVE_DEFAULT_PARTITION__" in days)
    # each file holds the rows due on its date (by the UTC date of the due instant, else the nominal one)
    want = (local.frame.group_by(pl.coalesce(pl.col("due_utc").dt.date(), pl.col("nominal_local").dt.date())
                                 .alias("date")).len().sort("date"))
    got = duckdb.sql(f"SELECT date, count(*) AS len FROM read_parquet('{tmp_path}/**/*.parquet', "
                     "hive_partitioning = true) GROUP BY ALL ORDER BY ALL").pl()
    assert got.rows() == want.rows()
    assert pl.scan_parquet(f"{tmp_path}/*/*/*.parquet", hive_partitioning=True).filter(
        pl.col("date") == pl.date(2026, 3, 8)).select(pl.len()).collect().item() == want.filter(
        pl.col("date") == pl.date(2026, 3, 8))["len"].item()
    assert LedgerDataset.open(tmp_path, "fleet60").rows == local.frame.height
    # a run without the date level replaces the files, and no date directory is left
    simulate(scenario, client=client, output=tmp_path, partitions=2)
    assert sorted(p.name for p in directory.iterdir()) == ["_scenario.json", "part-00000.parquet", "part-00001.parquet"]
