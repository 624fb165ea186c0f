"""A scheduler's own DST, reproduced: its next-fire walk, run only where a transition can change it.

Most schedulers' DST behaviour is a policy (skip a gap, run both passes of a
fold) and :mod:`calsim.resolution` applies it in columns. A few compute
each fire time by walking the calendar in the zone (robfig/cron's ``Next``,
which a Kubernetes CronJob calls; Quartz's ``getTimeAfter``), and next to a
transition that walk gives times no policy describes. A rule kind whose
``emulates`` names such a scheduler has a ``next_after(clock, t)`` port of
that walk (UTC seconds in, UTC seconds out); a schedule of it with
``gap="scheduler"`` and ``fold="scheduler"`` (:data:`SCHEDULER`) is
expanded by this module, which turns the walk into rows without calling it
for every occurrence:

* the rule's calendar times are resolved in columns with ``gap="skip"``,
  ``fold="both"``: every instant whose wall time matches ("ideal");
* the scheduler's fire times are a chain, each the ``next_after`` of the
  previous one. From a fire ``p``, when no transition comes near
  ``(p, c]`` (:class:`_Reach`: within the size of its offset change, and
  ``c`` extended by the rule's ``walk_lookahead`` for a walk that reads the
  clock past its answer), ``c`` being the first ideal instant after ``p``,
  the walk sees one UTC offset throughout and finds ``c``; only otherwise
  is the port called. So the port runs a few times per transition, and a
  fleet-year stays columnar. The chain into a window starts at a fire
  before it (:func:`walk_start`), and a stall anywhere since the
  schedule's start carries on (:func:`stalled_before`);
* an ideal instant the chain never reaches keeps its row without an
  instant and the note ``dst_lost:<scheduler>`` (reason ``dst_gap`` in a
  ledger: the DST change is why it did not run); a fire that is no ideal
  instant gets a row of its own, nominal time = its wall time, note
  ``dst_extra:<scheduler>``; a repeated time the walk fires in one pass
  only reads ``dst_fold_first`` or ``dst_fold_second``; where the walk
  stops moving or gives up (:func:`fire_chain`), every later time keeps
  its row without an instant, note ``dst_stuck:<scheduler>`` (reason
  ``stuck``: the scheduler never runs the schedule again).

>>> import calsim
>>> s = calsim.Schedule("j", "Asia/Beirut", "2026-03-01T00:00", "robfig:0 12 * * 0",
...                     gap="scheduler", fold="scheduler")
>>> f = calsim.expand(s, "2026-03-21T00:00Z", "2026-04-06T00:00Z", release="2026f")
>>> [(str(r["nominal_local"].date()), r["due_utc"] is not None, r["notes"]) for r in f.iter_rows(named=True)]
[('2026-03-22', True, []), ('2026-03-29', False, ['dst_lost:robfig']), ('2026-04-05', True, [])]
"""

from __future__ import annotations

from typing import overload

import numpy as np

from .resolution import Resolved, resolve_wall
from .times import US
from .tz.clock import ZoneClock
from .tz.tzif import ZoneTable

__all__ = ["emulated_rows", "fire_chain", "walks", "walk_start", "LOST", "EXTRA", "STUCK", "SCHEDULER"]

SCHEDULER = "scheduler"  # the gap and fold policy "as the rule's scheduler walks it"

# Resolved.kind codes beyond resolution's 0 ok, 1 gap, 2 fold.
LOST, EXTRA, STUCK, FIRST_PASS, SECOND_PASS = 3, 4, 5, 6, 7
_LOOK_BACK_US = (5 * 366 + 1) * 86400 * US
_MAX_CALLS = 10_000_000  # port calls per chain: a guard against a port that never moves on


