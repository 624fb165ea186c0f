"""Cutting a scenario into sub-scenarios that share nothing, so each can run on its own worker.

The groups of schedules that must stay together are :func:`calsim.simulation.couplings.couplings`'
(budgets, capacity pools, rate limits, breakers; a number ``capacity`` or a
``workers`` pool couples the whole fleet, which then runs as **one
partition**, on one worker: no speed-up, but the ledger still goes to Parquet
and not to the client, and the Dask engine warns naming the resource).
:func:`partition` packs the groups into bins.

>>> import calsim
>>> a = calsim.Schedule("a", "UTC", "2026-01-01T00:00", "FREQ=DAILY", policy=calsim.Policy(account="t1"))
>>> b = calsim.Schedule("b", "UTC", "2026-01-01T00:00", "FREQ=DAILY", policy=calsim.Policy(account="t1"))
>>> c = calsim.Schedule("c", "UTC", "2026-01-01T00:00", "FREQ=DAILY")
>>> sc = calsim.Scenario("s", [a, b, c], "2026-01-01T00:00Z", "2026-01-08T00:00Z",
...                      budgets=[calsim.Budget("t1", 5)])
>>> partition(sc, 2)
[['a', 'b'], ['c']]
"""

from __future__ import annotations

import heapq

from ..simulation.couplings import account_of, couplings, fleet_wide, sub_scenario
from ..simulation.scenario import Scenario, revisions

__all__ = ["couplings", "partition", "sub_scenario", "account_of", "fleet_wide"]


def partition(scenario: Scenario, partitions: int) -> list[list[str]]:
    """Schedule ids per partition: coupled groups packed into at most ``partitions`` bins.

    Deterministic: groups go, largest first (by schedule revisions, ties by
    first id), to the least loaded bin (ties by index). Fewer bins than asked
    come back when there are fewer groups. Each bin's ids are sorted.
    """
    groups = couplings(scenario)
    if not groups:
        return []
    weight: dict[str, int] = {}
    for s in revisions(scenario):
        weight[s.id] = weight.get(s.id, 0) + 1
    n = max(1, min(partitions, len(groups)))
    ranked = sorted(groups, key=lambda g: (-sum(weight[i] for i in g), g[0]))
    heap = [(0, k) for k in range(n)]
    bins: list[list[str]] = [[] for _ in range(n)]
    for g in ranked:
        load, k = heapq.heappop(heap)
        bins[k].extend(g)
        heapq.heappush(heap, (load + sum(weight[i] for i in g), k))
    return [sorted(b) for b in bins if b]
