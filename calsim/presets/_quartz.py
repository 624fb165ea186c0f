"""The ``quartz`` preset (see :mod:`calsim.presets`)."""

from __future__ import annotations

from typing import Literal, get_args

from ..simulation.policy import Catchup, Overlap, Policy
from ..errors import check_choice
from ._base import _bool, _int, _settings, Difference, Preset

__all__ = ["quartz"]

MisfireInstruction = Literal["SMART_POLICY", "FIRE_ONCE_NOW", "DO_NOTHING", "IGNORE_MISFIRE_POLICY"]
JobStore = Literal["ram", "jdbc"]

QUARTZ_CRON = "https://github.com/quartz-scheduler/quartz/blob/main/quartz/src/main/java/org/quartz/impl/triggers/CronTriggerImpl.java"
QUARTZ_STORE = "https://quartz-scheduler.org/documentation/quartz-2.3.0/configuration/ConfigRAMJobStore.html"
QUARTZ_RAM = "https://github.com/quartz-scheduler/quartz/blob/main/quartz/src/main/java/org/quartz/simpl/RAMJobStore.java"
QUARTZ_JDBC = "https://github.com/quartz-scheduler/quartz/blob/main/quartz/src/main/java/org/quartz/impl/jdbcjobstore/StdJDBCConstants.java"
QUARTZ_DST = "https://documentation.softwareag.com/onlinehelp/Rohan/quartz_223/webhelp/quartz-scheduler-webhelp/co-bp_daylight_savings_time_tips.html"
QUARTZ_JOBS = "https://www.quartz-scheduler.org/documentation/quartz-2.3.0/tutorials/tutorial-lesson-03.html"
QUARTZ_CRONEXPR = "https://github.com/quartz-scheduler/quartz/blob/quartz-2.3.2/quartz-core/src/main/java/org/quartz/CronExpression.java"
MEASURED = "Quartz 2.3.2 (Debian libquartz2-java 2.3.2-4), Java 17 tzdb 2025a"


