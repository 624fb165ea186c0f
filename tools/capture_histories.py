#!/usr/bin/env python3
"""Record run histories as the real Airflow 3.3.2 and Prefect 3.9.1 print them, as fixtures for calsim's readers.

Usage (from the repository root; needs only ``python3`` 3.11 and PyPI)::

    python tools/capture_histories.py                       # writes tests/fixtures/history/*.json
    python tools/capture_histories.py --out /tmp/histories

Runtime: about 20 seconds once the two oracle virtual environments exist
(``~/.cache/calsim-oracles/airflow-3.3.2/`` and ``prefect-3.9/``, the ones
``tools/capture_airflow.py`` and ``tools/capture_prefect.py`` build, with the
same pins; a missing one is created first). Two runs give the same files.

The story (both schedulers, one ETL job at 02:30 America/New_York, 2026-03-05..10 UTC, clocks spring forward on
03-08 so that day's 02:30 does not exist): runs on 03-05 and 03-06 succeed, 03-07 fails (and is re-run by hand at
15:00 UTC), 03-08 runs at 03:30 EDT (07:30Z, what both schedulers make of the gap), 03-09 starts 22 minutes late,
03-10 never starts. What each file holds and which real code made it:

``airflow-3.3.2-dag-runs.json`` -- ``GET /api/v2/dags/~/dagRuns``: a ``DAGRunCollectionResponse`` of
``DAGRunResponse`` objects validated from real ``airflow.models.dagrun.DagRun`` ORM objects (the route does
exactly that, ``api_fastapi/core_api/routes/public/dag_run.py``), dumped as FastAPI's JSON response is (compact).
Each run's ``run_after``, data interval and logical date come from the real timetable's ``next_dagrun_info``
(``CronTriggerTimetable("30 2 * * *", timezone="America/New_York")`` for ``nightly_etl``,
``CronDataIntervalTimetable("0 6 * * *", "UTC")`` for ``daily_report``), its ``run_id`` from the timetable's
``generate_run_id``, with the arguments the scheduler passes (``jobs/scheduler_job_runner.py:2506-2530``); the
manual run's interval from ``infer_manual_data_interval`` as ``TriggerDAGRunPostBody.validate_context`` asks it,
the backfill's as ``models/backfill.py:441-455`` creates it (QUEUED, with a ``start_date`` already), the asset
run's as ``_create_dag_runs_asset_triggered`` (``scheduler_job_runner.py:2645-2655``, no logical date). States and
``queued_at`` / ``start_date`` / ``end_date`` come from ``DagRun.__init__`` and ``DagRun.set_state`` under a frozen
``time_machine`` clock at each transition. ``nightly_etl``'s 03-10 run stays QUEUED (never started).

``airflow-3.3.2-list-runs.json`` -- ``airflow dags list-runs nightly_etl -o json``: the real
``cli/commands/dag_command.py`` ``dag_list_dag_runs`` (its decorators unwrapped: they open the metadata
database), given the same ``DagRun`` objects through a stubbed ``DagRun.find``; its own mapper and
``AirflowConsole.print_as`` write the file.

``prefect-3.9.1-flow-runs.json`` -- ``prefect flow-run ls -o json``: client ``FlowRun`` objects dumped as
``cli/flow_run.py:312-315`` does (``model_dump(mode="json")``, orjson with 2-space indents). The scheduled runs
are what the real ``server.models.deployments._generate_scheduled_flow_runs`` returns for a
``CronSchedule(cron="30 2 * * *", timezone="America/New_York")`` (its database reads stubbed as in
``tools/capture_prefect.py``); their times are in UTC as the database gives them back
(``server/utilities/database.py`` ``Timestamp.process_result_value``). Each state change sets the fields the
server's global orchestration policy would (``server/orchestration/global_policy.py``: ``SetStartTime`` 214-233,
``SetEndTime`` 256-291, ``IncrementRunCount`` 320-341, ``SetExpectedStartTime`` 389-414; the states are
``prefect.states`` constructors with the transition's timestamp). Besides the scheduled runs: a run started by
hand with ``prefect deployment run`` (not auto-scheduled, no idempotency key, as the server creates it), one
still RUNNING, a Late run cancelled before it started (``SetEndTime`` gives it a start time; ``run_count``
stays 0) and a flow run of no deployment.

``prefect-3.9.1-paginate.json`` -- ``POST /api/flow_runs/paginate``: the server's ``FlowRunPaginationResponse``
of ``FlowRunResponse`` objects validated from the same runs, page 1 of 1.

Nothing here is hand-written but the story's instants.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from capture_airflow import PINS as AIRFLOW_PINS
from capture_airflow import VENV as AIRFLOW_VENV
from capture_prefect import MINOR as PREFECT_MINOR
from capture_prefect import PIN as PREFECT_PIN
from oracle_venv import CACHE, ensure_venv

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_OUT = ROOT / "tests" / "fixtures" / "history"

AIRFLOW_WORKER = r'''
import argparse
import contextlib
import datetime as dt
import inspect
import io
import json
import random
import sys

import time_machine

from airflow.api_fastapi.core_api.datamodels.dag_run import DAGRunCollectionResponse, DAGRunResponse
from airflow.cli.commands import dag_command
from airflow.models.dag import DagModel
from airflow.models.dagrun import DagRun
from airflow.timetables.base import TimeRestriction
from airflow.timetables.interval import CronDataIntervalTimetable
from airflow.timetables.trigger import CronTriggerTimetable
from airflow.utils.state import DagRunState
from airflow.utils.types import DagRunTriggeredByType, DagRunType

UTC = dt.timezone.utc
Q, R, S, F = DagRunState.QUEUED, DagRunState.RUNNING, DagRunState.SUCCESS, DagRunState.FAILED


def at(text):
    return dt.datetime.fromisoformat(text).replace(tzinfo=UTC)


def infos(timetable, earliest, n):
    """The first n DagRunInfo the scheduler gets from the timetable (catchup=True), in order."""
    out, last = [], None
    for _ in range(n):
        info = timetable.next_dagrun_info(last_automated_data_interval=last,
                                          restriction=TimeRestriction(earliest=earliest, latest=None, catchup=True))
        out.append(info)
        last = info.data_interval
    return out


def make(dag_id, run_id, run_type, triggered_by, created, run_after, logical_date, interval, steps, **kw):
    """A DagRun created at `created` (QUEUED), then set to each (state, offset from created) of steps."""
    with time_machine.travel(created, tick=False):
        dr = DagRun(dag_id=dag_id, run_id=run_id, logical_date=logical_date, run_after=run_after,
                    data_interval=interval, run_type=run_type, triggered_by=triggered_by, state=Q, conf=None, **kw)
    dr.dag_model = DagModel(dag_id=dag_id)
    for state, offset in steps:
        with time_machine.travel(created + offset, tick=False):
            dr.set_state(state)
    return dr


def timetable_id(timetable, run_type, info):
    return timetable.generate_run_id(run_type=run_type, run_after=info.run_after, data_interval=info.data_interval)


random.seed(29)  # DagRun.generate_run_id's random suffix (utils/strings.py get_random_string) of the asset run
sec, mins = (lambda s: dt.timedelta(seconds=s)), (lambda m: dt.timedelta(minutes=m))
runs = []
etl = CronTriggerTimetable("30 2 * * *", timezone="America/New_York")
steps = {0: [(R, sec(4)), (S, mins(12))], 1: [(R, sec(3)), (S, mins(11))], 2: [(R, sec(3)), (F, mins(5))],
         3: [(R, sec(5)), (S, mins(12))], 4: [(R, mins(22)), (S, mins(35))], 5: []}
for k, info in enumerate(infos(etl, at("2026-03-05T00:00"), 6)):
    runs.append(make("nightly_etl", timetable_id(etl, DagRunType.SCHEDULED, info), DagRunType.SCHEDULED,
                     DagRunTriggeredByType.TIMETABLE, info.run_after, info.run_after, info.logical_date,
                     info.data_interval, steps[k]))
# The failed 03-07 run started again by hand (POST /dags/nightly_etl/dagRuns {"logical_date": <now>}):
# TriggerDAGRunPostBody.validate_context infers the interval from the logical date.
manual = at("2026-03-07T15:00")
interval = etl.infer_manual_data_interval(run_after=manual)
run_id = etl.generate_run_id(run_type=DagRunType.MANUAL, run_after=manual, data_interval=interval)
runs.append(make("nightly_etl", run_id, DagRunType.MANUAL, DagRunTriggeredByType.REST_API, manual, manual, manual,
                 interval, [(R, sec(2)), (S, mins(12))], triggering_user_name="analyst"))
# `airflow backfill create --dag-id nightly_etl --from-date 2026-03-04 --to-date 2026-03-04` on 03-09 10:00:
# models/backfill.py creates the run QUEUED with start_date=utcnow(); set_state(RUNNING) keeps it.
back = infos(etl, at("2026-03-04T00:00"), 1)[0]
created = at("2026-03-09T10:00")
run_id = DagRun.generate_run_id(run_type=DagRunType.BACKFILL_JOB, logical_date=back.logical_date,
                                run_after=back.run_after)
runs.append(make("nightly_etl", run_id, DagRunType.BACKFILL_JOB, DagRunTriggeredByType.BACKFILL, created,
                 back.run_after, back.logical_date, back.data_interval, [(R, sec(20)), (S, mins(13))],
                 start_date=created, backfill_id=1))
report = CronDataIntervalTimetable("0 6 * * *", "UTC")
for info in infos(report, at("2026-03-04T06:00"), 6):
    runs.append(make("daily_report", timetable_id(report, DagRunType.SCHEDULED, info), DagRunType.SCHEDULED,
                     DagRunTriggeredByType.TIMETABLE, info.run_after, info.run_after, info.logical_date,
                     info.data_interval, [(R, sec(6)), (S, mins(3))]))
asset = at("2026-03-08T11:17:42")
run_id = DagRun.generate_run_id(run_type=DagRunType.ASSET_TRIGGERED, logical_date=None, run_after=asset)
runs.append(make("on_new_data", run_id, DagRunType.ASSET_TRIGGERED, DagRunTriggeredByType.ASSET, asset, asset, None,
                 None, [(R, sec(1)), (S, mins(1))]))

runs.sort(key=lambda r: (r.run_after, r.dag_id))
collection = DAGRunCollectionResponse(dag_runs=[DAGRunResponse.model_validate(r) for r in runs],
                                      total_entries=len(runs))
rest = collection.model_dump_json()

DagRun.find = staticmethod(lambda **kw: [r for r in runs if r.dag_id == kw["dag_id"]])
args = argparse.Namespace(dag_id="nightly_etl", state=None, no_backfill=False, start_date=None, end_date=None,
                          output="json", verbose=False)
out = io.StringIO()
with contextlib.redirect_stdout(out):
    inspect.unwrap(dag_command.dag_list_dag_runs)(args, dag=argparse.Namespace(dag_id="nightly_etl"),
                                                  session=None)
with open(sys.argv[1], "w") as f:  # (not stdout: Airflow logs a warning there on import)
    json.dump({"rest": rest, "cli": out.getvalue()}, f)
'''

PREFECT_WORKER = r'''
import asyncio
import datetime as dt
import json
import sys
import uuid
from types import SimpleNamespace

import orjson

from prefect import states
from prefect.client.schemas.objects import FlowRun
from prefect.server.models import deployments as dep_models
from prefect.server.schemas.responses import FlowRunPaginationResponse, FlowRunResponse
from prefect.server.schemas.schedules import CronSchedule

UTC = dt.timezone.utc
FLOW, DEPLOYMENT, SCHEDULE = (uuid.UUID(f"0193a5c2-{k}000-7000-8000-00000000000{k}") for k in (1, 2, 3))
ids = iter(uuid.UUID(f"0195f0a0-0000-7000-8000-{k:012d}") for k in range(1, 1000))
state_ids = iter(uuid.UUID(f"0195f0a1-0000-7000-8000-{k:012d}") for k in range(1, 1000))
names = iter(["amber-heron", "brisk-otter", "calm-lynx", "deft-finch", "eager-mole", "fierce-newt", "gentle-yak",
              "hazy-crane", "icy-panda", "jolly-wren", "keen-ibis"])


def at(text):
    return dt.datetime.fromisoformat(text).replace(tzinfo=UTC)


class FakeSession:  # the one read _generate_scheduled_flow_runs makes of the deployment
    async def get(self, model, ident):
        return SimpleNamespace(id=DEPLOYMENT, flow_id=FLOW, version="2026.03", work_queue_name="default",
                               work_queue_id=None, parameters={}, infrastructure_document_id=None, tags=["etl"],
                               labels={})


async def read_deployment_schedules(session, deployment_id, deployment_schedule_filter=None):
    return [SimpleNamespace(id=SCHEDULE, schedule=CronSchedule(cron="30 2 * * *", timezone="America/New_York"),
                            parameters={}, slug=None)]


async def labels(session, deployment):  # with_system_labels_for_deployment_flow_run, deployments.py:1450-1477
    return {"prefect.flow.id": str(deployment.flow_id), "prefect.deployment.id": str(deployment.id)}


dep_models.read_deployment_schedules = read_deployment_schedules
dep_models.with_system_labels_for_deployment_flow_run = labels
generated = asyncio.run(dep_models._generate_scheduled_flow_runs(
    SimpleNamespace(Deployment=object), session=FakeSession(), deployment_id=DEPLOYMENT,
    start_time=at("2026-03-05T00:00"), end_time=at("2026-03-11T00:00"), min_time=dt.timedelta(days=6), min_runs=3,
    max_runs=100))
assert len(generated) == 6, generated


def utc(t):  # the database gives every time back in UTC (server/utilities/database.py Timestamp)
    return None if t is None else t.astimezone(UTC)


def run_from(fields, created):
    fields = dict(fields)
    fields.pop("state")
    fields.update(id=next(ids), name=next(names), created=created, updated=created,
                  expected_start_time=utc(fields["expected_start_time"]),
                  next_scheduled_start_time=utc(fields["next_scheduled_start_time"]))
    run = FlowRun(**fields)
    scheduled = states.Scheduled(scheduled_time=run.expected_start_time, message="Flow run scheduled",
                                 timestamp=created)
    run.state = None
    move(run, scheduled)
    return run


def move(run, state):
    """What the server's global policy does to the run when it accepts `state` (global_policy.py)."""
    t = state.timestamp
    state.id = next(state_ids)  # (a fixed id instead of the random one the model makes)
    state.state_details.flow_run_id = run.id                               # UpdateStateDetails
    run.state_id = state.id
    if state.is_running() and run.start_time is None:                      # SetStartTime
        run.start_time = t
    if state.is_running():                                                  # IncrementRunCount
        run.run_count += 1
    if run.state is not None and run.state.is_running():                    # IncrementRunTime
        run.total_run_time += t - run.state.timestamp
    if state.is_final() and run.end_time is None:                           # SetEndTime
        if run.start_time is None:
            run.start_time = t
        run.end_time = t
    if run.state is not None and run.state.is_scheduled():                  # SetNextScheduledStartTime
        run.next_scheduled_start_time = None
    if state.is_scheduled():
        run.next_scheduled_start_time = state.state_details.scheduled_time
    run.state, run.state_type, run.state_name = state, state.type, state.name
    run.estimated_run_time = run.total_run_time
    if run.start_time is not None:
        run.estimated_start_time_delta = max(run.start_time - run.expected_start_time, dt.timedelta(0))
    run.updated = t


