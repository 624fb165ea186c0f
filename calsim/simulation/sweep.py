"""``sweep(scenario, grid)``: one scenario under every combination of a grid of policies, measured side by side.

An operator choosing a policy asks a grid, not a handful of scenarios:
catch-up x ``max_lateness`` x budget limit x ``max_active`` x jitter. Each
combination is the scenario with those fields changed; the answer is one row
per combination with what it costs and what it leaves undone (the measures
below), ready for :func:`calsim.plots.tradeoff`.

Grid keys:

* any :class:`~calsim.Policy` field (``catchup``, ``max_lateness``,
  ``max_active``, ``overlap``, ``jitter``, ``limit``, ...): set on every
  schedule (every revision, ``Revise`` events' too), as
  :func:`calsim.with_policy` does;
* ``budget_limit``: the limit of every :class:`~calsim.Budget`;
* a :class:`~calsim.Scenario` field that changes how runs are settled
  (``capacity``, ``seed``, ``tick``, ``failures``, ``workers``,
  ``schedulers``, ``scheduler_skew``, ``dedupe``, ``outages``, ``release``);
* ``preset``: :class:`~calsim.presets.Preset` objects, applied to every
  schedule (``presets.airflow(catchup=True)``, ...).

**Shared expansion.** Expanding the schedules is most of one simulation.
Combinations that differ only in run rules share one expansion
(:func:`.engine.prepare`); a key that changes what expands (``preset``,
``release``, ``outages``, ``covers``, ``interval_from``) or a scenario with
:class:`~calsim.Backfill` events gives each combination its own (still right,
only slower). Expanding is not most of a *settling*, though: on the benchmark's
1,000-schedule fleet-month with daily budgets a combination costs about a
quarter of a simulate (``benchmarks/sweep_benchmark.py``). Combinations are
independent: with ``jobs`` > 1 they settle in that many threads (large
combinations only, by default: :data:`THREADS_FROM_ROWS`), or as Dask tasks
with ``engine="dask"``; each is measured from its settled columns, without a
ledger frame it does not keep (:func:`.measures.measures_of_run`). Every
combination's ledger is exactly the one :func:`calsim.simulate` gives for
:func:`variant` (tested).

Measures (one row per combination, after the grid's columns): :mod:`.measures`
(runs done, late and missed, the longest silence, lateness, cost against the
budget, budget waits, duplicate effects, data windows never and twice
processed).

>>> import calsim
>>> job = calsim.Schedule("h", "UTC", "2026-01-01T00:00", "0 * * * *")
>>> sc = calsim.Scenario("x", [job], "2026-01-01T00:00Z", "2026-01-02T00:00Z",
...                      outages=[calsim.Outage("2026-01-01T02:30Z", "2026-01-01T06:30Z")])
>>> calsim.sweep(sc, {"catchup": ["all", "latest", "skip"]}, jobs=1).select("catchup", "done", "late", "missed").rows()
[('all', 21, 3, 0), ('latest', 21, 0, 3), ('skip', 20, 0, 4)]
"""

from __future__ import annotations

import dataclasses
import itertools
import math
import os
from concurrent.futures import ThreadPoolExecutor
from collections.abc import Mapping, Sequence
from typing import Any, TypeVar, cast

import polars as pl

from ..errors import CalsimError, InputError, check_choice, shown
from .ledger import Ledger
from .dispatch import engine_entry
from .measures import MEASURES, measures
from .policy import Policy, with_policy
from .scenario import Backfill, Budget, Revise, Scenario, revisions

__all__ = ["sweep", "variant", "measures", "GRID_SCENARIO_FIELDS", "MEASURES"]

#: Scenario fields a grid may vary.
GRID_SCENARIO_FIELDS = ("capacity", "seed", "tick", "failures", "workers", "schedulers", "scheduler_skew", "dedupe",
                        "outages", "release")
# Keys whose change changes what expands: each combination expands on its own.
_EXPANDS = {"preset", "release", "outages", "covers", "interval_from"}
_P = TypeVar("_P", Policy, Budget)
_POLICY_FIELDS = tuple(f.name for f in dataclasses.fields(Policy) if f.init)
MAX_COMBINATIONS = 10_000


