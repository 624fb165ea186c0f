"""Column steps: each run rule applied to every occurrence at once (DESIGN.md §5, steps 1-5).

1. **Eligibility.** ``eligible = due + jitter``; jitter is drawn per
   ``(schedule_id, nominal_local, fold)`` with a stable hash, in ``[0, jitter)``
   and never past the schedule's next occurrence (Temporal's rule).
2. **Pickup.** :func:`.run_rules.wake`: the first up-tick at or after
   ``eligible``, or the instant the scheduler comes back up.
3. **Pauses and revisions.** An occurrence eligible or picked while its
   schedule is paused is ``skipped``/``paused`` (Temporal drops the paused
   span; no catch-up); one of a replaced revision picked after the boundary is
   ``cancelled``/``revision``.
4. **Missed runs.** :func:`catch_up`.
5. **Attempts and durations.** :func:`attempts`.

Then :func:`.order.needs_order` finds the rows that overlap, budgets or capacity
make order-dependent; the rest start at their pickup (:func:`settle_in_place`).
"""

from __future__ import annotations

import numpy as np

from .randomness import DURATION, FAILURE, JITTER, norm_ppf, uniform
from .run_rules import (BIG, CATCHUP, retry_wait, backlog_groups, backlog_outcome, beyond, created_ahead, paused,
                        wake)
from ..times import LAST_US
from .state import R, S, RunState

__all__ = ["eligibility", "pickup", "catch_up", "attempts", "settle_in_place"]


def eligibility(run: RunState) -> None:
    """Step 1: jitter, deterministic per occurrence and capped before the schedule's next occurrence."""
    if not (run.p_jitter > 0).any():
        return
    idx = np.flatnonzero(run.has_due & (run.p_jitter[run.s] > 0))
    if not len(idx):
        return
    run.eligible = run.due.copy()
    jit = run.p_jitter[run.s[idx]]
    u = uniform(run.key[run.s[idx]], run.nominal[idx], run.fold[idx], run.sc.seed, JITTER)
    draw = np.floor(u * jit).astype(np.int64)
    # Never past the schedule's next occurrence (Temporal caps jitter there).
    # Rows with an instant are in due order in the frame, so a stable sort
    # by schedule orders them by (schedule, due).
    runs = np.flatnonzero(run.has_due)
    order = runs[np.argsort(run.s[runs], kind="stable")]
    nxt = np.full(run.n, BIG, dtype=np.int64)
    same = run.s[order][1:] == run.s[order][:-1]
    nxt[order[:-1][same]] = run.due[order[1:][same]]
    cap = np.maximum(nxt[idx] - run.due[idx] - 1, 0)
    run.eligible[idx] = run.due[idx] + np.minimum(draw, cap)


def pickup(run: RunState) -> None:
    """Steps 2-3: each occurrence's wake-up, then pauses and revision boundaries."""
    recovery = run.per_row(run.p_recovery)
    sleep_end = run.per_row(run.p_sleep_end)
    # a row without an instant: eligible 0, pick 0
    pick = wake(run.eligible, run.sc.tick_us, run.outages, recovery, run.suspends, sleep_end)
    run.pick = run.start = pick
    _pauses(run)
    _never_created(run)
    _revisions(run)


def _revisions(run: RunState) -> None:
    """Occurrences of a replaced revision not yet started at its boundary: ``cancelled``/``revision``."""
    for at, sid, rev in run.boundaries:
        member = np.array([s.id == sid and s.revision == rev for s in run.scheds], dtype=bool)
        rows = np.flatnonzero(run.has_due & (run.state < 0) & member[run.s] & (run.pick >= at))
        run.state[rows] = S["cancelled"]
        run.reason[rows] = R["revision"]


def _pauses(run: RunState) -> None:
    """Occurrences eligible or picked in a paused span: ``skipped``/``paused``, or, for a schedule whose
    policy has ``on_resume="catch_up"``, picked at the resume (its first wake-up from the span's end), where
    :func:`catch_up` makes them a backlog like any other (Airflow creates the runs of a DAG's paused
    intervals when it is unpaused: ``catchup=True`` every one, ``False`` the latest;
    ``serialization/definitions/dag.py`` ``next_dagrun_info`` from the last run's interval)."""
    if not run.pauses:
        return
    by_spans: dict[tuple[tuple[int, int], ...], list[int]] = {}
    for i, items in run.pauses.items():
        by_spans.setdefault(tuple(items), []).append(i)
    resumes = np.array([p.on_resume == "catch_up" for p in run.pol], dtype=bool)
    for spans, members in by_spans.items():
        member = np.zeros(len(run.scheds), bool)
        member[members] = True
        rows = np.flatnonzero(run.has_due & (run.state < 0) & member[run.s])
        if resumes[members].any():
            rows = _picked_at_resume(run, rows[resumes[run.s[rows]]], spans, rows)
        hit = rows[paused(list(spans), run.eligible[rows]) | paused(list(spans), run.pick[rows])]
        run.state[hit] = S["skipped"]
        run.reason[hit] = R["paused"]


