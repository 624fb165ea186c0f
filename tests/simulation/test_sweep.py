"""``calsim.sweep``: every combination of a grid measured as its own ``simulate`` would, sharing the expansion."""

from __future__ import annotations

import dataclasses

import pytest

import calsim
from calsim.simulation.sweep import MEASURES, label, measures, variant


def _fleet_scenario(n: int = 40) -> calsim.Scenario:
    fleet = [calsim.with_policy([s], duration="20min", cost=1.0, account=s.id.split("/")[0])[0]
             for s in calsim.examples.fleet(n, seed=3)]
    tenants = sorted({s.policy.account for s in fleet})
    return calsim.Scenario("fleet", fleet, "2026-10-01T00:00Z", "2026-10-08T00:00Z", release="2026f", tick="1min",
                           outages=[calsim.Outage("2026-10-03T01:01Z", "2026-10-04T07:30Z")],
                           budgets=[calsim.Budget(t, 40.0, "day", "Europe/Berlin") for t in tenants])


GRID = {"catchup": ["all", "latest", "skip"], "max_lateness": ["6h", None], "budget_limit": [40.0, 80.0],
        "overlap": ["skip", "buffer_all"]}


@pytest.fixture(scope="module")
def swept():
    return _fleet_scenario(), calsim.sweep(_fleet_scenario(), GRID, jobs=2)


def test_a_sweep_has_one_row_per_combination_in_the_grids_order(swept):
    _, result = swept
    assert result.height == 3 * 2 * 2 * 2
    assert result["combination"][0] == "catchup=all, max_lateness=6h, budget_limit=40.0, overlap=skip"
    assert result["catchup"].to_list()[:8] == ["all"] * 8 and result["overlap"].to_list()[:2] == ["skip", "buffer_all"]
    assert list(result.columns[-len(MEASURES):]) == list(MEASURES)


def test_each_combination_measures_exactly_what_its_own_simulate_gives(swept):
    scenario, result = swept
    keys = list(GRID)
    for row in result.iter_rows(named=True):
        combo = {k: GRID[k][[str(v) if v is not None else "none" for v in GRID[k]].index(row[k])] for k in keys}
        alone = calsim.simulate(variant(scenario, combo), progress=False)
        assert measures(alone) == {m: row[m] for m in MEASURES}, row["combination"]


def test_the_grid_changes_what_it_should():
    _, result = (None, calsim.sweep(_fleet_scenario(), {"catchup": ["all", "skip"]}, jobs=1))
    all_, skip = result.rows(named=True)
    assert all_["missed"] < skip["missed"] and all_["late"] > skip["late"]


def test_threads_and_one_at_a_time_give_the_same_rows():
    sc = _fleet_scenario(20)
    grid = {"catchup": ["all", "latest"], "jitter": [None, "5min"], "capacity": [None, 3]}
    assert calsim.sweep(sc, grid, jobs=1).equals(calsim.sweep(sc, grid, jobs=2))


def test_a_key_that_changes_the_expansion_gives_each_combination_its_own_and_the_same_answer():
    sc = _fleet_scenario(12)
    presets = [calsim.presets.cronie(), calsim.presets.systemd()]
    result = calsim.sweep(sc, {"preset": presets, "catchup": ["all", "latest"]}, jobs=2)
    assert result.height == 4 and [p.split("(")[0] for p in result["preset"]] == ["cronie", "cronie", "systemd",
                                                                                   "systemd"]
    for row in result.iter_rows(named=True):
        preset = presets[0] if row["preset"].startswith("cronie") else presets[1]
        alone = calsim.simulate(variant(sc, {"preset": preset, "catchup": row["catchup"]}), progress=False)
        assert measures(alone) == {m: row[m] for m in MEASURES}


def test_the_ledgers_are_written_to_a_store_when_asked(tmp_path):
    sc = _fleet_scenario(10)
    result = calsim.sweep(sc, {"catchup": ["all", "skip"]}, jobs=1, store=tmp_path / "sweep.duckdb")
    with calsim.LedgerStore(tmp_path / "sweep.duckdb", read_only=True) as store:
        assert set(store.scenarios()["name"].to_list()) == set(result["scenario"].to_list())
        stored = store.ledger(result["scenario"][1])
    alone = calsim.simulate(variant(sc, {"catchup": "skip"}, name=result["scenario"][1]), progress=False)
    assert stored.height == alone.frame.height


@pytest.mark.parametrize("grid,message", [
    ({"catchp": ["all"]}, r"^sweep\.grid: unknown field 'catchp'"),
    ({"catchup": []}, r"^sweep\.grid: catchup: expected a non-empty list of values"),
    ({"catchup": "all"}, r"^sweep\.grid: catchup: expected a non-empty list of values"),
    ({"catchup": ["all", "lastest"]}, r"^sweep\.grid catchup=lastest: catchup: unknown policy 'lastest'"),
    ({"max_active": [0]}, r"^sweep\.grid max_active=0: max_active: 0"),
    ({}, r"^sweep\.grid: expected a mapping"),
])
def test_a_bad_grid_names_the_field_the_value_and_what_is_allowed(grid, message):
    with pytest.raises(calsim.CalsimError, match=message):
        calsim.sweep(_fleet_scenario(5), grid)


def test_budget_limit_needs_budgets():
    sc = dataclasses.replace(_fleet_scenario(5), budgets=())
    with pytest.raises(calsim.InputError, match="budget_limit: the scenario has no budgets"):
        calsim.sweep(sc, {"budget_limit": [1.0]})


def test_a_combination_is_labelled_by_its_settings():
    assert label({"catchup": "latest", "max_lateness": None}) == "catchup=latest, max_lateness=none"
