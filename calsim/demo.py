"""``calsim demo``: the example fleet through a realistic incident, under three catch-up policies.

What it does, in order (each step is what an operator would do by hand):

1. loads ``data/examples/incident.toml`` (six schedules of two tenants, a
   3.5-day scheduler outage in October 2026, a daily budget per tenant);
2. simulates it with ``catchup="all"``, ``"latest"`` and ``"skip"``
   (everything else as the fleet file says);
3. writes the three ledgers to ``calsim-demo.duckdb`` in the output
   directory (replacing an earlier demo's scenarios of the same names);
4. prints ``LedgerStore.compare`` as a table: runs done, coalesced,
   skipped, expired, lateness, cost, the longest gap (a silence: no run
   started) and the most occurrences missed, or run late, in one;
5. writes ``calsim-demo.png``: timeline, state counts and daily cost
   against the budget, stacked in one image;
6. says what to open next: the notebooks in JupyterLab (the ``lab`` extra,
   and how to install it), or ``calsim compare``.

>>> import calsim.demo, tempfile
>>> result = calsim.demo.run(tempfile.mkdtemp(), echo=lambda *a: None)
>>> result.comparison["scenario"].to_list()
['demo-all', 'demo-latest', 'demo-skip']
"""

from __future__ import annotations

import dataclasses
import sys
from pathlib import Path
from typing import Callable

import polars as pl

from .errors import InputError

__all__ = ["run", "DemoResult", "examples_dir", "POLICIES"]

POLICIES = ("all", "latest", "skip")

# Columns of the comparison worth reading first; the rest is in the store.
_SHOWN = ("scenario", "occurrences", "done", "coalesced", "skipped", "expired", "lateness_p95",
          "lateness_max", "cost", "longest_gap", "most_missed", "most_late")


def examples_dir() -> Path:
    """``data/examples`` of the source tree, or ``<prefix>/share/calsim/examples`` of an installed copy."""
    here = Path(__file__).resolve().parent.parent / "data" / "examples"
    if here.is_dir():
        return here
    return Path(sys.prefix) / "share" / "calsim" / "examples"


@dataclasses.dataclass(frozen=True)
class DemoResult:
    """What the demo produced: the store file, the chart and the comparison frame."""

    db: Path
    png: Path
    comparison: pl.DataFrame


def run(out_dir: str | Path = ".", *, echo: Callable[..., None] = print, progress: bool | None = False) -> DemoResult:
    """Run the demo, writing ``calsim-demo.duckdb`` and ``calsim-demo.png`` into ``out_dir``."""
    from .scenario_file import load_scenario
    from .simulation.dispatch import simulate
    from .simulation.policy import with_policy
    from .store import LedgerStore

    out = Path(out_dir)
    if not out.is_dir():
        raise InputError(f"out: directory {str(out)!r} does not exist")
    base = load_scenario(examples_dir() / "incident.toml")
    outage = base.outages[0]
    echo(f"Fleet: {len(base.schedules)} schedules of data/examples/fleet.toml; horizon {base.start} .. {base.end}; "
         f"tzdata {base.release}")
    echo(f"Incident: scheduler down {outage.start} .. {outage.end}; daily budgets: "
         + ", ".join(f"{b.account} {b.limit:g}/{b.period} ({b.zone})" for b in base.budgets))
    ledgers = [
        simulate(dataclasses.replace(base, name=f"demo-{mode}", schedules=with_policy(base.schedules, catchup=mode)),
                 progress=progress)
        for mode in POLICIES
    ]
    db = out / "calsim-demo.duckdb"
    names = [ledger.name for ledger in ledgers]
    with LedgerStore(db) as store:
        for ledger in ledgers:
            store.write(ledger, replace=True)
        comparison = store.compare(names)
    png = out / "calsim-demo.png"
    _charts(ledgers, base.budgets, png)
    from .text_table import table as _table

    echo("")
    echo(_table(comparison.select(_SHOWN)))
    echo("")
    echo(f"Ledgers: {db} (tables scenarios, schedules, occurrences; views state_counts, observation_gaps "
         "(as Ledger.gaps(), spans in seconds), daily_cost, lateness)")
    echo(f"Charts:  {png}")
    for line in next_steps(db):
        echo(line)
    return DemoResult(db, png, comparison)