def sweep(scenario: Scenario, grid: Mapping[str, Sequence[object]], *, jobs: int | None = None,
          store: object = None, late_after: object = None, progress: bool | None = None, engine: str = "local",
          client: object = None) -> pl.DataFrame:
    """``scenario`` under every combination of ``grid`` (key -> values), one row of measures each.

    ``jobs``: threads settling combinations at once (1: in turn; None,
    default: in turn for combinations under :data:`THREADS_FROM_ROWS` rows,
    else the machine's CPUs, at most 4). ``store``: a
    :class:`~calsim.LedgerStore` (or a DuckDB path) the ledgers are also written
    to, each named ``<scenario>-<n>`` (the row's ``scenario`` column);
    ``late_after`` as in :meth:`calsim.Ledger.gaps`; ``progress``: a bar over
    the combinations (None: in a terminal or notebook, as :func:`calsim.simulate`). Rows are in the grid's
    order (the last key varies fastest); ``combination`` labels each row.

    ``engine="dask"`` settles the combinations as tasks on a Dask cluster
    (``client`` as in :func:`calsim.simulate`), a few per task sharing one
    expansion: the same rows. Only the measures come back; ``store``, ``jobs``
    and ``progress`` are for ``engine="local"``.
    """
    if not isinstance(scenario, Scenario):
        raise InputError(f"sweep.scenario: expected a calsim.Scenario, got {shown(scenario)}")
    check_choice("sweep.engine", engine, ("local", "dask"), noun="engine", error=InputError)
    if engine == "dask":
        for name, value in (("store", store), ("jobs", jobs), ("progress", progress or None)):
            if value is not None:
                raise InputError(f"sweep.{name}: {shown(value)} is not used by engine='dask' (its workers settle "
                                 f"the combinations and only the measures come back); allowed with engine='dask': "
                                 f"None")
    elif client is not None:
        raise InputError(f"sweep.client: {shown(client)} is not used by engine='local'; client is for "
                         "engine='dask'")
    keys, values = _grid(grid, scenario)
    combos = [dict(zip(keys, vs)) for vs in itertools.product(*values)]
    names = [f"{scenario.name}-{i + 1:0{len(str(len(combos)))}d}" for i in range(len(combos))]
    if engine == "dask":
        reps = _classes(revisions(scenario))[1]
        for c, n in zip(combos, names):  # each combination checked here, before anything is submitted
            variant(scenario, c, name=n, apply_policy=False, _reps=reps)
        on_dask = engine_entry("dask", "sweep")
        got = on_dask(scenario, combos, names, late_after=late_after, client=client)
        results: list[tuple[dict[str, Any], pl.DataFrame | None]] = [(m, None) for m in got]
    else:
        results, variants = measured(scenario, combos, names, jobs=_jobs(jobs, len(combos)), late_after=late_after,
                                     keep=store is not None, progress=progress)
        if store is not None:
            _write(store, [r[1] for r in results], variants)
    rows = []
    for c, n, (m, _) in zip(combos, names, results):
        rows.append({"scenario": n, "combination": label(c), **{k: _text(v) for k, v in c.items()}, **m})
    schema = {"scenario": pl.String, "combination": pl.String, **{k: pl.String for k in keys},
              **{m: (pl.Float64 if m.endswith("_s") or m in ("cost", "cost_max_period", "worst_budget_limit")
                     else pl.Int64) for m in MEASURES}}
    return pl.DataFrame(rows, schema=schema, orient="row")


