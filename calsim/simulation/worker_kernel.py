"""The worker-level loop's compiled body: one attempt at a time, through breakers, rate limits and workers.

:func:`settle` is the one implementation (numba, ``cache=True``);
:mod:`.worker_loop` lays its arrays out and writes the outcomes back. A *job*
is one scheduler instance's execution of an occurrence (one per occurrence,
or one per instance with ``dedupe="none"``); an *attempt* is one try of a job
on a worker. The rules (``docs/research/worker_faults.md``):

* an attempt that becomes ready meets, in order: the overlap mode (``skip``:
  a job of the same schedule and instance still going), the breakers of its
  schedule, a worker (the lowest-numbered free one; waiting jobs by
  priority, then ready order), then its rate limit (a token, GCRA in
  integers), waited for on the worker, as a client-side limiter's ``Wait``
  in the task does, so the source never sees more than the bucket allows;
* a started attempt ends at ``start + duration`` and is acknowledged
  ``ack_delay`` later, holding its worker until then; its effect happens at
  ``start + effect_at * duration`` unless the attempt fails;
* a crash loses the worker's attempt: its effect counts if the crash came at
  or after the effect point, and the job is requeued at
  ``min(start + lease, crash + heartbeat)``, attempt + 1 (``lease_expired``);
  an attempt whose acknowledgement would come after ``start + lease`` is
  timed out there the same way;
* a failed attempt is transient (retry after the capped, jittered backoff, counted from its report,
  or ``retries_exhausted``), ``review`` or ``permanent``, drawn per attempt.

Events at one instant: a worker coming up, then attempt ends, crashes,
lease expiries, then jobs becoming ready (occurrences before retries), then
jobs that got their token. Draws are :func:`.randomness.uniform`'s, computed
here per attempt (:func:`uniform`), so a run's draws do not depend on order.
"""

from __future__ import annotations

from heapq import heappop, heappush

import numpy as np
from numba import njit

from .event_kernel import _ints
from .randomness import CLASS, DURATION, FAILURE, RETRY_JITTER
from .state import R, S

__all__ = ["settle", "uniform", "norm_ppf"]

UP, END, CRASH, EXPIRE, READY, GO = 0, 1, 2, 3, 4, 5  # event kinds, in their order at one instant
DONE, FAILED, SKIPPED, EXPIRED = S["done"], S["failed"], S["skipped"], S["expired"]
R_OVERLAP, R_LATE, R_RETRIES, R_LEASE, R_REVIEW, R_PERMANENT, R_RATE, R_BREAKER = (R[k] for k in (
    "overlap", "max_lateness", "retries_exhausted", "lease_expired", "review", "permanent", "rate_limited",
    "breaker_open"))
BIGT = np.iinfo(np.int64).max // 4
_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_M1 = np.uint64(0xBF58476D1CE4E5B9)
_M2 = np.uint64(0x94D049BB133111EB)


@njit(cache=True)
def _mix(x):
    x = x + _GOLDEN
    x = (x ^ (x >> np.uint64(30))) * _M1
    x = (x ^ (x >> np.uint64(27))) * _M2
    return x ^ (x >> np.uint64(31))


@njit(cache=True)
def uniform(key, nominal, fold, seed, tag, attempt):
    """:func:`.randomness.uniform` for one draw (``seed`` already as its uint64 value)."""
    x = _mix(np.uint64(key) ^ np.uint64(seed))
    x = _mix(x ^ np.uint64(nominal))
    x = _mix(x ^ (np.uint64(fold) << np.uint64(8)) ^ np.uint64(tag) ^ (np.uint64(attempt) << np.uint64(16)))
    return np.float64(x >> np.uint64(11)) * (1.0 / 9007199254740992.0)


@njit(cache=True)
def norm_ppf(u):
    """:func:`.columns._norm_ppf` for one value (Acklam's approximation, the same formulas)."""
    if u < 0.02425:
        q = np.sqrt(-2 * np.log(max(u, 1e-300)))
        return (((((-7.784894002430293e-03 * q - 3.223964580411365e-01) * q - 2.400758277161838e00) * q
                  - 2.549732539343734e00) * q + 4.374664141464968e00) * q + 2.938163982698783e00) / \
            ((((7.784695709041462e-03 * q + 3.224671290700398e-01) * q + 2.445134137142996e00) * q
              + 3.754408661907416e00) * q + 1)
    if u > 1 - 0.02425:
        q = np.sqrt(-2 * np.log(max(1 - u, 1e-300)))
        return -(((((-7.784894002430293e-03 * q - 3.223964580411365e-01) * q - 2.400758277161838e00) * q
                   - 2.549732539343734e00) * q + 4.374664141464968e00) * q + 2.938163982698783e00) / \
            ((((7.784695709041462e-03 * q + 3.224671290700398e-01) * q + 2.445134137142996e00) * q
              + 3.754408661907416e00) * q + 1)
    um = u - 0.5
    r = um * um
    return (((((-3.969683028665376e01 * r + 2.209460984245205e02) * r - 2.759285104469687e02) * r
              + 1.383577518672690e02) * r - 3.066479806614716e01) * r + 2.506628277459239e00) * um / \
        (((((-5.447609879822406e01 * r + 1.615858368580409e02) * r - 1.556989798598866e02) * r
           + 6.680131188771972e01) * r - 1.328068155288572e01) * r + 1)


