"""A ledger's measures (calsim.simulation.measures) are the views' answers, computed in numpy."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

import calsim
from calsim.simulation import views
from calsim.simulation.measures import _keys, measures
from calsim.simulation.run_rules import period_index
from calsim.tz.release import release
from tests.simulation.test_engine import scenarios
from tests.store.test_schema_gaps import hand_ledgers


def views_answer(frame: pl.DataFrame, late_after: object = None) -> dict:
    """What the polars views say about ``frame``: status counts and the longest gap (s)."""
    c = views.classified(frame, late_after=late_after).collect()
    status = dict(zip(*c.group_by("status").len().to_dict(as_series=False).values()))
    gaps = views.gaps(frame, late_after=late_after, resolution="1us")
    longest = gaps.select(pl.col("gap").dt.total_microseconds().max()).collect().item()
    return {"done": status.get("on_time", 0), "late": status.get("late", 0), "missed": status.get("never", 0),
            "longest_gap_s": None if longest is None else round(longest / 1e6, 6)}


def mine(frame_or_ledger, late_after: object = None) -> dict:
    m = measures(frame_or_ledger, late_after=late_after)
    return {k: m[k] for k in ("done", "late", "missed", "longest_gap_s")}


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(hand_ledgers(), st.sampled_from([None, "0s", "30min", "2h", "3d"]))
def test_status_counts_and_longest_gap_equal_the_views_on_hand_made_ledgers(frame, late_after):
    assert mine(frame, late_after) == views_answer(frame, late_after)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(scenarios())
def test_status_counts_and_longest_gap_equal_the_views_on_simulated_ledgers(sc):
    ledger = calsim.simulate(sc, progress=False)
    got = mine(ledger)  # (reads the simulation's integer schedule codes)
    assert got == views_answer(ledger.frame)
    assert mine(ledger.frame) == got  # (and the same from string ids)


def worst_period_by_polars(frame: pl.DataFrame, sc: calsim.Scenario) -> tuple[float, float] | None:
    """The most a budget's account spent in one of its periods, by a polars group-by per budget."""
    started = frame.filter(pl.col("started_utc").is_not_null())
    of = {s.id: s.policy.account for s in sc.schedules if s.policy is not None}
    best = None
    for b in sc.budgets:
        mine_ = started.filter(pl.col("schedule_id").replace_strict(of, default=None) == b.account)
        if not mine_.height:
            continue
        idx = period_index(release(sc.release).table(b.zone), b.period,
                           mine_["started_utc"].dt.epoch("us").to_numpy())
        spent = mine_.with_columns(p=pl.Series(idx)).group_by("p").agg(pl.col("cost").sum())["cost"].max()
        if best is None or spent > best[0]:
            best = (float(spent), float(b.limit))
    return best


def test_the_worst_period_is_each_budgets_own_calendar_and_account():
    fleet = [calsim.with_policy([s], duration="20min", cost=1.0 + (i % 3) / 4, account=s.id.split("/")[0])[0]
             for i, s in enumerate(calsim.examples.fleet(30, seed=5))]
    tenants = sorted({s.policy.account for s in fleet})
    zones = ["Europe/Berlin", "Australia/Lord_Howe", "America/St_Johns"]
    sc = calsim.Scenario("w", fleet, "2026-10-01T00:00Z", "2026-10-15T00:00Z", release="2026f", tick="1min",
                         budgets=[calsim.Budget(t, 30.0 + 10 * i, "day" if i % 2 else "week", zones[i % 3])
                                  for i, t in enumerate(tenants)])
    ledger = calsim.simulate(sc, progress=False)
    m = measures(ledger)
    assert (m["cost_max_period"], m["worst_budget_limit"]) == worst_period_by_polars(ledger.frame, sc)


def test_without_budgets_the_worst_period_is_the_costliest_utc_day():
    fleet = [calsim.with_policy([s], cost=2.5)[0] for s in calsim.examples.fleet(10, seed=1)]
    sc = calsim.Scenario("d", fleet, "2026-10-01T00:00Z", "2026-10-05T00:00Z", release="2026f")
    frame = calsim.simulate(sc, progress=False).frame
    day = (frame.filter(pl.col("started_utc").is_not_null()).group_by(pl.col("started_utc").dt.date())
           .agg(pl.col("cost").sum()))
    assert measures(frame, sc)["cost_max_period"] == day["cost"].max()
    assert measures(frame, sc)["worst_budget_limit"] is None


@pytest.mark.parametrize("schedules,span_us", [(1_000, 31 * 86_400 * 10**6), (1_000_000, 366 * 86_400 * 10**6)])
def test_sort_keys_order_schedule_then_instant_whether_offsets_fit_or_ranks_are_needed(schedules, span_us):
    rng = np.random.default_rng(7)
    sid = rng.integers(0, schedules, 5_000)
    a, b = (rng.integers(0, span_us, 5_000) + 1_800_000_000 * 10**6 for _ in range(2))
    a[:50] = b[:50]  # (ties across the two arrays)
    ka, kb = _keys((sid, a), (sid, b))
    both = np.concatenate([ka, kb])
    pairs = np.lexsort((np.concatenate([a, b]), np.concatenate([sid, sid])))
    assert (np.diff(both[pairs]) >= 0).all()  # the keys' order is the pairs' order, ties equal
    assert (ka[:50] == kb[:50]).all()


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(scenarios(), st.sampled_from([None, "0s", "20min"]))
def test_measures_read_from_the_settled_columns_equal_those_of_the_ledger_they_make(sc, late_after):
    from calsim.simulation.engine import ledger_of, prepare, settle_run
    from calsim.simulation.measures import measures_of_run
    from calsim.simulation.scenario_records import accounts

    run, manual = settle_run(sc, prepare(sc))
    got = measures_of_run(run, sc, accounts(run.scheds, run.pol), late_after=late_after)
    ledger = ledger_of(sc, run, manual)
    assume(not manual and got is not None)  # (manual runs and worker-level columns are the ledger's to measure)
    assert got == measures(ledger, late_after=late_after)