def _never_created(run: RunState) -> None:
    """Occurrences due while the scheduler was down that a scheduler creating runs ahead
    (``Policy.ahead_runs``: Prefect's server) had not created when it went down: ``skipped``/``catchup``
    (they never exist; :func:`.run_rules.created_ahead` says which were created)."""
    flagged = np.array([p.ahead_runs is not None for p in run.pol], dtype=bool)
    if not run.outages or not flagged.any():
        return
    rows = np.flatnonzero(run.has_due & (run.state < 0) & flagged[run.s])
    runs = np.array([p.ahead_runs or 0 for p in run.pol], dtype=np.int64)[run.s[rows]]
    ahead = np.array([p.ahead_us for p in run.pol], dtype=np.int64)[run.s[rows]]
    for a, b in run.outages:
        due, s = run.due[rows], run.s[rows]
        created = created_ahead(s, due, a, runs, ahead)
        lost = (due >= a) & (due < b) & ~created
        # A scheduler that keeps no minimum (ahead_runs=0) and is left with no created run after its return
        # never selects the schedule again: it is never topped up.
        left = np.zeros(len(run.scheds), dtype=bool)
        left[s[created & (due >= b)]] = True
        lost |= (runs == 0) & (due >= b) & ~left[s]
        run.state[rows[lost]] = S["skipped"]
        run.reason[rows[lost]] = R["catchup"]
        keep = ~lost
        rows, runs, ahead = rows[keep], runs[keep], ahead[keep]


def _picked_at_resume(run: RunState, catch: np.ndarray, spans: tuple[tuple[int, int], ...],
                      rows: np.ndarray) -> np.ndarray:
    """Move the ``catch`` rows that fall in a span to the first wake-up at or after its end; the other rows."""
    for a, b in spans:  # in order: a resume inside a later span moves on to that one's end
        inside = catch[((run.eligible[catch] >= a) & (run.eligible[catch] < b))
                       | ((run.pick[catch] >= a) & (run.pick[catch] < b))]
        if not len(inside):
            continue
        at = np.full(len(inside), b, dtype=np.int64)
        run.pick[inside] = wake(at, run.sc.tick_us, run.outages, run.per_row(run.p_recovery, inside),
                                run.suspends, run.per_row(run.p_sleep_end, inside))
    return np.setdiff1d(rows, catch, assume_unique=True)


