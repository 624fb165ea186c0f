"""The :class:`Preset` a scheduler's preset function returns, and the validation every one of them shares.

Every message names the parameter, the value and what is allowed.
"""

from __future__ import annotations

import dataclasses
import warnings
from dataclasses import dataclass, field
from typing import Any, Literal, cast

from ..durations import duration_us
from ..errors import CalsimError, PolicyError, RuleError, check_choice
from ..expansion import as_schedules
from ..resolution import FoldPolicy, FoldSetting, GapPolicy, GapSetting, check_fold, check_gap
from ..rules.kind import RuleKind
from ..emulation import SCHEDULER, walks
from ..rules.apscheduler_cron import ApschedulerCron
from ..rules.cron import Cron
from ..rules.robfig import RobfigCron
from ..schedule import Schedule
from ..simulation.policy import Policy
from ..times import DAY_US, US

__all__ = ["Preset", "Wildcard", "Difference", "SCHEDULER_FIELDS"]

# The fields a scheduler decides; apply() keeps a schedule's own workload fields
# (duration, cost, account, on_budget, priority).
SCHEDULER_FIELDS = ("catchup", "limit", "max_lateness", "misfire_grace", "overlap", "max_active", "jitter",
                    "max_missed", "limit_edge", "backlog", "recovery_wake", "down_is_missed", "suspend_catchup",
                    "suspend_limit", "suspend_wake", "on_resume", "ahead_runs", "ahead", "interval_from")

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
        if rule.kind != "cron":
            return False
        rule = cast(Cron, rule)
        if self.test == "every_hour":
            return rule.hours == tuple(range(24))
        return rule.fields[0].startswith("*") or rule.fields[1].startswith("*")


