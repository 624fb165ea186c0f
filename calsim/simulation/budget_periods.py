"""Budgets settled one budget period at a time in columns, with the event loop's exact outcome.

The event loop's rules for an account touch nothing outside it (without a
capacity limit, the only state shared across accounts), so accounts can be
settled separately. An account is settled here when overlap is ``allow`` or
``skip`` for each of its schedules (any ``max_active``: :mod:`.budget_going`
keeps the runs going), none of them works through a backlog in turn, and
its budget's local periods never go back in time (no zone transition moving
local time back across a period boundary).
Runs may fail and be retried, last a drawn (lognormal) time and cost
different amounts: each row's occupancy, success and charge (cost times
attempts) are its own. The rules are :mod:`.run_rules`' (period, charge,
catch-up, expiry, scheduler up), applied to a period's arrivals at once.
"""

from __future__ import annotations

import numpy as np

from ..times import US
from .run_rules import (ARRIVES, BIG, COALESCED_HELD, EXPIRES, OVERLAP, SKIPPED_HELD, beyond, paused, period_index,
                    period_of, period_start, up)
from .budget_fit import fit_arrivals, fit_one_charge, going_k, last_before, one_charge_counts
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
      at a time by :func:`fit_arrivals`, or at once by :func:`fit_one_charge`
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
    # Each schedule's last start's finish so far; with max_active k > 1 on a skip schedule, its k latest
    # (:mod:`.budget_going`; an allow schedule is never turned away, whatever its max_active).
    kmax = int(run.p_max_active[run.p_overlap == OVERLAP["skip"]].max(initial=1))
    lastF = np.full(len(run.scheds) if kmax == 1 else (len(run.scheds), kmax), -BIG, dtype=np.int64)
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
    """:func:`.run_rules.up` of ascending ``t`` (still ascending): ``t`` itself when no instant can move."""
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
    counts = one_charge_counts(run, members, a)
    K = counts if (counts[members] >= 0).all() else None  # (every account one charge: the shortcut of fit_one_charge)
    pauses = _pause_groups(run)
    period_fn = period_of(run.budget_tables[members[0]], b0.period)
    starts, stops, steps = cuts
    # Each period's successor opens when a backlog is held: found for every period with picks at once (a
    # scalar period_start resolves one wall time a call).
    opening = dict(zip(steps, period_start(run.budget_tables[members[0]], b0.period,
                                           np.asarray(steps, dtype=np.int64) + 1).tolist())) if steps else {}
    pending: dict[int, tuple] = {}  # period -> the backlog arriving in it (rows, s, a, c, u)
    i = 0
    while i < len(steps) or pending:
        j_pick = steps[i] if i < len(steps) else None
        j_pend = min(pending) if pending else None
        j = j_pick if j_pend is None else (j_pend if j_pick is None else min(j_pick, j_pend))
        assert j is not None  # (the loop runs while a pick or a backlog is left)
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
        T = opening[j] if j in opening else int(period_start(run.budget_tables[members[0]], b0.period, j + 1))
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


def _pause_groups(run: RunState) -> list[tuple[np.ndarray, list[tuple[int, int]]]]:
    """Paused spans with the schedules they hold (a member mask per schedule), schedules sharing spans together."""
    by_spans: dict[tuple[tuple[int, int], ...], list[int]] = {}
    for i, items in run.pauses.items():
        by_spans.setdefault(tuple(items), []).append(i)
    out = []
    for spans, members in by_spans.items():
        member = np.zeros(len(run.scheds), dtype=bool)
        member[members] = True
        out.append((member, list(spans)))
    return out


def _period_step(run: RunState, parts: list[tuple], limits: np.ndarray, K: np.ndarray | None, lastF: np.ndarray,
                 pauses: list[tuple[np.ndarray, list[tuple[int, int]]]]):
    """One budget period of some accounts: arrivals (backlog first, then picks) meet overlap, their max_lateness
    (a backlog the scheduler could only take when up again), a pause, then budget.

    Each row not started yet holds its occupancy in ``finish - pick``
    (:func:`.order.needs_order`), and its attempts and success. Returns
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
    # before this period's starts: for the overlap verdicts below
    lastF0 = lastF[s[skip_rows]] if lastF.ndim == 1 else lastF.copy()
    # Held into a pause (only a held run can be: a pick in one was skipped by columns.pickup): never starts.
    held_paused = np.zeros(len(rows), dtype=bool) if pauses else np.zeros(0, dtype=bool)
    for member, spans in pauses:
        sel = np.flatnonzero(member[s])
        held_paused[sel] = paused(spans, u[sel])
    blocked = held_paused if late is None else (late | held_paused if len(held_paused) else late)
    if K is not None and not blocked.any():
        start, turned = fit_one_charge(run, s, a, c, fin, skip_rows, K, lastF)
    else:
        start, turned = fit_arrivals(run, rows, s, a, c, fin, skip_rows, limits, lastF, blocked), None
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
        if len(skip_rows) and lastF.ndim == 2:
            from .budget_going import going_before_k

            k = going_k(run, lastF)
            assert k is not None  # (lastF keeps k finishes each)
            going = going_before_k(s.astype(np.int64), fin, start, skip_rows, lastF0, k)
            turned[skip_rows] = ~start[skip_rows] & (c[skip_rows] < going)
        elif len(skip_rows):
            # (Not started: a finish before every arrival, so that it turns none away.)
            floor = int(c[skip_rows].min()) - 1
            going = last_before(s[skip_rows], np.where(start[skip_rows], fin[skip_rows], floor), lastF0)
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


def _period_open(run: RunState, T: int, rows: np.ndarray, s: np.ndarray, a: np.ndarray, since: np.ndarray):
    """A budget period opens at ``T`` for the held runs: their wait, then :func:`.run_rules.held_at_opening`
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
                                     run.p_edge[s].astype(i64), run.p_catchup[s].astype(i64),
                                     run.p_limit[s].astype(i64))
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
    """Slices of ascending instants ``t`` (µs) by local period (as :func:`.run_rules.period_index`), whose
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