@njit(cache=True)
def _bools():
    out = [False]
    out.pop()
    return out


@njit(cache=True)
def backoff_wait(k, backoff, cap, mode, u):
    """The wait before retry ``k`` (1 for the second attempt): ``min(cap, backoff * 2**(k-1))``, then jitter
    (0 none, 1 full: ``u * d``, 2 equal: ``d/2 + u * d/2``)."""
    d = backoff
    for _ in range(k - 1):
        if d >= cap or d > BIGT // 2:
            break
        d *= 2
    d = min(d, cap)
    if mode == 1:
        return np.int64(u * d)
    if mode == 2:
        return d // 2 + np.int64(u * (d - d // 2))
    return d


@njit(cache=True)
def settle(job_row, job_inst, job_ready, n_inst,
           r_s, r_deadline, r_key, r_nominal, r_fold,
           p_dur, p_sigma, p_skip, p_rl, p_effect, p_ack, p_priority, br_ptr, br_idx,
           b_after, b_open, rl_count, rl_period, rl_burst,
           n_workers, lease, heartbeat, cr_t, cr_w, cr_down,
           seed, origin, p_fail, max_att, backoff, max_backoff, jitter_mode, share_t, share_r,
           j_state, j_reason, start, finish, started, attempts, effects, worker, rate_wait):
    """Settle every job (arrays by job, sorted by ``job_ready``; per row; per schedule; per breaker; per
    rate limit; per crash); writes each job's terminal ``j_state``/``j_reason`` and the rows' outcomes.

    Returns the attempt log, one column per attempt in start order: job, start, end (start + duration),
    when it let go of its worker, worker (-1: none numbered), outcome (0 succeeded, 1 failed, 2 lost in a
    crash, 3 timed out by its lease)."""
    m = len(job_row)
    n_s = len(p_dur)
    # Native (reflected) lists: numba's typed List costs ~10x more per access.
    heap = [(np.int64(0), np.int64(0), np.int64(0), np.int64(0), np.int64(0))]
    heap.pop()
    seq = np.zeros(1, dtype=np.int64)
    j_k = np.zeros(m, dtype=np.int64)  # attempts made
    j_tok = np.zeros(m, dtype=np.bool_)  # holds a token for its next attempt
    j_live = np.zeros(m, dtype=np.bool_)  # started and not terminal (overlap "skip")
    running = np.zeros(n_s * n_inst, dtype=np.int64)
    # attempts
    a_job = _ints()
    a_start = _ints()
    a_end = _ints()
    a_effect = _ints()
    a_worker = _ints()
    a_status = _ints()  # 0 running, 1 over, 2 lost in a crash (awaiting its expiry)
    a_fails = _bools()
    a_over = _ints()  # when it let go of its worker (end + ack, crash, lease)
    a_outcome = _ints()  # 0 succeeded, 1 failed, 2 lost in a crash, 3 timed out
    # workers
    n_w = max(n_workers, 0)
    w_busy = np.full(n_w, -1, dtype=np.int64)
    w_down = np.zeros(n_w, dtype=np.int64)  # down until
    w_free = np.zeros(n_w, dtype=np.bool_)  # in the free heap
    w_hold = np.full(n_w, -1, dtype=np.int64)  # the job it holds while that job waits for a token
    free = _ints()
    for w in range(n_w):
        free.append(w)
        w_free[w] = True
    waiting = [(np.int64(0), np.int64(0), np.int64(0), np.int64(0))]  # (-priority, ready, seq, job)
    waiting.pop()
    # rate limits: TAT in units of µs * count, relative to origin (bucket full at the start)
    tat = np.zeros(len(rl_count), dtype=np.int64)
    # breakers: 0 closed, 1 open, 2 half-open (trial job chosen)
    b_state = np.zeros(len(b_after), dtype=np.int64)
    b_count = np.zeros(len(b_after), dtype=np.int64)
    b_until = np.zeros(len(b_after), dtype=np.int64)
    b_trial = np.full(len(b_after), -1, dtype=np.int64)  # the trial's job
    b_trial_att = np.full(len(b_after), -1, dtype=np.int64)

    def push(t, kind, a, b):
        seq[0] += 1
        heappush(heap, (t, kind, seq[0], a, b))

    for i in range(len(cr_t)):
        push(cr_t[i], CRASH, i, 0)

    def terminal(j, st, rs, t):
        j_state[j] = st
        j_reason[j] = rs
        r = job_row[j]
        if j_live[j]:
            j_live[j] = False
            running[r_s[r] * n_inst + job_inst[j]] -= 1
        for q in range(br_ptr[r_s[r]], br_ptr[r_s[r] + 1]):
            b = br_idx[q]
            if b_trial[b] == j and b_trial_att[b] < 0:  # a trial dropped before it started
                b_state[b] = 1
                b_trial[b] = -1

    def breaker_result(j, a, ok, t):
        s = r_s[job_row[j]]
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

    def requeue_or_end(j, t, rs):
        if j_k[j] < max_att:
            push(t, READY, j, 1)
        else:
            terminal(j, FAILED, rs, t)

    def take_worker(t):
        while len(free):
            w = heappop(free)
            w_free[w] = False
            if w_busy[w] < 0 and w_hold[w] < 0 and w_down[w] <= t:
                return w
        return -1

    def release(w, t):
        w_busy[w] = -1
        if w_down[w] <= t and w_hold[w] < 0 and not w_free[w]:
            heappush(free, w)
            w_free[w] = True

    def enqueue(j, t, first_in_line):
        """Queue ``j`` for a worker (by priority, then ready instant; a job whose token came goes first)."""
        seq[0] += 1
        key = -BIGT if first_in_line else -p_priority[r_s[job_row[j]]]
        heappush(waiting, (key, t, seq[0], j))

    # One flat loop, each handler written once: numba inlines an inner function at every call site, and
    # handlers calling handlers multiplied the compiled code (minutes to compile instead of seconds).
    nxt = 0
    while nxt < m or len(heap):
        if nxt < m and (len(heap) == 0 or (job_ready[nxt], READY) <= (heap[0][0], heap[0][1])):
            t, kind, a, b = job_ready[nxt], READY, nxt, 0
            nxt += 1
        else:
            t, kind, _, a, b = heappop(heap)
        if kind == READY:  # overlap, then the breakers, then the queue for a worker
            j = a
            r = job_row[j]
            s = r_s[r]
            first = j_k[j] == 0
            if first and p_skip[s] and running[s * n_inst + job_inst[j]] > 0:
                terminal(j, SKIPPED, R_OVERLAP, t)
                continue
            blocked = False
            for q in range(br_ptr[s], br_ptr[s + 1]):
                bq = br_idx[q]
                if b_state[bq] == 2 or (b_state[bq] == 1 and t < b_until[bq]):
                    blocked = True
            if blocked:
                terminal(j, SKIPPED if first else FAILED, R_BREAKER, t)
                continue
            for q in range(br_ptr[s], br_ptr[s + 1]):
                bq = br_idx[q]
                if b_state[bq] == 1:  # past open_for: this attempt is the half-open trial
                    b_state[bq] = 2
                    b_trial[bq] = j
                    b_trial_att[bq] = -1
            enqueue(j, t, False)
        elif kind == GO:  # its token's time: first in line for a worker (the one it held is free again)
            if b >= 0 and w_hold[b] == a:
                w_hold[b] = -1
                release(b, t)
            enqueue(a, t, j_tok[a])  # a token lost with a crashed worker: queued as any job, for a new one
        elif kind == END:
            if a_status[a] != 0:
                continue
            a_status[a] = 1
            a_over[a] = t
            a_outcome[a] = 1 if a_fails[a] else 0
            j = a_job[a]
            r = job_row[j]
            w = a_worker[a]
            finish[r] = max(finish[r], a_end[a])
            if w >= 0:
                release(w, t)
            if not a_fails[a]:
                effects[r] += 1
                breaker_result(j, a, True, t)
                terminal(j, DONE, -1, t)
            else:
                breaker_result(j, a, False, t)
                k = j_k[j]
                cu = uniform(r_key[r], r_nominal[r], r_fold[r], seed, CLASS, k - 1) if share_t < 1.0 else 0.0
                if cu >= share_t + share_r:
                    terminal(j, FAILED, R_PERMANENT, t)
                elif cu >= share_t:
                    terminal(j, FAILED, R_REVIEW, t)
                elif k < max_att:
                    ju = 0.0
                    if jitter_mode > 0:
                        ju = uniform(r_key[r], r_nominal[r], r_fold[r], seed, RETRY_JITTER, k)
                    # the backoff runs from the failure's report (its acknowledgement), never from the past
                    push(t + backoff_wait(k, backoff, max_backoff, jitter_mode, ju), READY, j, 1)
                else:
                    terminal(j, FAILED, R_RETRIES, t)
        elif kind == CRASH:
            w = cr_w[a]
            w_down[w] = max(w_down[w], t + cr_down[a])
            push(w_down[w], UP, w, 0)  # always: a crash with down_for 0 still frees the worker it emptied
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
                x = a_start[att] + lease
                if heartbeat >= 0:
                    x = min(x, t + heartbeat)
                push(x, EXPIRE, att, 0)
        elif kind == EXPIRE:
            if a_status[a] == 1:
                continue
            j = a_job[a]
            r = job_row[j]
            if a_status[a] == 0:  # timed out while running: the worker is presumed cancelled
                if a_effect[a] <= t and not a_fails[a]:  # at the effect instant counts as after it (a crash too)
                    effects[r] += 1
                release(a_worker[a], t)
                a_over[a] = t
                a_outcome[a] = 3
            a_status[a] = 1
            finish[r] = max(finish[r], t)
            breaker_result(j, a, False, t)
            requeue_or_end(j, t, R_LEASE)
        elif kind == UP:
            if w_down[a] <= t and w_busy[a] < 0 and w_hold[a] < 0 and not w_free[a]:
                heappush(free, a)
                w_free[a] = True
        # Dispatch: queued jobs take free workers (any number when none are counted), then a token
        # (waited for on the worker, as a client-side limiter's Wait in the task), then start.
        while len(waiting):
            w = -1
            if n_workers >= 0:
                w = take_worker(t)
                if w < 0:
                    break
            j = heappop(waiting)[3]
            r = job_row[j]
            s = r_s[r]
            if j_k[j] == 0 and not j_tok[j] and t > r_deadline[r]:
                terminal(j, EXPIRED, R_LATE, t)
                if w >= 0:
                    release(w, t)
                continue
            lim = p_rl[s]
            if lim >= 0 and not j_tok[j]:
                c = rl_count[lim]
                rel = t - origin
                need = tat[lim] - (rl_burst[lim] - 1) * rl_period[lim]
                go_at = rel
                if need > rel * c:
                    go_at = (need + c - 1) // c
                if j_k[j] == 0 and go_at + origin > r_deadline[r]:
                    terminal(j, SKIPPED, R_RATE, t)
                    if w >= 0:
                        release(w, t)
                    continue
                tat[lim] = max(tat[lim], go_at * c) + rl_period[lim]
                rate_wait[r] += go_at + origin - t
                if go_at + origin > t:
                    j_tok[j] = True
                    if w >= 0:
                        w_hold[w] = j
                    push(go_at + origin, GO, j, w)
                    continue
            # start attempt k of job j at t on worker w
            k = j_k[j]
            j_k[j] = k + 1
            j_tok[j] = False
            attempts[r] += 1
            if k == 0:
                j_live[j] = True
                running[s * n_inst + job_inst[j]] += 1
            d = p_dur[s]
            if p_sigma[s] > 0:
                u = uniform(r_key[r], r_nominal[r], r_fold[r], seed, DURATION, k)
                z = norm_ppf(min(max(u, 1e-12), 1 - 1e-12))
                d = np.int64(np.float64(d) * np.exp(p_sigma[s] * z))
            fails = False
            if p_fail > 0:
                fails = uniform(r_key[r], r_nominal[r], r_fold[r], seed, FAILURE, k) < p_fail
            e = t + d
            eff = t + np.int64(p_effect[s] * d) if p_effect[s] < 1.0 else e
            ack = e + p_ack[s]
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
            for q in range(br_ptr[s], br_ptr[s + 1]):
                bq = br_idx[q]
                if b_trial[bq] == j and b_trial_att[bq] < 0:
                    b_trial_att[bq] = na
            if w >= 0:
                w_busy[w] = na
                worker[r] = w
                if ack > t + lease:
                    push(t + lease, EXPIRE, na, 0)  # timed out: Start-To-Close
                    continue
            push(ack, END, na, 0)
    n_a = len(a_job)
    log = np.empty((6, n_a), dtype=np.int64)
    for a in range(n_a):
        log[0, a] = a_job[a]
        log[1, a] = a_start[a]
        log[2, a] = a_end[a]
        log[3, a] = a_over[a]
        log[4, a] = a_worker[a]
        log[5, a] = a_outcome[a]
    return log
