"""Prefect flow runs (``prefect flow-run ls -o json``, or the REST API's ``POST /api/flow_runs/filter``).

What is read
------------
One JSON document: a list of flow runs, as ``prefect flow-run ls -o json``
prints it (``FlowRun.model_dump(mode="json")`` of each, ``cli/flow_run.py:312-315``;
mind its ``--limit``, 15 by default: ``:214-217``) and ``POST
/api/flow_runs/filter`` returns it (``server/api/flow_runs.py:600``, at most
its ``limit`` a call); the object ``POST /api/flow_runs/paginate`` returns
(``{"results": [...], "count": N, ...}``, ``server/schemas/responses.py:667-672``),
refused when ``count`` is larger than its ``results`` (one page: its missing
runs would show as missing occurrences); or one flow run (``prefect flow-run
inspect ID -o json``). Told apart by content when the first run (in the
first MiB) parses with ``flow_id`` and ``expected_start_time``; an empty
list, or one whose first run is longer than a MiB, needs ``kind="prefect"``.

=====================  ================================================================================
history column         flow run field
=====================  ================================================================================
``schedule_id``        ``deployment_name`` when the run has one (not a Prefect field: see below), else
                       ``deployment_id``; a run of no deployment is not read
``scheduled_utc``      ``expected_start_time`` of an ``auto_scheduled`` run; null for the others
``started_utc``        ``start_time``; a run without one has not run and is not read
``finished_utc``       ``end_time``
``status``             ``state_type`` (else ``state.type``): ``COMPLETED`` -> ``succeeded``;
                       ``FAILED``, ``CRASHED``, ``CANCELLED`` -> ``failed``; ``RUNNING``,
                       ``CANCELLING``, ``PAUSED``, and ``SCHEDULED`` / ``PENDING`` after a start
                       (``AwaitingRetry``, a retry) -> ``running``
``origin``             ``<file> item <i>`` (the i-th run of the list or of ``results``)
=====================  ================================================================================

**Schedule ids.** A flow run names its deployment by id only
(``deployment_id``; the server's flow run has no deployment name,
``server/schemas/responses.py:176`` ``FlowRunResponse``), while Prefect's
schedules are named by their deployment's ``name``
(:func:`~calsim.importers.from_prefect`: ``<name>``, or ``<name>:<n>`` for
each of several schedules). So a run's id is its ``deployment_id`` unless
the run carries a ``deployment_name``, which an analyst adds from
``prefect deployment ls -o json`` (each deployment's ``id`` and ``name``),
e.g.::

    prefect deployment ls -o json > deployments.json
    prefect flow-run ls --limit 100000 -o json > runs.json
    jq --slurpfile d deployments.json '($d[0] | map({(.id): .name}) | add) as $n
        | map(. + {deployment_name: $n[.deployment_id]})' runs.json > history.json

or renames afterwards (``calsim reconcile --map <deployment id>=<name>``).
The runs of a deployment with several schedules all get the deployment's
name, and reconcile gives each to the schedule ``<name>:<n>`` due last at or
before its scheduled time (:func:`calsim.store.reconcile.reconcile`, as for
a systemd timer's calendars); the schedule that made a run is also its
``created_by.id`` (``type`` ``"SCHEDULE"``,
``server/models/deployments.py:974-978``), a DeploymentSchedule id this
reader does not read.

**The scheduled instant** of a run the scheduler service made
(``auto_scheduled``: ``server/models/deployments.py:965``) is its
``expected_start_time``, the schedule's date (``:973``), kept when the run is
late or rescheduled (the server sets it only when it is unset:
``server/orchestration/global_policy.py:389-414``);
``next_scheduled_start_time`` moves with those and is not read. A run not
``auto_scheduled`` (``prefect deployment run``, the UI, an automation, a
``run_deployment`` call) is read with a null ``scheduled_utc``, as the
Kubernetes reader reads a Job made by ``kubectl create job
--from=cronjob/...``: reconcile pairs it with the latest unpaired occurrence
due before it started (within ``max_shift``), else counts it extra.

**Runs that did not run** are not read: no ``start_time`` (``SCHEDULED``,
including a ``Late`` one -- a SCHEDULED state named ``Late``,
``states.py:944-954`` -- or ``PENDING``), and a ``CANCELLED`` run whose
``run_count`` is 0 (cancelled before it started: the server gives it a
``start_time`` all the same when it enters a final state,
``global_policy.py:256-291``, and counts runs on entering RUNNING,
``:318-341``). A ``FAILED`` or ``CRASHED`` run that never started (its
infrastructure failed) is read as ``failed``: an attempt was made.

**Not kept:** ``name``, ``parameters``, ``tags``, ``run_count``, the run
times, the work pool and queue, ``idempotency_key``.

Verified against Prefect 3.9.1 (paths under ``site-packages/prefect/``):
``client/schemas/objects.py:570-710`` (``FlowRun``: ``name`` 571,
``deployment_id`` 582, ``run_count`` 632, ``expected_start_time`` 635,
``start_time`` 643, ``end_time`` 646, ``auto_scheduled`` 664, ``state_type``
705, ``state_name`` 708) and ``:89-99`` (``StateType``: SCHEDULED, PENDING,
RUNNING, COMPLETED, FAILED, CANCELLED, CRASHED, PAUSED, CANCELLING). The
fixtures in ``tests/fixtures/history/`` are that code's output
(``tools/capture_histories.py``).

Read as one document (at most the document cap, 64 MiB by default), at most
``max_rows`` runs, nesting at most 200 levels; a run whose field is of the
wrong type, a time that is not RFC 3339 with an offset (or past year 9999),
a state type Prefect does not have: one :class:`~calsim.errors.InputError`
naming the run (its index and name), the field, the value and what is allowed.

>>> import json
>>> from calsim.importers.history import read_history
>>> run = {"id": "0195f0a0-0000-7000-8000-000000000009", "name": "amber-heron",
...        "flow_id": "0193a5c2-1000-7000-8000-000000000001", "deployment_id": "0193a5c2-2000-7000-8000-000000000002",
...        "auto_scheduled": True, "expected_start_time": "2026-03-08T07:30:00Z", "run_count": 1,
...        "start_time": "2026-03-08T07:30:04Z", "end_time": "2026-03-08T07:42:00Z", "state_type": "COMPLETED",
...        "state_name": "Completed"}
>>> read_history(json.dumps([{**run, "deployment_name": "nightly-etl"}]) + "\\n").select(
...     "schedule_id", "scheduled_utc", "status").row(0)
('nightly-etl', datetime.datetime(2026, 3, 8, 7, 30, tzinfo=zoneinfo.ZoneInfo(key='UTC')), 'succeeded')
"""

