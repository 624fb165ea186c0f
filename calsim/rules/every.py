"""``Every``: a fixed interval from an anchor, of elapsed time or on the local wall clock.

``Every("24h")`` fires every 86,400 s of real time, whatever the wall clock
does: it never meets a DST gap or fold, and across a DST change it drifts by
the change in local time (09:00 EST becomes 10:00 EDT). That is by design: it
is how systemd's ``OnUnitActiveSec=``, Kubernetes' ``@every``-style intervals
and APScheduler's ``IntervalTrigger`` behave, and it is the contrast to a
calendar rule (RRULE, cron), which keeps the wall-clock time.

>>> from calsim.rules.every import Every
>>> e = Every("90min", anchor="2026-03-08T06:00Z")
>>> [str(t) for t in e.instants(e.anchor_us(0), e.anchor_us(0) + 4 * 3600 * 10**6, 0).astype("datetime64[us]")]
['2026-03-08T06:00:00.000000', '2026-03-08T07:30:00.000000', '2026-03-08T09:00:00.000000']

``Every("1d", anchor=..., clock="local")`` adds the period on the wall clock
of the schedule's zone instead, one step at a time from the anchor, as
schedulers that add to an aware local datetime do: Prefect 3's
``IntervalSchedule`` with a day interval (pendulum's ``add(days=1)``, whenever's
``add(days=1)``) and Celery 5.4's ``schedule(timedelta)`` (aware local
datetime + timedelta). Each step is a nominal wall time, resolved with the
schedule's ``gap`` and ``fold`` like a calendar rule's; what differs is that
the next step adds the period to the wall time the run *happened* at. So a
gap policy that moves a run moves every later one (its phase):

=====================  ===================================================  ==========================
``gap=``               a daily 02:30 from 2026-01-01, New York              as
=====================  ===================================================  ==========================
``"shift"``            03:30 EDT on 03-08, and 03:30 every day after,       Prefect 3.9 (pendulum and
                       through the fall change too                          whenever)
``"next_valid"``       03:00 EDT on 03-08, and 03:00 every day after        Celery 5.4 (the first
                                                                            wake-up after the jump)
``"shift_backward"``   01:30 EST on 03-08, and 01:30 after (a period        whenever ``"earlier"``
                       longer than the gap: else the walk never advances)
``"skip"``             no run on 03-08; 02:30 again on 03-09 (the walk      --
                       goes on from the nominal time)
=====================  ===================================================  ==========================

A fold changes no wall time: ``fold`` picks the pass(es) and the walk goes on.
An anchor at 00:00 stays 00:00 (no change in these zones is at midnight);
a period shorter than a day is added on the wall clock too (Celery 5.4's
hourly interval: 01:00 EDT, then 02:00 EST on the fall-back day; 01:30, then
03:00 at a 02:00 -> 03:00 jump with ``"next_valid"``, then 04:00).
"""

from __future__ import annotations

from typing import ClassVar, Literal

import datetime as dt
from dataclasses import KW_ONLY, dataclass, field

import numpy as np

from ..durations import duration_us, format_duration
from ..errors import RuleError, check_choice, refuse_unknown_keywords, shown
from .kind import RuleKind
from ..resolution import ByLocalHour, resolve_wall
from ..times import US, instant_us, iso_local, local_us
from ..tz.tzif import ZoneTable
from .bounds import EveryProfile

__all__ = ["Every", "Clock"]

Clock = Literal["elapsed", "local"]
# A naive anchor's instant is within this of its wall time read as UTC (offsets are under 26 h).
_NAIVE_SLACK = 26 * 3600 * US