def catch_up(run: RunState) -> None:
    """Step 4: missed occurrences, their expiry, and each wake-up's backlog under its catch-up mode.

    An occurrence is *missed* when its lateness is past ``misfire_grace``
    (:func:`.run_rules.beyond`, with the scheduler's edge). Any occurrence past
    ``max_lateness`` is ``expired`` (so a limit tighter than the grace holds
    too). The rest of a wake-up's missed rows form
    its backlog, ordered by due instant. For the coalescing modes
    (``latest``, ``earliest``, ``bounded``) and a backlog run ``in_turn``, the
    on-time rows the same wake-up picks belong to it too: such a scheduler
    takes everything due so far as one list (APScheduler ``_get_run_times``
    then ``run_times[-1:]``, Kubernetes ``mostRecentScheduleTime``, Temporal's
    buffer of the whole time range); ``skip`` drops only what was missed (cron
    runs the current minute's jobs). A backlog larger than
    ``max_missed`` leaves the schedule stuck (:func:`_stuck`); otherwise
    :func:`.run_rules.backlog_outcome` decides.
    """
    live = run.has_due & (run.state < 0)
    late = run.pick - run.eligible
    edge = run.per_row(run.p_edge)
    missed = beyond(late, run.per_row(run.p_grace), edge)
    if run.outages and run.p_down_missed.any():
        missed |= _due_while_down(run) & run.p_down_missed[run.s]
    missed &= live
    if (run.p_maxlate < BIG).any():
        # A run later than max_lateness is never started, missed or not (Kubernetes'
        # deadline, APScheduler's grace, Temporal's window, EventBridge's event age).
        # (Expired missed rows still mark their wake-up as one that found a misfire.)
        gone = beyond(late, run.per_row(run.p_maxlate), edge)
        gone &= live
        run.state[gone] = S["expired"]
        run.reason[gone] = R["max_lateness"]
        live &= ~gone
        del gone
    m = np.flatnonzero(missed)
    del missed, late
    if not len(m):
        return
    s_m = run.s[m]
    expired = run.state[m] == S["expired"]
    # Each wake-up that found a misfire has one mode: suspend_catchup when one of its
    # missed rows was left by a short enough suspend, else catchup. For a coalescing
    # mode (or a backlog run in turn) the on-time rows it picks join its backlog.
    picks = np.unique(run.pick[m])
    key = lambda rows: np.searchsorted(picks, run.pick[rows]) * len(run.scheds) + run.s[rows]  # noqa: E731
    wakes, inv = np.unique(key(m), return_inverse=True)
    w_s = wakes % len(run.scheds)
    after_suspend = np.bincount(inv, weights=_left_by_suspend(run, m, s_m), minlength=len(wakes)) > 0
    w_mode = np.where(after_suspend, run.p_suspend_catchup[w_s], run.p_catchup[w_s])
    coalescing = np.array([CATCHUP["latest"], CATCHUP["earliest"], CATCHUP["bounded"], CATCHUP["earliest_and_latest"]])
    joins = np.isin(w_mode, coalescing) | (run.p_in_turn[w_s] & (w_mode == CATCHUP["all"]))
    members = m[~expired]
    if joins.any():
        cand = np.flatnonzero(live & (run.pick >= picks[0]) & (run.pick <= picks[-1]))
        cand = cand[np.isin(run.pick[cand], picks) & (run.state[cand] < 0)]
        cand = cand[np.isin(key(cand), wakes[joins])]
        members = np.union1d(members, cand)
    if not len(members):
        return
    s_b = run.s[members]
    order, pos, size = backlog_groups(s_b, run.pick[members], run.due[members])
    rows, s_o = members[order], s_b[order]
    stuck = size > run.p_maxmissed[s_o]
    if stuck.any():
        _stuck(run, rows[stuck])
    mode = w_mode[np.searchsorted(wakes, key(rows))]
    runs, coalesced = backlog_outcome(mode, run.p_limit[s_o], pos, size)
    ok = run.state[rows] < 0  # not stuck
    run.state[rows[~runs & coalesced & ok]] = S["coalesced"]
    run.state[rows[~runs & ~coalesced & ok]] = S["skipped"]
    run.reason[rows[~runs & ok]] = R["catchup"]
    # A backlog worked through in turn by one instance needs the event loop
    # (each member starts when the previous one ends); mark its runners.
    in_turn = runs & ok & run.p_in_turn[s_o] & (size > 1)
    if in_turn.any():
        run.in_turn = np.zeros(run.n, dtype=bool) if run.in_turn is None else run.in_turn
        run.in_turn[rows[in_turn]] = True


def _due_while_down(run: RunState) -> np.ndarray:
    """Rows that became due while the scheduler was down (an ``Outage(kind="down")``), or exactly as it came
    back, and were picked then or after.

    (systemd computes the next elapse strictly after the boot instant: timer.c, calendarspec.c.)

    (A suspended process keeps its state: what it missed is decided by its grace.)
    """
    starts = np.array([a for a, _ in run.outages], dtype=np.int64)
    ends = np.array([e for _, e in run.outages], dtype=np.int64)
    j = np.searchsorted(ends, run.pick, side="right") - 1  # the last outage over by the pick
    jj = np.maximum(j, 0)
    # The due instant, not the jittered one: systemd adds RandomizedDelaySec= only after it has chosen the
    # next elapse strictly after boot (timer.c), so an elapse at or before boot never runs, however delayed.
    return (j >= 0) & (run.due >= starts[jj]) & (run.due <= ends[jj]) & ~run.suspends[jj] & run.has_due


def _left_by_suspend(run: RunState, rows: np.ndarray, s: np.ndarray) -> np.ndarray:
    """Whether each missed row was left by a suspend no longer than its schedule's ``suspend_limit``.

    That is: the last outage that ended at or before the row's wake-up, and
    after the row was due, was an ``Outage(kind="suspend")``.
    """
    if not run.suspends.any():
        return np.zeros(len(rows), dtype=bool)
    ends = np.array([e for _, e in run.outages], dtype=np.int64)
    starts = np.array([a for a, _ in run.outages], dtype=np.int64)
    j = np.searchsorted(ends, run.pick[rows], side="right") - 1
    jj = np.maximum(j, 0)
    left = (j >= 0) & (run.eligible[rows] < ends[jj]) & run.suspends[jj]
    left &= ends[jj] - starts[jj] <= run.p_suspend_limit[s]
    return left


