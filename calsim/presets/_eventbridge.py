"""The ``eventbridge`` preset (see :mod:`calsim.presets`)."""

from __future__ import annotations

from ..simulation.policy import Policy
from ._base import _int, _settings, Preset

__all__ = ["eventbridge"]

EB_DST = "https://repost.aws/knowledge-center/eventbridge-scheduler-adjust-dst"
EB_WINDOW = "https://docs.aws.amazon.com/scheduler/latest/UserGuide/managing-schedule-flexible-time-windows.html"
EB_RETRY = "https://docs.aws.amazon.com/scheduler/latest/APIReference/API_RetryPolicy.html"
EB_WINDOW_API = "https://docs.aws.amazon.com/scheduler/latest/APIReference/API_FlexibleTimeWindow.html"


def eventbridge(*, flexible_window_minutes: int | None = None, maximum_event_age_seconds: int = 86400,
                maximum_retry_attempts: int = 185) -> Preset:
    """AWS EventBridge Scheduler, ``cron()`` schedules.

    ===============================  ===============================================  ============
    EventBridge setting              calsim                                           source
    ===============================  ===============================================  ============
    ``FlexibleTimeWindow``           ``jitter`` = ``MaximumWindowInMinutes``          EB_WINDOW
    (``OFF``; FLEXIBLE 1..1440 min)  (invoked within the window after the time)
    ``MaximumEventAgeInSeconds``     ``max_lateness`` (60..86400; undelivered older   EB_RETRY
                                     events are dropped; which side of the limit
                                     an exact tie falls on is undocumented:
                                     ``limit_edge="on_time"`` assumed)
    ``MaximumRetryAttempts``         kept in ``settings`` (0..185): retries are a     EB_RETRY
                                     scenario's ``Failures``
    (missed invocations)             ``catchup="all"``, ``overlap="allow"``           undocumented
    DST                              ``gap="skip"``, ``fold="first"``                 EB_DST
    precision                        ``tick="1min"``                                  EB_DST
    ===============================  ===============================================  ============

    Parameters (keyword-only, the API's names in snake case)
    --------------------------------------------------------
    flexible_window_minutes : int 1..1440 or None, default None (``OFF``)
    maximum_event_age_seconds : int 60..86400, default 86400
    maximum_retry_attempts : int 0..185, default 185

    Sources: https://repost.aws/knowledge-center/eventbridge-scheduler-adjust-dst (EB_DST),
    https://docs.aws.amazon.com/scheduler/latest/UserGuide/managing-schedule-flexible-time-windows.html (EB_WINDOW),
    https://docs.aws.amazon.com/scheduler/latest/APIReference/API_RetryPolicy.html (EB_RETRY).

    >>> from calsim import presets
    >>> p = presets.eventbridge(flexible_window_minutes=15)
    >>> p.policy.jitter_us // 60_000_000, p.policy.max_lateness_us // 3_600_000_000, p.gap, p.fold
    (15, 24, 'skip', 'first')
    """
    window = _int("flexible_window_minutes", flexible_window_minutes, 1, 1440, none=True)
    age = _int("maximum_event_age_seconds", maximum_event_age_seconds, 60, 86400)
    _int("maximum_retry_attempts", maximum_retry_attempts, 0, 185)
    notes = [
        "a managed service: a calsim outage stands for an unreachable target, retried until the event age",
        "retries (exponential backoff, base undocumented) are not set here: use Scenario(failures=Failures("
        "max_attempts=maximum_retry_attempts + 1, ...))",
        "defaults 86400 s / 185 retries follow the user guide (unverified in ANCHORS); overlap is undocumented, "
        "assumed 'allow'",
        "where in the flexible window an invocation lands is not documented; calsim spreads it in [0, window)",
        "rate(n days) adds 24 h durations (local hour drifts across DST): use calsim.Every, not a cron",
    ]
    return Preset(
        name="eventbridge",
        policy=Policy(catchup="all", max_lateness=age, overlap="allow", jitter=None if window is None else window * 60),
        gap="skip", fold="first", tick="1min", notes=tuple(notes),
        sources=(EB_DST, EB_WINDOW, EB_RETRY, EB_WINDOW_API),
        settings=_settings(flexible_window_minutes=flexible_window_minutes,
                           maximum_event_age_seconds=maximum_event_age_seconds,
                           maximum_retry_attempts=maximum_retry_attempts),
    )
