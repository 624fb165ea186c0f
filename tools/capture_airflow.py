#!/usr/bin/env python3
"""Record when the real Apache Airflow schedules runs across DST changes and after outages, as a JSON fixture.

Usage (from the repository root; needs only ``python3`` >= 3.10 and PyPI)::

    python tools/capture_airflow.py            # writes tests/fixtures/airflow/airflow-3.3.2.json
    python tools/capture_airflow.py --out /tmp/airflow.json

Runtime: 80 to 120 seconds once the oracle virtual environment exists (the
first run creates ``~/.cache/calsim-oracles/airflow-3.3.2/`` and installs
``apache-airflow==3.3.2``, ``time-machine==3.6.0``, ``pendulum==3.3.0`` and
``croniter==7.0.0`` into it: 2 to 4 minutes more). Nothing outside that
folder, a temporary ``AIRFLOW_HOME`` and the output file is written; no
database, no scheduler process and no real clock is used. Two runs give the
same fixture but for ``captured_at``.

What runs
---------
The real Airflow 3.3.2 code, in its own virtual environment (this script
re-executes the ``WORKER`` source below with that venv's python):

* ``fire_cases``: for every 2026 DST change of America/New_York, Europe/Berlin,
  Australia/Sydney and Australia/Adelaide (8 windows, from 2 days before the
  local day of the change to 3 days after it, 00:00 UTC), each of 7 cron rules
  under ``CronTriggerTimetable(cron, timezone=zone)`` (``kind:
  cron_trigger``, what ``schedule="<cron>"`` gives in 3.x) and
  ``CronDataIntervalTimetable(cron, zone)`` (``cron_data_interval``), and
  ``timedelta(hours=1)`` / ``timedelta(days=1)`` under
  ``DeltaTriggerTimetable`` / ``DeltaDataIntervalTimetable``. The timetable is
  walked exactly as the scheduler walks it: ``next_dagrun_info(
  last_automated_data_interval=<previous run's interval>,
  restriction=TimeRestriction(earliest=<start>, latest=None, catchup=True))``.
  ``fires_utc`` are the runs' ``run_after`` (when the scheduler may create
  them: the interval END for data-interval timetables), ``logical_dates_utc``
  their logical dates, ``data_intervals_utc`` the intervals (``null`` for the
  trigger timetables, whose interval is empty).
* ``outage_cases``: a DAG (``airflow.sdk.DAG``, serialized and deserialized
  as the DAG processor and scheduler do) with ``start_date`` = the window
  start, the scheduler down for 3 hours or 3 days from 70 minutes before the
  change, ``catchup`` True or False, and two variants of what happens at the
  restart:

  - ``"stored"``: the scheduler's first loop finds ``DagModel.next_dagrun``
    (computed before the outage) due and creates that run, then
    ``calculate_dagrun_date_fields`` recomputes from it with the clock at the
    restart, and so on until the next run is in the future
    (``SchedulerJobRunner._create_dag_runs``);
  - ``"recomputed"``: the DAG processor re-parses the file first (it calls
    ``DagModel.calculate_dagrun_date_fields`` with the latest run on every
    parse, ``dag_processing/collection.py``), so the stored value is replaced
    before the scheduler looks.

  Both are driven through ``SerializedDAG.next_dagrun_info`` (the call
  ``calculate_dagrun_date_fields`` makes), under a frozen ``time-machine``
  clock moved to each creation time; runs before the outage are created at
  their ``run_after``, runs after it at the restart instant. Runs are assumed
  to finish at once, so ``max_active_runs`` (16) never holds creation back;
  see docs/research/airflow_dagster.md. With ``catchup=True`` both variants
  give the same runs (the worker asserts it) and are one case,
  ``variant: stored_or_recomputed``.
* ``max_active_cases``: the same outages with ``catchup=True``,
  ``max_active_runs`` 1, 4 and 16 and runs that take ``RUN_DURATION`` (10
  min), for ``MAR_RULES`` (hourly cron trigger and data-interval, hourly
  delta trigger, daily 02:30 cron trigger). The scheduler loop is emulated
  around the REAL decision code, called on in-memory ORM objects
  (``DagModel``, ``DagRun``) under the frozen clock:

  - REAL: ``SchedulerJobRunner._create_dag_runs`` (the ``exceeds_max_non_backfill``
    check, ``next_run_info_from_dag_model``, the active-run counter,
    ``DagModel.calculate_dagrun_date_fields``, ``_set_exceeds_max_active_runs``;
    ``jobs/scheduler_job_runner.py:2418-2552``), ``_start_queued_dagruns``
    (the per-run ``max_active_runs`` check and ``_update_state``, which sets
    ``start_date`` from the clock; 2715-2808) and
    ``_set_exceeds_max_active_runs`` when a run finishes (4090-4105, called
    as at 2945).
  - Replaced because they are SQL (rewritten in Python): the DAG selection of
    ``DagModel.dags_needing_dagruns`` (``models/dag.py:790-804``: not paused,
    ``exceeds_max_non_backfill`` false, ``next_dagrun_create_after <= now``),
    ``DagRun.active_runs_of_dags`` (QUEUED + RUNNING, ``dagrun.py:630-650``),
    ``DagRun.get_queued_dag_runs_to_set_running`` (``dagrun.py:692-772``:
    RUNNING count < ``max_active_runs``, ``run_after <= now``, ordered by
    ``last_scheduling_decision`` nulls first, then ``run_after``), the
    running-count query of ``_start_queued_dagruns`` and the existing-run
    check of ``_create_dag_runs``; ``SerializedDAG.create_dagrun`` builds the
    ``DagRun`` object without writing it.
  - Emulated: the loop (``_do_scheduling``, 1891-1926: create at most one run
    per DAG, then start queued runs, then examine running ones). A run's
    tasks take ``RUN_DURATION`` from its ``start_date``; the first loop at or
    after that marks it SUCCESS (what ``DagRun.update_state`` does once its
    tasks are done) and recomputes ``exceeds_max_non_backfill``. Loops
    follow each other ``LOOP`` (1 s, ``scheduler_idle_sleep_time``) apart
    while there is work; idle loops are skipped to the next event (on the
    same 1 s grid from the start date). No loop runs while the scheduler is
    down. The DAG processor's re-parses are not emulated: with
    ``catchup=True`` they recompute the same next run and the same
    ``exceeds_max_non_backfill`` (``dag_processing/collection.py:636-637``).
    Observation stops at the first run after the restart that starts at its
    own ``run_after`` (caught up); a run still running then has
    ``finished_at_utc: null``.

  Each case records every run started from the restart on (``run_after``,
  logical date, interval, ``created_at``, ``started_at``, ``finished_at``)
  and, from a second pass with loops taking no time,
  ``zero_loop_runs_utc``: ``[run_after, started_at]`` of the same runs.

The clock is never the real one: every call runs inside
``time_machine.travel(..., tick=False)``.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from oracle_venv import CACHE, ensure_venv, write_fixture

ROOT = Path(__file__).resolve().parent.parent
SYSTEM = "airflow"
VERSION = "3.3.2"
# pendulum and croniter compute the cron times: pinned to what the fixture was captured with
PINS = {"apache-airflow": VERSION, "time-machine": "3.6.0", "pendulum": "3.3.0", "croniter": "7.0.0"}
VENV = CACHE / f"{SYSTEM}-{VERSION}"
DEFAULT_OUT = ROOT / "tests" / "fixtures" / SYSTEM / f"{SYSTEM}-{VERSION}.json"

WORKER = r'''
import datetime as dt
import json
import math
import sys
from importlib import metadata
from zoneinfo import ZoneInfo

import time_machine

import airflow
from airflow._shared.timezones.timezone import coerce_datetime
from airflow.sdk import DAG
from airflow.sdk.definitions.timetables.interval import (
    CronDataIntervalTimetable as SdkCronDataIntervalTimetable,
    DeltaDataIntervalTimetable as SdkDeltaDataIntervalTimetable,
)
from airflow.sdk.definitions.timetables.trigger import (
    CronTriggerTimetable as SdkCronTriggerTimetable,
    DeltaTriggerTimetable as SdkDeltaTriggerTimetable,
)
from airflow.serialization.serialized_objects import DagSerialization
from airflow.timetables.base import TimeRestriction
from airflow.timetables.interval import CronDataIntervalTimetable, DeltaDataIntervalTimetable
from airflow.timetables.trigger import CronTriggerTimetable, DeltaTriggerTimetable
from airflow.jobs.scheduler_job_runner import SchedulerJobRunner
from airflow.models.dag import DagModel
from airflow.models.dagrun import DagRun
from airflow.serialization.definitions.dag import SerializedDAG
from airflow.utils.state import DagRunState
from airflow.utils.types import DagRunType

UTC = dt.timezone.utc
ZONES = ["America/New_York", "Europe/Berlin", "Australia/Sydney", "Australia/Adelaide"]
CRONS = ["30 2 * * *", "30 1 * * *", "0 2 * * *", "0 * * * *", "30 * * * *", "0 */2 * * *", "15 3 * * *"]
DELTAS = {"timedelta(hours=1)": dt.timedelta(hours=1), "timedelta(days=1)": dt.timedelta(days=1)}
OUTAGES = {"3h": dt.timedelta(hours=3), "3d": dt.timedelta(days=3)}
DOWN_BEFORE_CHANGE = dt.timedelta(minutes=70)
# max_active_runs cases: catchup=True, every run takes RUN_DURATION, the scheduler loop every LOOP
MAX_ACTIVE = (1, 4, 16)
MAR_RULES = [("cron_trigger", "0 * * * *"), ("cron_trigger", "30 2 * * *"), ("cron_data_interval", "0 * * * *"),
             ("delta_trigger", "timedelta(hours=1)")]
RUN_DURATION = dt.timedelta(minutes=10)
LOOP = dt.timedelta(seconds=1)  # [scheduler] scheduler_idle_sleep_time (config.yml:2615-2623)
OBSERVE_AFTER_RESTART = dt.timedelta(days=1)


def iso(t):
    return None if t is None else t.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def interval(di):
    return None if di is None else [iso(di.start), iso(di.end)]


def transitions(zone):
    """The 2026 offset changes of zone: (utc instant, local date of the change, before, after)."""
    tz = ZoneInfo(zone)
    out = []
    t = dt.datetime(2026, 1, 1, tzinfo=UTC)
    step = dt.timedelta(minutes=15)
    prev = t.astimezone(tz).utcoffset()
    while t.year == 2026:
        nxt = t + step
        off = nxt.astimezone(tz).utcoffset()
        if off != prev:
            local_day = (nxt - dt.timedelta(seconds=1)).astimezone(tz).date()
            out.append((nxt, local_day, prev, off))
            prev = off
        t = nxt
    return out


def windows():
    for zone in ZONES:
        for instant, day, before, after in transitions(zone):
            start = dt.datetime.combine(day - dt.timedelta(days=2), dt.time(), UTC)
            end = dt.datetime.combine(day + dt.timedelta(days=3), dt.time(), UTC)
            change = "spring_forward" if after > before else "fall_back"
            yield zone, instant, change, start, end


def core_timetable(kind, rule, zone):
    if kind == "cron_trigger":
        return CronTriggerTimetable(rule, timezone=zone)
    if kind == "cron_data_interval":
        return CronDataIntervalTimetable(rule, zone)
    if kind == "delta_trigger":
        return DeltaTriggerTimetable(DELTAS[rule])
    return DeltaDataIntervalTimetable(DELTAS[rule])


def sdk_timetable(kind, rule, zone):
    if kind == "cron_trigger":
        return SdkCronTriggerTimetable(rule, timezone=zone)
    if kind == "cron_data_interval":
        return SdkCronDataIntervalTimetable(rule, zone)
    if kind == "delta_trigger":
        return SdkDeltaTriggerTimetable(DELTAS[rule])
    return SdkDeltaDataIntervalTimetable(DELTAS[rule])


def kinds():
    for rule in CRONS:
        yield "cron_trigger", rule
        yield "cron_data_interval", rule
    for rule in DELTAS:
        yield "delta_trigger", rule
        yield "delta_data_interval", rule


def fire_case(traveller, zone, kind, rule, start, end):
    tt = core_timetable(kind, rule, zone)
    earliest = coerce_datetime(start)
    restriction = TimeRestriction(earliest=earliest, latest=None, catchup=True)
    traveller.move_to(end)  # catchup=True never reads the clock; frozen anyway
    last = None
    fires, logical, intervals = [], [], []
    while len(fires) < 1000:
        info = tt.next_dagrun_info(last_automated_data_interval=last, restriction=restriction)
        if info is None or info.run_after >= end:
            break
        fires.append(iso(info.run_after))
        logical.append(iso(info.logical_date))
        intervals.append(interval(info.data_interval))
        last = info.data_interval
    data = kind.endswith("data_interval")
    return {
        "zone": zone,
        "rule": rule,
        "kind": kind,
        "window_utc": [iso(start), iso(end)],
        "earliest_utc": iso(start),
        "fires_utc": fires,
        "logical_dates_utc": logical,
        "data_intervals_utc": intervals if data else None,
    }


def run_record(created_at, info, kind):
    record = {
        "created_at_utc": iso(created_at),
        "run_after_utc": iso(info.run_after),
        "logical_date_utc": iso(info.logical_date),
        # trigger timetables' intervals are empty ([run_after, run_after]): null
        "data_interval_utc": interval(info.data_interval) if kind.endswith("data_interval") else None,
    }
    if created_at is None:
        del record["created_at_utc"]
    return record


def outage_case(traveller, zone, kind, rule, start, down0, down1, catchup, variant, label):
    dag = DAG(
        dag_id="calsim_outage",
        schedule=sdk_timetable(kind, rule, zone),
        start_date=start,
        catchup=catchup,
    )
    serdag = DagSerialization.from_dict(DagSerialization.to_dict(dag))
    # The DAG processor's first parse, at the start date: next_dagrun from no run.
    traveller.move_to(start)
    stored = serdag.next_dagrun_info(last_automated_run_info=None)
    last = None
    before = []
    # The scheduler, up until the outage, creates each run as soon as it is due.
    while stored is not None and stored.run_after < down0 and len(before) < 2000:
        created = max(stored.run_after, start)
        traveller.move_to(created)
        before.append(run_record(created, stored, kind))
        last = stored
        stored = serdag.next_dagrun_info(last_automated_run_info=last)
    stored_at_down = stored
    traveller.move_to(down1)
    if variant == "recomputed":
        stored = serdag.next_dagrun_info(last_automated_run_info=last)
    runs = []
    while stored is not None and stored.run_after <= down1 and len(runs) < 2000:
        runs.append(run_record(down1, stored, kind))
        last = stored
        stored = serdag.next_dagrun_info(last_automated_run_info=last)
    return {
        "zone": zone,
        "rule": rule,
        "kind": kind,
        "settings": {
            "catchup": catchup,
            "variant": variant,
            "outage": label,
            "start_date_utc": iso(start),
            "max_active_runs": 16,
            "runs_finish_at_once": True,
        },
        "down_utc": [iso(down0), iso(down1)],
        "last_run_before_down": before[-1] if before else None,
        "stored_next_run_at_down": None if stored_at_down is None else run_record(None, stored_at_down, kind),
        "runs": runs,
        "next_run_after_restart": None if stored is None else run_record(None, stored, kind),
    }


# ---------------------------------------------------------------- max_active_runs: the scheduler loop emulated
# around the real SchedulerJobRunner._create_dag_runs / _start_queued_dagruns / _set_exceeds_max_active_runs,
# DagModel.calculate_dagrun_date_fields and Timetable.next_run_info_from_dag_model, on in-memory ORM objects.
# Only what needs the database is replaced (see MAR_DOC in the capture script).

MAR = {"runs": [], "dm": None, "serdag": None, "created_at": {}}
QUEUED, RUNNING, SUCCESS = DagRunState.QUEUED, DagRunState.RUNNING, DagRunState.SUCCESS


class _Log:
    def __getattr__(self, name):
        return lambda *args, **kwargs: None


class FakeSession:
    """The two queries the runner's methods make on the session itself."""

    def scalars(self, query):  # _create_dag_runs: existing runs with the DagModel's next logical date
        existing = [r for r in MAR["runs"] if r.logical_date == MAR["dm"].next_dagrun]
        return type("R", (), {"all": staticmethod(lambda: existing)})()

    def execute(self, query):  # _start_queued_dagruns: RUNNING runs grouped by (dag_id, backfill_id)
        n = sum(r.state == RUNNING for r in MAR["runs"])
        return [(MAR["dm"].dag_id, None, n)] if n else []


