"""Which schedules share something a run needs, so must be settled together; a scenario cut to some of them.

What couples schedules:

- a **budget**: schedules whose policy's ``account`` has a :class:`~calsim.Budget`
  share its spending (every revision's account counts, ``Revise`` events
  included); accounts are joined with a union-find, so schedules linked
  through any chain of shared accounts land together. An account without a
  budget couples nothing.
- a **capacity pool**: with ``Scenario(capacity={"etl": 4, ...})`` the
  schedules whose policy names ``pool="etl"`` share its slots; a number
  ``capacity`` (one pool of the whole fleet) couples every schedule;
- a **rate limit** (:class:`~calsim.RateLimit`): schedules whose policy names
  the same bucket share its tokens;
- a **breaker** (:class:`~calsim.Breaker`): the schedules in its scope count
  failures together (``account:<a>`` joins that account's schedules,
  ``source:<name>`` those of that rate limit's bucket, ``schedule:<id>`` one);
- ``workers``: a pool of workers every run is leased to (with their crashes)
  couples the whole fleet too: :func:`fleet_wide` names such a resource.

Everything else a worker-level scenario has is drawn per run (failures and
their error classes, backoff jitter) or per schedule (duplicate schedulers
and their skew). The local engine settles capacity pools apart
(:func:`.engine.run_local`) and the Dask engine partitions by these groups
(:mod:`calsim.distributed.partitioning`).

Events follow their schedule (``Pause``/``Resume``/``Trigger`` with a
``schedule_id``, ``Revise``); scenario-wide ones (``Pause``/``Resume`` without
an id, ``TzUpgrade``) and the world (horizon, release, tick, outages,
failures, seed) go to every part. Randomness is drawn per
``(schedule_id, nominal_local, fold, seed)``, never from row positions, so the
same scenario gives the same ledger however it is cut.

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
>>> p = calsim.Policy(pool="etl")
>>> couplings(dataclasses.replace(sc, schedules=[a, b, dataclasses.replace(c, policy=p),
...                                              dataclasses.replace(c, id="d", policy=p)], capacity={"etl": 2}))
[['a', 'b'], ['c', 'd']]
"""

from __future__ import annotations

import dataclasses

from .policy import Policy
from .faults import WorkerCrash
from .scenario import Backfill, Pause, Resume, Revise, Scenario, Trigger, revisions

__all__ = ["couplings", "sub_scenario", "account_of", "pool_of", "fleet_wide", "pools_of", "shared_keys",
           "coupling_keys", "joined"]


def account_of(schedule) -> str | None:
    """The account ``schedule``'s policy pays from, None without one."""
    p = schedule.policy
    return p.account if isinstance(p, Policy) and p.account else None


def fleet_wide(scenario: Scenario) -> str | None:
    """The resource that couples the whole fleet (``"capacity=3"``, ``"workers=Workers(4)"``), None: none.

    A scheduler's concurrency limit and a worker pool are shared by every run, whichever schedule it is of:
    no cut by schedule keeps what happens to each run.
    """
    if scenario.capacity is not None and not isinstance(scenario.capacity, dict):  # (pools couple their own)
        return f"capacity={scenario.capacity}"
    if scenario.workers is not None:
        return f"workers=Workers({scenario.workers.count})"
    if any(isinstance(e, WorkerCrash) for e in scenario.events):  # (refused without workers; said all the same)
        return "worker crashes"
    return None


def couplings(scenario: Scenario) -> list[list[str]]:
    """Groups of schedule ids that must be simulated together, each sorted, the groups by first id.

    Schedules paying from the same budgeted account, taking slots of the same
    capacity pool, naming the same rate limit or in the same breaker's scope
    are joined (union-find over accounts, pools, buckets and scopes); with a
    fleet-wide resource (:func:`fleet_wide`) every schedule is in one group.
    """
    ids = sorted({s.id for s in scenario.schedules})
    if fleet_wide(scenario) is not None:
        return [ids] if ids else []
    kinds = shared_keys(scenario)
    # (a source breaker's scope is a bucket's schedules: the bucket joins them already)
    roots = joined([(("id", s.id), *coupling_keys(s, *kinds)) for s in revisions(scenario)])
    groups: dict[object, list[str]] = {}
    for i in ids:
        groups.setdefault(roots.get(("id", i), ("id", i)), []).append(i)
    return sorted(groups.values(), key=lambda g: g[0])


def shared_keys(scenario: Scenario) -> tuple[frozenset[str], frozenset[str], frozenset[str]]:
    """What schedules of ``scenario`` can share, by kind: the accounts with a budget (or an account breaker),
    the rate-limit buckets, the capacity pools (with ``capacity={...}``)."""
    accounts = {b.account for b in scenario.budgets} | {br.target for br in scenario.breakers if br.kind == "account"}
    pools = scenario.capacity if isinstance(scenario.capacity, dict) else {}
    return frozenset(accounts), frozenset(r.name for r in scenario.rate_limits), frozenset(pools)


