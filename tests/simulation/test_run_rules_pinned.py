"""Each run rule pinned at its boundaries: backlog order, coalescing, edges, stuck, in-turn backlogs, suspends, budgets.

Every scenario is checked on both settle paths (columns and the ordered event
loop), so a rule is pinned wherever it is used.
"""

from __future__ import annotations

import dataclasses
import datetime as dt

import numpy as np
import polars as pl
import pytest

import calsim
from calsim import presets
from calsim.simulation import run_rules as rules

UTC = dt.timezone.utc
US = 1_000_000


def simulate(sc):
    """The ledger's scheduled rows; the same on both settle paths."""
    a = calsim.simulate(sc, progress=False).frame
    b = calsim.simulate(sc, progress=False, settle="events").frame
    assert a.equals(b)
    return a.filter(pl.col("kind") == "scheduled")


def outcome(f, **where):
    rows = f
    for k, v in where.items():
        rows = rows.filter(pl.col(k) == v)
    return [(r["state"], r["reason"]) for r in rows.iter_rows(named=True)]


def utc(text):
    return dt.datetime.fromisoformat(text).replace(tzinfo=UTC)


# -- a backlog is ordered by due instant, never by wall time -----------------------------------


def fall_back(policy=None, preset=None, tick="1min"):
    """01:30 and 01:45 in both passes of New York's 2026-11-01 fall-back; down 05:00Z-06:40Z.

    Missed: 01:30 EDT (05:30Z), 01:45 EDT (05:45Z), 01:30 EST (06:30Z). Due
    last in UTC is 01:30 EST, though 01:45 is the latest wall time.
    """
    s = calsim.Schedule("fb", "America/New_York", "2026-10-31T00:00", "30,45 1 * * *", fold="both",
                        policy=policy or calsim.Policy())
    if preset is not None:
        s = preset.apply(s)
        # Both passes (a preset whose scheduler walks the calendar, gap="scheduler", decides its folds itself).
        s = calsim.Schedule(s.id, s.zone, s.start, s.rule, gap=s.gap, fold=s.fold if s.gap == "scheduler" else "both",
                            policy=s.policy)
        tick = preset.tick
    return calsim.Scenario("fb", [s], "2026-11-01T04:00Z", "2026-11-01T08:00Z", release="2026f", tick=tick,
                           outages=[calsim.Outage("2026-11-01T05:00Z", "2026-11-01T06:40Z")])


def runs_of(f):
    return f.filter(pl.col("state") == "done")["due_utc"].dt.strftime("%H:%M").to_list()


def test_latest_keeps_the_run_due_last_in_utc_across_a_fall_back():
    f = simulate(fall_back(calsim.Policy(catchup="latest")))
    assert runs_of(f) == ["06:30", "06:45"]  # 01:30 EST, then 01:45 EST on time
    assert outcome(f.filter(pl.col("due_utc") < utc("2026-11-01T06:30"))) == [("coalesced", "catchup")] * 2


def test_earliest_keeps_the_run_due_first_in_utc_across_a_fall_back():
    f = simulate(fall_back(calsim.Policy(catchup="earliest")))
    assert runs_of(f) == ["05:30", "06:45"]  # 01:30 EDT


def test_bounded_keeps_the_newest_in_utc_across_a_fall_back():
    f = simulate(fall_back(calsim.Policy(catchup="bounded", limit=2)))
    assert runs_of(f) == ["05:45", "06:30", "06:45"]  # 01:45 EDT and 01:30 EST, not 01:30 EDT


@pytest.mark.parametrize("preset, runs", [
    (presets.kubernetes(), ["06:30", "06:45"]),             # most recent in UTC
    (presets.temporal(), ["05:30", "06:45"]),               # earliest in UTC (SKIP)
    (presets.quartz(job_store="jdbc"), ["06:30", "06:45"]),  # SMART_POLICY: one run now
    (presets.quartz(), ["06:45"]),                          # RAMJobStore: a restart re-schedules, nothing missed
    (presets.systemd(persistent=True), ["06:30", "06:45"]),
    (presets.cronie(), ["06:45"]),                          # no catch-up
    (presets.eventbridge(), ["05:30", "05:45", "06:30", "06:45"]),
    (presets.apscheduler(misfire_grace_time=None, jobstore="persistent"), ["06:30", "06:45"]),
    (presets.apscheduler(misfire_grace_time=None), ["06:45"]),  # a restart with a memory store misses nothing
], ids=["kubernetes", "temporal", "quartz-jdbc", "quartz-ram", "systemd", "cronie", "eventbridge", "apscheduler",
        "apscheduler-memory"])
def test_each_preset_across_a_fall_back(preset, runs):
    assert runs_of(simulate(fall_back(preset=preset))) == runs


# -- a wake-up that finds a misfire and an on-time occurrence: one backlog when coalescing ------


def recovery(policy, end, tick="10s", rule="* * * * *"):
    s = calsim.Schedule("m", "UTC", "2026-01-01T00:00", rule, policy=policy)
    return calsim.Scenario("r", [s], "2026-01-01T09:55Z", "2026-01-01T10:08Z", release="2026f", tick=tick,
                           outages=[calsim.Outage("2026-01-01T10:00:30Z", end)])


def test_recovering_just_after_a_fire_time_runs_only_that_fire_when_coalescing():
    f = simulate(recovery(calsim.Policy(catchup="latest"), "2026-01-01T10:05:00.600000Z"))
    at = f.filter((pl.col("due_utc") >= utc("2026-01-01T10:01")) & (pl.col("due_utc") <= utc("2026-01-01T10:05")))
    assert outcome(at) == [("coalesced", "catchup")] * 4 + [("done", None)]
    assert at["started_utc"].drop_nulls().to_list() == [utc("2026-01-01T10:05:00.600000")]


def test_recovering_just_after_a_fire_time_with_catchup_all_runs_every_one():
    f = simulate(recovery(calsim.Policy(catchup="all"), "2026-01-01T10:05:00.600000Z"))
    assert f.filter(pl.col("state") == "done").height == f.height


