"""Workers compose with the scheduler's rules (issue 27): leases that heartbeats renew, max_active, budgets,
capacity with priorities, every overlap mode and backlogs in turn, on the worker-level loop.

Pinned cases compute their answers from the rule in their docstring; the properties hold over seeded random
scenarios (200 per property in the test command, 1,000 with ``CALSIM_LONG=1``). The worker loop is also held
against the event loop: with workers that never run out, crash or time out, every run must settle as the
scheduler-level paths settle it (the same rows, starts and finishes).
"""

from __future__ import annotations

import datetime as dt
import os

import numpy as np
import polars as pl
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import calsim
from tests.simulation.test_engine import peak_going
from tests.simulation.test_engine import scenarios as plain_scenarios

UTC = dt.timezone.utc
MIN = dt.timedelta(minutes=1)


def at(text: str) -> dt.datetime:
    return dt.datetime.fromisoformat(text).replace(tzinfo=UTC)


def noon_run(duration: str, workers: calsim.Workers, events=(), attempts=3) -> calsim.Ledger:
    s = calsim.Schedule("a", "UTC", "2026-01-01T12:00", "FREQ=DAILY", policy=calsim.Policy(duration=duration))
    return calsim.simulate(calsim.Scenario("x", [s], "2026-01-01T00:00Z", "2026-01-02T00:00Z", workers=workers,
                                           events=list(events), failures=calsim.Failures(0.0, max_attempts=attempts)))


# -- leases ------------------------------------------------------------------------------------------


def test_a_2_hour_run_under_a_30_minute_lease_with_1_minute_heartbeats_finishes_on_time():
    """renew=True: each heartbeat sets lease_until = heartbeat + 30 min, so the lease never runs out while the
    worker lives: one attempt, 12:00 to 14:00."""
    row = noon_run("2h", calsim.Workers(1, lease="30min", heartbeat="1min")).frame.row(0, named=True)
    assert (row["state"], row["attempts"], row["finished_utc"]) == ("done", 1, at("2026-01-01T14:00"))


def test_the_same_run_without_renewal_times_out_at_the_lease_end():
    """renew=False (Temporal's Start-To-Close): timed out at 12:30, again at 13:00 and 13:30: failed."""
    ledger = noon_run("2h", calsim.Workers(1, lease="30min", heartbeat="1min", renew=False))
    assert ledger.attempt_log["outcome"].to_list() == ["timed_out"] * 3
    assert ledger.attempt_log["started_utc"].to_list() == [at("2026-01-01T12:00") + 30 * k * MIN for k in range(3)]
    assert ledger.frame.row(0, named=True)["reason"] == "lease_expired"


def test_a_crashed_workers_renewed_lease_is_claimable_at_its_last_heartbeat_plus_the_lease():
    """Lease 5 min, heartbeats every minute from the 12:00:00 claim; the worker crashes at 12:07:30. Its last
    heartbeat was 12:07:00 (lease_until 12:12:00): the job is claimed again then, by the other worker."""
    ledger = noon_run("30min", calsim.Workers(2, lease="5min", heartbeat="1min"),
                      [calsim.WorkerCrash("2026-01-01T12:07:30Z", workers=[0], down_for="1h")])
    start, crash, beat, lease = at("2026-01-01T12:00"), at("2026-01-01T12:07:30"), MIN, 5 * MIN
    last_beat = start + (crash - start) // beat * beat
    log = ledger.attempt_log
    assert log["outcome"].to_list() == ["lost", "succeeded"]
    assert log["started_utc"][1] == last_beat + lease == at("2026-01-01T12:12")
    assert log["worker"].to_list() == [0, 1]


def test_without_renewal_a_crash_under_a_1_minute_heartbeat_timeout_is_retried_a_minute_later():
    """renew=False: the heartbeat is a timeout; a crash at 12:03 is noticed at 12:03 + 1 min = 12:04."""
    ledger = noon_run("30min", calsim.Workers(2, lease="1h", heartbeat="1min", renew=False),
                      [calsim.WorkerCrash("2026-01-01T12:03Z", workers=[0], down_for="1h")])
    assert ledger.attempt_log["started_utc"][1] == at("2026-01-01T12:04")


