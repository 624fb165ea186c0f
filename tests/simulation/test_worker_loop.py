"""Worker-level simulation (issue 19): leases and crashes, effects, error classes, rate limits, duplicate
schedulers, data windows and breakers. Rules and sources: docs/research/worker_faults.md.

Each pinned case computes its answer by hand in its docstring; the properties hold for random scenarios.
"""

from __future__ import annotations

import datetime as dt
import os

import numpy as np
import polars as pl
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import calsim
from calsim.simulation.randomness import RETRY_JITTER, id_key, uniform

UTC = dt.timezone.utc
T0 = "2026-01-01T00:00Z"
T1 = "2026-01-02T00:00Z"


def at(text: str) -> dt.datetime:
    return dt.datetime.fromisoformat(text).replace(tzinfo=UTC)


def daily_noon(**policy) -> calsim.Schedule:
    return calsim.Schedule("a", "UTC", "2026-01-01T12:00", "FREQ=DAILY", policy=calsim.Policy(**policy))


def simulate(schedules, start=T0, end=T1, **kw) -> calsim.Ledger:
    return calsim.simulate(calsim.Scenario("x", schedules, start, end, **kw))


# -- leases and crashes ------------------------------------------------------------------------------


def test_a_crash_requeues_the_run_at_the_lease_end_as_attempt_two():
    """Lease 90 s; the run starts 12:00:00 and takes 60 s; its worker crashes at 12:00:30.

    No heartbeat, so the loss is noticed when the lease ends: 12:00:00 + 90 s = 12:01:30, which is the crash
    (12:00:30) plus the lease's remaining 60 s. The retry starts then on the other worker, attempt 2, and ends
    at 12:02:30.
    """
    ledger = simulate([daily_noon(duration="60s")], workers=calsim.Workers(2, lease="90s"),
                      events=[calsim.WorkerCrash("2026-01-01T12:00:30Z", workers=[0], down_for="10min")],
                      failures=calsim.Failures(0.0, max_attempts=3))
    log = ledger.attempt_log
    assert log["outcome"].to_list() == ["lost", "succeeded"]
    assert log["attempt"].to_list() == [1, 2]
    assert log["ended_utc"][0] == at("2026-01-01T12:00:30")  # the crash
    assert log["started_utc"][1] == at("2026-01-01T12:00:30") + dt.timedelta(seconds=60)  # + remaining lease
    assert log["worker"].to_list() == [0, 1]
    row = ledger.frame.row(0, named=True)
    assert (row["state"], row["attempts"], row["finished_utc"]) == ("done", 2, at("2026-01-01T12:02:30"))


def test_a_heartbeat_timeout_notices_the_crash_before_the_lease_ends():
    """Same run, renew=False (Temporal), heartbeat timeout 10 s: expiry = min(12:01:30, 12:00:30 + 10 s) = 12:00:40."""
    ledger = simulate([daily_noon(duration="60s")],
                      workers=calsim.Workers(2, lease="90s", heartbeat="10s", renew=False),
                      events=[calsim.WorkerCrash("2026-01-01T12:00:30Z", workers=[0])],
                      failures=calsim.Failures(0.0, max_attempts=3))
    assert ledger.attempt_log["started_utc"][1] == at("2026-01-01T12:00:40")


def test_a_crash_with_no_attempt_left_ends_the_run_failed_lease_expired():
    """max_attempts=1: the lost attempt was the only one; the run fails at the lease's end, 12:01:30."""
    ledger = simulate([daily_noon(duration="60s")], workers=calsim.Workers(2, lease="90s"),
                      events=[calsim.WorkerCrash("2026-01-01T12:00:30Z", workers=[0])])
    row = ledger.frame.row(0, named=True)
    assert (row["state"], row["reason"], row["attempts"]) == ("failed", "lease_expired", 1)
    assert row["finished_utc"] == at("2026-01-01T12:01:30")


def test_an_attempt_longer_than_its_lease_times_out_at_the_lease_end():
    """Duration 2 min, lease 90 s, 2 attempts: each is timed out 90 s after its start (12:00:00, then 12:01:30,
    requeued at once); the run fails lease_expired at 12:03:00, and neither attempt reached its effect (its end)."""
    ledger = simulate([daily_noon(duration="2min")], workers=calsim.Workers(1, lease="90s"),
                      failures=calsim.Failures(0.0, max_attempts=2))
    log = ledger.attempt_log
    assert log["outcome"].to_list() == ["timed_out", "timed_out"]
    assert log["started_utc"].to_list() == [at("2026-01-01T12:00:00"), at("2026-01-01T12:01:30")]
    row = ledger.frame.row(0, named=True)
    assert (row["state"], row["reason"], row["effects"]) == ("failed", "lease_expired", 0)


def test_a_crashed_worker_takes_no_run_until_it_is_back():
    """One worker crashes at 12:00:30 for 10 min; the lease ends at 12:01:30 but the only worker is down until
    12:10:30: the retry starts then."""
    ledger = simulate([daily_noon(duration="60s")], workers=calsim.Workers(1, lease="90s"),
                      events=[calsim.WorkerCrash("2026-01-01T12:00:30Z", down_for="10min")],
                      failures=calsim.Failures(0.0, max_attempts=2))
    assert ledger.attempt_log["started_utc"][1] == at("2026-01-01T12:10:30")