def test_skip_drops_the_missed_but_runs_the_fire_time_it_comes_back_at():
    f = simulate(recovery(calsim.Policy(catchup="skip"), "2026-01-01T10:05:00.600000Z"))
    at = f.filter((pl.col("due_utc") >= utc("2026-01-01T10:01")) & (pl.col("due_utc") <= utc("2026-01-01T10:05")))
    assert outcome(at) == [("skipped", "catchup")] * 4 + [("done", None)]


# -- misfire and deadline edges ---------------------------------------------------------------


@pytest.mark.parametrize("late_by, state", [(199_999_999, "done"), (200_000_000, "expired"), (200_000_001, "expired")])
def test_kubernetes_deadline_excludes_a_time_exactly_that_late(late_by, state):
    # one missed time, recovery `late_by` µs after it: startingDeadlineSeconds=200
    end = dt.datetime(2026, 1, 1, 10, 1, tzinfo=UTC) + dt.timedelta(microseconds=late_by)
    p = presets.kubernetes(starting_deadline_seconds=200)
    s = p.apply(calsim.Schedule("k", "UTC", "2026-01-01T00:00", "1 10 * * *"))
    sc = calsim.Scenario("k", [s], "2026-01-01T10:00Z", "2026-01-01T11:00Z", release="2026f", tick="1s",
                         outages=[calsim.Outage("2026-01-01T10:00:30Z", end)])
    assert simulate(sc)["state"].to_list() == [state]


@pytest.mark.parametrize("late_by, state", [(999_999, "done"), (1_000_000, "done"), (1_000_001, "expired")])
def test_apscheduler_grace_runs_a_time_exactly_that_late(late_by, state):
    end = dt.datetime(2026, 1, 1, 10, 1, tzinfo=UTC) + dt.timedelta(microseconds=late_by)
    p = presets.apscheduler()
    s = p.apply(calsim.Schedule("a", "UTC", "2026-01-01T00:00", "1 10 * * *"))
    sc = calsim.Scenario("a", [s], "2026-01-01T10:00Z", "2026-01-01T11:00Z", release="2026f", tick="10s",
                         outages=[calsim.Outage("2026-01-01T10:00:30Z", end)])
    assert simulate(sc)["state"].to_list() == [state]


@pytest.mark.parametrize("late_by, state", [(59_999_999, "done"), (60_000_000, "skipped")])
def test_quartz_do_nothing_misfires_a_time_exactly_threshold_late(late_by, state):
    end = dt.datetime(2026, 1, 1, 10, 1, tzinfo=UTC) + dt.timedelta(microseconds=late_by)
    p = presets.quartz(misfire_instruction="DO_NOTHING")  # RAMJobStore, the JVM paused (suspended)
    s = p.apply(calsim.Schedule("q", "UTC", "2026-01-01T00:00", "1 10 * * *"))
    sc = calsim.Scenario("q", [s], "2026-01-01T10:00Z", "2026-01-01T11:00Z", release="2026f", tick="1s",
                         outages=[calsim.Outage("2026-01-01T10:00:30Z", end, kind="suspend")])
    assert simulate(sc)["state"].to_list() == [state]


@pytest.mark.parametrize("edge, state", [("on_time", "done"), ("late", "skipped")])
def test_misfire_at_lateness_exactly_equal_to_the_grace_follows_the_edge(edge, state):
    s = calsim.Schedule("g", "UTC", "2026-01-01T00:00", "1 10 * * *",
                        policy=calsim.Policy(catchup="skip", misfire_grace="2min", limit_edge=edge))
    sc = calsim.Scenario("g", [s], "2026-01-01T10:00Z", "2026-01-01T11:00Z", release="2026f",
                         outages=[calsim.Outage("2026-01-01T10:00:30Z", "2026-01-01T10:03Z")])
    assert simulate(sc)["state"].to_list() == [state]


@pytest.mark.parametrize("edge, state", [("on_time", "done"), ("late", "expired")])
def test_expiry_at_lateness_exactly_equal_to_max_lateness_follows_the_edge(edge, state):
    s = calsim.Schedule("x", "UTC", "2026-01-01T00:00", "1 10 * * *",
                        policy=calsim.Policy(catchup="all", max_lateness="5min", limit_edge=edge))
    sc = calsim.Scenario("x", [s], "2026-01-01T10:00Z", "2026-01-01T11:00Z", release="2026f",
                         outages=[calsim.Outage("2026-01-01T10:00:30Z", "2026-01-01T10:06Z")])
    assert simulate(sc)["state"].to_list() == [state]


def test_default_grace_is_one_tick_even_for_due_times_off_the_tick():
    # Due at 10:00:30 with a 1-minute tick: picked at 10:01 (30 s late, within one tick): runs with "skip".
    s = calsim.Schedule("o", "UTC", "2026-01-01T10:00:30", "FREQ=HOURLY", policy=calsim.Policy(catchup="skip"))
    sc = calsim.Scenario("o", [s], "2026-01-01T10:00Z", "2026-01-01T12:00Z", release="2026f")
    f = simulate(sc)
    assert f["state"].to_list() == ["done", "done"]
    assert f["lateness_s"].to_list() == [30.0, 30.0]
    # Down until 10:01:30: picked 60 s late, beyond the tick: skipped.
    sc = calsim.Scenario("o", [s], "2026-01-01T10:00Z", "2026-01-01T12:00Z", release="2026f",
                         outages=[calsim.Outage("2026-01-01T10:00:45Z", "2026-01-01T10:01:30.000001Z")])
    assert simulate(sc)["state"].to_list() == ["skipped", "done"]


# -- catch-up "bounded" ---------------------------------------------------------------------------


