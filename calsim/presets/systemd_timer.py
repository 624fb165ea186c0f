"""The ``systemd`` preset (see :mod:`calsim.presets`)."""

from __future__ import annotations

import datetime as dt

from ..simulation.policy import Policy
from ._base import _bool, _seconds, _settings, _tick_text, Preset

__all__ = ["systemd"]

SYSTEMD = "https://www.freedesktop.org/software/systemd/man/latest/systemd.timer.html"
TIMER_C = "https://github.com/systemd/systemd/blob/v252/src/core/timer.c"


def systemd(*, persistent: bool = False, accuracy_sec: object = "1min", randomized_delay_sec: object = 0,
            fixed_random_delay: bool = False, defer_reactivation: bool = False) -> Preset:
    """systemd ``.timer`` with ``OnCalendar=``.

    ==========================  ====================================================  =======
    timer setting               calsim                                                source
    ==========================  ====================================================  =======
    ``Persistent=`` (false)     ``catchup="skip"``; true: ``"latest"`` (fires once    SYSTEMD
                                immediately if an elapse was missed)
    (suspend)                   ``suspend_catchup="latest"``: an elapse missed        SYSTEMD
                                while suspended fires once on resume
    (boot)                      ``down_is_missed``, ``recovery_wake=False``: the      TIMER_C
                                next elapse is strictly after boot, and the
                                Persistent catch-up lands at the first
                                AccuracySec point after boot
    ``AccuracySec=`` (1 min)    ``tick`` (elapse at a host-stable point in the        SYSTEMD
                                window)
    ``RandomizedDelaySec=``     ``jitter``                                            SYSTEMD
    (unit still active)         ``overlap="buffer_one"``: no second instance, the     SYSTEMD
                                missed elapse fires once when it ends;
                                ``DeferReactivation=``: ``"skip"``
    DST                         **not documented**: assumed ``gap="skip"``,           SYSTEMD
                                ``fold="first"``
    ==========================  ====================================================  =======

    Parameters (keyword-only, the ``[Timer]`` settings in snake case)
    -----------------------------------------------------------------
    persistent : bool, default False
    accuracy_sec : duration ("1min", "PT30S", seconds, timedelta; 0 allowed), default "1min"
    randomized_delay_sec : duration, default 0
    fixed_random_delay : bool, default False
    defer_reactivation : bool, default False

    Source: https://www.freedesktop.org/software/systemd/man/latest/systemd.timer.html (SYSTEMD).

    >>> from calsim import presets
    >>> p = presets.systemd(persistent=True, randomized_delay_sec="5min")
    >>> p.policy.catchup, p.policy.jitter_us // 10**6, p.tick, p.gap, p.fold
    ('latest', 300, '1min', 'skip', 'first')
    """
    _bool("persistent", persistent)
    accuracy = _seconds("accuracy_sec", accuracy_sec)
    delay = _seconds("randomized_delay_sec", randomized_delay_sec)
    _bool("fixed_random_delay", fixed_random_delay)
    _bool("defer_reactivation", defer_reactivation)
    assert accuracy is not None and delay is not None
    notes = [
        "DST (measured with systemd-analyze 252): a wall time that does not exist is skipped and a repeated one "
        "fires in its first pass only, for a timer running throughout; a timer that boots, resumes or triggers "
        "inside the repeated hour fires the second-pass times after that instant too (timer.c: the next elapse "
        "follows its base), which fold='first' does not give",
        "the Persistent= catch-up at boot is still delayed by RandomizedDelaySec= in systemd; calsim starts it at "
        "the first wake-up",
        "RandomizedDelaySec= longer than the period swallows the elapses inside the delay in systemd; calsim caps "
        "each delay before the next elapse and runs them all",
        "an outage is modelled as the timer being inactive (machine off); elapses during a suspend collapse into "
        "one activation on resume, which persistent=True gives",
        "AccuracySec= places the elapse at a host-specific stable point in the window; tick=AccuracySec aligns "
        "wake-ups to the Unix epoch instead",
        "a Persistent= catch-up at a boot exactly on an AccuracySec= point fires at the boot instant in systemd; "
        "calsim starts it at the next tick",
    ]
    if fixed_random_delay:
        notes.append("fixed_random_delay=True: systemd uses one offset per machine and timer; calsim draws a "
                     "deterministic offset per occurrence")
    if accuracy == 0:
        notes.append("accuracy_sec=0: systemd's minimum is 1 µs; tick set to 1s")
    return Preset(
        name="systemd",
        policy=Policy(catchup="latest" if persistent else "skip", overlap="skip" if defer_reactivation else "buffer_one",
                      jitter=dt.timedelta(microseconds=delay) if delay else None, suspend_catchup="latest",
                      down_is_missed=True, recovery_wake=False),
        gap="skip", fold="first", tick=_tick_text(accuracy) if accuracy else "1s", notes=tuple(notes),
        sources=(SYSTEMD, TIMER_C),
        settings=_settings(persistent=persistent, accuracy_sec=accuracy_sec, randomized_delay_sec=randomized_delay_sec,
                           fixed_random_delay=fixed_random_delay, defer_reactivation=defer_reactivation),
    )
