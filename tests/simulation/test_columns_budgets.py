"""Budgets with retries, lognormal durations and mixed costs are settled by columns, with the event loop's ledger.

:mod:`calsim.simulation.budget_periods` fits each period's arrivals greedily
(cost times attempts, each run's own occupancy); :mod:`calsim.simulation.columns`
decides which periods need order. The reference is the same simulation with
every row that runs sent through the event loop (``settle="events"``); the
``settled`` counts show which path did the work.
"""

from __future__ import annotations

import datetime as dt

import polars as pl
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import calsim
from calsim.simulation.policy import Failures, LogNormal

UTC = dt.timezone.utc
RULES = ["FREQ=HOURLY", "FREQ=MINUTELY;INTERVAL=20", "FREQ=DAILY;BYHOUR=0,2,23;BYMINUTE=0,30", "*/15 * * * *",
         "0 9 * * 1-5", "0 0 * * *", "FREQ=HOURLY;INTERVAL=39"]
ZONES = ["UTC", "America/New_York", "Europe/Berlin", "Australia/Lord_Howe", "America/Havana", "America/Santiago"]
SETTINGS = settings(max_examples=120, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])


def same_ledger(sc):
    """The column path's ledger equals the event loop's; returns the column path's ``settled`` counts."""
    ledger = calsim.simulate(sc, progress=False)
    reference = calsim.simulate(sc, progress=False, settle="events")
    assert ledger.frame.equals(reference.frame)
    return ledger.settled


def durations(draw, kind):
    if kind in ("lognormal", "pauses") or (kind == "all" and draw(st.booleans())):
        median = draw(st.sampled_from(["1min", "10min", "50min"]))
        return LogNormal(median, draw(st.sampled_from([median, "2h", "30h"])))
    return draw(st.sampled_from([None, "1min", "5min", "50min", "3h"]))


@st.composite
def column_budget_scenarios(draw, kind="all", overlaps=("allow", "skip"), near_miss=False):
    """Small fleets whose accounts the budget-period columns settle (``near_miss``: with one thing they do not)."""
    accounts = ["a", "b", "c"]
    mixed = kind == "mixed" or (kind == "all" and draw(st.booleans()))
    base = {acct: draw(st.sampled_from([0.0, 0.1, 0.5, 1.0, 2.5, 6.0])) for acct in accounts}
    scheds = []
    for i in range(draw(st.integers(1, 7))):
        acct = draw(st.sampled_from(accounts + [None]))
        catchup = draw(st.sampled_from(["all", "latest", "earliest", "skip", "bounded"]))
        cost = draw(st.sampled_from([0.0, 0.1, 0.3, 1.0, 2.0, 5.0])) if mixed else base[acct] if acct else 1.0
        overlap = draw(st.sampled_from(overlaps))
        going = [2, 3] if kind == "max_active" else [None, None, None, 1, 2, 3]
        pol = calsim.Policy(
            catchup=catchup, limit=draw(st.integers(1, 3)) if catchup == "bounded" else None,
            max_lateness=draw(st.sampled_from([None, "2h", "1d"])),
            overlap=overlap, duration=durations(draw, kind),
            max_active=draw(st.sampled_from(going)) if overlap != "allow" else None,
            jitter=draw(st.sampled_from([None, None, "3min"])), cost=cost, account=acct,
            on_budget=draw(st.sampled_from(["wait", "wait", "skip"])),
            backlog="in_turn" if near_miss == "in_turn" and i == 0 else "at_once",
        )
        scheds.append(calsim.Schedule(f"s{i}", draw(st.sampled_from(ZONES)), "2026-03-01T00:00",
                                      draw(st.sampled_from(RULES)), policy=pol))
    day = 86400
    start = draw(st.sampled_from([dt.datetime(2026, 3, 6, tzinfo=UTC), dt.datetime(2026, 4, 2, tzinfo=UTC)]))
    outages, t = [], start
    for _ in range(draw(st.integers(0, 3))):
        a = t + dt.timedelta(seconds=draw(st.integers(0, 2 * day)))
        b = a + dt.timedelta(seconds=draw(st.integers(60, 3 * day)))
        outages.append(calsim.Outage(a, b))
        t = b + dt.timedelta(seconds=draw(st.integers(0, 600)))
    budgets = [calsim.Budget(acct, draw(st.sampled_from([0, 1, 2, 3, 5, 8, 10, 20, 40])),
                             draw(st.sampled_from(["day", "day", "week", "month"])), draw(st.sampled_from(ZONES)))
               for acct in accounts if draw(st.integers(0, 4))]
    retries = kind == "failures" or (kind == "all" and draw(st.booleans()))
    failures = Failures(draw(st.sampled_from([0.2, 0.5, 0.9])), max_attempts=draw(st.integers(1, 4)),
                        backoff=draw(st.sampled_from(["0s", "1min", "2h"]))) if retries else None
    events = []
    if kind == "pauses" or (kind == "all" and draw(st.integers(0, 3)) == 0):
        # (Often over a local midnight, where held runs arrive.)
        at = start + dt.timedelta(hours=draw(st.integers(0, 72)), minutes=draw(st.sampled_from([0, 30])))
        length = dt.timedelta(hours=draw(st.sampled_from([5, 24, 60])))
        for sid in [f"s{i}" for i in range(draw(st.integers(1, len(scheds))))]:
            events += [calsim.Pause(at, sid), calsim.Resume(at + length, sid)]
    return calsim.Scenario("column-budgets", scheds, start, start + dt.timedelta(days=draw(st.integers(2, 9))),
                           outages=outages, budgets=budgets, events=events, failures=failures,
                           capacity=draw(st.integers(1, 3)) if near_miss == "capacity" else None,
                           tick=draw(st.sampled_from(["1min", "5min", "1h"])), seed=draw(st.integers(0, 3)))


