"""Which rows need the ordered loop: those that overlap, budgets or capacity make order-dependent.

After the column steps (:mod:`.columns`), :func:`needs_order` marks the rows
whose outcome depends on the order runs start in: a run of an ``allow``-less
schedule starting before the one before it finished (exact overlap
clusters), an account whose budget some period can run out of, a capacity
some instant exceeds. The others start at their pickup
(:func:`.columns.settle_in_place`); the marked ones go to
:mod:`.budget_periods` or the ordered loop.
"""

from __future__ import annotations

import numpy as np

from .run_rules import BIG, FITS_TOLERANCE, OVERLAP, fits, period_index, period_start, up
from .state import RunState

__all__ = ["needs_order", "one_cost_fit", "period_of_rows", "group_running_max"]


def needs_order(run: RunState, everything: bool = False) -> np.ndarray | None:
    """The rows that overlap, budgets or capacity make order-dependent (None: none do).

    ``finish`` becomes start + occupancy for every row that runs. With
    ``everything``, every row that runs is returned (the event loop then
    settles them all: the reference the column paths are tested against).
    """
    todo, pick, finish = run.run, run.pick, run.finish
    np.add(finish, pick, out=finish, where=todo)  # occupancy -> finish
    if everything:
        return todo.copy()
    if run.sc.slots is not None and _max_concurrency(pick[todo], finish[todo]) > run.sc.slots:
        return todo.copy()  # (every running row: overlap, budgets and turns are then settled in that order too)
    sequential = _overlap_rows(run)
    by_budget = _budget_rows(run)
    if by_budget is not None:
        sequential = by_budget if sequential is None else (sequential | by_budget)
        del by_budget
    if run.in_turn is not None:
        sequential = _from_first(run, run.in_turn, np.ones(len(run.scheds), dtype=bool), sequential)
    return sequential


def _from_first(run: RunState, hit: np.ndarray, which: np.ndarray, out: np.ndarray | None) -> np.ndarray:
    """``out`` plus every running row of a schedule in ``which`` from its first ``hit`` row on."""
    rows = np.flatnonzero(hit & which[run.s])
    out = np.zeros(run.n, dtype=bool) if out is None else out
    if not len(rows):
        return out
    first = np.full(len(run.scheds), BIG, dtype=np.int64)
    np.minimum.at(first, run.s[rows], run.pick[rows])
    for lo, hi in run.chunks():
        s_c = run.s[lo:hi]
        out[lo:hi] |= run.run[lo:hi] & which[s_c] & (run.pick[lo:hi] >= first[s_c])
    return out


