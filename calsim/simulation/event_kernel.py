"""The ordered event loop's compiled body: rows whose outcome depends on what ran before them, one event at a time.

:func:`settle` is the one implementation of the ordered path (numba,
``cache=True``: compiled once per install, then loaded from the cache);
:mod:`.event_loop` prepares its arrays and writes its outcomes back. It is a
line-by-line port of the former Python loop, kept in that loop's shape (the
inner functions are its handlers) so that each rule can be read against
:mod:`.rules`, where it is defined once for the column paths:

* events at one instant: a finish, then a budget period's opening, then the
  picks (by schedule, then due instant), then a buffer_latest sync; ``seq``
  (the order they were made) breaks the remaining ties;
* a run meets its schedule's overlap mode when it arrives and again when it
  leaves the capacity queue (the run it queued behind may be over, or a
  sibling that left the queue first may be going);
* a budget period's opening first adds every held run's wait and expires the
  ones too late, then, schedule by schedule (in the order they first waited,
  each in due order), applies the catch-up mode to a backlog and lets the
  rest arrive;
* a decision is final except a cancel after a start (``cancel_other``).

Why compiled: the Python loop cost ~3 µs per row in CPython's per-operation
overhead, spread over every line; the same steps here cost ~0.1 µs.
"""

from __future__ import annotations

from heapq import heappop, heappush

import numpy as np
from numba import njit, types
from numba.typed import Dict, List

from ..times import DAY_US, US
from .rules import AGEING_US, CATCHUP, OVERLAP
from .state import NONE, R, S

__all__ = ["settle", "queue_new", "queue_push", "queue_pop", "AGEING_US"]


FINISH, OPEN, PICK, LATEST = 0, 1, 2, 3  # event kinds, in their order at one instant
HELD, STARTED = -1, -2  # arrive/try_start: waits (buffer, budget, capacity); started; else state * 256 + reason
ALLOW, SKIP, BUFFER_ONE, BUFFER_ALL, CANCEL_OTHER, BUFFER_LATEST = (OVERLAP[k] for k in (
    "allow", "skip", "buffer_one", "buffer_all", "cancel_other", "buffer_latest"))
C_ALL, C_LATEST, C_EARLIEST, C_BOUNDED = (CATCHUP[k] for k in ("all", "latest", "earliest", "bounded"))
DONE, FAILED, SKIPPED, EXPIRED, CANCELLED, COALESCED = (S[k] for k in (
    "done", "failed", "skipped", "expired", "cancelled", "coalesced"))
R_OVERLAP, R_PAUSED, R_BUDGET, R_LATE, R_SUPERSEDED, R_CATCHUP, R_RETRIES = (R[k] for k in (
    "overlap", "paused", "budget", "max_lateness", "superseded", "catchup", "retries_exhausted"))

_I64 = types.int64
_T2 = types.UniTuple(_I64, 2)
_T3 = types.UniTuple(_I64, 3)
_T4 = types.UniTuple(_I64, 4)


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


# -- small rules, as :mod:`.rules` states them for one run ------------------------------------------


@njit(cache=True)
def _up(t, out_lo, out_hi):
    """:func:`.rules.up`: the first instant at or after ``t`` at which the scheduler is up."""
    for k in range(len(out_lo)):
        if out_lo[k] <= t < out_hi[k]:
            t = out_hi[k]
    return t


@njit(cache=True)
def _beyond(lateness, limit, edge):
    """:func:`.rules.beyond` for one run."""
    return lateness > limit or (edge == 1 and lateness == limit and lateness > 0)


