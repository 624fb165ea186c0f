"""The one ordered loop, compiled: one attempt at a time, through overlap, breakers, workers, budgets and rate limits.

:func:`settle` is the one implementation (numba, ``cache=True``) of every
row whose outcome depends on order. Two modules lay its inputs out as a few
named structures (:class:`Jobs`, :class:`RowsW`, :class:`PolicyW`,
:class:`Limits`, :class:`Pool`, :class:`Draws`, :class:`Budgets`,
:class:`OutcomesW`) and write the outcomes back: :mod:`.worker_loop` for
worker-level scenarios, :mod:`.event_loop` for the scheduler-level ordered
rows (each run one attempt whose occupancy and success the columns gave:
``RowsW.occ``; ``capacity`` the scheduler's own slots: ``Pool.scheduler_slots``,
idle while it is down). A *job* is one scheduler
instance's execution of an occurrence (one per occurrence, or one per
instance with ``dedupe="none"``); an *attempt* is one try of a job on a
worker. Workers are the capacity resource: a scenario with ``capacity`` and
no :class:`~calsim.Workers` has one implicit pool of that many (no crashes,
no lease). Every run rule is :mod:`.run_rules`' or :mod:`.randomness`' function,
compiled on its own (:mod:`.compiled_rules`). The rules
(``docs/research/worker_faults.md``):

* a job that becomes ready (its pickup, a budget period's opening, a buffered
  or in-turn job's turn) meets, in order: its schedule's overlap mode when
  ``max_active`` of its jobs are going (every mode; ``cancel_other`` cancels
  the oldest), the breakers of its schedule, then the queue for a worker
  (highest priority first, ageing one level per hour waited, then ready
  order); on the worker: its ``max_lateness`` (first attempts), a pause of its
  schedule, its budget (each attempt charges its cost in the local period of
  its start; no room: it waits for the next period's opening, where
  :func:`.run_rules.held_at_opening` orders, expires and catches up the held
  first attempts, or is skipped with ``on_budget="skip"``), then its rate
  limit (a token, GCRA in integers, exact: the k-th queued start of a bucket
  is the ceiling of its exact rational instant), waited for on the worker;
* a started attempt ends at ``start + duration`` and is acknowledged
  ``ack_delay`` later, holding its worker until then; its effect happens at
  ``start + effect_at * duration`` unless the attempt fails;
* a lease (``Workers(renew=True)``, the default) is ``lease_until = claim +
  lease``, extended to ``heartbeat + lease`` by each heartbeat (every
  ``heartbeat`` from the claim): a live worker never loses its attempt, and
  a crashed worker's attempt is claimable again when its last
  ``lease_until`` passes (attempt + 1, ``lease_expired``). ``renew=False``:
  the lease is a Start-To-Close timeout and ``heartbeat`` a heartbeat
  timeout (Temporal): a crash at ``c`` is noticed at ``min(start + lease,
  c + heartbeat)``, and an attempt whose acknowledgement would come after
  ``start + lease`` is timed out there;
* a failed attempt is transient (retry after the capped, jittered backoff,
  counted from its report, or ``retries_exhausted``), ``review`` or
  ``permanent``, drawn per attempt;
* a backlog run in turn (``backlog="in_turn"``) is one chain per wake-up and
  instance: each member becomes ready when the one before it ends; a head
  refused (overlap, breaker, pause, budget) takes the chain with it, and so
  does a member a newer run cancels;
* a run the scheduler releases (a buffer, the next member in turn) takes the
  slot its predecessor freed if still free, else it queues as any run (not
  going while it waits); at one instant every attempt ending lets go of its
  worker before the queue is served.

Events at one instant: a worker coming up, then attempt ends, crashes, lease
expiries, budget period openings, held jobs arriving, then jobs becoming
ready (occurrences before retries), then jobs that got their token, then a
``buffer_latest`` sync. Draws are :func:`.randomness.uniform_one`'s, per
attempt, so a run's draws do not depend on order.

Why one flat loop: numba inlines an inner function at every call site, and
handlers calling handlers multiplied the compiled code (minutes to compile
instead of seconds); the handlers are the branches of one ``if`` instead, and
the small steps they share (push an event, end a job, free a worker, count a
breaker's result) are functions of their own, compiled once and called.
"""

from __future__ import annotations

from heapq import heappop, heappush

