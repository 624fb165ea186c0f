"""``calsim.sweep(..., engine="dask")``: a grid's combinations settled as Dask tasks, a few per task.

Combinations are independent, so each task takes a contiguous share of
them and runs the local sweep on it (:func:`calsim.simulation.sweep.measured`:
one expansion per task, shared by its combinations); only the measures, a
few numbers per combination, come back. A task is pure: one the scheduler
reruns after its worker died returns the same numbers, and the client takes
exactly one result per task, so no row is missing or doubled. Each task key
names the sweep (a hash of the scenario, the combinations and the calsim
version), so submitting the same sweep again reuses results a running
cluster still holds.

>>> shares(10, 4)
[[0, 1, 2], [3, 4, 5], [6, 7], [8, 9]]
"""

from __future__ import annotations

from typing import Any

from ..simulation.scenario import Scenario
from .client import _get_client, _token
from .dataset import gathered

__all__ = ["sweep", "run_combinations", "shares", "MIN_TASKS"]

#: Fewest tasks a sweep of that many combinations or more is cut into (so a small cluster still shares it).
MIN_TASKS = 3


def shares(n: int, tasks: int) -> list[list[int]]:
    """``range(n)`` in ``tasks`` contiguous shares, sizes differing by at most one (larger first)."""
    tasks = max(1, min(tasks, n))
    base, extra = divmod(n, tasks)
    out, lo = [], 0
    for k in range(tasks):
        hi = lo + base + (k < extra)
        out.append(list(range(lo, hi)))
        lo = hi
    return out


def run_combinations(scenario: Scenario, combos: list[dict[str, Any]], names: list[str],
                     late_after: object) -> list[dict[str, Any]]:
    """The task: these combinations' measures, in order (the local sweep, one thread)."""
    from ..simulation.sweep import measured  # (the engine is loaded on the worker, when a task runs)

    results, _ = measured(scenario, combos, names, jobs=1, late_after=late_after, progress=False)
    return [m for m, _ in results]


def sweep(scenario: Scenario, combos: list[dict[str, Any]], names: list[str], *, late_after: object = None,
          client: object = None, retries: int = 2) -> list[dict[str, Any]]:
    """Each combination's measures, in order, computed on the cluster of ``client`` (see module docstring).

    Tasks: at least :data:`MIN_TASKS` (as many as combinations, if fewer),
    and two per worker thread, so that every thread has work and a lost
    worker costs a share, not the sweep.
    """
    from .._version import __version__

    dask_client, owned = _get_client(client)
    try:
        threads = sum(dask_client.nthreads().values()) or 1
        parts = shares(len(combos), max(MIN_TASKS, 2 * threads))
        token = _token(scenario, combos, names, late_after, __version__)
        futures = [dask_client.submit(run_combinations, scenario, [combos[i] for i in part],
                                      [names[i] for i in part], late_after,
                                      key=f"calsim-sweep-{token}-{k:05d}", retries=retries)
                   for k, part in enumerate(parts)]
        return [m for share in gathered(dask_client, futures) for m in share]
    finally:
        if owned:
            dask_client.close()
