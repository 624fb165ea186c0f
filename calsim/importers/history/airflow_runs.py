"""Airflow DAG runs (REST API v2 ``GET /api/v2/dags/{dag_id}/dagRuns``, or ``airflow dags list-runs -o json``).

What is read
------------
One JSON document: the REST collection ``{"dag_runs": [...], "total_entries": N}``
(``dag_id`` ``~`` lists every DAG), one run of it (``GET .../dagRuns/{run_id}``),
or a bare list of runs: REST runs joined from several pages
(``jq -s '[.[].dag_runs[]]' page-*.json``) or what ``airflow dags list-runs
DAG -o json`` prints (``run_id`` for ``dag_run_id``, ``""`` for a null time, no
``run_type``: it is told from the ``run_id`` prefix as Airflow's
``DagRunType.from_run_id`` does, ``manual`` when there is none). A
collection whose ``total_entries`` is larger than its ``dag_runs`` is one page
(the API gives 50 runs a page, at most 100: ``[api] fallback_page_limit``,
``maximum_page_limit`` in ``config_templates/config.yml``) and is refused, not read as the
whole history: its missing runs would show as missing occurrences.

=====================  ================================================================================
history column         DAG run field
=====================  ================================================================================
``schedule_id``        ``dag_id``, as :func:`~calsim.importers.from_airflow` names a DAG's schedule;
                       a DAG of several crons (its ``<dag_id>:<n>``): reconcile gives each run to the
                       cron due last at or before its scheduled time
``scheduled_utc``      ``scheduled`` and ``backfill`` runs: ``run_after``, else ``data_interval_end``,
                       else ``logical_date``; null for the runs nothing scheduled (below)
``started_utc``        ``start_date``; a run without one, or ``queued``, has not run and is not read
``finished_utc``       ``end_date``
``status``             ``success`` -> ``succeeded``, ``failed`` -> ``failed``, ``running`` ->
                       ``running`` (``queued`` runs are not read)
``origin``             ``<file> item <i>`` (the i-th run of ``dag_runs`` or of the list)
=====================  ================================================================================

**The scheduled instant is ``run_after``:** when the run was due, the instant
calsim's ledger calls ``due_utc``. The scheduler creates a run with the
timetable's ``DagRunInfo.run_after`` (``jobs/scheduler_job_runner.py:2507-2530``),
which is the cron time for a trigger timetable (``timetables/trigger.py:109``:
the interval ``[run_after - interval, run_after]``, empty by default, so the
logical date is ``run_after``) and the data interval's END for a
data-interval timetable (``timetables/interval.py:131``,
``DagRunInfo.interval``: ``timetables/base.py:159-171``), whose
``logical_date`` is the interval's START (``base.py:176-183``): a day early
for a daily ``CronDataIntervalTimetable``. A backfill run gets the
``run_after`` of the interval it fills (``models/backfill.py:441-456``), so it
keeps its scheduled time (reconcile then shows it as a run of that occurrence:
a duplicate, or outside the compared window). ``data_interval_end`` and
``logical_date`` stand in only when ``run_after`` is absent (a hand-made list;
the REST model requires it).

**Runs nothing scheduled** -- ``run_type`` ``manual`` (the UI, ``airflow dags
trigger``, the REST API), ``operator_triggered`` (``TriggerDagRunOperator``),
``asset_triggered`` and ``asset_materialization`` -- are read with a null
``scheduled_utc``, as the Kubernetes reader reads a Job made by ``kubectl
create job --from=cronjob/...``: reconcile pairs such a run with the latest
unpaired occurrence due before it started (within ``max_shift``), else counts
it extra. Their ``run_after`` is the trigger time (an asset run's
``logical_date`` is null, ``scheduler_job_runner.py:2645-2655``), never a
schedule's.

**Not kept:** the data interval (the history schema has no column for it:
reconcile compares instants), ``queued_at``, ``conf``, ``note``, the DAG
version and the partition fields. A cleared run that ran again shows the
times of its last attempt (``DagRun.set_state`` resets ``start_date``:
``models/dagrun.py:593-602``); a ``queued`` run is skipped even with a
``start_date`` (a backfill run gets one when it is created, before it runs:
``models/backfill.py:454``).

Verified against Apache Airflow 3.3.2 (paths under ``site-packages/airflow/``):
``api_fastapi/core_api/datamodels/dag_run.py:162-186`` (``DAGRunResponse``:
``dag_run_id``, ``dag_id``, ``logical_date``, ``queued_at``, ``start_date``,
``end_date``, ``data_interval_start``, ``data_interval_end``, ``run_after``
(required), ``run_type``, ``state``...) and ``:189-221``
(``DAGRunCollectionResponse``: ``dag_runs``, ``total_entries``...);
``utils/state.py:97-109`` (``DagRunState``: queued, running, success,
failed); ``utils/types.py:25-33`` (``DagRunType``: backfill, scheduled,
manual, operator_triggered, asset_triggered, asset_materialization) and
``:46-52`` (``from_run_id``); ``cli/commands/dag_command.py:777-809``
(``list-runs``: its fields, ``""`` for null times). The fixtures in
``tests/fixtures/history/`` are that code's output (``tools/capture_histories.py``).

Read as one document (at most the document cap, 64 MiB by default), at most
``max_rows`` runs, nesting at most 200 levels; a run whose field is of the
wrong type, a time that is not RFC 3339 with an offset (or past year 9999),
a state or run type Airflow does not have: one :class:`~calsim.errors.InputError`
naming the run (its index and id), the field, the value and what is allowed.

>>> import json
>>> from calsim.importers.history import read_history
>>> run = {"dag_run_id": "scheduled__2026-03-05T06:00:00+00:00", "dag_id": "daily_report", "run_type": "scheduled",
...        "state": "success", "logical_date": "2026-03-04T06:00:00Z", "data_interval_start": "2026-03-04T06:00:00Z",
...        "data_interval_end": "2026-03-05T06:00:00Z", "run_after": "2026-03-05T06:00:00Z",
...        "start_date": "2026-03-05T06:00:06Z", "end_date": "2026-03-05T06:03:00Z"}
>>> read_history(json.dumps({"dag_runs": [run], "total_entries": 1}) + "\\n").select("scheduled_utc", "status").row(0)
(datetime.datetime(2026, 3, 5, 6, 0, tzinfo=zoneinfo.ZoneInfo(key='UTC')), 'succeeded')
"""

