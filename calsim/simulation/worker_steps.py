"""The worker loop's inputs and the small steps its kernel calls (:mod:`.worker_kernel`).

The inputs are named structures of arrays (:class:`Jobs`, :class:`RowsW`,
:class:`PolicyW`, :class:`Limits`, :class:`Pool`, :class:`Draws`,
:class:`OutcomesW`). The steps are compiled functions of their own, called by
the kernel's one flat loop, not inlined at each call site: the retry backoff,
a paused span, the queue for a worker (a FIFO per priority level, ageing),
an event, a job's end, a free worker, a breaker's count, a job going, a
token's instant, an attempt's draws, what is left at the horizon's end.
"""

from __future__ import annotations

from collections import namedtuple
from heapq import heappush

import numpy as np
from numba import njit

import calsim.simulation.compiled_rules as compiled_rules
from .compiled_rules import norm_ppf_one, uniform_one, up_one
from .randomness import DURATION, FAILURE
from .run_rules import AGEING_US, BIG
from .state import R, S

compiled_rules.drop_stale_caches(__file__)

#: The kernel's event kinds, in their order at one instant.
UP, END, CRASH, EXPIRE, OPEN, HELD_READY, READY, GO, LATEST = 0, 1, 2, 3, 4, 5, 6, 7, 8
SKIPPED, FAILED, R_OVERLAP, R_BUDGET = S["skipped"], S["failed"], R["overlap"], R["budget"]

__all__ = ["Jobs", "RowsW", "PolicyW", "Limits", "Pool", "Draws", "Budgets", "OutcomesW", "backoff_wait",
           "new_bools", "new_ints", "remove_item", "paused_at", "grown", "level_push", "level_pop", "push_event",
           "end_job", "free_worker", "count_result", "go_live", "leave_live", "release_job", "slot_freed", "has_room",
           "attempt_log_of", "token_at", "attempt_draws", "unsettled_at_end", "live_end_next", "UP",
           "END", "CRASH", "EXPIRE", "OPEN", "HELD_READY", "READY", "GO", "LATEST"]

#: Jobs in ready order: row, instance, ready instant; ``turn_next`` the next member of a backlog run in turn
#: (-1: none) and ``follower`` whether it waits for the one before it.
Jobs = namedtuple("Jobs", "row inst ready turn_next follower")
#: Per row: schedule, the last instant a first attempt may start (:func:`.run_rules.deadline`), eligibility, due
#: instant, the draws' key, nominal instant and fold; what a start charges its budget (``chg``); and, on the
#: scheduler-level path, the run's whole occupancy and success, given by :func:`.columns.attempts` (``occ``:
#: -1 draws each attempt's duration and failure instead).
RowsW = namedtuple("RowsW", "s deadline elig due key nominal fold chg occ ok")
#: Per schedule: duration (median) and lognormal sigma, overlap code and max_active (0: any number), rate limit
#: (-1: none), effect point, ack delay, priority level (an index into ``level_priority``, the distinct
#: priorities), breakers (CSR), account (-1: none), on_budget wait, max_lateness, edge, catch-up code and limit,
#: paused spans (CSR).
PolicyW = namedtuple("PolicyW", "dur sigma overlap max_active rl effect ack level level_priority br_ptr br_idx "
                                "account wait max_lateness edge catchup limit pause_ptr pause_lo pause_hi")
#: Breakers (after, open_for) and rate limits (count per period, period, burst).
Limits = namedtuple("Limits", "b_after b_open rl_count rl_period rl_burst")
#: Workers (count; -1: any number), lease, heartbeat (-1: none), renew; crashes (instants, workers, down for);
#: ``scheduler_slots``: the pool is the scheduler's own (``capacity`` without :class:`~calsim.Workers`), so
#: nothing starts while the scheduler is down (its queue is served when it is up again).
Pool = namedtuple("Pool", "count lease heartbeat renew cr_t cr_w cr_down scheduler_slots")
#: Seed, origin (the scenario's start), failure probability and attempts, backoff and its cap, jitter mode,
#: error-class shares (transient, review), the horizon's end, the scheduler's outages (sorted starts, ends: a
#: job the scheduler releases later, buffered, in turn or held for budget, is released when it is up); and
#: whether to return the attempt log (the scheduler-level path reads none).
Draws = namedtuple("Draws", "seed origin p_fail max_att backoff max_backoff jitter_mode share_t share_r end "
                             "out_lo out_hi attempt_log")
