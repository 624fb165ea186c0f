"""Presets: real schedulers' documented behaviour in calsim's vocabulary.

Each function takes one scheduler's **own** setting names and defaults and
returns a :class:`Preset`: a :class:`~calsim.simulation.policy.Policy`, the
DST ``gap``/``fold`` policies that reproduce the scheduler, a suggested
``tick`` (how often it wakes), ``notes`` saying what is undocumented or
approximated, and the ``sources`` read. :meth:`Preset.apply` puts it on
schedules. Each preset's docstring tabulates its settings with the docs or
code they follow; where docs and current code disagree, a parameter offers
both and defaults to what the code does.

============  =====================  ===============  ==============================  ===================  ==================
preset        DST gap                DST fold         after downtime (``catchup``)    overlap              jitter
============  =====================  ===============  ==============================  ===================  ==================
kubernetes    skip                   both             latest, deadline excludes its   allow/buffer_latest  none
                                                      own edge; docs: >100 stuck      /cancel_other
temporal      skip                   both             earliest (SKIP), 365 d window   six policies         ``[0, jitter)``
apscheduler   shift; skip if every   both             memory store: none after a      skip (1 instance)    ``jitter`` s
              hour (3.11 code)                        restart; suspend or persistent:
                                                      latest (coalesce) or all in
                                                      turn, expired past the grace
quartz        skip                   both             RAM store: none after a         allow / buffer_one   none
                                                      restart; paused or JDBC: the    (/ buffer_all)
                                                      misfire instruction
systemd       skip                   first            skip; ``Persistent``: latest;   buffer_one           RandomizedDelaySec
                                                      a suspend: latest
cronie        fixed-time: next_valid fixed: first     skip (the restart minute        allow                none
              wildcard: skip         wildcard: both   too); a suspend of <= 3 h
                                                      (wildcard: 5 min): all
eventbridge   skip                   first            all, expired after event age    allow (undoc.)       flexible window
============  =====================  ===============  ==============================  ===================  ==================

Each preset is compared with its scheduler's own code in the tests (``tests/oracles/``); the
differences that remain are in its ``notes``.

Cron parsers differ too (robfig's ``*/n`` day rule, Temporal's AND of days,
APScheduler 3.x's 0 = Monday): calsim expands every cron with the Vixie
rules of :mod:`calsim.rules.cron`, and each preset's ``notes`` say where that
differs.

>>> import calsim
>>> from calsim import presets
>>> job = calsim.Schedule("backup", "America/New_York", "2026-03-01T00:00", "30 2 * * *")
>>> [p.apply(job).gap for p in (presets.kubernetes(), presets.cronie())]
['skip', 'next_valid']
>>> f = calsim.expand([presets.cronie().apply(job)], "2026-03-08T00:00Z", "2026-03-09T00:00Z", release="2026f")
>>> f.select("nominal_local", "due_utc", "notes").row(0)  # run right after the change, as cron does
(datetime.datetime(2026, 3, 8, 2, 30), datetime.datetime(2026, 3, 8, 7, 0, tzinfo=zoneinfo.ZoneInfo(key='UTC')), ['dst_gap_next_valid'])
"""

from __future__ import annotations

import dataclasses
import datetime as dt
from dataclasses import dataclass
from typing import Literal, get_args

from .errors import CalsimError, PolicyError, choices
from .expansion import as_schedules
from .resolution import FoldPolicy, GapPolicy, check_policy
from .rules.cron import Cron
from .schedule import Schedule
from .simulation.policy import Policy
from .durations import duration_us

__all__ = ["Preset", "Wildcard", "kubernetes", "temporal", "apscheduler", "quartz", "systemd", "cronie", "eventbridge"]

US = 1_000_000
# The fields a scheduler decides; apply() keeps a schedule's own workload fields
# (duration, cost, account, on_budget, priority).
SCHEDULER_FIELDS = ("catchup", "limit", "max_lateness", "misfire_grace", "overlap", "jitter", "max_missed",
                    "limit_edge", "backlog", "recovery_wake", "down_is_missed", "suspend_catchup", "suspend_limit")

