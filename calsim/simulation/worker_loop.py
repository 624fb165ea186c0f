"""Worker-level settling: every row that runs, one attempt at a time (:mod:`.worker_kernel`).

A scenario with workers, crashes, rate limits, breakers, more than one
scheduler instance or error classes (:attr:`~calsim.Scenario.worker_level`)
is settled here instead of by the column paths and the event loop: which
occurrences run, and when they are picked, is decided by the same column steps
(:mod:`.columns`: eligibility, pickup, pauses, catch-up); what happens to
each run after its pickup (a breaker, a token, a worker, its attempts, a
crash) is decided here. The rules and their sources are in
``docs/research/worker_faults.md`` and :mod:`.faults`.

A row's outcome is its jobs': with ``dedupe="none"`` each scheduler instance
executes the occurrence (a job each); the row is ``done`` if any execution
succeeded, else it takes the first instance's outcome; ``attempts`` (and so
the cost) counts every execution's attempts, ``effects`` every effect that was
not absorbed (at most 1 for an idempotent policy), ``started_utc`` is the first
start and ``finished_utc`` the last end.

>>> import calsim
>>> s = calsim.Schedule("h", "UTC", "2026-01-01T00:00", "FREQ=HOURLY", policy=calsim.Policy(duration="1min"))
>>> sc = calsim.Scenario("x", [s], "2026-01-01T00:00Z", "2026-01-01T03:00Z", schedulers=2, dedupe="none")
>>> calsim.simulate(sc).frame.select("attempts", "effects").rows()
[(2, 2), (2, 2), (2, 2)]
"""

from __future__ import annotations

import numpy as np
import polars as pl

from ..times import US
from .faults import WorkerCrash
from .loop_inputs import budget_groups, outage_spans, outcomes, policy_arrays, turns
from .randomness import CRASH, id_key, uniform
from .run_rules import BIG, deadline
from .state import NONE, S, RunState

__all__ = ["worker_loop", "crash_plan"]

_JITTER_MODES = {"none": 0, "full": 1, "equal": 2}
#: An attempt's outcome in the attempt log (the kernel's codes 0..4).
OUTCOMES = ["succeeded", "failed", "lost", "timed_out", "cancelled"]


def breaker_scopes(breakers, scheds, pol) -> list[list[int]]:
    """Each schedule's breakers (indices, in the scenario's order), found by a dict per scope kind: one
    look-up per schedule and kind, not one :meth:`.Breaker.covers` per schedule and breaker (4,000
    schedules × 80 tenants' breakers was a sixth of a worker-level simulate)."""
    by_kind: dict[str, dict[str, list[int]]] = {"account": {}, "source": {}, "schedule": {}}
    for b, br in enumerate(breakers):
        by_kind[br.kind].setdefault(br.target, []).append(b)
    out = []
    for sch, p in zip(scheds, pol):
        hit = (by_kind["account"].get(p.account, []) if p.account else []) \
            + (by_kind["source"].get(p.rate_limit, []) if p.rate_limit else []) + by_kind["schedule"].get(sch.id, [])
        out.append(sorted(hit))
    return out


