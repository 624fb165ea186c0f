"""The ordered loop's inputs laid out from a run's state (:mod:`.worker_kernel` reads them).

Both entries of the one ordered loop, :mod:`.event_loop` (scheduler-level
rows) and :mod:`.worker_loop` (worker-level scenarios), build the same
structures from :class:`~.state.RunState`: each schedule's paused spans and
policy, the scheduler's outages, the budget groups (each period's opening
computed here once from the scenario's release) and the chains of backlogs
run in turn.
"""

from __future__ import annotations

import numpy as np

from ..times import US
from .run_rules import FITS_TOLERANCE, PERIOD_KINDS, period_index, period_start
from .state import NONE, RunState

__all__ = ["pause_spans", "outage_spans", "budget_groups", "policy_arrays", "turns", "outcomes"]


def _csr(parts: list) -> tuple[np.ndarray, np.ndarray]:
    ptr = np.zeros(len(parts) + 1, dtype=np.int64)
    ptr[1:] = np.cumsum([len(x) for x in parts])
    return ptr, (np.concatenate(parts).astype(np.int64) if parts else np.zeros(0, dtype=np.int64))


def pause_spans(run: RunState) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Each schedule's paused spans ``[lo, hi)`` as the kernels read them: (ptr, lo, hi), CSR by schedule."""
    spans = [np.array(run.pauses.get(k) or [], dtype=np.int64).reshape(-1, 2) for k in range(len(run.scheds))]
    ptr, lo = _csr([x[:, 0] for x in spans])
    return ptr, lo, _csr([x[:, 1] for x in spans])[1]


def outage_spans(run: RunState) -> tuple[np.ndarray, np.ndarray]:
    """The scheduler's outages as the kernels read them: sorted starts and ends (µs)."""
    return (np.array([a for a, _ in run.outages], dtype=np.int64),
            np.array([b for _, b in run.outages], dtype=np.int64))


def budget_groups(run: RunState, first_t: int) -> tuple:
    """The scenario's budgets as the kernels read them (:class:`.worker_steps.Budgets`' fields).

    Accounts of one zone and period kind share a group: its transitions and
    offsets (µs, :func:`.run_rules.local_day`) and its period openings from the
    period of ``first_t`` (the first pick) to one past the horizon's end,
    computed here once from the scenario's release.
    """
    sc, i64 = run.sc, np.int64
    groups: dict[tuple[str, str], tuple] = {}  # (zone, period) -> (its index, table, period)
    for a, b in enumerate(sc.budgets):
        groups.setdefault((b.zone, b.period), (len(groups), run.budget_tables[a], b.period))
    a_group = np.array([groups[(b.zone, b.period)][0] for b in sc.budgets], dtype=i64)
    g_kind, utc, offs, p0, opens = [], [], [], [], []
    for _, table, period in groups.values():
        g_kind.append(PERIOD_KINDS[period])
        utc.append(np.asarray(table.utc, dtype=i64) * US)
        offs.append(np.asarray(table.offsets, dtype=i64) * US)
        lo = int(period_index(table, period, np.array([first_t], dtype=i64))[0])
        hi = int(period_index(table, period, np.array([sc.end_us], dtype=i64))[0]) + 1
        p0.append(lo)
        # Openings past period(end) + 1 are after the horizon's end, where an opening does nothing.
        opens.append(period_start(table, period, np.arange(lo, max(lo, hi) + 1, dtype=i64)).astype(i64))
    return (np.array([b.limit + FITS_TOLERANCE for b in sc.budgets], dtype=np.float64), a_group,
            np.array(g_kind, dtype=i64), *_csr(utc), *_csr(offs), np.array(p0, dtype=i64), *_csr(opens))


def policy_arrays(run: RunState, rate_limit: np.ndarray, br_ptr: np.ndarray, br_idx: np.ndarray,
                  effect: np.ndarray, ack: np.ndarray):
    """The schedules' policies as the kernel reads them (:class:`.worker_steps.PolicyW`), with the given rate
    limits, breakers (CSR), effect points and ack delays; the queue's priority levels are the distinct
    priorities."""
    from .worker_steps import PolicyW  # (numba: imported when a loop first runs)

    i64 = np.int64
    levels, level = np.unique(run.p_priority, return_inverse=True)
    return PolicyW(run.p_dur.astype(i64), run.p_sigma.astype(np.float64), run.p_overlap.astype(i64),
                   run.p_max_active.astype(i64), rate_limit, effect, ack, level.astype(i64), levels.astype(i64),
                   br_ptr, br_idx, run.p_account.astype(i64), run.p_onbudget_wait.astype(bool),
                   run.p_maxlate.astype(i64), run.p_edge.astype(i64), run.p_catchup.astype(i64),
                   run.p_limit.astype(i64), *pause_spans(run))


def turns(run: RunState, rows: np.ndarray, job_row: np.ndarray, job_inst: np.ndarray) -> tuple[np.ndarray, ...]:
    """Backlogs run in turn (:func:`.columns.catch_up` marks their rows): per instance, each member's job
    points to the next member's (``turn_next``), and every member but the first is a ``follower``."""
    m = len(job_row)
    turn_next = np.full(m, -1, dtype=np.int64)
    follower = np.zeros(m, dtype=bool)
    if run.in_turn is None or not run.in_turn[rows].any():
        return turn_next, follower
    it = np.flatnonzero(run.in_turn[rows][job_row])  # jobs of rows in a backlog run in turn
    s, pick, due = run.s[rows][job_row[it]], run.pick[rows][job_row[it]], run.due[rows][job_row[it]]
    o = np.lexsort((due, pick, s, job_inst[it]))  # per instance, schedule and wake-up, in due order
    it = it[o]
    same = np.zeros(len(it), dtype=bool)  # the same backlog as the job before it
    same[1:] = ((job_inst[it][1:] == job_inst[it][:-1]) & (s[o][1:] == s[o][:-1]) & (pick[o][1:] == pick[o][:-1]))
    turn_next[it[:-1][same[1:]]] = it[1:][same[1:]]
    follower[it[same]] = True
    return turn_next, follower


def outcomes(n_jobs: int, n_rows: int):
    """Empty outcomes for the loop to fill (:class:`.worker_steps.OutcomesW`): per job its state and reason
    (-1, none), per row start, finish, started, attempts, effects, worker (-1), rate and budget waits."""
    from .worker_steps import OutcomesW  # (numba: imported when a loop first runs)

    i64, none = np.int64, -1
    return OutcomesW(np.full(n_jobs, none, dtype=i64), np.full(n_jobs, NONE, dtype=i64), np.zeros(n_rows, dtype=i64),
                     np.zeros(n_rows, dtype=i64), np.zeros(n_rows, dtype=bool), np.zeros(n_rows, dtype=i64),
                     np.zeros(n_rows, dtype=i64), np.full(n_rows, none, dtype=i64), np.zeros(n_rows, dtype=i64),
                     np.zeros(n_rows, dtype=i64))
