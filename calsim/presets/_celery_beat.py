"""The ``celery_beat`` preset: Celery beat's ``PersistentScheduler`` (work in progress, issue 29).

Not yet exported from :mod:`calsim.presets`: crontab entries' fire times and
catch-up are measured against Celery 5.7.0 and 5.4.0 themselves
(``tests/presets/test_celery_beat.py`` over the fixtures
``tools/capture_celery.py`` records, ``PersistentScheduler.tick`` on a fake
clock); an interval entry that restarts from its catch-up run, and 5.4's
intervals in local time, need engine rules that are the next step (stated
differences until then).
"""

from __future__ import annotations

import datetime as dt
from typing import Literal, get_args

from ..errors import check_choice
from ..resolution import FoldPolicy, GapPolicy
from ..simulation.policy import Catchup, Policy
from ._base import _seconds, _settings, Difference, Preset, Wildcard

Version = Literal["5.7", "5.4"]
ScheduleFile = Literal["kept", "lost"]

MEASURED = "Celery 5.7.0 and 5.4.0 (kombu of each), PersistentScheduler.tick on a time-machine clock"
CELERY_BEAT = "celery/beat.py (Scheduler.tick, is_due, PersistentScheduler.setup_schedule)"
CELERY_CRONTAB = "celery/schedules.py (crontab.remaining_estimate, is_due; beat_cron_starting_deadline)"
CELERY_DOC = "https://docs.celeryq.dev/en/stable/userguide/periodic-tasks.html"


def celery_beat(*, version: Version = "5.7", cron_starting_deadline: object = None,
                schedule_file: ScheduleFile = "kept") -> Preset:
    """Celery beat (``celery beat``, the default ``PersistentScheduler``), crontab entries in ``app.conf.timezone``.

    ==========================  ==========================================  ====================================
    Celery                      calsim                                      source
    ==========================  ==========================================  ====================================
    crontab in a gap            5.7: shifted (``gap="shift"``: 02:30 ->     5.7 ``schedules.py:614-673``
                                03:30 EDT); 5.4: the gap's end (03:00)      (``remaining_delta``),
                                                                            ``utils/time.py:236-307``; 5.4
                                                                            ``utils/time.py:201-233``, ``beat.py:41``
    crontab in a fold           the first pass only (``fold="first"``):     ``schedules.py:633-651`` (the next
                                ``crontab(minute=0)`` never runs 01:00 EST  hour after ``last_run_at.hour``)
    every-hour crontab (5.7)    skips the gap (``Wildcard("every_hour",     as above: 02:30 shifted is 03:30,
                                "skip", "first")``)                         which runs once
    beat down, file ``kept``    the latest missed run once at the restart   ``beat.py:519-533`` (the shelve's
                                (``catchup="latest"``)                      ``last_run_at``), ``schedules.py:686-
                                                                            723`` (``is_due``), ``beat.py:424-426``
    ``cron_starting_deadline``  ``max_lateness`` of crontab entries: a      5.7 ``schedules.py:706-719``, 5.4
                                missed run older than it is not run at the  ``:639-660`` (read in
                                restart                                     ``crontab.is_due`` only)
    beat down, file ``lost``    nothing missed runs (``catchup="skip"``)    ``beat.py:133`` (a new entry's
                                                                            ``last_run_at`` is now)
    interval entry              ``calsim.Every`` (5.4: on the local clock,  ``schedules.py:157-204``
    (``schedule(timedelta)``)   ``clock="local"``), counted from the last   (``last_run_at + run_every``);
                                run sent (``interval_from="last_run"``):
                                after beat was down, from the catch-up at   a lost file: ``ScheduleEntry``
                                the restart; file lost: from the restart    ``last_run_at`` = now
                                (``"restart"``)
    ==========================  ==========================================  ====================================

    Parameters (keyword-only)
    -------------------------
    version : {"5.7", "5.4"}, default "5.7"
        The Celery release (its crontab DST walk and interval clock differ).
    cron_starting_deadline : duration or None, default None
        ``beat_cron_starting_deadline`` (seconds).
    schedule_file : {"kept", "lost"}, default "kept"
        Whether beat restarts with its ``celerybeat-schedule`` shelve file.

    >>> p = celery_beat()
    >>> p.gap, p.fold, p.policy.catchup
    ('shift', 'first', 'latest')
    >>> celery_beat(version="5.4", schedule_file="lost").gap, celery_beat(schedule_file="lost").policy.catchup
    ('next_valid', 'skip')
    """
    check_choice("version", version, get_args(Version))
    check_choice("schedule_file", schedule_file, get_args(ScheduleFile))
    deadline = _seconds("cron_starting_deadline", cron_starting_deadline, none=True)
    gap: GapPolicy = "shift" if version == "5.7" else "next_valid"
    fold: FoldPolicy = "first"
    catchup: Catchup = "latest" if schedule_file == "kept" else "skip"
    notes: list = [
        Difference("beat does not run a crontab due at the instant it starts", topic="catch-up",
                   example="beat started at 00:00 with crontab(minute=0): Celery's first run 01:00, calsim 00:00"),
    ]
    if version == "5.4" and deadline is not None:
        notes.append(Difference("Celery 5.4 with beat_cron_starting_deadline walks from the last run to now in "
                                "steps of its remaining time before each crontab send: every send is seconds "
                                "late (a CPU burst); calsim sends on the instant", topic="catch-up",
                                example="30 2 * * *, deadline 300 s: Celery 5.4 07:30:03Z, calsim 07:30:00Z"))
    if version == "5.4":
        notes.append(Difference("Celery 5.4 counts an interval on the local clock (as calsim's Every(..., "
                                "clock='local') here); a send due in a spring gap goes at beat's first wake-up "
                                "after the jump (up to beat_max_loop_interval, 300 s, later), calsim's at the "
                                "gap's end, and the interval then counts from that send", topic="DST",
                                example="hourly, Adelaide spring day: Celery 5.4 01:30, 03:0x, 04:0x; calsim "
                                "01:30, 03:00, 04:00"))
    return Preset(
        name="celery_beat",
        policy=Policy(catchup=catchup, max_lateness=None if deadline is None else dt.timedelta(microseconds=deadline),
                      interval_from="last_run" if schedule_file == "kept" else "restart"),
        gap=gap, fold=fold, tick="1s", notes=tuple(notes),
        sources=(CELERY_DOC, CELERY_BEAT, CELERY_CRONTAB),
        settings=_settings(version=version, cron_starting_deadline=cron_starting_deadline,
                           schedule_file=schedule_file),
        wildcard=Wildcard("every_hour", "skip", "first") if version == "5.7" else None,
        kind_policy=(("every", (("max_lateness", None),)),),  # (the deadline is read by crontab.is_due only)
        every_clock="local" if version == "5.4" else None,
        measured=MEASURED,
    )