#: Budgets: per account its ceiling (limit + :func:`.run_rules.fits`' tolerance) and group; per group (one zone and
#: period kind) its kind, its transitions and offsets in µs (CSR), and its period openings from period ``p0``.
Budgets = namedtuple("Budgets", "ceiling group kind utc_ptr utc off_ptr off p0 open_ptr opens")
#: Per job: its terminal state and reason; per row: start, finish, started, attempts, effects, worker, rate
#: wait (µs), budget wait (µs).
OutcomesW = namedtuple("OutcomesW", "j_state j_reason start finish started attempts effects worker rate_wait "
                                    "budget_wait")


@njit(cache=True)
def new_ints():
    out = [np.int64(0)]
    out.pop()
    return out


@njit(cache=True)
def remove_item(items, i):
    """Remove ``i`` from ``items`` (its first place), if there."""
    for k in range(len(items)):
        if items[k] == i:
            items.pop(k)
            return


@njit(cache=True)
def new_bools():
    out = [False]
    out.pop()
    return out


@njit(cache=True)
def backoff_wait(k, backoff, cap, mode, u):
    """The wait before retry ``k`` (1 for the second attempt): ``min(cap, backoff * 2**(k-1))``, then jitter
    (0 none, 1 full: ``u * d``, 2 equal: ``d/2 + u * d/2``); the doubling saturates as :func:`.run_rules.retry_wait`."""
    d = backoff
    for _ in range(k - 1):
        if d >= cap or d > BIG // 2:
            break
        d *= 2
    d = min(d, cap)
    if mode == 1:
        return np.int64(u * d)
    if mode == 2:
        return d // 2 + np.int64(u * (d - d // 2))
    return d


@njit(cache=True)
def paused_at(ptr, lo, hi, s, t):
    for k in range(ptr[s], ptr[s + 1]):
        if lo[k] <= t < hi[k]:
            return True
    return False


@njit(cache=True)
def grown(nodes):
    """The queue's node arrays, twice as long (see :func:`_level_push`)."""
    job, qat, order, nxt = nodes
    return (np.concatenate((job, job)), np.concatenate((qat, qat)), np.concatenate((order, order)),
            np.concatenate((nxt, nxt)))


@njit(cache=True)
def level_push(nodes, lv, queued, seq, level, t, j):
    """Queue job ``j`` at ``t`` behind the others of its priority level: one linked list of nodes per level
    (``nodes``: job, queued at, order, next, with room for one more: :func:`_grown`). Events come in time
    order, so each level's list is in queued order."""
    job, qat, order, nxt = nodes
    n = queued[1]  # nodes used
    seq[0] += 1
    job[n], qat[n], order[n], nxt[n] = j, t, seq[0], -1
    if lv[1, level] >= 0:
        nxt[lv[1, level]] = n
    else:
        lv[0, level] = n
    lv[1, level] = n
    queued[0] += 1
    queued[1] = n + 1


@njit(cache=True)
def level_pop(nodes, lv, queued, level_priority, t):
    """The job to serve at ``t``: the highest aged priority ``priority + (t - queued_at) // AGEING_US``, then the
    first queued (the event loop's capacity queue's order). Within a level the oldest has the highest aged
    priority, so only the levels' heads compete: O(levels) a pop, no re-keying as runs age."""
    job, qat, order, nxt = nodes
    best, best_aged, best_q, best_seq = -1, np.int64(0), np.int64(0), np.int64(0)
    for k in range(lv.shape[1]):
        h = lv[0, k]
        if h >= 0:
            aged = level_priority[k] + (t - qat[h]) // AGEING_US
            if best < 0 or aged > best_aged or (aged == best_aged and (qat[h] < best_q or (qat[h] == best_q and
                                                                                         order[h] < best_seq))):
                best, best_aged, best_q, best_seq = k, aged, qat[h], order[h]
    h = lv[0, best]
    lv[0, best] = nxt[h]
    if nxt[h] < 0:
        lv[1, best] = -1
    queued[0] -= 1
    return job[h]