class _Reach:
    """Where a transition can change a scheduler's walk: ``[t - r, t + r)`` around each transition ``t``.

    ``r`` is the size of the offset change. A walk that stays in one offset
    period meets no wall time that is repeated or missing, except within
    ``r`` of a transition: a repeated hour's wall times are read in the
    other pass by a runtime that guesses the offset (Go's ``time.Date``,
    Java's ``GregorianCalendar``), and these lie within ``r`` of the
    transition on either side.
    """

    def __init__(self, table: ZoneTable):
        t = np.asarray(table.utc, np.int64)
        off = np.asarray(table.offsets, np.int64)
        r = np.abs(off[1:] - off[:-1]) if len(t) else np.zeros(0, np.int64)
        self.starts = t - r
        self.ends = np.maximum.accumulate(t + r) if len(t) else t

    @overload
    def meets(self, a: np.ndarray | int, b: np.ndarray) -> np.ndarray: ...

    @overload
    def meets(self, a: int, b: int) -> bool: ...

    def meets(self, a: np.ndarray | int, b: np.ndarray | int) -> np.ndarray | bool:
        """Whether the instants ``(a, b]`` (arrays or ints) meet a transition's reach."""
        if not len(self.starts):  # a zone without transitions (UTC)
            return False if np.ndim(b) == 0 else np.zeros(np.shape(b), bool)
        j = np.searchsorted(self.starts, b, side="right") - 1
        if np.ndim(j) == 0:
            return bool(j >= 0 and self.ends[j] > a)
        return (j >= 0) & (self.ends[np.maximum(j, 0)] > a)


def fire_chain(ideal: np.ndarray, reach: _Reach, next_after, start: int,
               until: int, lookahead: int = 0) -> tuple[np.ndarray, int | None]:
    """The fire times (UTC seconds) in ``(start, until)`` the scheduler reaches from ``start``, and where it stalls.

    ``ideal`` holds the sorted, distinct instants whose wall time matches
    the rule over that span; ``next_after(t)`` is the scheduler's next
    fire after ``t`` (None: none). From a fire ``p`` whose next ideal
    instant ``c`` is reached with no transition near ``(p, c]``, the fire
    is ``c``: runs of such steps are taken at once. A walk that reads the
    clock up to ``lookahead`` seconds past the time it returns (systemd's
    ``OnCalendar.walk_lookahead``) is clear only when ``(p, c + lookahead]``
    is.

    A walk can return a time that is not after the one it started from
    (robfig's ``Next`` at Chatham's 2026-04-05 fall-back, for ``50 3 * * *``:
    ``Next(X) == X``). A scheduler asking from there never moves on: the
    second value is that ``X``, which is no fire, and nothing fires from it
    on. A walk that gives up (None: systemd's "Infinite loop in calendar
    calculation", after which a timer has no next elapse) stalls just after
    its last fire. The second value is None when the walk never stalls.
    """
    n = len(ideal)
    prev = np.concatenate([[start], ideal[:-1]])
    bad = np.flatnonzero(reach.meets(prev, ideal + lookahead)) if n else np.zeros(0, np.int64)
    out: list[np.ndarray] = []
    k = int(np.searchsorted(ideal, start, side="right"))  # the first ideal instant after start
    p = start
    calls = 0
    while True:
        b = int(np.searchsorted(bad, k))
        stop = int(bad[b]) if b < len(bad) else n
        if stop > k:  # ideal[k:stop] follow one another on the calendar
            out.append(ideal[k:stop])
            p, k = int(ideal[stop - 1]), stop
        if not reach.meets(p, (int(ideal[k]) if k < n else until) + lookahead):
            if k >= n:
                break
            # (p, ideal[k]] is clear although (ideal[k-1], ideal[k]] is not (p is a fire of the walk's own).
            out.append(ideal[k:k + 1])
            p, k = int(ideal[k]), k + 1
            continue
        calls += 1
        if calls > _MAX_CALLS:  # pragma: no cover - a port that never moves on
            raise RuntimeError(f"emulation: {next_after!r} did not rejoin the calendar")
        q = next_after(p)  # the step meets a transition: the scheduler's own walk
        if q is not None and q <= p:  # no progress: stalled at p, which is then no fire
            fires = np.concatenate(out) if out else np.zeros(0, np.int64)
            return fires[fires < p], p
        if q is None:  # the walk gave up (systemd's "Infinite loop", Quartz's endless search): nothing more fires
            return (np.concatenate(out) if out else np.zeros(0, np.int64)), p + 1
        if q >= until:
            break
        out.append(np.array([q], np.int64))
        p = q
        k = int(np.searchsorted(ideal, p, side="right"))
    return (np.concatenate(out) if out else np.zeros(0, np.int64)), None


