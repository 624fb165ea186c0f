"""The ordered event loop: rows whose outcome depends on what ran before them, one event at a time.

Overlap (a run of the same schedule still going), budgets (what an account
started in a period), capacity (how many runs are going) and backlogs run in
turn need order. Events are processed by time; at one instant a finish comes
before a budget period's opening, which comes before the picks (by schedule,
then due instant). Every rule is :mod:`.rules`' (scheduler up, pauses,
budget period and charge, catch-up and expiry of held runs).

This module lays the rows and the scenario out as arrays (each budget
period's opening from the scenario's release, computed here once) and writes
the outcomes back; the loop itself is :func:`.event_kernel.settle`, compiled.
The capacity queue (:class:`CapacityQueue`, the kernel's own functions) picks
in O(log n), so the cost per row does not grow with the fleet.
"""

from __future__ import annotations

import numpy as np

from ..times import US
from .rules import AGEING_US, FITS_TOLERANCE, PERIOD_KINDS, charge, period_index, period_start
from .state import RunState

__all__ = ["event_loop", "AGEING_US", "CapacityQueue"]


def _kernel():
    """:mod:`.event_kernel`, imported when a loop first runs (numba costs ~0.5 s to import; the compiled
    loop itself is loaded from numba's cache, compiled the first time after an install)."""
    from . import event_kernel

    return event_kernel



class CapacityQueue:
    """Runs waiting for capacity (the event loop's queue, :mod:`.event_kernel`); :meth:`pop` at ``t`` takes
    the one with the highest aged priority ``priority + (t - queued_at) // AGEING_US``, then the earliest
    ``eligible``, then the first queued.

    >>> q = CapacityQueue()
    >>> q.push(0, 5, 0, "old"); q.push(0, 1, 30 * 60 * 10**6, "newer, eligible first")
    >>> q.pop(45 * 60 * 10**6), q.pop(45 * 60 * 10**6)  # same level at 45 min: eligible decides
    ('newer, eligible first', 'old')
    """

    def __init__(self) -> None:
        self._q = _kernel().queue_new()
        self._items: list = []

    def __len__(self) -> int:
        return int(self._q[3][2])

    def items(self) -> list:
        """The queued items, in queue order."""
        entries = self._q[0]
        return [self._items[entries[3][k]] for k in range(len(entries[5])) if entries[5][k]]

    def push(self, priority: int, eligible: int, queued_at: int, item) -> None:
        self._items.append(item)
        _kernel().queue_push(*self._q, priority, eligible, queued_at, len(self._items) - 1)

    def pop(self, t: int):
        """The item to start at ``t`` (the queue must not be empty)."""
        return self._items[_kernel().queue_pop(*self._q, t)]


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
    """The scenario's budgets as the kernels read them (:class:`.event_kernel.Budgets`' fields).

    Accounts of one zone and period kind share a group: its transitions and
    offsets (µs, :func:`.rules.local_day`) and its period openings from the
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


def event_loop(run: RunState, rows: np.ndarray) -> None:
    """Settle ``rows`` one event at a time (each run's occupancy is ``finish - pick`` until it starts, and
    its success is ``run.success``: :func:`.columns.attempts` and :func:`.columns.needs_order`)."""
    sc = run.sc
    run.settled["event_loop"] += len(rows)
    # Picks in event order: (pick, schedule, due); a run is known by its place ``i`` in it.
    order = rows[np.lexsort((run.due[rows], run.s[rows], run.pick[rows]))]
    m = len(order)
    i64 = np.int64
    s = run.s[order].astype(i64)
    pick = run.pick[order].astype(i64)
    due = run.due[order].astype(i64)

    # A backlog run in turn is one pick: its first run's event; the others follow in turn.
    follower = np.zeros(m, dtype=bool)
    rest_ptr = np.zeros(m + 1, dtype=i64)
    rest_idx = np.zeros(0, dtype=i64)  # (none: the kernel keeps no turns)
    if run.in_turn is not None:
        it = np.flatnonzero(run.in_turn[order])
        if len(it):
            new = np.ones(len(it), dtype=bool)
            new[1:] = (s[it][1:] != s[it][:-1]) | (pick[it][1:] != pick[it][:-1])
            follower[it[~new]] = True
            first = it[new][np.cumsum(new) - 1]  # each member's first run
            rest_idx = it[~new].astype(i64)
            np.add.at(rest_ptr, first[~new] + 1, 1)
            np.cumsum(rest_ptr, out=rest_ptr)

    pause_ptr, pause_lo, pause_hi = pause_spans(run)
    out_lo, out_hi = outage_spans(run)

    budgets = budget_groups(run, int(pick.min()) if m else sc.end_us)

    k = _kernel()
    out = k.Outcomes(run.state[order].copy(), run.reason[order].copy(), run.start[order].astype(i64),
                     run.finish[order].astype(i64), run.started[order].copy(), run.budget_wait[order].astype(np.float64))
    k.settle(
        k.Rows(pick, s, due, run.eligible[order].astype(i64), charge(run.p_cost[s], run.attempts_n[order]).astype(np.float64),
               (run.finish[order] - run.pick[order]).astype(i64), run.success[order].copy(), follower, rest_ptr, rest_idx),
        k.Schedules(run.p_overlap.astype(i64), run.p_max_active.astype(i64), run.p_account.astype(i64),
                    run.p_priority.astype(i64), run.p_onbudget_wait.astype(bool), run.p_maxlate.astype(i64),
                    run.p_edge.astype(i64), run.p_catchup.astype(i64), run.p_limit.astype(i64),
                    pause_ptr, pause_lo, pause_hi),
        k.Scheduler(out_lo, out_hi, -1 if sc.capacity is None else int(sc.capacity), int(sc.end_us)),
        k.Budgets(*budgets),
        out)
    state, reason, start, finish, started, waited = out
    run.state[order] = state
    run.reason[order] = reason
    run.start[order] = start
    run.finish[order] = finish
    run.started[order] = started
    run.budget_wait[order] = waited
