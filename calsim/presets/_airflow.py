"""The ``airflow`` preset: Apache Airflow 3.x timetables and its scheduler's catch-up.

Measured against Airflow 3.3.2 itself (``tests/presets/test_airflow.py`` over
the fixtures ``tools/capture_airflow.py`` records): fire times of the four
timetables and the runs the scheduler creates after an outage, for both
orders of its restart (``next_run``).
"""

from __future__ import annotations

from typing import Literal, get_args

from ..errors import check_choice
from ..simulation.policy import Policy
from ._base import _bool, _int, _settings, Difference, Preset, Wildcard

Timetable = Literal["cron_trigger", "cron_data_interval", "delta_trigger", "delta_data_interval"]
NextRun = Literal["stored", "recomputed"]

MEASURED = "Apache Airflow 3.3.2 (apache-airflow-core 3.3.2, task SDK 1.3.2, croniter 7.0.0, pendulum 3.3.0)"
AF_TIMETABLES = "https://airflow.apache.org/docs/apache-airflow/3.3.2/authoring-and-scheduling/timetable.html"
AF_CRON = "airflow/timetables/trigger.py (CronTriggerTimetable), airflow/timetables/_cron.py (CronMixin)"
AF_CATCHUP = "airflow/serialization/definitions/dag.py:404-461 (_time_restriction, next_dagrun_info)"
AF_ISSUE = "https://github.com/apache/airflow/issues/30195"
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
    data-interval          ``covers="data_interval"``: the run of        ``timetables/interval.py``
    timetables             ``[t_k, t_k+1)`` is due at ``t_k+1`` and      ``_DataIntervalTimetable``
    (``cron_data_          carries it as its window; the first time     (``run_after =
    interval``, ``delta_   after ``start_date`` opens the first         data_interval.end``)
    data_interval``)       interval
    ``next_run="stored"``  ``catchup="earliest_and_latest"`` (with      ``jobs/scheduler_job_runner.py``
                           ``catchup=False``): the next run stored      2507-2533 (``DagModel.next_dagrun``
                           before the outage, then the latest           is created before recomputing)
    ``next_run=            ``catchup="latest"``: the DAG processor      ``dag_processing/collection.py``
    "recomputed"``         re-parsed first and recomputed the next run  635-637
    unpause (``Resume``)   ``on_resume="catch_up"``: the paused         ``serialization/definitions/dag.py``
                           intervals are a backlog under ``catchup``    ``next_dagrun_info``
    ``timedelta`` without  ``interval_from="restart"``: the grid        ``timetables/_delta.py:70-71``
    ``catchup`` after an   restarts at the restart (``_align_to_prev``   (``_align_to_prev(utcnow())``)
    outage (recomputed)    of now is now)
    ``catchup=False``      ``catchup="latest"``: after an outage the    ``serialization/definitions/dag.py``
                           latest missed run only                       404-418 (``_time_restriction``)
    ``catchup=True``       ``catchup="all"``, ``backlog="at_once"``:    ``jobs/scheduler_job_runner.py``
                           every missed run is created at the restart   2362-2385, 2418-2552
    ``max_active_runs``    ``max_active`` with ``overlap="buffer_all"``  ``jobs/scheduler_job_runner.py``
                           (a run over the limit waits, oldest first:   2446-2453, 4090-4105 (creation refused
                           Airflow does not create it until a run of    at the limit), ``models/dagrun.py``
                           the DAG ends; same order, same instants)     764-766 (queued runs by run_after)
    =====================  ===========================================  ==========================================

    ``next_run``: after an outage with ``catchup=False`` the scheduler either
    acts on the next run it stored before it (``"stored"``: two runs, that
    stale one and the latest; the scheduler's first loop got there before
    the DAG processor) or the DAG processor re-parsed the file first
    (``"recomputed"``, default: the latest only; always so when only the
    scheduler was down, as the processor refreshed the stored value).
    Backfills are :class:`calsim.Backfill` events (oldest first, bounded by
    ``max_active_runs``).

    Parameters (keyword-only, the DAG's settings)
    ---------------------------------------------
    timetable : {"cron_trigger", "cron_data_interval", "delta_trigger", "delta_data_interval"}, default "cron_trigger"
        What ``schedule=`` becomes: a cron string is ``"cron_trigger"`` in
        Airflow 3 (``[scheduler] create_cron_data_intervals = False``), a
        ``timedelta`` ``"delta_trigger"``; the data-interval ones are
        ``CronDataIntervalTimetable``/``DeltaDataIntervalTimetable``.
    catchup : bool, default False
        The DAG's ``catchup`` (Airflow 3's default is False).
    max_active_runs : int 1..2**31, default 16
        ``max_active_runs`` (``[core] max_active_runs_per_dag``).
    next_run : {"stored", "recomputed"}, default "recomputed"
        Which process acts first after a restart (see above).

    >>> p = airflow()
    >>> p.gap, p.fold, p.policy.catchup, p.policy.max_active
    ('shift', 'second', 'latest', 16)
    """
    check_choice("timetable", timetable, get_args(Timetable))
    check_choice("next_run", next_run, get_args(NextRun))
    catchup = _bool("catchup", catchup)
    limit = _int("max_active_runs", max_active_runs, 1, 2**31)
    stale = next_run == "stored" and not catchup
    delta = timetable.startswith("delta")
    notes: list = [
        Difference("a DAG run is created the instant it is due; Airflow's scheduler loop creates it at its next "
                   "loop after that (seconds)", topic="catch-up", example="any rule: calsim 06:30:00, Airflow "
                   "06:30:0x"),
    ]
    notes.append(Difference(
        "the scheduler creates at most one run of a DAG per loop, and a slot a finished run frees is used by the "
        "next loop: after an outage the n-th backlog run starts up to n loops (about a second each) later than "
        "calsim's", topic="catch-up", example="hourly, catchup=True, max_active_runs=1, 3 days down: the 87th "
        "run 86 s after calsim's (tools/capture_airflow.py max_active_cases)"))
    if timetable == "cron_data_interval" and not catchup and next_run == "recomputed":
        notes.append(Difference(
            "with catchup=False and the DAG re-parsed first, Airflow never runs the interval that ends in a spring "
            "gap after an outage over it (croniter moves the gap time forward twice in _skip_to_latest); calsim "
            "runs it", topic="DST", example="30 2 * * *, New York, down 2026-03-08 00:50-03:50 EST/EDT: Airflow "
            "no run at the restart, calsim the [03-07 02:30, 03-08 03:30) interval"))
    if timetable == "delta_trigger" and not catchup:
        notes.append(Difference(
            "a timedelta schedule without catchup names the run it creates at the restart after the restart "
            "(its logical date is now); calsim starts the latest missed time there, under that time's name",
            topic="catch-up", example="timedelta(hours=1), down 00:50-03:50: Airflow logical date 03:50, calsim "
            "03:00 started at 03:50; both then run 04:50, 05:50"))
    return Preset(
        name="airflow",
        policy=Policy(catchup="all" if catchup else "earliest_and_latest" if stale else "latest", backlog="at_once",
                      overlap="buffer_all", max_active=limit, on_resume="catch_up",
                      covers="data_interval" if timetable.endswith("data_interval") else None,
                      interval_from="restart" if delta and not catchup and next_run == "recomputed" else "schedule"),
        gap="shift", fold="second", tick="1s", notes=tuple(notes),
        sources=(AF_TIMETABLES, AF_CRON, AF_CATCHUP, AF_ISSUE),
        settings=_settings(timetable=timetable, catchup=catchup, max_active_runs=max_active_runs,
                           next_run=next_run),
        wildcard=Wildcard("every_hour", "skip", "both"),
        measured=MEASURED,
    )