K8S_DOC = "https://kubernetes.io/docs/concepts/workloads/controllers/cron-jobs/"
K8S_CODE = "https://github.com/kubernetes/kubernetes/blob/master/pkg/controller/cronjob/utils.go"
K8S_CTRL = "https://github.com/kubernetes/kubernetes/blob/master/pkg/controller/cronjob/cronjob_controllerv2.go"
ROBFIG = "https://github.com/robfig/cron/blob/master/spec_test.go"
TEMPORAL_DOC = "https://docs.temporal.io/schedule"
TEMPORAL_CODE = "https://github.com/temporalio/temporal/blob/main/service/worker/scheduler/workflow.go"
TEMPORAL_API = "https://github.com/temporalio/api/blob/master/temporal/api/schedule/v1/message.proto"
TEMPORAL_PR = "https://github.com/temporalio/temporal/pull/4332"
APS_BASE = "https://github.com/agronholm/apscheduler/blob/3.x/apscheduler/schedulers/base.py"
APS_GUIDE = "https://apscheduler.readthedocs.io/en/3.x/userguide.html"
APS_CRON = "https://apscheduler.readthedocs.io/en/3.x/modules/triggers/cron.html"
APS_HISTORY = "https://github.com/agronholm/apscheduler/blob/3.x/docs/versionhistory.rst"
APS_EXEC = "https://github.com/agronholm/apscheduler/blob/3.x/apscheduler/executors/base.py"
QUARTZ_CRON = "https://github.com/quartz-scheduler/quartz/blob/main/quartz/src/main/java/org/quartz/impl/triggers/CronTriggerImpl.java"
QUARTZ_STORE = "https://quartz-scheduler.org/documentation/quartz-2.3.0/configuration/ConfigRAMJobStore.html"
QUARTZ_RAM = "https://github.com/quartz-scheduler/quartz/blob/main/quartz/src/main/java/org/quartz/simpl/RAMJobStore.java"
QUARTZ_JDBC = "https://github.com/quartz-scheduler/quartz/blob/main/quartz/src/main/java/org/quartz/impl/jdbcjobstore/StdJDBCConstants.java"
QUARTZ_DST = "https://documentation.softwareag.com/onlinehelp/Rohan/quartz_223/webhelp/quartz-scheduler-webhelp/co-bp_daylight_savings_time_tips.html"
QUARTZ_JOBS = "https://www.quartz-scheduler.org/documentation/quartz-2.3.0/tutorials/tutorial-lesson-03.html"
SYSTEMD = "https://www.freedesktop.org/software/systemd/man/latest/systemd.timer.html"
TIMER_C = "https://github.com/systemd/systemd/blob/v252/src/core/timer.c"
CRONIE = "https://github.com/cronie-crond/cronie/blob/master/man/cron.8"
CRONIE_SRC = "https://github.com/cronie-crond/cronie/blob/master/src/cron.c"
DEBIAN = "https://manpages.debian.org/bookworm/cron/cron.8.en.html"
CRONSIM = "https://pypi.org/project/cronsim/"
EB_DST = "https://repost.aws/knowledge-center/eventbridge-scheduler-adjust-dst"
EB_WINDOW = "https://docs.aws.amazon.com/scheduler/latest/UserGuide/managing-schedule-flexible-time-windows.html"
EB_RETRY = "https://docs.aws.amazon.com/scheduler/latest/APIReference/API_RetryPolicy.html"
EB_WINDOW_API = "https://docs.aws.amazon.com/scheduler/latest/APIReference/API_FlexibleTimeWindow.html"

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
        check_policy("gap", self.gap, get_args(GapPolicy))
        check_policy("fold", self.fold, get_args(FoldPolicy))

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


def _enum(name: str, value: object, allowed: tuple[str, ...]) -> str:
    if not isinstance(value, str) or value not in allowed:
        raise PolicyError(f"{name}: unknown value {value!r} (allowed: {choices(allowed)})")
    return value


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


def kubernetes(concurrency_policy: str = "Allow", starting_deadline_seconds: int | None = None,
               time_zone: str | None = None, suspend: bool = False, too_many_missed: str = "code") -> Preset:
    """Kubernetes CronJob (``batch/v1``; robfig/cron v3 semantics).

    ==============================  ===========================================  ==============
    CronJob setting                 calsim                                       source
    ==============================  ===========================================  ==============
    (after an outage)               ``catchup="latest"``: one Job, the most      K8S_CODE
                                    recent missed time
    ``startingDeadlineSeconds``     ``max_lateness`` (None: no deadline); a      K8S_DOC,
                                    time exactly that late is not started        K8S_CODE
                                    (``limit_edge="late"``)
    ``concurrencyPolicy``           ``Allow``/``Forbid``/``Replace`` ->          K8S_DOC,
                                    ``allow``/``buffer_latest``/``cancel_other`` K8S_CTRL
                                    (Forbid: the most recent unmet time starts
                                    when the running Job ends, if still within
                                    the deadline)
    ``timeZone``                    :meth:`Preset.apply` sets the zone           K8S_DOC
    ">100 missed"                   ``"code"``: no ``max_missed`` (only a        K8S_CODE,
                                    warning event); ``"docs"``: 100, and the     K8S_DOC
                                    CronJob is stuck (``skipped``/``stuck``)
    DST                             ``gap="skip"``, ``fold="both"``              ROBFIG, #121594
    sync loop                       ``tick="10s"``                               K8S_DOC
    ==============================  ===========================================  ==============

    Sources: https://kubernetes.io/docs/concepts/workloads/controllers/cron-jobs/ (K8S_DOC),
    https://github.com/kubernetes/kubernetes/blob/master/pkg/controller/cronjob/utils.go (K8S_CODE),
    https://github.com/robfig/cron/blob/master/spec_test.go (ROBFIG),
    https://github.com/kubernetes/kubernetes/issues/121594.

    >>> from calsim import presets
    >>> p = presets.kubernetes(concurrency_policy="Forbid", starting_deadline_seconds=200)
    >>> p.gap, p.fold, p.tick, p.policy.catchup, p.policy.overlap, p.policy.max_lateness_us // 10**6
    ('skip', 'both', '10s', 'latest', 'buffer_latest', 200)
    >>> presets.kubernetes(too_many_missed="docs").policy.max_missed
    100
    """
    overlap = {"Allow": "allow", "Forbid": "buffer_latest", "Replace": "cancel_other"}
    _enum("concurrency_policy", concurrency_policy, tuple(overlap))
    deadline = _int("starting_deadline_seconds", starting_deadline_seconds, 0, none=True)
    _bool("suspend", suspend)
    _enum("too_many_missed", too_many_missed, ("code", "docs"))
    if time_zone is not None:
        from .tzdb import release

        try:
            release().table(time_zone)  # type: ignore[arg-type]
        except (CalsimError, TypeError):
            raise _bad("time_zone", time_zone, "an IANA zone name such as 'Europe/Berlin', or None") from None
    notes = [
        "DST: robfig/cron v3 skips a wall time that does not exist and fires in both passes of a repeated one",
        "cron: robfig ORs day-of-month and day-of-week unless a field has the star bit, which '*/n' clears; "
        "calsim expands with the Vixie rule (a field starting with '*' is unrestricted), so '0 0 1 * */2' differs",
        "Job creation is 'about once' per time (0 or 2 Jobs possible): not modelled",
    ]
    if too_many_missed == "code":
        notes.append("too_many_missed='code': no max_missed; with > 100 missed times the v2 controller only records "
                     "a TooManyMissedTimes warning event and still starts the most recent one (the docs describe "
                     "no start at all: too_many_missed='docs')")
    else:
        notes.append("too_many_missed='docs': > 100 missed times (counted within startingDeadlineSeconds when set) "
                     "start no Job and LastScheduleTime stays put, so the CronJob is stuck until it is changed "
                     "(skipped/stuck, a calsim.Revise unsticks it), as the docs and the v1 controller say; the current "
                     "controller still starts one")
    notes.append("the v2 controller estimates the most recent missed time from two schedule times (utils.go "
                 "mostRecentScheduleTime, PR #118724); for a schedule with uneven gaps (two times a day, a DST gap) the "
                 "estimate can find none and that sync starts nothing: calsim starts the most recent time")
    if too_many_missed == "docs" and concurrency_policy == "Forbid":
        notes.append("too_many_missed='docs' with Forbid: times blocked by a long-running Job count as missed in the v1 "
                     "controller and can leave the CronJob stuck without any outage; calsim counts only a wake-up's "
                     "backlog of missed times")
    if deadline == 0:
        notes.append("starting_deadline_seconds=0: Kubernetes never starts a Job (it syncs about 100 ms after each "
                     "time); calsim starts the runs it picks exactly on time")
    elif deadline is not None and deadline < 10:
        notes.append(f"starting_deadline_seconds={deadline} < 10: the v1 controller synced every 10 s and could miss "
                     "every time; the v2 controller requeues itself for each time + 100 ms, as calsim's tick models")
    if time_zone is None:
        notes.append("time_zone=None: Kubernetes uses kube-controller-manager's local zone; calsim keeps each "
                     "schedule's own zone")
    if suspend:
        notes.append("suspend=True: no Job starts; model it with calsim.Pause/Resume events. calsim skips paused "
                     "times, whereas on unsuspend Kubernetes starts the most recent missed time within the deadline")
    return Preset(
        name="kubernetes",
        policy=Policy(catchup="latest", max_lateness=deadline, overlap=overlap[concurrency_policy],  # type: ignore[arg-type]
                      max_missed=100 if too_many_missed == "docs" else None, limit_edge="late"),
        gap="skip", fold="both", tick="10s", notes=tuple(notes),
        sources=(K8S_DOC, K8S_CODE, K8S_CTRL, ROBFIG, "https://github.com/kubernetes/kubernetes/issues/121594"),
        settings=_settings(concurrency_policy=concurrency_policy, starting_deadline_seconds=starting_deadline_seconds,
                           time_zone=time_zone, suspend=suspend, too_many_missed=too_many_missed),
        zone=time_zone, suspended=suspend,
    )


