"""The ``airflow`` preset: Apache Airflow 3.x timetables and its scheduler's catch-up (work in progress).

Not yet exported from :mod:`calsim.presets` (issue 29): the fire times and
the catch-up of the cron timetables below are measured against Airflow 3.3.2
itself (``tests/presets/test_airflow.py`` over the fixtures that
``tools/capture_airflow.py`` records); the engine rules the other settings
need (a run due at its data interval's end, the stale stored next run) are
the next step, and until they exist those settings are refused, not
approximated.
"""

from __future__ import annotations

from typing import Literal, get_args

from ..errors import PolicyError, check_choice
from ..simulation.policy import Policy
from ._base import _bool, _int, _settings, Difference, Preset, Wildcard

Timetable = Literal["cron_trigger", "cron_data_interval", "delta_trigger", "delta_data_interval"]
NextRun = Literal["stored", "recomputed"]

MEASURED = "Apache Airflow 3.3.2 (apache-airflow-core 3.3.2, task SDK 1.3.2, croniter 7.0.0, pendulum 3.3.0)"
AF_TIMETABLES = "https://airflow.apache.org/docs/apache-airflow/3.3.2/authoring-and-scheduling/timetable.html"
AF_CRON = "airflow/timetables/trigger.py (CronTriggerTimetable), airflow/timetables/_cron.py (CronMixin)"
AF_CATCHUP = "airflow/serialization/definitions/dag.py:404-461 (_time_restriction, next_dagrun_info)"
AF_ISSUE = "https://github.com/apache/airflow/issues/30195"
# The timetables whose runs calsim can place today: a data-interval run is due at its interval's end, and an
# engine rule for that is issue 29's next step.
_READY = ("cron_trigger", "delta_trigger")


def airflow(*, timetable: Timetable = "cron_trigger", catchup: bool = False, max_active_runs: int = 16,
            next_run: NextRun = "recomputed") -> Preset:
    """Apache Airflow 3.x: a DAG's ``schedule=`` timetable and its scheduler's catch-up.

    =====================  ===========================================  ==========================================
    Airflow                calsim                                       source (Airflow 3.3.2)
    =====================  ===========================================  ==========================================
    cron ``schedule=``     the cron rule; a fixed hour in a gap runs    ``timetables/_cron.py`` ``_get_next``:
    (``cron_trigger``)     shifted (``gap="shift"``: 02:30 -> 03:30     croniter in the zone, then pendulum
                           EDT), in a fold the second pass              resolves a nonexistent wall forward and a
                           (``fold="second"``); a rule of every hour    repeated one to its later offset;
                           skips the gap and runs both passes           apache/airflow#30195
                           (``Wildcard("every_hour", "skip", "both")``)
    ``timedelta``          ``calsim.Every(delta, anchor=start_date)``:  ``timetables/trigger.py``
    (``delta_trigger``)    elapsed time, never meets a gap              ``DeltaTriggerTimetable``
    ``catchup=False``      ``catchup="latest"``: after an outage the    ``serialization/definitions/dag.py``
                           latest missed run only                       404-418 (``_time_restriction``)
    ``catchup=True``       ``catchup="all"``, ``backlog="at_once"``:    ``jobs/scheduler_job_runner.py``
                           every missed run is created at the restart   2362-2385, 2418-2552
    ``max_active_runs``    ``max_active`` with ``overlap="buffer_all"``  ``models/dag.py`` (queued runs wait)
                           (a run over the limit waits, oldest first)
    =====================  ===========================================  ==========================================

    ``timetable`` other than the two above and ``next_run="stored"`` (the
    scheduler creates the run stored before the outage, then the latest:
    two runs after a ``catchup=False`` outage) raise :class:`PolicyError`
    until the engine has their rules (issue 29).

    >>> p = airflow()
    >>> p.gap, p.fold, p.policy.catchup, p.policy.max_active
    ('shift', 'second', 'latest', 16)
    """
    check_choice("timetable", timetable, get_args(Timetable))
    check_choice("next_run", next_run, get_args(NextRun))
    catchup = _bool("catchup", catchup)
    limit = _int("max_active_runs", max_active_runs, 1, 2**31)
    if timetable not in _READY:
        raise PolicyError(f"timetable: {timetable!r} is not modelled yet (allowed today: "
                          f"{' or '.join(repr(t) for t in _READY)}; a data-interval run is due at its interval's end)")
    if next_run != "recomputed":
        raise PolicyError("next_run: 'stored' is not modelled yet (allowed today: 'recomputed'; the stale stored "
                          "next run adds a second run after a catchup=False outage)")
    notes: list = [
        Difference("a DAG run is created the instant it is due; Airflow's scheduler loop creates it at its next "
                   "loop after that (seconds)", topic="catch-up", example="any rule: calsim 06:30:00, Airflow "
                   "06:30:0x"),
    ]
    return Preset(
        name="airflow",
        policy=Policy(catchup="all" if catchup else "latest", backlog="at_once", overlap="buffer_all",
                      max_active=limit),
        gap="shift", fold="second", tick="1s", notes=tuple(notes),
        sources=(AF_TIMETABLES, AF_CRON, AF_CATCHUP, AF_ISSUE),
        settings=_settings(timetable=timetable, catchup=catchup, max_active_runs=max_active_runs,
                           next_run=next_run),
        wildcard=Wildcard("every_hour", "skip", "both"),
        measured=MEASURED,
    )
