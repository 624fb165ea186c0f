"""The :class:`Preset` a scheduler's preset function returns, and the validation every one of them shares.

Every message names the parameter, the value and what is allowed.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Literal, get_args

from ..durations import duration_us
from ..errors import CalsimError, PolicyError, check_choice
from ..expansion import as_schedules
from ..resolution import FoldPolicy, GapPolicy
from ..rules.cron import Cron
from ..schedule import Schedule
from ..simulation.policy import Policy
from ..times import US

__all__ = ["Preset", "Wildcard", "SCHEDULER_FIELDS"]

# The fields a scheduler decides; apply() keeps a schedule's own workload fields
# (duration, cost, account, on_budget, priority).
SCHEDULER_FIELDS = ("catchup", "limit", "max_lateness", "misfire_grace", "overlap", "jitter", "max_missed",
                    "limit_edge", "backlog", "recovery_wake", "down_is_missed", "suspend_catchup", "suspend_limit")

WildcardTest = Literal["minute_or_hour_starred", "every_hour"]


@dataclass(frozen=True)
class Wildcard:
    """DST policies for the cron rules a scheduler treats differently.

    ``test`` names which cron rules these are: ``"minute_or_hour_starred"``
    (cron's ``MIN_STAR``/``HR_STAR``: the minute or hour field starts with
    ``*``, as cronsim decides) or ``"every_hour"`` (the rule matches all 24
    hours, so APScheduler 3.x never *sets* the hour into a gap). ``policy``
    holds the scheduler's policy fields that differ for these rules (cron
    catches wildcard jobs up only after a clock jump of at most 5 minutes).
    """

    test: WildcardTest
    gap: GapPolicy
    fold: FoldPolicy
    policy: tuple[tuple[str, object], ...] = ()  # scheduler fields that differ for these rules

    def matches(self, schedule: Schedule) -> bool:
        """Whether ``schedule`` is such a rule (only cron rules ever are)."""
        rule = schedule.parsed_rule
        if not isinstance(rule, Cron):
            return False
        if self.test == "every_hour":
            return rule.hours == tuple(range(24))
        return rule.fields[0].startswith("*") or rule.fields[1].startswith("*")


@dataclass(frozen=True)
class Preset:
    """One scheduler's behaviour as calsim policies (build it with a preset function).

    Attributes
    ----------
    name : str
        The scheduler.
    policy : Policy
        Catch-up, lateness, overlap and jitter.
    gap, fold : str
        DST policies for the scheduler's rules (see :mod:`calsim.resolution`).
    tick : str
        Suggested ``Scenario(tick=...)``: how often the scheduler wakes.
    notes : tuple of str
        What is undocumented, approximated or not modelled.
    sources : tuple of str
        URLs of the documentation and code the mapping follows.
    settings : tuple of (str, object)
        The scheduler's own settings as given.
    wildcard : Wildcard or None
        Other DST policies for rules the scheduler treats differently.
    zone : str or None
        A zone :meth:`apply` sets on every schedule (Kubernetes ``timeZone``).
    suspended : bool
        The scheduler starts nothing (Kubernetes ``suspend``); see ``notes``.
    """

    name: str
    policy: Policy
    gap: GapPolicy
    fold: FoldPolicy
    tick: str
    notes: tuple[str, ...] = ()
    sources: tuple[str, ...] = ()
    settings: tuple[tuple[str, object], ...] = ()
    wildcard: Wildcard | None = None
    zone: str | None = None
    suspended: bool = False

    def __post_init__(self) -> None:
        if not isinstance(self.policy, Policy):
            raise PolicyError(f"policy: expected a calsim.Policy, got {self.policy!r}")
        check_choice("gap", self.gap, get_args(GapPolicy), noun="policy")
        check_choice("fold", self.fold, get_args(FoldPolicy), noun="policy")

    def dst_for(self, schedule: Schedule) -> tuple[str, str]:
        """The ``(gap, fold)`` this scheduler uses for ``schedule``'s rule."""
        if self.wildcard is not None and self.wildcard.matches(schedule):
            return self.wildcard.gap, self.wildcard.fold
        return self.gap, self.fold

    def apply(self, schedules: object) -> Schedule | list[Schedule]:
        """Schedule(s) with this preset's gap, fold, policy (and zone), via ``dataclasses.replace``.

        A schedule's own workload fields (``duration``, ``cost``, ``account``,
        ``on_budget``, ``priority``) are kept; the scheduler's fields
        (``catchup``, ``limit``, ``max_lateness``, ``misfire_grace``,
        ``overlap``, ``jitter``, ``max_missed``, ``limit_edge``, ``backlog``,
        ``recovery_wake``, ``down_is_missed``, ``suspend_catchup``,
        ``suspend_limit``) come from
        the preset.
        A single Schedule gives a Schedule, anything else a list.
        """
        if isinstance(schedules, Schedule):
            return self._apply_one(schedules)
        return [self._apply_one(s) for s in as_schedules(schedules)]

    def _apply_one(self, s: Schedule) -> Schedule:
        policy = self.policy
        if isinstance(s.policy, Policy):
            policy = dataclasses.replace(s.policy, **{k: getattr(self.policy, k) for k in SCHEDULER_FIELDS})
        if self.wildcard is not None and self.wildcard.policy and self.wildcard.matches(s):
            policy = dataclasses.replace(policy, **dict(self.wildcard.policy))
        gap, fold = self.dst_for(s)
        return dataclasses.replace(s, gap=gap, fold=fold, policy=policy, zone=self.zone or s.zone)


# -- validation: every message names the parameter, the value and what is allowed


def _bad(name: str, value: object, allowed: str) -> PolicyError:
    return PolicyError(f"{name}: invalid value {value!r} (allowed: {allowed})")


def _bool(name: str, value: object) -> bool:
    if not isinstance(value, bool):
        raise _bad(name, value, "True or False")
    return value


def _int(name: str, value: object, lo: int, hi: int | None = None, *, none: bool = False) -> int | None:
    if value is None and none:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < lo or (hi is not None and value > hi):
        span = f"an integer {lo}..{hi}" if hi is not None else f"an integer >= {lo}"
        raise _bad(name, value, span + (" or None" if none else ""))
    return value


def _seconds(name: str, value: object, *, none: bool = False) -> int | None:
    """A duration (``"1min"``, ``"PT10M"``, seconds, timedelta) as µs; 0 allowed."""
    if value is None and none:
        return None
    try:
        return duration_us(value, name, allow_zero=True)
    except CalsimError:
        raise _bad(name, value, "a duration such as '30s', '1min', 'PT1H', a number of seconds"
                   + (" or None" if none else "")) from None


def _tick_text(us: int) -> str:
    """A tick that ``Scenario(tick=...)`` parses: whole minutes as ``"5min"``, else seconds."""
    return f"{us // (60 * US)}min" if us % (60 * US) == 0 else f"{us / US:g}s"


def _settings(**kw: object) -> tuple[tuple[str, object], ...]:
    return tuple(kw.items())


# -- the presets
