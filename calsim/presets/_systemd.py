"""The ``systemd`` preset (see :mod:`calsim.presets`)."""

from __future__ import annotations

import datetime as dt

from ..simulation.policy import Policy
from ._base import _bool, _seconds, _settings, _tick_text, Difference, Preset

__all__ = ["systemd"]

SYSTEMD = "https://www.freedesktop.org/software/systemd/man/latest/systemd.timer.html"
TIMER_C = "https://github.com/systemd/systemd/blob/v252/src/core/timer.c"
CALENDARSPEC = "https://github.com/systemd/systemd/blob/v252/src/shared/calendarspec.c"
NEGATIVE_DST_FIX = "https://github.com/systemd/systemd/pull/36897"
MEASURED = ("systemd 252.38 (Debian 12 252.38-1~deb12u1: calendarspec.c with the negative-DST fix of systemd PR "
            "#36897) on glibc 2.36 (Debian 2.36-9+deb12u14), through systemd-analyze calendar; a line-by-line port "
            "of timer.c for runs")


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
    DST (``OnCalendar=``)       **not documented**: ``gap``/``fold="scheduler"``,     CALSPEC
                                systemd's own walk (``calendar_spec_next_usec``
                                over glibc's ``mktime``, ported): a missing time
                                is skipped, a repeated one fires in its first
                                pass, and next to some changes more is lost (see
                                :mod:`calsim.rules.oncalendar`)
    DST (other rules)           ``gap="skip"``, ``fold="first"`` (``fallback``)
    ==========================  ====================================================  =======

    Parameters (keyword-only, the ``[Timer]`` settings in snake case)
    -----------------------------------------------------------------
    persistent : bool, default False
    accuracy_sec : duration ("1min", "PT30S", seconds, timedelta; 0 allowed), default "1min"
    randomized_delay_sec : duration, default 0
    fixed_random_delay : bool, default False
    defer_reactivation : bool, default False

    Sources: https://www.freedesktop.org/software/systemd/man/latest/systemd.timer.html (SYSTEMD),
    https://github.com/systemd/systemd/blob/v252/src/shared/calendarspec.c (CALSPEC).

    >>> from calsim import presets
    >>> p = presets.systemd(persistent=True, randomized_delay_sec="5min")
    >>> p.policy.catchup, p.policy.jitter_us // 10**6, p.tick, p.gap, p.fold, p.fallback
    ('latest', 300, '1min', 'scheduler', 'scheduler', ('skip', 'first'))
    >>> import calsim
    >>> s = p.apply(calsim.Schedule("t", "Europe/Dublin", "2026-03-01T00:00", "OnCalendar=*-*-* 1..3:30"))
    >>> f = calsim.expand(s, "2026-03-29T00:00Z", "2026-03-29T04:00Z", release="2026f")
    >>> [(str(r["nominal_local"].time()), r["notes"]) for r in f.iter_rows(named=True)]
    [('01:30:00', ['dst_gap_skipped']), ('02:30:00', ['dst_lost:systemd']), ('03:30:00', ['dst_lost:systemd'])]
    """
    _bool("persistent", persistent)
    accuracy = _seconds("accuracy_sec", accuracy_sec)
    delay = _seconds("randomized_delay_sec", randomized_delay_sec)
    _bool("fixed_random_delay", fixed_random_delay)
    _bool("defer_reactivation", defer_reactivation)
    assert accuracy is not None and delay is not None
    notes: list = [
        Difference(
            "calsim walks an OnCalendar= timer from its previous elapse throughout; systemd computes each next "
            "elapse from the timer's base (timer.c: the last trigger, else the activation), so a timer that boots, "
            "resumes or triggers inside the repeated hour fires the second-pass times after that instant too, and "
            "one whose walk failed (systemd's 'Infinite loop in calendar calculation': calsim's rows "
            "dst_stuck:systemd to the end) starts again at the next boot in systemd", topic="DST",
            example="*:00/15 in America/New_York booted 2026-11-01 01:10 EST: systemd 01:15, 01:30, 01:45 EST; "
                    "calsim none; *:50 in Pacific/Chatham stops at 2026-09-27 02:45"),
        Difference(
            "systemd's walk reads the clock past its next elapse (a repetition run past its unit: hours 0/14 look "
            "at the next day's 04:00, months 1/5 at the next April) and goes on with that time's tm_isdst; across "
            "a DST change this can move the walk back until it fails and the timer stops, which calsim reproduces "
            "(OnCalendar.walk_lookahead, dst_stuck:systemd); systemd-analyze asked from a later base walks afresh "
            "where calsim's timer stays stopped", topic="DST",
            example="*-*-* 0/14:00 in America/New_York: no elapse after 2026-03-07 14:00 EST, in both"),
        Difference(
            "the walk assumes glibc's mktime() last answered this timer's own previous elapse; PID 1 shares that "
            "memory between timers, and it decides the pass of a repeated hour whose two passes have the same "
            "tm_isdst (a change of standard time) for a walk from inside it", topic="DST",
            example="*:0/15 in Africa/Casablanca (release 2026f) from 2026-09-20 01:15 +01"),
        Difference(
            "rules systemd's walk is not ported for (sub-second OnCalendar= elapses, cron or RRULE rules) resolve "
            "DST as gap='skip', fold='first' (the preset's fallback): systemd's walk gives that in most zones, but "
            "not next to a backward-moving gap (Europe/Dublin, Morocco), an hour that starts inside a gap (Pacific/"
            "Chatham) or a ~ day after a fall-back", topic="DST",
            example="*-*-* 02,03:40..50:00/7.5 in Pacific/Chatham: systemd loses 2026-09-27 03:45-03:50 +1345"),
        Difference(
            "a trailing local zone abbreviation (EST while the machine is in New York) forces tm_isdst in systemd; "
            "calsim reads it as the IANA zone of that name (EST, CET) and refuses others", topic="grammar",
            example="OnCalendar=daily EST"),
        Difference(
            "the Persistent= catch-up at boot is still delayed by RandomizedDelaySec= in systemd; calsim starts it "
            "at the first wake-up", topic="catch-up",
            example="*:00/15, off 09:07-10:07, delay 10min: systemd 10:15 (and 10:15 swallowed), calsim 10:08"),
        Difference(
            "RandomizedDelaySec= longer than the period swallows the elapses inside the delay in systemd; calsim "
            "caps each delay before the next elapse and runs them all", topic="jitter",
            example="*:00/15 with RandomizedDelaySec=40min: systemd about half the elapses, calsim all"),
        "an outage is modelled as the timer being inactive (machine off); elapses during a suspend collapse into "
        "one activation on resume, which persistent=True gives",
        Difference(
            "AccuracySec= places the elapse at a host-specific stable point in the window; tick=AccuracySec aligns "
            "wake-ups to the Unix epoch instead", topic="accuracy",
            example="02:30 with AccuracySec=1h: systemd 03:29 (+ the boot's perturbation), calsim 03:00"),
        Difference(
            "a Persistent= catch-up at a boot exactly on an AccuracySec= point fires at the boot instant in systemd; "
            "calsim starts it at the next tick", topic="catch-up",
            example="*:00/15, Persistent=yes, boot at 10:00 after an hour off: systemd 10:00, calsim 10:01"),
    ]
    if fixed_random_delay:
        notes.append("fixed_random_delay=True: systemd uses one offset per machine and timer; calsim draws a "
                     "deterministic offset per occurrence")
    if accuracy == 0:
        notes.append("accuracy_sec=0: systemd's minimum is 1 µs; tick set to 1s")
    return Preset(
        name="systemd",
        policy=Policy(catchup="latest" if persistent else "skip",
                      overlap="skip" if defer_reactivation else "buffer_one",
                      jitter=dt.timedelta(microseconds=delay) if delay else None, suspend_catchup="latest",
                      down_is_missed=True, recovery_wake=False),
        gap="scheduler", fold="scheduler", fallback=("skip", "first"),
        tick=_tick_text(accuracy) if accuracy else "1s", notes=tuple(notes), measured=MEASURED,
        sources=(SYSTEMD, TIMER_C, CALENDARSPEC, NEGATIVE_DST_FIX),
        settings=_settings(persistent=persistent, accuracy_sec=accuracy_sec, randomized_delay_sec=randomized_delay_sec,
                           fixed_random_delay=fixed_random_delay, defer_reactivation=defer_reactivation),
    )
