"""Runs still going per schedule, for ``overlap="skip"`` with ``max_active`` k > 1 in the budget-period columns.

The ordered loop turns a ``skip`` arrival away when k runs of its schedule
are going (started, finish after the arrival: a run ending at an instant ends
before that instant's picks; :mod:`.event_loop`). That is: the k-th latest
finish of the schedule's started runs is after the arrival. With k = 1 that is
the last start's finish, which :mod:`.budget_fit` finds in columns; for k > 1
each schedule keeps its k latest finishes (``F``, one row per schedule,
latest first, ``-BIG`` where fewer ran), and the arrivals of a period are
walked in arrival order here, compiled: each step is a few comparisons.

>>> import numpy as np
>>> F = np.full((1, 2), -10**18, dtype=np.int64)
>>> k = np.array([2])
>>> # three arrivals of one schedule at 0, 1, 2, each lasting 10: two go, the third finds two going
>>> chain_k(np.zeros(3, np.int64), np.arange(3), np.arange(3) + 10, np.arange(3), F, k).tolist()
[True, True, False]
"""

from __future__ import annotations

import numpy as np
from numba import njit

__all__ = ["chain_k", "going_before_k", "push_finishes", "kth_latest"]


@njit(cache=True)
def _insert(F: np.ndarray, s: int, f: int) -> None:
    """Add finish ``f`` to schedule ``s``'s latest finishes (kept latest first, the earliest dropped)."""
    row = F[s]
    if f <= row[-1]:
        return
    i = len(row) - 1
    while i > 0 and row[i - 1] < f:
        row[i] = row[i - 1]
        i -= 1
    row[i] = f


@njit(cache=True)
def chain_k(s: np.ndarray, c: np.ndarray, fin: np.ndarray, cand: np.ndarray, F: np.ndarray,
            k: np.ndarray) -> np.ndarray:
    """Which ``skip`` candidates (``cand``: rows in arrival order) pass the overlap check if every one that
    passes starts: fewer than ``k[s]`` runs going at its arrival ``c``. ``F`` is not changed."""
    W = F.copy()
    ok = np.zeros(len(cand), dtype=np.bool_)
    for j in range(len(cand)):
        r = cand[j]
        si = s[r]
        if c[r] >= W[si, k[si] - 1]:
            ok[j] = True
            _insert(W, si, fin[r])
    return ok


@njit(cache=True)
def going_before_k(s: np.ndarray, fin: np.ndarray, started: np.ndarray, rows: np.ndarray, F: np.ndarray,
                   k: np.ndarray) -> np.ndarray:
    """For ``rows`` (in arrival order): the ``k[s]``-th latest finish of the runs of its schedule started
    before it (those in ``F``, and earlier ``rows`` that ``started``): an arrival before it found k going."""
    W = F.copy()
    out = np.empty(len(rows), dtype=np.int64)
    for j in range(len(rows)):
        r = rows[j]
        si = s[r]
        out[j] = W[si, k[si] - 1]
        if started[r]:
            _insert(W, si, fin[r])
    return out


@njit(cache=True)
def push_finishes(F: np.ndarray, s: np.ndarray, fin: np.ndarray) -> None:
    """Record started runs (schedule ``s``, finish ``fin``) in ``F``."""
    for j in range(len(s)):
        _insert(F, s[j], fin[j])


def kth_latest(F: np.ndarray, s: np.ndarray, k: np.ndarray) -> np.ndarray:
    """Each row's schedule's ``k``-th latest finish so far (``-BIG``: fewer than k started)."""
    return F[s, k[s] - 1]