def _overlap_rows(run: RunState) -> np.ndarray | None:
    """Rows that need order for overlap (None: none do).

    A start before an earlier run of the same schedule finished is a
    conflict. Rows chained by such starts form a cluster; only clusters
    need order for skip and cancel_other (they never delay a start),
    while buffering delays starts, so a buffering schedule needs order
    from its first cluster on.

    Rows come in instant order, and within a schedule eligibility (jitter
    is capped before the next occurrence) and so pickup keep that order:
    within a chunk a stable sort by schedule (a radix sort on 16-bit keys)
    orders them by (schedule, start), and what a schedule's earlier
    chunks left (until when it is busy, its last row) is carried in
    per-schedule arrays.
    """
    checked = run.p_overlap != OVERLAP["allow"]
    if not checked.any():
        return None
    G = len(run.scheds)
    fixed = run.fixed_duration
    dur = run.per_row(run.p_dur)
    busy = np.full(G, -BIG, dtype=np.int64)  # fixed: last start + duration; else latest finish so far
    last_row = np.full(G, -1, dtype=np.int64)  # the schedule's previous row (global index)
    hits = []
    for lo, hi in run.chunks():
        sel = run.run[lo:hi] if checked.all() else run.run[lo:hi] & checked[run.s[lo:hi]]
        if hi - lo == run.n:  # (one chunk: the frame's schedule order, found once per frame, filtered)
            everyone = run.by_schedule()
            idx = everyone[sel[everyone]]
            if not len(idx):
                continue
            s_o = run.s[idx]
        else:
            rows = np.flatnonzero(sel)
            if not len(rows):
                continue
            s_c = run.s[lo:hi][rows]
            o = np.argsort(s_c, kind="stable")
            idx = rows[o]
            idx += lo
            s_o = s_c[o]
            del rows, s_c, o
        st_o = run.pick[idx]
        head = np.empty(len(idx), dtype=bool)  # first row of its schedule in the chunk
        head[0] = True
        np.not_equal(s_o[1:], s_o[:-1], out=head[1:])
        tail = np.empty(len(idx), dtype=bool)  # last row of its schedule in the chunk
        tail[-1] = True
        tail[:-1] = head[1:]
        # prev: when the schedule is busy until, just before each row
        prev = np.empty(len(idx), dtype=np.int64)
        if fixed:
            # One fixed occupancy per schedule: finishes grow with starts,
            # so the schedule is busy until the previous row's finish.
            prev[1:] = st_o[:-1]
            prev[1:] += dur if np.ndim(dur) == 0 else run.p_dur[s_o[:-1]]
            fin_tail = st_o[tail] + (dur if np.ndim(dur) == 0 else run.p_dur[s_o[tail]])
        else:
            # Lognormal or retried occupancies: the latest finish so far, this
            # chunk's rows before it and what earlier chunks left.
            prev[1:], fin_tail = group_running_max(run.finish[idx], head)
            prev[head] = -BIG
            np.maximum(prev, busy[s_o], out=prev)
        if fixed:
            prev[head] = busy[s_o[head]]
        conflict = st_o < prev
        del prev
        if conflict.any():
            # A cluster is a non-conflicting row and the conflicting rows after
            # it: a row is in one of two or more when it conflicts or its
            # schedule's next row does (that one may be in a later chunk).
            in_cluster = conflict.copy()
            in_cluster[:-1] |= conflict[1:] & ~head[1:]
            hits.append(idx[in_cluster])
            back = last_row[s_o[conflict & head]]
            hits.append(back[back >= 0])
        ts = s_o[tail]
        busy[ts] = fin_tail if fixed else np.maximum(busy[ts], fin_tail)
        last_row[ts] = idx[tail]
    if not hits:
        return None
    out = np.zeros(run.n, dtype=bool)
    for h in hits:
        out[h] = True
    buffering = np.isin(run.p_overlap, [OVERLAP["buffer_one"], OVERLAP["buffer_all"], OVERLAP["buffer_latest"]])
    if buffering.any():
        # A buffering schedule needs order from its first cluster on.
        out = _from_first(run, out, buffering, out)
    return out


