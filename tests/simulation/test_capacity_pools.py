"""Capacity pools: Scenario(capacity={"etl": 2, ...}) bounds each pool apart; a run of no pool takes no slot."""

from __future__ import annotations

import dataclasses

import numpy as np
import polars as pl
import pytest

import calsim
from calsim.simulation.couplings import pools_of
from calsim.simulation.sweep import MEASURES, measures, variant
from calsim.store.schema import KEY

from capacity_pools import POOLS, pooled

def most_going(frame: pl.DataFrame) -> int:
    """The most runs going at one instant (a run ending at t is gone before one starting at t)."""
    f = frame.filter(pl.col("started_utc").is_not_null())
    t = np.concatenate([f["started_utc"].to_numpy().astype(np.int64), f["finished_utc"].to_numpy().astype(np.int64)])
    step = np.concatenate([np.ones(f.height, dtype=np.int64), -np.ones(f.height, dtype=np.int64)])
    o = np.lexsort((step, t))
    return int(np.cumsum(step[o]).max()) if f.height else 0


@pytest.fixture(scope="module")
def ledger() -> calsim.Ledger:
    return calsim.simulate(pooled(), progress=False)


def test_each_pool_never_has_more_runs_going_than_its_slots_and_its_runs_queue(ledger):
    pool = {s.id: s.policy.pool for s in pooled().schedules}
    frame = ledger.frame.with_columns(pl.col("schedule_id").replace_strict(pool, default=None).alias("pool"))
    for name, slots in POOLS.items():
        mine = frame.filter(pl.col("pool") == name)
        assert most_going(mine) == slots  # bounded, and reached: the outage's backlog queues
    unpooled = frame.filter(pl.col("pool").is_null())
    assert most_going(unpooled) > max(POOLS.values())  # (runs of no pool take no slot)


def test_a_pooled_scenario_is_each_pool_simulated_alone_with_its_slots(ledger):
    sc = pooled()
    parts = []
    for slots, ids in pools_of(sc):
        alone = dataclasses.replace(sc, schedules=[s for s in sc.schedules if s.id in ids], capacity=slots,
                                    budgets=[b for b in sc.budgets if any(
                                        s.policy.account == b.account for s in sc.schedules if s.id in ids)])
        parts.append(calsim.simulate(alone, progress=False).frame)
    assert [slots for slots, _ in pools_of(sc)] == [2, 3, 1, None]  # (etl, ml, reports, then no pool)
    assert pl.concat(parts).sort(list(KEY)).equals(ledger.frame.sort(list(KEY)))


def test_a_pool_no_schedule_of_the_scenario_defines_is_refused_naming_it():
    sc = pooled()
    with pytest.raises(calsim.InputError, match=r"policy.pool: schedule '.*' names pool 'etl', which is not in "
                                                r"scenario.capacity \(allowed: ml, reports\)"):
        dataclasses.replace(sc, capacity={"reports": 1, "ml": 3})


@pytest.mark.parametrize("capacity,message", [
    ({"etl": 0}, r"scenario.capacity: pool 'etl': 0 \(allowed an integer from 1 to 2\*\*31, a mapping"),
    ({}, r"scenario.capacity: an empty mapping"),
    ({"": 2}, r"scenario.capacity: pool name ''"),
    (2.5, r"scenario.capacity: 2.5 \(allowed an integer"),
])
def test_bad_capacity_is_refused_naming_the_value(capacity, message):
    with pytest.raises(calsim.InputError, match=message):
        calsim.Scenario("x", [], "2026-01-01T00:00Z", "2026-01-02T00:00Z", capacity=capacity)


def test_pools_joined_by_a_budget_are_refused_before_anything_runs():
    sc = pooled()
    joined = [dataclasses.replace(s, policy=dataclasses.replace(s.policy, account="t0")) if s.policy.pool else s
              for s in sc.schedules]
    with pytest.raises(calsim.InputError, match=r"scenario.capacity: pools 'etl' and 'ml' hold schedules that "
                                                r"share a budget"):
        calsim.simulate(dataclasses.replace(sc, schedules=joined), progress=False)


def test_a_schedule_of_no_pool_that_pays_from_a_pools_account_is_refused_saying_what_to_give_it():
    sc = pooled()
    loose = [dataclasses.replace(s, policy=dataclasses.replace(s.policy, account="t1")) if not s.policy.pool
             else s for s in sc.schedules]
    with pytest.raises(calsim.InputError, match=r"takes no pool but shares a budget, a rate limit or a breaker "
                                                r"with pool 'reports'.*give it pool='reports'"):
        calsim.simulate(dataclasses.replace(sc, schedules=loose), progress=False)


def test_a_sweep_over_pooled_capacity_gives_each_combination_its_simulate():
    sc = pooled()
    got = calsim.sweep(sc, {"catchup": ["all", "latest"]}, jobs=1)
    for row in got.iter_rows(named=True):
        alone = calsim.simulate(variant(sc, {"catchup": row["catchup"]}), progress=False)
        assert measures(alone) == {m: row[m] for m in MEASURES}