from __future__ import annotations

import datetime as dt
import json
import re

import polars as pl

from ...errors import InputError, did_you_mean
from .._history_input import Source, whole_text
from ._rows import Caps, HistoryReader, cut, frame, instant, item_rows

__all__ = ["READER", "STATE_TYPES"]

#: ``StateType`` (``client/schemas/objects.py:89-99``) -> the history's status.
STATE_TYPES: dict[str, str] = {"SCHEDULED": "running", "PENDING": "running", "RUNNING": "running",
                               "COMPLETED": "succeeded", "FAILED": "failed", "CANCELLED": "failed",
                               "CRASHED": "failed", "PAUSED": "running", "CANCELLING": "running"}
_RESULTS = re.compile(r'\s*\{\s*"results"\s*:\s*\[')


def _flow_runs(text: str, label: str, max_rows: int) -> list[dict[str, object]]:
    from .._yaml import load_json

    where = f"prefect flow runs: {label}"
    doc = load_json(text, where)
    items: object
    if isinstance(doc, dict) and "results" in doc:
        items = doc["results"]
        if not isinstance(items, list):
            raise InputError(f"{where}: results: expected a list of flow runs, got {cut(items)}")
        count = doc.get("count")
        if count is not None and (isinstance(count, bool) or not isinstance(count, int)):
            raise InputError(f"{where}: count: expected a whole number or null, got {cut(count)}")
        if count is not None and count > len(items):
            raise InputError(f"{where}: one page of {len(items):,} of {count:,} flow runs (count); fetch every "
                             "page and join their runs into one list, e.g. jq -s '[.[].results[]]' page-*.json")
    elif isinstance(doc, dict) and _is_flow_run(doc):
        items = [doc]
    elif isinstance(doc, list):
        items = doc
    else:
        raise InputError(f"{where}: expected the list `prefect flow-run ls -o json` prints, the object "
                         "POST /api/flow_runs/paginate returns or one flow run, got "
                         f"{type(doc).__name__ if not isinstance(doc, dict) else 'an object without results'}")
    return item_rows(items, max_rows, label, "flow runs", where, _flow_run)


