"""The ``cronie`` preset (see :mod:`calsim.presets`)."""

from __future__ import annotations

import dataclasses
import datetime as dt
from typing import Any, Literal, get_args

from ..resolution import FoldPolicy, GapPolicy
from ..simulation.policy import Policy
from ..errors import check_choice
from ._base import _settings, Difference, Preset, Wildcard

__all__ = ["cronie"]

JobKind = Literal["auto", "fixed", "wildcard"]

CRONIE = "https://github.com/cronie-crond/cronie/blob/master/man/cron.8"
CRONIE_SRC = "https://github.com/cronie-crond/cronie/blob/master/src/cron.c"
DEBIAN = "https://manpages.debian.org/bookworm/cron/cron.8.en.html"
CRONSIM = "https://pypi.org/project/cronsim/"
MEASURED = "Debian cron 3.0pl1-162 under libfaketime 0.9.10"

# A jump of J wall minutes (cron.c: timeDiff = the wake-up's minute - the last minute done) is caught up for
# every job if J <= 5, for fixed-time jobs if J <= 180. After a suspend of L seconds the daemon wakes when the
# rest of its sleep to second 1 of the next minute runs out, so J = 1 + floor((L + 1 s) / 1 min) whatever
# second the suspend began at: J <= 5 iff L < 299 s, J <= 180 iff L < 10799 s (off a DST change).
_US = dt.timedelta(microseconds=1)
FIXED_LIMIT = dt.timedelta(seconds=10799) - _US
WILD_LIMIT = dt.timedelta(seconds=299) - _US