import numpy as np
from numba import njit, types
from numba.typed import Dict

import calsim.simulation.compiled_rules as compiled_rules
import calsim.simulation.worker_steps as worker_steps
from .compiled_rules import held_at_opening, local_day, period_of_day, uniform_one, up_one
from .randomness import CLASS, RETRY_JITTER
from .run_rules import ARRIVES, COALESCED_HELD, EXPIRES, OVERLAP
from .state import R, S
from .worker_steps import (CRASH, END, EXPIRE, GO, HELD_READY, LATEST, OPEN, READY, UP,  # noqa: F401
                           Budgets, Draws, Jobs, Limits, OutcomesW, PolicyW, Pool, RowsW, backoff_wait,  # noqa: F401
                           attempt_draws, attempt_log_of, count_result, end_job, free_worker, go_live, grown, has_room,
                           leave_live, level_pop, level_push, live_end_next, new_bools, new_ints, paused_at, push_event,
                           release_job, slot_freed, token_at, unsettled_at_end)

__all__ = ["settle", "Jobs", "RowsW", "PolicyW", "Limits", "Pool", "Draws", "OutcomesW", "backoff_wait"]

compiled_rules.drop_stale_caches(__file__, worker_steps.__file__)  # (its steps are compiled into it)

DONE, FAILED, SKIPPED, EXPIRED, CANCELLED, COALESCED = (S[k] for k in (
    "done", "failed", "skipped", "expired", "cancelled", "coalesced"))
R_OVERLAP, R_LATE, R_RETRIES, R_LEASE, R_REVIEW, R_PERMANENT, R_RATE, R_BREAKER, R_BUDGET, R_PAUSED, \
    R_SUPERSEDED, R_CATCHUP = (R[k] for k in (
        "overlap", "max_lateness", "retries_exhausted", "lease_expired", "review", "permanent", "rate_limited",
        "breaker_open", "budget", "paused", "superseded", "catchup"))
ALLOW, SKIP, BUFFER_ONE, BUFFER_ALL, CANCEL_OTHER, BUFFER_LATEST = (OVERLAP[k] for k in (
    "allow", "skip", "buffer_one", "buffer_all", "cancel_other", "buffer_latest"))
_I64 = types.int64

