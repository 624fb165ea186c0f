"""The ``prefect`` preset: Prefect 3.x deployment schedules (work in progress, issue 29).

Not yet exported from :mod:`calsim.presets`: cron and RRULE fire times and a
worker outage are measured against Prefect 3.9.1's own schedule classes and
run creation (``tests/presets/test_prefect.py`` over the fixtures
``tools/capture_prefect.py`` records); ``IntervalSchedule`` (days added in
local time) and a server outage (only the runs the scheduler service had
created run) need engine rules that are the next step, and are refused until
then.
"""

from __future__ import annotations

from typing import Literal, get_args

from ..errors import check_choice
from ..resolution import GapPolicy
from ..simulation.policy import Policy
from ._base import _int, _seconds, _settings, Difference, Preset, Wildcard

Kind = Literal["cron", "rrule", "interval"]
Down = Literal["server", "worker"]

MEASURED = "Prefect 3.9.1 (whenever 0.11.0, python-dateutil 2.9.0.post0)"
PF_SCHEDULES = "prefect/server/schemas/schedules.py (CronSchedule, RRuleSchedule, IntervalSchedule _get_dates)"
PF_SERVICE = "prefect/server/models/deployments.py:1012 (_generate_scheduled_flow_runs), services/scheduler.py"
PF_WORKER = "prefect/workers/base.py:1493-1510 (get_scheduled_flow_runs, oldest first)"
PF_DOC = "https://docs.prefect.io/v3/automate/add-schedules"


def prefect(*, kind: Kind = "cron", down: Down = "worker", min_runs: int = 3,
            min_scheduled_time: object = "1h") -> Preset:
    """Prefect 3.x: a deployment's schedule, the server's scheduler service and a worker polling for runs.

    ========================  ============================================  ======================================
    Prefect                   calsim                                        source (Prefect 3.9.1)
    ========================  ============================================  ======================================
    ``CronSchedule``          a gap time shifted forward (``gap="shift"``)  ``server/schemas/schedules.py:669-729``
                              and the first pass of a fold; a rule of       (``_get_dates_whenever``, ``fold=0``
                              every hour skips the gap                      at 691-695)
    ``RRuleSchedule``         dateutil in the zone: a gap time moves back   ``server/schemas/schedules.py:823-876``
                              (``gap="shift_backward"``: a daily 02:30 on   (``to_rrule`` on a local DTSTART),
                              the spring day runs at 01:30 EST), a fold's   941-943 (``astimezone``)
                              first pass
    worker down               every missed run at the worker's first poll,  ``workers/base.py`` 1493-1510
                              oldest first (``catchup="all"``, at once)
    server down               only the runs the scheduler service created   ``services/scheduler.py`` 170-196,
                              before it went down exist (``ahead_runs=      ``models/deployments.py`` 927-934
                              min_runs``, ``ahead=min_scheduled_time``);
                              they start at once at its return, the others
                              never exist (``skipped``/``catchup``)
    ========================  ============================================  ======================================

    ``IntervalSchedule``      an :class:`calsim.Every`; whole days are      ``IntervalSchedule._get_dates``
    (``kind="interval"``)     added on the zone's calendar (``clock=        (``_seek_calendar_interval``,
                              "local"``): a gap time moves forward and      ``add(days=1)``, 100-152, 533)
                              every later run stays moved (02:30 becomes
                              03:30 EDT for good); a fold's second pass
                              (Python 3.11's pendulum); hours are elapsed
    ========================  ============================================  ======================================

    ``min_runs=0``: the service still creates the first run at or past the
    look-ahead, but a deployment left with no future run after a server
    outage is never selected again (``services/scheduler.py:103-116``):
    calsim skips every later occurrence.

    Parameters (keyword-only)
    -------------------------
    kind : {"cron", "rrule", "interval"}, default "cron"
        The deployment's schedule class.
    down : {"worker", "server"}, default "worker"
        Which side an ``Outage`` stops: the worker (the server keeps
        creating runs) or the server (its scheduler service).
    min_runs : int >= 0, default 3
        ``PREFECT_SERVER_SERVICES_SCHEDULER_MIN_RUNS``.
    min_scheduled_time : duration, default "1h"
        ``PREFECT_SERVER_SERVICES_SCHEDULER_MIN_SCHEDULED_TIME``.

    >>> p = prefect()
    >>> p.gap, p.fold, p.policy.catchup
    ('shift', 'first', 'all')
    >>> prefect(kind="rrule").gap
    'shift_backward'
    """
    check_choice("kind", kind, get_args(Kind))
    check_choice("down", down, get_args(Down))
    _int("min_runs", min_runs, 0, 2**31)
    _seconds("min_scheduled_time", min_scheduled_time)
    server = down == "server"
    gap: GapPolicy = "shift_backward" if kind == "rrule" else "shift"
    notes: list = [
        Difference("a worker starts a run when its poll (every 10 s, 10 s prefetch) sees it; calsim at the "
                   "scheduled instant", topic="catch-up",
                   example="any rule: calsim 06:30:00, Prefect 06:29:50-06:30:10"),
    ]
    if kind == "interval":
        notes += [
            Difference("on Python 3.11 (pendulum) an hourly IntervalSchedule drops the second pass of the repeated "
                       "hour: its duplicate check compares wall times (schedules.py:550); calsim runs every hour of "
                       "elapsed time, as Prefect does on 3.13", topic="DST",
                       example="hourly from 00:30, New York 2026-11-01: Prefect 3.11 05:30Z, 07:30Z; calsim "
                       "05:30Z, 06:30Z, 07:30Z"),
            Difference("on Python 3.13 (whenever) a daily interval through a repeated time takes its first pass; "
                       "calsim takes the second, as on 3.11", topic="DST",
                       example="daily 02:30, Sydney 2026-04-05: Prefect 3.13 02:30 AEDT, calsim 02:30 AEST"),
        ]
    return Preset(
        name="prefect",
        policy=Policy(catchup="all", backlog="at_once", ahead_runs=min_runs if server else None,
                      ahead=min_scheduled_time if server else None),
        gap=gap, fold="second" if kind == "interval" else "first", tick="10s", notes=tuple(notes),
        every_clock="local_days" if kind == "interval" else None,
        sources=(PF_DOC, PF_SCHEDULES, PF_SERVICE, PF_WORKER),
        settings=_settings(kind=kind, down=down, min_runs=min_runs, min_scheduled_time=min_scheduled_time),
        wildcard=Wildcard("every_hour", "skip", "first") if kind == "cron" else None,
        measured=MEASURED,
    )