def measured(scenario: Scenario, combos: list[dict[str, Any]], names: list[str], *, jobs: int | None = 1,
             late_after: object = None, keep: bool = False, progress: bool | None = False,
             ) -> tuple[list[tuple[dict[str, Any], pl.DataFrame | None]], list[Scenario]]:
    """Each combination's measures (and ledger frame with ``keep``), in order, and its scenario: the work of
    :func:`sweep` in this process (a Dask task runs it on its share of the combinations)."""
    keys = {k for c in combos for k in c}
    # (capacity pools are settled apart, each its own expansion: engine.run_local)
    shared = not (_EXPANDS & keys) and not any(isinstance(e, Backfill) for e in scenario.events) \
        and not any(isinstance(c.get("capacity", scenario.capacity), Mapping) for c in combos)
    # Each combination is checked before any runs. Sharing the expansion, a combination's schedules are the
    # prepared ones with its policy fields (not rebuilt, which would validate 1,000 schedules each time).
    reps = _classes(revisions(scenario))[1] if shared else None
    made: dict = {}  # (each distinct policy with a combination's fields: checked here, applied by _one)
    variants = [variant(scenario, c, name=n, apply_policy=not shared, _reps=reps, _made=made)
                for c, n in zip(combos, names)]
    work = _Work(variants, shared, keep, late_after, [{k: v for k, v in c.items() if k in _POLICY_FIELDS}
                                                      for c in combos], made=made)
    return _run(work, jobs, progress), variants


def variant(scenario: Scenario, combination: Mapping[str, object], *, name: str | None = None,
            apply_policy: bool = True, _reps: list[Policy] | None = None, _made: dict | None = None) -> Scenario:
    """``scenario`` with one combination's fields set (what :func:`sweep` simulates for that row).

    ``apply_policy=False`` leaves the schedules as they are (the policy fields are checked, not applied: a sweep
    sharing its expansion sets them on the prepared schedules; ``_reps``, the scenario's distinct policies when
    the caller knows them, are what is checked; ``_made`` keeps the checked policies for :func:`_policies`).

    >>> import calsim
    >>> job = calsim.Schedule("h", "UTC", "2026-01-01T00:00", "0 * * * *")
    >>> sc = calsim.Scenario("x", [job], "2026-01-01T00:00Z", "2026-01-02T00:00Z")
    >>> variant(sc, {"catchup": "skip", "capacity": 2}).schedules[0].policy.catchup
    'skip'
    """
    policy: dict[str, Any] = {k: v for k, v in combination.items() if k in _POLICY_FIELDS}
    fields: dict[str, Any] = {k: v for k, v in combination.items() if k in GRID_SCENARIO_FIELDS}  # (checked there)
    schedules, events = list(scenario.schedules), list(scenario.events)
    try:
        if not apply_policy:
            _checked(policy, _reps if _reps is not None else _classes(revisions(scenario))[1], _made)
            policy = {}
        if "preset" in combination:
            preset = _preset(combination["preset"])
            schedules = list(preset.apply(schedules))
            events = [dataclasses.replace(e, schedule=preset.apply(e.schedule))
                      if isinstance(e, Revise) and e.schedule is not None else e for e in events]
        if policy:
            schedules = with_policy(schedules, **policy)
            events = [dataclasses.replace(e, schedule=with_policy([e.schedule], **policy)[0])
                      if isinstance(e, Revise) and e.schedule is not None else e for e in events]
        if "budget_limit" in combination:
            if not scenario.budgets:
                raise InputError("sweep.grid: budget_limit: the scenario has no budgets to set a limit on")
            fields["budgets"] = [_replaced(b, {"limit": combination["budget_limit"]}, _made) for b in scenario.budgets]
        return dataclasses.replace(scenario, name=name or scenario.name, schedules=tuple(schedules),
                                   events=tuple(events), **fields)
    except CalsimError as exc:
        raise type(exc)(f"sweep.grid {label(combination)}: {exc}") from None


def label(combination: Mapping[str, object]) -> str:
    """A combination as ``key=value`` pairs, as rows and charts name it.

    >>> label({"catchup": "latest", "max_lateness": "1h"})
    'catchup=latest, max_lateness=1h'
    """
    return ", ".join(f"{k}={_text(v)}" for k, v in combination.items())


# -- internals ------------------------------------------------------------------------------------