def coupling_keys(schedule, accounts: frozenset[str], buckets: frozenset[str],
                  pools: frozenset[str] = frozenset()) -> tuple[tuple[str, str], ...]:
    """What couples ``schedule`` to others (``accounts``, ``buckets``, ``pools``: :func:`shared_keys`):
    ``("account", a)`` when its account has a budget (or an account breaker), ``("pool", p)`` when it takes
    slots of a capacity pool, ``("bucket", b)`` when it names a rate limit; none for one that shares nothing."""
    p = schedule.policy if isinstance(schedule.policy, Policy) else None
    keys = []
    if p is not None and p.account and p.account in accounts:
        keys.append(("account", p.account))
    if p is not None and p.pool and p.pool in pools:
        keys.append(("pool", p.pool))
    if p is not None and p.rate_limit and p.rate_limit in buckets:
        keys.append(("bucket", p.rate_limit))
    return tuple(keys)


def joined(links: list[tuple[tuple[str, str], ...]]) -> dict[tuple[str, str], tuple[str, str]]:
    """Each key of ``links`` (sets of keys one thing joins) mapped to its group's representative (the smallest
    key): a union-find, the one both :func:`couplings` and a Dask client over the workers' pairs run."""
    parent: dict[tuple[str, str], tuple[str, str]] = {}

    def find(x: tuple[str, str]) -> tuple[str, str]:
        parent.setdefault(x, x)
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    for keys in links:
        for a, b in zip(keys, keys[1:]):
            ra, rb = find(a), find(b)
            if ra != rb:
                parent[max(ra, rb)] = min(ra, rb)
    return {k: find(k) for k in parent}


def pool_of(schedule) -> str | None:
    """The capacity pool ``schedule``'s runs take a slot of (its policy's ``pool``), None without one."""
    p = schedule.policy
    return p.pool if isinstance(p, Policy) and p.pool else None


def pools_of(scenario: Scenario) -> list[tuple[int | None, list[str]]]:
    """The scenario's schedule ids by the capacity that bounds them: ``(slots, ids)`` per pool that some
    schedule names, and ``(None, ids)`` for the schedules of no pool; ``[(capacity, every id)]`` when the
    capacity is a number or None. The local engine settles each part on its own (:func:`.engine.run_local`),
    so a pool's schedules must share nothing with other schedules: pools coupled by a budget, a bucket or a
    breaker are refused (their runs would wait for two bounds at once), and so is a schedule of no pool coupled
    to a pool's (settled with them, it would take their slots).
    """
    from ..errors import InputError

    cap = scenario.capacity
    if not isinstance(cap, dict):
        return [(scenario.slots, sorted({s.id for s in scenario.schedules}))]
    pools_in: dict[str, set[str]] = {}
    for s in revisions(scenario):
        pool = pool_of(s)
        if pool:
            pools_in.setdefault(s.id, set()).add(pool)
    by_pool: dict[str | None, list[str]] = {}
    for group in couplings(scenario):
        names = sorted(set().union(*(pools_in.get(i, set()) for i in group)))
        if len(names) > 1:
            raise InputError(f"scenario.capacity: pools {names[0]!r} and {names[1]!r} hold schedules that share a "
                             f"budget, a rate limit, a breaker or a revision (e.g. {group[0]!r}); allowed: pools "
                             "whose schedules share nothing else (or one pool for them)")
        loose = [i for i in group if i not in pools_in]
        if names and loose:
            raise InputError(f"scenario.capacity: schedule {loose[0]!r} takes no pool but shares a budget, a rate "
                             f"limit or a breaker with pool {names[0]!r}'s schedules; allowed: give it "
                             f"pool={names[0]!r} (a pool's runs and those they wait with are settled together)")
        by_pool.setdefault(names[0] if names else None, []).extend(group)
    return [(None if name is None else cap[name], sorted(ids)) for name, ids in sorted(
        by_pool.items(), key=lambda kv: (kv[0] is None, kv[0] or ""))]


def sub_scenario(scenario: Scenario, ids: set[str], schedules: tuple | None = None) -> Scenario:
    """The scenario restricted to ``ids``: their schedules, events and budgets, the same world.

    ``schedules``: the part's schedules when they were read elsewhere (a world without its own, given a
    table's share on a Dask worker): its budgets and breakers are then those these schedules meet."""
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
    if schedules is None:
        schedules = tuple(s for s in scenario.schedules if s.id in ids)
    revised = [ev.schedule for ev in scenario.events if isinstance(ev, Revise) and ev.schedule is not None]
    kept = [s for s in (*schedules, *revised) if s.id in ids]  # (revisions(), with these schedules)
    accounts = {account_of(s) for s in kept}
    budgets = [b for b in scenario.budgets if b.account in accounts]
    # A breaker goes where its scope's schedules are (a scenario refuses one that covers none of its own).
    covered = [(s.id, s.policy if isinstance(s.policy, Policy) else Policy()) for s in kept]
    breakers = [br for br in scenario.breakers if any(br.covers(i, p) for i, p in covered)]
    return dataclasses.replace(scenario, schedules=tuple(schedules), events=tuple(events), budgets=tuple(budgets),
                               breakers=tuple(breakers))