sec, mins = (lambda s: dt.timedelta(seconds=s)), (lambda m: dt.timedelta(minutes=m))
created = at("2026-03-04T23:59:20")  # the scheduler service's loop before the window
runs = [run_from(g, created) for g in generated]
plans = [  # (state constructor, offset from the scheduled time)
    [(states.Pending, sec(1)), (states.Running, sec(3)), (states.Completed, mins(11))],
    [(states.Pending, sec(1)), (states.Running, sec(4)), (states.Crashed, mins(2))],
    [(states.Pending, sec(1)), (states.Running, sec(3)), (states.Failed, mins(5))],
    [(states.Pending, sec(1)), (states.Running, sec(4)), (states.Completed, mins(12))],
    [(states.Late, sec(15)), (states.Pending, mins(21)), (states.Running, mins(22)), (states.Completed, mins(35))],
    [(states.Late, sec(15)), (states.Cancelled, mins(150))],
]
for run, plan in zip(runs, plans):
    for make, offset in plan:
        t = run.expected_start_time + offset
        state = make(scheduled_time=run.expected_start_time, timestamp=t) if make is states.Late else make(timestamp=t)
        move(run, state)

# `prefect deployment run etl/nightly-etl` after the 03-07 failure, and again on 03-10 (still running):
# the server's create_flow_run_from_deployment sets no idempotency key, auto_scheduled False.
for when, plan in (("2026-03-07T15:00", [(states.Pending, sec(1)), (states.Running, sec(3)),
                                         (states.Completed, mins(12))]),
                   ("2026-03-10T12:00", [(states.Pending, sec(1)), (states.Running, sec(3))])):
    t0 = at(when)
    run = FlowRun(id=next(ids), name=next(names), created=t0, updated=t0, flow_id=FLOW, deployment_id=DEPLOYMENT,
                  deployment_version="2026.03", work_queue_name="default", tags=["etl"],
                  labels={"prefect.flow.id": str(FLOW), "prefect.deployment.id": str(DEPLOYMENT)},
                  expected_start_time=t0)
    move(run, states.Scheduled(scheduled_time=t0, timestamp=t0))
    for make, offset in plan:
        move(run, make(timestamp=t0 + offset))
    runs.append(run)