_TEMPORAL_OVERLAP = {"SKIP": "skip", "BUFFER_ONE": "buffer_one", "BUFFER_ALL": "buffer_all",
                     "CANCEL_OTHER": "cancel_other", "TERMINATE_OTHER": "cancel_other", "ALLOW_ALL": "allow"}


def temporal(overlap: str = "SKIP", catchup_window: object = "365d", jitter: object = None,
             after_outage: str = "earliest") -> Preset:
    """Temporal Schedules (``SchedulePolicies`` and ``ScheduleSpec.jitter``).

    ==========================  ===============================================  ===============
    Temporal setting            calsim                                           source
    ==========================  ===============================================  ===============
    ``catchup_window`` (365 d)  ``max_lateness`` (min 10 s, lower is clamped;    TEMPORAL_PR,
                                exactly this late still starts, ``>``:           TEMPORAL_CODE
                                ``limit_edge="on_time"``)
    ``overlap`` ``SKIP``        ``overlap="skip"``; after an outage the          TEMPORAL_CODE
                                earliest in-window miss runs:
                                ``catchup="earliest"``
    ``BUFFER_ONE``/``_ALL``     ``buffer_one``/``buffer_all``, ``catchup="all"``  TEMPORAL_CODE
    ``CANCEL_OTHER``,           ``cancel_other``, ``catchup="latest"``            TEMPORAL_CODE
    ``TERMINATE_OTHER``
    ``ALLOW_ALL``               ``allow``, ``catchup="all"``                      TEMPORAL_API
    ``jitter``                  ``jitter`` (deterministic, capped at the next)   TEMPORAL_DOC
    DST                         ``gap="skip"``, ``fold="both"``                  TEMPORAL_API
    ==========================  ===============================================  ===============

    ``after_outage`` only concerns ``SKIP``: ``"earliest"`` is what the current
    server code does (``processBuffer`` starts the first buffered action);
    ``"latest"`` is the other reading ANCHORS records, where the most recent
    missed action runs.

    Sources: https://docs.temporal.io/schedule (TEMPORAL_DOC),
    https://github.com/temporalio/temporal/blob/main/service/worker/scheduler/workflow.go (TEMPORAL_CODE),
    https://github.com/temporalio/api/blob/master/temporal/api/schedule/v1/message.proto (TEMPORAL_API),
    https://github.com/temporalio/temporal/pull/4332 (TEMPORAL_PR).

    >>> from calsim import presets
    >>> p = presets.temporal()
    >>> p.policy.catchup, p.policy.overlap, p.policy.max_lateness_us // (86400 * 10**6), p.gap, p.fold
    ('earliest', 'skip', 365, 'skip', 'both')
    """
    _enum("overlap", overlap, tuple(_TEMPORAL_OVERLAP))
    window = _seconds("catchup_window", catchup_window)
    jit = _seconds("jitter", jitter, none=True)
    _enum("after_outage", after_outage, ("earliest", "latest"))
    assert window is not None
    notes = [
        "DST: calendar specs match wall-clock fields literally: a time the day lacks does not fire, a repeated "
        "one fires twice",
        "cron: Temporal ANDs day-of-month and day-of-week; calsim expands crons with the Vixie OR rule",
        "catch-up buffer cap (1000 actions, overflow dropped) is not modelled",
        "catchup_window default is 365 d since server 1.20.3 (60 s before; the Go SDK comment saying one minute "
        "is stale)",
    ]
    if window < 10 * US:
        notes.append(f"catchup_window={catchup_window!r} is below Temporal's minimum and is clamped to 10 s")
        window = 10 * US
    catchup = {"SKIP": "earliest" if after_outage == "earliest" else "latest", "CANCEL_OTHER": "latest",
               "TERMINATE_OTHER": "latest"}.get(overlap, "all")
    if overlap == "SKIP" and after_outage == "latest":
        notes.append("after_outage='latest': the most recent missed action runs; the current server code starts "
                     "the earliest (after_outage='earliest')")
    elif overlap != "SKIP" and after_outage != "earliest":
        notes.append(f"after_outage={after_outage!r} has no effect with overlap={overlap!r}")
    if overlap == "BUFFER_ONE":
        notes.append("BUFFER_ONE after an outage: Temporal starts the earliest miss and keeps the next one "
                     "buffered; calsim gets this from catchup='all' + overlap='buffer_one' only while the first "
                     "run is still going")
    if overlap == "TERMINATE_OTHER":
        notes.append("TERMINATE_OTHER -> 'cancel_other': calsim does not tell terminate (start now) from cancel "
                     "(start after the cancellation completes)")
    return Preset(
        name="temporal",
        policy=Policy(catchup=catchup, max_lateness=dt.timedelta(microseconds=window), overlap=_TEMPORAL_OVERLAP[overlap],  # type: ignore[arg-type]
                      jitter=dt.timedelta(microseconds=jit) if jit else None),
        gap="skip", fold="both", tick="1s", notes=tuple(notes),
        sources=(TEMPORAL_DOC, TEMPORAL_CODE, TEMPORAL_API, TEMPORAL_PR),
        settings=_settings(overlap=overlap, catchup_window=catchup_window, jitter=jitter, after_outage=after_outage),
    )