@refuse_unknown_keywords()
@dataclass(frozen=True)
class Every(RuleKind):
    """Every ``period`` from ``anchor``: of elapsed time (default) or on the zone's wall clock.

    Parameters
    ----------
    period
        A duration: ``"24h"``, ``"1d"``, ``"PT15M"``, a ``timedelta``.
    anchor
        The first run. With ``clock="elapsed"`` an instant: an aware datetime
        or an ISO string with ``Z``/offset (a naive anchor is refused: an
        elapsed interval needs an instant, and a wall time could be in a gap
        or a fold). With ``clock="local"`` also a naive wall time in the
        schedule's zone (resolved like every later step); an instant is the
        first run exactly and its wall time starts the walk. None (the
        default) anchors at the schedule's start.
    clock : {"elapsed", "local"}, keyword-only
        ``"elapsed"`` (default): runs at ``anchor + k * period`` of real time;
        never meets a gap or fold, drifts in local time across a change.
        ``"local"``: each run is the previous run's *wall time* plus
        ``period`` in the schedule's zone, resolved with its ``gap`` and
        ``fold``; a gap policy that moves a run re-phases every later run
        (see the module docstring: Prefect 3's day intervals, Celery 5.4's
        intervals). ``"24h"`` and ``"1d"`` are the same 24 wall-clock hours.

    No run is before the anchor or the schedule's start (the start is read
    as a wall time, as calendar rules read it, with ``clock="local"``).
    """

    kind: ClassVar[str] = "every"
    # Expanded from its anchor (calsim.expansion), not from wall_times(); with clock="local" its instants
    # come from walls on the zone's clock.
    elapsed: ClassVar[bool] = True
    period: object
    anchor: object = None
    _: KW_ONLY
    clock: Clock = "elapsed"
    period_us: int = field(init=False, repr=False, compare=False)
    _anchor_us: int | None = field(init=False, repr=False, compare=False)
    _anchor_wall: int | None = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        check_choice("Every.clock", self.clock, ("elapsed", "local"), error=RuleError)
        try:
            p = duration_us(self.period, "Every.period")
        except Exception as exc:  # InputError -> RuleError: it is part of a rule
            raise RuleError(str(exc)) from None
        object.__setattr__(self, "period_us", p)
        a = wall = None
        if self.anchor is not None:
            naive = (isinstance(self.anchor, dt.datetime) and self.anchor.tzinfo is None) or (
                isinstance(self.anchor, str) and not _has_offset(self.anchor)
            )
            if naive and self.clock == "elapsed":
                raise RuleError(
                    f"Every.anchor: {shown(self.anchor)} is a naive time; an elapsed interval needs an instant "
                    "(add 'Z' or an offset, e.g. '2026-03-08T06:00Z'), or leave anchor=None to use the start, "
                    "or count the period on the wall clock with clock='local'"
                )
            try:
                if naive:
                    wall = int(local_us([self.anchor], "Every.anchor")[0])
                    a = wall - _NAIVE_SLACK  # (not its instant: no zone yet; a bound for limits and preview)
                else:
                    a = instant_us(self.anchor, "Every.anchor")
            except Exception as exc:
                raise RuleError(str(exc)) from None
        object.__setattr__(self, "_anchor_us", a)
        object.__setattr__(self, "_anchor_wall", wall)

    def __repr__(self) -> str:
        # The default clock is left out, so an elapsed Every reads (and is stored) as it always has.
        clock = "" if self.clock == "elapsed" else f", clock={self.clock!r}"
        return f"Every(period={self.period!r}, anchor={self.anchor!r}{clock})"

    def anchor_us(self, start_utc: int) -> int:
        """The anchor instant (µs), or the schedule's start instant when no anchor was given.

        For a naive anchor (``clock="local"``), whose instant needs the zone,
        an instant no later than it (its wall time read at UTC+26 h).
        """
        return start_utc if self._anchor_us is None else self._anchor_us

    def bound(self) -> EveryProfile:
        """The bound of its wall times over a span, for :mod:`calsim.limits` (rule-kind protocol).

        On the wall clock two runs can be closer than a period in real time
        (a fold run twice, a run moved to the end of a gap): half a period bounds them.
        """
        p = max(1, int(self.period_us))
        return EveryProfile(p if self.clock == "elapsed" else max(1, p // 2))

    def instants(self, lo: int, hi: int, anchor: int) -> np.ndarray:
        """UTC instants (µs) in ``[lo, hi)`` at ``anchor + k * period``, ``k >= 0`` (``clock="elapsed"``)."""
        p = self.period_us
        first = max(lo, anchor)
        k0 = -((anchor - first) // p)  # ceil((first - anchor) / p)
        k1 = -((anchor - hi) // p)
        if k1 <= k0:
            return np.zeros(0, dtype=np.int64)
        return anchor + np.arange(k0, k1, dtype=np.int64) * p

    def origin(self, table: ZoneTable, start_wall: int | None, start_utc: int | None) -> tuple[int, int | None]:
        """Where a ``clock="local"`` walk starts: ``(wall time, the instant of that first run or None)``.

        The anchor (its wall time, or an instant and its wall time in the
        zone), else the schedule's start (a naive one is a wall time, whose
        instant the gap and fold policies give).
        """
        if self._anchor_wall is not None:
            return self._anchor_wall, None
        at = self._anchor_us if self._anchor_us is not None else start_utc
        if at is None:
            assert start_wall is not None  # (Schedule requires a start or an anchor)
            return start_wall, None
        table.covering(1970 + at // (US * 31_556_952) + 1)
        return at + int(table.offsets[np.searchsorted(table.utc, at // US, side="right")]) * US, at

    def local_walls(self, table: ZoneTable, origin: int, lo: int, hi: int, gap: str | ByLocalHour, *,
                    version: str = "?", schedule: str | None = None) -> np.ndarray:
        """The nominal wall times (µs) in ``[lo, hi)`` of the ``clock="local"`` walk from ``origin``.

        Between two changes of the zone the walk is ``w + k * period``; a step
        that lands in a gap is resolved with ``gap`` and, unless skipped, the
        walk goes on from the wall time it ran at. So the walk only changes
        phase at a gap it lands in: one ``numpy.arange`` per stretch between
        such gaps, one Python step per gap of the zone from the origin to
        ``hi`` (about one a year), none per run.
        """
        p = self.period_us
        if hi <= lo or origin >= hi:
            return np.zeros(0, np.int64)
        table.covering(1970 + hi // (US * 31_556_952) + 1)
        offs = table.offsets.astype(np.int64) * US
        t = table.utc * US
        jump = offs[1:] > offs[:-1]
        g_lo, g_hi = (t + offs[:-1])[jump], (t + offs[1:])[jump]  # each gap's wall interval [g_lo, g_hi)
        reach = np.maximum.accumulate(g_hi) if len(g_hi) else g_hi
        parts = []
        at = origin
        j = int(np.searchsorted(reach, at, side="right"))  # the first gap not wholly before ``at``
        while at < hi:
            if j >= len(g_lo) or g_lo[j] >= hi:
                parts.append(_lattice(at, p, lo, hi))
                break
            w = at - ((at - max(int(g_lo[j]), at)) // p) * p  # the walk's first step at or after the gap's start
            if w >= g_hi[j]:
                j += 1  # the walk steps over this gap
                continue
            r = resolve_wall(np.array([w], np.int64), table, gap=gap, fold="first", version=version,
                             schedule=schedule)
            if r.kind[0] not in (1, 3):  # (a what-if table whose changes overlap: not a gap after all)
                j += 1
                continue
            parts.append(_lattice(at, p, lo, min(hi, w + 1)))
            ran = w if r.has_due is not None and not r.has_due[0] else int(r.due[0]) + int(r.offset[0]) * US
            if ran + p <= w:
                raise RuleError(
                    f"gap: {gap!r} with Every({format_duration(p)!r}, clock='local'){_of(schedule)}: "
                    f"{iso_local(w)} does not exist in {table.name} (tzdata {version}) and is moved back to "
                    f"{iso_local(ran)}, from where the walk never passes it (allowed: a period longer than the "
                    f"gap, {format_duration(w - ran)}, or gap='skip', 'shift' or 'next_valid')")
            at = ran + p
            j = int(np.searchsorted(reach, at, side="right"))
        return np.concatenate(parts) if len(parts) > 1 else parts[0] if parts else np.zeros(0, np.int64)

    def explain(self) -> str:
        if self.clock == "local":
            return f"every {format_duration(self.period_us)} on the local wall clock"
        return f"every {format_duration(self.period_us)} of elapsed time"


def _lattice(a: int, p: int, lo: int, hi: int) -> np.ndarray:
    """``a + k * p`` for ``k >= 0`` in ``[lo, hi)``."""
    k0 = max(0, -((a - lo) // p))
    k1 = -((a - hi) // p)
    if k1 <= k0:
        return np.zeros(0, np.int64)
    return a + np.arange(k0, k1, dtype=np.int64) * p


def _of(schedule: str | None) -> str:
    return f" of schedule {schedule!r}" if schedule else ""


def _has_offset(text: str) -> bool:
    t = text.strip()
    return t.endswith(("Z", "z")) or (len(t) > 10 and ("+" in t[10:] or "-" in t[10:]))
