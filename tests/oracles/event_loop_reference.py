"""Oracle: the ordered event loop as it was written in Python (calsim at commit f4fd96d,
calsim/simulation/event_loop.py), before :mod:`calsim.simulation.event_kernel` replaced it with a compiled
line-by-line port. tests/simulation/test_event_loop.py settles the same rows with both and requires the same columns.

Changed in lockstep since (issue 27: the ordered path became the worker kernel with an implicit pool of
``capacity`` slots; docs/adr/0002-run-semantics.md, "One ordered loop"), each marked ``# issue 27``:

* a run that waits for a slot meets its ``max_lateness`` when it gets one (the deadline at the dispatch,
  APScheduler's ``run_job`` check of ``misfire_grace_time`` when an executor runs the job), and a pause
  of its schedule then too (not when it queued);
* the capacity queue breaks a tie of aged priority by the instant a run queued (first queued first),
  not by its eligibility: a FIFO per priority level;
* a member of a backlog run in turn held for budget or a slot holds the rest behind it (the former loop
  let the next member try too, so a whole backlog could wait for budget side by side);
* a member of a backlog run in turn that expires at a budget period's opening passes the turn to the next
  (the former loop left the rest waiting to the horizon's end, ``skipped``/``overlap``);
* a backlog run in turn whose first run is refused at its start (after a buffer or the capacity queue) is
  refused with it, as when it is refused on arrival (the former loop left it to the horizon's end);
* (unchanged, now a rule of both: a backlog in turn whose running member ``cancel_other`` cancels never
  runs its rest, ``skipped``/``overlap``);
* a budget period's opening sends each held run that is still in time as an event of its own, when the
  scheduler is up (a zero-length run started by it ends before the next held run arrives);
* the next member of a backlog run in turn starts when the member before it ends (the former loop took the
  end of any run of the schedule, with ``overlap="allow"`` a run beside the backlog, and kept one queue of
  members per schedule, so a later backlog's members could go before an earlier one's);
* at one instant every run ending frees its slot (and releases its buffered run, which takes that slot)
  before the queue is served (the former loop served the queue at each finish in turn);
* a slot a cancelled run frees serves the queue at once when the run that cancelled it does not take it
  (the former loop left it idle to the next finish);
* the slots are the scheduler's: a run ending while the scheduler is down frees its slot, which the queue
  takes when the scheduler is up again (aged at that instant).

The former module docstring follows.

The ordered event loop: rows whose outcome depends on what ran before them, one event at a time.

Overlap (a run of the same schedule still going), budgets (what an account
started in a period), capacity (how many runs are going) and backlogs run in
turn need order. Events are processed by time; at one instant a finish comes
before a budget period's opening, which comes before the picks (by schedule,
then due instant). Every rule is :mod:`.rules`' (scheduler up, pauses,
budget period and charge, catch-up and expiry of held runs).

A run leaving the capacity queue meets its schedule's overlap mode again at
its actual start (the run it queued behind may be over, or a sibling that
left the queue first may be going).

Speed: the picks are already in order, so they are read in chunks of Python
ints (``tolist``) and merged with a small heap of the events the loop makes
(finishes, openings); a run travels as a tuple of its fields; outcomes are
appended to lists and written to the numpy columns in bulk after each chunk
(a numpy scalar read or write costs several times a list's). The capacity
queue (:class:`CapacityQueue`) picks in O(log n), so the cost per row does
not grow with the fleet.
"""

from __future__ import annotations

from collections import deque
from heapq import heappop, heappush
from itertools import count

import numpy as np

from calsim.simulation.run_rules import (BIG, OVERLAP, beyond, charge, fits, held_outcome, paused, period_of,
                                         period_start, up)
from calsim.simulation.state import NONE, R, S, RunState

__all__ = ["event_loop", "AGEING_US", "CapacityQueue"]

# A queued run gains one priority level per hour it waits for capacity, so
# that low-priority work is delayed, never starved (the DESIGN's "ageing").
AGEING_US = 3600 * 1_000_000