def apscheduler(misfire_grace_time: float | None = 1, coalesce: bool = True, max_instances: int = 1,
                jitter: float | None = None, dst_gap: str = "code", jobstore: str = "memory") -> Preset:
    """APScheduler 3.x with a ``CronTrigger`` (job defaults of ``BaseScheduler``).

    ========================  ===================================================  ===========
    APScheduler setting       calsim                                               source
    ========================  ===================================================  ===========
    ``misfire_grace_time``    ``max_lateness`` (a run later than this is           APS_BASE,
    (1 s; None = any)         dropped as missed: ``expired``; exactly this late    APS_GUIDE,
                              still runs, ``now - run_time > grace``:              APS_EXEC
                              ``limit_edge="on_time"``)
    ``coalesce`` (True)       ``catchup="latest"`` (False: ``"all"``, the one      APS_GUIDE,
                              instance working through the backlog in turn:        APS_EXEC
                              ``backlog="in_turn"``)
    ``jobstore``              ``"memory"`` (default): a restarted process adds     APS_BASE
                              its jobs again and misses nothing
                              (``catchup="skip"`` after ``Outage(kind="down")``;
                              a suspend keeps the store: ``suspend_catchup``);
                              ``"persistent"`` (SQLAlchemy, ...): a restart
                              is like a suspend
    ``max_instances`` (1)     1: ``overlap="skip"`` (skipped, not queued);         APS_GUIDE
                              more: ``"allow"``
    ``jitter`` (s)            ``jitter``                                           APS_HISTORY
    DST (``dst_gap="code"``)  ``gap="shift"``, but ``"skip"`` when the rule        measured,
                              matches every hour; ``fold="both"``                  APS_CRON
    DST (``"docs"``)          ``gap="skip"``, ``fold="both"``                      APS_CRON
    ========================  ===================================================  ===========

    The docs say a time in the gap does not run. APScheduler 3.11.3 with
    ``zoneinfo`` instead returns the nonexistent wall time when it *sets* the
    hour field (fold 0, the offset before the gap: 02:30 runs at 03:30 EDT),
    and skips it when it reaches the gap by counting through an every-hour
    field; ``dst_gap="code"`` (default) reproduces that, measured against
    ``CronTrigger.get_next_fire_time`` in the tests.

    Sources: https://github.com/agronholm/apscheduler/blob/3.x/apscheduler/schedulers/base.py (APS_BASE),
    https://apscheduler.readthedocs.io/en/3.x/userguide.html (APS_GUIDE),
    https://apscheduler.readthedocs.io/en/3.x/modules/triggers/cron.html (APS_CRON),
    https://github.com/agronholm/apscheduler/blob/3.x/docs/versionhistory.rst (APS_HISTORY).

    >>> from calsim import presets
    >>> p = presets.apscheduler()
    >>> p.policy.suspend_catchup, p.policy.catchup, p.policy.max_lateness_us, p.policy.overlap, p.gap, p.wildcard.gap
    ('latest', 'skip', 1000000, 'skip', 'shift', 'skip')
    """
    if misfire_grace_time is not None and (isinstance(misfire_grace_time, bool)
                                           or not isinstance(misfire_grace_time, (int, float))
                                           or not misfire_grace_time > 0):
        raise _bad("misfire_grace_time", misfire_grace_time, "a number of seconds > 0 or None")
    _bool("coalesce", coalesce)
    _int("max_instances", max_instances, 1)
    if jitter is not None and (isinstance(jitter, bool) or not isinstance(jitter, (int, float)) or jitter < 0):
        raise _bad("jitter", jitter, "a number of seconds >= 0 or None")
    _enum("dst_gap", dst_gap, ("code", "docs"))
    _enum("jobstore", jobstore, ("memory", "persistent"))
    notes = [
        "a run going when the machine suspends is frozen with it in APScheduler (it ends that much later); calsim "
        "runs keep their wall-clock duration",
        "a run going when the process goes down (Outage kind 'down') dies with it in APScheduler (the executor's "
        "threads), so the next fire time finds no instance going; calsim lets the run finish",
        "a fire time refused because the one instance is busy is reported as max_instances in APScheduler even when "
        "it is also past the grace; calsim marks it expired",
        "after a suspend, BlockingScheduler/BackgroundScheduler wake late: their wait runs on CLOCK_MONOTONIC, which "
        "stops while the machine sleeps (agronholm/apscheduler#794); calsim wakes at the resume instant",
        "misfire: with the defaults (1 s grace) a run delayed by downtime is dropped, even the coalesced one; "
        "calsim marks them all 'expired', APScheduler reports the newest as missed and coalesces the rest",
        "jitter: APScheduler draws it at random and does not cap it at the next run time; calsim's is "
        "deterministic per occurrence and capped",
        "cron: CronTrigger day_of_week numbers start at 0 = Monday in 3.x (also from_crontab); calsim crons use "
        "0 = Sunday, translate numbers before building a schedule",
    ]
    if dst_gap == "code":
        notes.append("dst_gap='code': several gap times under one set hour (hour=2, minute='*/30') run only the "
                     "first (shifted) in APScheduler, calsim shifts them all; a shifted time equal to a real one "
                     "(hour='2-4') fires twice in APScheduler and once in calsim (merged)")
    else:
        notes.append("dst_gap='docs': the documented behaviour (a gap time does not run); APScheduler 3.11.3 with "
                     "zoneinfo runs it shifted (dst_gap='code')")
    if max_instances > 1:
        notes.append(f"max_instances={max_instances}: calsim has no instance count, 'allow' is unbounded")
        if not coalesce:
            notes.append("coalesce=False with max_instances > 1: one submission is one instance, so APScheduler "
                         "still works a backlog in turn on one instance; calsim starts it at once")
    if jobstore == "memory":
        notes.append("jobstore='memory': a restart (Outage kind 'down') re-adds the job from its next fire time at or "
                     "after the restart; a fire at most one tick before the restart still runs in calsim")
    after_suspend = "latest" if coalesce else "all"
    after_down = after_suspend if jobstore == "persistent" else "skip"
    return Preset(
        name="apscheduler",
        policy=Policy(catchup=after_down, max_lateness=misfire_grace_time,  # type: ignore[arg-type]
                      overlap="skip" if max_instances == 1 else "allow", jitter=jitter or None,
                      backlog="in_turn" if not coalesce and max_instances == 1 else "at_once",
                      suspend_catchup=after_suspend),  # type: ignore[arg-type]
        gap="shift" if dst_gap == "code" else "skip", fold="both", tick="1s", notes=tuple(notes),
        sources=(APS_BASE, APS_GUIDE, APS_CRON, APS_HISTORY, "https://github.com/agronholm/apscheduler/issues/296"),
        settings=_settings(misfire_grace_time=misfire_grace_time, coalesce=coalesce, max_instances=max_instances,
                           jitter=jitter, dst_gap=dst_gap, jobstore=jobstore),
        wildcard=Wildcard("every_hour", "skip", "both") if dst_gap == "code" else None,
    )