def _active_runs_of_dags(dag_ids, exclude_backfill=False, session=None):
    """DagRun.active_runs_of_dags (dagrun.py:630-650): QUEUED + RUNNING runs per DAG."""
    n = sum(r.state in (QUEUED, RUNNING) for r in MAR["runs"])
    return {MAR["dm"].dag_id: n} if n else {}


def _queued_to_set_running(session):
    """DagRun.get_queued_dag_runs_to_set_running (dagrun.py:692-772) in Python: QUEUED runs of unpaused DAGs
    with run_after <= now, only while the DAG's RUNNING count < max_active_runs (the query's WHERE), ordered by
    last_scheduling_decision nulls first, then run_after (lines 764-766), at most DEFAULT_DAGRUNS_TO_EXAMINE."""
    now = dt.datetime.now(UTC)
    running = sum(r.state == RUNNING for r in MAR["runs"])
    if running >= MAR["dm"].max_active_runs:
        return []
    queued = [r for r in MAR["runs"] if r.state == QUEUED and r.run_after <= now]
    queued.sort(key=lambda r: (r.last_scheduling_decision is not None,
                               r.last_scheduling_decision or dt.datetime.min.replace(tzinfo=UTC), r.run_after))
    return queued[:DagRun.DEFAULT_DAGRUNS_TO_EXAMINE]