def renewed_crash(crash: str) -> tuple[dt.datetime, dt.datetime]:
    """A 30-min run claimed 12:00:00 under a renewed 5-min lease with 1-min heartbeats (renew=True, the default);
    worker 0 crashes at ``crash``: the start of attempt 2, and when the rule says it is claimable again."""
    ledger = simulate([daily_noon(duration="30min")], workers=calsim.Workers(2, lease="5min", heartbeat="1min"),
                      events=[calsim.WorkerCrash(crash, workers=[0], down_for="1h")],
                      failures=calsim.Failures(0.0, max_attempts=3))
    start, c, beat, lease = at("2026-01-01T12:00"), dt.datetime.fromisoformat(crash), dt.timedelta(minutes=1), \
        dt.timedelta(minutes=5)
    assert ledger.attempt_log["outcome"].to_list() == ["lost", "succeeded"]
    return ledger.attempt_log["started_utc"][1], start + (c - start) // beat * beat + lease


def test_a_renewed_lease_lost_before_its_first_heartbeat_is_claimable_at_the_claims_lease_end():
    """Crash 12:00:30, before the first beat (12:01): lease_until is still the claim's, 12:00 + 5 min = 12:05."""
    started, claimable = renewed_crash("2026-01-01T12:00:30+00:00")
    assert started == claimable == at("2026-01-01T12:05")


def test_a_heartbeat_at_the_crash_instant_renews_the_lease():
    """Crash 12:07:00, the instant of a beat: the last beat at or before the crash is 12:07, lease_until 12:12."""
    started, claimable = renewed_crash("2026-01-01T12:07:00+00:00")
    assert started == claimable == at("2026-01-01T12:12")


# -- effects and acknowledgements --------------------------------------------------------------------


@pytest.mark.parametrize("idempotent, effects, duplicates", [(False, 2, 1), (True, 1, 0)])
def test_a_crash_between_effect_and_ack_repeats_the_effect_unless_idempotent(idempotent, effects, duplicates):
    """Start 12:00:00, duration 60 s, ack 5 s later: effect at 12:01:00, ack at 12:01:05. The worker crashes at
    12:01:02: the effect happened but was never acknowledged, so the lease (90 s) runs out at 12:01:30 and
    attempt 2 writes again at 12:02:30: two effects, one a duplicate; an idempotent sink absorbs it (one effect)."""
    ledger = simulate([daily_noon(duration="60s", ack_delay="5s", idempotent=idempotent)],
                      workers=calsim.Workers(2, lease="90s"),
                      events=[calsim.WorkerCrash("2026-01-01T12:01:02Z", workers=[0])],
                      failures=calsim.Failures(0.0, max_attempts=3))
    assert ledger.frame["effects"].to_list() == [effects]
    assert ledger.frame["attempts"].to_list() == [2]
    assert ledger.summary()["duplicate_effects"].item() == duplicates


def test_a_crash_before_the_effect_point_retries_without_a_duplicate():
    """Crash at 12:00:30, before the effect (12:01:00): a retry, one effect."""
    ledger = simulate([daily_noon(duration="60s")], workers=calsim.Workers(2, lease="90s"),
                      events=[calsim.WorkerCrash("2026-01-01T12:00:30Z", workers=[0])],
                      failures=calsim.Failures(0.0, max_attempts=3))
    assert ledger.frame["effects"].to_list() == [1]


def test_an_effect_point_inside_the_run_makes_an_earlier_crash_a_duplicate():
    """effect_at=0.5: the effect is at 12:00:30; a crash at 12:00:45 is after it: one duplicate."""
    ledger = simulate([daily_noon(duration="60s", effect_at=0.5)], workers=calsim.Workers(2, lease="90s"),
                      events=[calsim.WorkerCrash("2026-01-01T12:00:45Z", workers=[0])],
                      failures=calsim.Failures(0.0, max_attempts=3))
    assert ledger.frame["effects"].to_list() == [2]


# -- error classes and backoff -----------------------------------------------------------------------


@pytest.mark.parametrize("cls, reason", [("review", "review"), ("permanent", "permanent")])
def test_a_review_or_permanent_failure_stops_at_once(cls, reason):
    """Every attempt fails and every failure is of one class that does not retry: one attempt, that reason."""
    ledger = simulate([daily_noon(duration="1min")],
                      failures=calsim.Failures(1.0, max_attempts=5, classes={cls: 1.0}))
    row = ledger.frame.row(0, named=True)
    assert (row["state"], row["reason"], row["attempts"]) == ("failed", reason, 1)
    assert ledger.summary()[reason].item() == 1


def test_error_class_shares_split_the_failures_in_proportion():
    """3 classes 0.5/0.3/0.2 over 2,000 one-attempt failures: each share within 4 points of its target."""
    s = calsim.Schedule("m", "UTC", "2026-01-01T00:00", "FREQ=MINUTELY", policy=calsim.Policy(duration="1s"))
    ledger = simulate([s], end="2026-01-02T09:20Z",
                      failures=calsim.Failures(1.0, classes={"transient": 0.5, "review": 0.3, "permanent": 0.2}))
    counts = ledger.frame["reason"].value_counts().to_dict(as_series=False)
    share = dict(zip(counts["reason"], np.array(counts["count"]) / ledger.frame.height))
    assert abs(share["retries_exhausted"] - 0.5) < 0.04
    assert abs(share["review"] - 0.3) < 0.04
    assert abs(share["permanent"] - 0.2) < 0.04


