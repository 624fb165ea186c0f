"""Which of a budget period's arrivals start: the ordered loop's greedy fit, found in columns.

:func:`fit_arrivals` (and :func:`fit_one_charge`, when every run of an account
charges the same) answer, for one period of :mod:`.budget_periods`, what the
loop would: arrivals taken one by one, each starting if it passes the overlap
check and its charge fits what the period started so far (:func:`.run_rules.fits`).
"""

from __future__ import annotations

import numpy as np

from .order import group_running_max, one_cost_fit
from .run_rules import BIG, fits
from .state import RunState

__all__ = ["fit_arrivals", "fit_one_charge", "one_charge_counts", "last_before", "going_k", "started"]


def one_charge_counts(run: RunState, members: list[int], a: np.ndarray) -> np.ndarray:
    """Per account of ``members`` charging one amount (one cost, one attempt): how many runs fit in a
    period (:func:`.order.one_cost_fit`, never more than it has arrivals); -1 for the others."""
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


def fit_arrivals(run: RunState, rows: np.ndarray, s: np.ndarray, a: np.ndarray, c: np.ndarray, fin: np.ndarray,
         skip_rows: np.ndarray, limits: np.ndarray, lastF: np.ndarray, never: np.ndarray) -> np.ndarray:
    """Which arrivals of one period start (account-major, arrival order within): the loop's greedy fit.

    The loop takes arrivals one by one: one passes the overlap check (no run
    of its ``skip`` schedule still going), then starts if its charge fits
    (:func:`.run_rules.fits`) what the period started so far. That is found a
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
        ch = cand[_chain(s, c, fin, skip_rows, cand, lastF, going_k(run, lastF))]
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
            started(lastF, s[new], fin[new])
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


def fit_one_charge(run: RunState, s: np.ndarray, a: np.ndarray, c: np.ndarray, fin: np.ndarray,
                    skip_rows: np.ndarray, K: np.ndarray, lastF: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """:func:`fit_arrivals` when each account charges one amount: which arrivals start, and which are turned away.

    The sum started after ``k`` starts is the same float whatever ran, so
    exactly the first ``K[a]`` arrivals passing the overlap check start
    (:func:`one_charge_counts`). Before the last of them the overlap check is
    what happens; after it nothing starts, so an arrival is turned away only
    by a start already made.
    """
    n = len(s)
    k = going_k(run, lastF)
    chain = _chain(s, c, fin, skip_rows, np.arange(n), lastF, k)
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
        started(lastF, s[st], fin[st])
    turned = ~chain & ~after
    if len(skip_rows):
        late = skip_rows[after[skip_rows]]
        turned[late] = c[late] < (lastF[s[late]] if k is None else lastF[s[late], k[s[late]] - 1])
    return start, turned


def going_k(run: RunState, lastF: np.ndarray) -> np.ndarray | None:
    """Per schedule, how many runs may be going (``max_active``, at least 1) when ``lastF`` keeps each one's
    latest finishes (2-D, :mod:`.budget_going`); None when it keeps the last one only (every k is 1)."""
    return np.maximum(run.p_max_active, 1).astype(np.int64) if lastF.ndim == 2 else None


def started(lastF: np.ndarray, s: np.ndarray, fin: np.ndarray) -> None:
    """Record started runs (schedule ``s``, finish ``fin``) in ``lastF``."""
    if lastF.ndim == 2:
        from .budget_going import push_finishes

        push_finishes(lastF, s.astype(np.int64), fin.astype(np.int64))
    else:
        np.maximum.at(lastF, s, fin)


def _chain(s: np.ndarray, c: np.ndarray, fin: np.ndarray, skip_rows: np.ndarray, cand: np.ndarray,
           lastF: np.ndarray, k: np.ndarray | None = None) -> np.ndarray:
    """Which of the candidates ``cand`` pass the overlap check if every candidate that passes it starts.

    A ``skip`` arrival is turned away when ``k`` runs of its schedule are
    going (one, ``k`` None: its last start's finish is after it). Whether
    one passes depends on which earlier ones passed, so the ``skip``
    candidates are walked in arrival order, compiled
    (:func:`.budget_going.chain_k`; with one run at a time ``lastF``, each
    schedule's latest finish, is that walk's table of one column: a passing
    run starts at or after every earlier start's finish, so its own finish
    is the latest). A vectorised pre-pass with a Python walk over the
    conflicting stretches, what this was, cost 60% of a sweep's budget
    periods after an outage (thousands of conflicts a period).
    """
    from .budget_going import chain_k

    ok = np.ones(len(cand), dtype=bool)
    if not len(skip_rows):
        return ok
    pos = np.flatnonzero(np.isin(cand, skip_rows, assume_unique=True)) if len(skip_rows) < len(s) \
        else np.arange(len(cand))
    if not len(pos):
        return ok
    if k is None:
        lastF, k = lastF.reshape(-1, 1), np.ones(len(lastF), dtype=np.int64)
    ok[pos] = chain_k(s.astype(np.int64), c, fin, cand[pos].astype(np.int64), lastF, k)
    return ok


def last_before(s: np.ndarray, f: np.ndarray, init: np.ndarray) -> np.ndarray:
    """For rows in arrival order: the largest ``f`` of an earlier row of the same schedule, or ``init``."""
    o = np.argsort(s, kind="stable")
    s_o = s[o]
    head = np.empty(len(s), dtype=bool)
    head[0] = True
    np.not_equal(s_o[1:], s_o[:-1], out=head[1:])
    before = np.empty(len(s), dtype=np.int64)
    before[1:], _ = group_running_max(f[o], head)
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
