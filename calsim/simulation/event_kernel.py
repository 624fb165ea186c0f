"""The ordered event loop's compiled body: rows whose outcome depends on what ran before them, one event at a time.

:func:`settle` is the one implementation of the ordered path (numba,
``cache=True``: compiled once per install, then loaded from the cache);
:mod:`.event_loop` prepares its inputs (a few named structures of arrays:
:class:`Rows`, :class:`Schedules`, :class:`Scheduler`, :class:`Budgets`,
:class:`Outcomes`) and writes the outcomes back. The handlers are inner
functions in the shape of the former Python loop; every run rule they apply
(scheduler up, the ``max_lateness`` boundary, the period of an instant, the
held runs at a period's opening and their catch-up) is :mod:`.rules`'
function, compiled in (:mod:`.compiled_rules`), never a copy:

* a run meets its schedule's overlap mode when ``max_active`` of its runs are
  going (one, unless the policy sets more);
* events at one instant: a finish, then a budget period's opening, then the
  picks (by schedule, then due instant), then a buffer_latest sync; ``seq``
  (the order they were made) breaks the remaining ties;
* a run meets its schedule's overlap mode when it arrives and again when it
  leaves the capacity queue (the run it queued behind may be over, or a
  sibling that left the queue first may be going);
* a budget period's opening adds every held run's wait, then
  :func:`.rules.held_at_opening` orders them, expires the ones too late and
  applies the catch-up mode to each schedule's backlog; the rest arrive;
* a decision is final except a cancel after a start (``cancel_other``).

Why compiled: the Python loop cost ~3 µs per row in CPython's per-operation
overhead, spread over every line; the same steps here cost ~0.1 µs.
"""

from __future__ import annotations

from collections import namedtuple
from heapq import heappop, heappush

import numpy as np
from numba import njit, types
from numba.typed import Dict, List

from . import compiled_rules
from .compiled_rules import beyond, held_at_opening, local_day, period_of_day, up_one
from .rules import AGEING_US, ARRIVES, COALESCED_HELD, EXPIRES, OVERLAP
from .state import NONE, R, S

__all__ = ["settle", "Rows", "Schedules", "Budgets", "Outcomes", "queue_new", "queue_push", "queue_pop", "AGEING_US"]

compiled_rules.drop_stale_caches(__file__)

#: The rows to settle, in pick order (a backlog run in turn: its first run is the pick, ``follower`` marks the
#: rest, listed after it in ``rest_idx[rest_ptr[i]:rest_ptr[i + 1]]``); ``chg`` what a start charges,
#: ``occ`` how long it occupies its slot once started, ``success`` whether its attempts succeed.
Rows = namedtuple("Rows", "pick sched due elig chg occ success follower rest_ptr rest_idx")
#: Per schedule: its policy's codes (``max_active`` 0: unbounded) and paused spans (CSR: ``pause_ptr``).
Schedules = namedtuple("Schedules", "overlap max_active account priority wait max_lateness edge catchup limit "
                                    "pause_ptr pause_lo pause_hi")
#: The scheduler and the run: outages (sorted starts and ends), capacity (-1: none), the horizon's end.
Scheduler = namedtuple("Scheduler", "out_lo out_hi capacity end")
#: Budgets: per account its ceiling (limit + :func:`.rules.fits`' tolerance) and group; per group (one zone and
#: period kind) its kind, its transitions and offsets in µs (CSR), and its period openings from period ``p0``.
Budgets = namedtuple("Budgets", "ceiling group kind utc_ptr utc off_ptr off p0 open_ptr opens")
#: What the loop decides, per row (written in place).
Outcomes = namedtuple("Outcomes", "state reason start finish started waited")