def test_backoff_doubles_up_to_its_cap():
    """backoff 1 min, cap 5 min, 5 attempts of 1 min, all failing: waits 60, 120, 240, 300 s between an attempt's
    end and the next start, then retries_exhausted."""
    ledger = simulate([daily_noon(duration="1min")],
                      failures=calsim.Failures(1.0, max_attempts=5, backoff="1min", max_backoff="5min"))
    log = ledger.attempt_log
    waits = (log["started_utc"][1:] - log["ended_utc"][:-1]).dt.total_seconds().to_list()
    assert waits == [60, 120, 240, 300]
    assert ledger.frame["reason"].to_list() == ["retries_exhausted"]


@pytest.mark.parametrize("mode", ["full", "equal"])
def test_backoff_jitter_is_the_seeded_draw_of_each_attempt(mode):
    """Wait k = d_k jittered with u_k = uniform(schedule, nominal, fold, seed, RETRY_JITTER, k) (the numpy
    draw is the oracle of the compiled one): full u*d, equal d/2 + u*d/2, d_k = 60 s * 2**(k-1)."""
    ledger = simulate([daily_noon(duration="1min")], seed=7,
                      failures=calsim.Failures(1.0, max_attempts=4, backoff="1min", jitter=mode))
    log = ledger.attempt_log
    waits = (log["started_utc"][1:] - log["ended_utc"][:-1]).dt.total_microseconds().to_list()
    nominal = np.array([int(at("2026-01-01T12:00").timestamp()) * 10**6])
    key = np.array([id_key("a")], dtype=np.uint64)
    expected = []
    for k in (1, 2, 3):
        d = 60 * 10**6 * 2 ** (k - 1)
        u = float(uniform(key, nominal, np.array([0]), 7, RETRY_JITTER, k)[0])
        expected.append(int(u * d) if mode == "full" else d // 2 + int(u * (d - d // 2)))
    assert waits == expected


def test_the_compiled_normal_quantile_equals_the_column_one():
    from calsim.simulation import compiled_rules, randomness

    u = np.concatenate([np.linspace(1e-12, 1 - 1e-12, 2001), [0.02425, 0.97575, 0.5]])
    assert [compiled_rules.norm_ppf_one(x) for x in u] == randomness.norm_ppf(u).tolist()


def test_the_compiled_draw_equals_the_column_one_bit_for_bit():
    from calsim.simulation import compiled_rules, randomness
    from calsim.simulation.worker_loop import _seed64

    rng = np.random.default_rng(5)
    keys = rng.integers(0, 2**63, 500, dtype=np.int64).view(np.uint64) * np.uint64(2) + np.uint64(1)
    nominal = rng.integers(-2**60, 2**60, 500, dtype=np.int64)
    fold = rng.integers(0, 2, 500)
    for seed, tag, attempt in ((0, 1, 0), (2**40 + 3, 3, 2), (-7, 5, 9)):
        cols = randomness.uniform(keys, nominal, fold, seed, tag, attempt)
        one = [compiled_rules.uniform_one(np.int64(k.view(np.int64)), n, f, _seed64(seed), tag, attempt)
               for k, n, f in zip(keys, nominal, fold)]
        assert one == cols.tolist()
    # and on random everything: any 64-bit key, instant and seed, each tag, attempts per row up to 100
    for _ in range(20):
        n = 200
        keys = rng.integers(-2**63, 2**63 - 1, n, dtype=np.int64, endpoint=True).view(np.uint64)
        nominal = rng.integers(-2**63, 2**63 - 1, n, dtype=np.int64, endpoint=True)
        fold = rng.integers(0, 2, n)
        attempt = rng.integers(0, 100, n)
        seed, tag = int(rng.integers(0, 2**64, dtype=np.uint64)) - 2**63, int(rng.integers(1, 7))
        cols = randomness.uniform(keys, nominal, fold, seed, tag, attempt)
        one = [compiled_rules.uniform_one(np.int64(k.view(np.int64)), x, f, _seed64(seed), tag, a)
               for k, x, f, a in zip(keys, nominal, fold, attempt)]
        assert np.array_equal(np.array(one).view(np.uint64), cols.view(np.uint64))  # bit for bit


# -- rate limits -------------------------------------------------------------------------------------


def test_a_token_bucket_releases_a_burst_of_thirty_as_x_time_rate_does():
    """rate 10/min (a token every 6 s), burst 5, 30 runs ready at 00:00:00: the full bucket lets 5 start at
    once; run n >= 6 starts at 6 * (n - 5) s: 6, 12, ..., 150 s (golang.org/x/time/rate Reserve). Waits sum to
    6 * (1 + ... + 25) = 1950 s."""
    p = calsim.Policy(rate_limit="src")
    fleet = [calsim.Schedule(f"s{i:02d}", "UTC", "2026-01-01T00:00", "FREQ=DAILY", policy=p) for i in range(30)]
    ledger = simulate(fleet, end="2026-01-01T12:00Z", rate_limits=[calsim.RateLimit("src", rate="10/min", burst=5)])
    starts = sorted((s - at("2026-01-01T00:00")).total_seconds() for s in ledger.frame["started_utc"])
    assert starts == [0] * 5 + [6 * k for k in range(1, 26)]
    assert ledger.frame["rate_wait_s"].sum() == 1950
    assert ledger.summary()["rate_wait_max"].item() == dt.timedelta(seconds=150)


def test_a_run_whose_token_comes_after_its_max_lateness_is_skipped_rate_limited():
    """rate 1/min, burst 1, 5 runs at 00:00, max_lateness 2 min: tokens at 0, 1, 2 min; the 4th would wait 3 min."""
    p = calsim.Policy(rate_limit="src", max_lateness="2min")
    fleet = [calsim.Schedule(f"s{i}", "UTC", "2026-01-01T00:00", "FREQ=DAILY", policy=p) for i in range(5)]
    ledger = simulate(fleet, end="2026-01-01T12:00Z", rate_limits=[calsim.RateLimit("src", rate="1/min")])
    assert sorted(ledger.frame["reason"].to_list(), key=str) == [None] * 3 + ["rate_limited"] * 2 or \
        ledger.frame["reason"].null_count() == 3
    assert ledger.summary()["rate_limited"].item() == 2


# -- duplicate schedulers ----------------------------------------------------------------------------


@pytest.mark.parametrize("dedupe, executions", [("none", 2), ("key", 1)])
def test_two_schedulers_two_seconds_apart_run_each_occurrence_per_dedupe(dedupe, executions):
    """Hourly, 24 h, two instances 2 s apart. Without a unique key both execute every occurrence (48
    executions, the second 2 s after the first, each charged); with it the second claim is refused (24)."""
    p = calsim.Policy(duration="1min", cost=1.0)
    s = calsim.Schedule("h", "UTC", "2026-01-01T00:00", "FREQ=HOURLY", policy=p)
    ledger = simulate([s], schedulers=2, scheduler_skew="2s", dedupe=dedupe)
    per_key = ledger.attempt_log.group_by("nominal_local").agg(pl.col("instance").n_unique(),
                                                               pl.col("started_utc").sort())
    assert per_key.height == 24 and set(per_key["instance"]) == {executions}
    if executions == 2:
        assert all((b - a) == dt.timedelta(seconds=2) for a, b in per_key["started_utc"])
    assert ledger.frame["effects"].to_list() == [executions] * 24
    assert ledger.summary()["cost"].item() == 24 * executions


# -- data windows ------------------------------------------------------------------------------------


def _three_day_outage(covers: str) -> calsim.Ledger:
    p = calsim.Policy(catchup="latest", covers=covers)
    s = calsim.Schedule("d", "UTC", "2026-01-04T02:00", "FREQ=DAILY", policy=p)
    return simulate([s], start="2026-01-04T00:00Z", end="2026-01-09T00:00Z",
                    outages=[calsim.Outage("2026-01-05T01:00Z", "2026-01-08T03:00Z")])


def test_since_last_success_one_run_covers_the_whole_outage():
    """Daily 02:00Z from Sun 4 Jan; down Mon 01:00 to Thu 03:00; latest. Mon, Tue, Wed and Thu 02:00 are missed;
    at Thu 03:00 only Thu 02:00 runs, and it covers everything since the last success's window end (Sun 02:00):
    [Sun 02:00, Thu 02:00). No window is never processed; the three the outage hid are processed late."""
    ledger = _three_day_outage("since_last_success")
    thu = ledger.frame.filter(pl.col("state") == "done").row(-1, named=True)
    assert (thu["window_start_utc"], thu["window_end_utc"]) == (at("2026-01-04T02:00"), at("2026-01-08T02:00"))
    cov = ledger.coverage().row(0, named=True)
    assert (cov["never"], cov["late"], cov["on_time"]) == (0, 3, 2)


def test_own_window_leaves_the_outage_windows_never_processed():
    """Same outage, own windows: the Thu run covers [Wed 02:00, Thu 02:00) only; the windows owned by Mon, Tue and
    Wed ([Sun, Mon), [Mon, Tue), [Tue, Wed) at 02:00) are never processed, the first owned by Mon 02:00."""
    ledger = _three_day_outage("own_window")
    thu = ledger.frame.filter(pl.col("state") == "done").row(-1, named=True)
    assert (thu["window_start_utc"], thu["window_end_utc"]) == (at("2026-01-07T02:00"), at("2026-01-08T02:00"))
    cov = ledger.coverage().row(0, named=True)
    assert (cov["never"], cov["first_never_utc"]) == (3, at("2026-01-05T02:00"))


def test_a_retry_resends_the_same_window():
    """A run that fails once and succeeds on retry still covers its own window [previous due, its due)."""
    p = calsim.Policy(covers="own_window", duration="1min")
    s = calsim.Schedule("h", "UTC", "2026-01-01T00:00", "FREQ=HOURLY", policy=p)
    ledger = simulate([s], failures=calsim.Failures(0.5, max_attempts=4))
    f = ledger.frame.filter(pl.col("attempts") > 1, pl.col("state") == "done")
    assert f.height > 0
    assert (f["window_end_utc"] == f["due_utc"]).all()
    assert (f["window_end_utc"] - f["window_start_utc"] == dt.timedelta(hours=1)).all()


def test_duplicate_executions_process_a_window_twice():
    p = calsim.Policy(covers="own_window", duration="1min")
    s = calsim.Schedule("h", "UTC", "2026-01-01T00:00", "FREQ=HOURLY", policy=p)
    ledger = simulate([s], schedulers=2, dedupe="none")
    assert ledger.coverage()["twice"].item() == 24


# -- breakers ----------------------------------------------------------------------------------------


def test_a_breaker_opens_after_three_failures_and_tries_once_after_open_for():
    """after=3, open_for 10 min, every 5 min, runs of 1 min that always fail. 00:00, 00:05, 00:10 fail (ends
    00:01, 00:06, 00:11): open 00:11-00:21, so 00:15 and 00:20 are skipped breaker_open; 00:25 is the half-open
    trial, fails at 00:26: open until 00:36 (00:30, 00:35 skipped); 00:40 trial fails... and so on."""
    p = calsim.Policy(duration="1min", account="acme")
    s = calsim.Schedule("f", "UTC", "2026-01-01T00:00", "FREQ=MINUTELY;INTERVAL=5", policy=p)
    ledger = simulate([s], end="2026-01-01T01:00Z", failures=calsim.Failures(1.0),
                      breakers=[calsim.Breaker("account:acme", after=3, open_for="10min")])
    reasons = ledger.frame["reason"].to_list()
    ran, shut = "retries_exhausted", "breaker_open"
    assert reasons == [ran, ran, ran, shut, shut, ran, shut, shut, ran, shut, shut, ran]
    assert ledger.summary()["breaker_open"].item() == 6


def test_a_successful_trial_closes_the_breaker():
    """Failures on one schedule open a source breaker that a second, healthy schedule of the same source shares:
    its trial succeeds and the breaker closes (nothing of the healthy one is skipped after it)."""
    bad = calsim.Schedule("bad", "UTC", "2026-01-01T00:00", "FREQ=MINUTELY;INTERVAL=5;COUNT=3",
                          policy=calsim.Policy(duration="1min", rate_limit="crm", account="bad"))
    good = calsim.Schedule("good", "UTC", "2026-01-01T00:12", "FREQ=MINUTELY;INTERVAL=5",
                           policy=calsim.Policy(duration="1min", rate_limit="crm"))
    ledger = simulate([bad, good], end="2026-01-01T01:00Z", failures=calsim.Failures(0.0),
                      rate_limits=[calsim.RateLimit("crm", rate="100/min", burst=100)],
                      breakers=[calsim.Breaker("source:crm", after=1, open_for="1min")])
    assert ledger.frame.filter(pl.col("schedule_id") == "good")["state"].to_list() == ["done"] * 10


@given(st.lists(st.tuples(st.sampled_from(["a", "b", None]), st.sampled_from(["crm", "erp", None])), min_size=1,
                max_size=8),
       st.lists(st.sampled_from(["account:a", "account:b", "source:crm", "source:erp", "schedule:s0", "schedule:s3"]),
                max_size=6))
@settings(max_examples=200, deadline=None, derandomize=True)
def test_each_schedule_gets_exactly_the_breakers_that_cover_it(policies, scopes):
    """The indexed look-up of a schedule's breakers equals asking every breaker (``Breaker.covers``)."""
    from calsim.simulation.worker_loop import breaker_scopes

    ids = [f"s{i}" for i in range(len(policies))]
    pol = [calsim.Policy(account=a, rate_limit=r) for a, r in policies]
    breakers = [calsim.Breaker(x) for x in scopes]
    expected = [[b for b, br in enumerate(breakers) if br.covers(sid, p)] for sid, p in zip(ids, pol)]
    scheds = [calsim.Schedule(sid, "UTC", "2026-01-01T12:00", "FREQ=DAILY") for sid in ids]
    assert breaker_scopes(breakers, scheds, pol) == expected


# -- properties --------------------------------------------------------------------------------------


@st.composite
def scenarios(draw):
    n = draw(st.integers(1, 6))
    minutes = draw(st.sampled_from([5, 10, 15, 30]))
    covers = draw(st.sampled_from([None, "own_window", "since_last_success"]))
    rate = draw(st.booleans())
    fleet = []
    for i in range(n):
        p = calsim.Policy(duration=f"{draw(st.integers(1, 40))}min", catchup=draw(st.sampled_from(["all", "latest"])),
                          overlap=draw(st.sampled_from(["allow", "skip"])), idempotent=draw(st.booleans()),
                          ack_delay=f"{draw(st.integers(0, 30))}s", covers=covers,
                          rate_limit="src" if rate else None, account="acme",
                          effect_at=draw(st.sampled_from([0.5, 1.0])))
        fleet.append(calsim.Schedule(f"s{i}", "UTC", f"2026-01-01T00:{draw(st.integers(0, 9)):02d}",
                                     f"FREQ=MINUTELY;INTERVAL={minutes}", policy=p))
    count = draw(st.integers(1, 4))
    crashes = [calsim.WorkerCrash(f"2026-01-01T{draw(st.integers(0, 5)):02d}:{draw(st.integers(0, 59)):02d}Z",
                                  workers=draw(st.integers(1, count)), down_for=f"{draw(st.integers(0, 20))}min")
               for _ in range(draw(st.integers(0, 3)))]
    outages = [calsim.Outage("2026-01-01T02:00Z", "2026-01-01T03:00Z")] if draw(st.booleans()) else []
    return calsim.Scenario(
        "p", fleet, "2026-01-01T00:00Z", "2026-01-01T06:00Z", outages=outages,
        workers=calsim.Workers(count, lease=f"{draw(st.integers(20, 90))}min",
                               heartbeat=draw(st.sampled_from([None, "1min"])),
                               crash_rate=draw(st.sampled_from([None, "2/h"]))),
        events=crashes, seed=draw(st.integers(0, 2**32)),
        rate_limits=[calsim.RateLimit("src", rate=draw(st.sampled_from(["1/min", "10/h", "3/5min"])),
                                      burst=draw(st.integers(1, 4)))] if rate else [],
        breakers=[calsim.Breaker("account:acme", after=draw(st.integers(1, 4)), open_for="10min")]
        if draw(st.booleans()) else [],
        schedulers=draw(st.integers(1, 3)), scheduler_skew=f"{draw(st.integers(0, 5))}s",
        dedupe=draw(st.sampled_from(["key", "none"])),
        failures=calsim.Failures(draw(st.sampled_from([0.0, 0.3])), max_attempts=draw(st.integers(1, 4)),
                                 classes={"transient": 0.8, "review": 0.1, "permanent": 0.1},
                                 jitter=draw(st.sampled_from(["none", "full"]))))


# 40 random scenarios per property in the test command; CALSIM_LONG=1 runs 1,000 (a soak of the worker loop).
PROPERTY = settings(max_examples=1000 if os.environ.get("CALSIM_LONG") == "1" else 40, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow])