FINISH, OPEN, ARRIVE, PICK, LATEST = 0, 1, 2, 3, 4  # event kinds, in their order at one instant
CHUNK = 1 << 16  # picks read into Python lists at a time (a few MB of ints)
HELD = None  # try_start/arrive: the run waits (buffer, budget, capacity); "started" below; else (state, reason)
STARTED = True


class CapacityQueue:
    """Runs waiting for capacity; :meth:`pop` at ``t`` takes the one with the highest aged priority
    ``priority + (t - queued_at) // AGEING_US``, then the first queued (issue 27: was the earliest ``eligible``).

    A run's aged priority only changes when ``t`` crosses ``queued_at + k * AGEING_US``; the queue keeps each
    run in a heap by its aged priority at its clock (the last ``pop``'s ``t``) and re-keys a run at those
    instants (a second heap of them), so a pop costs O(log n) plus one re-key per hour a run waited. A ``t``
    before the clock (local time going back over a budget period can send the loop back) re-keys every run.

    >>> q = CapacityQueue()
    >>> q.push(0, 5, 0, "old"); q.push(0, 1, 30 * 60 * 10**6, "newer, eligible first")
    >>> q.pop(45 * 60 * 10**6), q.pop(45 * 60 * 10**6)  # same level at 45 min: first queued first
    ('old', 'newer, eligible first')
    """

    def __init__(self) -> None:
        # insertion number -> ((priority, eligible, queued_at, item), aged)
        self.entries: dict[int, tuple[tuple, int]] = {}
        self._heap: list[tuple[int, int, int]] = []  # (-aged, eligible, insertion number), stale ones skipped
        self._bumps: list[tuple[int, int]] = []  # (instant the aged priority next grows, insertion number)
        self._clock: int | None = None
        self._ins = 0

    def __len__(self) -> int:
        return len(self.entries)

    def items(self) -> list:
        """The queued items, in queue order."""
        return [entry[3] for entry, _ in self.entries.values()]

    def push(self, priority: int, eligible: int, queued_at: int, item) -> None:
        ins = self._ins
        self._ins += 1
        if self._clock is None:
            self._clock = queued_at
        self._key(ins, (priority, eligible, queued_at, item), self._clock)

    def _key(self, ins: int, entry: tuple, t: int) -> None:
        k = (t - entry[2]) // AGEING_US
        aged = entry[0] + k
        self.entries[ins] = (entry, aged)
        heappush(self._heap, (-aged, entry[2], ins))  # issue 27: ties by queued instant
        heappush(self._bumps, (entry[2] + (k + 1) * AGEING_US, ins))

    def pop(self, t: int):
        """The item to start at ``t`` (the queue must not be empty)."""
        live, heap, bumps = self.entries, self._heap, self._bumps
        if t < self._clock:  # type: ignore[operator]
            self._clock = t
            self._heap, self._bumps = heap, bumps = [], []
            for ins, (entry, _) in list(live.items()):
                self._key(ins, entry, t)
        elif t > self._clock:  # type: ignore[operator]
            self._clock = t
            while bumps and bumps[0][0] <= t:
                ins = heappop(bumps)[1]
                cur = live.get(ins)
                if cur is not None:
                    self._key(ins, cur[0], t)
        while True:
            neg, _, ins = heappop(heap)
            cur = live.get(ins)
            if cur is not None and cur[1] == -neg:
                del live[ins]
                return cur[0][3]