def _grid(grid: object, scenario: Scenario) -> tuple[list[str], list[list[object]]]:
    if not isinstance(grid, Mapping) or not grid:
        raise InputError(f"sweep.grid: expected a mapping of field -> list of values, got {shown(grid)}")
    allowed = (*_POLICY_FIELDS, "budget_limit", *GRID_SCENARIO_FIELDS, "preset")
    keys, values = [], []
    for key, vals in grid.items():
        check_choice("sweep.grid", key, allowed, noun="field", error=InputError)
        if isinstance(vals, (str, bytes)) or not isinstance(vals, Sequence) or not len(vals):
            raise InputError(f"sweep.grid: {key}: expected a non-empty list of values, got {shown(vals)}")
        keys.append(str(key))
        values.append(list(vals))
    n = math.prod(len(v) for v in values)
    if n > MAX_COMBINATIONS:
        raise InputError(f"sweep.grid: {n:,} combinations (allowed up to {MAX_COMBINATIONS:,}; "
                         f"{' x '.join(str(len(v)) for v in values)})")
    return keys, values


def _jobs(jobs: int | None, n: int) -> int | None:
    """``jobs`` checked (None stays None: :func:`_run` chooses once it knows a combination's size)."""
    if jobs is None:
        return None
    if isinstance(jobs, bool) or not isinstance(jobs, int) or jobs < 1:
        raise InputError(f"sweep.jobs: {shown(jobs)} (allowed an integer >= 1, or None)")
    return max(1, min(jobs, n))


#: With ``jobs=None``, combinations of fewer rows than this settle in turn: their steps are many small numpy
#: calls holding the GIL, so threads only contend (a 1,000-schedule fleet-month, 96k rows: 0.43 s in turn, 0.49 s
#: on two threads), while larger ones gain (4,000 schedules, 383k rows: 2.16 s in turn, 1.85 s on two).
THREADS_FROM_ROWS = 200_000


@dataclasses.dataclass
class _Work:
    variants: list[Scenario]
    shared: bool
    keep: bool
    late_after: object
    policies: list[dict[str, Any]]
    prepared: Any = None
    classes: Any = None
    memo: dict = dataclasses.field(default_factory=dict)  # (measures' rows, shared by the combinations)
    made: dict = dataclasses.field(default_factory=dict)  # (policies with fields set: _replaced)
    accounts: dict | None = None
    rows: int = 0  # (of the first combination)


# The work of the settling threads (one sweep at a time per process: set by _run, read by _one).
_WORK: _Work | None = None


def _one(i: int) -> tuple[dict[str, Any], pl.DataFrame | None]:
    from .engine import ledger_of, prepare, run_local, settle_run
    from .measures import measures_of_run
    from .scenario_records import accounts

    work = _WORK
    assert work is not None
    sc = work.variants[i]
    if work.shared:
        if work.prepared is None:
            work.prepared = prepare(work.variants[0])
            work.classes = _classes(work.prepared.scheds)
        run, manual = settle_run(sc, work.prepared, policies=_policies(work.classes, work.policies[i], work.made))
        work.rows = run.n
        if not work.keep and not manual:  # (measured from the columns: no ledger frame to build)
            if work.accounts is None or "account" in work.policies[i]:
                work.accounts = accounts(run.scheds, run.pol)  # (the same for every combination without it)
            got = measures_of_run(run, sc, work.accounts, late_after=work.late_after, memo=work.memo)
            if got is not None:
                return got, None
        ledger = ledger_of(sc, run, manual)
    else:
        ledger = run_local(sc, progress=False)
        work.rows = len(ledger)
    return measures(ledger, sc, late_after=work.late_after, memo=work.memo), (ledger.frame if work.keep else None)


def _classes(scheds: list) -> tuple[list[int], list[Policy]]:
    """The schedules' policies as classes of equal ones: each schedule's class, and one policy per class (a
    schedule without a policy has the default one). Found once per sweep: a fleet shares a few policies."""
    default = Policy()
    by_key: dict[object, int] = {}
    by_id: dict[int, int] = {}
    reps: list[Policy] = []
    of = []
    for s in scheds:
        base = s.policy if isinstance(s.policy, Policy) else default
        c = by_id.get(id(base))
        if c is None:
            c = by_id[id(base)] = by_key.setdefault(_key(base), len(reps))
            if c == len(reps):
                reps.append(base)
        of.append(c)
    return of, reps