def _budget_rows(run: RunState) -> np.ndarray | None:
    """Rows that need order for budgets (None: none do).

    From an account's first period whose demand exceeds its limit, its rows
    need order (a held run spills into the next period). Demand per (account,
    period) is what the runs would be charged (:func:`.run_rules.charge`: cost
    times attempts), summed chunk by chunk; which periods need order is
    :func:`_periods_in_order`'s rule.
    """
    budgets = run.sc.budgets
    paying = run.p_account >= 0
    if not budgets or not paying.any():
        return None
    acct_of = run.p_account.astype(np.int32)
    cost = run.p_cost[paying]
    # One integral cost and one attempt each: count * cost is exactly the sum the weights would give.
    unit = float(cost[0]) if (cost == cost[0]).all() and float(cost[0]).is_integer() \
        and run.n * float(cost[0]) < 2**53 and run.fixed_duration else None
    run_pay = run.run if paying.all() else run.run & paying[run.s]
    if not run_pay.any():
        return None
    # The period index space: every kind's periods of the instants, with a
    # two-day margin (a local period is never more than a day off the UTC
    # one); periods without demand at either end change nothing below.
    day2 = 2 * 86400 * 1_000_000
    ends = np.array([int(np.min(run.pick, where=run_pay, initial=BIG)) - day2,
                     int(np.max(run.pick, where=run_pay, initial=-BIG)) + day2], dtype=np.int64)
    by_calendar: dict[tuple[str, str], np.ndarray] = {}  # (budgets of one zone and period kind share them)
    bounds = [by_calendar[(b.zone, b.period)] if (b.zone, b.period) in by_calendar else
              by_calendar.setdefault((b.zone, b.period), period_index(run.budget_tables[a], b.period, ends))
              for a, b in enumerate(budgets)]
    p0 = min(int(x[0]) for x in bounds)
    span = max(int(x[1]) for x in bounds) - p0 + 1

    def cells(lo: int, hi: int):
        rows = np.flatnonzero(run_pay[lo:hi])
        s_c = run.s[lo:hi][rows]
        acct = acct_of[s_c]
        cell = period_of_rows(run, acct, run.pick[lo:hi][rows])
        cell -= p0
        cell += acct.astype(np.int64) * span
        return rows, s_c, cell

    demand: np.ndarray = np.zeros(len(budgets) * span, dtype=np.float64)
    longest = int(run.p_dur[paying].max()) if run.fixed_duration else 0  # the longest occupancy of a paying run
    chunks = list(run.chunks())
    kept: dict[int, tuple[np.ndarray, np.ndarray]] = {}  # (one chunk's cells, for the second pass below)
    for lo, hi in chunks:
        rows, s_c, cell = cells(lo, hi)
        if len(chunks) == 1:
            kept[lo] = rows, cell
        if unit is not None:
            demand += np.bincount(cell, minlength=len(demand)) * unit
        else:
            charged = run.p_cost[s_c] * run.attempts_n[lo:hi][rows]
            demand += np.bincount(cell, weights=charged, minlength=len(demand))
        if not run.fixed_duration and len(rows):
            longest = max(longest, int((run.finish[lo:hi][rows] - run.pick[lo:hi][rows]).max()))
    demand = demand.reshape(len(budgets), span)
    need = np.zeros_like(demand, dtype=bool)
    f = run.sc.failures
    attempts = 1 if f is None else f.max_attempts
    # How long after a stretch of periods in order a run started in it may still meet a later run of its
    # schedule: none when every schedule allows overlap; to the end when one buffers (each delayed start
    # may delay the next).
    reach = np.zeros(len(budgets), dtype=np.int64)
    reach[acct_of[paying & (run.p_overlap != OVERLAP["allow"])]] = longest
    buffering = np.isin(run.p_overlap, [OVERLAP["buffer_one"], OVERLAP["buffer_all"], OVERLAP["buffer_latest"]])
    reach[acct_of[paying & buffering]] = BIG
    openings: dict[tuple[str, str], tuple[np.ndarray, np.ndarray, np.ndarray]] = {}
    for a, b in enumerate(budgets):
        if fits(0.0, demand[a], b.limit).all():
            continue
        lo_a, hi_a = (int(x) for x in bounds[a])
        if (b.zone, b.period) not in openings:
            openings[(b.zone, b.period)] = _openings(run, a, lo_a, hi_a)
        costs = run.p_cost[acct_of == a]
        unused = _room_left(b.limit, float(costs[0])) if attempts == 1 and (costs == costs[0]).all() \
            else min(float(b.limit), float(costs.max()) * attempts)
        k0 = lo_a - p0
        need[a, k0:k0 + hi_a - lo_a + 1] = _periods_in_order(
            demand[a, k0:k0 + hi_a - lo_a + 1], b.limit, unused, *openings[(b.zone, b.period)],
            int(reach[a]))
    if not need.any():
        return None
    need = need.ravel()
    out = np.zeros(run.n, dtype=bool)
    for lo, hi in chunks:
        rows, cell = kept[lo] if lo in kept else cells(lo, hi)[::2]
        out[lo + rows[need[cell]]] = True
    return out