def walks(rule: object) -> str | None:
    """The scheduler whose walk ``rule`` can be fired by (its ``emulates``), or None."""
    return getattr(rule, "emulates", None) if callable(getattr(rule, "next_after", None)) else None


def _instants(rule, table: ZoneTable, lo: int, hi: int) -> np.ndarray:
    """The distinct instants (UTC seconds) whose wall time in ``[lo, hi)`` (µs) matches the rule."""
    r = resolve_wall(rule.wall_times(lo, hi), table, gap="skip", fold="both")
    due = r.due if r.has_due is None else r.due[r.has_due]
    return np.unique(due // US)


def _lookahead(rule) -> int:
    return int(getattr(rule, "walk_lookahead", 0) or 0)


def walk_start(rule, table: ZoneTable, reach: _Reach, lo: int, floor: int | None) -> int:
    """Where the scheduler's walk into wall time ``lo`` (µs) starts: UTC seconds.

    A scheduler that has run all along is, before ``lo``, at some fire time.
    This takes the latest matching instant before ``lo`` that the walk
    reaches by two steps no transition comes near, so it is a fire time of
    the scheduler's however it walked before (a single step that a
    transition perturbs can carry the walk past the next calendar time, e.g.
    a month for a monthly rule in Beirut, so one clean step is not enough).
    The look-back grows until it finds one, to ``floor`` (the schedule's
    start, a lower bound of its fires: the walk starts a second before it)
    or five years and a day (robfig's ``Next`` gives up after five years).
    """
    span = 8 * 86400 * US
    while True:
        a = lo - span if floor is None else max(lo - span, floor)
        inst = _instants(rule, table, a, lo)
        if len(inst) >= 3:
            clean = ~reach.meets(inst[:-1], inst[1:] + _lookahead(rule))
            two = np.flatnonzero(clean[1:] & clean[:-1])
            if len(two):
                return int(inst[two[-1] + 2])
        if floor is not None and a == floor:
            return int(resolve_wall(np.array([floor]), table, gap="shift", fold="first").due[0] // US) - 1
        if span > _LOOK_BACK_US:
            return int(inst[0]) - 1 if len(inst) else lo // US - 2 * 86400
        span *= 4


def stalled_before(rule, table: ZoneTable, reach: _Reach, floor: int | None, lo: int) -> int | None:
    """Where the walk of a scheduler running since ``floor`` (wall µs) stalled before wall time ``lo``, or None.

    A stalled walk never moves again (:func:`fire_chain`), so a window
    after it must know. Only the transitions between the two can stall it:
    each is walked from a fire time before it (:func:`walk_start`) until the
    calendar is rejoined, a few calls of the port each. Without a start
    (``floor`` None) nothing before the look-back is known: None.
    """
    if floor is None:
        return None
    clock = ZoneClock(table)
    a, b = (int(x) // US - 50_400 for x in (floor, lo))  # wall -> UTC, less the largest offset: no transition missed
    for tau in clock.transitions(a, b):
        start = walk_start(rule, table, reach, (tau + 50_400 - 86400) * US, floor)
        until = tau + 8 * 86400
        ideal = _instants(rule, table, (start - 86400) * US, (until + 50_400) * US)
        _, stalled = fire_chain(ideal, reach, lambda t: rule.next_after(clock, t), start, until, _lookahead(rule))
        if stalled is not None and stalled * US < lo:
            return stalled
    return None


def emulated_rows(rule, table: ZoneTable, walls: np.ndarray, lo: int, until: int, floor: int | None) -> Resolved:
    """The rows of ``rule``'s wall times ``walls`` (µs) as its scheduler fires them (see the module docstring).

    ``walls`` are every wall time of the rule from wall time ``lo`` on; the
    walk starts before ``lo`` (:func:`walk_start`, ``floor`` being the
    schedule's start wall time or None) and ends at ``until`` (UTC µs): the
    walls must hold every wall time of the rule up to it.
    """
    ideal = resolve_wall(walls, table, gap="skip", fold="both")
    has = np.ones(len(ideal.wall), bool) if ideal.has_due is None else ideal.has_due
    due_s = ideal.due // US
    reach = _Reach(table)
    start = walk_start(rule, table, reach, lo, floor)
    # The ideal instants from the walk's start on: the look-back's (to rejoin the calendar) and the walls'.
    fires_ideal = np.unique(np.concatenate([_instants(rule, table, (start - 86400) * US, lo), due_s[has]]))
    clock = ZoneClock(table)
    stalled = stalled_before(rule, table, reach, floor, lo)
    if stalled is None:
        fires, stalled = fire_chain(fires_ideal, reach, lambda t: rule.next_after(clock, t), start,
                                    -(-until // US), _lookahead(rule))
    else:
        fires = np.zeros(0, np.int64)
    kind = ideal.kind.astype(np.int8).copy()
    fired = np.isin(due_s, fires) & has
    lost = has & ~fired
    kind[lost] = LOST
    if stalled is not None:
        kind[has & (due_s >= stalled)] = STUCK
    has_due = has & ~lost
    if (kind == 2).any():  # a repeated time of which the walk fires one pass: say which (its other row is lost)
        twin = np.flatnonzero(kind[:-1] == 2)
        twin = twin[(ideal.wall[twin] == ideal.wall[twin + 1]) & (kind[twin + 1] != 2)]  # the other pass lost
        kind[twin[fired[twin]]] = FIRST_PASS
        kind_prev = np.flatnonzero((kind[1:] == 2) & (kind[:-1] != 2) & (ideal.wall[1:] == ideal.wall[:-1]))
        kind[kind_prev[fired[kind_prev + 1]] + 1] = SECOND_PASS
    extra = fires[~np.isin(fires, fires_ideal)]
    wall, due, offset, fold = ideal.wall, ideal.due, ideal.offset, ideal.fold
    if fold is None:
        fold = np.zeros(len(wall), np.int8)
    if len(extra):
        e_off = table.offset_at_utc(extra)
        e_due = extra * US
        e_wall = e_due + e_off.astype(np.int64) * US
        # A fire in the second pass of a repeated hour has fold 1 (PEP 495): its wall read as the first pass is earlier.
        first = resolve_wall(e_wall, table, gap="shift", fold="first").due
        e_fold = (first != e_due).astype(np.int8)
        wall = np.concatenate([wall, e_wall])
        due = np.concatenate([due, e_due])
        offset = np.concatenate([offset, e_off.astype(offset.dtype)])
        fold = np.concatenate([fold, e_fold])
        kind = np.concatenate([kind, np.full(len(extra), EXTRA, np.int8)])
        has_due = np.concatenate([has_due, np.ones(len(extra), bool)])
    who = rule.emulates
    return Resolved(row=None, wall=wall, fold=fold if fold.any() else None, kind=kind, due=due,
                    has_due=None if has_due.all() else has_due, offset=offset,
                    note_vocab=(*ideal.note_vocab[:2], f"dst_lost:{who}", f"dst_extra:{who}", f"dst_stuck:{who}",
                                "dst_fold_first", "dst_fold_second"))