def _policies(classes: tuple[list[int], list[Policy]], fields: dict[str, Any], made: dict | None = None) -> list:
    """Each schedule's policy with ``fields`` set, as :func:`calsim.with_policy` sets them, without building and
    validating each schedule again: each class of equal policies (:func:`_classes`) is replaced once, and its
    schedules share the replacement."""
    of, reps = classes
    new = [_replaced(p, fields, made) for p in reps] if fields else reps
    return [new[c] for c in of]


def _checked(policy: dict[str, Any], reps: list[Policy], made: dict | None = None) -> None:
    """The policy fields of a combination on each distinct policy of the scenario (its errors, not applied)."""
    if policy:
        for p in reps:
            _replaced(p, policy, made)


def _replaced(p: _P, fields: dict[str, Any], made: dict | None) -> _P:
    """``p`` (a policy or a budget) with ``fields`` set (validated again by its ``__post_init__``), made once per
    sweep in ``made``: a grid's combinations share their fields (the benchmark's 24 share 12 policies and 2
    budget limits), and checking them before the run makes each one already. Fields are keyed with their types
    (``1`` and ``1.0`` stay apart); an object or value that cannot be hashed is replaced every time."""
    try:
        key = (p, tuple((k, type(v), v) for k, v in fields.items()))
        hit = made.get(key) if made is not None else None
    except TypeError:
        return dataclasses.replace(p, **fields)
    if hit is None:
        hit = dataclasses.replace(p, **fields)
        if made is not None:
            made[key] = hit
    return hit


def _key(policy: Policy | None) -> object:
    """A policy as a dict key: equal policies (a fleet's schedules usually share a few) are one key."""
    try:
        hash(policy)
    except TypeError:  # (a field holding an unhashable value: the object itself)
        return id(policy)
    return policy


def _run(work: _Work, jobs: int | None, progress: bool | None) -> list[tuple[dict[str, Any], pl.DataFrame | None]]:
    from .engine import _progress

    global _WORK
    n = len(work.variants)
    _WORK = work
    bar = _progress(progress, total=n, desc=f"sweep {work.variants[0].name.rsplit('-', 1)[0]}")
    try:
        out = [_one(0)]  # first, alone: the shared expansion, and the compiled kernels loaded
        bar.update(1)
        rest = list(range(1, n))
        if jobs is None:
            jobs = min(4, os.cpu_count() or 1) if work.rows >= THREADS_FROM_ROWS else 1
        if jobs > 1 and len(rest) > 1:
            # Threads, not processes: polars' thread pool is not fork-safe, and a spawned process would
            # expand and load the compiled kernels again. polars and most numpy steps release the GIL.
            with ThreadPoolExecutor(min(jobs, len(rest))) as pool:
                for result in pool.map(_one, rest):
                    out.append(result)
                    bar.update(1)
        else:
            for i in rest:
                out.append(_one(i))
                bar.update(1)
        return out
    finally:
        bar.close()
        _WORK = None


def _write(store: object, frames: list, variants: list[Scenario]) -> None:
    from ..store import LedgerStore

    own = not isinstance(store, LedgerStore)
    db: Any = LedgerStore(cast(Any, store)) if own else store
    try:
        for frame, sc in zip(frames, variants):
            db.write(Ledger(sc.name, frame, {}, sc), replace=True)
    finally:
        if own:
            db.close()


def _preset(value: object) -> Any:
    from ..presets import Preset

    if not isinstance(value, Preset):
        raise InputError(f"sweep.grid: preset: expected calsim.presets.<scheduler>(...) objects, got {shown(value)}")
    return value


def _text(value: object) -> str:
    """A grid value as a cell: a preset by name and settings, a duration as given, None as "none"."""
    from ..presets import Preset

    if isinstance(value, Preset):
        given = ", ".join(f"{k}={v}" for k, v in value.settings)
        return f"{value.name}({given})"
    if value is None:
        return "none"
    return str(value)