def _flow_run(run: object, where: str, origin: str) -> dict[str, object] | None:
    """The row of one flow run (None: it did not run, or belongs to no deployment)."""
    if not isinstance(run, dict):
        raise InputError(f"{where}: expected a flow run object, got {cut(run)}")
    name = run.get("name")
    if isinstance(name, str) and name:
        where = f"{where} ({name if len(name) <= 80 else cut(name)})"
    deployment = run.get("deployment_id")
    if deployment is None:
        return None  # a flow called outside any deployment: no schedule's run
    if not isinstance(deployment, str) or not deployment.strip():
        raise InputError(f"{where}: deployment_id: expected the deployment's id (a UUID as text) or null, "
                         f"got {cut(deployment)}")
    sid = run.get("deployment_name")
    if sid is None:
        sid = deployment
    elif not isinstance(sid, str) or not sid.strip():
        raise InputError(f"{where}: deployment_name: expected the deployment's name (text, not empty) or null, "
                         f"got {cut(sid)}")
    auto = run.get("auto_scheduled", False)
    if not isinstance(auto, bool):
        raise InputError(f"{where}: auto_scheduled: expected true or false, got {cut(auto)}")
    state = run.get("state_type")
    if state is None and isinstance(run.get("state"), dict):
        state = run["state"].get("type")
    if state is not None and (not isinstance(state, str) or state not in STATE_TYPES):
        raise InputError(f"{where}: state_type: {cut(state)} is not a state type "
                         f"(allowed: {', '.join(STATE_TYPES)}, or null)"
                         f"{did_you_mean(state, STATE_TYPES) if isinstance(state, str) else ''}")
    count = run.get("run_count")
    if count is not None and (isinstance(count, bool) or not isinstance(count, int) or count < 0):
        raise InputError(f"{where}: run_count: expected a whole number from 0, got {cut(count)}")
    started = _time(run, "start_time", where)
    if started is None or (state == "CANCELLED" and count == 0):
        return None  # not started; or cancelled before it ran (the server still sets a start_time)
    return {"schedule_id": sid, "scheduled_utc": _time(run, "expected_start_time", where) if auto else None,
            "started_utc": started, "finished_utc": _time(run, "end_time", where),
            "status": STATE_TYPES[state] if state is not None else None, "origin": origin}


def _time(run: dict, key: str, where: str) -> dt.datetime | None:
    value = run.get(key)
    return None if value is None else instant(value, f"{where}: {key}")


def _is_flow_run(obj: object) -> bool:
    return isinstance(obj, dict) and "flow_id" in obj and "expected_start_time" in obj


def _detect(head: bytes, text: str) -> bool:
    """A JSON list whose first item is a flow run, the paginate object, or one flow run (after the journal and
    the Airflow runs; before kubectl's object)."""
    body = text.lstrip("\ufeff \t\r\n")
    if body.startswith("["):
        start = 1
    elif body.startswith("{"):
        try:
            doc = json.loads(body)
        except (ValueError, RecursionError):  # longer than the MiB looked at: the paginate object's first run
            m = _RESULTS.match(body)
            if m is None:
                return False
            start = m.end()
        else:
            return _is_flow_run(doc) or (isinstance(doc, dict) and isinstance(doc.get("results"), list)
                                         and bool(doc["results"]) and _is_flow_run(doc["results"][0]))
    else:
        return False
    try:
        first, _ = json.JSONDecoder().raw_decode(body[start:].lstrip())
    except (ValueError, RecursionError):
        return False
    return _is_flow_run(first)


def _read(src: Source, caps: Caps) -> pl.DataFrame:
    return frame(_flow_runs(whole_text(src, caps.doc), src.label, caps.rows))


READER = HistoryReader("prefect", _detect, _read)
