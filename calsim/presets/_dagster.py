"""The ``dagster`` preset: Dagster 1.13's schedule daemon.

Measured against Dagster 1.13.29 itself (``tests/presets/test_dagster.py``
over the fixtures ``tools/capture_dagster.py`` records: its tick iterator and
the daemon's own tick function with a real instance).
"""

from __future__ import annotations

from ..resolution import ByLocalHour
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
    a time in a gap       at 01:00-03:59 local: the first valid time     ``_utils/schedules.py`` 113-129
                          after the gap (02:00 and 02:30 both run at     (``apply_post_transition``), 26
                          03:00 EDT); at other hours the pre-change      (``DAYLIGHT_SAVINGS_HOURS``)
                          offset (Santiago 00:30 runs at 01:30):
                          ``ByLocalHour((1, 2, 3), inside="next_valid",
                          outside="shift")``
    a time in a fold      at 01:00-03:59 the standard-time pass, else    ``_utils/schedules.py`` 100-110
                          the first (``ByLocalHour((1, 2, 3),            (``_apply_fold``: ``fold=1``)
                          inside="second", outside="first")``)
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
    >>> p.gap.inside, p.gap.outside, p.fold.inside, p.policy.catchup
    ('next_valid', 'shift', 'second', 'latest')
    """
    _int("max_catchup_runs", max_catchup_runs, 1, 2**31)
    notes: list = [
        "max_catchup_runs has no effect in Dagster 1.13 (a ScheduleDefinition's snap has no partition set, so "
        "the daemon launches only the newest missed tick); accepted and recorded as given",
        Difference("Dagster's repair assumes a change on the hour: Pacific/Chatham (02:45 -> 03:45) runs a 03:15 "
                   "job at 04:00 and 02:45/02:50 at 02:00 +12:45, before the change; calsim at 03:45 and the "
                   "gap's end", topic="DST", example="15 3 * * * in Pacific/Chatham on the spring day: Dagster "
                   "04:00 +13:45, calsim 03:45 +13:45"),
        Difference("an every-hour rule in Australia/Lord_Howe (30-minute changes) steps one real hour from the "
                   "daemon's first tick, so after a change it runs at :30 (or :00) until the next; calsim keeps "
                   "the wall minute", topic="DST", example="0 * * * * in Lord Howe after the October change: "
                   "Dagster 03:30, 04:30, ...; calsim 03:00, 04:00"),
    ]
    return Preset(
        name="dagster",
        policy=Policy(catchup="latest"),
        gap=ByLocalHour((1, 2, 3), inside="next_valid", outside="shift"),
        fold=ByLocalHour((1, 2, 3), inside="second", outside="first"), tick="30s", notes=tuple(notes),
        sources=(DG_DOC, DG_SCHEDULES, DG_DAEMON, DG_SNAP),
        settings=_settings(max_catchup_runs=max_catchup_runs),
        wildcard=Wildcard("every_hour", "skip", "both"),
        measured=MEASURED,
    )