def _create_dagrun(self, *, run_id, logical_date=None, data_interval=None, run_after, run_type, triggered_by,
                   state, creating_job_id=None, partition_key=None, partition_date=None, **kwargs):
    """SerializedDAG.create_dagrun without its database row (dag.py:576): the DagRun the scheduler asked for."""
    dr = DagRun(dag_id=self.dag_id, run_id=run_id, logical_date=logical_date, data_interval=data_interval,
                run_after=run_after, run_type=run_type, triggered_by=triggered_by, state=state,
                creating_job_id=creating_job_id, partition_key=partition_key, partition_date=partition_date)
    dr.dag_model = MAR["dm"]
    MAR["runs"].append(dr)
    MAR["created_at"][run_id] = dt.datetime.now(UTC)
    return dr


DagRun.active_runs_of_dags = staticmethod(_active_runs_of_dags)
DagRun.get_queued_dag_runs_to_set_running = staticmethod(_queued_to_set_running)
SerializedDAG.create_dagrun = _create_dagrun


def _runner():
    runner = object.__new__(SchedulerJobRunner)
    runner._log = _Log()
    runner.job = type("Job", (), {"id": 1})()
    runner._multi_team = False
    runner._get_current_dag = lambda dag_id, session: MAR["serdag"]
    runner.scheduler_dag_bag = type("Bag", (), {"get_dag_for_run": staticmethod(
        lambda dag_run, session: MAR["serdag"])})()
    return runner


