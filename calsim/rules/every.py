"""``Every``: a fixed elapsed interval from a UTC anchor.

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
"""

from __future__ import annotations

from typing import ClassVar

import datetime as dt
from dataclasses import dataclass, field

import numpy as np

from ..durations import duration_us, format_duration
from ..errors import RuleError, shown
from .kind import RuleKind
from ..times import instant_us
from .bounds import EveryProfile

__all__ = ["Every"]


@dataclass(frozen=True)
class Every(RuleKind):
    """Every ``period`` of elapsed time from ``anchor``.

    Parameters
    ----------
    period
        A duration: ``"24h"``, ``"PT15M"``, a ``timedelta``.
    anchor
        The UTC instant of the first run: an aware datetime or an ISO string
        with ``Z``/offset. None (the default) anchors at the schedule's start,
        resolved in its zone. A naive anchor is refused: an elapsed interval
        needs an instant, and a wall time could be in a gap or a fold.
    """

    kind: ClassVar[str] = "every"
    elapsed: ClassVar[bool] = True  # instants of elapsed time from its anchor, not wall times
    period: object
    anchor: object = None
    period_us: int = field(init=False, repr=False, compare=False)
    _anchor_us: int | None = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        try:
            p = duration_us(self.period, "Every.period")
        except Exception as exc:  # InputError -> RuleError: it is part of a rule
            raise RuleError(str(exc)) from None
        object.__setattr__(self, "period_us", p)
        a = None
        if self.anchor is not None:
            naive = (isinstance(self.anchor, dt.datetime) and self.anchor.tzinfo is None) or (
                isinstance(self.anchor, str) and not _has_offset(self.anchor)
            )
            if naive:
                raise RuleError(
                    f"Every.anchor: {shown(self.anchor)} is a naive time; an elapsed interval needs an instant "
                    "(add 'Z' or an offset, e.g. '2026-03-08T06:00Z'), or leave anchor=None to use the start"
                )
            try:
                a = instant_us(self.anchor, "Every.anchor")
            except Exception as exc:
                raise RuleError(str(exc)) from None
        object.__setattr__(self, "_anchor_us", a)

    def anchor_us(self, start_utc: int) -> int:
        """The anchor instant (µs), or the schedule's start instant when no anchor was given."""
        return start_utc if self._anchor_us is None else self._anchor_us

    def bound(self) -> EveryProfile:
        """The bound of its wall times over a span, for :mod:`calsim.limits` (rule-kind protocol)."""
        return EveryProfile(max(1, int(self.period_us)))

    def instants(self, lo: int, hi: int, anchor: int) -> np.ndarray:
        """UTC instants (µs) in ``[lo, hi)`` at ``anchor + k * period``, ``k >= 0``."""
        p = self.period_us
        first = max(lo, anchor)
        k0 = -((anchor - first) // p)  # ceil((first - anchor) / p)
        k1 = -((anchor - hi) // p)
        if k1 <= k0:
            return np.zeros(0, dtype=np.int64)
        return anchor + np.arange(k0, k1, dtype=np.int64) * p

    def explain(self) -> str:
        return f"every {format_duration(self.period_us)} of elapsed time"


def _has_offset(text: str) -> bool:
    t = text.strip()
    return t.endswith(("Z", "z")) or (len(t) > 10 and ("+" in t[10:] or "-" in t[10:]))