def worker_loop(run: RunState) -> None:
    """Settle every row of ``run`` that runs (after :func:`.columns.catch_up`), one attempt at a time."""
    import calsim.simulation.worker_kernel as k

    sc = run.sc
    rows = np.flatnonzero(run.has_due & (run.state < 0))
    run.run = np.zeros(run.n, dtype=bool)
    run.run[rows] = True
    run.settled["worker_loop"] = len(rows)
    n_inst = sc.schedulers if sc.dedupe == "none" else 1
    i64 = np.int64
    # Jobs: each row once per executing instance, in the order they become ready.
    pick = run.pick[rows].astype(i64)
    job_row = np.repeat(np.arange(len(rows), dtype=i64), n_inst)
    job_inst = np.tile(np.arange(n_inst, dtype=i64), len(rows))
    job_ready = np.repeat(pick, n_inst) + job_inst * sc.skew_us
    # At one instant by schedule, each schedule's backlog in due order (DESIGN §5): a wake-up submits a
    # schedule's missed runs together (APScheduler's _process_jobs, per job); the scheduler-level path's order.
    order = np.lexsort((job_inst, run.due[rows][job_row], run.s[rows][job_row], job_ready))
    job_row, job_inst, job_ready = job_row[order], job_inst[order], job_ready[order]
    turn_next, follower = turns(run, rows, job_row, job_inst)

    s = run.s[rows].astype(i64)
    pol = run.pol
    limits = {r.name: i for i, r in enumerate(sc.rate_limits)}
    p_rl = np.array([limits.get(p.rate_limit, -1) if p.rate_limit else -1 for p in pol], dtype=i64)
    scopes = breaker_scopes(sc.breakers, run.scheds, pol)
    br_ptr = np.zeros(len(pol) + 1, dtype=i64)
    br_ptr[1:] = np.cumsum([len(x) for x in scopes])
    br_idx = np.array([b for x in scopes for b in x], dtype=i64)
    w = sc.workers
    cr_t, cr_w, cr_down = crash_plan(sc)
    f = sc.failures
    n = len(rows)
    if w is not None:
        pool = k.Pool(w.count, w.lease_us, -1 if w.heartbeat_us is None else w.heartbeat_us, w.renew,
                      cr_t, cr_w, cr_down, False)
    else:  # capacity: one implicit pool of that many of the scheduler's slots (never crashing, no lease, idle
        # while the scheduler is down, as the scheduler-level path's); else any number
        pool = k.Pool(-1 if sc.slots is None else int(sc.slots), BIG, -1, False, cr_t, cr_w, cr_down,
                      sc.capacity is not None)
    out = outcomes(len(job_row), n)
    g = budget_groups(run, int(pick.min()) if n else sc.end_us)
    log = k.settle(
        k.Jobs(job_row, job_inst, job_ready, turn_next, follower),
        # The last instant a first attempt may start within max_lateness (rules.deadline: never at lateness 0).
        k.RowsW(s, deadline(run.eligible[rows].astype(i64), run.p_maxlate[s].astype(i64), run.p_edge[s].astype(i64)),
                run.eligible[rows].astype(i64), run.due[rows].astype(i64), run.key[s].view(np.int64),
                run.nominal[rows].astype(i64), run.fold[rows].astype(i64), run.p_cost[s].astype(np.float64),
                np.full(n, -1, dtype=i64), np.ones(n, dtype=bool)),  # (each attempt's duration and failure drawn)
        policy_arrays(run, p_rl, br_ptr, br_idx, np.array([float(p.effect_at) for p in pol]),
                      np.array([p.ack_delay_us for p in pol], dtype=i64)),
        k.Limits(np.array([b.after for b in sc.breakers], dtype=i64),
                 np.array([b.open_for_us for b in sc.breakers], dtype=i64),
                 np.array([r.per[0] for r in sc.rate_limits], dtype=i64),
                 np.array([r.per[1] for r in sc.rate_limits], dtype=i64),
                 np.array([r.burst for r in sc.rate_limits], dtype=i64)),
        pool,
        k.Draws(_seed64(sc.seed), int(sc.start_us), 0.0 if f is None else float(f.probability),
                1 if f is None else f.max_attempts, 0 if f is None else f.backoff_us,
                BIG if f is None or f.max_backoff_us is None else f.max_backoff_us,
                0 if f is None else _JITTER_MODES[f.jitter], 1.0 if f is None else f.shares[0],
                0.0 if f is None else f.shares[1], int(sc.end_us), *outage_spans(run), True),
        k.Budgets(*g), out)
    j_state, j_reason, start, finish, started, attempts, effects, worker, rate_wait, budget_wait = out
    assert (j_state >= 0).all(), "a job was left pending"
    # A row is done if any of its executions succeeded, else it takes its first instance's outcome.
    first_job = np.full(n, -1, dtype=i64)
    done = np.zeros(n, dtype=bool)
    np.logical_or.at(done, job_row, j_state == S["done"])
    inst0 = np.flatnonzero(job_inst == 0)
    first_job[job_row[inst0]] = inst0
    state = np.where(done, S["done"], j_state[first_job]).astype(np.int8)
    reason = np.where(done, NONE, j_reason[first_job]).astype(np.int8)
    run.state[rows] = state
    run.reason[rows] = reason
    if run.start is run.pick:  # (one array until now: the rows' picks are not read again)
        run.start = run.pick.copy()
    run.start[rows] = np.where(started, start, run.pick[rows])
    run.finish[rows] = np.where(started, finish, 0)
    run.started[rows] = started
    run.attempts_n[rows] = attempts
    idem = np.array([p.idempotent for p in pol], dtype=bool)[s]
    run.effects = np.zeros(run.n, dtype=np.int32)
    run.effects[rows] = np.where(idem, np.minimum(effects, 1), effects)
    run.worker = np.full(run.n, -1, dtype=np.int32)
    run.worker[rows] = worker
    run.rate_wait = np.zeros(run.n, dtype=np.float64)
    run.rate_wait[rows] = rate_wait / US
    run.budget_wait[rows] += budget_wait / US
    run.success = run.state == S["done"]
    # Built when first read (Ledger.attempt_log): a frame of strings per attempt costs more than the loop.
    r, inst, frame = rows[job_row[log[0]]], job_inst[log[0]], run.frame
    run.attempt_log = lambda: attempt_log(frame, r, inst, log)


