"""Each run rule of the simulation, defined once (DESIGN.md §5, ADR 0002).

The column steps, the budget-period settling and the compiled loops all
decide through these small pure functions, so a rule fixed here is fixed on
every path. The ones the loops call (:data:`SCALAR_RULES`) are written in the
part of Python numba compiles, so that the same function takes numpy arrays
(the columns) or one run's numbers (compiled into the kernels by
:mod:`.compiled_rules`):

========================  ====================================================================
rule                      function
========================  ====================================================================
scheduler up              :func:`up` / :func:`up_one` (first up instant at or after ``t``),
                          :func:`wake` (the wake-up that picks an occurrence), :func:`paused`
misfire / deadline        :func:`beyond` (lateness past a limit, with the scheduler's edge),
                          :func:`deadline` (the same boundary as an instant)
catch-up                  :func:`backlog_groups` (a wake-up's backlog, in due order),
                          :func:`backlog_outcome` (which members run, which are coalesced;
                          ``earliest_and_latest``: Airflow's stale stored next run)
runs created ahead        :func:`created_ahead` (which runs a scheduler that creates them
                          ahead had made when it went down: Prefect's look-ahead)
held for budget           :func:`held_outcome`, :func:`held_at_opening` (order, expiry and
                          catch-up of the runs held when a period opens)
budget period             :func:`local_day`, :func:`period_of_day`, :func:`month_of_day`,
                          :func:`period_index`, :func:`period_of`, :func:`period_start`
                          (local calendar periods from the scenario's release)
budget charge             :func:`charge`, :func:`fits`
========================  ====================================================================

>>> import numpy as np
>>> from calsim.simulation import run_rules as rules
>>> rules.backlog_outcome(np.array([1, 1, 1]), np.zeros(3, int), np.arange(3), np.full(3, 3))[0].tolist()
[False, False, True]
"""

from __future__ import annotations

from typing import overload

import numpy as np

from ..times import DAY_US, US

__all__ = ["AGEING_US", "FITS_TOLERANCE", "BIG", "CATCHUP", "OVERLAP", "EDGE", "PERIOD_KINDS", "SCALAR_RULES",
           "ARRIVES", "EXPIRES", "COALESCED_HELD", "SKIPPED_HELD", "retry_wait", "up", "up_one", "wake", "slept_out",
           "paused", "beyond", "deadline", "backlog_groups", "backlog_outcome", "created_ahead", "held_outcome",
           "held_at_opening",
           "month_of_day", "period_of_day", "local_day", "period_index", "period_of", "period_start", "charge", "fits"]

BIG = np.iinfo(np.int64).max // 4  # "never": after every instant a scenario can hold
CATCHUP = {"all": 0, "latest": 1, "earliest": 2, "skip": 3, "bounded": 4, "earliest_and_latest": 5}
# (ints: the compiled loops read them)
C_ALL, C_LATEST, C_EARLIEST, C_SKIP, C_BOUNDED, C_EDGES = (CATCHUP[k] for k in CATCHUP)
OVERLAP = {"allow": 0, "skip": 1, "buffer_one": 2, "buffer_all": 3, "cancel_other": 4, "buffer_latest": 5}
# What a lateness exactly equal to a limit (misfire_grace, max_lateness) is.
EDGE = {"on_time": 0, "late": 1}
# A run queued for capacity gains one priority level per hour it waits, so
# that low-priority work is delayed, never starved (the DESIGN's "ageing").
AGEING_US = 3600 * US
# Budget room left over by float sums of fractional costs (:func:`fits`).
FITS_TOLERANCE = 1e-9
# Budget period kinds, as :func:`period_of_day` takes them.
PERIOD_KINDS = {"day": 0, "week": 1, "month": 2}


# -- when the scheduler is up ---------------------------------------------------------------------


def up_one(t, out_lo, out_hi):
    """:func:`up` for one instant, the outages as two arrays of starts and ends (the compiled loops' form)."""
    for k in range(len(out_lo)):
        if out_lo[k] <= t < out_hi[k]:
            t = out_hi[k]
    return t