# A developer ran the flow on a laptop (no deployment): it belongs to no schedule.
t0 = at("2026-03-08T12:00")
adhoc = FlowRun(id=next(ids), name=next(names), created=t0, updated=t0, flow_id=FLOW, expected_start_time=t0)
for make, offset in ((states.Pending, sec(0)), (states.Running, sec(1)), (states.Completed, mins(9))):
    move(adhoc, make(timestamp=t0 + offset))
runs.append(adhoc)

runs.sort(key=lambda r: r.expected_start_time, reverse=True)  # flow_run.py ls: EXPECTED_START_TIME_DESC
ls = orjson.dumps([r.model_dump(mode="json") for r in runs], option=orjson.OPT_INDENT_2).decode()
page = FlowRunPaginationResponse(results=[FlowRunResponse.model_validate(r.model_dump()) for r in runs],
                                 count=len(runs), limit=200, pages=1, page=1)
with open(sys.argv[1], "w") as f:
    json.dump({"ls": ls, "paginate": page.model_dump_json()}, f)
'''


def _run(python: Path, source: str, env: dict[str, str], cwd: str) -> dict:
    with tempfile.TemporaryDirectory(prefix="calsim-histories-") as d:
        worker, result = Path(d) / "worker.py", Path(d) / "result.json"
        worker.write_text(source)
        done = subprocess.run([str(python), str(worker), str(result)], capture_output=True, text=True, cwd=cwd,
                              env={**env, "HOME": str(Path.home()), "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
                                   "PYTHONHASHSEED": "0"})
        if done.returncode != 0:
            sys.stderr.write(done.stderr[-5000:])
            raise SystemExit(f"{python}: worker failed")
        return json.loads(result.read_text())


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT, help="folder to write the fixtures into")
    args = parser.parse_args()
    began = time.monotonic()
    airflow = ensure_venv(AIRFLOW_VENV, AIRFLOW_PINS)
    prefect = ensure_venv(CACHE / f"prefect-{PREFECT_MINOR}", {"prefect": PREFECT_PIN})
    with tempfile.TemporaryDirectory(prefix="calsim-airflow-home-") as home:
        af = _run(airflow, AIRFLOW_WORKER, {"AIRFLOW_HOME": home, "AIRFLOW__CORE__LOAD_EXAMPLES": "False",
                                            "AIRFLOW__LOGGING__LOGGING_LEVEL": "WARNING"}, home)
    with tempfile.TemporaryDirectory(prefix="calsim-prefect-home-") as home:
        # cwd=/: never import a local directory named like a package (Prefect has a "types" module)
        pf = _run(prefect, PREFECT_WORKER, {"PREFECT_HOME": home, "PREFECT_LOGGING_LEVEL": "WARNING"}, "/")
    args.out.mkdir(parents=True, exist_ok=True)
    files = {f"airflow-{AIRFLOW_PINS['apache-airflow']}-dag-runs.json": af["rest"] + "\n",
             f"airflow-{AIRFLOW_PINS['apache-airflow']}-list-runs.json": af["cli"],
             f"prefect-{PREFECT_PIN}-flow-runs.json": pf["ls"] + "\n",
             f"prefect-{PREFECT_PIN}-paginate.json": pf["paginate"] + "\n"}
    for name, text in files.items():
        (args.out / name).write_text(text)
        print(f"wrote {args.out / name} ({len(text):,} characters)", file=sys.stderr)
    print(f"{time.monotonic() - began:.0f} s", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