@SETTINGS
@given(column_budget_scenarios(kind="failures"))
def test_budgets_with_failures_and_retries_by_columns_equal_the_event_loop(sc):
    same_ledger(sc)


@SETTINGS
@given(column_budget_scenarios(kind="lognormal"))
def test_budgets_with_lognormal_durations_by_columns_equal_the_event_loop(sc):
    same_ledger(sc)


@SETTINGS
@given(column_budget_scenarios(kind="mixed"))
def test_budgets_with_mixed_costs_by_columns_equal_the_event_loop(sc):
    same_ledger(sc)


@SETTINGS
@given(column_budget_scenarios(kind="all"))
def test_budgets_with_everything_combined_by_columns_equal_the_event_loop(sc):
    same_ledger(sc)


@SETTINGS
@given(column_budget_scenarios(kind="max_active", overlaps=("skip", "skip", "allow")))
def test_budgets_with_several_runs_of_a_schedule_going_by_columns_equal_the_event_loop(sc):
    same_ledger(sc)


@SETTINGS
@given(column_budget_scenarios(kind="pauses"))
def test_budgets_with_a_paused_schedule_by_columns_equal_the_event_loop(sc):
    same_ledger(sc)


@settings(max_examples=40, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(["capacity", "in_turn", "buffer"]).flatmap(
    lambda miss: column_budget_scenarios(
        kind="all", near_miss=miss,
        overlaps=("buffer_one", "cancel_other", "buffer_latest") if miss == "buffer" else ("allow", "skip"))))
def test_near_misses_left_to_the_event_loop_still_equal_it(sc):
    settled = same_ledger(sc)
    if sc.capacity is not None:
        assert settled["budget_periods"] == 0


def fleet(n, case, budget):
    """``examples.fleet(n)`` over three weeks of October 2026 with a 3-day outage and a daily budget per tenant."""
    out = []
    for i, s in enumerate(calsim.examples.fleet(n, seed=2)):
        kw = {"catchup": "latest", "overlap": "skip", "duration": "1min", "cost": 1.0, "account": s.id.split("/")[0]}
        if case == "lognormal":
            kw["duration"] = LogNormal("1min", "10min")
        if case == "mixed":
            kw["cost"] = [1.0, 2.0, 5.0, 0.1][i % 4]
        if case == "max_active":
            kw.update(max_active=2, duration="50min")
        out.append(calsim.with_policy([s], **kw)[0])
    tenants = sorted({s.policy.account for s in out})
    events = [e for s in out[::10] for e in (calsim.Pause("2026-10-12T00:00Z", s.id),
                                              calsim.Resume("2026-10-21T12:00Z", s.id))] if case == "pauses" else []
    return calsim.Scenario(f"{case}-{n}", out, "2026-10-10T00:00Z", "2026-10-31T00:00Z", tick="1min", events=events,
                           outages=[calsim.Outage("2026-10-20T01:01Z", "2026-10-23T01:01Z")],
                           budgets=[calsim.Budget(t, budget, "day", "Europe/Berlin") for t in tenants],
                           failures=Failures(0.3, max_attempts=3, backoff="1min") if case == "failures" else None)


