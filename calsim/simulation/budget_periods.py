"""Budgets settled one budget period at a time in columns, with the event loop's exact outcome.

The event loop's rules for an account touch nothing outside it (without a
capacity limit, the only state shared across accounts), so accounts can be
settled separately. An account is settled here when overlap is ``allow`` or
``skip`` for each of its schedules, none of them works through a backlog in
turn, and its budget's local periods never go back in time (no zone
transition moving local time back across a period boundary).
Runs may fail and be retried, last a drawn (lognormal) time and cost
different amounts: each row's occupancy, success and charge (cost times
attempts) are its own. The rules are :mod:`.rules`' (period, charge,
catch-up, expiry, scheduler up), applied to a period's arrivals at once.
"""

from __future__ import annotations

import numpy as np

from ..times import US
from .columns import _group_running_max, one_cost_fit
from .rules import (ARRIVES, BIG, COALESCED_HELD, EXPIRES, OVERLAP, SKIPPED_HELD, beyond, fits, paused, period_index,
                    period_of, period_start, up)
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
    * each arrival meets its schedule's overlap mode, then its pauses (a
      held run arriving in a paused span is ``skipped``/``paused``), then
      the budget: it starts when its charge fits what the period has
      started so far (a greedy fit in arrival order, found a few arrivals
      at a time by :func:`_fit`, or at once by :func:`_fit_one_charge`
      when every account charges one amount);
    * what does not fit waits for the next period's opening (or is
      skipped with ``on_budget="skip"``), in arrival order.
    """
    sc = run.sc
    budgets = sc.budgets
    if sc.capacity is not None or not budgets or not len(rows):
        return rows
    nb = len(budgets)
    acct = run.p_account
    paying = acct >= 0
    # Per account: may it be settled here?
    ok = np.ones(nb, dtype=bool)
    hard = ~np.isin(run.p_overlap, [OVERLAP["allow"], OVERLAP["skip"]])
    hard |= run.p_in_turn
    hard |= run.p_max_active > 1  # (settled here: one run going at a time)
    ok[acct[paying & hard]] = False
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
    lastF = np.full(len(run.scheds), -BIG, dtype=np.int64)  # each schedule's last start's finish so far
    for k, ((_zone, period), members) in enumerate(groups.items()):
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
        _periods(run, members, rows_g, s_g, a_g, c_g, u_g, cuts, lastF)
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
             u: np.ndarray, cuts: tuple[list[int], list[int], list[int]], lastF: np.ndarray) -> None:
    """Settle the rows of budget accounts ``members`` (one zone and period kind), period by period.

    ``rows`` and their schedule, account, pick (``c``, when the overlap
    check runs) and start instant (``u``) come in the loop's event order;
    ``cuts`` gives each budget period's slice of them, ``(starts, stops,
    periods)`` (see :func:`_period_cuts`). ``lastF`` holds each
    schedule's last start's finish.
    """
    sc = run.sc
    b0 = sc.budgets[members[0]]
    end = sc.end_us
    limits = np.array([float(b.limit) for b in sc.budgets], dtype=np.float64)
    K = _one_charge_counts(run, members, a)
    K = K if (K[members] >= 0).all() else None  # (every account one charge: the shortcut of _fit_one_charge)
    pauses = _pause_groups(run)
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
            parts.append((rows[lo:hi], s[lo:hi], a[lo:hi], c[lo:hi], u[lo:hi], None))
            i += 1
        held = _period_step(run, parts, limits, K, lastF, pauses)
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
        # The scheduler down at the opening: each arrives when it is up, meets overlap then, and expires if
        # it is past its max_lateness by then (the loop's deadline when a run gets its slot).
        late = beyond(tu - run.eligible[b_rows], run.p_maxlate[b_s], run.p_edge[b_s]) if tu > T else None
        pending[q] = (b_rows, b_s, b_a, np.full(n, tu, dtype=np.int64), np.full(n, tu, dtype=np.int64), late)


def _one_charge_counts(run: RunState, members: list[int], a: np.ndarray) -> np.ndarray:
    """Per account of ``members`` charging one amount (one cost, one attempt): how many runs fit in a
    period (:func:`.columns.one_cost_fit`, never more than it has arrivals); -1 for the others."""
    nb = len(run.sc.budgets)
    K = np.full(nb, -1, dtype=np.int64)
    f = run.sc.failures
    if f is not None and f.max_attempts > 1:
        return K
    n_acct = np.zeros(nb, dtype=np.int64)
    for i in range(0, len(a), run.chunk_rows[0]):  # chunk by chunk: no full-size int64 copy of ``a``
        n_acct += np.bincount(a[i:i + run.chunk_rows[0]], minlength=nb)
    for m in members:
        costs = run.p_cost[run.p_account == m]
        if len(costs) and (costs == costs[0]).all():
            K[m] = one_cost_fit(run.sc.budgets[m].limit, float(costs[0]), int(n_acct[m]) + 1)[0]
    return K


def _pause_groups(run: RunState) -> list[tuple[np.ndarray, list[tuple[int, int]]]]:
    """Paused spans with the schedules they hold (a member mask per schedule), schedules sharing spans together."""
    by_spans: dict[tuple, list[int]] = {}
    for i, items in run.pauses.items():
        by_spans.setdefault(tuple(items), []).append(i)
    out = []
    for items, members in by_spans.items():
        member = np.zeros(len(run.scheds), dtype=bool)
        member[members] = True
        out.append((member, list(items)))
    return out


def _period_step(run: RunState, parts: list[tuple], limits: np.ndarray, K: np.ndarray, lastF: np.ndarray,
                 pauses: list[tuple[np.ndarray, list[tuple[int, int]]]]):
    """One budget period of some accounts: arrivals (backlog first, then picks) meet overlap, their max_lateness
    (a backlog the scheduler could only take when up again), a pause, then budget.

    Each row not started yet holds its occupancy in ``finish - pick``
    (:func:`.columns.needs_order`), and its attempts and success. Returns
    the runs held for budget (rows, schedule, account, since) in arrival
    order per account, or None.
    """
    late = None  # arrivals past their max_lateness when they could start (an opening while the scheduler is down)
    if any(p[5] is not None for p in parts):
        late = np.concatenate([np.zeros(len(p[0]), dtype=bool) if p[5] is None else p[5] for p in parts])
        if not late.any():
            late = None
    if len(parts) == 1:
        rows, s, a, c, u = parts[0][:5]
    else:
        rows, s, a, c, u = (np.concatenate(x) for x in zip(*(p[:5] for p in parts)))
    if len(parts) > 1 or a.min() != a.max():
        # Account-major, arrival order within (a stable radix sort on a narrow key).
        o = np.argsort(a, kind="stable")
        rows, s, a, c, u = rows[o], s[o], a[o], c[o], u[o]
        late = None if late is None else late[o]
    # (One fixed duration per schedule: a gather from the small table, not two from the columns.)
    occ = run.p_dur[s] if run.fixed_duration else run.finish[rows] - run.pick[rows]
    fin = u + occ  # when each arrival would finish if it started
    skip_rows = np.flatnonzero(run.p_overlap[s] == OVERLAP["skip"])
    lastF0 = lastF[s[skip_rows]]  # before this period's starts: for the overlap verdicts below
    # Held into a pause (only a held run can be: a pick in one was skipped by columns.pickup): never starts.
    held_paused = np.zeros(len(rows), dtype=bool) if pauses else np.zeros(0, dtype=bool)
    for member, spans in pauses:
        sel = np.flatnonzero(member[s])
        held_paused[sel] = paused(spans, u[sel])
    blocked = held_paused if late is None else (late | held_paused if len(held_paused) else late)
    if K is not None and not blocked.any():
        start, turned = _fit_one_charge(run, s, a, c, fin, skip_rows, K, lastF)
    else:
        start, turned = _fit(run, rows, s, a, c, fin, skip_rows, limits, lastF, blocked), None
    st = np.flatnonzero(start)
    if len(st):
        r = rows[st]
        ok = run.success[r]
        run.start[r] = u[st]
        run.finish[r] = fin[st]
        run.started[r] = True
        run.state[r] = np.where(ok, S["done"], S["failed"]).astype(np.int8)
        run.reason[r] = np.where(ok, NONE, R["retries_exhausted"]).astype(np.int8)
    # -- what did not start: turned away by a run of its schedule still going
    # when it arrived (the last start before it in arrival order), else no room.
    if turned is None:
        turned = np.zeros(len(rows), dtype=bool)
        if len(skip_rows):
            # (Not started: a finish before every arrival, so that it turns none away.)
            floor = int(c[skip_rows].min()) - 1
            going = _last_before(s[skip_rows], np.where(start[skip_rows], fin[skip_rows], floor), lastF0)
            turned[skip_rows] = ~start[skip_rows] & (c[skip_rows] < going)
    if turned.any():
        r = rows[turned]
        run.state[r] = S["skipped"]
        run.reason[r] = R["overlap"]
    no_room = ~start & ~turned
    if late is not None:
        late &= ~turned  # (the overlap check comes first, then the deadline, then a pause)
        r = rows[late]
        run.state[r] = S["expired"]
        run.reason[r] = R["max_lateness"]
        no_room &= ~late
    if len(held_paused):
        held_paused &= ~turned  # (the overlap check comes first)
        if late is not None:
            held_paused &= ~late
        r = rows[held_paused]
        run.state[r] = S["skipped"]
        run.reason[r] = R["paused"]
        no_room &= ~held_paused
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


def _fit(run: RunState, rows: np.ndarray, s: np.ndarray, a: np.ndarray, c: np.ndarray, fin: np.ndarray,
         skip_rows: np.ndarray, limits: np.ndarray, lastF: np.ndarray, never: np.ndarray) -> np.ndarray:
    """Which arrivals of one period start (account-major, arrival order within): the loop's greedy fit.

    The loop takes arrivals one by one: one passes the overlap check (no run
    of its ``skip`` schedule still going), then starts if its charge fits
    (:func:`.rules.fits`) what the period started so far. That is found a
    few arrivals at a time. An account's *candidates* are the arrivals not
    decided yet whose charge fits what it has spent (a float sum only grows,
    and adding to it is monotone, so the others never fit again). Assuming
    each candidate passing the overlap check starts (:func:`_chain`), the
    running sums of their charges (in order, as the loop adds them:
    :func:`_running_sums`) are exact up to the account's first one that
    does not fit; the next round goes on from there. With one cost, the
    second round finds no candidate; retries and mixed costs take a few.

    Arrivals marked ``never`` (held into a pause; empty: none) do not start.
    ``lastF`` (each schedule's last start's finish) is kept up to date.
    """
    n = len(rows)
    f = run.sc.failures
    # rules.charge, as the loop computes it (one attempt each: the cost)
    x = run.p_cost[s] if f is None or f.max_attempts == 1 else run.p_cost[s] * run.attempts_n[rows]
    nb = len(limits)
    lim = limits[a]
    start = np.zeros(n, dtype=bool)
    spent = np.zeros(nb)  # per account: what the period started before the undecided arrivals
    undecided = ~never if len(never) else np.ones(n, dtype=bool)
    while True:
        cand = np.flatnonzero(undecided & fits(spent[a], x, lim))
        if not len(cand):
            return start
        ch = cand[_chain(s, c, fin, skip_rows, cand, lastF, run.fixed_duration)]
        if not len(ch):
            return start
        sums = _running_sums(x[ch], a[ch], spent)
        fit = fits(0.0, sums, lim[ch])
        # Each account's first chained candidate that does not fit (n: none).
        first_miss = np.full(nb, n, dtype=np.int64)
        miss = np.flatnonzero(~fit)
        if len(miss):
            np.minimum.at(first_miss, a[ch[miss]], ch[miss])
        undecided[cand[cand <= first_miss[a[cand]]]] = False
        new = ch[ch < first_miss[a[ch]]]
        start[new] = True
        if len(new):
            np.maximum.at(lastF, s[new], fin[new])
        # An account whose chained candidates all fitted is done (what is left
        # never fits); the others go on after their first misfit.
        done = np.ones(nb, dtype=bool)
        if len(miss):
            m = np.unique(a[ch[miss]])
            done[m] = False
            k = np.searchsorted(ch, first_miss[m])  # the misfit's place among the chained candidates
            prev = np.maximum(k - 1, 0)
            spent[m] = np.where((k > 0) & (a[ch[prev]] == m), sums[prev], spent[m])
        undecided &= ~done[a]


def _fit_one_charge(run: RunState, s: np.ndarray, a: np.ndarray, c: np.ndarray, fin: np.ndarray,
                    skip_rows: np.ndarray, K: np.ndarray, lastF: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """:func:`_fit` when each account charges one amount: which arrivals start, and which are turned away.

    The sum started after ``k`` starts is the same float whatever ran, so
    exactly the first ``K[a]`` arrivals passing the overlap check start
    (:func:`_one_charge_counts`). Before the last of them the overlap check is
    what happens; after it nothing starts, so an arrival is turned away only
    by a start already made.
    """
    n = len(s)
    chain = _chain(s, c, fin, skip_rows, np.arange(n), lastF, run.fixed_duration)
    cs = np.cumsum(chain)
    cs -= chain  # arrivals passing the check before each row
    head = np.empty(n, dtype=bool)
    head[0] = True
    np.not_equal(a[1:], a[:-1], out=head[1:])
    first = np.flatnonzero(head)
    cs -= np.repeat(cs[first], np.diff(np.append(first, n)))
    after = cs >= K[a]
    start = chain & ~after
    st = np.flatnonzero(start)
    if len(st):
        np.maximum.at(lastF, s[st], fin[st])
    turned = ~chain & ~after
    if len(skip_rows):
        late = skip_rows[after[skip_rows]]
        turned[late] = c[late] < lastF[s[late]]
    return start, turned


def _chain(s: np.ndarray, c: np.ndarray, fin: np.ndarray, skip_rows: np.ndarray, cand: np.ndarray,
           lastF: np.ndarray, fixed: bool) -> np.ndarray:
    """Which of the candidates ``cand`` pass the overlap check if every candidate that passes it starts.

    A ``skip`` arrival is turned away when it comes before its schedule's
    last start's finish. Starts (``u``) never decrease along a schedule's
    arrivals and a finish is never before its start, so an arrival at or
    after every earlier candidate's finish (started or not) is never turned
    away, and one before that, right after a candidate that passed, always
    is (that one is going): only runs of two or more such arrivals need a
    look one by one. (With one ``fixed`` duration per schedule, finishes
    grow with starts: the latest earlier finish is the previous one.)
    """
    ok = np.ones(len(cand), dtype=bool)
    if not len(skip_rows):
        return ok
    pos = np.flatnonzero(np.isin(cand, skip_rows, assume_unique=True)) if len(skip_rows) < len(s) \
        else np.arange(len(cand))
    if not len(pos):
        return ok
    g = cand[pos]
    o = np.argsort(s[g], kind="stable")
    g, pos = g[o], pos[o]
    s_g, c_g, f_g = s[g], c[g], fin[g]
    head = np.empty(len(g), dtype=bool)
    head[0] = True
    np.not_equal(s_g[1:], s_g[:-1], out=head[1:])
    # before each: the latest finish of the schedule's earlier candidates, or its last start's
    before = np.empty(len(g), dtype=np.int64)
    if fixed:
        before[1:] = f_g[:-1]
    else:
        before[1:], _ = _group_running_max(f_g, head)
    before[head] = -BIG
    np.maximum(before, lastF[s_g], out=before)
    flag = c_g < before
    if flag.any():
        chain = ~flag
        cont = flag.copy()
        cont[0] = False
        cont[1:] &= flag[:-1] & ~head[1:]
        if cont.any():
            L = before  # for a flagged arrival: the last finish of a start before it
            for k in np.flatnonzero(cont).tolist():
                lk = int(f_g[k - 1]) if chain[k - 1] else int(L[k - 1])
                L[k] = lk
                chain[k] = int(c_g[k]) >= lk
        ok[pos] = chain
    return ok


def _last_before(s: np.ndarray, f: np.ndarray, init: np.ndarray) -> np.ndarray:
    """For rows in arrival order: the largest ``f`` of an earlier row of the same schedule, or ``init``."""
    o = np.argsort(s, kind="stable")
    s_o = s[o]
    head = np.empty(len(s), dtype=bool)
    head[0] = True
    np.not_equal(s_o[1:], s_o[:-1], out=head[1:])
    before = np.empty(len(s), dtype=np.int64)
    before[1:], _ = _group_running_max(f[o], head)
    before[head] = -BIG
    out = np.empty(len(s), dtype=np.int64)
    out[o] = before
    return np.maximum(out, init)


def _running_sums(x: np.ndarray, a: np.ndarray, spent: np.ndarray) -> np.ndarray:
    """Per account (``a`` account-major): ``spent[a] + x1``, ``(spent[a] + x1) + x2``, ... bit for bit.

    The loop adds charges one at a time. Whole charges whose sums stay below
    2**53 add up exactly in any order, so one running sum over every account
    less each account's offset is exact. Otherwise ``np.cumsum`` (an
    accumulate, not a pairwise sum) adds in the loop's order along a row, so
    accounts are laid out as the rows of a zero-padded matrix (trailing zeros
    change nothing) when that is not much larger than the input, else summed
    one by one.
    """
    n = len(x)
    head = np.empty(n, dtype=bool)
    head[0] = True
    np.not_equal(a[1:], a[:-1], out=head[1:])
    firsts = np.flatnonzero(head)
    if len(firsts) == 1:
        return np.cumsum(np.concatenate([[spent[a[0]]], x]))[1:]
    sizes = np.diff(np.append(firsts, n))
    start = spent[a[firsts]]
    if float(start.sum()) + float(x.sum()) < 2**53 and (np.floor(x) == x).all() and (np.floor(start) == start).all():
        sums = np.cumsum(x)
        shift = np.repeat(start - (sums[firsts] - x[firsts]), sizes)  # the account's spent less what came before
        sums += shift
        return sums
    width = int(sizes.max()) + 1
    if len(firsts) * width <= 4 * n + 1024:
        grid = np.zeros((len(firsts), width))
        grid[:, 0] = spent[a[firsts]]
        gid = np.cumsum(head) - 1
        col = np.arange(n) - firsts[gid] + 1
        grid[gid, col] = x
        np.cumsum(grid, axis=1, out=grid)
        return grid[gid, col]
    out = np.empty(n)
    for lo, size in zip(firsts.tolist(), sizes.tolist()):
        out[lo:lo + size] = np.cumsum(np.concatenate([[spent[a[lo]]], x[lo:lo + size]]))[1:]
    return out

def _period_open(run: RunState, T: int, rows: np.ndarray, s: np.ndarray, a: np.ndarray, since: np.ndarray):
    """A budget period opens at ``T`` for the held runs: their wait, then :func:`.rules.held_at_opening`
    (the loop's order, expiry and catch-up; the same compiled function the loop calls).

    Returns the runs that arrive (rows, schedule, account) in the loop's
    order: schedules by their first held run, each one's by due instant.
    """
    from .compiled_rules import held_at_opening

    run.budget_wait[rows] += (T - since) / US
    # Each schedule's rank: the order of its first place in the held list (accounts apart, held order within).
    _, first, inverse = np.unique(s, return_index=True, return_inverse=True)
    rank = np.argsort(np.argsort(first, kind="stable"), kind="stable")[inverse]
    i64 = np.int64
    order, outcome = held_at_opening(int(T), rank.astype(i64), run.due[rows].astype(i64),
                                     run.eligible[rows].astype(i64), run.p_maxlate[s].astype(i64),
                                     run.p_edge[s].astype(i64), run.p_catchup[s].astype(i64), run.p_limit[s].astype(i64))
    rows, s, a = rows[order], s[order], a[order]
    for code, st, why in ((EXPIRES, "expired", "max_lateness"), (COALESCED_HELD, "coalesced", "catchup"),
                          (SKIPPED_HELD, "skipped", "catchup")):
        hit = outcome == code
        if hit.any():
            run.state[rows[hit]] = S[st]
            run.reason[rows[hit]] = R[why]
    keep = outcome == ARRIVES
    if not keep.any():
        return None
    return rows[keep], s[keep], a[keep]


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