_QUARTZ_MISFIRE = {"SMART_POLICY": "latest", "FIRE_ONCE_NOW": "latest", "DO_NOTHING": "skip",
                   "IGNORE_MISFIRE_POLICY": "all"}


def quartz(misfire_instruction: str = "SMART_POLICY", misfire_threshold_ms: int = 60000,
           disallow_concurrent: bool = False, job_store: str = "ram") -> Preset:
    """Quartz 2.x ``CronTrigger`` (``MISFIRE_INSTRUCTION_*`` without the prefix).

    ===========================  ===================================================  ============
    Quartz setting               calsim                                               source
    ===========================  ===================================================  ============
    ``misfireThreshold`` (60 s)  ``misfire_grace``; RAMJobStore: this late or later   QUARTZ_STORE,
                                 is misfired (``limit_edge="late"``); JDBC: later     QUARTZ_RAM,
                                 than this                                            QUARTZ_JDBC
    ``job_store``                ``"ram"`` (default): a restarted scheduler           QUARTZ_CRON
                                 re-schedules its triggers and misses nothing
                                 (``catchup="skip"``, ``down_is_missed``); a
                                 paused JVM (``Outage(kind="suspend")``) applies
                                 the instruction; ``"jdbc"``: both apply it
    ``SMART_POLICY`` =           ``catchup="latest"`` (one run now, then the          QUARTZ_CRON
    ``FIRE_ONCE_NOW``            normal schedule)
    ``DO_NOTHING``               ``catchup="skip"`` (next time after now)             QUARTZ_CRON
    ``IGNORE_MISFIRE_POLICY``    ``catchup="all"`` (every missed time, asap)          QUARTZ_CRON
    ``@DisallowConcurrent...``   ``overlap="buffer_one"`` (blocked trigger waits;     QUARTZ_JOBS
                                 with ``IGNORE_MISFIRE_POLICY`` every blocked time
                                 runs in turn: ``"buffer_all"``); without it
                                 ``"allow"``
    DST                          ``gap="skip"``, ``fold="both"``                      QUARTZ_DST
    ===========================  ===================================================  ============

    Sources: https://github.com/quartz-scheduler/quartz/blob/main/quartz/src/main/java/org/quartz/impl/triggers/CronTriggerImpl.java
    (QUARTZ_CRON), https://quartz-scheduler.org/documentation/quartz-2.3.0/configuration/ConfigRAMJobStore.html
    (QUARTZ_STORE), https://documentation.softwareag.com/onlinehelp/Rohan/quartz_223/webhelp/quartz-scheduler-webhelp/co-bp_daylight_savings_time_tips.html
    (QUARTZ_DST), https://www.quartz-scheduler.org/documentation/quartz-2.3.0/tutorials/tutorial-lesson-03.html (QUARTZ_JOBS).

    >>> from calsim import presets
    >>> p = presets.quartz(misfire_instruction="DO_NOTHING", job_store="jdbc")
    >>> p.policy.catchup, p.policy.misfire_grace_us, p.policy.overlap, p.policy.limit_edge
    ('skip', 60000000, 'allow', 'on_time')
    """
    _enum("misfire_instruction", misfire_instruction, tuple(_QUARTZ_MISFIRE))
    threshold = _int("misfire_threshold_ms", misfire_threshold_ms, 0)
    _bool("disallow_concurrent", disallow_concurrent)
    _enum("job_store", job_store, ("ram", "jdbc"))
    assert threshold is not None
    notes = [
        "DO_NOTHING moves a misfired trigger to its first fire time strictly after now, so a fire time met at the "
        "same wake-up as misfired ones (on time, or less late than the threshold) is skipped too; calsim runs it",
        "job_store='ram': a fire time in the last second before a restart, or exactly at it, still fires in "
        "Quartz (computeFirstFireTime counts from startTime - 1 s); calsim counts it as missed while down",
        "the scheduler thread acquires triggers up to 30 s ahead (idleWaitTime): a pause starting less than 30 s "
        "before a fire time fires it anyway; calsim picks each fire time at its tick",
        "DST: the docs say a 2:05 time 'may never occur' on the spring day and a 1:05 time 'may occur twice'",
        "FIRE_ONCE_NOW runs once at recovery; calsim attributes that run to the newest missed time",
        "only CronTrigger instructions; a SimpleTrigger (fixed ms) is calsim.Every with its own instructions",
    ]
    if disallow_concurrent:
        notes.append("disallow_concurrent -> 'buffer_one': a blocked trigger waits for the running job; if it is "
                     "then later than misfireThreshold, Quartz applies the misfire instruction, calsim runs it")
    on_misfire = _QUARTZ_MISFIRE[misfire_instruction]
    overlap = "allow"
    if disallow_concurrent:
        overlap = "buffer_all" if misfire_instruction == "IGNORE_MISFIRE_POLICY" else "buffer_one"
    if job_store == "ram" and threshold < 1:
        notes.append("misfire_threshold_ms < 1: RAMJobStore refuses it (setMisfireThreshold); calsim takes it as 0")
    return Preset(
        name="quartz",
        policy=Policy(catchup=on_misfire if job_store == "jdbc" else "skip", misfire_grace=threshold / 1000,  # type: ignore[arg-type]
                      overlap=overlap, limit_edge="late" if job_store == "ram" else "on_time",  # type: ignore[arg-type]
                      suspend_catchup=on_misfire, down_is_missed=job_store == "ram"),  # type: ignore[arg-type]
        gap="skip", fold="both", tick="1s", notes=tuple(notes),
        sources=(QUARTZ_CRON, QUARTZ_STORE, QUARTZ_DST, QUARTZ_JOBS, "https://github.com/quartz-scheduler/quartz/issues/51"),
        settings=_settings(misfire_instruction=misfire_instruction, misfire_threshold_ms=misfire_threshold_ms,
                           disallow_concurrent=disallow_concurrent, job_store=job_store),
    )


