"""The ``apscheduler`` preset (see :mod:`calsim.presets`)."""

from __future__ import annotations

from typing import Literal, get_args

from ..simulation.policy import Policy
from ..errors import check_choice
from ._base import _bad, _bool, _int, _settings, Preset, Wildcard

__all__ = ["apscheduler"]

DstGap = Literal["code", "docs"]
JobStore = Literal["memory", "persistent"]

APS_BASE = "https://github.com/agronholm/apscheduler/blob/3.x/apscheduler/schedulers/base.py"
APS_GUIDE = "https://apscheduler.readthedocs.io/en/3.x/userguide.html"
APS_CRON = "https://apscheduler.readthedocs.io/en/3.x/modules/triggers/cron.html"
APS_HISTORY = "https://github.com/agronholm/apscheduler/blob/3.x/docs/versionhistory.rst"
APS_EXEC = "https://github.com/agronholm/apscheduler/blob/3.x/apscheduler/executors/base.py"


def apscheduler(*, misfire_grace_time: float | None = 1, coalesce: bool = True, max_instances: int = 1,
                jitter: float | None = None, dst_gap: DstGap = "code", jobstore: JobStore = "memory") -> Preset:
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

    Parameters (keyword-only, APScheduler's job options)
    ----------------------------------------------------
    misfire_grace_time : seconds > 0 or None, default 1
    coalesce : bool, default True
    max_instances : int >= 1, default 1
    jitter : seconds >= 0 or None, default None
    dst_gap : {"code", "docs"}, default "code"
    jobstore : {"memory", "persistent"}, default "memory"

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
    check_choice("dst_gap", dst_gap, get_args(DstGap))
    check_choice("jobstore", jobstore, get_args(JobStore))
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