@njit(cache=True)
def _month_of_day(day):
    """Months since 1970-01 of a day number (days since 1970-01-01): civil-from-days (H. Hinnant)."""
    z = day + 719468
    era = z // 146097
    doe = z - era * 146097
    yoe = (doe - doe // 1460 + doe // 36524 - doe // 146096) // 365
    y = yoe + era * 400
    doy = doe - (365 * yoe + yoe // 4 - yoe // 100)
    mp = (5 * doy + 2) // 153
    m = mp + 3 if mp < 10 else mp - 9
    if m <= 2:
        y += 1
    return (y - 1970) * 12 + (m - 1)


@njit(cache=True)
def _period(t, g, g_kind, g_utc_ptr, g_utc, g_off_ptr, g_off):
    """:func:`.rules.period_of`: the local day, ISO week or month (group ``g``'s zone and kind) of instant ``t``."""
    lo, hi = g_utc_ptr[g], g_utc_ptr[g + 1]
    j = np.searchsorted(g_utc[lo:hi], t // US, side="right")
    day = (t + g_off[g_off_ptr[g] + j] * US) // DAY_US
    kind = g_kind[g]
    if kind == 0:
        return day
    if kind == 1:
        return (day + 3) // 7
    return _month_of_day(day)


@njit(cache=True)
def _backlog_runs(mode, limit, pos, size):
    """:func:`.rules.backlog_outcome` for one member: (runs, coalesced)."""
    from_end = size - 1 - pos
    runs = (mode == C_ALL or (mode == C_LATEST and from_end == 0) or (mode == C_EARLIEST and pos == 0)
            or (mode == C_BOUNDED and from_end < limit))
    return runs, (not runs) and (mode == C_LATEST or mode == C_EARLIEST)


# -- the loop ------------------------------------------------------------------------------------


@njit(cache=True)
def settle(pick, sched, due, elig, chg, occ, success, follower, rest_ptr, rest_idx,
           p_overlap, p_account, p_priority, p_wait, p_maxlate, p_edge, p_catchup, p_limit,
           pause_ptr, pause_lo, pause_hi, out_lo, out_hi, capacity,
           ceiling, a_group, g_kind, g_utc_ptr, g_utc, g_off_ptr, g_off, g_p0, g_open_ptr, g_open,
           end, expiring, buffering, has_batch,
           state, reason, start, finish, started, waited):
    """Settle the rows (in pick order) one event at a time; outcomes are written into the last six arrays.

    ``capacity`` is -1 for none;
    ``ceiling[a]`` is budget ``a``'s limit plus :func:`.rules.fits`'
    tolerance; its period openings ``g_open`` are precomputed from period
    ``g_p0`` of its group (an opening past them is after ``end``, where an
    opening does nothing).
    """
    m = len(pick)
    n_s = len(p_overlap)
    n_a = len(ceiling)
    heap = [(np.int64(0), np.int64(0), np.int64(0), np.int64(0))]  # events the loop makes: (time, kind, seq, payload)
    heap.pop()
    ctr = np.zeros(2, dtype=np.int64)  # [seq, active]
    run_i = np.full(n_s, -1, dtype=np.int64)  # schedule -> the run holding it (-1: none)
    run_fin = np.zeros(n_s, dtype=np.int64)
    freed = np.zeros(m, dtype=np.bool_)  # cancelled runs: their slot is free before their finish event
    spent = Dict.empty(_I64, types.float64)  # period * n_a + account -> cost started
    opened = Dict.empty(_I64, types.boolean)
    pair = [(np.int64(0), np.int64(0))]
    pair.pop()
    waiting = [pair.copy() for _ in range(n_a)]  # account -> [(run, since)]
    # schedule -> FIFO of runs (head index in b_head / t_head): buffered; the rest of a backlog run in turn
    buffers = [_ints() for _ in range(n_s if buffering else 0)]
    turns = [_ints() for _ in range(n_s if has_batch else 0)]
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
        for k in range(pause_ptr[s], pause_ptr[s + 1]):
            if pause_lo[k] <= t < pause_hi[k]:
                return True
        return False

    def try_start(i, t, from_queue):
        if hull_lo <= t < hull_hi:
            t = _up(t, out_lo, out_hi)  # a buffered or budget-held run waits for the scheduler to be up
        s = sched[i]
        if pause_ptr[s] < pause_ptr[s + 1] and is_paused(s, t):
            # Held (buffer, budget, capacity) into a pause: a paused schedule starts nothing.
            mark(i, SKIPPED, R_PAUSED)
            return SKIPPED * 256 + R_PAUSED
        if capacity >= 0 and ctr[1] >= capacity and not from_queue:
            queue_push(q_entries, q_heap, q_bumps, q_meta, p_priority[s], elig[i], t, i)
            return HELD
        a = p_account[s]
        if a >= 0:
            g = a_group[a]
            p = _period(t, g, g_kind, g_utc_ptr, g_utc, g_off_ptr, g_off)
            key = p * n_a + a
            before = spent.get(key, 0.0)
            if not before + chg[i] <= ceiling[a]:  # rules.fits
                if not p_wait[s]:
                    mark(i, SKIPPED, R_BUDGET)
                    return SKIPPED * 256 + R_BUDGET
                waiting[a].append((i, t))
                nxt = key + n_a  # (account a, period p + 1)
                if nxt not in opened:
                    opened[nxt] = True
                    k = p + 1 - g_p0[g]
                    if 0 <= k < g_open_ptr[g + 1] - g_open_ptr[g]:
                        push(g_open[g_open_ptr[g] + k], OPEN, a)
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
        if run_i[s] >= 0 and run_fin[s] > t and mode != ALLOW:
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
            # cancel_other: the running one stops now, keeping its cost (a sent call is not refunded).
            old = run_i[s]
            mark(old, CANCELLED, R_SUPERSEDED)
            finish[old] = t
            run_i[s] = -1
            freed[old] = True
            ctr[1] -= 1
        return try_start(i, t, from_queue)

    def next_turn(s, t):
        """The next member of a backlog run in turn starts at ``t`` unless it is too late by now."""
        while len(turns[s]):
            i = popleft(turns, t_head, s)
            if _beyond(_up(t, out_lo, out_hi) - elig[i], p_maxlate[s], p_edge[s]):
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
        if has_batch and len(turns[s]) and run_i[s] < 0:
            next_turn(s, t)
        if buffering and len(buffers[s]):
            if p_overlap[s] == BUFFER_LATEST:
                # Kubernetes' Forbid: the sync after the Job ends (when the controller is up) starts the most
                # recent unmet time, so a time picked at that instant comes first and replaces the blocked one.
                push(_up(t, out_lo, out_hi), LATEST, s)
            elif run_i[s] < 0:
                # (Temporal checks its window only when a time is buffered: a buffered start always goes.)
                try_start(popleft(buffers, b_head, s), t, False)
        # (Runs queue only under a capacity.) Highest priority first, ageing one level per AGEING_US
        # waited so that low priority never starves; ties by eligibility (oldest first).
        while q_meta[2] > 0 and ctr[1] < capacity:
            arrive(queue_pop(q_entries, q_heap, q_bumps, q_meta, t), t, True)

    def on_open(t, a):
        """A budget period opens: its held runs arrive, after expiry and catch-up."""
        if t >= end:
            return
        held = waiting[a]
        n = len(held)
        if n == 0:
            return
        rows = np.empty(n, dtype=np.int64)
        since = np.empty(n, dtype=np.int64)
        for k in range(n):
            rows[k] = held[k][0]
            since[k] = held[k][1]
        held.clear()
        # Schedules in the order they first waited, each one's runs in due order (stable).
        rank_of = Dict.empty(_I64, _I64)
        rank = np.empty(n, dtype=np.int64)
        for k in range(n):
            s = sched[rows[k]]
            if s not in rank_of:
                rank_of[s] = len(rank_of)
            rank[k] = rank_of[s]
        by_due = np.argsort(due[rows], kind="mergesort")
        o = by_due[np.argsort(rank[by_due], kind="mergesort")]
        rows, since, rank = rows[o], since[o], rank[o]
        live = np.ones(n, dtype=np.bool_)
        for k in range(n):
            waited[rows[k]] += (t - since[k]) / 1e6
        if expiring:
            for k in range(n):
                s = sched[rows[k]]
                if _beyond(t - elig[rows[k]], p_maxlate[s], p_edge[s]):
                    mark(rows[k], EXPIRED, R_LATE)
                    live[k] = False
        lo = 0
        while lo < n:  # schedule by schedule
            hi = lo
            while hi < n and rank[hi] == rank[lo]:
                hi += 1
            size = 0
            for k in range(lo, hi):
                size += live[k]
            keep = live[lo:hi].copy()
            if size > 1:  # a backlog again: the catch-up mode decides
                s = sched[rows[lo]]
                pos = 0
                for k in range(lo, hi):
                    if live[k]:
                        runs, coalesced = _backlog_runs(p_catchup[s], p_limit[s], pos, size)
                        pos += 1
                        if not runs:
                            keep[k - lo] = False
                            mark(rows[k], COALESCED if coalesced else SKIPPED, R_CATCHUP)
            for k in range(lo, hi):
                if keep[k - lo]:
                    arrive(rows[k], t, False)
            lo = hi

    def on_latest(t, s):
        """The blocked time of a buffer_latest schedule, after the picks of this instant."""
        while len(buffers[s]) and run_i[s] < 0:
            i = popleft(buffers, b_head, s)
            if _beyond(t - elig[i], p_maxlate[s], p_edge[s]):
                # Too late by the time it could start (Kubernetes' deadline at the sync after the Job ends).
                mark(i, EXPIRED, R_LATE)
                continue
            try_start(i, t, False)

    # The picks, in order, merged with the loop's own events: an event sorts
    # before a pick at its instant when its kind does (a finish, an opening).
    # (One call site per handler: numba inlines the inner functions.)
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
        out = arrive(i, pick[i], False)
        if has_batch and rest_ptr[i] < rest_ptr[i + 1]:
            s = sched[i]
            for k in range(rest_ptr[i], rest_ptr[i + 1]):
                q = rest_idx[k]
                if out != HELD and out != STARTED:
                    # The wake-up's submission was refused (another instance going,
                    # paused, no budget): the whole backlog with it.
                    mark(q, out // 256, out % 256)
                else:
                    turns[s].append(q)
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