def next_steps(db: str | Path, cwd: str | Path | None = None) -> list[str]:
    """What to open next: the notebooks in JupyterLab (and how to install it), or ``calsim compare``.

    JupyterLab is the ``lab`` extra, not a dependency (``pip install -e .``
    stays light), so the line says how to install it. Paths are shown
    relative to ``cwd`` (default: the current directory) when under it, so
    they can be pasted as they are; the commands are the environment's own
    (``.venv/bin/jupyter`` for a ``.venv/bin/calsim demo``).

    >>> import pathlib
    >>> root = pathlib.Path(__file__).resolve().parent.parent
    >>> print("\\n".join(next_steps(root / "calsim-demo.duckdb", cwd=root)))   # doctest: +ELLIPSIS
    Next:    ...jupyter lab notebooks/02_outages_and_catchup.ipynb (then 03_budget_and_cost.ipynb), or `calsim compare calsim-demo.duckdb`
             JupyterLab is the `lab` extra: ...pip install -e ".[lab]"
    """  # noqa: E501  (a doctest output line)
    here = Path(cwd or Path.cwd()).resolve()

    def shown(path: Path) -> str:
        path = Path(path).resolve()
        return str(path.relative_to(here)) if path.is_relative_to(here) else str(path)

    # The environment's own commands: jupyter is there once the lab extra is installed.
    bin_dir = Path(sys.executable).parent  # not resolved: a venv's python is a symlink out of it
    jupyter, pip = shown(bin_dir / "jupyter"), shown(bin_dir / "pip")
    root = Path(__file__).resolve().parent.parent
    first = root / "notebooks" / "02_outages_and_catchup.ipynb"
    compare = f"`calsim compare {shown(Path(db))}`"
    if not first.is_file():  # an installed copy: the notebooks are not in it
        return [f"Next:    {compare}; the notebooks are in calsim's source tree (notebooks/), "
                f"JupyterLab is the `lab` extra: {pip} install \"calsim[lab]\""]
    return [f"Next:    {jupyter} lab {shown(first)} (then 03_budget_and_cost.ipynb), or {compare}",
            f"         JupyterLab is the `lab` extra: {pip} install -e \"{shown(root)}[lab]\""]


def _charts(ledgers: list, budgets: tuple, path: Path) -> None:
    """The key charts stacked in one PNG (each chart is its own Figure; stacking the pixels keeps them so)."""
    import numpy as np
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.image import imsave

    import calsim.plots as plots
    from .atomic import write_atomically

    # The budget worth charting is the one the catch-up pressed hardest: most runs held for it.
    def waited(budget) -> int:
        led = ledgers[0]
        ids = [sid for sid, acct in led.accounts.items() if acct == budget.account]
        return led.frame.filter(pl.col("schedule_id").is_in(ids), pl.col("budget_wait_s") > 0).height

    budget = max(budgets, key=waited) if budgets else None
    figures = [
        plots.timeline(ledgers[1]),
        plots.state_counts(ledgers),
        plots.cost_impact(ledgers, budget=budget),
    ]
    images = []
    for fig in figures:
        canvas = FigureCanvasAgg(fig)
        canvas.draw()
        images.append(np.asarray(canvas.buffer_rgba()))
    width = max(im.shape[1] for im in images)
    padded = [np.pad(im, ((0, 0), (0, width - im.shape[1]), (0, 0)), constant_values=255) for im in images]
    image = np.vstack(padded)
    write_atomically(path, lambda tmp: imsave(tmp, image, format="png"), "out")