def systemd(persistent: bool = False, accuracy_sec: object = "1min", randomized_delay_sec: object = 0,
            fixed_random_delay: bool = False, defer_reactivation: bool = False) -> Preset:
    """systemd ``.timer`` with ``OnCalendar=``.

    ==========================  ====================================================  =======
    timer setting               calsim                                                source
    ==========================  ====================================================  =======
    ``Persistent=`` (false)     ``catchup="skip"``; true: ``"latest"`` (fires once    SYSTEMD
                                immediately if an elapse was missed)
    (suspend)                   ``suspend_catchup="latest"``: an elapse missed        SYSTEMD
                                while suspended fires once on resume
    (boot)                      ``down_is_missed``, ``recovery_wake=False``: the      TIMER_C
                                next elapse is strictly after boot, and the
                                Persistent catch-up lands at the first
                                AccuracySec point after boot
    ``AccuracySec=`` (1 min)    ``tick`` (elapse at a host-stable point in the        SYSTEMD
                                window)
    ``RandomizedDelaySec=``     ``jitter``                                            SYSTEMD
    (unit still active)         ``overlap="buffer_one"``: no second instance, the     SYSTEMD
                                missed elapse fires once when it ends;
                                ``DeferReactivation=``: ``"skip"``
    DST                         **not documented**: assumed ``gap="skip"``,           SYSTEMD
                                ``fold="first"``
    ==========================  ====================================================  =======

    Source: https://www.freedesktop.org/software/systemd/man/latest/systemd.timer.html (SYSTEMD).

    >>> from calsim import presets
    >>> p = presets.systemd(persistent=True, randomized_delay_sec="5min")
    >>> p.policy.catchup, p.policy.jitter_us // 10**6, p.tick, p.gap, p.fold
    ('latest', 300, '1min', 'skip', 'first')
    """
    _bool("persistent", persistent)
    accuracy = _seconds("accuracy_sec", accuracy_sec)
    delay = _seconds("randomized_delay_sec", randomized_delay_sec)
    _bool("fixed_random_delay", fixed_random_delay)
    _bool("defer_reactivation", defer_reactivation)
    assert accuracy is not None and delay is not None
    notes = [
        "DST (measured with systemd-analyze 252): a wall time that does not exist is skipped and a repeated one "
        "fires in its first pass only, for a timer running throughout; a timer that boots, resumes or triggers "
        "inside the repeated hour fires the second-pass times after that instant too (timer.c: the next elapse "
        "follows its base), which fold='first' does not give",
        "the Persistent= catch-up at boot is still delayed by RandomizedDelaySec= in systemd; calsim starts it at "
        "the first wake-up",
        "RandomizedDelaySec= longer than the period swallows the elapses inside the delay in systemd; calsim caps "
        "each delay before the next elapse and runs them all",
        "an outage is modelled as the timer being inactive (machine off); elapses during a suspend collapse into "
        "one activation on resume, which persistent=True gives",
        "AccuracySec= places the elapse at a host-specific stable point in the window; tick=AccuracySec aligns "
        "wake-ups to the Unix epoch instead",
        "a Persistent= catch-up at a boot exactly on an AccuracySec= point fires at the boot instant in systemd; "
        "calsim starts it at the next tick",
    ]
    if fixed_random_delay:
        notes.append("fixed_random_delay=True: systemd uses one offset per machine and timer; calsim draws a "
                     "deterministic offset per occurrence")
    if accuracy == 0:
        notes.append("accuracy_sec=0: systemd's minimum is 1 µs; tick set to 1s")
    return Preset(
        name="systemd",
        policy=Policy(catchup="latest" if persistent else "skip", overlap="skip" if defer_reactivation else "buffer_one",
                      jitter=dt.timedelta(microseconds=delay) if delay else None, suspend_catchup="latest",
                      down_is_missed=True, recovery_wake=False),
        gap="skip", fold="first", tick=_tick_text(accuracy) if accuracy else "1s", notes=tuple(notes),
        sources=(SYSTEMD, TIMER_C),
        settings=_settings(persistent=persistent, accuracy_sec=accuracy_sec, randomized_delay_sec=randomized_delay_sec,
                           fixed_random_delay=fixed_random_delay, defer_reactivation=defer_reactivation),
    )