def event_loop(run: RunState, rows: np.ndarray) -> None:
    """Settle ``rows`` one event at a time (each run's occupancy is ``finish - pick`` until it starts, and
    its success is ``run.success``: :func:`.columns.attempts` and :func:`.order.needs_order`)."""
    sc = run.sc
    run.settled["event_loop"] += len(rows)
    # Picks in event order: (pick, schedule, due); a run is known by its place ``i`` in it.
    order = rows[np.lexsort((run.due[rows], run.s[rows], run.pick[rows]))]
    m = len(order)

    # Per-schedule policy as Python lists (a list read is several times cheaper than a numpy scalar's).
    p_overlap, p_account = run.p_overlap.tolist(), run.p_account.tolist()
    p_priority, p_cost, p_wait = run.p_priority.tolist(), run.p_cost.tolist(), run.p_onbudget_wait.tolist()
    p_maxlate, p_edge = run.p_maxlate.tolist(), run.p_edge.tolist()
    ALLOW, SKIP, BUFFER_ONE, BUFFER_ALL, BUFFER_LATEST = (OVERLAP[k] for k in (
        "allow", "skip", "buffer_one", "buffer_all", "buffer_latest"))
    SKIPPED, EXPIRED, CANCELLED = S["skipped"], S["expired"], S["cancelled"]
    R_OVERLAP, R_PAUSED, R_BUDGET, R_LATE = R["overlap"], R["paused"], R["budget"], R["max_lateness"]

    def rec_at(i: int) -> tuple:
        """Run ``i`` as the loop carries it: (i, schedule, due, eligible, charge, occupancy)."""
        r = int(order[i])
        s = int(run.s[r])
        return (i, s, int(run.due[r]), int(run.eligible[r]), charge(p_cost[s], int(run.attempts_n[r])),
                int(run.finish[r]) - int(run.pick[r]))

    # A backlog run in turn is one pick: its first run's event; the others follow in turn.
    batch: dict[int, list[int]] = {}
    follower = None
    if run.in_turn is not None:
        it = np.flatnonzero(run.in_turn[order])
        if len(it):
            follower = np.zeros(m, dtype=bool)
            key = list(zip(run.s[order[it]].tolist(), run.pick[order[it]].tolist()))
            first = -1
            for j, i in enumerate(it.tolist()):
                if j and key[j] == key[j - 1]:
                    batch[first].append(i)
                    follower[i] = True
                else:
                    first = i
                    batch[i] = []

    # Outcomes, in the order the loop decides them; written to the columns in bulk (``flush``) every
    # chunk of picks, so that what the loop holds is bounded by the runs in flight, not the rows.
    st_i: list[int] = []  # started at st_t (done or failed by success; finish = start + occupancy)
    st_t: list[int] = []
    mk_i: list[int] = []  # terminal state and reason (the last one for a run wins: a cancel after its start)
    mk_state: list[int] = []
    mk_reason: list[int] = []
    cut_i: list[int] = []  # cancelled runs end at cut_t
    cut_t: list[int] = []
    waited: dict[int, int] = {}  # run -> µs waited for budget (issue 27: summed in µs, added to the column once)

    def mark(i: int, state: int, reason: int) -> None:
        mk_i.append(i)
        mk_state.append(state)
        mk_reason.append(reason)

    def wait_add(i: int, us: int) -> None:
        waited[i] = waited.get(i, 0) + us

    def flush() -> None:
        _write(run, order, st_i, st_t, mk_i, mk_state, mk_reason, cut_i, cut_t)
        for out in (st_i, st_t, mk_i, mk_state, mk_reason, cut_i, cut_t):
            out.clear()

    budgets = sc.budgets
    spent: list[dict[int, float]] = [{} for _ in budgets]  # account -> period -> cost started
    running: dict[int, tuple[int, int]] = {}  # schedule -> (run, finish)
    buffers: dict[int, deque] = {}
    turns: dict[int, deque] = {}  # issue 27: a member of a backlog run in turn -> the rest of its backlog, in due order
    waiting: dict[int, list[tuple[tuple, int]]] = {}  # account -> [(run, since)]
    capacity = sc.capacity
    cap_queue = CapacityQueue()
    queued = cap_queue.entries  # (its truth: whether a run is queued)
    active = 0
    heap: list[tuple[int, int, int, object]] = []  # events the loop makes: (time, kind, seq, payload)
    seq = count()
    opened: set[tuple[int, int]] = set()
    end = sc.end_us
    outages = run.outages
    pauses = run.pauses
    fns: dict[tuple[str, str], object] = {}
    for a, b in enumerate(budgets):
        if (b.zone, b.period) not in fns:
            fns[(b.zone, b.period)] = period_of(run.budget_tables[a], b.period)
    period_fns = [fns[(b.zone, b.period)] for b in budgets]
    # Outside the outages' hull the scheduler is up: most runs skip the call.
    out_lo, out_hi = (outages[0][0], outages[-1][1]) if outages else (0, 0)
    starts: dict[tuple[str, str, int], int] = {}

    def opening(a: int, p: int) -> int:
        """When account ``a``'s period ``p`` opens (accounts of one zone and period kind share the answer)."""
        b = budgets[a]
        key = (b.zone, b.period, p)
        if key not in starts:
            starts[key] = period_start(run.budget_tables[a], b.period, p)
        return starts[key]

    # No state is needed from the rows settled by columns: a run that
    # overlaps an ordered one is in its overlap cluster (so ordered too),
    # and a budget period is either ordered for its whole account or has
    # room for all of its demand.

    limits = [b.limit for b in budgets]
    # Instant -> period, per zone and period kind (runs start at a few instants: ticks, come-backs, finishes).
    memos: dict[tuple[str, str], dict[int, int]] = {key: {} for key in fns}
    memo = [memos[(b.zone, b.period)] for b in budgets]

    def try_start(rec: tuple, t: int, from_queue: bool = False, no_deadline: bool = False):
        nonlocal active
        if out_lo <= t < out_hi:
            t = up(t, outages)  # a buffered or budget-held run waits for the scheduler to be up
        s = rec[1]
        if capacity is not None and active >= capacity and not from_queue:
            cap_queue.push(p_priority[s], rec[3], t, rec)
            return HELD
        if not no_deadline and beyond(t - rec[3], p_maxlate[s], p_edge[s]):  # issue 27: deadline at the slot
            mark(rec[0], EXPIRED, R_LATE)
            return (EXPIRED, R_LATE)
        if s in pauses and paused(pauses[s], t):
            # Held (buffer, budget, capacity) into a pause: a paused schedule starts nothing.
            mark(rec[0], SKIPPED, R_PAUSED)
            return (SKIPPED, R_PAUSED)
        a = p_account[s]
        if a >= 0:
            seen = memo[a]
            p = seen.get(t)
            if p is None:
                if len(seen) > 4096:
                    seen.clear()
                p = seen[t] = period_fns[a](t)
            cost = rec[4]
            before = spent[a].get(p, 0.0)
            if not fits(before, cost, limits[a]):
                if not p_wait[s]:
                    mark(rec[0], SKIPPED, R_BUDGET)
                    return (SKIPPED, R_BUDGET)
                waiting.setdefault(a, []).append((rec, t))
                if (a, p + 1) not in opened:
                    opened.add((a, p + 1))
                    heappush(heap, (opening(a, p + 1), OPEN, next(seq), a))
                return HELD
            spent[a][p] = before + cost
        # It starts: done or failed by its attempts, ending after its occupancy.
        fin = t + rec[5]
        st_i.append(rec[0])
        st_t.append(t)
        running[s] = (rec[0], fin)
        active += 1
        heappush(heap, (fin, FINISH, next(seq), rec))
        return STARTED

    freed: set[int] = set()  # cancelled runs: their slot is free before their finish event

    def arrive(rec: tuple, t: int, from_queue: bool = False):
        """Run ``rec`` wants to start at ``t``: the overlap mode first, then capacity and budget.

        Also called when a run leaves the capacity queue, as the run that
        held the schedule when it queued may be over, and another run of
        the schedule may have left the queue before it.
        """
        nonlocal active
        s = rec[1]
        mode = p_overlap[s]
        if mode == BUFFER_LATEST and buffers.get(s):
            for old in buffers.pop(s):  # a newer time takes the blocked one's place, running or not
                mark(old[0], SKIPPED, R_OVERLAP)
        cur = running.get(s)
        if cur is not None and cur[1] > t and mode != ALLOW:
            if mode == SKIP:
                mark(rec[0], SKIPPED, R_OVERLAP)
                return (SKIPPED, R_OVERLAP)
            if mode == BUFFER_ONE:
                if buffers.get(s):
                    mark(rec[0], SKIPPED, R_OVERLAP)
                    return (SKIPPED, R_OVERLAP)
                buffers.setdefault(s, deque()).append(rec)
                return HELD
            if mode == BUFFER_ALL:
                buffers.setdefault(s, deque()).append(rec)
                return HELD
            if mode == BUFFER_LATEST:
                buffers[s] = deque([rec])
                return HELD
            # cancel_other: the running one stops now, keeping its cost (a sent call is not refunded).
            old = cur[0]
            mark(old, CANCELLED, R["superseded"])
            cut_i.append(old)
            cut_t.append(t)
            running.pop(s, None)
            freed.add(old)
            active -= 1
            res = try_start(rec, t, from_queue)
            if res is not STARTED and capacity is not None and queued and active < capacity:
                serve_queue(t)  # issue 27: the slot the cancelled run freed is not left idle
            return res
        return try_start(rec, t, from_queue)

    heads: dict[int, deque] = {}  # issue 27: the first run of a backlog in turn -> the rest of its backlog

    def next_turn(items: deque, t: int) -> bool:
        """The next member of a backlog run in turn starts at ``t`` unless it is too late by now."""
        while items:
            rec = items.popleft()
            s = rec[1]
            if beyond(up(t, outages) - rec[3], p_maxlate[s], p_edge[s]):
                # APScheduler checks each run time's misfire grace when its turn comes (executors/base.py run_job).
                mark(rec[0], EXPIRED, R_LATE)
                continue
            try_start(rec, t)  # issue 27: held (budget, capacity) or not, the rest follow when it ends
            return True
        return False

    # Whether any run can be buffered or wait its turn (else a finish only frees its slot).
    buffering = bool(np.isin(run.p_overlap, [BUFFER_ONE, BUFFER_ALL, BUFFER_LATEST]).any())

    def on_finish(t: int, rec: tuple) -> None:
        nonlocal active
        i, s = rec[0], rec[1]
        if freed and i in freed:
            return
        active -= 1
        cur = running.get(s)
        if cur is not None and cur[0] == i:
            del running[s]
        if batch and turns.get(i):  # issue 27: the member's end (not any run's) starts its backlog's next
            next_turn(turns[i], t)
        if buffering and buffers.get(s):
            if p_overlap[s] == BUFFER_LATEST:
                # Kubernetes' Forbid: the sync after the Job ends (when the controller is up) starts the most
                # recent unmet time, so a time picked at that instant comes first and replaces the blocked one.
                heappush(heap, (up(t, outages), LATEST, next(seq), s))
            elif s not in running:
                # (Temporal checks its window only when a time is buffered: a buffered start always goes.)
                try_start(buffers[s].popleft(), t, no_deadline=True)
        # (Runs queue only under a capacity.) Highest priority first, ageing one level per AGEING_US
        # waited so that low priority never starves; ties by eligibility (oldest first).
        if heap and heap[0][0] == t and heap[0][1] == FINISH and heap[0][3][0] not in freed:
            return  # issue 27: every run ending at this instant frees its slot before the queue is served
        serve_queue(t)

    def serve_queue(t: int) -> None:
        if queued and active < capacity and out_lo <= t < out_hi:  # type: ignore[operator]
            t = up(t, outages)  # issue 27: the scheduler's slots serve the queue when it is up
        while queued and active < capacity:  # type: ignore[operator]
            arrive(cap_queue.pop(t), t, from_queue=True)

    expiring = bool((run.p_maxlate < BIG).any())  # (else no held run is ever too late)
    COALESCED, R_CATCHUP = S["coalesced"], R["catchup"]

    def on_open(t: int, a: int) -> None:
        """A budget period opens: its held runs arrive, after expiry and catch-up."""
        if t >= end:
            return
        expired_members: list[int] = []
        by_sched: dict[int, list[tuple[tuple, int]]] = {}
        for item in waiting.pop(a, ()):
            by_sched.setdefault(item[0][1], []).append(item)
        groups: list[tuple[int, list[tuple]]] = []  # each schedule's held runs still in time, in due order
        sizes: list[int] = []  # of those with more than one (a backlog again: the catch-up mode decides)
        for s, items in by_sched.items():
            if len(items) > 1:
                items.sort(key=_due)
            for rec, since in items:
                wait_add(rec[0], t - since)
            live = [rec for rec, _ in items]
            if expiring:
                maxlate, edge = p_maxlate[s], p_edge[s]
                for rec in live:
                    if beyond(t - rec[3], maxlate, edge):
                        mark(rec[0], EXPIRED, R_LATE)
                        if batch and turns.get(rec[0]):
                            expired_members.append(rec[0])
                live = [rec for rec in live if not beyond(t - rec[3], maxlate, edge)]
            if len(live) > 1:
                sizes.append(len(live))
            groups.append((s, live))
        if sizes:  # one call for every backlog of this opening
            s_of = np.repeat(np.array([s for s, live in groups if len(live) > 1], dtype=np.int64), sizes)
            size = np.repeat(np.array(sizes, dtype=np.int64), sizes)
            pos = np.arange(len(s_of)) - np.repeat(np.cumsum(sizes) - sizes, sizes)
            keep, coalesced = (x.tolist() for x in held_outcome(run.p_catchup[s_of], run.p_limit[s_of], pos, size))
        j = 0
        for _s, live in groups:
            if len(live) > 1:
                arriving = []
                for rec in live:
                    if keep[j]:
                        arriving.append(rec)
                    else:
                        mark(rec[0], COALESCED if coalesced[j] else SKIPPED, R_CATCHUP)
                    j += 1
                live = arriving
            for rec in live:  # issue 27: each arrives as an event of its own, when the scheduler is up
                heappush(heap, (up(t, outages), ARRIVE, next(seq), rec))
        for i in expired_members:  # issue 27: a member of a backlog in turn expired: the next one's turn
            next_turn(turns[i], t)

    def on_latest(t: int, s: int) -> None:
        """The blocked time of a buffer_latest schedule, after the picks of this instant."""
        while buffers.get(s) and s not in running:
            rec = buffers[s].popleft()
            if beyond(t - rec[3], p_maxlate[s], p_edge[s]):
                # Too late by the time it could start (Kubernetes' deadline at the sync after the Job ends).
                mark(rec[0], EXPIRED, R_LATE)
                continue
            try_start(rec, t)

    def on_pick(t: int, rec: tuple) -> None:
        out = arrive(rec, t)
        rest = batch.get(rec[0])
        if rest:
            if out is not HELD and out is not STARTED:
                # The wake-up's submission was refused (another instance going,
                # paused, no budget): the whole backlog with it.
                for q in rest:
                    mark(q, *out)
            else:
                chain = deque(rec_at(q) for q in rest)
                turns[rec[0]] = chain
                heads[rec[0]] = chain
                for q in rest:
                    turns[q] = chain

    handlers = {FINISH: on_finish, OPEN: on_open, ARRIVE: lambda t, rec: arrive(rec, t), LATEST: on_latest}

    # The picks, in order, merged with the loop's own events: an event
    # sorts before a pick at its instant when its kind does (a finish, an opening).
    for lo in range(0, m, CHUNK):
        hi = min(m, lo + CHUNK)
        idx = np.arange(lo, hi)
        if follower is not None:
            idx = idx[~follower[lo:hi]]
        rr = order[idx]
        s_c = run.s[rr]
        # (A run's columns are written when it is decided, after its pick: these are still the columns'.)
        cols = (idx.tolist(), s_c.tolist(), run.due[rr].tolist(), run.eligible[rr].tolist(),
                charge(run.p_cost[s_c], run.attempts_n[rr]).tolist(), (run.finish[rr] - run.pick[rr]).tolist())
        picks = run.pick[rr].tolist()
        del rr, idx, s_c
        for t, rec in zip(picks, zip(*cols)):
            while heap and (heap[0][0] < t or (heap[0][0] == t and heap[0][1] < PICK)):
                ev = heappop(heap)
                handlers[ev[1]](ev[0], ev[3])
            if batch:
                on_pick(t, rec)
            else:
                arrive(rec, t)
        del picks, cols
        flush()
    while heap:
        ev = heappop(heap)
        handlers[ev[1]](ev[0], ev[3])

    # Whatever still waits for budget at the horizon's end never got it.
    for held in waiting.values():
        for rec, since in held:
            mark(rec[0], SKIPPED, R_BUDGET)
            wait_add(rec[0], max(0, end - since))
    flush()
    if waited:  # (once: summed in µs, as the kernel does)
        r = order[np.array(list(waited), dtype=np.int64)]
        run.budget_wait[r] += np.array(list(waited.values()), dtype=np.int64) / 1e6
    # issue 27: a backlog whose first run was refused at its start (after a buffer or the capacity queue: no
    # budget, paused, its schedule going) is refused with it, as one refused when it arrived.
    refused = (R_OVERLAP, R["breaker_open"], R_PAUSED, R_BUDGET)
    for i, chain in heads.items():
        r0 = order[i]
        if chain and run.state[r0] == SKIPPED and run.reason[r0] in refused:
            r = order[np.array([rec[0] for rec in chain], dtype=np.int64)]
            r = r[run.state[r] < 0]
            run.state[r] = SKIPPED
            run.reason[r] = run.reason[r0]
            chain.clear()
    # Runs still buffered, in turn or queued for capacity that were never decided never started.
    chains = {id(q): q for q in turns.values()}
    left = [rec[0] for q in list(buffers.values()) + list(chains.values()) for rec in q]
    left += [rec[0] for rec in cap_queue.items()]
    if left:
        r = order[np.array(left, dtype=np.int64)]
        r = r[run.state[r] < 0]
        run.state[r] = SKIPPED
        run.reason[r] = R_OVERLAP


