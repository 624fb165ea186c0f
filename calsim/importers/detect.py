"""Load schedules from any supported file, telling the format by its content.

=========================================================  ===============================
content                                                    read by
=========================================================  ===============================
Parquet (``PAR1``): a schedules table                       :func:`calsim.importers.schedule_table.read`
``[[schedule]]`` or ``[scenario]`` (TOML fleet/scenario)    :func:`calsim.importers.fleet.read`
``BEGIN:VCALENDAR``                                        :func:`~calsim.importers.from_ical`
a ``[Timer]`` section (systemd ``.timer`` unit)            :func:`~calsim.importers.from_systemd`
JSON with ``"model": "django_celery_beat.``              :func:`~calsim.importers.from_celery_beat`
(``manage.py dumpdata``)
JSON with ``"cron_schedule"``, ``"cronSchedule"`` or       :func:`~calsim.importers.from_dagster`
``"schedulesOrError"`` (Dagster)
JSON with ``"dag_id"`` and ``"timetable_summary"``         :func:`~calsim.importers.from_airflow`
(Airflow DAG details)
``ScheduleExpression``, ``AWS::Scheduler::Schedule`` or   :func:`~calsim.importers.from_eventbridge`
Terraform ``"aws_scheduler_schedule"`` (HCL or JSON)
JSON with ``structuredCalendar``/``interval``/...          :func:`~calsim.importers.from_temporal`
(a Temporal ScheduleSpec)
YAML with a top-level ``deployments:`` (``prefect.yaml``)  :func:`~calsim.importers.from_prefect`
YAML with ``on:`` and ``jobs:`` (a GitHub workflow)        :func:`~calsim.importers.from_github_actions`
a YAML ``kind:`` or ``apiVersion:`` key at line start      :func:`~calsim.importers.from_kubernetes`
anything else                                              :func:`~calsim.importers.from_crontab`
=========================================================  ===============================

The four JSON kinds are told apart before Temporal's (whose ``"interval"``
key a ``dumpdata`` of interval schedules has too), and only in text that
starts with ``{`` or ``[``; ``prefect.yaml`` before the GitHub and
Kubernetes YAML (neither has a top-level ``deployments:``).

The file name plays no part (``.yaml``, ``.ics`` or none), except that
``/etc/crontab`` and ``cron.d`` files are read in the system format. Options
(``zone=`` for crontabs, manifests without ``timeZone`` and floating
iCalendar times) are passed on to the importer that takes them.

>>> import calsim, pathlib
>>> import calsim.importers as imp
>>> examples = pathlib.Path(calsim.__file__).parents[1] / "data" / "examples"
>>> [s.id for s in imp.load_any(examples / "cronjobs.yaml")]
['billing/nightly-invoices', 'ops/db-backup']
>>> [imp.detect_format(examples / f) for f in ("calendar.ics", "crontab", "fleet.toml")]
['ical', 'crontab', 'fleet']
>>> imp.detect_format(examples / "calendar.ics")
'ical'
"""

from __future__ import annotations

import re
import warnings
from pathlib import Path

from ..schedule import Schedule
from ._result import Imported, read_input
from .crontab import from_crontab
from .fleet import read as read_fleet
from .ical import from_ical
from .kubernetes import from_kubernetes
from .eventbridge import from_eventbridge
from .github import from_github_actions
from .systemd import from_systemd
from .temporal import from_temporal
from .airflow import from_airflow
from .celery_beat import from_celery_beat
from .dagster import from_dagster
from .prefect import from_prefect
from .schedule_table import is_table, read as read_table

__all__ = ["load_any", "import_any", "detect_format", "detect_text"]

# A fleet file has [[schedule]] tables; a scenario file has [scenario] (and names its fleet).
_FLEET = re.compile(r"^\s*(\[\[\s*schedule\s*\]\]|\[\s*scenario\s*\])", re.MULTILINE)
_YAML_KIND = re.compile(r"^(kind|apiVersion)\s*:", re.MULTILINE)
_TIMER = re.compile(r"^\s*\[Timer\]\s*$", re.MULTILINE)
_VCALENDAR = re.compile(r"^\s*BEGIN:VCALENDAR\s*$", re.MULTILINE | re.IGNORECASE)
_EVENTBRIDGE = re.compile(r'AWS::Scheduler::Schedule|^\s*"?ScheduleExpression"?\s*:|"aws_scheduler_schedule"',
                          re.MULTILINE)
_TEMPORAL = re.compile(r'"(structuredCalendar|structured_calendar|cronString|cron_string|interval|'
                       r'excludeStructuredCalendar|timezoneName)"')
_CELERY = re.compile(r'"model"\s*:\s*"django_celery_beat\.')
_DAGSTER = re.compile(r'"(cron_schedule|cronSchedule|schedulesOrError)"\s*:')
_AIRFLOW = re.compile(r'"dag_id"\s*:')
_AIRFLOW_TT = re.compile(r'"timetable_summary"\s*:')
_PREFECT = re.compile(r"^deployments\s*:", re.MULTILINE)
_GH_ON = re.compile(r"^[\"']?on[\"']?\s*:", re.MULTILINE)
_GH_JOBS = re.compile(r"^jobs\s*:", re.MULTILINE)


