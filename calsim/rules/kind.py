"""What every rule kind is to the rest of calsim: the rule-kind protocol.

A rule kind (RRULE, cron, ``Every``, ``Window``, ``OnCalendar=``, Quartz,
robfig, APScheduler) lives in its own module of :mod:`calsim.rules` and
subclasses :class:`RuleKind`, which gives the defaults of a plain calendar
rule. Expansion, limits and schedules read a rule only through this surface,
never by asking which kind it is:

* ``wall_times(lo, hi)``: its nominal wall times in ``[lo, hi)`` (µs, no
  zone); an *anchored* kind (``anchored = True``: RRULE, whose DTSTART is the
  first instance) gives ``candidates(dtstart, lo, hi, invalid_day)`` instead;
  an *elapsed* kind (``elapsed = True``: ``Every``) has instants of elapsed
  time, ``instants(lo, hi, anchor)``, not wall times;
* ``bound()``: an upper bound of its times over a span (a profile of
  :mod:`calsim.rules.bounds`), summed by :mod:`calsim.limits` before expanding;
* ``explain()``: the rule in words; ``rule_text()`` where it has a canonical text;
* ``until``, ``until_utc``, ``count``: RFC 5545 UNTIL (wall µs, or an instant
  when ``until_utc``) and COUNT, None for kinds without them;
* ``zone``: a zone the rule names itself (``OnCalendar=... Europe/Berlin``),
  which overrides the schedule's; None for the others.

Adding a rule kind: its module with the class (subclassing :class:`RuleKind`,
methods above), its text form in :func:`calsim.schedule.parse_rule`, a row
in the README's rule table (docs/architecture.md walks it through).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, ClassVar, Literal

if TYPE_CHECKING:
    import numpy as np

__all__ = ["RuleKind", "InvalidDay"]

# What an anchored kind does with a day its month lacks (RRULE: RFC 7529 SKIP; calsim.rules.rrule explains).
InvalidDay = Literal["omit", "backward", "forward"]


class RuleKind:
    """The defaults of a calendar rule kind (see the module docstring for the protocol)."""

    anchored: ClassVar[bool] = False
    elapsed: ClassVar[bool] = False
    kind: ClassVar[str]
    until: int | None = None
    until_utc: bool = False
    count: int | None = None
    zone: str | None = None

    if TYPE_CHECKING:  # what each kind implements (declared for the type checker; a kind has the ones it needs)
        def wall_times(self, lo: int, hi: int) -> np.ndarray: ...

        def candidates(self, dtstart: int, lo: int, hi: int,
                       invalid_day: InvalidDay = "omit") -> tuple[np.ndarray, np.ndarray]: ...

        def instants(self, lo: int, hi: int, anchor: int) -> np.ndarray: ...

        def anchor_us(self, start_utc: int) -> int: ...

        def bound(self) -> Any: ...

        def explain(self) -> str: ...