FINISH, OPEN, PICK, LATEST = 0, 1, 2, 3  # event kinds, in their order at one instant
HELD, STARTED = -1, -2  # arrive/try_start: waits (buffer, budget, capacity); started; else state * 256 + reason
ALLOW, SKIP, BUFFER_ONE, BUFFER_ALL, CANCEL_OTHER, BUFFER_LATEST = (OVERLAP[k] for k in (
    "allow", "skip", "buffer_one", "buffer_all", "cancel_other", "buffer_latest"))
DONE, FAILED, SKIPPED, EXPIRED, CANCELLED, COALESCED = (S[k] for k in (
    "done", "failed", "skipped", "expired", "cancelled", "coalesced"))
R_OVERLAP, R_PAUSED, R_BUDGET, R_LATE, R_SUPERSEDED, R_CATCHUP, R_RETRIES = (R[k] for k in (
    "overlap", "paused", "budget", "max_lateness", "superseded", "catchup", "retries_exhausted"))

_I64 = types.int64
_T2 = types.UniTuple(_I64, 2)
_T3 = types.UniTuple(_I64, 3)


# -- the capacity queue ---------------------------------------------------------------------------
#
# Runs waiting for capacity; a pop at ``t`` takes the one with the highest aged
# priority ``priority + (t - queued_at) // AGEING_US``, then the earliest
# ``eligible``, then the first queued. A run's aged priority only changes when
# ``t`` crosses ``queued_at + k * AGEING_US``: the queue keeps each run in a
# heap by its aged priority at its clock (the last pop's ``t``) and re-keys a
# run at those instants (a second heap of them), so a pop costs O(log n) plus
# one re-key per hour a run waited. A ``t`` before the clock (local time going
# back over a budget period can send the loop back) re-keys every run.
# State: (entries, heap, bumps, meta); entries are six lists by insertion
# number (priority, eligible, queued_at, item, aged, live); meta is
# [clock, clock set, runs queued].


@njit(cache=True)
def queue_new():
    """A queue of numba's typed lists (to hold from Python: :class:`.event_loop.CapacityQueue`)."""
    entries = (List.empty_list(_I64), List.empty_list(_I64), List.empty_list(_I64), List.empty_list(_I64),
               List.empty_list(_I64), List.empty_list(_I64))
    return entries, List.empty_list(_T3), List.empty_list(_T2), np.zeros(3, dtype=np.int64)


@njit(cache=True)
def _queue_native():
    """The same queue in native lists, for the loop (a typed list's item access is a call into C)."""
    entries = (_ints(), _ints(), _ints(), _ints(), _ints(), _ints())
    heap = [(np.int64(0), np.int64(0), np.int64(0))]
    heap.pop()
    bumps = [(np.int64(0), np.int64(0))]
    bumps.pop()
    return entries, heap, bumps, np.zeros(3, dtype=np.int64)


@njit(cache=True)
def _ints():
    out = [np.int64(0)]
    out.pop()
    return out


@njit(cache=True)
def _queue_key(entries, heap, bumps, ins, t):
    k = (t - entries[2][ins]) // AGEING_US
    aged = entries[0][ins] + k
    entries[4][ins] = aged
    heappush(heap, (-aged, entries[1][ins], ins))
    heappush(bumps, (entries[2][ins] + (k + 1) * AGEING_US, ins))


@njit(cache=True)
def queue_push(entries, heap, bumps, meta, priority, eligible, queued_at, item):
    ins = len(entries[0])
    entries[0].append(priority)
    entries[1].append(eligible)
    entries[2].append(queued_at)
    entries[3].append(item)
    entries[4].append(0)
    entries[5].append(1)
    if meta[1] == 0:
        meta[0] = queued_at
        meta[1] = 1
    meta[2] += 1
    _queue_key(entries, heap, bumps, ins, meta[0])