def cronie(*, job_kind: JobKind = "auto") -> Preset:
    """cron (cronie, Debian/Vixie) as the daemon runs, measured on Debian's cron under libfaketime.

    ============================  ==================================================  ==============
    cron behaviour                calsim                                              source
    ============================  ==================================================  ==============
    fixed-time job (no ``*``      ``gap="next_valid"`` (run right after the           CRONIE, DEBIAN
    first in minute or hour)      change), ``fold="first"`` (not run twice)
    wildcard job (minute or       ``gap="skip"``, ``fold="both"`` (follows the new    DEBIAN, CRONSIM
    hour starts with ``*``)       time: runs in both passes of a repeated hour)
    restart                       ``catchup="skip"`` (no catch-up; anacron is the     CRONIE_SRC
                                  add-on), ``recovery_wake=False``: the minute
                                  crond starts in is skipped (``cron.c``
                                  ``set_time``, then ``cron_sleep(timeRunning + 1)``)
    wakes each minute; a job      ``tick="1min"``, ``misfire_grace="1min"``,          CRONIE_SRC
    runs in its minute            ``limit_edge="late"`` (a job of the minute crond
                                  wakes in is on time; an earlier one is missed)
    suspend: sleeps on            ``suspend_wake="sleep_end"``: crond wakes when      CRONIE_SRC
    CLOCK_MONOTONIC               the rest of its interrupted ``sleep()`` runs out
                                  (up to a minute after the resume)
    suspend of L (a clock jump    fixed-time: every missed minute runs if             CRONIE_SRC
    of J = 1 + L // 1min wall     L < 2 h 59 min 59 s (J <= 180); wildcard: if
    minutes on waking)            L < 4 min 59 s (J <= 5), else only the current
                                  minute (``suspend_catchup="all"``,
                                  ``suspend_limit`` just under those lengths)
    overlap                       ``overlap="allow"``
    ============================  ==================================================  ==============

    Measured against Debian's ``cron`` 3.0pl1-162 itself (Vixie cron with the
    time-change code cronie shares), run under libfaketime by
    ``tools/capture_cron.py`` over both 2026 DST days of New York, Berlin,
    Dublin (negative DST), Lord Howe, Chatham, Beirut, Cairo, Santiago and
    Sydney, restarts and suspends (tests/presets/test_cronie_daemon.py); the
    remaining differences are the preset's ``notes`` (``presets.differences``).

    Parameters (keyword-only)
    -------------------------
    job_kind : {"auto", "fixed", "wildcard"}, default "auto"
        ``"auto"`` decides per schedule, as cron's ``MIN_STAR``/``HR_STAR``
        flags and cronsim do (``*/2`` starts with ``*``, so it is wildcard);
        ``"fixed"`` or ``"wildcard"`` force one kind. Non-cron rules count
        as fixed-time.

    Sources: https://github.com/cronie-crond/cronie/blob/master/man/cron.8 (CRONIE),
    https://manpages.debian.org/bookworm/cron/cron.8.en.html (DEBIAN), https://pypi.org/project/cronsim/ (CRONSIM).

    >>> import calsim
    >>> from calsim import presets
    >>> p = presets.cronie()
    >>> [p.dst_for(calsim.Schedule("j", "UTC", "2026-01-01T00:00", e)) for e in ("30 2 * * *", "*/30 * * * *")]
    [('next_valid', 'first'), ('skip', 'both')]
    >>> p.policy.suspend_wake
    'sleep_end'
    """
    check_choice("job_kind", job_kind, get_args(JobKind))
    fixed: tuple[GapPolicy, FoldPolicy] = ("next_valid", "first")
    wild: tuple[GapPolicy, FoldPolicy] = ("skip", "both")
    gap, fold = wild if job_kind == "wildcard" else fixed
    notes = _NOTES
    wild_policy = (("suspend_limit", WILD_LIMIT),)  # what differs for wildcard jobs (the Wildcard below)
    policy = Policy(catchup="skip", overlap="allow", misfire_grace="1min", limit_edge="late",
                    recovery_wake=False, suspend_catchup="all", suspend_limit=FIXED_LIMIT,
                    suspend_wake="sleep_end")
    if job_kind == "wildcard":
        changes: dict[str, Any] = dict(wild_policy)  # Policy's own fields, checked by Policy
        policy = dataclasses.replace(policy, **changes)
    return Preset(
        name="cronie",
        policy=policy,
        gap=gap, fold=fold, tick="1min", notes=tuple(notes),
        sources=(CRONIE, CRONIE_SRC, DEBIAN, CRONSIM),
        settings=_settings(job_kind=job_kind),
        wildcard=Wildcard("minute_or_hour_starred", "skip", "both", wild_policy) if job_kind == "auto" else None,
        measured=MEASURED,
    )


