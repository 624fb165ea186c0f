"""The ``temporal`` preset (see :mod:`calsim.presets`)."""

from __future__ import annotations

import datetime as dt
from typing import Literal, get_args

from ..simulation.policy import Catchup, Overlap as PolicyOverlap, Policy
from ..errors import check_choice
from ._base import _seconds, _settings, Preset, US

__all__ = ["temporal"]

Overlap = Literal["SKIP", "BUFFER_ONE", "BUFFER_ALL", "CANCEL_OTHER", "TERMINATE_OTHER", "ALLOW_ALL"]
AfterOutage = Literal["earliest", "latest"]

TEMPORAL_DOC = "https://docs.temporal.io/schedule"
TEMPORAL_CODE = "https://github.com/temporalio/temporal/blob/main/service/worker/scheduler/workflow.go"
TEMPORAL_API = "https://github.com/temporalio/api/blob/master/temporal/api/schedule/v1/message.proto"
TEMPORAL_PR = "https://github.com/temporalio/temporal/pull/4332"


_TEMPORAL_OVERLAP: dict[str, PolicyOverlap] = {"SKIP": "skip", "BUFFER_ONE": "buffer_one", "BUFFER_ALL": "buffer_all",
                     "CANCEL_OTHER": "cancel_other", "TERMINATE_OTHER": "cancel_other", "ALLOW_ALL": "allow"}


def temporal(*, overlap: Overlap = "SKIP", catchup_window: object = "365d", jitter: object = None,
             after_outage: AfterOutage = "earliest") -> Preset:
    """Temporal Schedules (``SchedulePolicies`` and ``ScheduleSpec.jitter``).

    ==========================  ===============================================  ===============
    Temporal setting            calsim                                           source
    ==========================  ===============================================  ===============
    ``catchup_window`` (365 d)  ``max_lateness`` (min 10 s, lower is clamped;    TEMPORAL_PR,
                                exactly this late still starts, ``>``:           TEMPORAL_CODE
                                ``limit_edge="on_time"``)
    ``overlap`` ``SKIP``        ``overlap="skip"``; after an outage the          TEMPORAL_CODE
                                earliest in-window miss runs:
                                ``catchup="earliest"``
    ``BUFFER_ONE``/``_ALL``     ``buffer_one``/``buffer_all``, ``catchup="all"``  TEMPORAL_CODE
    ``CANCEL_OTHER``,           ``cancel_other``, ``catchup="latest"``            TEMPORAL_CODE
    ``TERMINATE_OTHER``
    ``ALLOW_ALL``               ``allow``, ``catchup="all"``                      TEMPORAL_API
    ``jitter``                  ``jitter`` (deterministic, capped at the next)   TEMPORAL_DOC
    DST                         ``gap="skip"``, ``fold="both"``                  TEMPORAL_API
    ==========================  ===============================================  ===============

    ``after_outage`` only concerns ``SKIP``: ``"earliest"`` is what the current
    server code does (``processBuffer`` starts the first buffered action);
    ``"latest"`` is the other reading ANCHORS records, where the most recent
    missed action runs.

    Parameters (keyword-only, ``SchedulePolicies``' names in snake case)
    --------------------------------------------------------------------
    overlap : {"SKIP", "BUFFER_ONE", "BUFFER_ALL", "CANCEL_OTHER", "TERMINATE_OTHER", "ALLOW_ALL"}, default "SKIP"
    catchup_window : duration ("10s", "PT1H", seconds, timedelta), default "365d"
    jitter : duration or None, default None
    after_outage : {"earliest", "latest"}, default "earliest"

    Sources: https://docs.temporal.io/schedule (TEMPORAL_DOC),
    https://github.com/temporalio/temporal/blob/main/service/worker/scheduler/workflow.go (TEMPORAL_CODE),
    https://github.com/temporalio/api/blob/master/temporal/api/schedule/v1/message.proto (TEMPORAL_API),
    https://github.com/temporalio/temporal/pull/4332 (TEMPORAL_PR).

    >>> from calsim import presets
    >>> p = presets.temporal()
    >>> p.policy.catchup, p.policy.overlap, p.policy.max_lateness_us // (86400 * 10**6), p.gap, p.fold
    ('earliest', 'skip', 365, 'skip', 'both')
    """
    check_choice("overlap", overlap, get_args(Overlap))
    window = _seconds("catchup_window", catchup_window)
    jit = _seconds("jitter", jitter, none=True)
    check_choice("after_outage", after_outage, get_args(AfterOutage))
    assert window is not None
    notes = [
        "DST: calendar specs match wall-clock fields literally: a time the day lacks does not fire, a repeated "
        "one fires twice",
        "cron: Temporal ANDs day-of-month and day-of-week; calsim expands crons with the Vixie OR rule",
        "catch-up buffer cap (1000 actions, overflow dropped) is not modelled",
        "catchup_window default is 365 d since server 1.20.3 (60 s before; the Go SDK comment saying one minute "
        "is stale)",
    ]
    if window < 10 * US:
        notes.append(f"catchup_window={catchup_window!r} is below Temporal's minimum and is clamped to 10 s")
        window = 10 * US
    catchup: Catchup = {"SKIP": "earliest" if after_outage == "earliest" else "latest", "CANCEL_OTHER": "latest",
               "TERMINATE_OTHER": "latest"}.get(overlap, "all")
    if overlap == "SKIP" and after_outage == "latest":
        notes.append("after_outage='latest': the most recent missed action runs; the current server code starts "
                     "the earliest (after_outage='earliest')")
    elif overlap != "SKIP" and after_outage != "earliest":
        notes.append(f"after_outage={after_outage!r} has no effect with overlap={overlap!r}")
    if overlap == "BUFFER_ONE":
        notes.append("BUFFER_ONE after an outage: Temporal starts the earliest miss and keeps the next one "
                     "buffered; calsim gets this from catchup='all' + overlap='buffer_one' only while the first "
                     "run is still going")
    if overlap == "TERMINATE_OTHER":
        notes.append("TERMINATE_OTHER -> 'cancel_other': calsim does not tell terminate (start now) from cancel "
                     "(start after the cancellation completes)")
    return Preset(
        name="temporal",
        policy=Policy(catchup=catchup, max_lateness=dt.timedelta(microseconds=window),
                      overlap=_TEMPORAL_OVERLAP[overlap], jitter=dt.timedelta(microseconds=jit) if jit else None),
        gap="skip", fold="both", tick="1s", notes=tuple(notes),
        sources=(TEMPORAL_DOC, TEMPORAL_CODE, TEMPORAL_API, TEMPORAL_PR),
        settings=_settings(overlap=overlap, catchup_window=catchup_window, jitter=jitter, after_outage=after_outage),
    )