@njit(cache=True)
def push_event(heap, seq, t, kind, a, b):
    seq[0] += 1
    heappush(heap, (t, kind, seq[0], a, b))


@njit(cache=True)
def end_job(j_state, j_reason, todo, j, st, rs):
    """Job ``j`` ends with ``st``/``rs`` (its first end only), to be followed up (``todo``)."""
    if j_state[j] >= 0:
        return
    j_state[j] = st
    j_reason[j] = rs
    todo.append(j)


@njit(cache=True)
def free_worker(w_busy, w_down, w_hold, w_free, free, w, t):
    """Worker ``w`` lets go of its attempt: free again unless down or holding a job waiting for its token."""
    w_busy[w] = -1
    if w_down[w] <= t and w_hold[w] < 0 and not w_free[w]:
        heappush(free, w)
        w_free[w] = True


@njit(cache=True)
def count_result(br_ptr, br_idx, b_after, b_open, b_state, b_count, b_until, b_trial, b_trial_att, s, a, ok, t):
    """Attempt ``a`` of schedule ``s`` ended (``ok``): its breakers count it (Polly's consecutive-failure breaker)."""
    for q in range(br_ptr[s], br_ptr[s + 1]):
        b = br_idx[q]
        if b_state[b] == 2 and b_trial_att[b] == a:
            b_trial[b] = -1
            b_trial_att[b] = -1
            if ok:
                b_state[b] = 0
                b_count[b] = 0
            else:
                b_state[b] = 1
                b_until[b] = t + b_open[b]
        elif b_state[b] == 0:
            if ok:
                b_count[b] = 0
            else:
                b_count[b] += 1
                if b_count[b] >= b_after[b]:
                    b_state[b] = 1
                    b_count[b] = 0
                    b_until[b] = t + b_open[b]
        # open or half-open: results of attempts started before it opened are ignored (Polly)


@njit(cache=True)
def go_live(j_live, running, live, multi, key, j):
    """Job ``j`` of (schedule, instance) ``key`` is going from now: it counts against max_active."""
    j_live[j] = True
    running[key] += 1
    if multi:
        live[key].append(j)


@njit(cache=True)
def leave_live(j_live, running, live, multi, key, j):
    """Job ``j`` stops going (it ended, or waits for budget after the scheduler released it)."""
    if j_live[j]:
        j_live[j] = False
        running[key] -= 1
        if multi:
            remove_item(live[key], j)


@njit(cache=True)
def has_room(n_workers, free, first_line):
    """A worker is free for one more job released now (beyond those already first in line; any number when
    none are counted)."""
    return n_workers < 0 or len(free) > len(first_line)


@njit(cache=True)
def attempt_log_of(a_job, a_start, a_end, a_over, a_worker, a_outcome, n_att):
    """The attempt log, one column per attempt (the first ``n_att``): job, start, end, let go, worker, outcome."""
    log = np.empty((6, n_att), dtype=np.int64)
    for a in range(n_att):
        log[0, a] = a_job[a]
        log[1, a] = a_start[a]
        log[2, a] = a_end[a]
        log[3, a] = a_over[a]
        log[4, a] = a_worker[a]
        log[5, a] = a_outcome[a]
    return log


@njit(cache=True)
def release_job(first_line, heap, seq, out_lo, out_hi, t, j, room):
    """The scheduler releases job ``j`` (a buffered run, the next member in turn) at ``t``: it takes the slot its
    predecessor freed (``room``: a slot is free), before the queue; else it arrives as any run does, and if the
    scheduler is down then, when it is up again."""
    at = up_one(t, out_lo, out_hi)
    if at == t and room:
        first_line.append(j)
    else:
        push_event(heap, seq, at, HELD_READY, j, 2)