from __future__ import annotations

import datetime as dt
import json
import re

import polars as pl

from ...errors import InputError, did_you_mean
from .._history_input import Source, whole_text
from ._rows import Caps, HistoryReader, cut, frame, instant, item_rows

__all__ = ["READER", "RUN_STATES", "RUN_TYPES", "SCHEDULED_TYPES"]

#: ``DagRunState`` (``utils/state.py:106-109``) -> the history's status (``queued``: not started, not read).
RUN_STATES: dict[str, str | None] = {"queued": None, "running": "running", "success": "succeeded",
                                     "failed": "failed"}
#: ``DagRunType`` (``utils/types.py:28-33``), in its order.
RUN_TYPES = ("backfill", "scheduled", "manual", "operator_triggered", "asset_triggered", "asset_materialization")
#: The run types a timetable dated: the others have no scheduled time.
SCHEDULED_TYPES = ("scheduled", "backfill")
# The fields that may date a scheduled run, the first present wins (module docstring).
_SCHEDULED_FIELDS = ("run_after", "data_interval_end", "logical_date")
_FIRST_KEY = re.compile(r'\s*\{\s*"(\w{1,40})"\s*:')


def _dag_runs(text: str, label: str, max_rows: int) -> list[dict[str, object]]:
    from .._yaml import load_json

    where = f"airflow dag runs: {label}"
    doc = load_json(text, where)
    items: object
    if isinstance(doc, dict) and "dag_runs" in doc:
        items = doc["dag_runs"]
        if not isinstance(items, list):
            raise InputError(f"{where}: dag_runs: expected a list of DAG runs, got {cut(items)}")
        total = doc.get("total_entries")
        if total is not None and (isinstance(total, bool) or not isinstance(total, int)):
            raise InputError(f"{where}: total_entries: expected a whole number or null, got {cut(total)}")
        if total is not None and total > len(items):
            raise InputError(f"{where}: one page of {len(items):,} of {total:,} DAG runs (total_entries); fetch "
                             "every page (?limit=100&offset=0, 100, ...) and join their runs into one list, e.g. "
                             "jq -s '[.[].dag_runs[]]' page-*.json")
    elif isinstance(doc, dict) and _is_run(doc):
        items = [doc]
    elif isinstance(doc, list):
        items = doc
    else:
        raise InputError(f"{where}: expected the object GET /api/v2/dags/~/dagRuns returns "
                         "({\"dag_runs\": [...]}), a list of DAG runs or one run, got "
                         f"{type(doc).__name__ if not isinstance(doc, dict) else 'an object without dag_runs'}")
    return item_rows(items, max_rows, label, "DAG runs", where, _dag_run)