def emulate(traveller, zone, kind, rule, start, down0, down1, limit, loop):
    """Run the scheduler loop from ``start`` until the DAG has caught up after the restart ``down1`` (the first
    run created there or later that starts at its own run_after); loops are ``loop`` apart while there is work."""
    dag = DAG(dag_id="calsim_max_active", schedule=sdk_timetable(kind, rule, zone), start_date=start,
              catchup=True, max_active_runs=limit)
    serdag = DagSerialization.from_dict(DagSerialization.to_dict(dag))
    assert serdag.max_active_runs == limit
    traveller.move_to(start)
    dm = DagModel(dag_id=serdag.dag_id, max_active_runs=serdag.max_active_runs, is_paused=False, is_stale=False,
                  has_import_errors=False)
    dm.timetable_partitioned = serdag.timetable.partitioned
    dm.exceeds_max_non_backfill = 0 >= dm.max_active_runs  # collection.py:636, no run yet
    dm.calculate_dagrun_date_fields(serdag, reference_run=None)  # the DAG processor's first parse
    MAR.update(runs=[], dm=dm, serdag=serdag, created_at={})
    runner, session = _runner(), FakeSession()
    t, hard_stop = start, down1 + dt.timedelta(days=3)
    while t < hard_stop:
        if down0 <= t < down1:
            t = down1  # no scheduler loop while it is down; tasks that were running go on
            continue
        traveller.move_to(t)
        before = [(r.run_id, r.state) for r in MAR["runs"]]
        # _do_scheduling (scheduler_job_runner.py:1921-1926): create, then start queued, then examine running
        # dags_needing_dagruns (models/dag.py:790-804) in Python: not exceeds_max_non_backfill, create_after <= now
        if (not dm.exceeds_max_non_backfill and dm.next_dagrun_create_after is not None
                and dm.next_dagrun_create_after <= t):
            runner._create_dag_runs([dm], session)
        runner._start_queued_dagruns(session)
        for r in list(MAR["runs"]):  # _schedule_dag_run: a run whose tasks are done is marked SUCCESS, then
            if r.state == RUNNING and r.start_date + RUN_DURATION <= t:  # _set_exceeds_max_active_runs (2945)
                r.state, r.end_date = SUCCESS, t
                runner._set_exceeds_max_active_runs(dag_model=dm, session=session)
            elif r.state == RUNNING:
                r.last_scheduling_decision = t  # update_state (dagrun.py:1191)
        caught_up = [r for r in MAR["runs"] if MAR["created_at"][r.run_id] >= down1 and r.start_date == r.run_after]
        if caught_up:
            break
        if [(r.run_id, r.state) for r in MAR["runs"]] != before:
            t = t + loop  # work was done: the next loop follows at once (loop 0) or ``loop`` later
            continue
        events = [r.start_date + RUN_DURATION for r in MAR["runs"] if r.state == RUNNING]
        if not dm.exceeds_max_non_backfill and dm.next_dagrun_create_after is not None:
            events.append(dm.next_dagrun_create_after)
        nxt = min(events, default=hard_stop)
        # idle loops change nothing: jump to the first loop (on the loop grid from start) at or after the event
        steps = math.ceil((nxt - t).total_seconds() / loop.total_seconds()) if loop else 1
        t = nxt if not loop else t + max(1, steps) * loop
    else:
        raise AssertionError(f"not caught up within 3 days: {zone} {kind} {rule} {limit}")
    return MAR["runs"], dict(MAR["created_at"])


