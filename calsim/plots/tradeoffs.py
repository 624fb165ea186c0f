"""``tradeoff(sweep, x, y)``: every combination of a :func:`calsim.sweep` as a point, its Pareto front marked.

Both measures are minimised by default (cost, silence, lateness, misses:
less is better; pass ``maximize=("x",)`` for a measure where more is
better, such as ``done``). A point is on the front when no other point is at
least as good on both and better on one (:func:`pareto_front`); front points
are joined in order and labelled with their settings, the others drawn
faint. Durations (``*_s`` columns) are drawn in hours.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import polars as pl

from ..errors import InputError, check_choice, shown
from .style import OKABE_ITO, Figure, new_figure

__all__ = ["tradeoff", "pareto_front"]


def pareto_front(x: Sequence[float] | np.ndarray, y: Sequence[float] | np.ndarray) -> np.ndarray:
    """Which points no other point dominates, both coordinates minimised (a boolean array).

    A point dominates another when it is at most as large on both and
    smaller on one. Equal points are on the front together.

    >>> pareto_front([1, 2, 3, 2], [3, 2, 1, 3]).tolist()
    [True, True, True, False]
    """
    xs, ys = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    le = (xs[None, :] <= xs[:, None]) & (ys[None, :] <= ys[:, None])
    lt = (xs[None, :] < xs[:, None]) | (ys[None, :] < ys[:, None])
    return np.asarray(~(le & lt).any(axis=1))  # row i: some j at most as large on both and smaller on one


def tradeoff(sweep: pl.DataFrame, x: str = "cost_max_period", y: str = "longest_gap_s", *,
             maximize: Sequence[str] = (), label: str = "combination") -> Figure:
    """The sweep's combinations on ``x`` against ``y``, the non-dominated ones joined and labelled.

    ``sweep``: what :func:`calsim.sweep` returns (or any frame with these
    columns); ``maximize``: which of ``"x"``/``"y"`` is better larger;
    ``label``: the column naming each point. Rows with a null in ``x`` or
    ``y`` (nothing started) are left out and counted in the title.

    >>> import polars as pl
    >>> f = pl.DataFrame({"combination": ["a", "b", "c"], "cost": [1.0, 2.0, 3.0], "gap": [3.0, 1.0, 2.0]})
    >>> fig = tradeoff(f, "cost", "gap")
    >>> sorted(t.get_text() for t in fig.axes[0].texts)
    ['a', 'b']
    """
    if not isinstance(sweep, pl.DataFrame):
        raise InputError(f"sweep: expected the frame calsim.sweep returns, got {shown(sweep)}")
    for name, col in (("x", x), ("y", y), ("label", label)):
        check_choice(name, col, tuple(sweep.columns), noun="column", error=InputError)
    for m in maximize:
        check_choice("maximize", m, ("x", "y"), noun="axis", error=InputError)
    data = sweep.filter(pl.col(x).is_not_null() & pl.col(y).is_not_null())
    xs, ys = (_numbers(data[c]) for c in (x, y))
    front = pareto_front(-xs if "x" in maximize else xs, -ys if "y" in maximize else ys)
    fig = new_figure(7.5, 5.0)
    ax = fig.add_subplot()
    ax.scatter(xs[~front], ys[~front], s=28, color="0.65", alpha=0.7, label="dominated", zorder=2)
    order = np.argsort(xs[front], kind="stable")
    fx, fy = xs[front][order], ys[front][order]
    names = np.asarray(data[label].cast(pl.String).to_list(), dtype=object)[front][order]
    ax.plot(fx, fy, "-o", color=OKABE_ITO["vermillion"], ms=7, lw=1.5, label="Pareto front (non-dominated)", zorder=3)
    for i, (px, py, name) in enumerate(zip(fx, fy, names)):
        ax.annotate(str(name), (px, py), xytext=(6, 6 if i % 2 == 0 else -12), textcoords="offset points",
                    fontsize=7, color="0.15")
    ax.set_xlabel(_axis_label(x, "x" in maximize))
    ax.set_ylabel(_axis_label(y, "y" in maximize))
    left_out = sweep.height - data.height
    ax.set_title(f"{int(front.sum())} of {data.height} combinations on the front"
                 + (f" ({left_out} without a value left out)" if left_out else ""), fontsize=10)
    ax.grid(True, alpha=0.3)
    ax.legend(loc="best", fontsize=8)
    return fig


def _numbers(col: pl.Series) -> np.ndarray:
    """A measure as floats; seconds (``*_s``) as hours."""
    values = col.cast(pl.Float64).to_numpy()
    return values / 3600.0 if col.name.endswith("_s") else values


def _axis_label(name: str, larger_better: bool) -> str:
    text = f"{name[:-2]} (h)" if name.endswith("_s") else name
    return f"{text}, larger is better" if larger_better else f"{text}, smaller is better"