@pytest.mark.parametrize("case,budget", [("failures", 120), ("lognormal", 100), ("mixed", 200), ("pauses", 100),
                                         ("max_active", 100)])
def test_a_fleet_with_binding_budgets_is_settled_by_columns_without_the_event_loop(case, budget):
    sc = fleet(150, case, budget)
    settled = same_ledger(sc)
    assert settled["event_loop"] == 0
    assert settled["budget_periods"] > sum(settled.values()) // 2  # most runs: the budget binds most days
    frame = calsim.simulate(sc, progress=False).frame
    assert (frame["budget_wait_s"] > 0).any()
    if case == "max_active":
        assert (frame["reason"] == "overlap").any()  # (two runs going turn a third away)


def test_a_smaller_charge_after_one_that_does_not_fit_still_starts():
    # Limit 10: 6 starts, the next 6 does not fit (12), the 3 after it does (9).
    pol = lambda cost, h: calsim.Schedule(f"c{cost}", "UTC", f"2026-01-01T0{h}:00", "FREQ=DAILY;COUNT=1",  # noqa: E731
                                          policy=calsim.Policy(account="a", cost=cost, duration="1min"))
    sc = calsim.Scenario("greedy", [pol(6.0, 1), pol(6.5, 2), pol(3.0, 3)], "2026-01-01T00:00Z",
                         "2026-01-03T00:00Z", budgets=[calsim.Budget("a", 10, "day", "UTC")])
    settled = same_ledger(sc)
    frame = calsim.simulate(sc, progress=False).frame
    assert frame["started_utc"].dt.hour().to_list() == [1, 0, 3]  # 6.5 waits for the next day
    assert settled["budget_periods"] == 3


def test_retries_are_charged_per_attempt_and_held_when_they_do_not_fit():
    s = calsim.Schedule("r", "UTC", "2026-01-01T00:00", "FREQ=HOURLY", policy=calsim.Policy(
        account="a", cost=1.0, duration="1min", on_budget="skip"))
    sc = calsim.Scenario("retries", [s], "2026-01-01T00:00Z", "2026-01-02T00:00Z",
                         failures=Failures(0.5, max_attempts=3, backoff="1min"),
                         budgets=[calsim.Budget("a", 10, "day", "UTC")], seed=1)
    settled = same_ledger(sc)
    frame = calsim.simulate(sc, progress=False).frame
    assert 9 <= frame["cost"].sum() <= 10  # the sum started never exceeds the limit
    assert (frame["reason"] == "budget").any() and (frame["state"] == "failed").any()
    assert settled["budget_periods"] == frame.height


def test_a_held_run_started_late_still_turns_away_a_later_run_of_its_schedule_past_the_next_period():
    # x (every 39 h, 30 h long) is held from Jan 1 to Jan 2 00:00 and goes until Jan 3 06:00, past its
    # Jan 3 03:00 run, in a period whose demand alone fits: that run must still be skipped (overlap).
    pol = lambda **k: calsim.Policy(account="a", cost=1.0, **k)  # noqa: E731
    x = calsim.Schedule("x", "UTC", "2026-01-01T12:00", "FREQ=HOURLY;INTERVAL=39",
                        policy=pol(duration="30h", overlap="skip"))
    y = calsim.Schedule("y", "UTC", "2026-01-01T06:00", "FREQ=DAILY;COUNT=1", policy=pol(duration="1min"))
    sc = calsim.Scenario("spill", [x, y], "2026-01-01T00:00Z", "2026-01-05T00:00Z",
                         budgets=[calsim.Budget("a", 1, "day", "UTC")])
    same_ledger(sc)
    frame = calsim.simulate(sc, progress=False).frame
    assert frame.filter(pl.col("schedule_id") == "x")["reason"].to_list() == [None, "overlap", None]


def test_runs_held_into_an_outage_arrive_in_the_period_it_ends_in():
    # y is held on Jan 1; Jan 2 and 3 open during an outage, so it arrives on Jan 4 at the come-back and
    # takes that day's budget: z (Jan 4 12:00) waits for Jan 5.
    pol = lambda **k: calsim.Policy(account="a", cost=1.0, duration="1min", **k)  # noqa: E731
    mk = lambda i, at: calsim.Schedule(i, "UTC", at, "FREQ=DAILY;COUNT=1", policy=pol())  # noqa: E731
    sc = calsim.Scenario("outage-carry", [mk("x", "2026-01-01T05:00"), mk("y", "2026-01-01T06:00"),
                                          mk("z", "2026-01-04T12:00")],
                         "2026-01-01T00:00Z", "2026-01-06T00:00Z", budgets=[calsim.Budget("a", 1, "day", "UTC")],
                         outages=[calsim.Outage("2026-01-01T23:00Z", "2026-01-04T00:00Z")])
    same_ledger(sc)
    frame = calsim.simulate(sc, progress=False).frame
    assert frame["started_utc"].dt.day().to_list() == [1, 4, 5]


