"""``calsim.plots.tradeoff``: a sweep's Pareto front, non-dominated and labelled."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import calsim
from calsim.plots import pareto_front, tradeoff


def _sweep() -> pl.DataFrame:
    fleet = [calsim.with_policy([s], duration="20min", cost=1.0, account=s.id.split("/")[0])[0]
             for s in calsim.examples.fleet(30, seed=5)]
    sc = calsim.Scenario("f", fleet, "2026-10-01T00:00Z", "2026-10-06T00:00Z", release="2026f",
                         outages=[calsim.Outage("2026-10-02T01:01Z", "2026-10-03T07:30Z")],
                         budgets=[calsim.Budget(t, 30.0, "day", "UTC") for t in {s.policy.account for s in fleet}])
    return calsim.sweep(sc, {"catchup": ["all", "latest", "skip"], "budget_limit": [20.0, 30.0, 60.0]}, jobs=1)


def _points(fig) -> tuple[np.ndarray, list[str]]:
    ax = fig.axes[0]
    front = next(line for line in ax.get_lines() if "Pareto" in line.get_label())
    return np.column_stack(front.get_data()), [t.get_text() for t in ax.texts]


def test_the_front_points_are_non_dominated_and_each_is_labelled_with_its_settings():
    result = _sweep()
    fig = tradeoff(result, "cost_max_period", "longest_gap_s")
    pts, labels = _points(fig)
    xs = result["cost_max_period"].to_numpy()
    ys = result["longest_gap_s"].to_numpy() / 3600
    for px, py in pts:
        assert not (((xs <= px) & (ys <= py)) & ((xs < px) | (ys < py))).any(), (px, py)
    assert len(labels) == len(pts) and set(labels) <= set(result["combination"].to_list())
    # every non-dominated combination is on the front
    assert len(pts) == int(pareto_front(xs, ys).sum())


def test_a_measure_where_more_is_better_is_maximised():
    f = pl.DataFrame({"combination": ["a", "b", "c"], "done": [10.0, 20.0, 15.0], "cost": [1.0, 3.0, 2.0]})
    _, labels = _points(tradeoff(f, "cost", "done", maximize=("y",)))
    assert sorted(labels) == ["a", "b", "c"]
    _, labels = _points(tradeoff(f, "cost", "done"))
    assert labels == ["a"]


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 20), st.integers(0, 20)), min_size=1, max_size=30))
def test_pareto_front_is_exactly_the_non_dominated_points(points):
    x, y = np.array(points, dtype=float).T
    front = pareto_front(x, y)
    for i in range(len(x)):
        dominated = any(x[j] <= x[i] and y[j] <= y[i] and (x[j] < x[i] or y[j] < y[i]) for j in range(len(x)))
        assert front[i] == (not dominated)


@pytest.mark.parametrize("kw,message", [({"x": "cost_maximum"}, r"^x: unknown column 'cost_maximum'"),
                                        ({"maximize": ("z",)}, r"^maximize: unknown axis 'z'")])
def test_a_bad_column_or_axis_names_it(kw, message):
    f = pl.DataFrame({"combination": ["a"], "cost_max_period": [1.0], "longest_gap_s": [1.0]})
    with pytest.raises(calsim.InputError, match=message):
        tradeoff(f, **kw)


def test_notebook_07_keeps_the_tradeoff_chart_in_its_saved_outputs():
    import json
    from pathlib import Path

    nb = json.loads((Path(__file__).resolve().parents[2] / "notebooks" / "07_choosing_a_policy.ipynb").read_text())
    cells = [c for c in nb["cells"] if c["cell_type"] == "code" and "plots.tradeoff" in "".join(c["source"])]
    assert cells and any("image/png" in o.get("data", {}) for o in cells[0]["outputs"])
