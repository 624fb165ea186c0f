"""``Window``: every step inside a half-open local time window, e.g. [08:00, 20:00) every 30 min.

The window is wall-clock time in the schedule's zone: on a spring-forward day
a window over 02:00-03:00 produces nominal times that do not exist, and the
schedule's ``gap`` policy decides what they become, as for any other rule.
A window whose end is at or before its start crosses midnight: it opens on a
day at ``start`` and closes the next day at ``end`` (``end == start`` is a
full 24 hours). ``days`` filters on the weekday on which a window *opens*, so
a Friday 22:00-02:00 window still runs at 01:00 on Saturday.

>>> import numpy as np
>>> from calsim.rules.window import Window
>>> w = Window("22:00", "01:00", "1h", days=["FR"])
>>> lo = np.datetime64("2026-03-06T00:00", "us").astype(np.int64)  # a Friday
>>> [str(t)[:16] for t in w.wall_times(lo, lo + 2 * 86400 * 10**6).astype("datetime64[us]")]
['2026-03-06T22:00', '2026-03-06T23:00', '2026-03-07T00:00']
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import ClassVar, cast

import re
from dataclasses import dataclass, field

import numpy as np

from ..durations import duration_us, format_duration
from ..errors import RuleError, refuse_unknown_keywords, shown
from .kind import RuleKind
from ..times import US
from .bounds import WindowProfile, window_bound

__all__ = ["Window", "WEEKDAYS"]

DAY = 86400 * US
WEEKDAYS = ("MO", "TU", "WE", "TH", "FR", "SA", "SU")  # Python's weekday(): Monday = 0
_LONG = {"MON": 0, "TUE": 1, "WED": 2, "THU": 3, "FRI": 4, "SAT": 5, "SUN": 6}
_FULL = {"MONDAY", "TUESDAY", "WEDNESDAY", "THURSDAY", "FRIDAY", "SATURDAY", "SUNDAY"}
_HHMM = re.compile(r"^(\d{1,2}):(\d{2})(?::(\d{2}))?$")


def _time_of_day(value: object, field_name: str) -> int:
    m = _HHMM.match(str(value).strip()) if isinstance(value, str) else None
    if m is None:
        raise RuleError(f"Window.{field_name}: expected a local time 'HH:MM' or 'HH:MM:SS', got {shown(value)}")
    h, mi, s = int(m[1]), int(m[2]), int(m[3] or 0)
    if h == 24 and mi == 0 and s == 0 and field_name == "end":
        return DAY
    if h > 23 or mi > 59 or s > 59:
        raise RuleError(f"Window.{field_name}: {shown(value)} is not a time of day (allowed 00:00..23:59:59)")
    return (h * 3600 + mi * 60 + s) * US


def _weekday(value: object) -> int:
    if isinstance(value, int) and not isinstance(value, bool) and 0 <= value <= 6:
        return value
    if isinstance(value, str):
        v = value.strip().upper()
        if v in WEEKDAYS:
            return WEEKDAYS.index(v)
        if v in _LONG or v in _FULL:
            return _LONG[v[:3]]
    raise RuleError(f"Window.days: unknown weekday {shown(value)} (allowed MO..SU, MON..SUN, or 0..6 with Monday = 0)")


@refuse_unknown_keywords()
@dataclass(frozen=True)
class Window(RuleKind):
    """Every ``every`` from ``start`` (inclusive) to ``end`` (exclusive), local time.

    Parameters
    ----------
    start, end
        ``"HH:MM"`` local times; ``end`` may be ``"24:00"``. End at or before
        start crosses midnight.
    every
        The step, a duration (``"30min"``, ``"PT1H"``).
    days
        Weekdays on which the window opens (``["MO", "TU"]``, ``"MO,WE"``, or
        0..6 with Monday = 0); None is every day.
    """

    kind: ClassVar[str] = "window"
    start: str
    end: str
    every: object
    days: object = None
    _start_us: int = field(init=False, repr=False, compare=False)
    _length_us: int = field(init=False, repr=False, compare=False)
    _step_us: int = field(init=False, repr=False, compare=False)
    _days: tuple[int, ...] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        s = _time_of_day(self.start, "start")
        e = _time_of_day(self.end, "end")
        length = e - s if e > s else e - s + DAY
        try:
            step = duration_us(self.every, "Window.every")
        except Exception as exc:
            raise RuleError(str(exc)) from None
        days = self.days
        if days is None:
            parsed = tuple(range(7))
        else:
            # Anything else is a sequence of weekdays (list() raises TypeError for a non-iterable).
            items = days.split(",") if isinstance(days, str) else list(cast("Iterable[object]", days))
            if not items:
                raise RuleError("Window.days: empty; give at least one weekday, or None for every day")
            parsed = tuple(sorted({_weekday(d) for d in items}))
        object.__setattr__(self, "_start_us", s)
        object.__setattr__(self, "_length_us", length)
        object.__setattr__(self, "_step_us", step)
        object.__setattr__(self, "_days", parsed)

    def bound(self) -> WindowProfile:
        """The bound of its wall times over a span, for :mod:`calsim.limits` (rule-kind protocol)."""
        return window_bound(self)

    def wall_times(self, lo: int, hi: int) -> np.ndarray:
        """Nominal wall times (int64 µs) in ``[lo, hi)``, sorted."""
        if hi <= lo:
            return np.zeros(0, dtype=np.int64)
        offsets = self._start_us + np.arange(0, self._length_us, self._step_us, dtype=np.int64)
        first_day = lo // DAY - 1  # a window opened yesterday may still be open
        days = np.arange(first_day, hi // DAY + 1, dtype=np.int64)
        if len(self._days) < 7:
            weekday = (days + 3) % 7  # 1970-01-01 was a Thursday (3 with Monday = 0)
            on = np.zeros(7, dtype=bool)
            on[list(self._days)] = True
            days = days[on[weekday]]  # a 7-entry lookup: np.isin would sort per call
        walls = (days[:, None] * DAY + offsets[None, :]).ravel()
        # Sorted (a window is at most a day long, so day d's times end before
        # day d + 1's begin): the times in [lo, hi) are one slice.
        i, j = walls.searchsorted(lo), walls.searchsorted(hi)
        return walls[i:j]

    def explain(self) -> str:
        d = "" if len(self._days) == 7 else " on " + ",".join(WEEKDAYS[i] for i in self._days)
        return f"every {format_duration(self._step_us)} from {self.start} to {self.end}{d}"