def max_active_case(traveller, zone, kind, rule, start, down0, down1, limit, label):
    zero, _ = emulate(traveller, zone, kind, rule, start, down0, down1, limit, dt.timedelta(0))
    zero_loop = [[iso(r.run_after), iso(r.start_date)] for r in zero if r.start_date >= down1]
    runs_all, created_at = emulate(traveller, zone, kind, rule, start, down0, down1, limit, LOOP)
    before_down = [r for r in runs_all if created_at[r.run_id] < down0]
    runs = []
    for r in runs_all:
        if r.start_date < down1:
            continue
        runs.append({
            "run_after_utc": iso(r.run_after),
            "logical_date_utc": iso(r.logical_date),
            "data_interval_utc": ([iso(r.data_interval_start), iso(r.data_interval_end)]
                                  if kind.endswith("data_interval") else None),
            "created_at_utc": iso(created_at[r.run_id]),
            "started_at_utc": iso(r.start_date),
            "finished_at_utc": iso(r.end_date),
        })
    return {
        "zone": zone,
        "rule": rule,
        "kind": kind,
        "settings": {
            "catchup": True,
            "outage": label,
            "start_date_utc": iso(start),
            "max_active_runs": limit,
            "run_duration_s": int(RUN_DURATION.total_seconds()),
            "loop_seconds": LOOP.total_seconds(),
        },
        "down_utc": [iso(down0), iso(down1)],
        "runs_before_down": len(before_down),
        "active_at_down": sum(1 for r in before_down if r.end_date is None or r.end_date > down0),
        "runs": runs,
        "zero_loop_runs_utc": zero_loop,
    }


