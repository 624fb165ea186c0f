"""Kubernetes Jobs (``kubectl get jobs -A -o json``, a ``List`` or one ``Job``): the runs of Jobs a CronJob owns.

The scheduled time is the ``batch.kubernetes.io/cronjob-scheduled-timestamp``
annotation, else the Job name's ``-<minutes>`` suffix; the id is
``namespace/cronjob`` as :func:`~calsim.importers.from_kubernetes` names it.
"""

from __future__ import annotations

import datetime as dt

import polars as pl

from ...errors import InputError, shown
from .._history_input import Source, whole_text
from ._rows import EPOCH, Caps, HistoryReader, cut, frame, instant, item_rows

__all__ = ["READER"]

# kubernetes/pkg/controller/cronjob/utils.go getJobFromTemplate2: the annotation is
# scheduledTime.In(<spec.timeZone>).Format(time.RFC3339), an instant with its offset;
# getJobName names the Job "<cronjob>-<scheduledTime.Unix()/60>".
_K8S_SCHEDULED = "batch.kubernetes.io/cronjob-scheduled-timestamp"
_K8S_MANUAL = "cronjob.kubernetes.io/instantiate"  # "manual": kubectl create job --from=cronjob/...
_LAST_MINUTE = (dt.datetime(9999, 12, 31, 23, 59, tzinfo=dt.timezone.utc) - EPOCH) // dt.timedelta(minutes=1)


def _kubernetes(text: str, label: str, max_rows: int) -> list[dict[str, object]]:
    from .._yaml import load_json, load_one

    where = f"kubernetes jobs: {label}"
    # kubectl get jobs -o yaml prints the same object as -o json
    doc = load_json(text, where) if text.lstrip()[:1] in ("{", "[") else load_one(text, where)
    if not isinstance(doc, dict):
        raise InputError(f"kubernetes jobs: {label}: expected the object `kubectl get jobs -o json` prints, "
                         f"got {type(doc).__name__}")
    items: object
    if doc.get("kind") == "Job":
        items = [doc]
    else:
        items = doc.get("items")
        if not isinstance(items, list):
            raise InputError(f"kubernetes jobs: {label}: items: expected a list of Jobs, got {cut(items)}")
    return item_rows(items, max_rows, label, "items", f"kubernetes jobs: {label}", _job)


def _job(job: object, where: str, origin: str) -> dict[str, object] | None:
    """The run of one Job (None: not a scheduled run)."""
    if not isinstance(job, dict):
        raise InputError(f"{where}: expected a Job object, got {cut(job)}")
    if job.get("kind", "Job") != "Job":
        return None
    meta, status = job.get("metadata") or {}, job.get("status") or {}
    if not isinstance(meta, dict) or not isinstance(status, dict):
        raise InputError(f"{where}: metadata and status must be objects")
    name = meta.get("name")
    where = f"{where} ({cut(name)[1:-1] if len(name) <= 80 else cut(name)})" if isinstance(name, str) else where
    owners = meta.get("ownerReferences") or []
    if not isinstance(owners, list):
        raise InputError(f"{where}: metadata.ownerReferences: expected a list, got {cut(owners)}")
    cron = [o for o in owners if isinstance(o, dict) and o.get("kind") == "CronJob"]
    if not cron:
        return None  # a Job no CronJob created is not a scheduled run
    owner = cron[0].get("name")
    ns = meta.get("namespace", "default")
    if not isinstance(owner, str) or not owner or not isinstance(ns, str):
        raise InputError(f"{where}: metadata: expected a namespace and an owner CronJob name, got "
                         f"{cut(ns)} and {cut(owner)}")
    ann = meta.get("annotations") or {}
    if not isinstance(ann, dict):
        raise InputError(f"{where}: metadata.annotations: expected an object, got {cut(ann)}")
    scheduled = None
    if _K8S_SCHEDULED in ann:
        scheduled = instant(ann[_K8S_SCHEDULED], f"{where}: annotation {_K8S_SCHEDULED}")
    elif ann.get(_K8S_MANUAL) != "manual" and isinstance(name, str) and name.startswith(owner + "-"):
        suffix = name[len(owner) + 1:]
        if suffix.isascii() and suffix.isdigit():  # before Kubernetes 1.28 the name alone tells the minute
            if len(suffix) > 10 or int(suffix) > _LAST_MINUTE:
                what = f"of {len(suffix):,} digits" if len(suffix) > 20 else repr(suffix)
                raise InputError(f"{where}: metadata.name: the minute suffix {what} after {shown(owner + '-')} is "
                                 f"past 9999-12-31 (allowed: minutes since 1970, 0..{_LAST_MINUTE:,}, as the CronJob "
                                 "controller names its Jobs)")
            scheduled = EPOCH + dt.timedelta(minutes=int(suffix))
    start = status.get("startTime", meta.get("creationTimestamp"))
    if start is None:
        return None  # created, never started (a suspended Job): not a run yet
    started = instant(start, f"{where}: status.startTime")
    conds = status.get("conditions") or []
    if not isinstance(conds, list):
        raise InputError(f"{where}: status.conditions: expected a list, got {cut(conds)}")
    true: dict[str, dict] = {}
    for k, c in enumerate(conds):
        if not isinstance(c, dict):
            continue
        kind = c.get("type")
        if not isinstance(kind, str):
            raise InputError(f"{where}: status.conditions[{k}].type: expected a condition type such as 'Complete' "
                             f"or 'Failed', got {cut(kind)}")
        if c.get("status") == "True":
            true.setdefault(kind, c)
    state, finished = ("running" if status.get("active") else None), None
    if "Complete" in true or "SuccessCriteriaMet" in true:
        state = "succeeded"
    elif "Failed" in true or "FailureTarget" in true:
        state = "failed"
        last = (true.get("Failed") or true.get("FailureTarget") or {}).get("lastTransitionTime")
        if last is not None:
            finished = instant(last, f"{where}: status.conditions[Failed].lastTransitionTime")
    if status.get("completionTime") is not None:
        finished = instant(status["completionTime"], f"{where}: status.completionTime")
    return {"schedule_id": f"{ns}/{owner}", "scheduled_utc": scheduled, "started_utc": started,
            "finished_utc": finished, "status": state, "origin": origin}


def _detect(head: bytes, text: str) -> bool:
    return text.lstrip("\ufeff \t\r\n").startswith("{")  # (after the journal, whose lines are objects too)


def _read(src: Source, caps: Caps) -> pl.DataFrame:
    return frame(_kubernetes(whole_text(src, caps.doc), src.label, caps.rows))


READER = HistoryReader("kubernetes", _detect, _read)
