"""The ``cronie`` preset (see :mod:`calsim.presets`)."""

from __future__ import annotations

from typing import Literal, get_args

from ..simulation.policy import Policy
from ..errors import check_choice
from ._base import _settings, Preset, Wildcard

__all__ = ["cronie"]

JobKind = Literal["auto", "fixed", "wildcard"]

CRONIE = "https://github.com/cronie-crond/cronie/blob/master/man/cron.8"
CRONIE_SRC = "https://github.com/cronie-crond/cronie/blob/master/src/cron.c"
DEBIAN = "https://manpages.debian.org/bookworm/cron/cron.8.en.html"
CRONSIM = "https://pypi.org/project/cronsim/"


def cronie(*, job_kind: JobKind = "auto") -> Preset:
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
    """
    check_choice("job_kind", job_kind, get_args(JobKind))
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
        "cronsim 2.9 misses a few wildcard times next to Lord Howe's 30-minute changes (its searches jump in "
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