@njit(cache=True)
def slot_freed(buffers, b_head, key, latest, slots, j_state, j_nodl, j_live, running, live, multi, first_line, heap,
               seq, out_lo, out_hi, t, n_workers, free):
    """A run of (schedule, instance) ``key`` stopped going at ``t`` (it ended, or waits for budget): its buffered
    runs take the ``slots`` free (a ``buffer_latest`` schedule's sync comes after the picks of this instant,
    when the scheduler is up). A released run is going from now (a pick at this instant finds it) and has no
    deadline (Temporal checks its window only when a time is buffered)."""
    if latest:
        push_event(heap, seq, up_one(t, out_lo, out_hi), LATEST, key, 0)
        return
    while slots > 0 and len(buffers[key]) > b_head[key]:
        nb = buffers[key][b_head[key]]
        b_head[key] += 1
        if j_state[nb] < 0:
            j_nodl[nb] = True
            go_live(j_live, running, live, multi, key, nb)
            release_job(first_line, heap, seq, out_lo, out_hi, t, nb, has_room(n_workers, free, first_line))
            slots -= 1



@njit(cache=True)
def token_at(tat, tat_at, rl, count, burst, period, t):
    """When a run ready at ``t`` gets a token of bucket ``rl`` (GCRA, golang.org/x/time/rate's reservation):
    ``max(t, TAT - (burst - 1) * T)`` with ``T = period / count``; the caller adds ``period`` to ``tat[rl]``
    when it takes the token.

    Exact in integers: the theoretical arrival time (TAT) is kept in µs × count, so it moves by the period
    from the conforming instant itself, never from the whole µs a start is rounded up to (which drifted by up
    to (count - 1) / count µs a token). It is kept relative to the bucket's last use (``tat_at``), here
    rebased to ``t`` (``max(TAT - t, 0)``): from a fixed origin, a year at 1,000,000/s would pass int64."""
    q = tat[rl] // count
    rel = t - tat_at[rl]
    tat[rl] = (q - rel) * count + (tat[rl] - q * count) if q >= rel else np.int64(0)
    tat_at[rl] = t
    need = tat[rl] - (burst - 1) * period
    return t + (need + count - 1) // count if need > 0 else t


@njit(cache=True)
def attempt_draws(rows, r, dur, sigma, p_fail, seed, k):
    """Attempt ``k`` of row ``r``: its duration and whether it fails. Scheduler-level rows carry the run's whole
    occupancy and success (``rows.occ``/``ok``); else a lognormal duration (median ``dur``, ``sigma``) and a
    failure with ``p_fail``, each drawn from the row's identity (:func:`.randomness.uniform_one`)."""
    if rows.occ[r] >= 0:
        return rows.occ[r], not rows.ok[r]
    d = dur
    if sigma > 0:
        u = uniform_one(rows.key[r], rows.nominal[r], rows.fold[r], seed, DURATION, k)
        d = np.int64(np.float64(d) * np.exp(sigma * norm_ppf_one(min(max(u, 1e-12), 1 - 1e-12))))
    fails = False
    if p_fail > 0:
        fails = uniform_one(rows.key[r], rows.nominal[r], rows.fold[r], seed, FAILURE, k) < p_fail
    return d, fails


@njit(cache=True)
def unsettled_at_end(waiting, job_row, j_k, j_state, j_reason, budget_wait, end):
    """At the horizon's end: whatever still waits for budget never got it (``skipped``, or ``failed`` for a
    retry, ``budget``; its wait counted to ``end``); a job still buffered, or in turn behind a member held at
    the end, never started (``skipped``/``overlap``)."""
    for a in range(len(waiting)):
        for k in range(len(waiting[a])):
            j, since = waiting[a][k]
            budget_wait[job_row[j]] += max(0, end - since)
            if j_state[j] < 0:
                j_state[j] = SKIPPED if j_k[j] == 0 else FAILED
                j_reason[j] = R_BUDGET
    for j in range(len(j_state)):
        if j_state[j] < 0:
            j_state[j] = SKIPPED
            j_reason[j] = R_OVERLAP


@njit(cache=True)
def live_end_next(heap, a_status, t):
    """The next event is a running attempt's END at ``t``: every attempt ending at an instant lets go of its
    slot before the queue is served (a stale END, of an attempt already over, does not count)."""
    return len(heap) > 0 and heap[0][0] == t and heap[0][1] == END and a_status[heap[0][3]] == 0