@njit(cache=True)
def queue_pop(entries, heap, bumps, meta, t):
    """The item to start at ``t`` (the queue must not be empty)."""
    live = entries[5]
    if t < meta[0]:
        meta[0] = t
        heap.clear()
        bumps.clear()
        for ins in range(len(live)):
            if live[ins]:
                _queue_key(entries, heap, bumps, ins, t)
    elif t > meta[0]:
        meta[0] = t
        while len(bumps) and bumps[0][0] <= t:
            ins = heappop(bumps)[1]
            if live[ins]:
                _queue_key(entries, heap, bumps, ins, t)
    while True:
        neg, _, ins = heappop(heap)
        if live[ins] and entries[4][ins] == -neg:
            live[ins] = 0
            meta[2] -= 1
            return entries[3][ins]


# -- a schedule's runs going (max_active > 1): functions of their own, called, not inlined at each call site --


@njit(cache=True)
def _count_after(items, finish, t):
    """How many of ``items`` finish after ``t``."""
    n = 0
    for k in items:
        n += finish[k] > t
    return n


@njit(cache=True)
def _take_first_after(items, finish, t):
    """Remove and return the first of ``items`` that finishes after ``t`` (one must)."""
    k = 0
    while finish[items[k]] <= t:
        k += 1
    return items.pop(k)


@njit(cache=True)
def _remove(items, i):
    """Remove ``i`` from ``items`` (its first place), if there."""
    for k in range(len(items)):
        if items[k] == i:
            items.pop(k)
            return


# -- the loop ------------------------------------------------------------------------------------