@pytest.mark.parametrize("limit", [1, 2, 3, 9])
def test_bounded_runs_the_newest_limit_and_skips_the_rest(limit):
    s = calsim.Schedule("b", "UTC", "2026-01-01T00:00", "FREQ=HOURLY",
                        policy=calsim.Policy(catchup="bounded", limit=limit))
    sc = calsim.Scenario("b", [s], "2026-01-01T00:00Z", "2026-01-01T08:00Z", release="2026f",
                         outages=[calsim.Outage("2026-01-01T00:30Z", "2026-01-01T05:30Z")])
    f = simulate(sc)
    missed = f.filter((pl.col("due_utc") > utc("2026-01-01T00:30")) & (pl.col("due_utc") < utc("2026-01-01T05:30")))
    kept = min(limit, 5)
    assert outcome(missed) == [("skipped", "catchup")] * (5 - kept) + [("done", None)] * kept


# -- Kubernetes "> 100 missed" (docs, v1 controller): stuck ------------------------------------


def test_more_than_100_missed_leaves_the_cronjob_stuck_until_revised():
    p = presets.kubernetes(too_many_missed="docs")
    s = p.apply(calsim.Schedule("k", "UTC", "2026-01-01T00:00", "* * * * *"))
    revised = calsim.Schedule("k", "UTC", "2026-01-01T00:00", "*/30 * * * *", policy=s.policy)
    sc = calsim.Scenario("k", [s], "2026-01-01T00:00Z", "2026-01-01T06:00Z", release="2026f", tick="10s",
                         outages=[calsim.Outage("2026-01-01T01:00:30Z", "2026-01-01T02:45Z")],
                         events=[calsim.Revise("2026-01-01T04:00Z", revised)])
    f = simulate(sc)
    before = f.filter(pl.col("due_utc") <= utc("2026-01-01T01:00"))
    assert set(before["state"].to_list()) == {"done"}
    stuck = f.filter((pl.col("due_utc") > utc("2026-01-01T01:00")) & (pl.col("revision") == 1))
    assert set(stuck["state"].to_list()) == {"skipped"} and set(stuck["reason"].to_list()) == {"stuck"}
    assert stuck.height == 179  # 01:01 .. 03:59: the backlog of 105 and every later time
    assert set(f.filter(pl.col("revision") == 2)["state"].to_list()) == {"done"}


def test_100_missed_are_caught_up_as_the_most_recent():
    p = presets.kubernetes(too_many_missed="docs")
    s = p.apply(calsim.Schedule("k", "UTC", "2026-01-01T00:00", "* * * * *"))
    sc = calsim.Scenario("k", [s], "2026-01-01T00:00Z", "2026-01-01T03:00Z", release="2026f", tick="10s",
                         outages=[calsim.Outage("2026-01-01T01:00:30Z", "2026-01-01T02:40:05Z")])
    f = simulate(sc)  # 01:01 .. 02:40 = 100 times, the on-time 02:40 among them
    assert f.filter(pl.col("reason") == "stuck").height == 0
    assert f.filter(pl.col("state") == "coalesced").height == 99


# -- a backlog worked through in turn (APScheduler coalesce=False, max_instances=1) -------------


def in_turn_scenario(grace):
    p = presets.apscheduler(coalesce=False, misfire_grace_time=grace, jobstore="persistent")
    s = p.apply(calsim.Schedule("t", "UTC", "2026-01-01T00:00", "0 * * * *", policy=calsim.Policy(duration="20min")))
    return calsim.Scenario("t", [s], "2026-01-01T00:30Z", "2026-01-01T06:00Z", release="2026f", tick="1s",
                           outages=[calsim.Outage("2026-01-01T00:30Z", "2026-01-01T03:10Z")])


def test_one_instance_works_through_the_backlog_in_due_order():
    f = simulate(in_turn_scenario(None))
    starts = f.filter(pl.col("state") == "done")["started_utc"].dt.strftime("%H:%M").to_list()
    # 01:00, 02:00, 03:00 missed: run back to back from 03:10 to 04:10; 04:00 finds the one
    # instance busy (max_instances reached: skipped), 05:00 runs on time
    assert starts == ["03:10", "03:30", "03:50", "05:00"]
    assert outcome(f, due_utc=utc("2026-01-01T04:00")) == [("skipped", "overlap")]


@pytest.mark.parametrize("grace, states", [
    (2 * 3600 + 10 * 60, ["done", "done", "done"]),         # 01:00 starts at 03:10, exactly 2h10 late: runs
    (2 * 3600 + 10 * 60 - 1, ["expired", "done", "done"]),  # ... a second less: 01:00 expires, 02:00 at 03:10
    (5400, ["expired", "done", "done"]),                    # 02:00 at 03:10 is 70 min late, 03:00 at 03:30
    (1800, ["expired", "expired", "done"]),                 # 03:00 at 03:10 (10 min late)
])
def test_each_backlog_member_expires_when_its_turn_comes_too_late(grace, states):
    f = simulate(in_turn_scenario(grace))
    assert f.filter(pl.col("due_utc") <= utc("2026-01-01T03:00"))["state"].to_list() == states


def test_in_turn_backlog_expiry_is_checked_at_each_members_start():
    # Three missed half-hourly runs of 40 min: the third's turn comes 80 min after the come-back.
    p = presets.apscheduler(coalesce=False, misfire_grace_time=3600, jobstore="persistent")
    s = p.apply(calsim.Schedule("t", "UTC", "2026-01-01T00:00", "*/30 * * * *",
                                policy=calsim.Policy(duration="40min")))
    sc = calsim.Scenario("t", [s], "2026-01-01T00:45Z", "2026-01-01T02:05Z", release="2026f", tick="1s",
                         outages=[calsim.Outage("2026-01-01T00:45Z", "2026-01-01T01:55Z")])
    f = simulate(sc)
    # 01:00 starts at 01:55 (55 min late, within the hour) and runs to 02:35; 01:30's turn comes at
    # 02:35, 65 min late: missed (expired). 02:00 is its own wake-up, while the instance is busy: skipped.
    got = [(r["due_utc"].strftime("%H:%M"), r["state"], r["started_utc"] and r["started_utc"].strftime("%H:%M"))
           for r in f.iter_rows(named=True)]
    assert got == [("01:00", "done", "01:55"), ("01:30", "expired", None), ("02:00", "skipped", None)]