def main():
    fire_cases, outage_cases, windows_out, max_active_cases = [], [], [], []
    with time_machine.travel(dt.datetime(2026, 1, 1, tzinfo=UTC), tick=False) as traveller:
        for zone, instant, change, start, end in windows():
            windows_out.append({"zone": zone, "change": change, "change_utc": iso(instant),
                                "window_utc": [iso(start), iso(end)]})
            for kind, rule in kinds():
                fire_cases.append(fire_case(traveller, zone, kind, rule, start, end))
            down0 = instant - DOWN_BEFORE_CHANGE
            for label, length in OUTAGES.items():
                for kind, rule in kinds():
                    for catchup in (True, False):
                        stored, recomputed = (
                            outage_case(traveller, zone, kind, rule, start, down0, down0 + length,
                                        catchup, variant, label)
                            for variant in ("stored", "recomputed")
                        )
                        if catchup:
                            # With catchup the stored next run is the first missed one anyway:
                            # one case, checked here to be the same both ways.
                            assert stored["runs"] == recomputed["runs"], (zone, kind, rule, label)
                            stored["settings"]["variant"] = "stored_or_recomputed"
                            outage_cases.append(stored)
                        else:
                            outage_cases.extend((stored, recomputed))
            for label, length in OUTAGES.items():
                for kind, rule in MAR_RULES:
                    for limit in MAX_ACTIVE:
                        max_active_cases.append(max_active_case(traveller, zone, kind, rule, start, down0,
                                                                down0 + length, limit, label))
        # The defaults of a DAG given a cron string, in this version.
        default_dag = DAG(dag_id="calsim_defaults", schedule="30 2 * * *",
                          start_date=dt.datetime(2026, 1, 1, tzinfo=UTC))
        serdag = DagSerialization.from_dict(DagSerialization.to_dict(default_dag))
        defaults = {
            "schedule_cron_string_timetable": type(serdag.timetable).__name__,
            "schedule_timedelta_timetable": type(DagSerialization.from_dict(DagSerialization.to_dict(
                DAG(dag_id="calsim_defaults_delta", schedule=dt.timedelta(hours=1),
                    start_date=dt.datetime(2026, 1, 1, tzinfo=UTC)))).timetable).__name__,
            "catchup": serdag.catchup,
        }
    try:
        system_tz = open("/usr/share/zoneinfo/tzdata.zi").readline().strip().removeprefix("# version ")
    except OSError:
        system_tz = None
    versions = {name: metadata.version(name) for name in (
        "apache-airflow", "apache-airflow-core", "apache-airflow-task-sdk", "time-machine",
        "pendulum", "croniter")}
    try:
        versions["tzdata"] = metadata.version("tzdata")
    except metadata.PackageNotFoundError:
        versions["tzdata"] = None
    json.dump({
        "version": airflow.__version__,
        "python": sys.version.split()[0],
        "packages": versions,
        "system_tzdata": system_tz,
        "defaults": defaults,
        "windows": windows_out,
        "fire_cases": fire_cases,
        "outage_cases": outage_cases,
        "max_active_cases": max_active_cases,
    }, sys.stdout)