def _stuck(run: RunState, rows: np.ndarray) -> None:
    """Too many missed times: the backlog and everything later of the schedule revision are ``skipped``/``stuck``.

    The v1 Kubernetes controller (and the docs) return an error when more than
    100 schedule times were missed: no Job is created and ``LastScheduleTime``
    is not advanced, so every later sync counts at least as many missed times
    and fails again, until the CronJob changes (a :class:`~calsim.Revise`
    starts a new revision, which is not stuck).
    """
    first = np.full(len(run.scheds), BIG, dtype=np.int64)
    np.minimum.at(first, run.s[rows], run.pick[rows])
    later = np.flatnonzero(run.has_due & (run.state < 0) & (run.pick >= first[run.s]))
    hit = np.union1d(rows, later)
    run.state[hit] = S["skipped"]
    run.reason[hit] = R["stuck"]


def attempts(run: RunState) -> None:
    """Step 5: attempts, success and occupancy (start to last attempt's end) of every row that runs.

    The occupancy is written into ``finish``; :func:`.order.needs_order` adds the start.
    """
    todo = run.has_due & (run.state < 0)
    run.run = todo
    f = run.sc.failures
    max_att = 1 if f is None else f.max_attempts
    p_fail = 0.0 if f is None else f.probability
    if p_fail == 0 and not (run.p_sigma > 0).any():
        # Every run is one attempt of its schedule's fixed duration, and it succeeds.
        np.copyto(run.finish, run.per_row(run.p_dur), where=todo)
        np.copyto(run.attempts_n, 1, where=todo)
        run.success = todo
        run.fixed_duration = True
        return
    run.fixed_duration = False
    run.success = np.zeros(run.n, dtype=bool)
    # Chunk by chunk (instant order): each chunk's draws and temporaries stay
    # small and in cache; whole-column temporaries cost ~1 GB at a 10k year.
    for lo, hi in run.chunks():
        _attempts_of(run, lo + np.flatnonzero(todo[lo:hi]), f, max_att, p_fail)


def _attempts_of(run: RunState, idx: np.ndarray, f, max_att: int, p_fail: float) -> None:
    """:func:`attempts` for the rows ``idx`` (each row's draws depend on the row alone)."""
    s = run.s[idx]
    nominal, fold = run.nominal[idx], run.fold[idx]
    key, dur0, sigma = run.key[s], run.p_dur[s], run.p_sigma[s]
    occupancy = np.zeros(len(idx), dtype=np.int64)
    attempts_ = np.zeros(len(idx), dtype=np.int32)
    succeeded = np.zeros(len(idx), dtype=bool)
    alive = np.ones(len(idx), dtype=bool)
    lognormal = bool((sigma > 0).any())
    for k in range(max_att):
        a = np.flatnonzero(alive)
        if not len(a):
            break
        dur = dur0[a].astype(np.float64)
        if lognormal:
            sig = sigma[a]
            u = uniform(key[a], nominal[a], fold[a], run.sc.seed, DURATION, k)
            z = norm_ppf(np.clip(u, 1e-12, 1 - 1e-12))
            dur = np.where(sig > 0, dur * np.exp(sig * z), dur)
        occupancy[a] += dur.astype(np.int64)
        attempts_[a] += 1
        if p_fail > 0:
            ok = uniform(key[a], nominal[a], fold[a], run.sc.seed, FAILURE, k) >= p_fail
        else:
            ok = np.ones(len(a), dtype=bool)
        succeeded[a[ok]] = True
        alive[a[ok]] = False
        if k + 1 < max_att and f is not None:
            retry = a[~ok]
            # Saturating: forty doublings of a minute are 2**39 minutes, past any instant a frame can hold.
            occupancy[retry] = np.minimum(occupancy[retry], BIG - retry_wait(f.backoff_us, k + 1)) \
                + retry_wait(f.backoff_us, k + 1)
    # A run whose retries end after 9999-12-31 is shown ending then (it never ends within any horizon).
    run.finish[idx] = np.minimum(occupancy, LAST_US - run.pick[idx])
    run.attempts_n[idx] = attempts_
    run.success[idx] = succeeded


def settle_in_place(run: RunState, rows: np.ndarray) -> None:
    """Rows that need no order start at their pickup (``start`` is ``pick``): done, or failed."""
    np.copyto(run.started, rows)
    np.copyto(run.state, S["done"], where=rows & run.success)
    failed = rows & ~run.success
    if failed.any():
        np.copyto(run.state, S["failed"], where=failed)
        np.copyto(run.reason, R["retries_exhausted"], where=failed)
    run.settled["columns"] += int(np.count_nonzero(rows))