def test_coalesce_false_with_more_instances_still_works_the_backlog_on_one_instance():
    # One submit_job(job, run_times) is one instance (APScheduler executors/base.py:58-75): 20-min runs in turn.
    p = presets.apscheduler(coalesce=False, max_instances=3, misfire_grace_time=None, jobstore="persistent")
    assert (p.policy.backlog, p.policy.max_active) == ("in_turn", 3)
    s = p.apply(calsim.Schedule("t", "UTC", "2026-01-01T00:00", "0 * * * *", policy=calsim.Policy(duration="20min")))
    sc = calsim.Scenario("t", [s], "2026-01-01T00:30Z", "2026-01-01T04:00Z", release="2026f", tick="1s",
                         outages=[calsim.Outage("2026-01-01T00:30Z", "2026-01-01T03:10Z")])
    starts = simulate(sc).filter(pl.col("state") == "done")["started_utc"].dt.strftime("%H:%M").to_list()
    assert starts == ["03:10", "03:30", "03:50"]


# -- suspends and cron's restart --------------------------------------------------------------


def test_a_scheduler_without_a_look_at_recovery_skips_the_minute_it_restarts_in():
    s = calsim.Schedule("c", "UTC", "2026-01-01T00:00", "* * * * *",
                        policy=calsim.Policy(catchup="skip", misfire_grace=0, recovery_wake=False))
    sc = calsim.Scenario("c", [s], "2026-01-01T10:00Z", "2026-01-01T10:10Z", release="2026f",
                         outages=[calsim.Outage("2026-01-01T10:02:30Z", "2026-01-01T10:05Z")])
    f = simulate(sc)
    got = {r["due_utc"].minute: r["state"] for r in f.iter_rows(named=True)}
    assert got == {0: "done", 1: "done", 2: "done", 3: "skipped", 4: "skipped", 5: "skipped", 6: "done", 7: "done",
                   8: "done", 9: "done"}


@pytest.mark.parametrize("kind, length, runs", [
    ("down", "30min", 0), ("suspend", "30min", 1), ("suspend", "3h", 0),
])
def test_suspend_catchup_applies_to_a_suspend_no_longer_than_its_limit(kind, length, runs):
    s = calsim.Schedule("s", "UTC", "2026-01-01T00:00", "15 10 * * *",
                        policy=calsim.Policy(catchup="skip", suspend_catchup="latest", suspend_limit="2h"))
    end = utc("2026-01-01T10:00") + {"30min": dt.timedelta(minutes=30), "3h": dt.timedelta(hours=3)}[length]
    sc = calsim.Scenario("s", [s], "2026-01-01T09:00Z", "2026-01-01T14:00Z", release="2026f",
                         outages=[calsim.Outage("2026-01-01T10:00Z", end, kind=kind)])
    assert simulate(sc).filter(pl.col("state") == "done").height == runs


def test_systemd_fires_an_elapse_missed_while_suspended_once_on_resume():
    p = presets.systemd()  # Persistent=false: a machine that was off runs nothing missed
    s = p.apply(calsim.Schedule("t", "UTC", "2026-01-01T00:00", "*/10 * * * *"))
    for kind, done in (("down", 0), ("suspend", 1)):
        sc = calsim.Scenario("t", [s], "2026-01-01T10:05Z", "2026-01-01T10:55Z", release="2026f", tick=p.tick,
                             outages=[calsim.Outage("2026-01-01T10:05Z", "2026-01-01T10:45:30Z", kind=kind)])
        f = simulate(sc)
        assert f.filter(pl.col("due_utc") < utc("2026-01-01T10:45"))["state"].to_list().count("done") == done


def test_an_unknown_outage_kind_is_refused_naming_the_field():
    with pytest.raises(calsim.InputError, match=r"^outage.kind: unknown kind 'nap' \(allowed: 'down' or 'suspend'\)"):
        calsim.Outage("2026-01-01T00:00Z", "2026-01-01T01:00Z", kind="nap")


# -- budgets are never exceeded, on every path ------------------------------------------------


def test_budgets_with_retries_never_charge_a_period_over_its_limit():
    fleet = calsim.examples.fleet(300, seed=0)
    fleet = [calsim.with_policy([s], catchup="latest", overlap="skip", duration="1min", cost=1.0,
                                account=s.id.split("/")[0])[0] for s in fleet]
    tenants = sorted({s.policy.account for s in fleet})
    sc = calsim.Scenario("b", fleet, "2026-10-01T00:00Z", "2026-10-15T00:00Z", release="2026f", tick="1min",
                         outages=[calsim.Outage("2026-10-05T01:01Z", "2026-10-07T01:01Z")],
                         budgets=[calsim.Budget(t, 40, "day", "Europe/Berlin") for t in tenants],
                         failures=calsim.Failures(0.3, max_attempts=3, backoff="1min"))
    f = simulate(sc)
    acc = pl.DataFrame({"schedule_id": [s.id for s in fleet], "account": [s.policy.account for s in fleet]})
    spent = (f.filter(pl.col("started_utc").is_not_null()).join(acc, on="schedule_id")
             .group_by("account", pl.col("started_utc").dt.convert_time_zone("Europe/Berlin").dt.date())
             .agg(pl.col("cost").sum(), (pl.col("attempts") > 1).sum().alias("retried")))
    assert spent["cost"].max() <= 40
    assert spent["retried"].sum() > 0 and (f["reason"] == "budget").any()  # retries charged, budgets bind
    assert (f.filter(pl.col("started_utc").is_not_null())
            .select((pl.col("cost") == pl.col("attempts").cast(pl.Float64)).all()).item())


# -- the rules themselves ----------------------------------------------------------------------


def test_up_chains_adjacent_outages_and_keeps_an_up_instant():
    spans = ((10, 20), (20, 30), (40, 50))
    assert rules.up(15, spans) == 30 and rules.up(30, spans) == 30 and rules.up(39, spans) == 39
    assert rules.up(np.array([15, 20, 30, 45, 9]), spans).tolist() == [30, 30, 30, 50, 9]


