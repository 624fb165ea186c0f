"""The ordered event loop: rows whose outcome depends on what ran before them, one event at a time.

Overlap (a run of the same schedule still going), budgets (what an account
started in a period), capacity (how many runs are going) and backlogs run in
turn need order. Events are processed by time; at one instant a finish comes
before a budget period's opening, which comes before the picks (by schedule,
then due instant). Every rule is :mod:`.rules`' (scheduler up, pauses,
budget period and charge, catch-up and expiry of held runs).

A run leaving the capacity queue meets its schedule's overlap mode again at
its actual start (the run it queued behind may be over, or a sibling that
left the queue first may be going).
"""

from __future__ import annotations

import heapq

import numpy as np

from .rules import OVERLAP, beyond, charge, fits, held_outcome, paused, period_of, period_start, up
from .state import NONE, R, S, RunState

__all__ = ["event_loop", "AGEING_US"]

# A queued run gains one priority level per hour it waits for capacity, so
# that low-priority work is delayed, never starved (the DESIGN's "ageing").
AGEING_US = 3600 * 1_000_000

FINISH, OPEN, PICK, LATEST = 0, 1, 2, 3  # event kinds, in their order at one instant


def event_loop(run: RunState, rows: np.ndarray, occupancy: np.ndarray, success: np.ndarray) -> None:
    """Settle ``rows`` (each with its occupancy and success) one event at a time."""
    sc = run.sc
    run.settled["event_loop"] += len(rows)
    occ = dict(zip(rows.tolist(), occupancy.tolist()))
    ok = dict(zip(rows.tolist(), success.tolist()))
    budgets = sc.budgets
    spent: dict[tuple[int, int], float] = {}
    running: dict[int, tuple[int, int]] = {}  # schedule -> (row, finish)
    buffers: dict[int, list[int]] = {}
    turns: dict[int, list[int]] = {}  # schedule -> the rest of a backlog run in turn, in due order
    waiting: dict[int, list[tuple[int, int]]] = {}  # account -> [(row, since)]
    cap_queue: list[tuple[int, int, int, int]] = []  # (priority, eligible, queued_at, row)
    active = 0
    capacity = sc.capacity
    events: list[tuple[int, int, int, int]] = []  # (time, kind, seq, payload)
    seq = 0
    order_rows = rows[np.lexsort((run.due[rows], run.s[rows], run.pick[rows]))]
    batch: dict[int, list[int]] = {}  # first row of a backlog run in turn -> the others
    in_turn = run.in_turn
    last_batch: tuple[int, int, int] | None = None  # (schedule, pick, first row)
    for r in order_rows.tolist():
        if in_turn is not None and in_turn[r]:
            key = (int(run.s[r]), int(run.pick[r]))
            if last_batch is not None and last_batch[:2] == key:
                batch[last_batch[2]].append(r)  # not an event of its own: it follows its turn
                continue
            last_batch = (*key, r)
            batch[r] = []
        events.append((int(run.pick[r]), PICK, seq, r))
        seq += 1
    heapq.heapify(events)
    opened: set[tuple[int, int]] = set()
    end = sc.end_us
    outages = run.outages
    pauses = run.pauses
    period_fns = [period_of(run.budget_tables[a], b.period) for a, b in enumerate(budgets)]

    # No state is needed from the rows settled by columns: a run that
    # overlaps an ordered one is in its overlap cluster (so ordered too),
    # and a budget period is either ordered for its whole account or has
    # room for all of its demand.

    def settle_run(r: int, t: int) -> None:
        nonlocal active, seq
        s = int(run.s[r])
        run.start[r] = t
        run.finish[r] = t + occ[r]
        run.started[r] = True
        run.state[r] = S["done"] if ok[r] else S["failed"]
        run.reason[r] = NONE if ok[r] else R["retries_exhausted"]
        running[s] = (r, t + occ[r])
        active += 1
        heapq.heappush(events, (t + occ[r], FINISH, seq, r))
        seq += 1

    def try_start(r: int, t: int, from_queue: bool = False) -> None:
        nonlocal seq
        t = up(t, outages)  # a buffered or budget-held run waits for the scheduler to be up
        s = int(run.s[r])
        if paused(pauses.get(s), t):
            # Held (buffer, budget, capacity) into a pause: a paused schedule starts nothing.
            run.state[r], run.reason[r] = S["skipped"], R["paused"]
            return
        a = int(run.p_account[s])
        if capacity is not None and active >= capacity and not from_queue:
            cap_queue.append((int(run.p_priority[s]), int(run.eligible[r]), t, r))
            return
        if a >= 0:
            b = budgets[a]
            p = period_fns[a](t)
            cost = charge(float(run.p_cost[s]), int(run.attempts_n[r]))
            if not fits(spent.get((a, p), 0.0), cost, b.limit):
                if not run.p_onbudget_wait[s]:
                    run.state[r] = S["skipped"]
                    run.reason[r] = R["budget"]
                    return
                waiting.setdefault(a, []).append((r, t))
                if (a, p + 1) not in opened:
                    opened.add((a, p + 1))
                    heapq.heappush(events, (period_start(run.budget_tables[a], b.period, p + 1), OPEN, seq, a))
                    seq += 1
                return
            spent[(a, p)] = spent.get((a, p), 0.0) + cost
        settle_run(r, t)

    freed: set[int] = set()  # cancelled runs: their slot is free before their finish event

    def arrive(r: int, t: int, from_queue: bool = False) -> None:
        """Row ``r`` wants to start at ``t``: the overlap mode first, then capacity and budget.

        Also called when a run leaves the capacity queue, as the run that
        held the schedule when it queued may be over, and another run of
        the schedule may have left the queue before it.
        """
        nonlocal active
        s = int(run.s[r])
        mode = int(run.p_overlap[s])
        cur = running.get(s)
        if mode == OVERLAP["buffer_latest"] and buffers.get(s):
            for old in buffers.pop(s):  # a newer time takes the blocked one's place, running or not
                run.state[old], run.reason[old] = S["skipped"], R["overlap"]
        if cur is not None and cur[1] > t and mode != OVERLAP["allow"]:
            if mode == OVERLAP["skip"]:
                run.state[r], run.reason[r] = S["skipped"], R["overlap"]
                return
            if mode == OVERLAP["buffer_one"]:
                if buffers.get(s):
                    run.state[r], run.reason[r] = S["skipped"], R["overlap"]
                    return
                buffers.setdefault(s, []).append(r)
                return
            if mode == OVERLAP["buffer_all"]:
                buffers.setdefault(s, []).append(r)
                return
            if mode == OVERLAP["buffer_latest"]:
                buffers[s] = [r]
                return
            # cancel_other: the running one stops now, keeping its cost (a sent call is not refunded).
            old = cur[0]
            run.state[old], run.reason[old] = S["cancelled"], R["superseded"]
            run.finish[old] = t
            running.pop(s, None)
            freed.add(old)
            active -= 1
        try_start(r, t, from_queue)

    def next_turn(s: int, t: int) -> bool:
        """The next member of a backlog run in turn starts at ``t`` unless it is too late by now."""
        items = turns.get(s)
        while items:
            r = items.pop(0)
            if beyond(up(t, outages) - int(run.eligible[r]), int(run.p_maxlate[s]), int(run.p_edge[s])):
                # APScheduler checks each run time's misfire grace when its turn comes (executors/base.py run_job).
                run.state[r], run.reason[r] = S["expired"], R["max_lateness"]
                continue
            try_start(r, t)
            if run.state[r] < 0 and not run.started[r]:
                continue  # held (budget, capacity): the rest follow when it ends
            return True
        return False

    while events:
        t, kind, _, payload = heapq.heappop(events)
        if kind == FINISH:
            r = payload
            s = int(run.s[r])
            if r in freed:
                continue
            active -= 1
            if running.get(s, (None,))[0] == r:
                running.pop(s, None)
            if turns.get(s) and s not in running:
                next_turn(s, t)
            if buffers.get(s) and run.p_overlap[s] == OVERLAP["buffer_latest"]:
                # Kubernetes' Forbid: the sync after the Job ends (when the controller is up) starts the most
                # recent unmet time, so a time picked at that instant comes first and replaces the blocked one.
                heapq.heappush(events, (up(t, outages), LATEST, seq, s))
                seq += 1
            if buffers.get(s) and s not in running and run.p_overlap[s] != OVERLAP["buffer_latest"]:
                # (Temporal checks its window only when a time is buffered: a buffered start always goes.)
                try_start(buffers[s].pop(0), t)
            while capacity is not None and cap_queue and active < capacity:
                # Highest priority first, ageing one level per AGEING_US waited so that
                # low priority never starves; ties by eligibility (oldest first).
                best = max(range(len(cap_queue)), key=lambda i: (
                    cap_queue[i][0] + (t - cap_queue[i][2]) // AGEING_US, -cap_queue[i][1], -i))
                _, _, _, q = cap_queue.pop(best)
                arrive(q, t, from_queue=True)
        elif kind == OPEN:  # a budget period opens: its held runs arrive, after expiry and catch-up
            a = payload
            if t >= end:
                continue
            by_sched: dict[int, list[tuple[int, int]]] = {}
            for r, since in waiting.pop(a, []):
                by_sched.setdefault(int(run.s[r]), []).append((r, since))
            for s, items in by_sched.items():
                items.sort(key=lambda x: int(run.due[x[0]]))
                live = []
                for r, since in items:
                    run.budget_wait[r] += (t - since) / 1e6
                    if beyond(t - int(run.eligible[r]), int(run.p_maxlate[s]), int(run.p_edge[s])):
                        run.state[r], run.reason[r] = S["expired"], R["max_lateness"]
                    else:
                        live.append(r)
                if live:  # a backlog again (if more than one): the catch-up mode decides
                    n = len(live)
                    keep, coalesced = held_outcome(np.full(n, run.p_catchup[s]), np.full(n, run.p_limit[s]),
                                                   np.arange(n), np.full(n, n))
                    for r, k, c in zip(live, keep.tolist(), coalesced.tolist()):
                        if not k:
                            run.state[r] = S["coalesced"] if c else S["skipped"]
                            run.reason[r] = R["catchup"]
                    live = [r for r, k in zip(live, keep.tolist()) if k]
                for r in live:
                    arrive(r, t)
        elif kind == LATEST:  # the blocked time of a buffer_latest schedule, after the picks of this instant
            s = payload
            while buffers.get(s) and s not in running:
                nxt = buffers[s].pop(0)
                if beyond(t - int(run.eligible[nxt]), int(run.p_maxlate[s]), int(run.p_edge[s])):
                    # Too late by the time it could start (Kubernetes' deadline at the sync after the Job ends).
                    run.state[nxt], run.reason[nxt] = S["expired"], R["max_lateness"]
                    continue
                try_start(nxt, t)
        else:  # PICK: an occurrence is picked
            r = payload
            arrive(r, t)
            rest = batch.get(r)
            if rest:
                if run.state[r] >= 0 and not run.started[r]:
                    # The wake-up's submission was refused (another instance going,
                    # paused, no budget): the whole backlog with it.
                    for q in rest:
                        run.state[q], run.reason[q] = run.state[r], run.reason[r]
                else:
                    turns.setdefault(int(run.s[r]), []).extend(rest)
    # Whatever still waits for budget at the horizon's end never got it.
    for a, held in waiting.items():
        for r, since in held:
            run.state[r], run.reason[r] = S["skipped"], R["budget"]
            run.budget_wait[r] += max(0, end - since) / 1e6
    for s, buf in list(buffers.items()) + list(turns.items()):
        for r in buf:
            if run.state[r] < 0:
                run.state[r], run.reason[r] = S["skipped"], R["overlap"]
    for _, _, _, r in cap_queue:
        if run.state[r] < 0:
            run.state[r], run.reason[r] = S["skipped"], R["overlap"]
