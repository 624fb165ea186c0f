"""Budget periods settled by columns (:mod:`calsim.simulation.budget_periods`) give the event loop's ledger exactly.

The reference is the same simulation with every row that runs sent through
the event loop (``simulate(..., settle="events")``).
"""

from __future__ import annotations

import datetime as dt

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import calsim

UTC = dt.timezone.utc


def by_event_loop(sc):
    return calsim.simulate(sc, progress=False, settle="events").frame


def settled_by_columns(sc):
    """The ledger, and how many runs the budget-period columns settled themselves."""
    ledger = calsim.simulate(sc, progress=False)
    return ledger.frame, ledger.settled["budget_periods"]


RULES = ["FREQ=HOURLY", "FREQ=MINUTELY;INTERVAL=20", "FREQ=DAILY;BYHOUR=0,2,23;BYMINUTE=0,30", "*/15 * * * *",
         "0 9 * * 1-5", "0 0 * * *"]
ZONES = ["UTC", "America/New_York", "Europe/Berlin", "Australia/Lord_Howe", "America/Havana", "America/Santiago",
         "Asia/Kolkata"]


@st.composite
def budget_scenarios(draw):
    n = draw(st.integers(1, 7))
    accounts = ["a", "b", "c"]
    cost = {a: draw(st.sampled_from([0.0, 0.1, 0.5, 1.0, 2.5])) for a in accounts}
    scheds = []
    for i in range(n):
        acct = draw(st.sampled_from(accounts + [None]))
        catchup = draw(st.sampled_from(["all", "latest", "earliest", "skip", "bounded"]))
        pol = calsim.Policy(
            catchup=catchup, limit=draw(st.integers(1, 3)) if catchup == "bounded" else None,
            max_lateness=draw(st.sampled_from([None, "2h", "1d"])),
            # mostly what is settled by columns; sometimes an account the loop keeps
            overlap=draw(st.sampled_from(["allow", "skip", "skip", "allow", "buffer_one", "cancel_other"])),
            duration=draw(st.sampled_from([None, "1min", "5min", "50min", "3h"])),
            jitter=draw(st.sampled_from([None, None, "3min"])),
            cost=cost[acct] if acct else 1.0, account=acct,
            on_budget=draw(st.sampled_from(["wait", "wait", "skip"])),
        )
        scheds.append(calsim.Schedule(f"s{i}", draw(st.sampled_from(ZONES)), "2026-03-01T00:00",
                                      draw(st.sampled_from(RULES)), policy=pol))
    day = 86400
    # Around US DST (Mar 8), Havana's midnight gap (Mar 8) or Chile's fall back (Apr 5).
    start = draw(st.sampled_from([dt.datetime(2026, 3, 6, tzinfo=UTC), dt.datetime(2026, 4, 2, tzinfo=UTC)]))
    days = draw(st.integers(2, 9))
    outages = []
    t = start
    for _ in range(draw(st.integers(0, 3))):
        a = t + dt.timedelta(seconds=draw(st.integers(0, 2 * day)))
        b = a + dt.timedelta(seconds=draw(st.integers(60, 3 * day)))
        outages.append(calsim.Outage(a, b))
        t = b + dt.timedelta(seconds=draw(st.integers(0, 600)))
    budgets = [calsim.Budget(acct, draw(st.sampled_from([0, 1, 2, 3, 5, 8, 20, 40])),
                             draw(st.sampled_from(["day", "day", "week", "month"])), draw(st.sampled_from(ZONES)))
               for acct in accounts if draw(st.integers(0, 4))]
    events = []
    if draw(st.integers(0, 5)) == 0:
        at = start + dt.timedelta(seconds=draw(st.integers(0, 2 * day)))
        events = [calsim.Pause(at, "s0"), calsim.Resume(at + dt.timedelta(hours=5), "s0")]
    return calsim.Scenario("budget-periods", scheds, start, start + dt.timedelta(days=days), outages=outages,
                           budgets=budgets, events=events, tick=draw(st.sampled_from(["1min", "5min", "1h"])),
                           seed=draw(st.integers(0, 3)))


@settings(max_examples=150, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
@given(budget_scenarios())
def test_budget_periods_by_columns_equal_the_event_loop(sc):
    frame, _ = settled_by_columns(sc)
    assert frame.equals(by_event_loop(sc))


def bench_like(n, budget, period="day", zone="Europe/Berlin", **policy):
    fleet = calsim.examples.fleet(n, seed=1)
    fleet = [calsim.with_policy([s], **{"catchup": "latest", "overlap": "skip", "duration": "1min", "cost": 1.0,
                                        "account": s.id.split("/")[0], **policy})[0] for s in fleet]
    tenants = sorted({s.policy.account for s in fleet})
    return calsim.Scenario("bench-like", fleet, "2026-03-20T00:00Z", "2026-04-20T00:00Z", tick="1min",
                           outages=[calsim.Outage("2026-03-28T21:00Z", "2026-03-31T01:01Z"),
                                    calsim.Outage("2026-04-10T21:59Z", "2026-04-10T22:01Z")],
                           budgets=[calsim.Budget(t, budget, period, zone) for t in tenants])


@pytest.mark.parametrize("sc", [
    bench_like(150, 60),
    bench_like(150, 25, catchup="all"),
    bench_like(150, 25, catchup="bounded", limit=2, max_lateness="20h"),
    bench_like(150, 25, on_budget="skip", overlap="allow"),
    bench_like(150, 300, "week", "America/New_York", duration="2h"),
    bench_like(150, 900, "month", "Asia/Tokyo", duration="0s", jitter="30min"),
], ids=["daily", "all", "bounded-maxlate", "skip-allow", "weekly", "monthly"])
def test_fleet_with_binding_budgets_is_settled_by_columns_exactly(sc):
    frame, by_columns = settled_by_columns(sc)
    assert by_columns > frame.height // 4  # the shortcut is what is tested
    assert frame.equals(by_event_loop(sc))
    assert (frame["budget_wait_s"] > 0).any() or (frame["reason"] == "budget").any()  # budgets bind


def test_a_zone_whose_local_day_goes_back_is_left_to_the_event_loop():
    # St. John's fell back at 00:01 local until 2010: the local day went back
    # by one for a minute, so the period index is not monotone in time.
    scheds = [calsim.Schedule(f"s{i}", "America/St_Johns", "2009-10-30T00:00", rule,
                              policy=calsim.Policy(catchup="latest", overlap="skip", duration="1min", cost=1.0,
                                                   account="a"))
              for i, rule in enumerate(["*/5 * * * *", "FREQ=MINUTELY;INTERVAL=3", "0 * * * *"])]
    sc = calsim.Scenario("st-johns", scheds, "2009-10-31T00:00Z", "2009-11-03T00:00Z", release="2026f",
                         budgets=[calsim.Budget("a", 100, "day", "America/St_Johns")])
    frame, by_columns = settled_by_columns(sc)
    assert by_columns == 0
    assert frame.equals(by_event_loop(sc))