main()
'''


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT, help="fixture to write")
    args = parser.parse_args()
    began = time.monotonic()
    python = ensure_venv(VENV, PINS)
    with tempfile.TemporaryDirectory(prefix="calsim-airflow-") as home:
        worker = Path(home) / "worker.py"
        worker.write_text(WORKER)
        env = dict(os.environ)
        env.update({
            "AIRFLOW_HOME": home,
            "AIRFLOW__CORE__LOAD_EXAMPLES": "False",
            "AIRFLOW__CORE__DAGS_FOLDER": str(Path(home) / "dags"),
            "AIRFLOW__LOGGING__LOGGING_LEVEL": "WARNING",
            "PYTHONHASHSEED": "0",
        })
        done = subprocess.run([str(python), str(worker)], capture_output=True, text=True, env=env, cwd=home)
    if done.returncode != 0:
        sys.stderr.write(done.stderr[-5000:])
        return done.returncode
    captured = json.loads(done.stdout)
    if captured["version"] != VERSION:
        raise SystemExit(f"worker ran airflow {captured['version']}, not {VERSION}")
    fixture = {
        "system": SYSTEM,
        "version": VERSION,
        "python": captured.pop("python"),
        "captured_by": "python tools/capture_airflow.py",
        "captured_at": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d"),
        "host_platform": platform.platform(),
        "notes": (
            "Real airflow code under a frozen time-machine clock; no scheduler process or database. "
            "fire_cases walk timetable.next_dagrun_info(catchup=True) from the window start; "
            "outage_cases drive SerializedDAG.next_dagrun_info as DagModel.calculate_dagrun_date_fields does: "
            "'stored' = the scheduler creates DagModel.next_dagrun computed before the outage first, "
            "'recomputed' = the DAG processor re-parses first. max_active_cases: the real "
            "SchedulerJobRunner._create_dag_runs/_start_queued_dagruns on in-memory DagModel/DagRun objects, "
            "their SQL queries rewritten in Python and the loop emulated (1 s and zero-time loops). "
            "See docs/research/airflow_dagster.md."
        ),
    }
    captured.pop("version")
    fixture.update(captured)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    with open(args.out, "w") as f:
        write_fixture(fixture, f)
    print(
        f"wrote {args.out}: {len(fixture['fire_cases'])} fire cases, "
        f"{len(fixture['outage_cases'])} outage cases, {len(fixture['max_active_cases'])} max_active_runs cases "
        f"in {time.monotonic() - began:.0f} s",
        file=sys.stderr,
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
