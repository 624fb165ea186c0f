#!/usr/bin/env python3
"""Record what Airflow 3.3.2, Prefect 3.9.1, Celery 5.7.0 and Dagster 1.13.29 say about schedules, as fixtures
for calsim's schedule readers (``calsim/importers/airflow.py``, ``prefect.py``, ``celery_beat.py``, ``dagster.py``).

Usage (from the repository root; needs only ``python3`` 3.11 and PyPI)::

    python tools/capture_readers.py                  # writes tests/fixtures/readers/*.json
    python tools/capture_readers.py --out /tmp/readers

Runtime: about 30 seconds once the oracle virtual environments exist (the ones ``tools/capture_airflow.py``,
``capture_prefect.py``, ``capture_celery.py`` and ``capture_dagster.py`` build, with the same pins; a missing one
is created first). Two runs give the same files. What each file is and which real code made it:

``airflow-3.3.2-dag-details.json`` -- a list of ``DAGDetailsResponse`` (``GET /api/v2/dags/{dag_id}/details``),
one per DAG below, built as the route builds it (``api_fastapi/core_api/routes/public/dags.py:225-262``): a
``DagModel`` filled as the DAG processor fills it (``dag_processing/collection.py:585-640``, the next run from
``DagModel.calculate_dagrun_date_fields``) for a real ``airflow.sdk.DAG`` serialized and deserialized, the DAG's
attributes copied onto it, ``model_dump(mode="json")``; ``DagVersion.get_latest_version`` (a database read for the
``latest_dag_version`` field) is stubbed to None. The clock is frozen at 2026-03-01T12:00Z, ``[core]
default_timezone`` is ``utc``.
``airflow-3.3.2-dags.json`` -- ``GET /api/v2/dags``: a ``DAGCollectionResponse`` of the same DAGs'
``DAGResponse``.
``airflow-3.3.2-dags-details-cli.json`` -- ``airflow dags details nightly_utc -o json``: ``DAGResponse.model_dump()``
through ``AirflowConsole``'s JSON normalisation (``cli/commands/dag_command.py:633-648``, ``cli/simple_table.py``:
every value through ``str()``), as ``print_as_json`` writes it.
``airflow-3.3.2-runs.json`` -- for each DAG with a time schedule, its first runs from ``start_date``
(``run_after``, UTC): the real core timetable's ``next_dagrun_info`` walked with ``catchup=True``.

``prefect-3.9.1-prefect.yaml.json`` -- ``prefect.yaml`` (hand-written, beside it) read by Prefect's own deploy
code: ``_handle_deprecated_schedule_fields`` (``cli/deploy/_config.py``) and
``_schedule_config_to_deployment_schedule`` (``cli/deploy/_schedules.py``) per entry, giving the schedule model
(or the error), and the server schema's ``get_dates`` (``server/schemas/schedules.py``) for its first dates after
2026-03-06T00:00Z.

``celery-5.7.0-crontabs.json`` -- for each ``crontabschedule`` of ``celery-dumpdata.json`` (hand-written from
django-celery-beat 2.9.0's ``models.py``, beside it), what Celery 5.7.0's ``crontab(...)`` expands its fields to,
or the ``ValueError`` it raises.

``dagster-1.13.29-defs.json`` -- ``dg list defs --json`` for the schedules below: the ``DgDefinitionMetadataSchema``
shape of dagster-dg-cli 1.13.27 (``cli/schemas/list_schemas.py:127-170``; dagster-dg-cli has no 1.13.29 on PyPI)
with the values ``dagster/components/list/list.py:230-242`` takes from the real ``ScheduleDefinition``s.
``dagster-1.13.29-graphql.json`` -- a ``schedulesOrError`` response with the values
``dagster_graphql/schema/schedules/schedules.py:84-100`` (dagster-graphql 1.13.29) takes from them
(``str(cron_schedule)``, ``execution_timezone or "UTC"``) and each one's status as the instance reports it
before anyone starts or stops it (``RemoteSchedule.get_current_instigator_state``: its ``default_status``).
``dagster-1.13.29-ticks.json`` -- each schedule's first ticks after 2026-03-06T00:00Z from Dagster's own
``cron_string_iterator`` in its zone.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

from oracle_venv import CACHE, ensure_venv

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "tests" / "fixtures" / "readers"
AIRFLOW = (CACHE / "airflow-3.3.2", {"apache-airflow": "3.3.2", "time-machine": "3.6.0", "pendulum": "3.3.0",
                                     "croniter": "7.0.0"})
PREFECT = (CACHE / "prefect-3.9", {"prefect": "3.9.1"})
CELERY = (CACHE / "celery-5.7", {"celery": "5.7.0", "time-machine": "3.6.0"})
DAGSTER = (CACHE / "dagster-1.13.29", {"dagster": "1.13.29", "time-machine": "3.6.0"})

AIRFLOW_WORKER = r'''
import datetime as dt, json, sys
import pendulum, time_machine
from airflow.sdk import DAG, Asset
from airflow.sdk.definitions.timetables.assets import AssetOrTimeSchedule
from airflow.sdk.definitions.timetables.interval import CronDataIntervalTimetable, DeltaDataIntervalTimetable
from airflow.sdk.definitions.timetables.trigger import CronTriggerTimetable, MultipleCronTriggerTimetable
from airflow.serialization.serialized_objects import DagSerialization
from airflow.models.dag import DagModel
from airflow.models.dag_version import DagVersion
from airflow.api_fastapi.core_api.datamodels.dags import DAGCollectionResponse, DAGDetailsResponse, DAGResponse
from airflow.cli.simple_table import AirflowConsole
from airflow.serialization.encoders import coerce_to_core_timetable
from airflow.timetables.base import TimeRestriction

DagVersion.get_latest_version = classmethod(lambda cls, *a, **k: None)  # a database read; no database here
UTC = dt.timezone.utc
START = pendulum.datetime(2026, 3, 6, tz="UTC")


def dags():
    yield DAG("nightly_utc", schedule="30 2 * * *", start_date=START, catchup=True, max_active_runs=3), False
    yield DAG("nightly_ny", schedule="30 2 * * *", start_date=pendulum.datetime(2026, 3, 6, tz="America/New_York"),
              catchup=True), False
    yield DAG("hourly", schedule=dt.timedelta(hours=1), start_date=START), False
    yield DAG("daily_macro", schedule="@daily", start_date=START,
              end_date=pendulum.datetime(2026, 12, 31, tz="UTC")), False
    yield DAG("daily_report_interval", schedule=CronDataIntervalTimetable("0 4 * * *", timezone="UTC"),
              start_date=START), False
    yield DAG("six_hour_interval", schedule=DeltaDataIntervalTimetable(dt.timedelta(hours=6)), start_date=START), False
    yield DAG("on_new_data", schedule=[Asset("s3://bucket/new")], start_date=START), False
    yield DAG("manual_only", schedule=None, start_date=START), False
    yield DAG("twice_daily", schedule=MultipleCronTriggerTimetable("0 9 * * *", "0 17 * * 1-5", timezone="UTC"),
              start_date=START), False
    yield DAG("weekly_paused", schedule="0 6 * * 1", start_date=START), True
    yield DAG("nightly_or_data", schedule=AssetOrTimeSchedule(
        timetable=CronTriggerTimetable("0 1 * * *", timezone="UTC"), assets=[Asset("s3://bucket/late")]),
        start_date=START), False


def models(dag, paused):
    sdag = DagSerialization.from_dict(DagSerialization.to_dict(dag))
    tt = sdag.timetable
    dm = DagModel(dag_id=sdag.dag_id, bundle_name="dags-folder", fileloc=f"/opt/airflow/dags/{sdag.dag_id}.py",
                  relative_fileloc=f"{sdag.dag_id}.py", owners="airflow")
    dm.is_paused, dm.is_stale, dm.has_import_errors, dm.has_task_concurrency_limits = paused, False, False, False
    dm.max_active_tasks, dm.max_active_runs = sdag.max_active_tasks, sdag.max_active_runs
    dm.max_consecutive_failed_dag_runs = sdag.max_consecutive_failed_dag_runs or 0
    dm.timetable_type, dm.timetable_summary, dm.timetable_description = tt.type_name, tt.summary, tt.description
    dm.timetable_partitioned, dm.timetable_periodic, dm.allowed_run_types = tt.partitioned, tt.periodic, None
    dm.tags = []
    dm.calculate_dagrun_date_fields(sdag, reference_run=None)
    listed = DAGResponse.model_validate(dm)
    for key, value in sdag.__dict__.items():  # routes/public/dags.py:235-237
        if not key.startswith("_") and not hasattr(dm, key):
            setattr(dm, key, value)
    dm.is_favorite, dm.active_runs_count = False, 0
    return sdag, listed, DAGDetailsResponse.model_validate(dm)


def runs(sdag, n=6):
    tt = coerce_to_core_timetable(sdag.timetable)
    if not tt.periodic or type(tt).__name__ in ("AssetTriggeredTimetable", "NullTimetable"):
        return None
    if type(tt).__name__ == "AssetOrTimeSchedule":
        tt = tt.timetable
    restriction = TimeRestriction(earliest=pendulum.instance(sdag.start_date), latest=None, catchup=True)
    out, last = [], None
    while len(out) < n:
        info = tt.next_dagrun_info(last_automated_data_interval=last, restriction=restriction)
        if info is None:
            break
        out.append(info.run_after.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"))
        last = info.data_interval
    return out


with time_machine.travel(dt.datetime(2026, 3, 1, 12, tzinfo=UTC), tick=False):
    details, listed, oracle = [], [], {}
    for dag, paused in dags():
        sdag, short, full = models(dag, paused)
        details.append(full.model_dump(mode="json"))
        listed.append(short)
        oracle[sdag.dag_id] = runs(sdag)
    collection = DAGCollectionResponse(dags=listed, total_entries=len(listed)).model_dump(mode="json")
    console = AirflowConsole()
    cli = [{k: console._normalize_data(v, "json") for k, v in listed[0].model_dump().items()}]
print(json.dumps({"details": details, "collection": collection, "cli": json.dumps(cli), "runs": oracle}))
'''

PREFECT_WORKER = r'''
import datetime as dt, json, sys
import yaml
from prefect.cli.deploy._config import _handle_deprecated_schedule_fields
from prefect.cli.deploy._schedules import _schedule_config_to_deployment_schedule
from prefect.client.schemas import schedules as client
from prefect.server.schemas import schedules as server
import asyncio

START = dt.datetime(2026, 3, 6, tzinfo=dt.timezone.utc)
doc = yaml.safe_load(open(sys.argv[1]))
out = []
for i, dep in enumerate(doc["deployments"]):
    entry = {"name": dep.get("name"), "schedules": []}
    try:
        dep = _handle_deprecated_schedule_fields(dep)
    except ValueError as exc:
        entry["error"] = str(exc)
        out.append(entry)
        continue
    for raw in dep.get("schedules") or []:
        try:
            made = _schedule_config_to_deployment_schedule(raw)["schedule"]
        except Exception as exc:
            why = exc.errors()[0]["msg"] if hasattr(exc, "errors") else str(exc)
            entry["schedules"].append({"error": f"{type(exc).__name__}: {why.splitlines()[0][:120]}"})
            continue
        kind = type(made).__name__
        dump = made.model_dump(mode="json")
        server_cls = getattr(server, kind)
        dates = asyncio.run(server_cls(**made.model_dump()).get_dates(n=5, start=START))
        entry["schedules"].append({"kind": kind, "schedule": dump,
                                   "dates_utc": [d.astimezone(dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
                                                 for d in dates]})
    out.append(entry)
print(json.dumps(out))
'''

CELERY_WORKER = r'''
import json, sys
from celery.schedules import crontab
doc = json.load(open(sys.argv[1]))
out = {}
for o in doc:
    if o.get("model") != "django_celery_beat.crontabschedule":
        continue
    f = o["fields"]
    try:
        c = crontab(minute=f["minute"], hour=f["hour"], day_of_week=f["day_of_week"], day_of_month=f["day_of_month"],
                    month_of_year=f["month_of_year"])
        out[str(o["pk"])] = {k: sorted(getattr(c, k)) for k in
                             ("minute", "hour", "day_of_week", "day_of_month", "month_of_year")}
    except ValueError as exc:
        out[str(o["pk"])] = {"error": str(exc).strip().splitlines()[0]}
print(json.dumps(out))
'''

DAGSTER_WORKER = r'''
import datetime as dt, json
import dagster as dg
from dagster._utils.schedules import cron_string_iterator
from dagster._core.definitions.schedule_definition import DefaultScheduleStatus

job = dg.define_asset_job("refresh", selection="*")

@dg.asset
def table():
    return 1

schedules = [
    dg.ScheduleDefinition(name="daily_refresh", cron_schedule="0 2 * * *", job=job),
    dg.ScheduleDefinition(name="berlin_morning", cron_schedule="30 6 * * 1-5", job=job,
                          execution_timezone="Europe/Berlin", default_status=DefaultScheduleStatus.RUNNING),
    dg.ScheduleDefinition(name="twice_a_day", cron_schedule=["0 9 * * *", "0 17 * * *"], job=job,
                          execution_timezone="America/New_York", default_status=DefaultScheduleStatus.RUNNING),
    dg.ScheduleDefinition(name="every_15_minutes", cron_schedule="*/15 * * * *", job=job),
]
defs = dg.Definitions(assets=[table], jobs=[job], schedules=schedules)
repo = defs.get_repository_def()
listed, results, ticks = [], [], {}
start = dt.datetime(2026, 3, 6, tzinfo=dt.timezone.utc).timestamp()
for s in repo.schedule_defs:
    text = s.cron_schedule if isinstance(s.cron_schedule, str) else ", ".join(s.cron_schedule)  # list.py:231-235
    listed.append({"name": s.name, "cron_schedule": text})  # source None: left out (exclude_none)
    results.append({"__typename": "Schedule", "name": s.name, "cronSchedule": str(s.cron_schedule),
                    "executionTimezone": s.execution_timezone if s.execution_timezone else "UTC",
                    "pipelineName": s.job_name,
                    "scheduleState": {"status": "RUNNING" if s.default_status == DefaultScheduleStatus.RUNNING
                                      else "STOPPED"}})
    zone = s.execution_timezone or "UTC"
    crons = [s.cron_schedule] if isinstance(s.cron_schedule, str) else list(s.cron_schedule)
    ticks[s.name] = {}
    for c in crons:
        it = cron_string_iterator(start, c, zone)
        ticks[s.name][c] = [next(it).astimezone(dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ") for _ in range(5)]
defs_json = {"assets": [{"asset_key": "table", "asset_key_parts": ["table"], "group_name": "default",
                          "dependency_keys": [], "kinds": [], "is_executable": True}],
             "asset_checks": [], "jobs": [{"name": "refresh"}], "resources": [], "schedules": listed, "sensors": []}
graphql = {"data": {"schedulesOrError": {"__typename": "Schedules", "results": results}}}
print(json.dumps({"defs": defs_json, "graphql": graphql, "ticks": ticks}))
'''


def run(python: Path, code: str, *args: str, env: dict | None = None) -> object:
    with tempfile.TemporaryDirectory() as home:
        full = {**os.environ, "AIRFLOW_HOME": home, "DAGSTER_HOME": home, "PREFECT_HOME": home,
                "AIRFLOW__CORE__LOAD_EXAMPLES": "False",
                "AIRFLOW__API__SECRET_KEY": "calsim-capture", **(env or {})}  # file_token signs with it
        done = subprocess.run([str(python), "-c", code, *args], capture_output=True, text=True, cwd="/", env=full)
    if done.returncode != 0:
        raise SystemExit(done.stderr[-4000:])
    return json.loads(done.stdout.strip().splitlines()[-1])


def write(path: Path, data: object, indent: int | None = 1) -> None:
    path.write_text((data if isinstance(data, str) else json.dumps(data, indent=indent)) + "\n")
    _wrote(path)


def _wrote(path: Path) -> None:
    print(f"wrote {path.relative_to(ROOT) if path.is_relative_to(ROOT) else path}", file=sys.stderr)


def write_lines(path: Path, data: dict) -> None:
    """A JSON object with one key a line (an oracle's answers: diffable, and short)."""
    body = ",\n".join(f" {json.dumps(k)}: {json.dumps(v, separators=(',', ':'))}" for k, v in data.items())
    path.write_text("{\n" + body + "\n}\n")
    _wrote(path)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=OUT, help="directory for the fixtures (default: %(default)s)")
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)

    got = run(ensure_venv(*AIRFLOW), AIRFLOW_WORKER)
    assert isinstance(got, dict)
    write(args.out / "airflow-3.3.2-dag-details.json", got["details"])
    write(args.out / "airflow-3.3.2-dags.json", got["collection"])
    write(args.out / "airflow-3.3.2-dags-details-cli.json", got["cli"])
    write_lines(args.out / "airflow-3.3.2-runs.json", got["runs"])

    write(args.out / "prefect-3.9.1-prefect.yaml.json",
          run(ensure_venv(*PREFECT), PREFECT_WORKER, str(OUT / "prefect.yaml"), env={"PREFECT_API_URL": ""}))
    crontabs = run(ensure_venv(*CELERY), CELERY_WORKER, str(OUT / "celery-dumpdata.json"))
    assert isinstance(crontabs, dict)
    write_lines(args.out / "celery-5.7.0-crontabs.json", crontabs)

    got = run(ensure_venv(*DAGSTER), DAGSTER_WORKER)
    assert isinstance(got, dict)
    write(args.out / "dagster-1.13.29-defs.json", json.dumps(got["defs"], indent=4))
    write(args.out / "dagster-1.13.29-graphql.json", got["graphql"])
    write_lines(args.out / "dagster-1.13.29-ticks.json", got["ticks"])
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