def _due(item: tuple) -> int:
    return item[0][2]


def _write(run: RunState, order, st_i, st_t, mk_i, mk_state, mk_reason, cut_i, cut_t) -> None:
    """The loop's outcomes (runs known by their place in ``order``) into the run's columns, in bulk: starts,
    then the decisions in the order they were taken (the last one for a run wins: a run is only decided
    again when it is cancelled after its start), then cancels' ends."""
    if st_i:
        i = np.array(st_i, dtype=np.int64)
        t = np.array(st_t, dtype=np.int64)
        r = order[i]
        ok = run.success[r]
        occupancy = run.finish[r] - run.pick[r]  # (before ``start``, which is ``pick``, is written)
        run.start[r] = t
        t += occupancy
        run.finish[r] = t
        run.started[r] = True
        run.state[r] = np.where(ok, S["done"], S["failed"]).astype(np.int8)
        run.reason[r] = np.where(ok, NONE, R["retries_exhausted"]).astype(np.int8)
    if mk_i:
        i = np.array(mk_i, dtype=np.int64)
        # Keep each run's last decision (a fancy assignment does not promise which duplicate wins).
        _, last = np.unique(i[::-1], return_index=True)
        last = len(i) - 1 - last
        r = order[i[last]]
        run.state[r] = np.array(mk_state, dtype=np.int8)[last]
        run.reason[r] = np.array(mk_reason, dtype=np.int8)[last]
    if cut_i:
        run.finish[order[np.array(cut_i, dtype=np.int64)]] = np.array(cut_t, dtype=np.int64)