@PROPERTY
@given(scenarios())
def test_every_occurrence_has_exactly_one_terminal_row(sc):
    ledger = calsim.simulate(sc)
    expected = calsim.expand(list(sc.schedules), sc.start, sc.end)
    assert ledger.frame.height == expected.height
    assert ledger.frame.select("schedule_id", "nominal_local", "fold").n_unique() == expected.height
    assert ledger.frame["state"].null_count() == 0


@PROPERTY
@given(scenarios())
def test_no_two_attempts_hold_one_worker_at_once(sc):
    log = calsim.simulate(sc).attempt_log.filter(pl.col("worker").is_not_null()).sort("worker", "started_utc")
    same = log["worker"][1:] == log["worker"][:-1]
    assert (log["started_utc"][1:].filter(same) >= log["released_utc"][:-1].filter(same)).all()


@PROPERTY
@given(scenarios())
def test_a_bucket_never_starts_more_than_burst_plus_refill(sc):
    """Tokens never go negative: in any span [t1, t2] at most burst + floor((t2 - t1) * rate) attempts start."""
    if not sc.rate_limits:
        return
    lim = sc.rate_limits[0]
    starts = np.sort(calsim.simulate(sc).attempt_log["started_utc"].dt.epoch("us").to_numpy())
    count, period = lim.per
    for i in range(len(starts)):
        # spans from each start to every later start: the tightest ones
        span = starts[i:] - starts[i]
        allowed = lim.burst + (span * count) // period
        assert (np.arange(1, len(span) + 1) <= allowed).all()


