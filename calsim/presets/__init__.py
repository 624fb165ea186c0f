"""Presets: real schedulers' documented behaviour in calsim's vocabulary.

Each function takes one scheduler's **own** setting names and defaults and
returns a :class:`Preset`: a :class:`~calsim.simulation.policy.Policy`, the
DST ``gap``/``fold`` policies that reproduce the scheduler, a suggested
``tick`` (how often it wakes), ``notes`` saying what is undocumented or
approximated, and the ``sources`` read. :meth:`Preset.apply` puts it on
schedules. Each preset's docstring tabulates its settings with the docs or
code they follow; where docs and current code disagree, a parameter offers
both and defaults to what the code does.

============  =====================  ===============  ==============================  ===================
preset        DST gap                DST fold         after downtime (``catchup``)    overlap
============  =====================  ===============  ==============================  ===================
kubernetes    as robfig v3's         as ``Next``      latest, deadline excludes its   allow/buffer_latest
              ``Next`` walks         walks            own edge; docs: >100 stuck      /cancel_other
              (``robfig:`` rules,
              ``"scheduler"``)
temporal      skip                   both             earliest (SKIP), 365 d window   six policies
apscheduler   shift; skip if every   both             memory store: none after a      skip (1 instance)
              hour (3.11 code)                        restart; suspend or persistent:
                                                      latest (coalesce) or all in
                                                      turn, expired past the grace
quartz        skip                   both             RAM store: none after a         allow / buffer_one
                                                      restart; paused or JDBC: the    (/ buffer_all)
                                                      misfire instruction
systemd       skip                   first            skip; ``Persistent``: latest;   buffer_one
                                                      a suspend: latest
cronie        fixed-time: next_valid fixed: first     skip (the restart minute        allow
              wildcard: skip         wildcard: both   too); a suspend of <= 3 h
                                                      (wildcard: 5 min): all
eventbridge   skip                   first            all, expired after event age    allow (undoc.)
airflow       shift; skip if every   second; both if  catchup=False: latest (stale    buffer_all up to
              hour                   every hour       stored run: and the oldest);    max_active_runs
                                                      True: all; unpause catches up
dagster       next_valid (hours      second (hours    the newest tick only            allow
              1-3)                   1-3)
prefect       cron: shift; rrule:    first            worker down: all; server down:  allow
              shift_backward                          only the runs created ahead
celery_beat   5.7: shift, 5.4:       first            file kept: latest; lost: none;  allow
              next_valid                              intervals count from it
============  =====================  ===============  ==============================  ===================

Jitter: ``[0, jitter)`` for temporal, ``jitter`` seconds for apscheduler,
``RandomizedDelaySec`` for systemd, the flexible window for eventbridge; none
for kubernetes, quartz and cronie.

Each preset is compared with its scheduler's own code in the tests, the real
code wherever it runs here (``tests/oracles/``); the differences that remain
are in its ``notes`` and, with the version they were measured against and an
example, in :func:`differences`.

Cron parsers differ too (robfig's ``*/n`` day rule and 0..6 weekdays,
Temporal's AND of days, APScheduler 3.x's 0 = Monday). A preset whose
scheduler reads cron its own way says so in its ``dialect``: the
``kubernetes`` preset rewrites cron rules as ``robfig:`` rules (refusing, as
the API server does, what robfig cannot read); the others expand with the
Vixie rules of :mod:`calsim.rules.cron`, and their ``notes`` say where that
differs.

>>> import calsim
>>> from calsim import presets
>>> job = calsim.Schedule("backup", "America/New_York", "2026-03-01T00:00", "30 2 * * *")
>>> [p.apply(job).gap for p in (presets.kubernetes(), presets.cronie())]
['scheduler', 'next_valid']
>>> f = calsim.expand([presets.cronie().apply(job)], "2026-03-08T00:00Z", "2026-03-09T00:00Z", release="2026f")
>>> row = f.select("nominal_local", "due_utc", "notes").row(0)  # run right after the change, as cron does
>>> row[0], row[1].isoformat(), row[2]
(datetime.datetime(2026, 3, 8, 2, 30), '2026-03-08T07:00:00+00:00', ['dst_gap_next_valid'])
"""

from __future__ import annotations

from ._base import SCHEDULER_FIELDS, Difference, Preset, Wildcard  # noqa: F401  (SCHEDULER_FIELDS: what apply() sets)
from .differences import differences
from ._kubernetes import kubernetes
from ._temporal import temporal
from ._temporal import Overlap as TemporalOverlap  # noqa: F401  (the temporal importer's overlap values)
from ._apscheduler import apscheduler
from ._quartz import quartz
from ._systemd import systemd
from ._cronie import cronie
from ._eventbridge import eventbridge
from ._eventbridge import EB_DST, EB_RETRY, EB_WINDOW, EB_WINDOW_API  # noqa: F401  (cited by the tests)
from ._airflow import airflow
from ._dagster import dagster
from ._prefect import prefect
from ._celery_beat import celery_beat

# The preset functions' names, in the table's order (a fleet file's ``preset = { name = ... }`` takes these).
SCHEDULERS = ("kubernetes", "temporal", "apscheduler", "quartz", "systemd", "cronie", "eventbridge", "airflow",
              "dagster", "prefect", "celery_beat")

__all__ = ["Preset", "Wildcard", "Difference", "differences", "SCHEDULERS", "kubernetes", "temporal", "apscheduler",
           "quartz", "systemd", "cronie", "eventbridge", "airflow", "dagster", "prefect", "celery_beat"]