def _dag_run(run: object, where: str, origin: str) -> dict[str, object] | None:
    """The row of one DAG run (None: it has not started)."""
    if not isinstance(run, dict):
        raise InputError(f"{where}: expected a DAG run object, got {cut(run)}")
    key = "dag_run_id" if "dag_run_id" in run else "run_id"
    run_id = run.get(key)
    if run_id is not None and not isinstance(run_id, str):
        raise InputError(f"{where}: {key}: expected the run's id (text), got {cut(run_id)}")
    if run_id:
        where = f"{where} ({run_id if len(run_id) <= 80 else cut(run_id)})"
    dag_id = run.get("dag_id")
    if not isinstance(dag_id, str) or not dag_id.strip():
        raise InputError(f"{where}: dag_id: expected the DAG's id (text, not empty), got {cut(dag_id)}")
    run_type = run.get("run_type")
    if run_type is None:  # `airflow dags list-runs` prints none: Airflow's DagRunType.from_run_id
        run_type = next((t for t in RUN_TYPES if (run_id or "").startswith(t + "__")), "manual")
    elif not isinstance(run_type, str) or run_type not in RUN_TYPES:
        raise InputError(f"{where}: run_type: {cut(run_type)} is not a DAG run type "
                         f"(allowed: {', '.join(RUN_TYPES)})"
                         f"{did_you_mean(run_type, RUN_TYPES) if isinstance(run_type, str) else ''}")
    state = run.get("state")
    if not isinstance(state, str) or state not in RUN_STATES:
        raise InputError(f"{where}: state: {cut(state)} is not a DAG run state (allowed: {', '.join(RUN_STATES)})"
                         f"{did_you_mean(state, RUN_STATES) if isinstance(state, str) else ''}")
    if state == "queued":
        return None  # waiting to run (a queued backfill run already has a start_date: models/backfill.py:454)
    started = _time(run, "start_date", where)
    if started is None:
        return None  # never started (marked success or failed while queued)
    scheduled = None
    if run_type in SCHEDULED_TYPES:
        scheduled = next((t for t in (_time(run, f, where) for f in _SCHEDULED_FIELDS) if t is not None), None)
    return {"schedule_id": dag_id, "scheduled_utc": scheduled, "started_utc": started,
            "finished_utc": _time(run, "end_date", where), "status": RUN_STATES[state], "origin": origin}


def _time(run: dict, key: str, where: str) -> dt.datetime | None:
    """An instant of the run (None: absent, null, or ``""`` as ``airflow dags list-runs`` prints a null)."""
    value = run.get(key)
    if value is None or value == "":
        return None
    return instant(value, f"{where}: {key}")


def _is_run(obj: object) -> bool:
    return isinstance(obj, dict) and isinstance(obj.get("dag_id"), str) and ("dag_run_id" in obj or "run_id" in obj)


def _detect(head: bytes, text: str) -> bool:
    """A JSON object whose first key is ``dag_runs`` (or ``dag_run_id``), or that parses with them, or a list
    whose first item is a DAG run (after the journal, whose lines are objects too; before kubectl's object)."""
    body = text.lstrip("\ufeff \t\r\n")
    if body.startswith("["):
        try:
            first, _ = json.JSONDecoder().raw_decode(body[1:].lstrip())
        except (ValueError, RecursionError):  # a first run longer than the MiB looked at: its first key
            m = _FIRST_KEY.match(body[1:])
            return m is not None and m[1] in ("dag_run_id", "dag_id")
        return _is_run(first)
    if not body.startswith("{"):
        return False
    m = _FIRST_KEY.match(body)
    if m is not None and m[1] in ("dag_runs", "dag_run_id"):
        return True
    try:
        doc = json.loads(body)
    except (ValueError, RecursionError):
        return False  # (longer than the MiB looked at, and its first key is another's)
    return isinstance(doc, dict) and (isinstance(doc.get("dag_runs"), list) or _is_run(doc))


def _read(src: Source, caps: Caps) -> pl.DataFrame:
    return frame(_dag_runs(whole_text(src, caps.doc), src.label, caps.rows))


READER = HistoryReader("airflow", _detect, _read)
