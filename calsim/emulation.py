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
  previous one. From a fire ``p``, when no transition lies in
  ``(p, c]``, ``c`` being the first ideal instant after ``p``, the walk
  sees one UTC offset throughout and finds ``c`` (each port's docstring
  says why); only otherwise is the port called. So the port runs a few
  times per transition, and a fleet-year stays columnar;
* an ideal instant the chain never reaches keeps its row without an
  instant and the note ``dst_lost:<scheduler>`` (reason ``dst_gap`` in a
  ledger: the DST change is why it did not run); a fire that is no ideal
  instant gets a row of its own, nominal time = its wall time, note
  ``dst_extra:<scheduler>``.

>>> import calsim
>>> s = calsim.Schedule("j", "Asia/Beirut", "2026-03-20T00:00", "robfig:0 0 * * *",
...                     gap="scheduler", fold="scheduler")
>>> f = calsim.expand(s, "2026-03-27T12:00Z", "2026-03-31T12:00Z", release="2026f")
>>> [(str(r["nominal_local"].date()), r["due_utc"] is not None, r["notes"]) for r in f.iter_rows(named=True)]
[('2026-03-28', True, []), ('2026-03-29', False, ['dst_gap_skipped']), ('2026-03-30', False, ['dst_lost:robfig']), ('2026-03-31', True, [])]
"""

from __future__ import annotations

import numpy as np

from .resolution import Resolved, resolve_wall
from .times import US
from .tz.clock import ZoneClock
from .tz.tzif import ZoneTable

__all__ = ["emulated_rows", "fire_chain", "walks", "LOST", "EXTRA", "SCHEDULER"]

SCHEDULER = "scheduler"  # the gap and fold policy "as the rule's scheduler walks it"

# Resolved.kind codes beyond resolution's 0 ok, 1 gap, 2 fold.
LOST, EXTRA = 3, 4
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

    def meets(self, a, b) -> np.ndarray | bool:
        """Whether the instants ``(a, b]`` (arrays or ints) meet a transition's reach."""
        j = np.searchsorted(self.starts, b, side="right") - 1
        if np.ndim(j) == 0:
            return bool(j >= 0 and self.ends[j] > a)
        return (j >= 0) & (self.ends[np.maximum(j, 0)] > a)


def fire_chain(ideal: np.ndarray, reach: _Reach, next_after, start: int, until: int) -> np.ndarray:
    """The fire times (UTC seconds) in ``(start, until)`` the scheduler reaches from ``start``.

    ``ideal`` holds the sorted, distinct instants whose wall time matches
    the rule over that span; ``next_after(t)`` is the scheduler's next
    fire after ``t`` (None: none). From a fire ``p`` whose next ideal
    instant ``c`` is reached with no transition near ``(p, c]``, the fire
    is ``c``: runs of such steps are taken at once.
    """
    n = len(ideal)
    prev = np.concatenate([[start], ideal[:-1]])
    bad = np.flatnonzero(reach.meets(prev, ideal)) if n else np.zeros(0, np.int64)
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
        if not reach.meets(p, int(ideal[k]) if k < n else until):
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
        if q is None or q >= until:
            break
        out.append(np.array([q], np.int64))
        p = q
        k = int(np.searchsorted(ideal, p, side="right"))
    return np.concatenate(out) if out else np.zeros(0, np.int64)


def walks(rule: object) -> str | None:
    """The scheduler whose walk ``rule`` can be fired by (its ``emulates``), or None."""
    return getattr(rule, "emulates", None) if callable(getattr(rule, "next_after", None)) else None


def emulated_rows(rule, table: ZoneTable, walls: np.ndarray, until: int) -> Resolved:
    """The rows of ``rule``'s wall times ``walls`` (µs) as its scheduler fires them (see the module docstring).

    The walk starts a second before the first ideal instant (the caller's
    walls start a margin before the window, or at the schedule's start, a
    lower bound that a fire may equal), so ``next_after`` from there gives
    it unless a transition is that close. ``until`` (UTC µs) ends the walk:
    the caller's walls must hold every wall time of the rule up to it.
    """
    ideal = resolve_wall(walls, table, gap="skip", fold="both")
    has = np.ones(len(ideal.wall), bool) if ideal.has_due is None else ideal.has_due
    due_s = ideal.due // US
    fires_ideal = np.unique(due_s[has])
    start = int(fires_ideal[0]) - 1 if len(fires_ideal) else 0
    clock = ZoneClock(table)
    fires = fire_chain(fires_ideal, _Reach(table), lambda t: rule.next_after(clock, t), start, -(-until // US))
    kind = ideal.kind.astype(np.int8).copy()
    fired = np.isin(due_s, fires) & has
    lost = has & ~fired
    kind[lost] = LOST
    has_due = has & ~lost
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
                    note_vocab=(*ideal.note_vocab[:2], f"dst_lost:{who}", f"dst_extra:{who}"))
