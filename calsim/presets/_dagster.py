"""The ``dagster`` preset: Dagster 1.13's schedule daemon (work in progress, issue 29).

Not yet exported from :mod:`calsim.presets`: its fire times and catch-up are
measured against Dagster 1.13.29 itself (``tests/presets/test_dagster.py``
over the fixtures ``tools/capture_dagster.py`` records, the daemon's own tick
function with a real instance); the engine rule for Dagster's DST repair that
only acts on changes at 01:00-03:59 local is the next step (a stated
difference until then).
"""

from __future__ import annotations

from ..simulation.policy import Policy
from ._base import _int, _settings, Difference, Preset, Wildcard

MEASURED = "Dagster 1.13.29 (dagster-shared 1.13.29, pytz 2026.6)"
DG_SCHEDULES = "dagster/_utils/schedules.py:95-146 (apply_fold_and_post_transition), 26 (DAYLIGHT_SAVINGS_HOURS)"
DG_DAEMON = "dagster/_scheduler/scheduler.py:637-642 (tick_times[-1:] before the max_catchup_runs cut)"
DG_SNAP = "dagster/_core/remote_representation/external_data.py:342 (partition_set_name=None)"
DG_DOC = "https://docs.dagster.io/guides/automate/schedules"


def dagster(*, max_catchup_runs: int = 5) -> Preset:
    """Dagster 1.13: a ``ScheduleDefinition(cron_schedule=..., execution_timezone=...)`` run by the daemon.

    ====================  =============================================  =========================================
    Dagster               calsim                                         source (Dagster 1.13.29)
    ====================  =============================================  =========================================
    a time in a gap       the first valid time after the gap             ``_utils/schedules.py`` 113-129
                          (``gap="next_valid"``: 02:00 and 02:30 both    (``apply_post_transition``)
                          run at 03:00 EDT)
    a time in a fold      the standard-time pass (``fold="second"``)     ``_utils/schedules.py`` 100-110
                                                                         (``_apply_fold``: ``fold=1``)
    a rule of every hour  skips the gap, runs both passes                ``_utils/schedules.py`` 152-240
                          (``Wildcard("every_hour", "skip", "both")``)   (one real hour per tick)
    after an outage       the newest missed tick only                    ``_scheduler/scheduler.py`` 637-642
                          (``catchup="latest"``)
    ``max_catchup_runs``  accepted, without effect: a schedule's snap    ``external_data.py`` 342
                          never has a partition set, so the daemon
                          keeps ``tick_times[-1:]`` before this cut
    ====================  =============================================  =========================================

    Parameters (keyword-only)
    -------------------------
    max_catchup_runs : int >= 0, default 5
        Accepted and kept in ``settings``, without effect: Dagster 1.13's
        daemon launches only the newest tick after an outage, whatever its
        value (``ScheduleSnap.from_def`` never sets a partition set).

    >>> p = dagster()
    >>> p.gap, p.fold, p.policy.catchup
    ('next_valid', 'second', 'latest')
    """
    _int("max_catchup_runs", max_catchup_runs, 1, 2**31)
    notes: list = [
        "max_catchup_runs has no effect in Dagster 1.13 (a ScheduleDefinition's snap has no partition set, so "
        "the daemon launches only the newest missed tick); accepted and recorded as given",
        Difference("Dagster repairs a gap or fold time only when the change is at 01:00-03:59 local and on the "
                   "hour (DAYLIGHT_SAVINGS_HOURS); calsim applies next_valid/second at every change",
                   topic="DST", example="30 0 * * * in America/Santiago on the spring day: Dagster 01:30 new "
                   "time, calsim 01:00; 30 23 * * * on its fall day: Dagster the first pass, calsim the second"),
    ]
    return Preset(
        name="dagster",
        policy=Policy(catchup="latest"),
        gap="next_valid", fold="second", tick="30s", notes=tuple(notes),
        sources=(DG_DOC, DG_SCHEDULES, DG_DAEMON, DG_SNAP),
        settings=_settings(max_catchup_runs=max_catchup_runs),
        wildcard=Wildcard("every_hour", "skip", "both"),
        measured=MEASURED,
    )