@PROPERTY
@given(scenarios())
def test_with_dedupe_no_key_is_executed_twice(sc):
    sc = calsim.Scenario(sc.name, sc.schedules, sc.start, sc.end, workers=sc.workers, events=sc.events,
                         rate_limits=sc.rate_limits, schedulers=sc.schedulers, dedupe="key", seed=sc.seed)
    log = calsim.simulate(sc).attempt_log
    per_key = log.group_by("schedule_id", "nominal_local", "fold").agg(
        pl.col("instance").n_unique().alias("executions"), (pl.col("outcome") == "succeeded").sum().alias("ok"))
    assert per_key["executions"].max() in (None, 1)
    assert per_key["ok"].max() in (None, 0, 1)


@PROPERTY
@given(scenarios())
def test_the_same_scenario_and_seed_give_the_same_ledger(sc):
    assert calsim.simulate(sc).frame.equals(calsim.simulate(sc).frame)


def test_unbounded_workers_without_faults_settle_as_the_column_paths_do():
    """The attempt loop against the column path (its oracle here): lognormal durations, transient failures with
    retries, jitter, an outage and catch-up. With workers that never run out or crash and a lease longer than
    any run, every run must start, retry and end exactly where the columns put it."""
    fleet = calsim.with_policy(calsim.examples.fleet(40, seed=3), duration=calsim.LogNormal("5min", "40min"),
                               jitter="2min", overlap="allow", catchup="all")
    kw = dict(outages=[calsim.Outage("2026-03-02T05:00Z", "2026-03-02T09:00Z")], seed=11,
              failures=calsim.Failures(0.3, max_attempts=3, backoff="2min"))
    plain = calsim.simulate(calsim.Scenario("p", fleet, "2026-03-01T00:00Z", "2026-03-08T00:00Z", **kw)).frame
    worker = calsim.simulate(calsim.Scenario("p", fleet, "2026-03-01T00:00Z", "2026-03-08T00:00Z", **kw,
                                             workers=calsim.Workers(100_000, lease="30d"))).frame
    cols = ["state", "reason", "started_utc", "finished_utc", "attempts", "cost", "lateness_s"]
    assert worker.select(cols).equals(plain.select(cols))
    assert (worker["attempts"] > 1).any() and (worker["state"] == "failed").any()