def detect_text(text: str) -> str:
    """``"fleet"``, ``"ical"``, ``"systemd"``, ``"celery_beat"``, ``"dagster"``, ``"airflow"``,
    ``"eventbridge"``, ``"temporal"``, ``"prefect"``, ``"github"``, ``"kubernetes"`` or ``"crontab"`` for a
    file's content.

    See the module docstring for what decides.
    """
    if _VCALENDAR.search(text):
        return "ical"
    if _TIMER.search(text) and not _FLEET.search(text):
        return "systemd"
    if _FLEET.search(text):
        return "fleet"
    if text.lstrip()[:1] in ("{", "["):
        if _CELERY.search(text):
            return "celery_beat"
        if _DAGSTER.search(text):
            return "dagster"
        if _AIRFLOW.search(text) and _AIRFLOW_TT.search(text):
            return "airflow"
    if _EVENTBRIDGE.search(text):
        return "eventbridge"
    if text.lstrip().startswith("{") and _TEMPORAL.search(text):
        return "temporal"
    if _PREFECT.search(text):
        return "prefect"
    if _GH_ON.search(text) and _GH_JOBS.search(text):
        return "github"
    if _YAML_KIND.search(text):
        return "kubernetes"
    return "crontab"


def detect_format(path: str | Path) -> str:
    """The format of the file at ``path`` (its content decides; ``"schedules"``: a Parquet schedules table)."""
    if is_table(path):
        return "schedules"
    text, _, _ = read_input(Path(path), "load", None)
    return detect_text(text)


def import_any(path: str | Path, *, zone: str = "UTC", strict: bool = False,
               tz_in_schedule: str = "auto") -> Imported:
    """Read any supported file into an :class:`~calsim.importers.Imported` (schedules with provenance).

    ``strict=False`` (default): a bad item (crontab line, CronJob, VEVENT,
    ``OnCalendar=`` line, workflow cron entry, EventBridge schedule,
    Temporal calendar, Airflow DAG, Prefect schedule, periodic task, Dagster
    schedule) is refused and listed in ``Imported.refused``, the
    rest imported; ``strict=True``: the first bad item raises.
    ``tz_in_schedule`` is passed to :func:`~calsim.importers.from_kubernetes`;
    ``zone`` to the readers that take one (for Airflow the server's default
    zone, for Celery beat its ``timezone``, for Dagster a schedule's without
    ``execution_timezone``).
    A fleet file is read table by table (:func:`calsim.importers.fleet.read`): a bad
    ``[[schedule]]`` table is refused and listed, the rest imported (``strict=True``: the
    first raises); a scenario file (``[scenario]``) is read whole by :func:`calsim.load_scenario`.
    """
    p = Path(path)
    if is_table(p):  # (binary: told by its magic bytes, before any text is read)
        return read_table(p, strict=strict)
    text, _, _ = read_input(p, "load", None)
    fmt = detect_text(text)
    if fmt == "ical":
        return from_ical(p, zone=zone, strict=strict)
    if fmt == "kubernetes":
        return from_kubernetes(p, zone=zone, strict=strict, tz_in_schedule=tz_in_schedule)
    if fmt == "systemd":
        return from_systemd(p, zone=zone, strict=strict)
    if fmt == "eventbridge":
        return from_eventbridge(p, strict=strict)
    if fmt == "temporal":
        return from_temporal(p, strict=strict)
    if fmt == "github":
        return from_github_actions(p, strict=strict)
    if fmt == "airflow":
        return from_airflow(p, zone=zone, strict=strict)
    if fmt == "prefect":
        return from_prefect(p, strict=strict)
    if fmt == "celery_beat":
        return from_celery_beat(p, zone=zone, strict=strict)
    if fmt == "dagster":
        return from_dagster(p, zone=zone, strict=strict)
    if fmt == "crontab":
        return from_crontab(p, zone=zone, strict=strict)
    return read_fleet(p, strict=strict)  # (a bad [[schedule]] table is refused per item, as in the other readers)


def load_any(path: str | Path, *, zone: str = "UTC", strict: bool = False,
             tz_in_schedule: str = "auto") -> list[Schedule]:
    """The schedules of any supported file (see the module docstring), as a list.

    ``zone`` is the zone of crontab lines before any ``CRON_TZ=``, of
    CronJobs without ``timeZone``, of floating iCalendar times and of
    ``OnCalendar=`` expressions without a zone (the machine's); a fleet
    file names its own zones. ``strict`` and ``tz_in_schedule`` as in
    :func:`import_any`. Refused items are left out of the list and each is
    reported with a ``UserWarning`` (its one-line message names file, line
    or document and field), so a partial import is never silent; use
    :func:`import_any` to get them as data (``Imported.refused``) and to
    keep provenance.
    """
    imported = import_any(path, zone=zone, strict=strict, tz_in_schedule=tz_in_schedule)
    for refused in imported.refused:
        warnings.warn(f"refused: {refused.reason}", UserWarning, stacklevel=2)
    return list(imported)
