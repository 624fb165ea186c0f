"""Cutting a scenario into sub-scenarios that share nothing, so each can run on its own worker.

What couples schedules, and so must stay in one partition:

- a **budget**: schedules whose policy's ``account`` has a :class:`~calsim.Budget`
  share its spending (every revision's account counts, ``Revise`` events
  included); accounts are joined with a union-find, so schedules linked
  through any chain of shared accounts land together. An account without a
  budget couples nothing.
- ``capacity``: a scenario-wide bound on concurrent runs couples the whole
  fleet, so such a scenario is simulated as **one partition** (on one worker;
  no speed-up, but the ledger still goes to Parquet and not to the client).

Events follow their schedule (``Pause``/``Resume``/``Trigger`` with a
``schedule_id``, ``Revise``); scenario-wide ones (``Pause``/``Resume`` without
an id, ``TzUpgrade``) and the world (horizon, release, tick, outages,
failures, seed) go to every partition. Randomness is drawn per
``(schedule_id, nominal_local, fold, seed)``, never from row positions, so the
same scenario gives the same ledger whatever the number of partitions.

>>> import dataclasses, calsim
>>> a = calsim.Schedule("a", "UTC", "2026-01-01T00:00", "FREQ=DAILY", policy=calsim.Policy(account="t1"))
>>> b = calsim.Schedule("b", "UTC", "2026-01-01T00:00", "FREQ=DAILY", policy=calsim.Policy(account="t1"))
>>> c = calsim.Schedule("c", "UTC", "2026-01-01T00:00", "FREQ=DAILY")
>>> sc = calsim.Scenario("s", [a, b, c], "2026-01-01T00:00Z", "2026-01-08T00:00Z",
...                      budgets=[calsim.Budget("t1", 5)])
>>> couplings(sc)
[['a', 'b'], ['c']]
>>> couplings(dataclasses.replace(sc, capacity=1))
[['a', 'b', 'c']]
>>> partition(sc, 2)
[['a', 'b'], ['c']]
"""

from __future__ import annotations

import dataclasses
import heapq

from ..simulation.policy import Policy
from ..simulation.scenario import Backfill, Pause, Resume, Revise, Scenario, Trigger

__all__ = ["couplings", "partition", "sub_scenario", "account_of"]


def account_of(schedule) -> str | None:
    """The account ``schedule``'s policy pays from, None without one."""
    p = schedule.policy
    return p.account if isinstance(p, Policy) and p.account else None


def _revisions(scenario: Scenario) -> list:
    """Every schedule revision a run can meet: the fleet's and the ``Revise`` events'."""
    return list(scenario.schedules) + [ev.schedule for ev in scenario.events if isinstance(ev, Revise)]


def couplings(scenario: Scenario) -> list[list[str]]:
    """Groups of schedule ids that must be simulated together, each sorted, the groups by first id.

    Schedules paying from the same budgeted account are joined (union-find
    over accounts); with a ``capacity`` every schedule is in one group.
    """
    ids = sorted({s.id for s in scenario.schedules})
    if scenario.capacity is not None:
        return [ids] if ids else []
    budgeted = {b.account for b in scenario.budgets}
    parent: dict[object, object] = {}

    def find(x: object) -> object:
        parent.setdefault(x, x)
        root = x
        while parent[root] != root:
            root = parent[root]
        while parent[x] != root:  # path compression
            parent[x], x = root, parent[x]
        return root

    for s in _revisions(scenario):
        node = ("id", s.id)
        find(node)
        acct = account_of(s)
        if acct in budgeted:
            ra, rb = find(node), find(("account", acct))
            if ra != rb:
                parent[ra] = rb
    groups: dict[object, list[str]] = {}
    for i in ids:
        groups.setdefault(find(("id", i)), []).append(i)
    return sorted(groups.values(), key=lambda g: g[0])


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
    for s in _revisions(scenario):
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


def sub_scenario(scenario: Scenario, ids: set[str]) -> Scenario:
    """The scenario restricted to ``ids``: their schedules, events and budgets, the same world."""
    events = []
    for ev in scenario.events:
        if isinstance(ev, (Pause, Resume)):
            keep = ev.schedule_id is None or ev.schedule_id in ids
        elif isinstance(ev, (Trigger, Backfill)):
            keep = ev.schedule_id in ids
        elif isinstance(ev, Revise):
            keep = ev.schedule is not None and ev.schedule.id in ids
        else:  # TzUpgrade and anything scenario-wide
            keep = True
        if keep:
            events.append(ev)
    schedules = [s for s in scenario.schedules if s.id in ids]
    accounts = {account_of(s) for s in _revisions(scenario) if s.id in ids}
    budgets = [b for b in scenario.budgets if b.account in accounts]
    return dataclasses.replace(scenario, schedules=tuple(schedules), events=tuple(events), budgets=tuple(budgets))