def cronie(job_kind: str = "auto") -> Preset:
    """cron (cronie, Debian/Vixie), as cronsim reproduces it.

    ============================  ==================================================  ==============
    cron behaviour                calsim                                              source
    ============================  ==================================================  ==============
    fixed-time job (no ``*``      ``gap="next_valid"`` (run right after the           CRONIE, DEBIAN
    first in minute or hour)      change), ``fold="first"`` (not run twice)
    wildcard job (minute or       ``gap="skip"``, ``fold="both"`` (follows the new    DEBIAN, CRONSIM
    hour starts with ``*``)       time: runs in both passes of a repeated hour)
    restart                       ``catchup="skip"`` (no catch-up; anacron is the     CRONIE_SRC
                                  add-on), ``misfire_grace=0``,
                                  ``recovery_wake=False``: the minute crond starts
                                  in is skipped (``cron.c`` ``set_time``, then
                                  ``cron_sleep(timeRunning + 1)``)
    suspend (clock jump of J      fixed-time: every missed minute runs if             CRONIE_SRC
    wall minutes on resume)       J <= 180 (``suspend_limit="180min"``); wildcard:
                                  if J <= 5 (``"5min"``), else only the current
                                  minute (``suspend_catchup="all"``)
    overlap                       ``overlap="allow"``
    wakes each minute             ``tick="1min"``
    ============================  ==================================================  ==============

    ``job_kind="auto"`` decides per schedule, as cron's ``MIN_STAR``/``HR_STAR``
    flags and cronsim do (``*/2`` starts with ``*``, so it is wildcard);
    ``"fixed"`` or ``"wildcard"`` force one kind. Non-cron rules count as
    fixed-time.

    Sources: https://github.com/cronie-crond/cronie/blob/master/man/cron.8 (CRONIE),
    https://manpages.debian.org/bookworm/cron/cron.8.en.html (DEBIAN), https://pypi.org/project/cronsim/ (CRONSIM).

    >>> import calsim
    >>> from calsim import presets
    >>> p = presets.cronie()
    >>> [p.dst_for(calsim.Schedule("j", "UTC", "2026-01-01T00:00", e)) for e in ("30 2 * * *", "*/30 * * * *")]
    [('next_valid', 'first'), ('skip', 'both')]
    """
    _enum("job_kind", job_kind, ("auto", "fixed", "wildcard"))
    fixed, wild = ("next_valid", "first"), ("skip", "both")
    gap, fold = wild if job_kind == "wildcard" else fixed
    notes = [
        "a suspend's clock jump J is counted in wall minutes between crond's last minute and its resume minute "
        "(cron.c timeDiff): a suspend starting on a minute boundary gives J = its length + 1 minute, and one across "
        "a DST change adds or removes the change; calsim compares the suspend's real length with the limit",
        "a restart inside the second pass of a repeated hour runs a fixed-time job again at its wall time (crond "
        "forgot the first pass); calsim expands fixed-time jobs with fold='first' and runs the first pass only",
        "a suspend across a fall-back can make the jump J zero or negative: crond runs nothing missed (fixed-time "
        "jobs wait until the wall clock passes the last minute done, so their second pass may run); calsim catches "
        "the suspend up by its real length",
        "a suspend ending inside the second pass of a repeated hour: crond catches fixed-time jobs up only to its "
        "resume wall minute and runs the later first-pass times in the second pass (fold 1); calsim catches the "
        "first pass up at the resume, or nothing after a long suspend, and never runs the second pass",
        "a suspend ending exactly at a spring-forward change: gap times moved to the change (next_valid) are due "
        "at the resume instant, so calsim runs them as on time; crond counts the change in its jump and, past "
        "180 minutes, runs only the resume minute's jobs",
        "catch-up runs after a suspend are paced 10 s apart per minute caught up (cron.c sleep(10)); calsim starts "
        "them at the resume wake-up",
        "clock changes of 3 h or more are treated by cron as corrections (nothing run for the skipped interval); "
        "calsim and cronsim still run fixed-time jobs right after such a jump (Pacific/Apia 2011-12-30)",
        "several gap times of one fixed-time job (0,30 2 * * *) all run at the change in crond, 10 s apart; calsim "
        "keeps one instant and marks the others merged_into (cronsim yields one)",
        "cronie's 'granularity > 1 h' wording would make '0 */2 * * *' fixed-time; the code flags and cronsim "
        "treat it as wildcard, as calsim does",
        "cronsim 2.8 misses a few wildcard times next to Lord Howe's 30-minute changes (its searches jump in "
        "real time); calsim runs them, as cron's minute-by-minute matching does (pinned in the tests)",
    ]
    fixed_policy = dict(catchup="skip", overlap="allow", misfire_grace=0, recovery_wake=False,
                        suspend_catchup="all", suspend_limit="180min")
    wild_policy = (("suspend_limit", "5min"),)
    policy = Policy(**{**fixed_policy, **(dict(wild_policy) if job_kind == "wildcard" else {})})  # type: ignore[arg-type]
    return Preset(
        name="cronie",
        policy=policy,
        gap=gap, fold=fold, tick="1min", notes=tuple(notes),  # type: ignore[arg-type]
        sources=(CRONIE, CRONIE_SRC, DEBIAN, CRONSIM),
        settings=_settings(job_kind=job_kind),
        wildcard=Wildcard("minute_or_hour_starred", "skip", "both", wild_policy) if job_kind == "auto" else None,
    )