def test_a_token_buckets_queued_starts_are_exact_in_integers():
    """7 per minute, burst 1, 2,000 runs ready at once on unbounded workers: the k-th start is at
    ceil(k * 60 s / 7) after the first, exactly (a bucket advanced from rounded starts drifts 0.43 µs a token)."""
    s = calsim.Schedule("a", "UTC", "2026-01-01T00:00", "FREQ=DAILY",
                        policy=calsim.Policy(rate_limit="src", duration="1s"))
    fleet = [calsim.Schedule(f"s{i}", "UTC", "2026-01-01T00:00", "FREQ=DAILY;COUNT=1", policy=s.policy)
             for i in range(2000)]
    sc = calsim.Scenario("x", fleet, "2026-01-01T00:00Z", "2026-01-01T01:00Z",
                         rate_limits=[calsim.RateLimit("src", rate="7/min", burst=1)])
    starts = np.sort(calsim.simulate(sc).attempt_log["started_utc"].dt.epoch("us").to_numpy())
    t0 = int(starts[0])
    assert [int(x) - t0 for x in starts] == [-(-k * 60_000_000 // 7) for k in range(2000)]


def test_a_million_per_second_bucket_over_a_year_never_makes_a_run_wait():
    """1,000,000/s, burst 1: tokens come every µs, so daily runs never wait. A year is 3.2e13 µs, and the
    bucket's arithmetic in µs × count (3.2e19) would pass int64's 9.2e18: it is kept relative to the instant
    the bucket was last used, so its values stay within the tokens queued."""
    s = calsim.Schedule("a", "UTC", "2026-01-01T00:00", "FREQ=DAILY",
                        policy=calsim.Policy(rate_limit="src", duration="1s"))
    sc = calsim.Scenario("x", [s], "2026-01-01T00:00Z", "2027-01-01T00:00Z",
                         rate_limits=[calsim.RateLimit("src", rate="1000000/s", burst=1)])
    f = calsim.simulate(sc).frame
    assert f.height == 365
    assert f["state"].to_list() == ["done"] * 365
    assert f["rate_wait_s"].to_list() == [0.0] * 365


# -- max_active, capacity and budgets on workers -----------------------------------------------------


def hourly_long(overlap: str, max_active, **kw) -> pl.DataFrame:
    s = calsim.Schedule("h", "UTC", "2026-01-01T00:00", "FREQ=HOURLY",
                        policy=calsim.Policy(duration="3h", overlap=overlap, max_active=max_active))
    return calsim.simulate(calsim.Scenario("x", [s], "2026-01-01T00:00Z", "2026-01-01T12:00Z", **kw)).frame


def test_max_active_2_on_workers_skips_the_third_as_the_scheduler_level_loop_does():
    plain = hourly_long("skip", 2)
    on_workers = hourly_long("skip", 2, workers=calsim.Workers(10, lease="1d"))
    assert peak_going(on_workers.filter(pl.col("started_utc").is_not_null())) == 2
    cols = ["state", "reason", "started_utc", "finished_utc"]
    assert on_workers.select(cols).equals(plain.select(cols))


def test_a_job_holding_a_worker_for_its_token_counts_against_max_active():
    """A backlog of three at the come-back, one token a minute: the second holds a worker for its token at 03:00
    and is going; the third, arriving at 03:00 too, finds two going and is skipped (overlap="skip")."""
    s = calsim.Schedule("a", "UTC", "2026-01-01T02:00", "FREQ=MINUTELY;INTERVAL=10;COUNT=3",
                        policy=calsim.Policy(duration="25min", overlap="skip", max_active=2, rate_limit="src"))
    f = calsim.simulate(calsim.Scenario(
        "x", [s], "2026-01-01T00:00Z", "2026-01-01T06:00Z", workers=calsim.Workers(3, lease="1h"),
        outages=[calsim.Outage("2026-01-01T02:00Z", "2026-01-01T03:00Z")],
        rate_limits=[calsim.RateLimit("src", rate="1/min", burst=1)])).frame
    assert f["started_utc"].to_list() == [at("2026-01-01T03:00"), at("2026-01-01T03:01"), None]
    assert (f["state"][2], f["reason"][2]) == ("skipped", "overlap")


def test_max_active_2_with_buffer_all_on_one_worker_queues_behind_the_worker_too():
    """One worker: runs go one at a time whatever max_active; each starts when the one before it ends."""
    f = hourly_long("buffer_all", 2, workers=calsim.Workers(1, lease="1d"))
    starts = f.filter(pl.col("started_utc").is_not_null())["started_utc"].to_list()
    assert starts == [at("2026-01-01T00:00") + 3 * k * 60 * MIN for k in range(len(starts))]


def test_a_budget_period_opens_with_held_runs_and_a_worker_crash_in_the_burst():
    """Budget 3 a day (UTC) at cost 1, four 30-min runs due 23:00, 23:10, 23:20, 23:30 on three workers
    (lease 15 min, heartbeats every minute). 23:00, 23:10 and 23:20 start (3 of 3 spent); 23:30 waits for the
    00:00 opening, where it arrives before the next day's 00:00 run. A crash of worker 0 at 00:10:30 loses the
    attempt it holds, claimable at its last heartbeat (00:10) + 15 min = 00:25. Each attempt is charged when it
    starts: day 2 pays for the lost attempt too, and never more than 3."""
    pol = calsim.Policy(duration="30min", cost=1.0, account="t", catchup="all")
    s = calsim.Schedule("a", "UTC", "2026-01-01T23:00", "FREQ=MINUTELY;INTERVAL=10;COUNT=4", policy=pol)
    s2 = calsim.Schedule("b", "UTC", "2026-01-02T00:00", "FREQ=DAILY;COUNT=1", policy=pol)
    sc = calsim.Scenario("x", [s, s2], "2026-01-01T22:00Z", "2026-01-03T00:00Z",
                         budgets=[calsim.Budget("t", 3, "day", "UTC")],
                         workers=calsim.Workers(3, lease="15min", heartbeat="1min"),
                         events=[calsim.WorkerCrash("2026-01-02T00:10:30Z", workers=[0], down_for="1h")],
                         failures=calsim.Failures(0.0, max_attempts=3))
    ledger = calsim.simulate(sc)
    f = ledger.frame.sort("due_utc", "schedule_id")
    assert f["state"].to_list() == ["done"] * 5
    held = f.row(3, named=True)  # 23:30: held to the 00:00 opening
    assert held["started_utc"] == at("2026-01-02T00:00") and held["budget_wait_s"] == 30 * 60
    log = ledger.attempt_log.sort("started_utc", "schedule_id")
    lost = log.filter(pl.col("outcome") == "lost")
    assert lost.height == 1 and lost["worker"].item() == 0
    assert lost["started_utc"].item() == at("2026-01-02T00:00")
    retry = log.filter((pl.col("schedule_id") == lost["schedule_id"].item()) & (pl.col("attempt") == 2)
                       & (pl.col("nominal_local") == lost["nominal_local"].item()))
    assert retry["started_utc"].item() == at("2026-01-02T00:10") + 15 * MIN
    per_day = log.group_by(pl.col("started_utc").dt.date()).len()
    assert per_day["len"].max() <= 3


def test_capacity_without_workers_on_a_worker_level_scenario_is_one_pool_of_that_size():
    fleet = [calsim.Schedule(f"s{i}", "UTC", "2026-01-01T00:00", "FREQ=HOURLY",
                             policy=calsim.Policy(duration="50min", rate_limit="src", priority=i % 3))
             for i in range(6)]
    sc = calsim.Scenario("x", fleet, "2026-01-01T00:00Z", "2026-01-01T06:00Z", capacity=2,
                         rate_limits=[calsim.RateLimit("src", rate="1000/min", burst=1000)])
    f = calsim.simulate(sc).frame.filter(pl.col("started_utc").is_not_null())
    assert peak_going(f) == 2
    # 00:00: the first two arrivals take the slots; at 00:50, when they end, the queued priority-2 ones go first
    first = f.filter(pl.col("started_utc") == at("2026-01-01T00:00"))["schedule_id"].sort().to_list()
    assert first == ["s0", "s1"]
    then = f.filter(pl.col("started_utc") == at("2026-01-01T00:50"))["schedule_id"].sort().to_list()
    assert then == ["s2", "s5"]


# -- properties --------------------------------------------------------------------------------------


# The same 200 scenarios every run (deterministic); CALSIM_LONG=1 explores 1,000 new ones each time.
PROPERTY = settings(max_examples=1000 if os.environ.get("CALSIM_LONG") == "1" else 200, deadline=None,
                    derandomize=os.environ.get("CALSIM_LONG") != "1",
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
TENANTS = ("acme", "globex")


@st.composite
def composed(draw):
    """Per-tenant budgets, priorities, every overlap mode with max_active, backlogs in turn, pauses, workers
    with leases (renewed or not) and a crash wave, rate limits, breakers and duplicate schedulers."""
    fleet = []
    for i in range(draw(st.integers(1, 5))):
        overlap = draw(st.sampled_from(["allow", "skip", "buffer_one", "buffer_all", "cancel_other", "buffer_latest"]))
        p = calsim.Policy(
            duration=draw(st.sampled_from(["2min", "25min", calsim.LogNormal("5min", "40min")])),
            overlap=overlap, max_active=draw(st.sampled_from([None, 2])) if overlap != "allow" else None,
            catchup=draw(st.sampled_from(["all", "latest", "skip"])), max_lateness=draw(st.sampled_from([None, "1h"])),
            backlog=draw(st.sampled_from(["at_once", "in_turn"])), priority=draw(st.integers(0, 2)),
            cost=draw(st.sampled_from([1.0, 2.0])), account=draw(st.sampled_from(TENANTS)),
            on_budget=draw(st.sampled_from(["wait", "skip"])), rate_limit="src" if draw(st.booleans()) else None,
            idempotent=draw(st.booleans()))
        fleet.append(calsim.Schedule(f"s{i}", draw(st.sampled_from(["UTC", "Australia/Lord_Howe"])),
                                     f"2026-01-01T00:{draw(st.integers(0, 9)):02d}",
                                     f"FREQ=MINUTELY;INTERVAL={draw(st.sampled_from([10, 15, 30]))}", policy=p))
    count = draw(st.integers(1, 4))
    wave = draw(st.integers(0, 5))
    crashes = [calsim.WorkerCrash(f"2026-01-01T{wave:02d}:{draw(st.integers(0, 59)):02d}Z",
                                  workers=draw(st.integers(1, count)), down_for=f"{draw(st.integers(0, 20))}min")
               for _ in range(draw(st.integers(0, 3)))]
    events = crashes
    if draw(st.booleans()):
        events = events + [calsim.Pause("2026-01-01T01:00Z", fleet[0].id),
                           calsim.Resume("2026-01-01T01:40Z", fleet[0].id)]
    return calsim.Scenario(
        "c", fleet, "2026-01-01T00:00Z", "2026-01-01T06:00Z",
        outages=[calsim.Outage("2026-01-01T02:00Z", "2026-01-01T03:00Z")] if draw(st.booleans()) else [],
        budgets=[calsim.Budget(t, draw(st.integers(3, 40)), draw(st.sampled_from(["day", "week"])),
                               draw(st.sampled_from(["UTC", "Asia/Kolkata"]))) for t in TENANTS],
        workers=calsim.Workers(count, lease=f"{draw(st.integers(10, 60))}min",
                               heartbeat=draw(st.sampled_from([None, "1min"])), renew=draw(st.booleans()),
                               crash_rate=draw(st.sampled_from([None, "2/h"]))),
        events=events, seed=draw(st.integers(0, 2**32)),
        rate_limits=[calsim.RateLimit("src", rate=draw(st.sampled_from(["1/min", "3/5min"])),
                                      burst=draw(st.integers(1, 4)))],
        breakers=[calsim.Breaker("account:acme", after=2, open_for="10min")]
        if any(s.policy.account == "acme" for s in fleet) and draw(st.booleans()) else [],
        schedulers=draw(st.integers(1, 2)), dedupe=draw(st.sampled_from(["key", "none"])),
        failures=calsim.Failures(draw(st.sampled_from([0.0, 0.3])), max_attempts=draw(st.integers(1, 3))))


@PROPERTY
@given(composed())
def test_composed_worker_scenarios_hold_every_invariant(sc):
    ledger = calsim.simulate(sc)
    f, log = ledger.frame, ledger.attempt_log
    # one terminal row per occurrence
    expected = calsim.expand(list(sc.schedules), sc.start, sc.end)
    assert f.filter(pl.col("kind") == "scheduled").height == expected.height
    assert f.select("schedule_id", "revision", "nominal_local", "fold").n_unique() == f.height
    assert f["state"].null_count() == 0
    # no worker holds two attempts at once
    held = log.filter(pl.col("worker").is_not_null()).sort("worker", "started_utc", "released_utc")
    same = held["worker"][1:] == held["worker"][:-1]
    assert (held["started_utc"][1:].filter(same) >= held["released_utc"][:-1].filter(same)).all()
    # budgets: every attempt pays its cost in its start's local period, and a period never exceeds its limit
    cost = {s.id: s.policy.cost for s in sc.schedules}
    acct = {s.id: s.policy.account for s in sc.schedules}
    for b in sc.budgets:
        mine = log.filter(pl.col("schedule_id").is_in([k for k, a in acct.items() if a == b.account]))
        local = mine["started_utc"].dt.convert_time_zone(b.zone)
        key = local.dt.date() if b.period == "day" else local.dt.truncate("1w")
        spent = mine.with_columns(key=key, cost=pl.col("schedule_id").replace_strict(cost, return_dtype=pl.Float64))
        per = spent.group_by("key").agg(pl.col("cost").sum())
        assert per.height == 0 or per["cost"].max() <= b.limit + 1e-9, (b, per)
    # the bucket: in any span [t1, t2] at most burst + (t2 - t1) * rate attempts start
    lim = sc.rate_limits[0]
    limited = [s.id for s in sc.schedules if s.policy.rate_limit]
    starts = np.sort(log.filter(pl.col("schedule_id").is_in(limited))["started_utc"].dt.epoch("us").to_numpy())
    count, period = lim.per
    for i in range(len(starts)):
        span = starts[i:] - starts[i]
        assert (np.arange(1, len(span) + 1) <= lim.burst + (span * count) // period).all()
    # dedupe: with a unique key no occurrence is executed by two instances
    if sc.dedupe == "key":
        assert log.group_by("schedule_id", "nominal_local", "fold").agg(pl.col("instance").n_unique())[
            "instance"].max() in (None, 1)
    # max_active: never more runs of a schedule going at once than it allows (first attempt to last end)
    for s in sc.schedules:
        if s.policy.overlap != "allow" and sc.dedupe == "key":
            runs = f.filter((pl.col("schedule_id") == s.id) & pl.col("started_utc").is_not_null()
                            & (pl.col("state") != "cancelled"))
            assert peak_going(runs) <= (s.policy.max_active or 1), s.id
    # deterministic
    assert calsim.simulate(sc).frame.equals(f)


@settings(max_examples=1000 if os.environ.get("CALSIM_LONG") == "1" else 120, deadline=None,
          derandomize=True, suppress_health_check=[HealthCheck.too_slow])
@given(plain_scenarios())
def test_workers_that_never_run_out_settle_every_run_as_the_scheduler_level_loop(sc):
    """Scenarios of every scheduler-level feature (budgets, capacity, every overlap mode and max_active,
    backlogs in turn, pauses, outages) but failures: on workers that never run out, crash or time out (or,
    with capacity, a pool of that many), the worker loop settles every row as the scheduler-level path does."""
    # Without failures: an attempt pays its cost when it starts, a run on the scheduler-level paths pays for
    # all its attempts at once.
    kw = dict(budgets=sc.budgets, tick=sc.tick, seed=sc.seed, capacity=sc.capacity, events=sc.events,
              outages=sc.outages)
    sc = calsim.Scenario(sc.name, sc.schedules, sc.start, sc.end, **kw)
    plain = calsim.simulate(sc, settle="events").frame
    if sc.capacity is None:
        kw["workers"] = calsim.Workers(100_000, lease="3650d")
    on_workers = calsim.simulate(calsim.Scenario(
        sc.name, sc.schedules, sc.start, sc.end, rate_limits=[calsim.RateLimit("never", rate="1/min")], **kw)).frame
    cols = ["schedule_id", "nominal_local", "fold", "state", "reason", "started_utc", "finished_utc"]
    assert on_workers.select(cols).equals(plain.select(cols))


def test_a_low_priority_job_ages_past_a_stream_of_high_priority_ones():
    """One worker (capacity=1), high-priority runs of 10 min every 5 min (the queue only grows) and one
    low-priority run queued at 00:05. Ageing adds a level per hour waited, so the low one catches up with the
    oldest waiting high one and, queued first, goes before it: inside the horizon, as the event loop starts it.
    Without ageing it would wait behind every high-priority run."""
    hi = calsim.Schedule("hi", "UTC", "2026-01-01T00:00", "FREQ=MINUTELY;INTERVAL=5",
                         policy=calsim.Policy(duration="10min", priority=1, rate_limit="src"))
    lo = calsim.Schedule("lo", "UTC", "2026-01-01T00:05", "FREQ=DAILY;COUNT=1",
                         policy=calsim.Policy(duration="1min", rate_limit="src"))
    kw = dict(capacity=1)
    workers = calsim.simulate(calsim.Scenario("x", [hi, lo], "2026-01-01T00:00Z", "2026-01-01T06:00Z",
                                              rate_limits=[calsim.RateLimit("src", rate="1000/min", burst=1000)],
                                              **kw)).frame
    plain = calsim.simulate(calsim.Scenario("x", calsim.with_policy([hi, lo], rate_limit=None), "2026-01-01T00:00Z",
                                            "2026-01-01T06:00Z", **kw), settle="events").frame
    started = workers.filter(pl.col("schedule_id") == "lo")["started_utc"].item()
    assert at("2026-01-01T01:05") <= started < at("2026-01-01T06:00")
    assert started == plain.filter(pl.col("schedule_id") == "lo")["started_utc"].item()