def test_wake_picks_a_come_back_before_the_next_tick_and_never_a_tick_while_down():
    tick = 60
    spans = ((100, 110), (130, 200))
    got = rules.wake(np.array([90, 100, 105, 111, 125, 200, 201]), tick, spans)
    # 90: tick 120 is up but the scheduler came back at 110 first; 100,105: down, back at 110;
    # 111: tick 120; 125: tick 180 is down, back at 200; 200: up at its come-back; 201: tick 240
    assert got.tolist() == [110, 110, 110, 120, 200, 200, 240]
    got = rules.wake(np.array([90, 105, 111, 125, 200]), tick, spans, recovery=False)
    assert got.tolist() == [120, 120, 120, 240, 240]


def test_backlog_groups_order_by_due_within_each_schedule_and_wake_up():
    order, pos, size = rules.backlog_groups(np.array([0, 0, 1, 0]), np.array([5, 5, 5, 9]), np.array([3, 1, 2, 0]))
    assert order.tolist() == [1, 0, 3, 2] and pos.tolist() == [0, 1, 0, 0] and size.tolist() == [2, 2, 1, 1]


@pytest.mark.parametrize("mode, runs, coalesced", [
    ("all", [1, 1, 1, 1], [0, 0, 0, 0]), ("latest", [0, 0, 0, 1], [1, 1, 1, 0]),
    ("earliest", [1, 0, 0, 0], [0, 1, 1, 1]), ("skip", [0, 0, 0, 0], [0, 0, 0, 0]),
    ("bounded", [0, 0, 1, 1], [0, 0, 0, 0]),
])
def test_backlog_outcome_of_each_mode(mode, runs, coalesced):
    r, c = rules.backlog_outcome(np.full(4, rules.CATCHUP[mode]), np.full(4, 2), np.arange(4), np.full(4, 4))
    assert r.astype(int).tolist() == runs and c.astype(int).tolist() == coalesced


def test_beyond_a_limit_by_edge():
    assert rules.beyond(np.array([4, 5, 6]), 5, 0).tolist() == [False, False, True]
    assert rules.beyond(np.array([4, 5, 6]), 5, np.array([1, 1, 1])).tolist() == [False, True, True]
    assert rules.beyond(np.array([0]), 0, np.array([1])).tolist() == [False]  # on time is never late


def test_fits_and_charge():
    assert rules.fits(149.0, 1.0, 150) and not rules.fits(149.5, 1.0, 150)
    assert rules.charge(2.5, 3) == 7.5