def test_a_cost_that_does_not_divide_the_limit_keeps_carrying_held_runs():
    # Limit 10, each run 6: one run a day fits, so a run held on Jan 1 pushes every later one a day on.
    pol = calsim.Policy(account="a", cost=6.0, duration="1min")
    sc = calsim.Scenario("carry", [calsim.Schedule("a1", "UTC", "2026-01-01T01:00", "FREQ=DAILY;COUNT=4", policy=pol),
                                   calsim.Schedule("b1", "UTC", "2026-01-01T02:00", "FREQ=DAILY;COUNT=1", policy=pol)],
                         "2026-01-01T00:00Z", "2026-01-06T00:00Z", budgets=[calsim.Budget("a", 10, "day", "UTC")])
    same_ledger(sc)
    frame = calsim.simulate(sc, progress=False).frame.sort("due_utc")
    assert frame["started_utc"].dt.day().to_list() == [1, 2, 3, 4, 5]


def test_a_huge_account_beside_a_small_one_leaves_the_small_ones_sums_exact():
    # Both accounts are fitted in one pass (the small one has two costs): 0.1 + 0.1 + 0.1 fits 0.3 (within the
    # 1e-9 tolerance), which a running sum shared with the 1e15 account (0.125 steps there) would not give.
    def sched(i, acct, cost, rule="FREQ=HOURLY"):
        return calsim.Schedule(i, "UTC", "2026-01-01T00:00", rule, policy=calsim.Policy(
            account=acct, cost=cost, duration="1min", on_budget="skip"))
    sc = calsim.Scenario("huge", [sched("big", "big", 1e15), sched("small", "small", 0.1),
                                  sched("other", "small", 0.2, "FREQ=DAILY;BYHOUR=23;BYMINUTE=30")],
                         "2026-01-01T00:00Z", "2026-01-02T00:00Z",
                         budgets=[calsim.Budget("big", 1e15, "day", "UTC"), calsim.Budget("small", 0.3, "day", "UTC")])
    settled = same_ledger(sc)
    frame = calsim.simulate(sc, progress=False).frame
    assert frame.filter((pl.col("schedule_id") == "small") & (pl.col("state") == "done")).height == 3
    assert settled["budget_periods"] == frame.height


def test_a_run_held_into_a_pause_is_skipped_unless_a_run_of_its_schedule_is_still_going():
    # Limit 2 a day, seed 2: q (1 attempt) starts; p's 22:00 run (3 attempts, charged 3) waits, p's 23:00
    # run (1 attempt) starts and goes until 00:30; r (3 attempts) waits. At Jan 2 00:00 both waiting runs
    # arrive while p and r are paused: p's is turned away first (its 23:00 run is going), r's is paused.
    pol = lambda **k: calsim.Policy(account="a", cost=1.0, **k)  # noqa: E731
    q = calsim.Schedule("q", "UTC", "2026-01-01T04:00", "FREQ=DAILY;COUNT=1", policy=pol(duration="1min"))
    p = calsim.Schedule("p", "UTC", "2026-01-01T22:00", "FREQ=DAILY;BYHOUR=22,23;COUNT=2",
                        policy=pol(duration="90min", overlap="skip"))
    r = calsim.Schedule("r", "UTC", "2026-01-01T23:10", "FREQ=DAILY;COUNT=1", policy=pol(duration="1min"))
    pause = [e for sid in ("p", "r") for e in (calsim.Pause("2026-01-01T23:30Z", sid),
                                               calsim.Resume("2026-01-02T06:00Z", sid))]
    sc = calsim.Scenario("held-paused", [q, p, r], "2026-01-01T00:00Z", "2026-01-03T00:00Z", events=pause,
                         budgets=[calsim.Budget("a", 2, "day", "UTC")],
                         failures=Failures(0.5, max_attempts=3, backoff="0s"), seed=2)
    settled = same_ledger(sc)
    frame = calsim.simulate(sc, progress=False).frame
    assert frame.select("schedule_id", "state", "reason").rows() == [
        ("q", "done", None), ("p", "skipped", "overlap"), ("p", "done", None), ("r", "skipped", "paused")]
    assert settled["event_loop"] == 0 and settled["budget_periods"] == 4