def _openings(run: RunState, a: int, lo: int, hi: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """For budget ``a``'s periods ``lo..hi``: when each opens (one more: ``hi + 1``'s), when what
    is held for it arrives (:func:`.run_rules.up` of the opening), and whether that is in a later period
    (the opening falls in an outage, or the local day does not exist)."""
    table, period = run.budget_tables[a], run.sc.budgets[a].period
    ks = np.arange(lo, hi + 2, dtype=np.int64)
    opens = period_start(table, period, ks)
    arrive = up(opens, run.outages)
    later = period_index(table, period, arrive) != ks
    return opens, arrive[:-1], later[:-1]


def _periods_in_order(demand: np.ndarray, limit: float, unused: float, opens: np.ndarray, arrive: np.ndarray,
                      later: np.ndarray, reach: int) -> np.ndarray:
    """Which of an account's periods need order, from its demand per period.

    A period needs order when its demand exceeds the limit, or runs held
    before may arrive in it. ``carry`` bounds what is held: arrivals over the
    limit, plus the room a greedy fit may leave ``unused`` (:func:`_room_left`
    with one charge; else below the largest charge), and nothing is fitted in
    a period whose held runs arrive only later (its opening falls in an
    outage, or it does not exist).

    Within a stretch of such periods, held runs start later than in columns:
    when they arrive at an opening after the stretch's first. One may still
    be going when later runs of its schedule arrive: the periods opening
    within ``reach`` (the longest occupancy; 0 when no schedule checks
    overlap) of the latest such arrival need order too.
    """
    flags = []
    carry = 0.0
    room = limit + FITS_TOLERANCE  # (fits(0.0, x, limit), written out: this walk runs per account and period)
    for d, lat in zip(demand.tolist(), later.tolist()):
        flags.append(carry > 0 or not 0.0 + d <= room)
        if lat:
            carry += d
        elif 0.0 + (carry + d) <= room:
            carry = 0.0
        else:
            carry = carry + d - limit + unused
    need = np.array(flags, dtype=bool)
    if reach > 0 and need.any():
        ordered = (np.diff(opens) > 0).all()  # (else no reach to trust: everything after)
        edges = np.diff(np.concatenate([[0], need.view(np.int8), [0]]))
        for first, last in zip(np.flatnonzero(edges == 1).tolist(), (np.flatnonzero(edges == -1) - 1).tolist()):
            if last == first:
                continue  # nothing held arrives in a stretch of one period
            until = int(arrive[first + 1:last + 1].max()) + reach
            # The periods opening before then.
            need[last + 1:int(np.searchsorted(opens, until, side="left")) if ordered else len(need)] = True
    return need


def _room_left(limit: float, cost: float) -> float:
    """The room one period leaves when runs of one ``cost`` are started while they fit.

    >>> _room_left(10, 6.0), _room_left(10, 2.5), _room_left(0.3, 0.1)
    (4.0, 0.0, 0.0)
    """
    if cost <= 0:
        return 0.0
    if limit / cost > 1e6:  # (too many to add up: less than one cost is left, whatever the sums)
        return cost + 1e-9 * (limit + 1)
    _, spent = one_cost_fit(limit, cost, int(limit / cost) + 3)
    return max(0.0, float(limit) - spent)


def one_cost_fit(limit: float, cost: float, cap: int) -> tuple[int, float]:
    """How many runs of one ``cost`` start in a period (at most ``cap``), each while it fits, and their sum.

    The loop starts a run when :func:`.run_rules.fits` (spent, cost, limit),
    spent being the running float sum 0.0 + c, (0.0 + c) + c, ... which
    np.cumsum (a sequential add) reproduces bit for bit.

    >>> one_cost_fit(0.3, 0.1, 100), one_cost_fit(10, 6.0, 100), one_cost_fit(10, 0.0, 5)
    ((3, 0.30000000000000004), (1, 6.0), (5, 0.0))
    """
    if cost <= 0:
        return (cap, 0.0) if fits(0.0, 0.0, limit) else (0, 0.0)
    size = cap if limit / cost + 3 >= cap else int(limit / cost) + 3
    while True:
        sums = np.cumsum(np.full(size, cost))
        k = int(np.count_nonzero(fits(0.0, sums, limit)))  # sums ascend: a prefix fits
        if k < size or size >= cap:
            return k, float(sums[k - 1]) if k else 0.0
        size = min(cap, size * 2)


def period_of_rows(run: RunState, acct: np.ndarray, t: np.ndarray) -> np.ndarray:
    """Index of each instant's local calendar period of its account's budget (:func:`.run_rules.period_index`).

    Budgets sharing a zone and a period kind are computed in one pass.
    """
    kinds: dict[tuple[str, str], list[int]] = {}
    for a, b in enumerate(run.sc.budgets):
        kinds.setdefault((b.zone, b.period), []).append(a)
    if len(kinds) == 1:
        (_, period), members = next(iter(kinds.items()))
        return period_index(run.budget_tables[members[0]], period, t)
    out = np.zeros(len(t), dtype=np.int64)
    for (_zone, period), members in kinds.items():
        member = np.zeros(len(run.sc.budgets) + 1, dtype=bool)
        member[np.array(members) + 1] = True
        rows = np.flatnonzero(member[acct + 1])
        if len(rows):
            out[rows] = period_index(run.budget_tables[members[0]], period, t[rows])
    return out


def group_running_max(values: np.ndarray, head: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """For rows grouped contiguously (``head`` marks each group's first row):
    the running max of ``values`` up to each row but the last, within its group
    (``-BIG`` after a group's end: the caller overwrites heads), and each group's max.

    Each group is lifted above the previous one (``gid * span``) so that one
    running maximum over the whole column never leaks across groups.
    """
    gid = np.cumsum(head)
    gid -= 1
    lo = int(values.min())
    span = int(values.max()) - lo + 1
    tail = np.empty(len(values), dtype=bool)
    tail[-1] = True
    tail[:-1] = head[1:]
    if int(gid[-1]) * span >= 2**62:  # an absurd horizon: no lift fits, go group by group
        acc = values.copy()
        starts = np.flatnonzero(head)
        for a, b in zip(starts.tolist(), np.append(starts[1:], len(values)).tolist()):
            np.maximum.accumulate(acc[a:b], out=acc[a:b])
        return acc[:-1], acc[tail]
    lift = gid * span
    lift -= lo
    acc = values + lift
    np.maximum.accumulate(acc, out=acc)
    acc -= lift
    return acc[:-1], acc[tail]


def _max_concurrency(start: np.ndarray, finish: np.ndarray) -> int:
    """Most runs going at once; a finish at t frees its slot before a start at t.

    A zero-length run still takes a slot at its start (the ordered loop starts it only on a free slot, and
    frees it at once): here it goes until 1 µs after its start, so that it counts at its own start. The
    count can then exceed the loop's by the zero-length runs at one instant: that only sends rows to the
    loop, which is exact.

    The level just after the i-th start (in time order) is i + 1 minus the
    finishes at or before it. Starts come nearly sorted (instant order), which
    a stable (merge/tim) sort handles in about one pass, and two one-key sorts
    cost less than a two-key lexsort of both columns.
    """
    if not len(start):
        return 0
    st = np.sort(start, kind="stable")
    fi = np.sort(np.maximum(finish, start + 1), kind="stable")
    level = np.arange(1, len(st) + 1, dtype=np.int64)
    level -= np.searchsorted(fi, st, side="right")
    return int(level.max())