# -- validation --------------------------------------------------------------------------------------


S = calsim.Schedule("a", "UTC", "2026-01-01T00:00", "FREQ=HOURLY")


@pytest.mark.parametrize("make, message", [
    (lambda: calsim.Workers(0), "workers.count: 0 (allowed an integer from 1 to 100,000)"),
    (lambda: calsim.Workers(2, lease="90s", heartbeat="2min"), "workers.heartbeat: '2min' is not shorter"),
    (lambda: calsim.Workers(2, crash_rate="often"), "workers.crash_rate: 'often' is not a rate"),
    (lambda: calsim.RateLimit("crm", rate="10 per min"), "ratelimit.rate: '10 per min' is not a rate"),
    (lambda: calsim.RateLimit("crm", rate="10/min", burst=0), "ratelimit.burst: 0 (allowed an integer"),
    (lambda: calsim.RateLimit("", rate="10/min"), "ratelimit.name: expected a non-empty string"),
    (lambda: calsim.Breaker("tenant=acme"), "breaker.scope: 'tenant=acme' (allowed 'account:<name>'"),
    (lambda: calsim.Breaker("account:acme", after=0), "breaker.after: 0"),
    (lambda: calsim.WorkerCrash(T0, workers=[]), "workercrash.workers: [] (allowed a count >= 1"),
    (lambda: calsim.Failures(0.1, classes={"transient": 0.5}), "failures.classes: shares sum to 0.5"),
    (lambda: calsim.Failures(0.1, classes={"fatal": 1.0}), "failures.classes: unknown error class 'fatal'"),
    (lambda: calsim.Failures(0.1, jitter="some"), "failures.jitter: unknown jitter 'some'"),
    (lambda: calsim.Policy(effect_at=0), "effect_at: 0 (allowed a fraction of the duration in (0, 1])"),
    (lambda: calsim.Policy(covers="all"), "covers: unknown data window 'all'"),
    (lambda: calsim.Scenario("x", [S], T0, T1, schedulers=0), "scenario.schedulers: 0 (allowed an integer"),
    (lambda: calsim.Scenario("x", [S], T0, T1, dedupe="maybe"), "scenario.dedupe: unknown dedupe 'maybe'"),
    (lambda: calsim.Scenario("x", [S], T0, T1, events=[calsim.WorkerCrash(T0)]), "needs workers=Workers(...)"),
    (lambda: calsim.Scenario("x", [S], T0, T1, workers=calsim.Workers(2), events=[calsim.WorkerCrash(T0, workers=[5])]),
     "workercrash.workers: worker 5 at '2026-01-01T00:00Z', but the scenario has 2 (allowed worker numbers 0..1)"),
    (lambda: calsim.Scenario("x", [calsim.Schedule("a", "UTC", T0[:-1], "FREQ=HOURLY",
                                                   policy=calsim.Policy(rate_limit="crm"))], T0, T1),
     "policy.rate_limit: schedule 'a' names 'crm', which is not in scenario.rate_limits"),
    (lambda: calsim.Scenario("x", [S], T0, T1, breakers=[calsim.Breaker("account:nobody")]),
     "breaker.scope: 'account:nobody' covers no schedule"),
    (lambda: calsim.Scenario("x", [S], T0, T1, workers=calsim.Workers(2), capacity=3),
     "scenario.capacity: 3 with workers=Workers(2): the workers are the capacity"),
    (lambda: calsim.Workers(2, renew="yes"), "workers.renew: 'yes' (allowed True"),
])
def test_worker_level_input_is_refused_with_a_message_naming_field_value_and_allowed(make, message):
    with pytest.raises(calsim.CalsimError) as err:
        make()
    assert message in str(err.value)