def test_budget_periods_come_from_the_scenarios_release_and_agree_scalar_and_vectorised():
    rel = calsim.release("2026f")
    table = rel.table("America/New_York")
    # instants around New York's 2026 changes and a month end, µs
    ts = [utc(x) for x in ("2026-03-08T04:59:59", "2026-03-08T05:00", "2026-03-08T06:59", "2026-03-08T07:00",
                           "2026-11-01T04:00", "2026-11-01T05:30", "2026-11-01T06:30", "2026-12-01T04:59",
                           "2026-12-01T05:00", "2026-03-02T04:59", "2026-03-02T05:00")]
    t = np.array([int(x.timestamp()) * US for x in ts], dtype=np.int64)
    zone = rel.zone("America/New_York")
    for period in ("day", "week", "month"):
        vec = rules.period_index(table, period, t).tolist()
        scalar = [rules.period_of(table, period)(int(x)) for x in t]
        assert vec == scalar
        local = [x.astimezone(zone).date() for x in ts]
        days = [(d - dt.date(1970, 1, 1)).days for d in local]
        expect = {"day": days, "week": [(d + 3) // 7 for d in days],
                  "month": [(d.year - 1970) * 12 + d.month - 1 for d in local]}[period]
        assert vec == expect
        # and a period opens at its first local midnight
        for p in set(vec):
            start = rules.period_start(table, period, p)
            assert rules.period_of(table, period)(start) == p and rules.period_of(table, period)(start - 1) == p - 1


def test_a_come_back_inside_an_adjacent_outage_is_no_wake_up():
    spans = ((100, 110), (110, 130))
    assert rules.wake(np.array([105]), 60, spans).tolist() == [130]


def test_a_scheduler_without_a_look_at_recovery_still_wakes_when_a_suspend_ends():
    spans = ((100, 130),)
    got = rules.wake(np.array([105]), 60, spans, recovery=False, suspends=np.array([True]))
    assert got.tolist() == [130]
    assert rules.wake(np.array([105]), 60, spans, recovery=False, suspends=np.array([False])).tolist() == [180]


def test_earliest_coalesces_the_on_time_fire_met_with_a_backlog():
    f = simulate(recovery(calsim.Policy(catchup="earliest"), "2026-01-01T10:05:00.600000Z"))
    at = f.filter((pl.col("due_utc") >= utc("2026-01-01T10:01")) & (pl.col("due_utc") <= utc("2026-01-01T10:05")))
    assert outcome(at) == [("done", None)] + [("coalesced", "catchup")] * 4


def test_only_the_schedule_that_misfired_coalesces_its_on_time_rows():
    every_min = calsim.Schedule("a", "UTC", "2026-01-01T00:00", "* * * * *", policy=calsim.Policy(catchup="latest"))
    late_start = calsim.Schedule("b", "UTC", "2026-01-01T10:04:30", "FREQ=SECONDLY;INTERVAL=30",
                                 policy=calsim.Policy(catchup="latest"))
    sc = calsim.Scenario("r", [every_min, late_start], "2026-01-01T09:55Z", "2026-01-01T10:06Z", release="2026f",
                         outages=[calsim.Outage("2026-01-01T10:00:30Z", "2026-01-01T10:05:00.600000Z")])
    f = simulate(sc)
    # b: 10:04:30 (30.6 s late, within the one-minute grace) and 10:05:00 are both on time: both run
    assert f.filter(pl.col("schedule_id") == "b")["state"].to_list()[:2] == ["done", "done"]
    assert outcome(f.filter((pl.col("schedule_id") == "a") & (pl.col("due_utc") == utc("2026-01-01T10:04")))) == \
        [("coalesced", "catchup")]


@pytest.mark.parametrize("zone", ["America/Santiago", "America/New_York", "Australia/Lord_Howe", "Europe/Berlin",
                                  "America/Havana", "Asia/Gaza"])
def test_budget_periods_at_each_transition_instant_agree_with_zoneinfo(zone):
    # Santiago falls back at local midnight: at the transition instant the old offset reads the next day, the
    # new one the day before; the period is the new offset's.
    rel = calsim.release("2026f")
    table = rel.table(zone)
    tz = rel.zone(zone)
    lo, hi = int(utc("2025-01-01T00:00").timestamp()), int(utc("2028-01-01T00:00").timestamp())
    instants = [int(x) for x in table.utc if lo <= int(x) <= hi]
    assert instants
    t = np.array([x * US for x in instants] + [x * US - 1 for x in instants], dtype=np.int64)
    for period in ("day", "week", "month"):
        vec = rules.period_index(table, period, t).tolist()
        of = rules.period_of(table, period)
        assert [of(int(x)) for x in t] == vec
        epoch = dt.datetime(1970, 1, 1, tzinfo=UTC)
        local = [(epoch + dt.timedelta(microseconds=int(x))).astimezone(tz).date() for x in t]
        days = [(d - dt.date(1970, 1, 1)).days for d in local]
        expect = {"day": days, "week": [(d + 3) // 7 for d in days],
                  "month": [(d.year - 1970) * 12 + d.month - 1 for d in local]}[period]
        assert vec == expect


# -- more boundaries, each where a hand-made mutant once survived ---------------------------------


def test_a_run_due_just_before_a_restart_is_not_due_while_down():
    # Due at 10:00:10 (off the minute tick): its tick 10:01 falls in the outage, so it is picked at 10:02.
    s = calsim.Schedule("d", "UTC", "2026-01-01T10:00:10", "FREQ=DAILY",
                        policy=calsim.Policy(catchup="skip", down_is_missed=True, misfire_grace="10min"))
    sc = calsim.Scenario("d", [s], "2026-01-01T09:00Z", "2026-01-01T11:00Z", release="2026f",
                         outages=[calsim.Outage("2026-01-01T10:00:30Z", "2026-01-01T10:02Z")])
    f = simulate(sc)  # due while up, picked 110 s late: within the grace
    assert f.select("state", "started_utc").row(0) == ("done", utc("2026-01-01T10:02"))
    sc = dataclasses.replace(sc, outages=(calsim.Outage("2026-01-01T10:00:05Z", "2026-01-01T10:02Z"),))
    assert simulate(sc)["state"].to_list() == ["skipped"]  # due while down: missed however little late


def test_a_schedule_joins_on_time_rows_only_at_its_own_misfired_wake_ups():
    # a misfires at the first come-back (latest) but not at the second (a 5-minute grace); b misfires there.
    a = calsim.Schedule("a", "UTC", "2026-01-01T10:00", "FREQ=SECONDLY;INTERVAL=30",
                        policy=calsim.Policy(catchup="latest", misfire_grace="5min"))
    b = calsim.Schedule("b", "UTC", "2026-01-01T10:20:30", "FREQ=DAILY", policy=calsim.Policy(catchup="latest"))
    sc = calsim.Scenario("j", [a, b], "2026-01-01T10:00Z", "2026-01-01T10:25Z", release="2026f",
                         outages=[calsim.Outage("2026-01-01T10:00:30Z", "2026-01-01T10:07:00.600000Z"),
                                  calsim.Outage("2026-01-01T10:20:00.500000Z", "2026-01-01T10:21:40Z")])
    f = simulate(sc)
    second = f.filter((pl.col("schedule_id") == "a") & (pl.col("started_utc") == utc("2026-01-01T10:21:40")))
    assert second["due_utc"].dt.strftime("%H:%M:%S").to_list() == ["10:20:30", "10:21:00", "10:21:30"]
    assert outcome(f, schedule_id="b") == [("done", None)]


def test_a_suspend_ending_exactly_at_an_occurrence_runs_that_one_under_its_suspend_mode():
    p = presets.systemd()  # catchup skip after a boot; latest after a suspend
    s = p.apply(calsim.Schedule("t", "UTC", "2026-01-01T00:00", "*/15 * * * *"))
    sc = calsim.Scenario("t", [s], "2026-01-01T08:50Z", "2026-01-01T10:10Z", release="2026f", tick=p.tick,
                         outages=[calsim.Outage("2026-01-01T09:00Z", "2026-01-01T10:00Z", kind="suspend")])
    f = simulate(sc)
    assert outcome(f, due_utc=utc("2026-01-01T10:00")) == [("done", None)]
    assert f.filter(pl.col("due_utc").is_between(utc("2026-01-01T09:00"), utc("2026-01-01T09:45")))[
        "state"].to_list() == ["coalesced"] * 4


def test_a_run_due_exactly_at_boot_is_due_while_down():
    s = calsim.Schedule("d", "UTC", "2026-01-01T00:00", "0 10 * * *",
                        policy=calsim.Policy(catchup="skip", down_is_missed=True))
    sc = calsim.Scenario("d", [s], "2026-01-01T09:00Z", "2026-01-01T11:00Z", release="2026f",
                         outages=[calsim.Outage("2026-01-01T09:30Z", "2026-01-01T10:00Z")])
    assert simulate(sc)["state"].to_list() == ["skipped"]


@pytest.mark.parametrize("length, runs", [("30min", 1), ("31min", 0)])
def test_a_suspend_exactly_as_long_as_the_limit_is_caught_up(length, runs):
    s = calsim.Schedule("s", "UTC", "2026-01-01T00:00", "15 10 * * *",
                        policy=calsim.Policy(catchup="skip", suspend_catchup="latest", suspend_limit="30min"))
    end = utc("2026-01-01T10:00") + {"30min": dt.timedelta(minutes=30), "31min": dt.timedelta(minutes=31)}[length]
    sc = calsim.Scenario("s", [s], "2026-01-01T09:00Z", "2026-01-01T11:00Z", release="2026f",
                         outages=[calsim.Outage("2026-01-01T10:00Z", end, kind="suspend")])
    assert simulate(sc).filter(pl.col("state") == "done").height == runs


def test_retries_back_off_exponentially():
    s = calsim.Schedule("r", "UTC", "2026-01-01T00:00", "0 10 * * *", policy=calsim.Policy(duration="10min"))
    sc = calsim.Scenario("r", [s], "2026-01-01T09:00Z", "2026-01-01T11:00Z", release="2026f",
                         failures=calsim.Failures(1.0, max_attempts=4, backoff="1min"))
    f = simulate(sc)
    # four 10-minute attempts and waits of 1, 2 and 4 minutes between them
    assert f.select(pl.col("finished_utc") - pl.col("started_utc")).item() == dt.timedelta(minutes=47)
    assert f.select("state", "reason", "attempts").row(0) == ("failed", "retries_exhausted", 4)


def test_runs_held_for_budget_are_caught_up_in_due_order_across_a_fall_back():
    # One run a day fits (Etc/GMT+7 days open at 07:00Z); 01:45 EDT, 01:30 EST and 01:45 EST wait for the
    # 07:00Z opening; earliest keeps the one due first in UTC: 01:45 EDT (05:45Z), not 01:30 EST.
    s = calsim.Schedule("fb", "America/New_York", "2026-10-31T00:00", "30,45 1 * * *", fold="both",
                        policy=calsim.Policy(catchup="earliest", cost=1.0, account="a"))
    sc = calsim.Scenario("fb", [s], "2026-11-01T04:00Z", "2026-11-01T08:00Z", release="2026f",
                         budgets=[calsim.Budget("a", 1, "day", "Etc/GMT+7")])
    f = simulate(sc)
    assert f.filter(pl.col("state") == "done")["due_utc"].dt.strftime("%H:%M").to_list() == ["05:30", "05:45"]
    assert f.filter(pl.col("due_utc") == utc("2026-11-01T05:45"))["started_utc"].to_list() == [utc("2026-11-01T07:00")]


def test_picks_of_one_wake_up_meet_the_budget_in_due_order():
    # Down 05:40Z-06:40Z: 01:45 EDT (05:45Z) and 01:30 EST (06:30Z) are picked together; one more fits today.
    s = calsim.Schedule("fb", "America/New_York", "2026-10-31T00:00", "30,45 1 * * *", fold="both",
                        policy=calsim.Policy(catchup="all", cost=1.0, account="a", on_budget="skip"))
    sc = calsim.Scenario("fb", [s], "2026-11-01T04:00Z", "2026-11-01T06:44Z", release="2026f",
                         budgets=[calsim.Budget("a", 2, "day", "UTC")],
                         outages=[calsim.Outage("2026-11-01T05:40Z", "2026-11-01T06:40Z")])
    f = simulate(sc)
    assert f.filter(pl.col("state") == "done")["due_utc"].dt.strftime("%H:%M").to_list() == ["05:30", "05:45"]
    assert outcome(f, due_utc=utc("2026-11-01T06:30")) == [("skipped", "budget")]


def test_forbid_drops_a_blocked_time_past_its_deadline_when_the_job_ends():
    p = presets.kubernetes(concurrency_policy="Forbid", starting_deadline_seconds=600)
    s = p.apply(calsim.Schedule("f", "UTC", "2026-01-01T00:00", "*/20 * * * *", policy=calsim.Policy(duration="30min")))
    sc = calsim.Scenario("f", [s], "2026-01-01T00:00Z", "2026-01-01T00:50Z", release="2026f", tick="10s")
    f = simulate(sc)
    # 00:00 runs to 00:30; 00:20 is blocked and at 00:30 exactly 600 s late: past the deadline (late edge)
    assert [(r["state"], r["reason"]) for r in f.iter_rows(named=True)] == [
        ("done", None), ("expired", "max_lateness"), ("done", None)]


def test_a_backlog_refused_because_the_instance_is_busy_is_dropped_whole():
    p = presets.apscheduler(coalesce=False, misfire_grace_time=None, jobstore="persistent")
    s = p.apply(calsim.Schedule("b", "UTC", "2026-01-01T00:00", "0 * * * *", policy=calsim.Policy(duration="3h")))
    sc = calsim.Scenario("b", [s], "2026-01-01T00:00Z", "2026-01-01T04:30Z", release="2026f", tick="1s",
                         outages=[calsim.Outage("2026-01-01T00:30Z", "2026-01-01T02:30Z")])
    f = simulate(sc)
    # 00:00 runs to 03:00; 01:00 and 02:00 are submitted together at 02:30: max_instances reached, both
    # dropped; 03:00 runs to 06:00, so 04:00 is dropped too
    assert [(r["due_utc"].hour, r["state"]) for r in f.iter_rows(named=True)] == [
        (0, "done"), (1, "skipped"), (2, "skipped"), (3, "done"), (4, "skipped")]


@pytest.mark.parametrize("edge, state", [("on_time", "done"), ("late", "expired")])
def test_a_run_held_for_budget_expires_at_the_opening_by_the_edge(edge, state):
    s = calsim.Schedule("h", "UTC", "2026-01-01T00:00", "0,30 23 * * *",
                        policy=calsim.Policy(cost=1.0, account="a", max_lateness="30min", limit_edge=edge))
    sc = calsim.Scenario("h", [s], "2026-01-01T22:00Z", "2026-01-02T01:00Z", release="2026f",
                         budgets=[calsim.Budget("a", 1, "day", "UTC")])
    f = simulate(sc)
    # 23:30 waits for the 00:00 opening: exactly 30 min late
    assert f.filter(pl.col("due_utc") == utc("2026-01-01T23:30"))["state"].to_list() == [state]


def test_one_run_held_for_budget_is_no_backlog_even_under_catchup_skip():
    first = calsim.Schedule("a", "UTC", "2026-01-01T00:00", "0 23 * * *", policy=calsim.Policy(cost=1.0, account="t"))
    held = calsim.Schedule("b", "UTC", "2026-01-01T00:00", "30 23 * * *",
                           policy=calsim.Policy(catchup="skip", cost=1.0, account="t"))
    sc = calsim.Scenario("h", [first, held], "2026-01-01T22:00Z", "2026-01-02T01:00Z", release="2026f",
                         budgets=[calsim.Budget("t", 1, "day", "UTC")])
    f = simulate(sc)
    # b waited for the next day's room, alone: it runs at the opening (several held runs would be a backlog)
    assert f.filter(pl.col("schedule_id") == "b").select("state", "started_utc").row(0) == (
        "done", utc("2026-01-02T00:00"))


# -- simulate refuses an option its engine would not honour (issue 18) --------------------------------


def _tiny():
    s = calsim.Schedule("a", "UTC", "2026-01-01T00:00", "0 * * * *")
    return calsim.Scenario("tiny", [s], "2026-01-01T00:00Z", "2026-01-01T03:00Z", release="2026f")


@pytest.mark.parametrize("engine, option, value, message", [
    ("local", "client", "tcp://host:8786",
     "client: 'tcp://host:8786' is not used by engine='local' (it simulates in this process and returns the "
     "ledger); client and output are for engine='dask'"),
    ("local", "output", "/tmp/ledgers",
     "output: '/tmp/ledgers' is not used by engine='local' (it simulates in this process and returns the "
     "ledger); client and output are for engine='dask'"),
    ("dask", "progress", True,
     "progress: True is not used by engine='dask' (it shows no progress bar; the Dask dashboard shows the "
     "tasks); allowed with engine='dask': None or False"),
    ("dask", "settle", "events",
     "settle: 'events' is not used by engine='dask' (its workers settle in columns); allowed with "
     "engine='dask': 'columns'"),
])
def test_an_option_the_engine_would_not_honour_is_refused_naming_option_engine_and_what_is_allowed(
        engine, option, value, message):
    with pytest.raises(calsim.InputError) as info:
        calsim.simulate(_tiny(), engine=engine, **{option: value})
    assert str(info.value) == message


def test_options_the_local_engine_honours_are_accepted_and_the_ledger_is_unchanged():
    plain = calsim.simulate(_tiny(), progress=False).frame
    assert calsim.simulate(_tiny(), engine="local", client=None, output=None, progress=False,
                           settle="events").frame.equals(plain)


def test_an_unknown_engine_is_named_before_its_options_are_judged():
    with pytest.raises(calsim.InputError, match=r"^engine: unknown engine 'ray' \(allowed: 'local' or 'dask'\)$"):
        calsim.simulate(_tiny(), engine="ray", client="tcp://host:8786")


def test_progress_must_be_none_or_a_bool():
    with pytest.raises(calsim.InputError, match=r"^progress: 'yes' \(allowed: None, True or False\)$"):
        calsim.simulate(_tiny(), progress="yes")


# -- max_active: how many runs of one schedule may be going at once ------------------------------------------


def _long_hourly(overlap, max_active, hours=12):
    """Hourly runs of 3 h for ``hours`` hours under ``overlap`` and ``max_active``."""
    s = calsim.Schedule("h", "UTC", "2026-01-01T00:00", "FREQ=HOURLY",
                        policy=calsim.Policy(duration="3h", overlap=overlap, max_active=max_active))
    sc = calsim.Scenario("x", [s], "2026-01-01T00:00Z", f"2026-01-01T{hours:02d}:00Z")
    return simulate(sc).sort("due_utc")


def _going_at_each_start(f):
    """How many runs are going just after each start (a finish at an instant frees its slot first)."""
    runs = f.filter(pl.col("started_utc").is_not_null())
    st, fin = runs["started_utc"].to_list(), runs["finished_utc"].to_list()
    return [sum(1 for a, b in zip(st, fin) if a <= t < b) for t in st]


def test_max_active_2_with_3_hour_runs_every_hour_skips_a_third_while_two_are_going():
    f = _long_hourly("skip", 2)
    assert max(_going_at_each_start(f)) == 2
    # The rule, hour by hour: a run starts when fewer than two earlier starts are still going (3 h each).
    starts: list[int] = []
    expected = []
    for h in range(12):
        going = sum(1 for s in starts if s <= h < s + 3)
        expected.append("done" if going < 2 else "skipped")
        if going < 2:
            starts.append(h)
    assert f["state"].to_list() == expected
    assert set(f.filter(pl.col("state") == "skipped")["reason"]) == {"overlap"}


def test_max_active_2_with_buffer_all_queues_the_third_and_starts_it_when_a_slot_frees():
    f = _long_hourly("buffer_all", 2, hours=6)
    assert max(_going_at_each_start(f)) == 2
    # First come, first served: each queued run starts at the earliest finish of the two going before it.
    finishes: list[int] = []
    expected = []
    for h in range(6):
        t = h if len([x for x in finishes if x > h]) < 2 else sorted(finishes)[-2]
        expected.append(t)
        finishes.append(t + 3)
    got = [(r - dt.datetime(2026, 1, 1, tzinfo=UTC)) // dt.timedelta(hours=1) for r in f["started_utc"]]
    assert got == expected


def test_max_active_2_with_cancel_other_cancels_the_oldest_run_going():
    f = _long_hourly("cancel_other", 2, hours=4)
    # 00 and 01 run; 02 finds two going and cancels 00 (the oldest); 03 cancels 01.
    assert f["state"].to_list() == ["cancelled", "cancelled", "done", "done"]
    assert f["finished_utc"].to_list()[:2] == [utc("2026-01-01T02:00"), utc("2026-01-01T03:00")]


def test_max_active_1_is_the_overlap_modes_default():
    assert _long_hourly("skip", 1).equals(_long_hourly("skip", None))


def test_max_active_with_allow_is_refused_naming_the_modes_that_say_what_happens_at_the_limit():
    with pytest.raises(calsim.PolicyError, match=r"^max_active: 2 needs an overlap mode .* 'skip', 'buffer_one'"):
        calsim.Policy(max_active=2)
    with pytest.raises(calsim.PolicyError, match=r"^max_active: 0 \(allowed an integer from 1 to 2\*\*31, or None\)"):
        calsim.Policy(overlap="skip", max_active=0)
