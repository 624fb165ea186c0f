"""The ordered path: rows whose outcome depends on what ran before them, settled one event at a time.

Overlap (a run of the same schedule still going), budgets (what an account
started in a period), capacity (how many runs are going) and backlogs run in
turn need order. The loop is the worker loop's kernel
(:func:`.worker_kernel.settle`), the one ordered loop of calsim: the
scenario's ``capacity`` is one implicit pool of that many slots (unbounded
without it) that belongs to the scheduler, so nothing starts while the
scheduler is down; each run is one attempt whose occupancy and success
:func:`.columns.attempts` gave (its retries and backoffs are inside it) and
which charges its budget for all its attempts when it starts
(:func:`.run_rules.charge`). No workers, leases, crashes, rate limits or
breakers: those make a scenario worker-level (:mod:`.worker_loop`).

Events at one instant: a run ending, then a budget period's opening, then
the picks (by schedule, then due instant), then a ``buffer_latest`` sync.
Every rule is :mod:`.run_rules`' (scheduler up, pauses, budget period and
charge, ``max_lateness``, catch-up and expiry of held runs).

What both entries of the loop lay out alike is :mod:`.loop_inputs`'.
"""

from __future__ import annotations

import numpy as np

from ..times import US
from .loop_inputs import budget_groups, outage_spans, outcomes, policy_arrays, turns
from .run_rules import BIG, charge, deadline
from .state import RunState

__all__ = ["event_loop"]


def event_loop(run: RunState, rows: np.ndarray) -> None:
    """Settle ``rows`` one event at a time (each run's occupancy is ``finish - pick`` until it starts, and
    its success is ``run.success``: :func:`.columns.attempts` and :func:`.order.needs_order`)."""
    import calsim.simulation.worker_kernel as k

    sc = run.sc
    run.settled["event_loop"] += len(rows)
    i64 = np.int64
    # Runs in pick order: (pick, schedule, due); a run is known by its place in it (one job per run).
    order = rows[np.lexsort((run.due[rows], run.s[rows], run.pick[rows]))]
    m = len(order)
    s = run.s[order].astype(i64)
    pick = run.pick[order].astype(i64)
    job = np.arange(m, dtype=i64)
    turn_next, follower = turns(run, order, job, np.zeros(m, dtype=i64))
    out = outcomes(m, m)
    none, n_s = np.zeros(0, dtype=i64), len(run.pol)
    elig = run.eligible[order].astype(i64)
    out_lo, out_hi = outage_spans(run)
    k.settle(
        k.Jobs(job, np.zeros(m, dtype=i64), pick, turn_next, follower),
        k.RowsW(s, deadline(elig, run.p_maxlate[s].astype(i64), run.p_edge[s].astype(i64)), elig,
                run.due[order].astype(i64), run.key[s].view(i64), run.nominal[order].astype(i64),
                run.fold[order].astype(i64), charge(run.p_cost[s], run.attempts_n[order]).astype(np.float64),
                (run.finish[order] - run.pick[order]).astype(i64), run.success[order].copy()),
        policy_arrays(run, np.full(n_s, -1, dtype=i64), np.zeros(n_s + 1, dtype=i64), none,
                      np.ones(n_s), np.zeros(n_s, dtype=i64)),
        k.Limits(none, none, none, none, none),  # no breakers, no rate limits
        # capacity: the scheduler's own slots (unbounded without it), no lease, no crash
        k.Pool(count=-1 if sc.slots is None else int(sc.slots), lease=BIG, heartbeat=-1, renew=False,
               cr_t=none, cr_w=none, cr_down=none, scheduler_slots=True),
        # no draws: one attempt (a failed run is retries_exhausted: its retries are in its occupancy)
        k.Draws(seed=0, origin=int(sc.start_us), p_fail=0.0, max_att=1, backoff=0, max_backoff=BIG, jitter_mode=0,
                share_t=1.0, share_r=0.0, end=int(sc.end_us), out_lo=out_lo, out_hi=out_hi,
                attempt_log=False),
        k.Budgets(*budget_groups(run, int(pick.min()) if m else sc.end_us)), out)
    started = out.started
    run.state[order] = out.j_state
    run.reason[order] = out.j_reason
    run.start[order] = np.where(started, out.start, run.start[order])
    run.finish[order] = np.where(started, out.finish, run.finish[order])
    run.started[order] = started
    run.budget_wait[order] += out.budget_wait / US