def test_seeded_crashes_are_reproducible_and_move_with_the_seed():
    def crashes(seed):
        sc = calsim.Scenario("x", [S], T0, "2026-01-03T00:00Z", seed=seed,
                             workers=calsim.Workers(3, crash_rate="4/day", down_for="10min"))
        from calsim.simulation.worker_loop import crash_plan

        return [a.tolist() for a in crash_plan(sc)]

    assert crashes(1) == crashes(1)
    assert crashes(1) != crashes(2)
    t, w, _ = crashes(1)
    assert 3 * 2 * 4 / 3 < len(t) < 3 * 2 * 4 * 3  # about 24 over two days, three workers


@pytest.mark.parametrize("edge, skipped", [("on_time", 1), ("late", 2)])
def test_a_token_exactly_at_max_lateness_follows_the_limit_edge(edge, skipped):
    """rate 1/min, burst 1, 3 runs at 00:00, max_lateness 1 min: tokens at 0, 1 and 2 min. The second run's
    lateness equals the limit: within it for limit_edge="on_time" (1 skipped), past it for "late" (2 skipped)."""
    p = calsim.Policy(rate_limit="src", max_lateness="1min", limit_edge=edge)
    fleet = [calsim.Schedule(f"s{i}", "UTC", "2026-01-01T00:00", "FREQ=DAILY", policy=p) for i in range(3)]
    ledger = simulate(fleet, end="2026-01-01T12:00Z", rate_limits=[calsim.RateLimit("src", rate="1/min")])
    assert ledger.summary()["rate_limited"].item() == skipped