def eventbridge(flexible_window_minutes: int | None = None, maximum_event_age_seconds: int = 86400,
                maximum_retry_attempts: int = 185) -> Preset:
    """AWS EventBridge Scheduler, ``cron()`` schedules.

    ===============================  ===============================================  ============
    EventBridge setting              calsim                                           source
    ===============================  ===============================================  ============
    ``FlexibleTimeWindow``           ``jitter`` = ``MaximumWindowInMinutes``          EB_WINDOW
    (``OFF``; FLEXIBLE 1..1440 min)  (invoked within the window after the time)
    ``MaximumEventAgeInSeconds``     ``max_lateness`` (60..86400; undelivered older   EB_RETRY
                                     events are dropped; which side of the limit
                                     an exact tie falls on is undocumented:
                                     ``limit_edge="on_time"`` assumed)
    ``MaximumRetryAttempts``         kept in ``settings`` (0..185): retries are a     EB_RETRY
                                     scenario's ``Failures``
    (missed invocations)             ``catchup="all"``, ``overlap="allow"``           undocumented
    DST                              ``gap="skip"``, ``fold="first"``                 EB_DST
    precision                        ``tick="1min"``                                  EB_DST
    ===============================  ===============================================  ============

    Sources: https://repost.aws/knowledge-center/eventbridge-scheduler-adjust-dst (EB_DST),
    https://docs.aws.amazon.com/scheduler/latest/UserGuide/managing-schedule-flexible-time-windows.html (EB_WINDOW),
    https://docs.aws.amazon.com/scheduler/latest/APIReference/API_RetryPolicy.html (EB_RETRY).

    >>> from calsim import presets
    >>> p = presets.eventbridge(flexible_window_minutes=15)
    >>> p.policy.jitter_us // 60_000_000, p.policy.max_lateness_us // 3_600_000_000, p.gap, p.fold
    (15, 24, 'skip', 'first')
    """
    window = _int("flexible_window_minutes", flexible_window_minutes, 1, 1440, none=True)
    age = _int("maximum_event_age_seconds", maximum_event_age_seconds, 60, 86400)
    _int("maximum_retry_attempts", maximum_retry_attempts, 0, 185)
    notes = [
        "a managed service: a calsim outage stands for an unreachable target, retried until the event age",
        "retries (exponential backoff, base undocumented) are not set here: use Scenario(failures=Failures("
        "max_attempts=maximum_retry_attempts + 1, ...))",
        "defaults 86400 s / 185 retries follow the user guide (unverified in ANCHORS); overlap is undocumented, "
        "assumed 'allow'",
        "where in the flexible window an invocation lands is not documented; calsim spreads it in [0, window)",
        "rate(n days) adds 24 h durations (local hour drifts across DST): use calsim.Every, not a cron",
    ]
    return Preset(
        name="eventbridge",
        policy=Policy(catchup="all", max_lateness=age, overlap="allow", jitter=None if window is None else window * 60),
        gap="skip", fold="first", tick="1min", notes=tuple(notes),
        sources=(EB_DST, EB_WINDOW, EB_RETRY, EB_WINDOW_API),
        settings=_settings(flexible_window_minutes=flexible_window_minutes,
                           maximum_event_age_seconds=maximum_event_age_seconds,
                           maximum_retry_attempts=maximum_retry_attempts),
    )