@njit(cache=True, nogil=True)  # (nogil: a sweep settles combinations in threads; this is most of some)
def settle(jobs, rows, pol, lim, pool, draws, budgets, out):
    """Settle every job; writes each job's terminal state and reason and the rows' outcomes into ``out``.

    Returns the attempt log, one column per attempt in start order: job, start, end (start + duration),
    when it let go of its worker, worker (-1: none numbered), outcome (0 succeeded, 1 failed, 2 lost in a
    crash, 3 timed out by its lease, 4 cancelled by a newer run)."""
    job_row, job_inst, job_ready = jobs.row, jobs.inst, jobs.ready
    r_s, r_deadline = rows.s, rows.deadline
    j_state, j_reason, start, finish, started = out.j_state, out.j_reason, out.start, out.finish, out.started
    attempts, effects, worker, rate_wait, budget_wait = out.attempts, out.effects, out.worker, out.rate_wait, \
        out.budget_wait
    seed, max_att, lease, heartbeat = draws.seed, draws.max_att, pool.lease, pool.heartbeat
    m = len(job_row)
    n_s = len(pol.dur)
    n_inst = 1
    for j in range(m):
        n_inst = max(n_inst, job_inst[j] + 1)
    n_keys = n_s * n_inst
    n_a = len(budgets.ceiling)
    buffering = False
    multi = False
    for s in range(n_s):
        o = pol.overlap[s]
        buffering |= o == BUFFER_ONE or o == BUFFER_ALL or o == BUFFER_LATEST
        multi |= o == CANCEL_OTHER or o == BUFFER_LATEST or pol.max_active[s] > 1
    heap = [(np.int64(0), np.int64(0), np.int64(0), np.int64(0), np.int64(0))]
    heap.pop()
    seq = np.zeros(1, dtype=np.int64)
    j_k = np.zeros(m, dtype=np.int64)  # attempts made
    j_tok = np.zeros(m, dtype=np.bool_)  # holds a token for its next attempt
    j_live = np.zeros(m, dtype=np.bool_)  # started and not terminal (overlap)
    j_att = np.full(m, -1, dtype=np.int64)  # its running attempt (-1: none)
    j_nodl = np.zeros(m, dtype=np.bool_)  # released from buffer_one/buffer_all: no deadline (Temporal)
    running = np.zeros(n_keys, dtype=np.int64)
    live = [new_ints() for _ in range(n_keys if multi else 0)]  # (schedule, instance) -> its live jobs, oldest first
    buffers = [new_ints() for _ in range(n_keys if buffering else 0)]
    b_head = np.zeros(n_keys, dtype=np.int64)
    # attempts
    a_job, a_start, a_end = new_ints(), new_ints(), new_ints()
    a_effect, a_worker, a_status = new_ints(), new_ints(), new_ints()
    a_fails = new_bools()
    a_over = new_ints()  # when it let go of its worker (end + ack, crash, lease, cancel)
    a_outcome = new_ints()
    # workers
    n_workers = pool.count
    n_w = max(n_workers, 0)
    w_busy = np.full(n_w, -1, dtype=np.int64)
    w_down = np.zeros(n_w, dtype=np.int64)  # down until
    w_free = np.zeros(n_w, dtype=np.bool_)  # in the free heap
    w_hold = np.full(n_w, -1, dtype=np.int64)  # the job it holds while that job waits for a token
    free = new_ints()
    for w in range(n_w):
        free.append(w)
        w_free[w] = True
    # jobs waiting for a worker: those whose token came first (FIFO), then the capacity queue (aged priority)
    first_line = new_ints()
    # The queue for a worker: a FIFO per priority level (see _level_pop)
    cap = min(2 * m + 16, 1 << 12)  # (grown by doubling when full: a queue is rarely the whole horizon's jobs)
    nodes = (np.zeros(cap, dtype=np.int64), np.zeros(cap, dtype=np.int64), np.zeros(cap, dtype=np.int64),
             np.zeros(cap, dtype=np.int64))
    lv = np.full((2, len(pol.level_priority)), -1, dtype=np.int64)  # each level's first and last node
    queued = np.zeros(2, dtype=np.int64)  # [jobs queued, nodes used]
    tat = np.zeros(len(lim.rl_count), dtype=np.int64)  # GCRA: TAT - tat_at, in µs * count (>= 0)
    tat_at = np.full(len(lim.rl_count), draws.origin, dtype=np.int64)  # the bucket's last use (µs)
    b_state = np.zeros(len(lim.b_after), dtype=np.int64)  # 0 closed, 1 open, 2 half-open (trial chosen)
    b_count = np.zeros(len(lim.b_after), dtype=np.int64)
    b_until = np.zeros(len(lim.b_after), dtype=np.int64)
    b_trial = np.full(len(lim.b_after), -1, dtype=np.int64)
    b_trial_att = np.full(len(lim.b_after), -1, dtype=np.int64)
    spent = Dict.empty(_I64, types.float64)  # period * n_a + account -> cost started
    opened = Dict.empty(_I64, types.boolean)
    pair = [(np.int64(0), np.int64(0))]
    pair.pop()
    waiting = [pair.copy() for _ in range(n_a)]  # account -> [(job, since)] held for budget
    hull_lo = draws.out_lo[0] if len(draws.out_lo) else 0
    hull_hi = draws.out_hi[-1] if len(draws.out_hi) else 0
    wake = np.int64(-1)  # the scheduler's next up instant, when its slots wait for it (scheduler_slots)
    todo = new_ints()  # jobs whose state changed to terminal, to follow up (turns, buffers, breakers, live lists)

    for i in range(len(pool.cr_t)):
        push_event(heap, seq, pool.cr_t[i], CRASH, i, 0)

    # The events and the jobs' ready instants, merged; each branch below is one handler. After each event,
    # the jobs it made terminal are followed up (``todo``), then queued jobs take free workers.
    nxt = 0
    while True:
        while nxt < m and jobs.follower[nxt]:
            nxt += 1
        if nxt < m and (len(heap) == 0 or (job_ready[nxt], READY) <= (heap[0][0], heap[0][1])):
            t, kind, a, b = job_ready[nxt], READY, nxt, 0
            nxt += 1
        elif len(heap):
            t, kind, _, a, b = heappop(heap)
        else:
            break
        if kind == READY or kind == HELD_READY:  # overlap, then the breakers, then the queue for a worker
            j = a
            if j_state[j] >= 0:
                continue
            r = job_row[j]
            s = r_s[r]
            key = s * n_inst + job_inst[j]
            first = j_k[j] == 0
            mode = pol.overlap[s]
            cancelled = False
            goes = True  # on to the breakers and the queue (else refused, buffered or back in line)
            if first and (b == 0 or b == 3):  # (3: it left the queue while a run of its schedule was going)
                if mode == BUFFER_LATEST and len(buffers[key]) > b_head[key]:
                    while len(buffers[key]) > b_head[key]:  # a newer time takes the blocked one's place
                        end_job(j_state, j_reason, todo, buffers[key][b_head[key]], SKIPPED, R_OVERLAP)
                        b_head[key] += 1
                cap = pol.max_active[s]
                if mode != ALLOW and running[key] >= max(cap, 1):
                    if mode == SKIP or (mode == BUFFER_ONE and len(buffers[key]) > b_head[key]):
                        end_job(j_state, j_reason, todo, j, SKIPPED, R_OVERLAP)
                    elif mode == CANCEL_OTHER:
                        old = live[key].pop(0)  # the oldest going stops now, keeping its cost
                        att = j_att[old]
                        if att >= 0 and a_status[att] == 0:
                            a_status[att] = 1
                            a_over[att] = t
                            a_outcome[att] = 4
                            finish[job_row[old]] = max(finish[job_row[old]], t)
                            if a_worker[att] >= 0:
                                free_worker(w_busy, w_down, w_hold, w_free, free, a_worker[att], t)
                        leave_live(j_live, running, live, False, key, old)  # (already off the live list)
                        end_job(j_state, j_reason, todo, old, CANCELLED, R_SUPERSEDED)
                        cancelled = True
                    else:
                        buffers[key].append(j)
                    goes = cancelled
                if goes and b == 3:  # room now: straight back to its place at the front (its breakers were met)
                    first_line.append(j)
                    goes = False
            blocked = False
            for q in range(pol.br_ptr[s], pol.br_ptr[s + 1]):
                bq = pol.br_idx[q]
                if b_state[bq] == 2 or (b_state[bq] == 1 and t < b_until[bq]):
                    blocked = True
            if not goes:
                pass  # (then its follow-up and the dispatch: a job back in line may take a free worker now)
            elif blocked:
                end_job(j_state, j_reason, todo, j, SKIPPED if first else FAILED, R_BREAKER)
            else:
                for q in range(pol.br_ptr[s], pol.br_ptr[s + 1]):
                    bq = pol.br_idx[q]
                    if b_state[bq] == 1:  # past open_for: this attempt is the half-open trial
                        b_state[bq] = 2
                        b_trial[bq] = j
                        b_trial_att[bq] = -1
                if cancelled:  # the slot of the run it cancelled is its own (before the queue)
                    first_line.insert(0, j)
                elif b == 2 and has_room(n_workers, free, first_line):
                    # released by the scheduler (a buffer, a turn): the slot its predecessor freed, if still free
                    # (a buffer_latest sync comes after the picks of its instant, which may have taken it)
                    first_line.append(j)
                else:  # else queued as any run (a released run is not going while it waits for a slot)
                    if b == 2:
                        leave_live(j_live, running, live, multi, key, j)
                    if queued[1] == len(nodes[0]):
                        nodes = grown(nodes)
                    level_push(nodes, lv, queued, seq, pol.level[s], t, j)
        elif kind == GO:  # its token's time: first in line for a worker (the one it held is free again)
            if b >= 0 and w_hold[b] == a:
                w_hold[b] = -1
                free_worker(w_busy, w_down, w_hold, w_free, free, b, t)
            if j_state[a] >= 0:
                continue
            if j_tok[a]:
                first_line.insert(0, a)  # (before released jobs: the worker it held is the one just freed)
            else:  # its token was lost with a crashed worker: queued as any job, for a new one
                if queued[1] == len(nodes[0]):
                    nodes = grown(nodes)
                level_push(nodes, lv, queued, seq, pol.level[r_s[job_row[a]]], t, a)
        elif kind == END:
            if a_status[a] != 0:
                continue
            a_status[a] = 1
            a_over[a] = t
            a_outcome[a] = 1 if a_fails[a] else 0
            j = a_job[a]
            j_att[j] = -1
            r = job_row[j]
            w = a_worker[a]
            finish[r] = max(finish[r], a_end[a])
            if w >= 0:
                free_worker(w_busy, w_down, w_hold, w_free, free, w, t)
            if not a_fails[a]:
                effects[r] += 1
                count_result(pol.br_ptr, pol.br_idx, lim.b_after, lim.b_open, b_state, b_count, b_until, b_trial,
                                b_trial_att, r_s[job_row[j]], a, True, t)
                end_job(j_state, j_reason, todo, j, DONE, -1)
            else:
                count_result(pol.br_ptr, pol.br_idx, lim.b_after, lim.b_open, b_state, b_count, b_until, b_trial,
                                b_trial_att, r_s[job_row[j]], a, False, t)
                k = j_k[j]
                cu = uniform_one(rows.key[r], rows.nominal[r], rows.fold[r], seed, CLASS, k - 1) \
                    if draws.share_t < 1.0 else 0.0
                if cu >= draws.share_t + draws.share_r:
                    end_job(j_state, j_reason, todo, j, FAILED, R_PERMANENT)
                elif cu >= draws.share_t:
                    end_job(j_state, j_reason, todo, j, FAILED, R_REVIEW)
                elif k < max_att:
                    ju = 0.0
                    if draws.jitter_mode > 0:
                        ju = uniform_one(rows.key[r], rows.nominal[r], rows.fold[r], seed, RETRY_JITTER, k)
                    # the backoff runs from the failure's report (its acknowledgement), never from the past
                    push_event(heap, seq, t + backoff_wait(k, draws.backoff, draws.max_backoff, draws.jitter_mode, ju),
                               READY, j, 1)
                else:
                    end_job(j_state, j_reason, todo, j, FAILED, R_RETRIES)
        elif kind == CRASH:
            w = pool.cr_w[a]
            w_down[w] = max(w_down[w], t + pool.cr_down[a])
            push_event(heap, seq, w_down[w], UP, w, 0)  # always: a crash with down_for 0 still frees the worker it emptied  # noqa: E501
            if w_hold[w] >= 0:  # a job waiting for its token on it: that token is spent with the worker;
                j_tok[w_hold[w]] = False  # at the token's time (GO) it queues for a worker and a token again
                w_hold[w] = -1
            att = w_busy[w]
            if att >= 0 and a_status[att] == 0:
                a_status[att] = 2
                a_over[att] = t
                a_outcome[att] = 2
                w_busy[w] = -1
                if t >= a_effect[att] and not a_fails[att]:
                    effects[job_row[a_job[att]]] += 1  # done but not acknowledged: the retry repeats it
                st0 = a_start[att]
                if pool.renew and heartbeat > 0:
                    x = st0 + (t - st0) // heartbeat * heartbeat + lease  # the last heartbeat's lease_until
                else:
                    x = st0 + lease
                    if heartbeat >= 0:
                        x = min(x, t + heartbeat)  # Temporal: the heartbeat timeout
                push_event(heap, seq, x, EXPIRE, att, 0)
        elif kind == EXPIRE:
            if a_status[a] == 1:
                continue
            j = a_job[a]
            r = job_row[j]
            if a_status[a] == 0:  # timed out while running: the worker is presumed cancelled
                if a_effect[a] <= t and not a_fails[a]:  # at the effect instant counts as after it (a crash too)
                    effects[r] += 1
                free_worker(w_busy, w_down, w_hold, w_free, free, a_worker[a], t)
                a_over[a] = t
                a_outcome[a] = 3
            a_status[a] = 1
            j_att[j] = -1
            finish[r] = max(finish[r], t)
            count_result(pol.br_ptr, pol.br_idx, lim.b_after, lim.b_open, b_state, b_count, b_until, b_trial,
                            b_trial_att, r_s[job_row[j]], a, False, t)
            if j_state[j] < 0:
                if j_k[j] < max_att:
                    push_event(heap, seq, t, READY, j, 1)
                else:
                    end_job(j_state, j_reason, todo, j, FAILED, R_LEASE)
        elif kind == UP:  # a worker (or, -1, the scheduler) is up again
            if a >= 0 and w_down[a] <= t and w_busy[a] < 0 and w_hold[a] < 0 and not w_free[a]:
                heappush(free, a)
                w_free[a] = True
        elif kind == OPEN:  # a budget period opens for account a: its held jobs, after expiry and catch-up
            if t < draws.end and len(waiting[a]):
                held = waiting[a]
                n = len(held)
                hj = np.empty(n, dtype=np.int64)
                for k in range(n):
                    hj[k] = held[k][0]
                    budget_wait[job_row[hj[k]]] += t - held[k][1]
                held.clear()
                rank_of = Dict.empty(_I64, _I64)  # (schedule, instance) in the order they first waited
                rank = np.empty(n, dtype=np.int64)
                hr = job_row[hj]
                hs = r_s[hr]
                for k in range(n):
                    kk = hs[k] * n_inst + job_inst[hj[k]]
                    if kk not in rank_of:
                        rank_of[kk] = len(rank_of)
                    rank[k] = rank_of[kk]
                    if j_k[hj[k]] > 0:
                        rank[k] = n + k  # a retry is no backlog: alone, in held order
                order, outcome = held_at_opening(t, rank, rows.due[hr], rows.elig[hr], pol.max_lateness[hs],
                                                 pol.edge[hs], pol.catchup[hs], pol.limit[hs])
                for k in range(n):
                    j = hj[order[k]]
                    if j_k[j] > 0 or outcome[k] == ARRIVES:  # (a first attempt meets overlap again)
                        push_event(heap, seq, up_one(t, draws.out_lo, draws.out_hi), HELD_READY, j,
                                   1 if j_k[j] > 0 else 0)
                    elif outcome[k] == EXPIRES:
                        end_job(j_state, j_reason, todo, j, EXPIRED, R_LATE)
                    else:
                        end_job(j_state, j_reason, todo, j, COALESCED if outcome[k] == COALESCED_HELD else SKIPPED,
                                R_CATCHUP)
        elif kind == LATEST:  # a buffer_latest schedule's blocked time, after the picks of this instant
            key = a
            while (len(buffers[key]) > b_head[key]
                   and running[key] < max(pol.max_active[r_s[job_row[buffers[key][b_head[key]]]]], 1)):
                j = buffers[key][b_head[key]]
                b_head[key] += 1
                if j_state[j] < 0:  # (the deadline at the dispatch expires it if too late by now)
                    go_live(j_live, running, live, multi, key, j)
                    push_event(heap, seq, t, READY, j, 2)
                    break

        if kind == END and live_end_next(heap, a_status, t):
            # Every attempt ending at this instant lets go of its worker before the queue is served (the
            # next END dispatches: a live one, so it reaches the dispatch below).
            continue
        # Follow up the jobs that became terminal, then dispatch; a dispatch can end jobs (a deadline, a
        # pause, no budget): follow those up too, until nothing changes at this instant.
        while True:
            # Follow up the jobs that became terminal: their live lists, buffers, the next in turn, a dropped trial.
            while len(todo):
                j = todo.pop(0)
                r = job_row[j]
                s = r_s[r]
                key = s * n_inst + job_inst[j]
                leave_live(j_live, running, live, multi, key, j)
                for q in range(pol.br_ptr[s], pol.br_ptr[s + 1]):
                    bq = pol.br_idx[q]
                    if b_trial[bq] == j and b_trial_att[bq] < 0:  # a trial dropped before it started
                        b_state[bq] = 1
                        b_trial[bq] = -1
                nx = jobs.turn_next[j]
                if nx >= 0 and j_state[nx] < 0:
                    if (not jobs.follower[j] and j_k[j] == 0 and j_state[j] == SKIPPED
                            and (j_reason[j] == R_OVERLAP or j_reason[j] == R_BREAKER or j_reason[j] == R_PAUSED
                                 or j_reason[j] == R_BUDGET)):
                        while nx >= 0:  # the wake-up's submission was refused: the whole backlog with it
                            end_job(j_state, j_reason, todo, nx, SKIPPED, j_reason[j])
                            nx = jobs.turn_next[nx]
                    elif j_state[j] == CANCELLED:  # a newer run superseded the member going: the rest are older
                        while nx >= 0:
                            end_job(j_state, j_reason, todo, nx, SKIPPED, R_OVERLAP)
                            nx = jobs.turn_next[nx]
                    elif j_k[j] == 0 and j_state[j] != EXPIRED:
                        pass  # a member refused at its turn (a pause, no budget): the rest wait, as the loop's turn
                    else:  # the instance takes the next member: going from now (it is its turn, not an overlap)
                        go_live(j_live, running, live, multi, r_s[job_row[nx]] * n_inst + job_inst[nx], nx)
                        release_job(first_line, heap, seq, draws.out_lo, draws.out_hi, t, nx,
                                    has_room(n_workers, free, first_line))
                if buffering and len(buffers[key]) > b_head[key] and (
                        j_k[j] > 0 or j_state[j] == CANCELLED or (jobs.follower[j] and j_k[j] == 0)):
                    # (a run that ended frees its slot, and so does a member refused or expired at its turn, unless
                    # the next member took it; a buffered run refused at its start does not release more)
                    slot_freed(buffers, b_head, key, pol.overlap[s] == BUFFER_LATEST,
                               max(pol.max_active[s], 1) - running[key], j_state, j_nodl, j_live, running, live, multi,
                               first_line, heap, seq, draws.out_lo, draws.out_hi, t, n_workers, free)

            # Dispatch: queued jobs take free workers (any number when none are counted), then, on the worker,
            # their deadline, a pause, their budget and a token (waited for on the worker), then start.
            while len(first_line) or queued[0] > 0:
                if pool.scheduler_slots and hull_lo <= t < hull_hi:
                    up = up_one(t, draws.out_lo, draws.out_hi)
                    if up > t:  # the scheduler is down: its slots start nothing until it is up again
                        if wake != up:
                            wake = up
                            push_event(heap, seq, up, UP, -1, 0)
                        break
                w = -1
                if n_workers >= 0:
                    w = -1
                    while len(free):
                        cand = heappop(free)
                        w_free[cand] = False
                        if w_busy[cand] < 0 and w_hold[cand] < 0 and w_down[cand] <= t:
                            w = cand
                            break
                    if w < 0:
                        break
                if len(first_line):
                    j = first_line.pop(0)
                else:
                    j = level_pop(nodes, lv, queued, pol.level_priority, t)
                r = job_row[j]
                s = r_s[r]
                if j_state[j] >= 0:  # cancelled while it waited
                    if w >= 0:
                        free_worker(w_busy, w_down, w_hold, w_free, free, w, t)
                    continue
                key = s * n_inst + job_inst[j]
                if (j_k[j] == 0 and not j_live[j] and not j_tok[j] and pol.overlap[s] != ALLOW
                        and running[key] >= max(pol.max_active[s], 1)):
                    # It leaves the queue while max_active runs of its schedule are going (one started while
                    # it waited): it meets its overlap mode again.
                    if w >= 0:
                        free_worker(w_busy, w_down, w_hold, w_free, free, w, t)
                    push_event(heap, seq, t, HELD_READY, j, 3)  # (before the picks of this instant)
                    continue
                if j_k[j] == 0 and not j_tok[j]:
                    if t > r_deadline[r] and not j_nodl[j]:
                        end_job(j_state, j_reason, todo, j, EXPIRED, R_LATE)
                        if w >= 0:
                            free_worker(w_busy, w_down, w_hold, w_free, free, w, t)
                        continue
                    if pol.pause_ptr[s] < pol.pause_ptr[s + 1] and paused_at(pol.pause_ptr, pol.pause_lo, pol.pause_hi,
                                                                             s, t):
                        end_job(j_state, j_reason, todo, j, SKIPPED, R_PAUSED)  # a paused schedule starts nothing
                        if w >= 0:
                            free_worker(w_busy, w_down, w_hold, w_free, free, w, t)
                        continue
                acct = pol.account[s]
                if acct >= 0 and not j_tok[j]:
                    g = budgets.group[acct]
                    p = period_of_day(local_day(t, budgets.utc[budgets.utc_ptr[g]:budgets.utc_ptr[g + 1]],
                                                budgets.off[budgets.off_ptr[g]:budgets.off_ptr[g + 1]]),
                                      budgets.kind[g])
                    bkey = p * n_a + acct
                    before = spent.get(bkey, 0.0)
                    if not before + rows.chg[r] <= budgets.ceiling[acct]:  # rules.fits
                        if w >= 0:
                            free_worker(w_busy, w_down, w_hold, w_free, free, w, t)
                        if not pol.wait[s]:
                            end_job(j_state, j_reason, todo, j, SKIPPED if j_k[j] == 0 else FAILED, R_BUDGET)
                            continue
                        if j_k[j] == 0 and j_live[j]:  # released from a buffer or a turn: not going while it waits
                            key = s * n_inst + job_inst[j]
                            leave_live(j_live, running, live, multi, key, j)
                            if buffering and jobs.follower[j] and len(buffers[key]) > b_head[key]:
                                # a member of a backlog in turn waits with the rest of it behind: a run buffered
                                # behind it takes its slot (a buffered run waiting does not release more)
                                slot_freed(buffers, b_head, key, pol.overlap[s] == BUFFER_LATEST,
                                           max(pol.max_active[s], 1) - running[key], j_state, j_nodl, j_live, running,
                                           live, multi, first_line, heap, seq, draws.out_lo, draws.out_hi, t, n_workers,
                                           free)
                        waiting[acct].append((j, t))
                        nk = bkey + n_a
                        if nk not in opened:
                            opened[nk] = True
                            kk = p + 1 - budgets.p0[g]
                            if 0 <= kk < budgets.open_ptr[g + 1] - budgets.open_ptr[g]:
                                push_event(heap, seq, budgets.opens[budgets.open_ptr[g] + kk], OPEN, acct, 0)
                        continue
                    spent[bkey] = before + rows.chg[r]
                rl = pol.rl[s]
                if rl >= 0 and not j_tok[j]:
                    go_at = token_at(tat, tat_at, rl, lim.rl_count[rl], lim.rl_burst[rl], lim.rl_period[rl], t)
                    if j_k[j] == 0 and go_at > r_deadline[r] and not j_nodl[j]:
                        end_job(j_state, j_reason, todo, j, SKIPPED, R_RATE)
                        if w >= 0:
                            free_worker(w_busy, w_down, w_hold, w_free, free, w, t)
                        continue
                    tat[rl] += lim.rl_period[rl]  # the token is taken (tat is relative to t: token_at)
                    rate_wait[r] += go_at - t
                    if go_at > t:
                        j_tok[j] = True
                        if w >= 0:
                            w_hold[w] = j
                        if j_k[j] == 0 and not j_live[j]:  # an instance executing from now (it holds a worker):
                            go_live(j_live, running, live, multi, s * n_inst + job_inst[j], j)  # max_active counts it
                        push_event(heap, seq, go_at, GO, j, w)
                        continue
                # start attempt k of job j at t on worker w
                k = j_k[j]
                j_k[j] = k + 1
                j_tok[j] = False
                attempts[r] += 1
                key = s * n_inst + job_inst[j]
                if k == 0 and not j_live[j]:
                    go_live(j_live, running, live, multi, key, j)
                d, fails = attempt_draws(rows, r, pol.dur[s], pol.sigma[s], draws.p_fail, seed, k)
                e = t + d
                eff = t + np.int64(pol.effect[s] * d) if pol.effect[s] < 1.0 else e
                ack = e + pol.ack[s]
                if not started[r]:
                    started[r] = True
                    start[r] = t
                na = len(a_job)
                a_job.append(j)
                a_start.append(t)
                a_end.append(e)
                a_effect.append(eff)
                a_worker.append(w)
                a_status.append(0)
                a_fails.append(fails)
                a_over.append(-1)
                a_outcome.append(-1)
                j_att[j] = na
                for q in range(pol.br_ptr[s], pol.br_ptr[s + 1]):
                    bq = pol.br_idx[q]
                    if b_trial[bq] == j and b_trial_att[bq] < 0:
                        b_trial_att[bq] = na
                if w >= 0:
                    w_busy[w] = na
                    worker[r] = w
                    if ack > t + lease and not (pool.renew and heartbeat > 0):
                        push_event(heap, seq, t + lease, EXPIRE, na, 0)  # no heartbeat renews it: timed out (Start-To-Close)  # noqa: E501
                        continue
                push_event(heap, seq, ack, END, na, 0)
                if ack == t:  # a zero-length run is over at the instant it started: its END (next in the heap:
                    # END sorts before every arrival at t) frees its slot before the queue is served again, as
                    # every run ending at t does (a finish at t is over for the next pick at t)
                    break
            if len(todo) == 0 or live_end_next(heap, a_status, t):
                break  # (the jobs still to follow up are, after that END)

    unsettled_at_end(waiting, job_row, j_k, j_state, j_reason, budget_wait, draws.end)
    return attempt_log_of(a_job, a_start, a_end, a_over, a_worker, a_outcome,
                          len(a_job) if draws.attempt_log else 0)
