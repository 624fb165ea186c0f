"""Importers: schedules from crontabs, Kubernetes CronJobs, iCalendar files, systemd timers and schedulers' exports.

======================================  =======================================  ==================
function                                reads                                    schedule id
======================================  =======================================  ==================
:func:`from_crontab`                    user and system crontabs, ``CRON_TZ``    ``<file>:<line>``
:func:`from_kubernetes`                 multi-document YAML, ``kind: CronJob``   ``namespace/name``
:func:`from_ical`                       ``.ics`` VEVENTs (RRULE, EXDATE, RDATE)  UID
:func:`from_systemd`                    ``.timer`` units, ``OnCalendar=``        unit name
:func:`from_eventbridge`                get-schedule JSON, CloudFormation        ``<GroupName>/<Name>``
                                        ``AWS::Scheduler::Schedule``
:func:`from_github_actions`             workflow ``on.schedule`` cron entries    ``<workflow>:<n>``
:func:`from_temporal`                   ``temporal schedule describe -o json``   schedule id or file
:func:`from_airflow`                    Airflow 3 DAG details JSON (REST API     ``dag_id``
                                        ``/api/v2/dags``, ``airflow dags ...``)
:func:`from_prefect`                    ``prefect.yaml`` deployment schedules    deployment name
:func:`from_celery_beat`                django-celery-beat ``dumpdata`` JSON     periodic task name
:func:`from_dagster`                    ``dg list defs --json``, GraphQL         schedule name
                                        ``schedulesOrError``
:func:`read_history`                    what ran: ``kubectl get jobs -o json``,  ``namespace/name``,
                                        ``journalctl -o json``, cron syslog,     unit, crontab
                                        CSV/Parquet (for ``reconcile``)          entry, column
:func:`fleet.load`                      calsim's TOML ``[[schedule]]`` tables    ``id =`` key
:func:`load_any` / :func:`import_any`   any of these or a TOML fleet file,       as above
                                        told apart by content
======================================  =======================================  ==================

Each importer returns an :class:`Imported`: a sequence of
:class:`calsim.Schedule` (pass it wherever a list of schedules goes) with
``sources`` (id -> :class:`Source`: file, line, document, UID), ``skipped``
(entries that are not schedules, with the reason) and ``presets`` (the
scheduler preset applied per id), and ``refused``: the items that could not
be read, each with its :class:`calsim.CalsimError` and one-line message
(file, line or document, field, problem), while the rest of the file is
imported. ``strict=True`` (every importer, :func:`load_any`,
:func:`import_any`) raises the first such error instead; a file where every
item is refused, or that cannot be parsed at all, raises.
:func:`load_any` returns a plain list and warns once per refused item.

>>> import calsim, pathlib
>>> from calsim.importers import from_crontab
>>> examples = pathlib.Path(calsim.__file__).parents[1] / "data" / "examples"
>>> jobs = from_crontab(examples / "crontab")
>>> [s.id for s in jobs][:2], str(jobs.sources["crontab:6"])
(['crontab:6', 'crontab:7'], 'crontab: crontab line 6')
>>> calsim.expand(jobs, "2026-03-02T00:00Z", "2026-03-03T00:00Z", release="2026f").height > 0
True
"""

from ._result import Imported, Skipped, Source
from .crontab import from_crontab
from .ical import from_ical
from .kubernetes import from_kubernetes
from .systemd import from_systemd
from .eventbridge import from_eventbridge
from .github import from_github_actions
from .temporal import from_temporal
from .airflow import from_airflow
from .prefect import from_prefect
from .celery_beat import from_celery_beat
from .dagster import from_dagster
from .history import detect_history, read_history
from .detect import detect_format, detect_text, import_any, load_any

__all__ = [
    "Imported",
    "Skipped",
    "Source",
    "from_crontab",
    "from_kubernetes",
    "from_ical",
    "from_systemd",
    "from_eventbridge",
    "from_github_actions",
    "from_temporal",
    "from_airflow",
    "from_prefect",
    "from_celery_beat",
    "from_dagster",
    "read_history",
    "detect_history",
    "load_any",
    "import_any",
    "detect_format",
    "detect_text",
]
