"""Each run rule of the simulation, defined once (DESIGN.md §5).

The column steps, the budget-period settling and the ordered event loop all
decide through these small pure functions, so a rule fixed here is fixed on
every path. Each takes numpy arrays (or plain ints where the event loop asks
about one run) and returns what the rule says:

========================  ====================================================================
rule                      function
========================  ====================================================================
scheduler up              :func:`up` (first up instant at or after ``t``), :func:`wake`
                          (the wake-up that picks an occurrence), :func:`paused`
misfire / deadline        :func:`beyond` (lateness past a limit, with the scheduler's edge)
catch-up                  :func:`backlog_groups` (a wake-up's backlog, in due order),
                          :func:`backlog_outcome` (which members run, which are coalesced) and
                          :func:`held_outcome` (runs held for budget, at a period's opening)
budget period             :func:`period_index`, :func:`period_of`, :func:`period_start`
                          (local calendar periods from the scenario's release)
budget charge             :func:`charge`, :func:`fits`
========================  ====================================================================

>>> import numpy as np
>>> from calsim.simulation import rules
>>> rules.backlog_outcome(np.array([1, 1, 1]), np.zeros(3, int), np.arange(3), np.full(3, 3))[0].tolist()
[False, False, True]
"""

from __future__ import annotations

import numpy as np

from ..times import DAY_US, US

__all__ = ["AGEING_US", "FITS_TOLERANCE", "BIG", "CATCHUP", "OVERLAP", "EDGE", "retry_wait", "up", "wake", "slept_out", "paused", "beyond", "backlog_groups",
           "backlog_outcome", "held_outcome", "period_index", "period_of", "period_start", "charge", "fits"]

BIG = np.iinfo(np.int64).max // 4  # "never": after every instant a scenario can hold
CATCHUP = {"all": 0, "latest": 1, "earliest": 2, "skip": 3, "bounded": 4}
OVERLAP = {"allow": 0, "skip": 1, "buffer_one": 2, "buffer_all": 3, "cancel_other": 4, "buffer_latest": 5}
# What a lateness exactly equal to a limit (misfire_grace, max_lateness) is.
EDGE = {"on_time": 0, "late": 1}
# A run queued for capacity gains one priority level per hour it waits, so
# that low-priority work is delayed, never starved (the DESIGN's "ageing").
AGEING_US = 3600 * US
# Budget room left over by float sums of fractional costs (:func:`fits`).
FITS_TOLERANCE = 1e-9


# -- when the scheduler is up ---------------------------------------------------------------------


def up(t, outages: tuple[tuple[int, int], ...]):
    """The first instant at or after ``t`` at which the scheduler is up (outages are half-open ``[start, end)``).

    ``outages`` are sorted and disjoint; adjacent ones (one ends where the next
    starts) chain. ``t`` is an int (one run, in the event loop) or an array.

    >>> up(5, ((0, 10), (10, 20))), up(25, ((0, 10),))
    (20, 25)
    """
    if isinstance(t, (int, np.integer)):
        t = int(t)
        for start, end in outages:
            if start <= t < end:
                t = end
        return t
    t = np.array(t, dtype=np.int64, copy=True)
    for start, end in outages:
        np.copyto(t, end, where=(t >= start) & (t < end))
    return t


