"""The ``apscheduler`` preset (see :mod:`calsim.presets`)."""

from __future__ import annotations

from typing import Literal, get_args

from ..simulation.policy import Catchup, Policy
from ..errors import check_choice
from ._base import _bad, _bool, _int, _settings, Difference, Preset

__all__ = ["apscheduler"]

DstGap = Literal["code", "docs"]
JobStore = Literal["memory", "persistent"]

APS_BASE = "https://github.com/agronholm/apscheduler/blob/3.x/apscheduler/schedulers/base.py"
APS_GUIDE = "https://apscheduler.readthedocs.io/en/3.x/userguide.html"
APS_CRON = "https://apscheduler.readthedocs.io/en/3.x/modules/triggers/cron.html"
APS_HISTORY = "https://github.com/agronholm/apscheduler/blob/3.x/docs/versionhistory.rst"
APS_EXEC = "https://github.com/agronholm/apscheduler/blob/3.x/apscheduler/executors/base.py"
APS_TRIGGER = "https://github.com/agronholm/apscheduler/blob/3.x/apscheduler/triggers/cron/__init__.py"
MEASURED = ("APScheduler 3.11.3 (CronTrigger.get_next_fire_time; BaseScheduler._process_jobs, BaseExecutor and "
            "run_job on a fake clock), CPython 3.11 zoneinfo")