def up(t, outages: tuple[tuple[int, int], ...]):
    """The first instant at or after ``t`` at which the scheduler is up (outages are half-open ``[start, end)``).

    ``outages`` are sorted and disjoint; adjacent ones (one ends where the next
    starts) chain. ``t`` is an int (one run) or an array (the same walk per
    element, :func:`up_one`'s rule; tests/simulation/test_run_rules_pinned.py proves them equal).

    >>> up(5, ((0, 10), (10, 20))), up(25, ((0, 10),))
    (20, 25)
    """
    if isinstance(t, (int, np.integer)):
        return int(up_one(int(t), [a for a, _ in outages], [b for _, b in outages]))
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
    >>> [wake(np.array([60 * 10**6]), MIN, ((30 * 10**6, 90 * 10**6),), False, sus, end).tolist()
    ...  for end in (False, True)]
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
    tests/presets/test_cronie_daemon.py).

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
        return any(a <= t < b for a, b in spans or ())
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
    lateness at all is never past a limit. (Arrays or one run: the compiled
    loops call this same function.)

    >>> beyond(np.array([5, 5, 0]), 5, np.array([0, 1, 1])).tolist()
    [False, True, False]
    """
    return np.logical_or(lateness > limit,
                         np.logical_and(np.logical_and(edge == 1, lateness == limit), lateness > 0))


def deadline(eligible, limit, edge):
    """The last instant a run eligible at ``eligible`` may start within ``limit`` (:func:`beyond`'s rule as an
    instant: ``t > deadline`` exactly when ``beyond(t - eligible, limit, edge)``; a limit of :data:`BIG` or more
    gives an instant after every other).

    >>> deadline(np.array([100, 100, 100]), np.array([5, 5, 0]), np.array([0, 1, 1])).tolist()
    [105, 104, 100]
    """
    return eligible + limit - (edge == 1) * (limit > 0)


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


def created_ahead(sched: np.ndarray, due: np.ndarray, at: int, runs: np.ndarray, ahead: np.ndarray) -> np.ndarray:
    """Which rows a scheduler that creates runs ahead had created when it went down at ``at``.

    Prefect's scheduler service creates a deployment's runs from "now" on and
    stops once it has ``min_runs`` of them and one at least
    ``min_scheduled_time`` ahead (``server/models/deployments.py:927-934``,
    ``server/services/scheduler.py:170-196``): so at ``at`` each schedule has
    its next ``runs`` runs due at or after ``at``, and every one due before
    ``at + ahead`` plus the first at or after it. ``sched``/``due`` are the
    rows (any order), ``runs``/``ahead`` per row; rows due before ``at`` are
    never "created ahead" (False).

    >>> H = 3600
    >>> created_ahead(np.zeros(5, int), np.arange(5) * H, 0, np.full(5, 3), np.full(5, H)).tolist()
    [True, True, True, False, False]
    >>> created_ahead(np.zeros(5, int), np.arange(5) * 900, 0, np.full(5, 1), np.full(5, H)).tolist()  # 15 min
    [True, True, True, True, True]
    """
    out = np.zeros(len(due), dtype=bool)
    idx = np.flatnonzero(due >= at)
    if not len(idx):
        return out
    order = idx[np.lexsort((due[idx], sched[idx]))]
    s_o = sched[order]
    new = np.ones(len(order), dtype=bool)
    new[1:] = s_o[1:] != s_o[:-1]
    first = np.flatnonzero(new)
    gid = np.cumsum(new) - 1
    rank = np.arange(len(order)) - first[gid]
    within = np.bincount(gid, weights=due[order] < at + ahead[order]).astype(np.int64)[gid]
    out[order] = rank < np.maximum(runs[order], within + 1)
    return out


def held_outcome(mode, limit, pos, size):
    """:func:`backlog_outcome` for runs held for budget when a period opens: one held run is no backlog.

    (It waited for room, not for the scheduler; several of one schedule are a
    backlog again, and the catch-up mode decides.)
    """
    runs, coalesced = backlog_outcome(mode, limit, pos, size)
    return np.logical_or(runs, size == 1), np.logical_and(coalesced, size != 1)


def backlog_outcome(mode, limit, pos, size):
    """Which members of a backlog run: ``(runs, coalesced)``; the others are ``skipped``/``catchup``.

    ``mode`` is the :data:`CATCHUP` code, ``pos`` each member's 0-based place in
    due order and ``size`` its backlog's size. ``"all"`` runs every member,
    ``"latest"`` the newest and ``"earliest"`` the oldest (the rest
    ``coalesced``), ``"skip"`` none, ``"bounded"`` the newest ``limit``,
    ``"earliest_and_latest"`` the oldest and the newest (the rest
    ``coalesced``: Airflow's stale stored next run, then the latest).
    (Arrays or one member: the compiled loops call this same function.)

    >>> backlog_outcome(C_EDGES, 0, np.arange(4), np.full(4, 4))[0].tolist()
    [True, False, False, True]
    """
    from_end = size - 1 - pos
    edges = np.logical_and(mode == C_EDGES, np.logical_or(pos == 0, from_end == 0))
    runs = np.logical_or(
        np.logical_or(np.logical_or(mode == C_ALL, np.logical_and(mode == C_LATEST, from_end == 0)), edges),
        np.logical_or(np.logical_and(mode == C_EARLIEST, pos == 0),
                      np.logical_and(mode == C_BOUNDED, from_end < limit)))
    coalescing = np.logical_or(np.logical_or(mode == C_LATEST, mode == C_EARLIEST), mode == C_EDGES)
    coalesced = np.logical_and(np.logical_not(runs), coalescing)
    return runs, coalesced


# Held runs at a budget period's opening (:func:`held_at_opening`): what becomes of each.
ARRIVES, EXPIRES, COALESCED_HELD, SKIPPED_HELD = 0, 1, 2, 3


def held_at_opening(t, rank, due, eligible, max_lateness, edge, mode, limit):
    """The runs held for budget when a period opens at ``t``: their order, and what becomes of each.

    Order: schedules in the order they first waited (``rank``: 0 for the
    schedule whose run waited first), each one's runs by due instant (stable).
    Then each run too late by now (:func:`beyond` its ``max_lateness``) expires,
    and each schedule's runs left are a backlog again: :func:`held_outcome`
    (one left runs; several meet the catch-up ``mode``). Returns ``(order,
    outcome)``, ``outcome[k]`` for run ``order[k]``: :data:`ARRIVES` (it then
    arrives at ``t``, in this order), :data:`EXPIRES`, :data:`COALESCED_HELD`
    or :data:`SKIPPED_HELD`. Per-run arrays; compiled for the loops and the
    budget-period columns alike (:mod:`.compiled_rules`).

    >>> o, out = held_at_opening(10, np.array([1, 0, 0]), np.array([3, 2, 1]), np.zeros(3, np.int64),
    ...                          np.full(3, 99), np.zeros(3, np.int64), np.full(3, C_LATEST), np.zeros(3, np.int64))
    >>> o.tolist(), out.tolist()  # schedule 0 first (its runs by due: the older coalesced), then schedule 1
    ([2, 1, 0], [2, 0, 0])
    """
    n = len(rank)
    by_due = np.argsort(due, kind="mergesort")
    order = by_due[np.argsort(rank[by_due], kind="mergesort")]
    outcome = np.zeros(n, dtype=np.int64)
    for k in range(n):
        i = order[k]
        if beyond(t - eligible[i], max_lateness[i], edge[i]):
            outcome[k] = EXPIRES
    lo = 0
    while lo < n:  # schedule by schedule
        hi = lo
        while hi < n and rank[order[hi]] == rank[order[lo]]:
            hi += 1
        size = 0
        for k in range(lo, hi):
            size += outcome[k] == ARRIVES
        pos = 0
        for k in range(lo, hi):
            if outcome[k] == ARRIVES:
                i = order[k]
                runs, coalesced = held_outcome(mode[i], limit[i], pos, size)
                pos += 1
                if not runs:
                    outcome[k] = COALESCED_HELD if coalesced else SKIPPED_HELD
        lo = hi
    return order, outcome


# -- budget periods -------------------------------------------------------------------------------


def month_of_day(day):
    """Months since 1970-01 of day numbers (days since 1970-01-01): civil-from-days (H. Hinnant,
    "chrono-Compatible Low-Level Date Algorithms"), in integer arithmetic that holds for one day or an array.

    >>> month_of_day(np.array([-1, 0, 31, 20454])).tolist()  # 1969-12-31, 1970-01-01, 1970-02-01, 2026-01-01
    [-1, 0, 1, 672]
    """
    z = day + 719468
    era = z // 146097
    doe = z - era * 146097
    yoe = (doe - doe // 1460 + doe // 36524 - doe // 146096) // 365
    doy = doe - (365 * yoe + yoe // 4 - yoe // 100)
    mp = (5 * doy + 2) // 153  # months from March
    m = mp + 3 - 12 * (mp >= 10)
    y = yoe + era * 400 + (m <= 2)
    return (y - 1970) * 12 + (m - 1)


def period_of_day(day, kind):
    """Period index of local day numbers (days from 1970-01-01) for a :data:`PERIOD_KINDS` code: the day,
    its ISO week (Monday first, counted from the week of 1970-01-01, a Thursday), its month (from 1970-01)."""
    if kind == 0:
        return day
    if kind == 1:
        return (day + 3) // 7
    return month_of_day(day)


def local_day(t, utc_us, offsets_us):
    """The local day number of instant ``t`` (µs; one or an array) in a zone given as its transitions
    (``utc_us``, ascending, µs) and the offsets (µs) in force: ``offsets_us[j]`` from ``utc_us[j - 1]`` on,
    as the release's tables store them (``offset_at_utc``)."""
    return (t + offsets_us[np.searchsorted(utc_us, t, side="right")]) // DAY_US


def period_index(table, period: str, t: np.ndarray) -> np.ndarray:
    """Index of the local calendar period (``day``/``week``/``month`` in ``table``'s zone) of each instant (µs).

    :func:`local_day` then :func:`period_of_day`. The offset in force is read
    from the scenario's release (``table``), never from polars' or the
    system's zone data; only the zone's transitions within [min t, max t] are
    searched (a year has a couple).
    """
    if not len(t):
        return np.zeros(0, dtype=np.int64)
    j0 = int(np.searchsorted(table.utc, int(t.min()) // US, side="right"))
    j1 = int(np.searchsorted(table.utc, int(t.max()) // US, side="right"))
    day = local_day(t, table.utc[j0:j1].astype(np.int64) * US, table.offsets[j0:j1 + 1].astype(np.int64) * US)
    return period_of_day(day, PERIOD_KINDS[period])


def period_of(table, period: str):
    """A scalar ``t -> period index`` with :func:`period_index`'s rule (one run at a time)."""
    utc, offs, kind = table.utc.astype(np.int64) * US, table.offsets.astype(np.int64) * US, PERIOD_KINDS[period]

    def of(t: int) -> int:
        return int(period_of_day(int(local_day(t, utc, offs)), kind))

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
    else:  # (the inverse of month_of_day)
        wall = idx.astype("datetime64[M]").astype("datetime64[us]").astype(np.int64)
    r = resolve_wall(np.atleast_1d(wall), table, gap="next_valid", fold="first")
    due = np.asarray(r.due, dtype=np.int64)
    return int(due[0]) if np.ndim(index) == 0 else due


#: The rules the compiled loops call (:mod:`.compiled_rules`): written in the part of Python numba compiles.
SCALAR_RULES = (up_one, beyond, deadline, backlog_outcome, held_outcome, held_at_opening, month_of_day, period_of_day,
                local_day)


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


@overload
def fits(spent: float, amount: float, limit: float) -> bool: ...


@overload
def fits(spent: float, amount: np.ndarray, limit: float | np.ndarray) -> np.ndarray: ...


def fits(spent: float, amount: float | np.ndarray, limit: float | np.ndarray) -> bool | np.ndarray:
    """Whether ``amount`` more may start in a period that has ``spent``: the sum never exceeds ``limit``.

    (A tolerance of 1e-9 absorbs float sums of fractional costs.)
    """
    return spent + amount <= limit + FITS_TOLERANCE