@dataclass(frozen=True)
class Difference:
    """One known difference between a preset and its scheduler, as :func:`calsim.presets.differences` lists it.

    ``text`` says what the scheduler does and what calsim does (it is also
    one of the preset's ``notes``); ``topic`` groups them (``"DST"``,
    ``"catch-up"``, ``"grammar"``, ...); ``example`` is a minimal case (rule,
    zone, instant: the scheduler's times beside calsim's); ``measured`` the
    scheduler version it was measured against (None: the preset's
    ``measured``).
    """

    text: str
    topic: str = ""
    example: str = ""
    measured: str | None = None


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
    measured : str
        The scheduler's code and version its behaviour was measured against.
    dialect : str or None
        How the scheduler reads cron text: ``"robfig"`` makes :meth:`apply`
        rewrite a cron rule as a ``robfig:`` rule (Kubernetes); None keeps rules.
    differences : tuple of Difference
        The notes that state a difference from the scheduler, with examples
        (given as ``notes`` entries that are :class:`Difference`; ``notes``
        then holds their text).

    kind_policy : tuple of (str, tuple of (str, object))
        Policy fields that differ for one rule kind (``"every"``: Celery's
        ``beat_cron_starting_deadline`` is read by crontab entries only).
    every_clock : {"local", "local_days"} or None
        The clock the scheduler counts an :class:`~calsim.Every` on:
        :meth:`apply` gives every ``Every`` ``clock="local"`` (Celery 5.4's
        intervals), or those of whole days (``"local_days"``: Prefect's
        ``IntervalSchedule`` adds days on the calendar, hours as elapsed
        time); None keeps each rule's own clock.

    ``gap="scheduler"``/``fold="scheduler"`` fire a rule as the scheduler
    walks it (:mod:`calsim.emulation`); a rule it cannot walk gets
    ``fallback`` instead (default ``("skip", "both")``).
    """

    name: str
    policy: Policy
    gap: GapSetting
    fold: FoldSetting
    tick: str
    notes: tuple[str, ...] = ()
    sources: tuple[str, ...] = ()
    settings: tuple[tuple[str, object], ...] = ()
    wildcard: Wildcard | None = None
    zone: str | None = None
    suspended: bool = False
    measured: str = ""
    dialect: str | None = None
    fallback: tuple[GapPolicy, FoldPolicy] = ("skip", "both")
    kind_policy: tuple[tuple[str, tuple[tuple[str, object], ...]], ...] = ()
    every_clock: str | None = None
    differences: tuple[Difference, ...] = field(default=(), compare=False)

    def __post_init__(self) -> None:
        if not isinstance(self.policy, Policy):
            raise PolicyError(f"policy: expected a calsim.Policy, got {self.policy!r}")
        check_gap(self.gap, extra=(SCHEDULER,))
        check_fold(self.fold, extra=(SCHEDULER,))
        if self.every_clock is not None:
            check_choice("every_clock", self.every_clock, ("local", "local_days"), noun="clock")
        if self.dialect is not None:
            check_choice("dialect", self.dialect, tuple(_DIALECTS), noun="dialect")
        given = tuple(n if isinstance(n, Difference) else None for n in self.notes)
        found = tuple(n for n in given if n is not None)
        if found:
            object.__setattr__(self, "differences", tuple(self.differences) + found)
            object.__setattr__(self, "notes", tuple(n.text if isinstance(n, Difference) else n for n in self.notes))

    def dst_for(self, schedule: Schedule) -> tuple[GapSetting, FoldSetting]:
        """The ``(gap, fold)`` this scheduler uses for ``schedule``'s rule."""
        if self.wildcard is not None and self.wildcard.matches(schedule):
            return self.wildcard.gap, self.wildcard.fold
        if SCHEDULER in (self.gap, self.fold) and walks(self.rule_for(schedule)) is None:
            return self.fallback
        return self.gap, self.fold

    def rule_for(self, schedule: Schedule) -> RuleKind:
        """``schedule``'s rule as this scheduler reads it (:attr:`dialect`), parsed."""
        if self.dialect is None:
            return schedule.parsed_rule
        return _DIALECTS[self.dialect](schedule, self.name)

    def apply(self, schedules: object, *, refused: str = "raise") -> Schedule | list[Schedule]:
        """Schedule(s) with this preset's gap, fold, policy (and zone), via ``dataclasses.replace``.

        A schedule's own workload fields (``duration``, ``cost``, ``account``,
        ``on_budget``, ``priority``) are kept; the scheduler's fields
        (``catchup``, ``limit``, ``max_lateness``, ``misfire_grace``,
        ``overlap``, ``jitter``, ``max_missed``, ``limit_edge``, ``backlog``,
        ``recovery_wake``, ``down_is_missed``, ``suspend_catchup``,
        ``suspend_limit``, ``suspend_wake``, ``on_resume``, ``ahead_runs``,
        ``ahead``, ``interval_from``) come from the preset, and ``covers``
        when the preset sets it (a scheduler whose runs process a data
        interval: Airflow's data-interval timetables).
        A single Schedule gives a Schedule, anything else a list.

        ``refused`` says what happens to a schedule the scheduler itself
        refuses (a CronJob's robfig/cron cannot read ``0 3 L * *``):
        ``"raise"`` (default) is the error naming it; ``"drop"`` leaves it
        out of the list and warns once (``UserWarning``) with how many were
        dropped and the first one's reason, as an importer refuses an item.
        """
        check_choice("refused", refused, ("raise", "drop"))
        if isinstance(schedules, Schedule):
            return self._apply_one(schedules)
        if refused == "raise":
            return [self._apply_one(s) for s in as_schedules(schedules)]
        out, dropped = [], []
        for s in as_schedules(schedules):
            try:
                out.append(self._apply_one(s))
            except RuleError as exc:
                dropped.append(str(exc))
        if dropped:
            warnings.warn(f"{self.name}: {len(dropped)} schedule(s) refused and dropped, first: {dropped[0]}",
                          UserWarning, stacklevel=2)
        return out

    def _apply_one(self, s: Schedule) -> Schedule:
        policy = self.policy
        if isinstance(s.policy, Policy):
            policy = dataclasses.replace(s.policy, **{k: getattr(self.policy, k) for k in SCHEDULER_FIELDS})
            if self.policy.covers is not None:  # the scheduler's own data window (Airflow's data interval)
                policy = dataclasses.replace(policy, covers=self.policy.covers)
        if self.wildcard is not None and self.wildcard.policy and self.wildcard.matches(s):
            changes: dict[str, Any] = dict(self.wildcard.policy)  # Policy's own fields, checked by Policy
            policy = dataclasses.replace(policy, **changes)
        for kind, fields in self.kind_policy:
            if s.parsed_rule.kind == kind:
                kind_changes: dict[str, Any] = dict(fields)  # Policy's own fields, checked by Policy
                policy = dataclasses.replace(policy, **kind_changes)
        gap, fold = self.dst_for(s)
        rule = s.rule if self.dialect is None else self.rule_for(s)
        if self.every_clock is not None and s.parsed_rule.kind == "every":
            every = cast(Any, s.parsed_rule)  # (an Every: a dataclass with a period and a clock)
            if self.every_clock == "local" or every.period_us % DAY_US == 0:
                rule = dataclasses.replace(every, clock="local")
        if rule is not s.rule:
            text = getattr(rule, "rule_text", None)  # (a kind with a canonical text is stored as that text)
            rule = text() if callable(text) else rule
        # A Schedule takes "scheduler" too (its __post_init__ checks it), but its annotations name only the
        # policies a user chooses (DESIGN §2; the API test reads the vocabulary from them): a preset sets the rest.
        return dataclasses.replace(s, rule=rule, gap=cast(GapPolicy, gap), fold=cast(FoldPolicy, fold), policy=policy,
                                   zone=self.zone or s.zone)


def _as_robfig(schedule: Schedule, preset: str) -> RuleKind:
    """A cron rule as robfig/cron v3 reads its text (a Kubernetes CronJob); other rule kinds as they are."""
    rule = schedule.parsed_rule
    if rule.kind != "cron":  # (a robfig rule is read as robfig already)
        return rule
    try:
        return RobfigCron.parse(cast(Cron, rule).text)
    except CalsimError as exc:
        raise type(exc)(f"schedule {schedule.id!r}: {preset}: {exc} (the scheduler refuses this schedule)") from None


def _as_apscheduler(schedule: Schedule, preset: str) -> RuleKind:
    """A cron rule as the APScheduler 3.x CronTrigger(s) that fire its times; other rule kinds as they are."""
    rule = schedule.parsed_rule
    if rule.kind != "cron":  # (an APScheduler rule is read as APScheduler already)
        return rule
    try:
        return ApschedulerCron.from_cron(cast(Cron, rule))
    except CalsimError as exc:
        raise type(exc)(f"schedule {schedule.id!r}: {preset}: {exc} (the scheduler cannot fire this rule)") from None


_DIALECTS = {"robfig": _as_robfig, "apscheduler": _as_apscheduler}


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