_QUARTZ_MISFIRE: dict[str, Catchup] = {"SMART_POLICY": "latest", "FIRE_ONCE_NOW": "latest", "DO_NOTHING": "skip",
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
    DST                          as Quartz 2.3.2's ``getTimeAfter`` walks it          QUARTZ_CRONEXPR,
                                 (``gap="scheduler"``, ``fold="scheduler"``): a       QUARTZ_DST
                                 time in a gap is skipped, a repeated time fires
                                 in its second pass only, an hour whose ``:00`` is
                                 in a gap is skipped whole (Chatham); rules Quartz
                                 does not read as calsim does: ``gap="skip"``,
                                 ``fold="second"`` (``fallback``)
    ===========================  ===================================================  ============

    Measured against the real code: Debian's ``libquartz2-java`` 2.3.2-4 on
    Java 17 (tzdb 2025a), its ``CronExpression`` for the fire times and DST
    (``tests/rules/test_quartz_jar.py``, ``test_quartz_oracle.py``); the
    misfire decisions against its real ``RAMJobStore`` and ``CronTriggerImpl``
    on a faked clock, and a port of the JDBC store (``tests/presets/test_quartz.py``).
    ``calsim.presets.differences(preset)`` lists what calsim does not reproduce.

    Parameters (keyword-only)
    -------------------------
    misfire_instruction : {"SMART_POLICY", "FIRE_ONCE_NOW", "DO_NOTHING", "IGNORE_MISFIRE_POLICY"}, default "SMART_POLICY"
    misfire_threshold_ms : int >= 0, default 60000
    disallow_concurrent : bool, default False
        The job class is ``@DisallowConcurrentExecution``.
    job_store : {"ram", "jdbc"}, default "ram"

    Sources: https://github.com/quartz-scheduler/quartz/blob/main/quartz/src/main/java/org/quartz/impl/triggers/CronTriggerImpl.java
    (QUARTZ_CRON), https://quartz-scheduler.org/documentation/quartz-2.3.0/configuration/ConfigRAMJobStore.html
    (QUARTZ_STORE), https://github.com/quartz-scheduler/quartz/blob/quartz-2.3.2/quartz-core/src/main/java/org/quartz/CronExpression.java
    (QUARTZ_CRONEXPR), https://documentation.softwareag.com/onlinehelp/Rohan/quartz_223/webhelp/quartz-scheduler-webhelp/co-bp_daylight_savings_time_tips.html
    (QUARTZ_DST), https://www.quartz-scheduler.org/documentation/quartz-2.3.0/tutorials/tutorial-lesson-03.html
    (QUARTZ_JOBS).

    >>> from calsim import presets
    >>> p = presets.quartz(misfire_instruction="DO_NOTHING", job_store="jdbc")
    >>> p.policy.catchup, p.policy.misfire_grace_us, p.policy.overlap, p.policy.limit_edge
    ('skip', 60000000, 'allow', 'on_time')
    >>> p.gap, p.fold, p.fallback
    ('scheduler', 'scheduler', ('skip', 'second'))
    """  # noqa: E501  (a numpydoc type line)
    check_choice("misfire_instruction", misfire_instruction, get_args(MisfireInstruction))
    threshold = _int("misfire_threshold_ms", misfire_threshold_ms, 0)
    _bool("disallow_concurrent", disallow_concurrent)
    check_choice("job_store", job_store, get_args(JobStore))
    assert threshold is not None
    notes: list = [
        "DST: quartz: rules fire as Quartz 2.3.2's CronExpression.getTimeAfter walks them in the trigger's "
        "TimeZone (rows it skips: note dst_lost:quartz): a time in a gap is skipped, a repeated time fires in "
        "its second pass only (0 30 1 * * ? in New York on 2026-11-01: 06:30Z), an hour whose :00 lies in a gap "
        "is skipped whole (0 50 3 * * ? in Chatham: no 2026-09-27 03:50)",
        Difference("a rule calsim does not walk as Quartz (a 5-field cron rule, which Quartz does not read; a quartz: "
                   "rule with one of calsim's documented grammar differences: a day-of-month list with L or W, "
                   "29W..31W, L-28W..L-30W) gets gap='skip', fold='second', Quartz's reading of a gap or a "
                   "repeated time, but not its walk's quirks (an hour whose :00 is in a gap is skipped whole)",
                   topic="DST", example="'50 3 * * *' in Pacific/Chatham: calsim fires 2026-09-27 03:50, "
                   "Quartz's '0 50 3 * * ?' does not"),
        Difference("Africa/Casablanca, Africa/El_Aaiun, Asia/Gaza and Asia/Hebron from 2038: Java 17's "
                   "java.util.TimeZone keeps no transition after 2037, only a zone's recurring rule "
                   "(sun.util.calendar.ZoneInfoFile), so Quartz fires Casablanca and El Aaiun in +01 throughout "
                   "and Gaza and Hebron by the JDK's reading of their recurring EET/EEST rule, where calsim "
                   "follows the tz data's Ramadan changes (to 2086-2087)", topic="tz data",
                   example="'0 0 0 * * ?' in Casablanca, Ramadan 2040: Quartz fires at 23:00+00, calsim at 00:00+00"),
        Difference("a W rule (15W, LW, L-nW) whose weekday's time lies in a gap sends getTimeAfter round for ever: "
                   "the scheduler thread hangs in triggered() at the fire before (whose job then never runs) and "
                   "holds the job store's lock, so no trigger fires again; calsim fires that last time and stops "
                   "this rule only (its later rows: dst_stuck:quartz, reason stuck)", topic="DST",
                   example="'0 30 0 24W * ?' in Africa/Cairo: the 2026-03-24 run is Quartz's last, its job never "
                   "starts; calsim runs it and nothing of this rule after"),
        Difference("a misfire instruction that takes the next fire time after \"now\" (FIRE_ONCE_NOW, DO_NOTHING) with "
                   "now in the first pass of a repeated hour: Quartz's getTimeAfter(now) reads now in the second "
                   "pass and skips that pass's fire times up to it; calsim takes the next time of the trigger's own "
                   "chain", topic="misfire",
                   example="0 */15 * * * ?, New York 2026-11-01, disallow_concurrent 20 min jobs, SMART_POLICY: a run "
                   "at 01:00 EDT (05:00Z) is followed by 01:15 EST (06:15Z) in Quartz, by 01:00 EST in calsim"),
        Difference("DO_NOTHING moves a misfired trigger to its first fire time strictly after now, so a fire time "
                   "met at the same wake-up as misfired ones (on time, or less late than the threshold) is skipped "
                   "too; calsim runs it", topic="misfire",
                   example="*/15, JVM paused 10:30-12:00: Quartz skips 12:00, calsim runs it at 12:00"),
        Difference("job_store='ram': a fire time in the last second before a restart, or exactly at it, still fires "
                   "in Quartz (computeFirstFireTime counts from startTime - 1 s); calsim counts it as missed while "
                   "down", topic="restart", example="*/15, restart at 12:00:00.5: Quartz fires 12:00 at the "
                   "restart, calsim skips it"),
        Difference("the scheduler thread acquires triggers up to 30 s ahead (idleWaitTime): a pause starting less "
                   "than 30 s before a fire time fires it anyway; calsim picks each fire time at its tick",
                   topic="misfire", example="pause from 11:59:45 to 12:10: Quartz fires 12:00 at 12:10 "
                   "without the misfire check"),
        "FIRE_ONCE_NOW runs once at recovery; calsim attributes that run to the newest missed time",
        "only CronTrigger instructions; a SimpleTrigger (fixed ms) is calsim.Every with its own instructions",
        "DST docs: a 2:05 time 'may never occur' on the spring day and a 1:05 time 'may occur twice'; measured, "
        "getTimeAfter never fires the first pass",
    ]
    if disallow_concurrent:
        notes.append(Difference("disallow_concurrent -> 'buffer_one': a blocked trigger waits for the running job; "
                                "if it is then later than misfireThreshold, Quartz applies the misfire instruction, "
                                "calsim runs it", topic="overlap",
                                example="20 min job every 15 min, DO_NOTHING: Quartz runs every 30 min, calsim back "
                                "to back"))
    on_misfire = _QUARTZ_MISFIRE[misfire_instruction]
    overlap: Overlap = "allow"
    if disallow_concurrent:
        overlap = "buffer_all" if misfire_instruction == "IGNORE_MISFIRE_POLICY" else "buffer_one"
    if job_store == "ram" and threshold < 1:
        notes.append(Difference("misfire_threshold_ms < 1: RAMJobStore refuses it (setMisfireThreshold); calsim "
                                "takes it as 0", topic="settings", example="misfire_threshold_ms=0"))
    return Preset(
        name="quartz",
        policy=Policy(catchup=on_misfire if job_store == "jdbc" else "skip", misfire_grace=threshold / 1000,
                      overlap=overlap, limit_edge="late" if job_store == "ram" else "on_time",
                      suspend_catchup=on_misfire, down_is_missed=job_store == "ram"),
        gap="scheduler", fold="scheduler", fallback=("skip", "second"), tick="1s", notes=tuple(notes),
        measured=MEASURED,
        sources=(QUARTZ_CRON, QUARTZ_STORE, QUARTZ_CRONEXPR, QUARTZ_DST, QUARTZ_JOBS,
                 "https://github.com/quartz-scheduler/quartz/issues/51"),
        settings=_settings(misfire_instruction=misfire_instruction, misfire_threshold_ms=misfire_threshold_ms,
                           disallow_concurrent=disallow_concurrent, job_store=job_store),
    )
