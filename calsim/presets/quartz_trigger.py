"""The ``quartz`` preset (see :mod:`calsim.presets`)."""

from __future__ import annotations

from typing import Literal, get_args

from ..simulation.policy import Policy
from ..errors import check_choice
from ._base import _bool, _int, _settings, Preset

__all__ = ["quartz"]

MisfireInstruction = Literal["SMART_POLICY", "FIRE_ONCE_NOW", "DO_NOTHING", "IGNORE_MISFIRE_POLICY"]
JobStore = Literal["ram", "jdbc"]

QUARTZ_CRON = "https://github.com/quartz-scheduler/quartz/blob/main/quartz/src/main/java/org/quartz/impl/triggers/CronTriggerImpl.java"
QUARTZ_STORE = "https://quartz-scheduler.org/documentation/quartz-2.3.0/configuration/ConfigRAMJobStore.html"
QUARTZ_RAM = "https://github.com/quartz-scheduler/quartz/blob/main/quartz/src/main/java/org/quartz/simpl/RAMJobStore.java"
QUARTZ_JDBC = "https://github.com/quartz-scheduler/quartz/blob/main/quartz/src/main/java/org/quartz/impl/jdbcjobstore/StdJDBCConstants.java"
QUARTZ_DST = "https://documentation.softwareag.com/onlinehelp/Rohan/quartz_223/webhelp/quartz-scheduler-webhelp/co-bp_daylight_savings_time_tips.html"
QUARTZ_JOBS = "https://www.quartz-scheduler.org/documentation/quartz-2.3.0/tutorials/tutorial-lesson-03.html"


_QUARTZ_MISFIRE = {"SMART_POLICY": "latest", "FIRE_ONCE_NOW": "latest", "DO_NOTHING": "skip",
                   "IGNORE_MISFIRE_POLICY": "all"}


def quartz(*, misfire_instruction: MisfireInstruction = "SMART_POLICY", misfire_threshold_ms: int = 60000,
           disallow_concurrent: bool = False, job_store: JobStore = "ram") -> Preset:
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

    Parameters (keyword-only)
    -------------------------
    misfire_instruction : {"SMART_POLICY", "FIRE_ONCE_NOW", "DO_NOTHING", "IGNORE_MISFIRE_POLICY"}, default "SMART_POLICY"
    misfire_threshold_ms : int >= 0, default 60000
    disallow_concurrent : bool, default False
        The job class is ``@DisallowConcurrentExecution``.
    job_store : {"ram", "jdbc"}, default "ram"

    Sources: https://github.com/quartz-scheduler/quartz/blob/main/quartz/src/main/java/org/quartz/impl/triggers/CronTriggerImpl.java
    (QUARTZ_CRON), https://quartz-scheduler.org/documentation/quartz-2.3.0/configuration/ConfigRAMJobStore.html
    (QUARTZ_STORE), https://documentation.softwareag.com/onlinehelp/Rohan/quartz_223/webhelp/quartz-scheduler-webhelp/co-bp_daylight_savings_time_tips.html
    (QUARTZ_DST), https://www.quartz-scheduler.org/documentation/quartz-2.3.0/tutorials/tutorial-lesson-03.html (QUARTZ_JOBS).

    >>> from calsim import presets
    >>> p = presets.quartz(misfire_instruction="DO_NOTHING", job_store="jdbc")
    >>> p.policy.catchup, p.policy.misfire_grace_us, p.policy.overlap, p.policy.limit_edge
    ('skip', 60000000, 'allow', 'on_time')
    """
    check_choice("misfire_instruction", misfire_instruction, get_args(MisfireInstruction))
    threshold = _int("misfire_threshold_ms", misfire_threshold_ms, 0)
    _bool("disallow_concurrent", disallow_concurrent)
    check_choice("job_store", job_store, get_args(JobStore))
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