def wake(eligible: np.ndarray, tick: int, outages: tuple[tuple[int, int], ...], recovery=True,
         suspends: np.ndarray | None = None, sleep_end=False) -> np.ndarray:
    """The wake-up that picks each occurrence: the first at or after ``eligible``.

    The scheduler wakes on multiples of ``tick`` from the Unix epoch while up,
    and once at each instant it comes back up (DESIGN §5). So an occurrence is
    picked at the first up-tick at or after it, unless the scheduler comes back
    up before that tick (or is down at it): then at that come-back instant.

    ``recovery`` (per row, or one for all) False is a scheduler that does not
    look when it comes back: it resumes at its first tick strictly after that
    instant (cron starts its clock at the current minute and first runs the
    next one: cronie ``cron.c``, ``set_time`` then ``cron_sleep(timeRunning + 1)``).
    That is a restart; after an outage that ``suspends`` marks (the process
    slept with the machine) every scheduler wakes at the resume instant,
    unless ``sleep_end`` (per row, or one for all; ``Policy.suspend_wake ==
    "sleep_end"``): then it first sleeps what was left of its sleep towards
    the tick it was waiting for (a ``sleep()`` measured on CLOCK_MONOTONIC,
    which stops while the machine is suspended): a suspend ``[a, b)`` wakes
    it at ``b + (next tick at or after a) - a``, and ticks before that pass
    unseen (:func:`slept_out`).

    >>> MIN = 60 * 10**6
    >>> wake(np.array([30 * 10**6]), MIN, ((0, 90 * 10**6),)).tolist()  # down when due: back at 90 s
    [90000000]
    >>> wake(np.array([30 * 10**6]), MIN, ((0, 90 * 10**6),), recovery=False).tolist()  # cron: the next minute
    [120000000]
    >>> wake(np.array([30 * 10**6]), MIN, ()).tolist()  # up: the next tick
    [60000000]
    >>> sus = np.array([True])  # suspended from 30 s to 90 s: at the resume, or 30 s later (cron)
    >>> [wake(np.array([60 * 10**6]), MIN, ((30 * 10**6, 90 * 10**6),), False, sus, end).tolist() for end in (False, True)]
    [[90000000], [120000000]]
    """
    if suspends is not None and np.any(sleep_end) and suspends.any():
        picked = wake(eligible, tick, slept_out(outages, suspends, tick), recovery, suspends)
        if np.ndim(sleep_end) == 0:
            return picked
        return np.where(sleep_end, picked, wake(eligible, tick, outages, recovery, suspends))
    pick = np.negative(eligible)
    np.floor_divide(pick, tick, out=pick)
    np.multiply(pick, -tick, out=pick)
    if not outages:
        return pick
    starts = np.array([s for s, _ in outages], dtype=np.int64)
    ends = np.array([e for _, e in outages], dtype=np.int64)
    # Only rows whose [eligible, tick] span meets the outages' hull can move.
    idx = np.flatnonzero((pick >= starts[0]) & (eligible <= ends[-1]))
    if not len(idx):
        return pick
    e, c = eligible[idx], pick[idx]
    j = np.searchsorted(ends, e, side="left")  # the first outage ending at or after eligible
    has = j < len(ends)
    back = np.where(has, ends[np.minimum(j, len(ends) - 1)], BIG)
    back = np.where(has, up(back, outages), BIG)  # a come-back inside the next outage is no wake-up
    c_up = up(c, outages)
    looks = np.minimum(np.where(c_up != c, BIG, c), back)
    if np.ndim(recovery) == 0 and recovery:
        pick[idx] = looks
        return pick
    # Without a look at recovery: the first tick after a come-back, never the come-back itself...
    ticks = c
    for _ in range(len(outages) + 1):
        t_up = up(ticks, outages)
        moved = (t_up != ticks) | np.isin(ticks, ends)
        if not moved.any():
            break
        ticks = np.where(moved, (t_up // tick + 1) * tick, ticks)
    if suspends is not None and suspends.any():
        # ... but a process that slept through a suspend wakes when it resumes.
        s_ends = ends[suspends]
        k = np.searchsorted(s_ends, e, side="left")
        s_back = np.where(k < len(s_ends), up(s_ends[np.minimum(k, len(s_ends) - 1)], outages), BIG)
        ticks = np.minimum(ticks, s_back)
    pick[idx] = np.where(np.asarray(recovery)[idx] if np.ndim(recovery) else False, looks, ticks)
    return pick


def slept_out(outages: tuple[tuple[int, int], ...], suspends: np.ndarray, tick: int) -> tuple[tuple[int, int], ...]:
    """The outages as a scheduler asleep in a ``sleep()`` until its next tick lives them: each suspend
    ``[a, b)`` lasts until ``b`` plus what was left of that sleep at ``a`` (``-a mod tick``: 0 when ``a`` is a
    tick, whose wake-up the suspend took), but never into the next outage (then they chain).

    Linux measures ``nanosleep`` on CLOCK_MONOTONIC, which does not count suspended time (nanosleep(2)); cron
    sleeps to second 1 of the next minute (``cron.c`` ``cron_sleep``), so after a resume it wakes only when the
    rest of that sleep has run out, up to a minute later (measured on Debian cron 3.0pl1 under libfaketime:
    tests/test_cron_daemon.py).

    >>> MIN = 60
    >>> slept_out(((90, 300), (400, 500)), np.array([True, False]), MIN)
    ((90, 330), (400, 500))
    """
    out = list(outages)
    for j, (a, b) in enumerate(outages):
        if suspends[j]:
            end = b + (-a) % tick
            out[j] = (a, min(end, outages[j + 1][0]) if j + 1 < len(outages) else end)
    return tuple(out)


def paused(spans: list[tuple[int, int]] | None, t):
    """Whether an instant (an int, or each of an array) falls in one of a schedule's half-open paused spans
    ``[Pause, Resume)``: a paused schedule starts nothing (Temporal drops the paused span, no catch-up).

    >>> paused([(10, 20)], 20), paused([(10, 20)], np.array([9, 10])).tolist()
    (False, [False, True])
    """
    if isinstance(t, (int, np.integer)):
        return bool(spans) and any(a <= t < b for a, b in spans)  # type: ignore[union-attr]
    out = np.zeros(len(t), dtype=bool)
    for a, b in spans or ():
        out |= (t >= a) & (t < b)
    return out


# -- misfire and deadline -------------------------------------------------------------------------


def beyond(lateness, limit, edge):
    """Whether ``lateness`` is past ``limit`` (misfire grace or max lateness), per the scheduler's edge.

    A lateness equal to the limit is within it for ``edge`` 0 (``"on_time"``:
    APScheduler ``difference > grace_time``, Temporal ``> catchupWindow``) and
    past it for ``edge`` 1 (``"late"``: Kubernetes considers only schedule
    times strictly after ``now - startingDeadlineSeconds``; Quartz misfires
    when ``nextFireTime <= now - misfireThreshold``). A run picked with no
    lateness at all is never past a limit.

    >>> beyond(np.array([5, 5, 0]), 5, np.array([0, 1, 1])).tolist()
    [False, True, False]
    """
    out = lateness > limit
    if np.ndim(edge) == 0 and edge == 0:
        return out
    return out | ((np.asarray(edge) == 1) & (lateness == limit) & (lateness > 0))


# -- catch-up -------------------------------------------------------------------------------------


def backlog_groups(sched: np.ndarray, wake_at: np.ndarray, due: np.ndarray) -> tuple[np.ndarray, ...]:
    """Order rows into backlogs: the rows one schedule picks at one wake-up, by due instant.

    A backlog is ordered by the instant each occurrence was due, never by wall
    time: across a fall-back 01:30 EST comes after 01:45 EDT. Returns
    ``(order, pos, size)``: the row order and, along it, each row's 0-based
    place in its backlog and the backlog's size.
    """
    order = np.lexsort((due, wake_at, sched))
    s_o, w_o = sched[order], wake_at[order]
    new = np.empty(len(order), dtype=bool)
    if len(order):
        new[0] = True
        new[1:] = (s_o[1:] != s_o[:-1]) | (w_o[1:] != w_o[:-1])
    gid = np.cumsum(new) - 1
    first = np.flatnonzero(new)
    pos = np.arange(len(order)) - first[gid]
    size = np.bincount(gid)[gid] if len(order) else np.zeros(0, dtype=np.int64)
    return order, pos, size


def held_outcome(mode: np.ndarray, limit: np.ndarray, pos: np.ndarray, size: np.ndarray):
    """:func:`backlog_outcome` for runs held for budget when a period opens: one held run is no backlog.

    (It waited for room, not for the scheduler; several of one schedule are a
    backlog again, and the catch-up mode decides.)
    """
    runs, coalesced = backlog_outcome(mode, limit, pos, size)
    return runs | (size == 1), coalesced & (size != 1)


def backlog_outcome(mode: np.ndarray, limit: np.ndarray, pos: np.ndarray, size: np.ndarray):
    """Which members of a backlog run: ``(runs, coalesced)``; the others are ``skipped``/``catchup``.

    ``mode`` is the :data:`CATCHUP` code, ``pos`` each member's 0-based place in
    due order and ``size`` its backlog's size. ``"all"`` runs every member,
    ``"latest"`` the newest and ``"earliest"`` the oldest (the rest
    ``coalesced``), ``"skip"`` none, ``"bounded"`` the newest ``limit``.
    """
    from_end = size - 1 - pos
    runs = mode == CATCHUP["all"]
    runs |= (mode == CATCHUP["latest"]) & (from_end == 0)
    runs |= (mode == CATCHUP["earliest"]) & (pos == 0)
    runs |= (mode == CATCHUP["bounded"]) & (from_end < limit)
    coalesced = ~runs & ((mode == CATCHUP["latest"]) | (mode == CATCHUP["earliest"]))
    return runs, coalesced


# -- budget periods -------------------------------------------------------------------------------


def _period_of_day(day, period: str):
    """Period index of local day numbers (days from 1970-01-01): the day, its ISO week, its month."""
    if period == "day":
        return day
    if period == "week":  # ISO weeks, Monday first; 1970-01-01 was a Thursday
        return (day + 3) // 7
    return np.asarray(day).astype("datetime64[D]").astype("datetime64[M]").astype(np.int64)


def period_index(table, period: str, t: np.ndarray) -> np.ndarray:
    """Index of the local calendar period (``day``/``week``/``month`` in ``table``'s zone) of each instant (µs).

    Days count from 1970-01-01, ISO weeks (Monday first) from the week of
    1970-01-01, months from 1970-01. The offset in force is read from the
    scenario's release (``table``), never from polars' or the system's zone
    data. Only the zone's transitions within [min t, max t] are searched (a
    year has a couple): about one pass over ``t``.
    """
    if not len(t):
        return np.zeros(0, dtype=np.int64)
    utc, offs = table.utc, table.offsets
    # offsets[j] is in force from utc[j-1]: j = searchsorted(utc, t // US, "right"), as offset_at_utc.
    j0 = int(np.searchsorted(utc, int(t.min()) // US, side="right"))
    j1 = int(np.searchsorted(utc, int(t.max()) // US, side="right"))
    off_us = offs[j0:j1 + 1].astype(np.int64) * US
    if j1 == j0:
        local = t + off_us[0]
    else:
        # utc <= t // US  <=>  utc * US <= t (integers)
        local = off_us[np.searchsorted(utc[j0:j1].astype(np.int64) * US, t, side="right")]
        local += t
    day = np.floor_divide(local, DAY_US, out=local)
    if period == "month":
        # Months of the few distinct days' range: one searchsorted over month starts.
        lo, hi = (int(x) for x in _period_of_day(np.array([day.min(), day.max()]), "month"))
        firsts = np.arange(lo, hi + 1).astype("datetime64[M]").astype("datetime64[D]").astype(np.int64)
        month = np.searchsorted(firsts, day, side="right")
        month += lo - 1
        return month
    return _period_of_day(day, period)


def period_of(table, period: str):
    """A scalar ``t -> period index`` with :func:`period_index`'s rule, for the event loop (one run at a time)."""
    import bisect

    utc, offs = table.utc.tolist(), table.offsets.tolist()

    def of(t: int) -> int:
        local = t + offs[bisect.bisect_right(utc, t // US)] * US
        return int(_period_of_day(local // DAY_US, period))

    return of


def period_start(table, period: str, index):
    """UTC instant (µs) at which local period ``index`` begins (its first local midnight).

    A midnight that does not exist (a DST jump at 00:00) opens at the jump.
    ``index`` is an int (one period, in the event loop) or an array (an int64 array back).
    """
    from ..resolution import resolve_wall

    idx = np.asarray(index, dtype=np.int64)
    if period == "day":
        wall = idx * DAY_US
    elif period == "week":
        wall = (idx * 7 - 3) * DAY_US
    else:
        wall = idx.astype("datetime64[M]").astype("datetime64[us]").astype(np.int64)
    r = resolve_wall(np.atleast_1d(wall), table, gap="next_valid", fold="first")
    due = np.asarray(r.due, dtype=np.int64)
    return int(due[0]) if np.ndim(index) == 0 else due


def retry_wait(backoff_us: int, k: int, cap_us: int | None = None) -> int:
    """The wait before retry ``k`` (1 for the second attempt): ``backoff * 2**(k-1)``, at most ``cap_us``.

    The doubling saturates (at the cap, else at :data:`BIG`): forty retries
    of a one-minute backoff are 2**39 minutes, far past any horizon, and an
    ``int64`` must not overflow on the way (the worker kernel's
    ``backoff_wait`` stops doubling the same way).

    >>> retry_wait(60_000_000, 3), retry_wait(60_000_000, 3, 90_000_000), retry_wait(60_000_000, 40) == BIG
    (240000000, 90000000, True)
    """
    cap = BIG if cap_us is None else min(int(cap_us), BIG)
    d = int(backoff_us)
    for _ in range(k - 1):
        if d >= cap:
            break
        d *= 2
    return min(d, cap)


def charge(cost, attempts):
    """What a started run costs its account: its cost for every attempt (a sent call is not refunded)."""
    return cost * attempts


def fits(spent: float, amount: float, limit: float) -> bool:
    """Whether ``amount`` more may start in a period that has ``spent``: the sum never exceeds ``limit``.

    (A tolerance of 1e-9 absorbs float sums of fractional costs.)
    """
    return spent + amount <= limit + FITS_TOLERANCE