_DST = "DST (what APScheduler does)"


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
    ``max_instances`` (1)     ``max_active``, with ``overlap="skip"``: a fire      APS_GUIDE,
                              time that finds that many instances going is        APS_EXEC
                              skipped, not queued
    ``jitter`` (s)            ``jitter``                                           APS_HISTORY
    cron rules                the ``CronTrigger`` firing the same times            APS_TRIGGER
                              (``dialect="apscheduler"``: an ``apscheduler:``
                              rule; weekdays as names, so calsim's 0 = Sunday
                              stays Sunday); both day fields restricted (cron's
                              "either"): an ``OrTrigger`` of the two; ``LW``,
                              ``nW``: refused (no ``CronTrigger`` expression)
    DST (``dst_gap="code"``)  as 3.11.3's ``CronTrigger.get_next_fire_time``       APS_TRIGGER,
                              walks the zone (``gap="scheduler"``,                 measured
                              ``fold="scheduler"``): a gap time the walk *sets*
                              a field to runs shifted by the gap (02:30 at
                              03:30 EDT: a ``dst_extra:apscheduler`` row), the
                              first of that hour only; one it reaches by
                              counting is skipped; Chatham's second pass is
                              lost (``dst_lost:apscheduler``); rules that are
                              no ``CronTrigger``: ``gap="shift"``,
                              ``fold="both"`` (``fallback``)
    DST (``"docs"``)          ``gap="skip"``, ``fold="both"`` (the docs: a gap     APS_CRON
                              time does not run, a repeated one may run twice)
    ========================  ===================================================  ===========

    Measured against the real code: APScheduler 3.11.3 (the installed wheel)
    on CPython's ``zoneinfo`` reading calsim's tz release. Fire times are its
    ``CronTrigger.get_next_fire_time``, ported in
    :mod:`calsim.rules.apscheduler_cron` and compared over every 2026
    transition of eleven zones (``tests/presets/test_presets.py``); catch-up, grace,
    coalescing and instances are its ``BaseScheduler._process_jobs``,
    ``BaseExecutor`` and ``run_job`` on a fake clock
    (``tests/presets/test_apscheduler.py``).
    ``calsim.presets.differences(preset)`` lists what calsim does not reproduce.

    Parameters (keyword-only, APScheduler's job options)
    ----------------------------------------------------
    misfire_grace_time : seconds > 0 or None, default 1
    coalesce : bool, default True
    max_instances : int >= 1, default 1
    jitter : seconds >= 0 or None, default None
    dst_gap : {"code", "docs"}, default "code"
        ``"code"``: fire times as the installed APScheduler's ``CronTrigger``
        walks them; ``"docs"``: as its documentation describes them.
    jobstore : {"memory", "persistent"}, default "memory"

    Sources: https://github.com/agronholm/apscheduler/blob/3.x/apscheduler/schedulers/base.py (APS_BASE),
    https://apscheduler.readthedocs.io/en/3.x/userguide.html (APS_GUIDE),
    https://apscheduler.readthedocs.io/en/3.x/modules/triggers/cron.html (APS_CRON),
    https://github.com/agronholm/apscheduler/blob/3.x/docs/versionhistory.rst (APS_HISTORY),
    https://github.com/agronholm/apscheduler/blob/3.x/apscheduler/executors/base.py (APS_EXEC),
    https://github.com/agronholm/apscheduler/blob/3.x/apscheduler/triggers/cron/__init__.py (APS_TRIGGER).

    >>> import calsim
    >>> from calsim import presets
    >>> p = presets.apscheduler()
    >>> p.policy.suspend_catchup, p.policy.catchup, p.policy.max_lateness_us, p.policy.overlap, p.gap, p.dialect
    ('latest', 'skip', 1000000, 'skip', 'scheduler', 'apscheduler')
    >>> job = p.apply(calsim.Schedule("j", "America/New_York", "2026-03-01T00:00", "30 2 * * *"))
    >>> job.rule
    "apscheduler:hour='2' minute='30' second='0'"
    >>> f = calsim.expand(job, "2026-03-08T05:00Z", "2026-03-09T05:00Z", release="2026f")
    >>> [(str(r["nominal_local"]), str(r["due_utc"]), r["notes"]) for r in f.iter_rows(named=True)]
    [('2026-03-08 02:30:00', 'None', ['dst_gap_skipped']), ('2026-03-08 03:30:00', '2026-03-08 07:30:00+00:00', \
['dst_extra:apscheduler'])]
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
    notes: list = [
        Difference("a run going when the machine suspends is frozen with it in APScheduler (it ends that much "
                   "later); calsim runs keep their wall-clock duration", topic="runs",
                   example="runs of 30 min, suspended 10 min into one for 2 h: APScheduler's ends 2 h 20 min after "
                           "its start, calsim's after 30 min"),
        Difference("a run going when the process goes down (Outage kind 'down') dies with it in APScheduler (the "
                   "executor's threads), so the next fire time finds no instance going; calsim lets the run finish",
                   topic="runs", example="hourly runs of 80 min, down 10 min into one: APScheduler runs the next "
                                         "hour, calsim skips it (overlap)"),
        Difference("a fire time refused because its instances are busy is reported as max_instances in APScheduler "
                   "even when it is also past the grace; calsim marks it expired", topic="catch-up",
                   example="runs of 80 min hourly, back 1.5 s late while one runs: max_instances vs expired"),
        Difference("after a suspend, BlockingScheduler/BackgroundScheduler wake late: their wait runs on "
                   "CLOCK_MONOTONIC, which stops while the machine sleeps (agronholm/apscheduler#794); calsim wakes "
                   "at the resume instant", topic="catch-up",
                   example="a 02:30 job, asleep 01:00-01:30: APScheduler wakes 03:00 and misses it, calsim runs it"),
        Difference("misfire: with the defaults (1 s grace) a run delayed by downtime is dropped, even the coalesced "
                   "one; calsim marks them all 'expired', APScheduler reports the newest as missed and coalesces the "
                   "rest", topic="catch-up",
                   example="*/15, back 1.5 s after a fire time: the four older times coalesced vs expired"),
        Difference("jitter: APScheduler draws it at random and does not cap it at the next run time; calsim's is "
                   "deterministic per occurrence and capped", topic="jitter"),
        Difference("cron: a cron rule fires as the CronTrigger with the same times (apscheduler: rule, weekdays as "
                   "names, so calsim's 0 = Sunday stays Sunday: CronTrigger.from_crontab reads 0 as Monday in 3.x; "
                   "write 'apscheduler:<crontab>' for that reading); both day fields restricted (cron's 'either') fire "
                   "as an OrTrigger of the day-of-month and the day-of-week CronTrigger; LW and nW have no CronTrigger "
                   "expression and are refused", topic="grammar",
                   example="0 2 * * 1: Mondays; CronTrigger.from_crontab('0 2 * * 1') fires on Tuesdays"),
        "rules that are no CronTrigger (RRULE, Every, Window, OnCalendar=) keep calsim's rule and gap='shift', "
        "fold='both' (what a CronTrigger that sets the hour does, without the walk's other DST quirks)",
    ]
    if dst_gap == "code":
        notes += [
            Difference("reproduced: a gap time that CronTrigger sets a field to (the hour, or a day at its first "
                       "hour) runs shifted by the gap, as its own row (dst_extra:apscheduler; the gap time's row is "
                       "dst_gap_skipped): the field is set without normalising, so the offset before the gap applies; "
                       "only the first such time of the hour runs, the walk counts past the rest", topic=_DST,
                       example="hour=3, minute='*/30' in Europe/Helsinki, 2026-03-29: 03:00 runs at 04:00 EEST, "
                               "03:30 does not"),
            Difference("reproduced: a gap time that CronTrigger reaches by counting (an hour or a day incremented in "
                       "UTC: every-hour rules; hour=0 on a day whose midnight is a gap in Beirut, Cairo, Santiago, "
                       "Havana) is skipped", topic=_DST, example="hour=0, minute=0 in Asia/Beirut: no run 2026-03-29"),
            Difference("reproduced: after Chatham's 03:45 -> 02:45 change the walk sets the minute past the repeated "
                       "span, so its second pass does not run (dst_lost:apscheduler)", topic=_DST,
                       example="minute='*/15' in Pacific/Chatham, 2026-04-05: 02:45-03:30 run once"),
            Difference("a shifted gap time that is also a real time is returned twice by CronTrigger when the "
                       "scheduler asks at exactly that fire time (now equal to it to the microsecond, as a fake "
                       "clock wakes), and with coalesce=False runs twice; a scheduler whose clock has moved on gets "
                       "it once, as calsim fires it", topic=_DST,
                       example="hour='2-4', minute=15 in America/New_York, 2026-03-08: 02:15 shifted is 03:15 EDT"),
        ]
    else:
        notes.append(Difference(
            "dst_gap='docs': the documented behaviour (a gap time does not run, a repeated one runs in both passes); "
            "APScheduler 3.11.3's CronTrigger runs a gap time under a set hour shifted and loses some times next to "
            "a change (dst_gap='code' fires as it walks)", topic="DST",
            example="hour=2, minute=30 in America/New_York, 2026-03-08: APScheduler runs 03:30 EDT, calsim nothing"))
    if jobstore == "memory":
        notes.append(Difference(
            "jobstore='memory': a restart (Outage kind 'down') re-adds the job from its next fire time at or after the "
            "restart; a fire at most one tick before the restart still runs in calsim", topic="catch-up",
            example="*/15, down until 0.6 s after a fire time: APScheduler never sees it, calsim runs it"))
    after_suspend: Catchup = "latest" if coalesce else "all"
    after_down: Catchup = after_suspend if jobstore == "persistent" else "skip"
    code = dst_gap == "code"
    return Preset(
        name="apscheduler",
        policy=Policy(catchup=after_down, max_lateness=misfire_grace_time,
                      overlap="skip", max_active=max_instances, jitter=jitter or None,
                      backlog="at_once" if coalesce else "in_turn",
                      suspend_catchup=after_suspend),
        gap="scheduler" if code else "skip", fold="scheduler" if code else "both", tick="1s", notes=tuple(notes),
        sources=(APS_BASE, APS_GUIDE, APS_CRON, APS_HISTORY, APS_EXEC, APS_TRIGGER,
                 "https://github.com/agronholm/apscheduler/issues/296"),
        settings=_settings(misfire_grace_time=misfire_grace_time, coalesce=coalesce, max_instances=max_instances,
                           jitter=jitter, dst_gap=dst_gap, jobstore=jobstore),
        measured=MEASURED, dialect="apscheduler", fallback=("shift", "both"),
    )
