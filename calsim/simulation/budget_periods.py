"""Budgets settled one budget period at a time in columns, with the event loop's exact outcome.

The event loop's rules for an account touch nothing outside it (without a
capacity limit, the only state shared across accounts), so accounts can be
settled separately. An account is settled here when every run of it is one
attempt of a fixed duration (no failures, no lognormal), its schedules share
one cost, overlap is ``allow`` or ``skip``, none of them is ever paused or
works through a backlog in turn, and its budget's local periods never go
back in time (no zone transition moving local time back across a period
boundary). The rules are :mod:`.rules`' (period, charge, catch-up, expiry,
scheduler up), applied to a period's arrivals at once.
"""

from __future__ import annotations

import numpy as np

from ..times import US
from .rules import BIG, OVERLAP, beyond, fits, held_outcome, period_index, period_of, period_start, up
from .state import NONE, R, S, RunState

__all__ = ["budget_periods"]

def budget_periods(run: RunState, rows: np.ndarray) -> np.ndarray:
    """Settle the ordered rows of the common budget case by columns; return the rows left to the event loop.

    Which accounts qualify is the module docstring's rule. What the event loop
    does for such an account, period by period, is then (see ``_period_step``):

    * the runs held from the previous period arrive first, at the
      period's opening (an ``opened`` event sorts before the picks at
      its instant), after their expiry and catch-up; then the period's
      picks, in the loop's event order (pick, schedule, due, row);
    * each arrival meets its schedule's overlap mode, then the budget:
      with one cost ``c``, the sum started in a period after ``k`` starts
      is the same float whatever ran (``0.0 + c + c ...``), so exactly the
      first ``K`` arrivals that pass the overlap check start, ``K``
      being the number of those partial sums within the limit;
    * what does not fit waits for the next period's opening (or is
      skipped with ``on_budget="skip"``), in arrival order.
    """
    sc = run.sc
    budgets = sc.budgets
    if sc.capacity is not None or not run.fixed_duration or not budgets or not len(rows):
        return rows
    nb = len(budgets)
    acct = run.p_account
    paying = acct >= 0
    # Per account: may it be settled here?
    ok = np.ones(nb, dtype=bool)
    hard = ~np.isin(run.p_overlap, [OVERLAP["allow"], OVERLAP["skip"]])
    hard |= run.p_in_turn
    for i in run.pauses:
        hard[i] = True
    ok[acct[paying & hard]] = False
    cmin = np.full(nb, np.inf)
    cmax = np.full(nb, -np.inf)
    np.minimum.at(cmin, acct[paying], run.p_cost[paying])
    np.maximum.at(cmax, acct[paying], run.p_cost[paying])
    ok &= cmin == cmax  # one cost per account (else a smaller later run may fit: the loop decides)
    groups: dict[tuple[str, str], list[int]] = {}
    for a, b in enumerate(budgets):
        if ok[a]:
            groups.setdefault((b.zone, b.period), []).append(a)
    # A zone moving local time back across a period boundary makes the
    # period index go back: leave those to the loop.
    # (Over every instant that can matter: the picks, and period openings
    # until the horizon's end, which a backlog can be carried to.)
    # (Chunk by chunk: a gather of every ordered row's pick is a fresh
    # full-size array, and at fleet scale fresh memory is what costs.)
    lo_p, hi_p = BIG, -BIG
    for i in range(0, len(rows), run.chunk_rows[0]):
        pc = run.pick[rows[i:i + run.chunk_rows[0]]]
        lo_p, hi_p = min(lo_p, int(pc.min())), max(hi_p, int(pc.max()))
    del pc
    lo_t = lo_p - 2 * 86400 * US
    hi_t = max(hi_p, sc.end_us) + 2 * 86400 * US
    for (zone, period), members in list(groups.items()):
        table = run.budget_tables[members[0]]
        tr = table.utc[(table.utc >= lo_t // US) & (table.utc <= hi_t // US)].astype(np.int64) * US
        if len(tr):
            pair = period_index(table, period, np.concatenate([tr - 1, tr]))
            if (pair[len(tr):] < pair[:len(tr)]).any():
                ok[members] = False
                del groups[(zone, period)]
    if not groups:
        return rows
    # Per schedule, then gathered once (narrow tables: narrow gathers).
    a_dtype = np.int16 if nb < 2**15 else np.int32
    fast_s = paying & ok[np.where(paying, acct, 0)]
    s_r = run.s[rows]
    fast = fast_s[s_r]
    if fast.all():
        fr, s_f, rest = rows, s_r, rows[:0]
    elif not fast.any():
        return rows
    else:
        rest = rows[~fast]
        fr, s_f = rows[fast], s_r[fast]
    del s_r, fast
    # The loop's event order of picks: (pick, schedule, due), ties in row order.
    sbits = max(1, int(len(run.scheds) - 1).bit_length())
    key = run.pick[fr]
    pmin, pmax = int(key.min()), int(key.max())
    if (pmax - pmin).bit_length() + sbits <= 62:
        key -= pmin
        key <<= sbits
        key |= s_f
        o = np.argsort(key, kind="stable")
        key = key[o]
        fr = fr[o]
        del o
        # Pick and schedule come back from the sorted key (no gathers).
        s_f = np.empty(len(key), dtype=run.s.dtype)
        np.bitwise_and(key, (1 << sbits) - 1, out=s_f, casting="unsafe")
        tie = key[1:] == key[:-1]
        pk = key
        pk >>= sbits
        pk += pmin
        del key
        if tie.any():
            # Same pick and schedule: by due instant (stable: row order for equal ones).
            pos = np.flatnonzero(np.concatenate([tie, [False]]) | np.concatenate([[False], tie]))
            sub = np.lexsort((run.due[fr[pos]], s_f[pos], pk[pos]))
            fr[pos], s_f[pos], pk[pos] = fr[pos][sub], s_f[pos][sub], pk[pos][sub]
        del tie
    else:
        pk = key
        o = np.lexsort((run.due[fr], s_f, pk))
        fr, s_f, pk = fr[o], s_f[o], pk[o]
        del o
    a_f = acct.astype(a_dtype)[s_f]
    # The loop starts a picked run at up(pick); picks are up already, but follow it exactly.
    u_f = _up_sorted(run.outages, pk)
    gid = np.full(nb, -1, dtype=np.int16)
    for k, members in enumerate(groups.values()):
        gid[members] = k
    g_s = np.where(paying, gid[np.where(paying, acct, 0)], -1).astype(np.int16)
    one = len(groups) == 1
    lastS = np.full(len(run.scheds), -BIG, dtype=np.int64)  # each schedule's last start so far
    for k, ((zone, period), members) in enumerate(groups.items()):
        if one:  # every fast row is of this group: no gathers
            rows_g, s_g, a_g, c_g, u_g = fr, s_f, a_f, pk, u_f
        else:
            sel = np.flatnonzero(g_s[s_f] == k)
            if not len(sel):
                continue
            rows_g, s_g, a_g, c_g, u_g = fr[sel], s_f[sel], a_f[sel], pk[sel], u_f[sel]
            del sel
        # The budget period is the start instant's (try_start's up(t)); starts
        # come in time order and periods do not go back (checked above), so
        # each period's rows are one slice: only where they begin is needed.
        cuts = _period_cuts(run.budget_tables[members[0]], period, u_g)
        _periods(run, members, rows_g, s_g, a_g, c_g, u_g, cuts, lastS)
        del rows_g, s_g, a_g, c_g, u_g
    return rest

def _up_sorted(outages: tuple[tuple[int, int], ...], t: np.ndarray) -> np.ndarray:
    """:func:`.rules.up` of ascending ``t`` (still ascending): ``t`` itself when no instant can move."""
    if not outages:
        return t
    # Sorted: only the instants from the first outage's start to the last one's end can move.
    lo, hi = np.searchsorted(t, [outages[0][0], outages[-1][1]], side="left").tolist()
    if hi <= lo:
        return t
    out = t.copy()
    out[lo:hi] = up(t[lo:hi], outages)
    return out


def _periods(run: RunState, members: list[int], rows: np.ndarray, s: np.ndarray, a: np.ndarray, c: np.ndarray,
             u: np.ndarray, cuts: tuple[list[int], list[int], list[int]], lastS: np.ndarray) -> None:
    """Settle the rows of budget accounts ``members`` (one zone and period kind), period by period.

    ``rows`` and their schedule, account, pick (``c``, when the overlap
    check runs) and start instant (``u``) come in the loop's event order;
    ``cuts`` gives each budget period's slice of them, ``(starts, stops,
    periods)`` (see :func:`_period_cuts`). ``lastS`` holds each
    schedule's last start.
    """
    sc = run.sc
    b0 = sc.budgets[members[0]]
    end = sc.end_us
    nb = len(sc.budgets)
    # K[a]: how many runs of the account's one cost fit in a period. The
    # loop starts a run when rules.fits(spent, cost, limit), spent being the
    # running float sum of the costs started: 0.0 + c, (0.0 + c) + c, ...
    # which np.cumsum (a sequential add) reproduces bit for bit.
    K = np.zeros(nb, dtype=np.int64)
    n_acct = np.zeros(nb, dtype=np.int64)
    for i in range(0, len(a), run.chunk_rows[0]):  # chunk by chunk: no full-size int64 copy of ``a``
        n_acct += np.bincount(a[i:i + run.chunk_rows[0]], minlength=nb)
    for m in members:
        idx = np.flatnonzero(run.p_account == m)
        cost = float(run.p_cost[idx[0]]) if len(idx) else 0.0
        cap = int(n_acct[m]) + 1  # never more arrivals in a period than the account has rows
        if cost == 0.0:
            K[m] = cap
            continue
        ratio = sc.budgets[m].limit / cost
        size = cap if ratio + 3 >= cap else int(ratio) + 3
        while True:
            sums = np.cumsum(np.full(size, cost))
            k = int(np.count_nonzero(fits(0.0, sums, sc.budgets[m].limit)))  # sums ascend: a prefix fits
            if k < size or size >= cap:
                break
            size = min(cap, size * 2)
        K[m] = k
    period_fn = period_of(run.budget_tables[members[0]], b0.period)
    starts, stops, steps = cuts
    pending: dict[int, tuple] = {}  # period -> the backlog arriving in it (rows, s, a, c, u)
    i = 0
    while i < len(steps) or pending:
        j_pick = steps[i] if i < len(steps) else None
        j_pend = min(pending) if pending else None
        j = j_pick if j_pend is None else (j_pend if j_pick is None else min(j_pick, j_pend))
        parts = []
        if j in pending:
            parts.append(pending.pop(j))
        if j_pick == j:
            lo, hi = starts[i], stops[i]
            parts.append((rows[lo:hi], s[lo:hi], a[lo:hi], c[lo:hi], u[lo:hi]))
            i += 1
        held = _period_step(run, parts, K, lastS)
        if held is None:
            continue
        h_rows, h_s, h_a, h_since = held
        T = period_start(run.budget_tables[members[0]], b0.period, j + 1)
        if T >= end:
            # The loop ignores openings at or past the horizon's end: what
            # waits then never gets budget.
            run.state[h_rows] = S["skipped"]
            run.reason[h_rows] = R["budget"]
            run.budget_wait[h_rows] += np.maximum(0, end - h_since) / US
            continue
        backlog = _period_open(run, T, h_rows, h_s, h_a, h_since)
        if backlog is None:
            continue
        b_rows, b_s, b_a = backlog
        tu = up(T, run.outages)
        q = period_fn(tu)
        # The backlog arrives in the period of up(T): any period between
        # lies in an outage (no picks, so no other backlog lands there).
        assert q not in pending and q > j
        n = len(b_rows)
        pending[q] = (b_rows, b_s, b_a, np.full(n, T, dtype=np.int64), np.full(n, tu, dtype=np.int64))

def _period_step(run: RunState, parts: list[tuple], K: np.ndarray, lastS: np.ndarray):
    """One budget period of some accounts: arrivals (backlog first, then picks) meet overlap, then budget.

    Returns the runs held for budget (rows, schedule, account, since) in
    arrival order per account, or None.
    """
    if len(parts) == 1:
        rows, s, a, c, u = parts[0]
    else:
        rows, s, a, c, u = (np.concatenate(x) for x in zip(*parts))
    if len(parts) > 1 or a.min() != a.max():
        # Account-major, arrival order within (a stable radix sort on a narrow key).
        o = np.argsort(a, kind="stable")
        rows, s, a, c, u = rows[o], s[o], a[o], c[o], u[o]
    n = len(rows)
    d = run.p_dur[s]
    skipmode = run.p_overlap[s] == OVERLAP["skip"]
    # -- overlap: the chain each schedule would follow with budget to spare.
    # An arrival is turned away when it comes before its schedule's last
    # start plus the (fixed) duration. Starts (u) never decrease along a
    # schedule's arrivals, so an arrival at least a duration after the
    # previous arrival (started or not) is never turned away, and one less
    # than that after a started previous arrival always is: only runs of
    # two or more such arrivals need a look one by one.
    chain = np.ones(n, dtype=bool)
    if skipmode.any():
        o = np.argsort(s, kind="stable")
        s2, c2, u2 = s[o], c[o], u[o]
        head = np.empty(n, dtype=bool)
        head[0] = True
        np.not_equal(s2[1:], s2[:-1], out=head[1:])
        prev = np.empty(n, dtype=np.int64)
        prev[1:] = u2[:-1]
        prev[head] = lastS[s2[head]]
        flag = skipmode[o] & (c2 < prev + d[o])
        if flag.any():
            chain2 = ~flag
            cont = flag.copy()
            cont[0] = False
            cont[1:] &= flag[:-1] & ~head[1:]
            if cont.any():
                L = prev  # for a flagged row: the last chained start before it
                d2 = d[o]
                for k in np.flatnonzero(cont).tolist():
                    lk = int(u2[k - 1]) if chain2[k - 1] else int(L[k - 1])
                    L[k] = lk
                    chain2[k] = int(c2[k]) >= lk + int(d2[k])
            chain[o] = chain2
    # -- budget: the first K[a] chained arrivals of each account start.
    cs = np.cumsum(chain)
    cs -= chain  # chained arrivals before each row
    ahead = np.empty(n, dtype=bool)
    ahead[0] = True
    np.not_equal(a[1:], a[:-1], out=ahead[1:])
    first = np.flatnonzero(ahead)
    cs -= np.repeat(cs[first], np.diff(np.append(first, n)))
    after = cs >= K[a]
    start = chain & ~after
    # Before the K-th start the chain is what happens; after it nothing
    # starts, so an arrival is turned away only by a start already made.
    st = np.flatnonzero(start)
    if len(st):
        np.maximum.at(lastS, s[st], u[st])
        r = rows[st]
        run.start[r] = u[st]
        run.finish[r] = u[st] + d[st]
        run.started[r] = True
        run.state[r] = S["done"]
        run.reason[r] = NONE
    turned = ~chain & ~after
    turned |= after & skipmode & (c < lastS[s] + d)
    if turned.any():
        r = rows[turned]
        run.state[r] = S["skipped"]
        run.reason[r] = R["overlap"]
    no_room = after & ~turned
    if not no_room.any():
        return None
    wait = no_room & run.p_onbudget_wait[s]
    skip = no_room & ~wait
    if skip.any():
        r = rows[skip]
        run.state[r] = S["skipped"]
        run.reason[r] = R["budget"]
    if not wait.any():
        return None
    return rows[wait], s[wait], a[wait], u[wait]

def _period_open(run: RunState, T: int, rows: np.ndarray, s: np.ndarray, a: np.ndarray, since: np.ndarray):
    """A budget period opens at ``T`` for the held runs: their wait, expiry and catch-up, as the loop.

    Returns the runs that arrive (rows, schedule, account) in the loop's
    order: schedules by their first held run, each one's by due instant.
    """
    run.budget_wait[rows] += (T - since) / US
    n = len(rows)
    pos = np.arange(n)
    # Each schedule's first place in the held list (accounts apart, held order within).
    o = np.argsort(s, kind="stable")
    s_o = s[o]
    head = np.empty(n, dtype=bool)
    head[0] = True
    np.not_equal(s_o[1:], s_o[:-1], out=head[1:])
    firstpos = np.empty(n, dtype=np.int64)
    hpos = np.flatnonzero(head)
    firstpos[o] = np.repeat(pos[o][hpos], np.diff(np.append(hpos, n)))
    expired = beyond(T - run.eligible[rows], run.p_maxlate[s], run.p_edge[s])
    if expired.any():
        run.state[rows[expired]] = S["expired"]
        run.reason[rows[expired]] = R["max_lateness"]
        live = ~expired
        rows, s, a, firstpos = rows[live], s[live], a[live], firstpos[live]
        n = len(rows)
        if not n:
            return None
    # A backlog again, in due order per schedule: the catch-up mode decides.
    o = np.lexsort((run.due[rows], firstpos))
    rows, s, a, firstpos = rows[o], s[o], a[o], firstpos[o]
    # firstpos is one value per schedule: its groups are the schedules.
    head = np.empty(n, dtype=bool)
    head[0] = True
    np.not_equal(firstpos[1:], firstpos[:-1], out=head[1:])
    gidx = np.cumsum(head) - 1
    size = np.bincount(gidx)[gidx]
    if (size > 1).any():
        pos = np.arange(n) - np.flatnonzero(head)[gidx]
        keep, coalesce = held_outcome(run.p_catchup[s], run.p_limit[s], pos, size)
        drop = ~keep
        if drop.any():
            run.state[rows[drop]] = np.where(coalesce[drop], S["coalesced"], S["skipped"]).astype(np.int8)
            run.reason[rows[drop]] = R["catchup"]
            rows, s, a = rows[keep], s[keep], a[keep]
            if not len(rows):
                return None
    return rows, s, a



def _period_cuts(table, period: str, t: np.ndarray) -> tuple[list[int], list[int], list[int]]:
    """Slices of ascending instants ``t`` (µs) by local period (as :func:`.rules.period_index`), whose
    index must not go back along ``t``: ``(starts, stops, periods)``, one entry per period present.

    Each period's first row is found by bisection (a few dozen steps over the
    periods at once), not by the period of every row: no full-size array.
    """
    n = len(t)
    if not n:
        return [], [], []
    p_first, p_last = (int(x) for x in period_index(table, period, t[[0, n - 1]]))
    assert p_last >= p_first
    ps = np.arange(p_first + 1, p_last + 1, dtype=np.int64)
    # The first row of period p or later lies in [1, n - 1] (row 0 is in p_first < p, row n-1 in p_last >= p).
    lo = np.ones(len(ps), dtype=np.int64)
    hi = np.full(len(ps), n - 1, dtype=np.int64)
    while True:
        act = lo < hi
        if not act.any():
            break
        mid = (lo + hi) // 2
        ge = period_index(table, period, t[mid]) >= ps
        hi = np.where(act & ge, mid, hi)
        lo = np.where(act & ~ge, mid + 1, lo)
    cuts = np.unique(lo)
    starts = np.concatenate([[0], cuts]).astype(np.int64)
    stops = np.concatenate([cuts, [n]]).astype(np.int64)
    periods = period_index(table, period, t[starts])
    # Monotone periods (the caller's check): each slice's last row is in its first row's period.
    assert (periods[1:] > periods[:-1]).all()
    assert (period_index(table, period, t[stops - 1]) == periods).all()
    return starts.tolist(), stops.tolist(), periods.tolist()