def test_a_ledger_frame_from_before_the_worker_columns_reads_them_as_null():
    """A frame written before issue 19 (no worker-level columns): the views answer, with no duplicates or windows."""
    from calsim.simulation.ledger import Ledger
    from calsim.simulation.ledger_schema import WORKER_COLUMNS

    frame = simulate([daily_noon(duration="1min")]).frame.drop(WORKER_COLUMNS)
    old = Ledger("old", frame)
    assert old.summary(full=True)["duplicate_effects"].item() == 0
    assert old.coverage().select("on_time", "never", "twice").row(0) == (1, 0, 0)


def test_duplicate_effects_do_not_wrap_at_int32():
    from calsim.simulation.views import summary

    frame = simulate([daily_noon(duration="1min")]).frame
    big = pl.concat([frame, frame]).with_columns(effects=pl.lit(2**31 - 1, pl.Int32))
    assert summary(big, "x").collect()["duplicate_effects"].item() == 2 * (2**31 - 2)


def test_a_scenario_file_gives_workers_rate_limits_breakers_crashes_and_schedulers(tmp_path):
    path = tmp_path / "burst.toml"
    path.write_text('''
[scenario]
name = "burst"
start = "2026-01-01T00:00Z"
end = "2026-01-02T00:00Z"
schedulers = 2
scheduler_skew = "2s"
dedupe = "none"

[[schedule]]
id = "digest"
zone = "UTC"
start = "2026-01-01T00:00"
rrule = "FREQ=HOURLY"
policy = { duration = "60s", rate_limit = "crm", idempotent = true, covers = "own_window" }

[workers]
count = 2
lease = "90s"

[[rate_limit]]
name = "crm"
rate = "10/min"
burst = 5

[[breaker]]
scope = "source:crm"
after = 3

[[event]]
type = "workercrash"
at = "2026-01-01T05:00:30Z"
workers = [0]
''')
    sc = calsim.load_scenario(path)
    assert (sc.workers.count, sc.rate_limits[0].burst, sc.breakers[0].after, sc.schedulers) == (2, 5, 3, 2)
    ledger = calsim.simulate(sc)
    assert ledger.frame["attempts"].sum() >= 48 and ledger.summary()["duplicate_effects"].item() == 0
    path.write_text(path.read_text().replace("count = 2", "count = 2\nleese = '1h'"))
    with pytest.raises(calsim.CalsimError, match="leese"):
        calsim.load_scenario(path)


def test_a_scenario_file_gives_the_workers_renew(tmp_path):
    """``renew`` in [workers] is Workers(renew=...); a value that is not a bool is refused naming the file."""
    path = tmp_path / "leases.toml"
    text = '''
[scenario]
name = "leases"
start = "2026-01-01T00:00Z"
end = "2026-01-02T00:00Z"

[[schedule]]
id = "a"
zone = "UTC"
start = "2026-01-01T12:00"
rrule = "FREQ=DAILY"

[workers]
count = 2
lease = "90s"
heartbeat = "10s"
renew = false
'''
    path.write_text(text)
    assert calsim.load_scenario(path).workers == calsim.Workers(2, lease="90s", heartbeat="10s", renew=False)
    path.write_text(text.replace("renew = false", 'renew = "no"'))
    with pytest.raises(calsim.CalsimError, match=r"leases.toml.*workers.renew: 'no' \(allowed True"):
        calsim.load_scenario(path)


def test_a_worker_crashing_again_for_no_time_is_not_lost():
    """The only worker is down 11:59:00-12:00:30, so the 12:00 run starts at 12:00:30 when it is back; it crashes
    again at that instant for no time, losing the run: the lease (90 s) ends at 12:02:00 and the retry runs then,
    on the same worker, as does the next day's run."""
    ledger = simulate([daily_noon(duration="60s")], end="2026-01-03T00:00Z", workers=calsim.Workers(1, lease="90s"),
                      events=[calsim.WorkerCrash("2026-01-01T11:59:00Z", down_for="90s"),
                              calsim.WorkerCrash("2026-01-01T12:00:30Z", down_for="0s")],
                      failures=calsim.Failures(0.0, max_attempts=2))
    assert ledger.frame["state"].to_list() == ["done", "done"]
    assert ledger.attempt_log["started_utc"].to_list()[:2] == [at("2026-01-01T12:00:30"), at("2026-01-01T12:02:00")]