def attempt_log(frame: pl.DataFrame, r: np.ndarray, inst: np.ndarray, log: np.ndarray) -> pl.DataFrame:
    """The ledger's ``attempt_log``: one row per attempt, in start order (see :class:`~calsim.Ledger`)."""
    _, t0, t1, over, w, outcome = log
    ts = lambda a: pl.Series(a, dtype=pl.Int64).cast(pl.Datetime("us", "UTC"))  # noqa: E731
    f = pl.DataFrame({
        "schedule_id": frame["schedule_id"].gather(r).cast(pl.String),
        "nominal_local": frame["nominal_local"].gather(r),
        "fold": frame["fold"].gather(r),
        "instance": inst.astype(np.int32),
        "worker": (pl.Series(w.astype(np.int32)).set(pl.Series(w < 0), None) if len(w)
                   else pl.Series([], dtype=pl.Int32)),
        "started_utc": ts(t0),
        "ended_utc": ts(np.where(outcome >= 2, over, t1)),
        "released_utc": ts(over),
        "outcome": pl.Series(np.array(OUTCOMES)[outcome] if len(outcome) else [], dtype=pl.Enum(OUTCOMES)),
        "_key": r * 128 + inst,
    })
    return f.with_columns(attempt=pl.int_range(1, pl.len() + 1, dtype=pl.Int32).over("_key")).drop("_key") \
        .select("schedule_id", "nominal_local", "fold", "instance", "attempt",
                pl.exclude("schedule_id", "nominal_local", "fold", "instance", "attempt"))


def _seed64(seed: int) -> int:
    """The seed as the signed int64 with the bits :func:`.randomness.uniform` mixes in."""
    u = seed & 0xFFFFFFFFFFFFFFFF
    return u - (1 << 64) if u >= 1 << 63 else u


def crash_plan(sc) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Every worker crash of ``sc``, sorted by instant: (instants, workers, down_for), all int64.

    :class:`WorkerCrash` events, plus ``Workers(crash_rate=...)``'s: a Poisson
    process per worker over the horizon, its gaps ``-ln(1 - u) * mean`` drawn from
    the seed and the worker's number (so adding a worker moves no other's crashes).

    >>> import calsim
    >>> s = calsim.Schedule("h", "UTC", "2026-01-01T00:00", "FREQ=HOURLY")
    >>> sc = calsim.Scenario("x", [s], "2026-01-01T00:00Z", "2026-01-08T00:00Z",
    ...                      workers=calsim.Workers(3, crash_rate="1/day"))
    >>> t, w, d = crash_plan(sc)
    >>> bool((np.diff(t) >= 0).all()), sorted(set(w.tolist())) == [0, 1, 2], int(d[0]) // 60_000_000
    (True, True, 5)
    """
    t, w, d = [], [], []
    workers = sc.workers
    for ev in sc.events:
        if isinstance(ev, WorkerCrash):
            for k in ev.ids(workers.count):
                t.append(ev.at_us)
                w.append(k)
                d.append(ev.down_for_us)
    if workers is not None and workers.crash_per is not None:
        count, period = workers.crash_per
        mean = period / count
        span = sc.end_us - sc.start_us
        expected = span / mean
        n = int(expected + 10 * np.sqrt(expected) + 10)
        if n * workers.count > 10_000_000:
            from ..errors import InputError

            raise InputError(f"workers.crash_rate: {workers.crash_rate!r} gives about {int(expected * workers.count):,}"
                             " crashes over the horizon (allowed at most 10,000,000)")
        for k in range(workers.count):
            u = uniform(np.full(n, id_key(f"worker:{k}"), dtype=np.uint64), np.arange(n, dtype=np.int64),
                        np.zeros(n, dtype=np.int64), sc.seed, CRASH)
            at = sc.start_us + np.cumsum(-np.log1p(-u) * mean).astype(np.int64)
            at = at[at < sc.end_us]
            t.extend(at.tolist())
            w.extend([k] * len(at))
            d.extend([workers.down_for_us] * len(at))
    order = np.lexsort((np.array(w, dtype=np.int64), np.array(t, dtype=np.int64)))
    return (np.array(t, dtype=np.int64)[order], np.array(w, dtype=np.int64)[order],
            np.array(d, dtype=np.int64)[order])