@njit(cache=True)
def settle(rows, sch, sched_, budgets, out):
    """Settle ``rows`` (:class:`Rows`, in pick order) one event at a time; outcomes go into ``out``.

    ``sch`` is :class:`Schedules`, ``sched_`` :class:`Scheduler`, ``budgets``
    :class:`Budgets` (an opening past its list is after the horizon's end,
    where an opening does nothing), ``out`` :class:`Outcomes`. Every rule is
    called from :mod:`.rules` (compiled in: :mod:`.compiled_rules`).
    """
    pick, sched, due, elig, chg, occ, success = (rows.pick, rows.sched, rows.due, rows.elig, rows.chg, rows.occ,
                                                  rows.success)
    state, reason, start, finish, started, waited = out.state, out.reason, out.start, out.finish, out.started, out.waited
    out_lo, out_hi, capacity, end = sched_.out_lo, sched_.out_hi, sched_.capacity, sched_.end
    p_overlap, lim = sch.overlap, sch.max_active
    m = len(pick)
    n_s = len(p_overlap)
    n_a = len(budgets.ceiling)
    has_batch = len(rows.rest_idx) > 0
    buffering = False
    multi = False  # a schedule with max_active > 1: its going runs are listed
    for s in range(n_s):
        buffering |= p_overlap[s] == BUFFER_ONE or p_overlap[s] == BUFFER_ALL or p_overlap[s] == BUFFER_LATEST
        multi |= lim[s] > 1
    heap = [(np.int64(0), np.int64(0), np.int64(0), np.int64(0))]  # events the loop makes: (time, kind, seq, payload)
    heap.pop()
    ctr = np.zeros(2, dtype=np.int64)  # [seq, active]
    run_i = np.full(n_s, -1, dtype=np.int64)  # schedule -> its last started run, while going (-1: none)
    run_fin = np.zeros(n_s, dtype=np.int64)
    freed = np.zeros(m, dtype=np.bool_)  # cancelled runs: their slot is free before their finish event
    turn_member = np.zeros(m if has_batch else 0, dtype=np.bool_)  # a member of a backlog run in turn
    spent = Dict.empty(_I64, types.float64)  # period * n_a + account -> cost started
    opened = Dict.empty(_I64, types.boolean)
    pair = [(np.int64(0), np.int64(0))]
    pair.pop()
    waiting = [pair.copy() for _ in range(n_a)]  # account -> [(run, since)]
    # schedule -> FIFO of runs (head index in b_head / t_head): buffered; the rest of a backlog run in turn
    buffers = [_ints() for _ in range(n_s if buffering else 0)]
    turns = [_ints() for _ in range(n_s if has_batch else 0)]
    going = [_ints() for _ in range(n_s if multi else 0)]  # schedule -> its runs going, in start order
    b_head = np.zeros(n_s, dtype=np.int64)
    t_head = np.zeros(n_s, dtype=np.int64)
    q_entries, q_heap, q_bumps, q_meta = _queue_native()
    hull_lo = out_lo[0] if len(out_lo) else 0
    hull_hi = out_hi[-1] if len(out_hi) else 0

    def push(t, kind, payload):
        ctr[0] += 1
        heappush(heap, (t, kind, ctr[0], payload))

    def mark(i, st, why):
        state[i] = st
        reason[i] = why

    def popleft(lists, head, s):
        items = lists[s]
        i = items[head[s]]
        head[s] += 1
        if head[s] == len(items):
            items.clear()
            head[s] = 0
        return i

    def is_paused(s, t):
        for k in range(sch.pause_ptr[s], sch.pause_ptr[s + 1]):
            if sch.pause_lo[k] <= t < sch.pause_hi[k]:
                return True
        return False

    def n_going(s, t):
        """How many runs of ``s`` are going at ``t`` (started, not finished or cancelled)."""
        if lim[s] <= 1:
            return 1 if run_i[s] >= 0 and run_fin[s] > t else 0
        return _count_after(going[s], finish, t)

    def try_start(i, t, from_queue):
        if hull_lo <= t < hull_hi:
            t = up_one(t, out_lo, out_hi)  # a buffered or budget-held run waits for the scheduler to be up
        s = sched[i]
        if sch.pause_ptr[s] < sch.pause_ptr[s + 1] and is_paused(s, t):
            # Held (buffer, budget, capacity) into a pause: a paused schedule starts nothing.
            mark(i, SKIPPED, R_PAUSED)
            return SKIPPED * 256 + R_PAUSED
        if capacity >= 0 and ctr[1] >= capacity and not from_queue:
            queue_push(q_entries, q_heap, q_bumps, q_meta, sch.priority[s], elig[i], t, i)
            return HELD
        a = sch.account[s]
        if a >= 0:
            g = budgets.group[a]
            lo, hi = budgets.utc_ptr[g], budgets.utc_ptr[g + 1]
            p = period_of_day(local_day(t, budgets.utc[lo:hi], budgets.off[budgets.off_ptr[g]:budgets.off_ptr[g + 1]]),
                              budgets.kind[g])
            key = p * n_a + a
            before = spent.get(key, 0.0)
            if not before + chg[i] <= budgets.ceiling[a]:  # rules.fits
                if not sch.wait[s]:
                    mark(i, SKIPPED, R_BUDGET)
                    return SKIPPED * 256 + R_BUDGET
                waiting[a].append((i, t))
                nxt = key + n_a  # (account a, period p + 1)
                if nxt not in opened:
                    opened[nxt] = True
                    k = p + 1 - budgets.p0[g]
                    if 0 <= k < budgets.open_ptr[g + 1] - budgets.open_ptr[g]:
                        push(budgets.opens[budgets.open_ptr[g] + k], OPEN, a)
                return HELD
            spent[key] = before + chg[i]
        # It starts: done or failed by its attempts, ending after its occupancy.
        fin = t + occ[i]
        start[i] = t
        finish[i] = fin
        started[i] = True
        if success[i]:
            state[i] = DONE
            reason[i] = NONE
        else:
            state[i] = FAILED
            reason[i] = R_RETRIES
        run_i[s] = i
        run_fin[s] = fin
        if multi and lim[s] > 1:
            going[s].append(i)
        ctr[1] += 1
        push(fin, FINISH, i)
        return STARTED

    def arrive(i, t, from_queue):
        """Run ``i`` wants to start at ``t``: the overlap mode first, then capacity and budget."""
        s = sched[i]
        mode = p_overlap[s]
        if mode == BUFFER_LATEST and len(buffers[s]):
            while len(buffers[s]):  # a newer time takes the blocked one's place, running or not
                mark(popleft(buffers, b_head, s), SKIPPED, R_OVERLAP)
        # The overlap mode applies when max_active runs of the schedule are going (one, unless set).
        if mode != ALLOW and n_going(s, t) >= max(lim[s], 1):
            if mode == SKIP:
                mark(i, SKIPPED, R_OVERLAP)
                return SKIPPED * 256 + R_OVERLAP
            if mode == BUFFER_ONE:
                if len(buffers[s]):
                    mark(i, SKIPPED, R_OVERLAP)
                    return SKIPPED * 256 + R_OVERLAP
                buffers[s].append(i)
                return HELD
            if mode == BUFFER_ALL or mode == BUFFER_LATEST:
                buffers[s].append(i)
                return HELD
            # cancel_other: the running one (the oldest going) stops now, keeping its cost (a sent call is not
            # refunded).
            old = run_i[s]
            if lim[s] > 1:
                old = _take_first_after(going[s], finish, t)
            mark(old, CANCELLED, R_SUPERSEDED)
            finish[old] = t
            if run_i[s] == old:
                run_i[s] = -1
            freed[old] = True
            ctr[1] -= 1
        return try_start(i, t, from_queue)

    def next_turn(s, t):
        """The next member of a backlog run in turn starts at ``t`` unless it is too late by now."""
        while len(turns[s]):
            i = popleft(turns, t_head, s)
            if beyond(up_one(t, out_lo, out_hi) - elig[i], sch.max_lateness[s], sch.edge[s]):
                # APScheduler checks each run time's misfire grace when its turn comes (executors/base.py run_job).
                mark(i, EXPIRED, R_LATE)
                continue
            if try_start(i, t, False) == HELD:
                continue  # held (budget, capacity): the rest follow when it ends
            return

    def on_finish(t, i):
        if freed[i]:
            return
        ctr[1] -= 1
        s = sched[i]
        if run_i[s] == i:
            run_i[s] = -1
        if multi and lim[s] > 1:
            _remove(going[s], i)
        if has_batch and len(turns[s]) and (lim[s] > 1 and turn_member[i] or lim[s] <= 1 and run_i[s] < 0):
            # The instance working through a backlog takes its next member when its current one ends (with
            # max_active > 1 other runs may go beside it: APScheduler max_instances, executors/base.py).
            next_turn(s, t)
        if buffering and len(buffers[s]):
            if p_overlap[s] == BUFFER_LATEST:
                # Kubernetes' Forbid: the sync after the Job ends (when the controller is up) starts the most
                # recent unmet time, so a time picked at that instant comes first and replaces the blocked one.
                push(up_one(t, out_lo, out_hi), LATEST, s)
            elif lim[s] > 1 or run_i[s] < 0:
                # As many as max_active leaves room for (one may be held for budget or capacity). (Temporal
                # checks its window only when a time is buffered: a buffered start always goes.)
                for _ in range(1 if lim[s] <= 1 else lim[s] - n_going(s, t)):
                    if len(buffers[s]):
                        try_start(popleft(buffers, b_head, s), t, False)
        # (Runs queue only under a capacity.) Highest priority first, ageing one level per AGEING_US
        # waited so that low priority never starves; ties by eligibility (oldest first).
        while q_meta[2] > 0 and ctr[1] < capacity:
            arrive(queue_pop(q_entries, q_heap, q_bumps, q_meta, t), t, True)

    def on_open(t, a):
        """A budget period opens: its held runs arrive, after expiry and catch-up (:func:`.rules.held_at_opening`)."""
        if t >= end:
            return
        held = waiting[a]
        n = len(held)
        if n == 0:
            return
        rows_ = np.empty(n, dtype=np.int64)
        since = np.empty(n, dtype=np.int64)
        for k in range(n):
            rows_[k] = held[k][0]
            since[k] = held[k][1]
        held.clear()
        rank_of = Dict.empty(_I64, _I64)  # schedules in the order they first waited
        rank = np.empty(n, dtype=np.int64)
        s_ = sched[rows_]
        for k in range(n):
            if s_[k] not in rank_of:
                rank_of[s_[k]] = len(rank_of)
            rank[k] = rank_of[s_[k]]
            waited[rows_[k]] += (t - since[k]) / 1e6
        order, outcome = held_at_opening(t, rank, due[rows_], elig[rows_], sch.max_lateness[s_], sch.edge[s_],
                                         sch.catchup[s_], sch.limit[s_])
        for k in range(n):
            i = rows_[order[k]]
            if outcome[k] == EXPIRES:
                mark(i, EXPIRED, R_LATE)
            elif outcome[k] != ARRIVES:
                mark(i, COALESCED if outcome[k] == COALESCED_HELD else SKIPPED, R_CATCHUP)
        for k in range(n):
            if outcome[k] == ARRIVES:
                arrive(rows_[order[k]], t, False)

    def on_latest(t, s):
        """The blocked time of a buffer_latest schedule, after the picks of this instant."""
        while len(buffers[s]) and (run_i[s] < 0 if lim[s] <= 1 else n_going(s, t) < lim[s]):
            i = popleft(buffers, b_head, s)
            if beyond(t - elig[i], sch.max_lateness[s], sch.edge[s]):
                # Too late by the time it could start (Kubernetes' deadline at the sync after the Job ends).
                mark(i, EXPIRED, R_LATE)
                continue
            try_start(i, t, False)

    # The picks, in order, merged with the loop's own events: an event sorts
    # before a pick at its instant when its kind does (a finish, an opening).
    # (One call site per handler: numba inlines the inner functions.)
    follower, rest_ptr, rest_idx = rows.follower, rows.rest_ptr, rows.rest_idx
    i = 0
    while True:
        while i < m and follower[i]:
            i += 1
        if len(heap) and (i == m or heap[0][0] < pick[i] or (heap[0][0] == pick[i] and heap[0][1] < PICK)):
            ev = heappop(heap)
            if ev[1] == FINISH:
                on_finish(ev[0], ev[3])
            elif ev[1] == OPEN:
                on_open(ev[0], ev[3])
            else:
                on_latest(ev[0], ev[3])
            continue
        if i == m:
            break
        res = arrive(i, pick[i], False)
        if has_batch and rest_ptr[i] < rest_ptr[i + 1]:
            s = sched[i]
            turn_member[i] = True
            for k in range(rest_ptr[i], rest_ptr[i + 1]):
                q = rest_idx[k]
                if res != HELD and res != STARTED:
                    # The wake-up's submission was refused (another instance going,
                    # paused, no budget): the whole backlog with it.
                    mark(q, res // 256, res % 256)
                else:
                    turns[s].append(q)
                    turn_member[q] = True
        i += 1

    # Whatever still waits for budget at the horizon's end never got it.
    for a in range(n_a):
        for k in range(len(waiting[a])):
            i, since_ = waiting[a][k]
            mark(i, SKIPPED, R_BUDGET)
            waited[i] += max(0, end - since_) / 1e6
    # Runs still buffered, in turn or queued for capacity that were never decided never started.
    for s in range(len(buffers)):
        for k in range(b_head[s], len(buffers[s])):
            if state[buffers[s][k]] < 0:
                mark(buffers[s][k], SKIPPED, R_OVERLAP)
    for s in range(len(turns)):
        for k in range(t_head[s], len(turns[s])):
            if state[turns[s][k]] < 0:
                mark(turns[s][k], SKIPPED, R_OVERLAP)
    for ins in range(len(q_entries[5])):
        if q_entries[5][ins] and state[q_entries[3][ins]] < 0:
            mark(q_entries[3][ins], SKIPPED, R_OVERLAP)