_NOTES: tuple = (  # (str and Difference: Preset keeps the text, differences() the Difference)
    Difference(
        "a suspend across a DST change: crond counts its clock jump J in wall minutes (cron.c timeDiff: "
        "J = 1 + L // 1min for a suspend of L, plus the change forward, minus it back) and catches up every job if "
        "1 < J <= 5, fixed-time jobs if 5 < J <= 180, nothing missed otherwise; calsim decides by the suspend's "
        "real length L, which gives the same J away from a change",
        topic="suspend",
        example="America/New_York, suspend 06:59Z-07:02Z on 2026-03-08 (3 min across the spring change, J = 64): "
                "crond runs '* * * * *' for 03:02 EDT only, calsim also catches 03:00 and 03:01 up at 07:02:00Z"),
    Difference(
        "a suspend ending inside (or just before) a repeated hour, after the first pass of a fixed-time job's wall "
        "time: crond never saw that wall time, so it runs it when the wall clock shows it again, in the second "
        "pass; calsim (fold='first') runs the first pass at its wake-up, or skips it after a long suspend",
        topic="DST",
        example="America/New_York, suspend 05:02Z-06:02Z on 2026-11-01 (01:02 EDT to 01:02 EST): '45 1 * * *' "
                "runs at 06:45:01Z (01:45 EST) in crond, at 06:02:00Z in calsim"),
    Difference(
        "a suspend beginning inside the second pass of a repeated hour: crond's last minute done is still the "
        "end of the first pass (it holds its clock there until the wall clock passes it again), so its jump J is "
        "counted from there: zero or negative (nothing missed runs) or small; calsim catches the suspend up by "
        "its real length",
        topic="suspend",
        example="America/New_York, suspend 06:10:30Z-06:13:30Z on 2026-11-01 (in 01:xx EST): '* * * * *' for "
                "01:11-01:13 EST is lost in crond (the port of cron.c), caught up at 06:14:00Z by calsim",
        measured="the cronie port (tests/oracles/cronie.py), which reproduces every run of the daemon's fixtures"),
    Difference(
        "a suspend ending exactly at a spring-forward change with a jump of more than 180 wall minutes: crond "
        "runs only the jobs of its resume minute, so a fixed-time job's gap time is lost; calsim moves the gap "
        "time to the change (next_valid), which is the resume instant: on time, so it runs",
        topic="DST",
        example="America/New_York, suspend 04:00Z-07:00Z on 2026-03-08: '30 2 * * *' is lost in crond, calsim "
                "runs it at 07:00:00Z"),
    Difference(
        "a restart before or inside the second pass of a repeated hour: the new crond has no memory of the first "
        "pass, so a fixed-time job runs again at its wall time in the second pass (twice that day if the first "
        "ran before the restart); calsim expands fixed-time jobs with fold='first' and runs the first pass only",
        topic="DST",
        example="America/New_York, down 05:15Z-06:15Z on 2026-11-01: '45 1 * * *' runs at 06:45:01Z (01:45 EST) in "
                "crond; calsim skips 01:45 EDT (due in the outage) and has no second pass"),
    Difference(
        "several gap times of one fixed-time job ('0,30 2 * * *') each run after a spring-forward change in crond "
        "(one catch-up minute each); calsim keeps one instant and marks the others merged_into (cronsim yields one)",
        topic="DST",
        example="America/New_York, 2026-03-08: '0,30 2 * * *' runs twice at 07:00:02Z in crond, once at 07:00:00Z "
                "in calsim"),
    Difference(
        "after a clock jump crond runs the missed minutes one after another, sleeping after each minute that "
        "started a job until one of those jobs ends or 10 s pass (cron.c sleep(10), cut short by SIGCHLD); calsim "
        "starts the whole backlog at the wake-up. With jobs of a few milliseconds the backlog is over at once; "
        "jobs of 10 s or more start the k-th minute caught up 10 s x (k - 1) later",
        topic="catch-up",
        example="America/New_York, suspend 05:02Z-08:01Z on 2026-03-01 (179 min): crond starts the 10 minutes of "
                "fixed-time jobs it catches up within 3 s of 08:01:01Z (the fixtures' jobs end in ~0.3 s), calsim "
                "all at 08:01:00Z"),
    Difference(
        "Debian's cron has no CRON_TZ: every job runs in the daemon's TZ; calsim uses each schedule's zone (as "
        "cronie's CRON_TZ does)",
        topic="zones", example="a schedule in Europe/Berlin on a daemon with TZ=America/New_York"),
    Difference(
        "clock changes of 3 h or more (a zone skipping a day) are treated by crond as corrections (nothing run "
        "for the skipped interval); calsim and cronsim still run fixed-time jobs right after such a change",
        topic="DST", example="Pacific/Apia 2011-12-30 (skipped): '0 12 * * *' runs at the change in calsim",
        measured="cronie src/cron.c (read, not recorded: no 2011 change in the fixtures)"),
    "cronie's 'granularity > 1 h' wording would make '0 */2 * * *' fixed-time; the code flags (entry.c MIN_STAR, "
    "HR_STAR) and cronsim treat it as wildcard, as calsim does",
    "cronsim 2.9 misses a few wildcard times next to Lord Howe's 30-minute changes (its searches jump in real "
    "time); calsim runs them, as cron's minute-by-minute matching does (the daemon's fixtures agree)",
)
