"""Cutting a scenario into sub-scenarios that share nothing, so each can run on its own worker.

What couples schedules, and so must stay in one partition:

- a **budget**: schedules whose policy's ``account`` has a :class:`~calsim.Budget`
  share its spending (every revision's account counts, ``Revise`` events
  included); accounts are joined with a union-find, so schedules linked
  through any chain of shared accounts land together. An account without a
  budget couples nothing.
- a **rate limit** (:class:`~calsim.RateLimit`): schedules whose policy names
  the same bucket share its tokens;
- a **breaker** (:class:`~calsim.Breaker`): the schedules in its scope count
  failures together (``account:<a>`` joins that account's schedules,
  ``source:<name>`` those of that rate limit's bucket, ``schedule:<id>`` one);
- ``capacity`` and ``workers``: a scenario-wide bound on concurrent runs, or a
  pool of workers every run is leased to (with their crashes), couples the
  whole fleet, so such a scenario is simulated as **one partition** (on one
  worker; no speed-up, but the ledger still goes to Parquet and not to the
  client): :func:`fleet_wide` names the resource, and the Dask engine warns.

Everything else a worker-level scenario has is drawn per run (failures and
their error classes, backoff jitter) or per schedule (duplicate schedulers
and their skew), so it partitions like any other.

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
>>> fleet_wide(dataclasses.replace(sc, capacity=1))
'capacity=1'
>>> r = dataclasses.replace(c, id="d", policy=calsim.Policy(rate_limit="api"))
>>> couplings(dataclasses.replace(sc, schedules=[a, b, c, r, dataclasses.replace(r, id="e")], budgets=[],
...                               rate_limits=[calsim.RateLimit("api", rate="10/min")]))
[['a'], ['b'], ['c'], ['d', 'e']]
>>> partition(sc, 2)
[['a', 'b'], ['c']]
"""

from __future__ import annotations

import dataclasses
import heapq

from ..simulation.policy import Policy
from ..simulation.faults import WorkerCrash
from ..simulation.scenario import Backfill, Pause, Resume, Revise, Scenario, Trigger, revisions

__all__ = ["couplings", "partition", "sub_scenario", "account_of", "fleet_wide"]


def account_of(schedule) -> str | None:
    """The account ``schedule``'s policy pays from, None without one."""
    p = schedule.policy
    return p.account if isinstance(p, Policy) and p.account else None


def fleet_wide(scenario: Scenario) -> str | None:
    """The resource that couples the whole fleet (``"capacity=3"``, ``"workers=Workers(4)"``), None: none.

    A scheduler's concurrency limit and a worker pool are shared by every run, whichever schedule it is of:
    no cut by schedule keeps what happens to each run.
    """
    if scenario.capacity is not None:
        return f"capacity={scenario.capacity}"
    if scenario.workers is not None:
        return f"workers=Workers({scenario.workers.count})"
    if any(isinstance(e, WorkerCrash) for e in scenario.events):  # (refused without workers; said all the same)
        return "worker crashes"
    return None


def couplings(scenario: Scenario) -> list[list[str]]:
    """Groups of schedule ids that must be simulated together, each sorted, the groups by first id.

    Schedules paying from the same budgeted account, naming the same rate
    limit or in the same breaker's scope are joined (union-find over accounts,
    buckets and scopes); with a fleet-wide resource (:func:`fleet_wide`)
    every schedule is in one group.
    """
    ids = sorted({s.id for s in scenario.schedules})
    if fleet_wide(scenario) is not None:
        return [ids] if ids else []
    joined = {b.account for b in scenario.budgets} | {br.target for br in scenario.breakers if br.kind == "account"}
    buckets = {r.name for r in scenario.rate_limits}
    parent: dict[object, object] = {}

    def find(x: object) -> object:
        parent.setdefault(x, x)
        root = x
        while parent[root] != root:
            root = parent[root]
        while parent[x] != root:  # path compression
            parent[x], x = root, parent[x]
        return root

    for s in revisions(scenario):
        node = ("id", s.id)
        find(node)
        acct = account_of(s)
        bucket = s.policy.rate_limit if isinstance(s.policy, Policy) else None
        # (a source breaker's scope is a bucket's schedules: the bucket joins them already)
        for other in ((("account", acct),) if acct in joined else ()) + \
                ((("bucket", bucket),) if bucket in buckets else ()):
            ra, rb = find(node), find(other)
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
    kept = [s for s in revisions(scenario) if s.id in ids]
    accounts = {account_of(s) for s in kept}
    budgets = [b for b in scenario.budgets if b.account in accounts]
    # A breaker goes where its scope's schedules are (a scenario refuses one that covers none of its own).
    covered = [(s.id, s.policy if isinstance(s.policy, Policy) else Policy()) for s in kept]
    breakers = [br for br in scenario.breakers if any(br.covers(i, p) for i, p in covered)]
    return dataclasses.replace(scenario, schedules=tuple(schedules), events=tuple(events), budgets=tuple(budgets),
                               breakers=tuple(breakers))
