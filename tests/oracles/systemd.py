"""systemd timers (``OnCalendar=``) as an oracle.

Two parts:

* :func:`calendar` runs the real calendar code: ``TZ=<zone> systemd-analyze
  calendar --iterations=N --base-time=@<epoch> '<expr>'`` (the same
  ``calendar_spec_next_usec()`` that ``timer.c`` calls). Each call gives the
  elapses strictly after the base, in the zone of ``TZ``; the machine's own
  zoneinfo is used (this does not matter for the 2026 rules of the zones
  tested, identical in every release since 2022).
* :func:`run_timer` is a line-by-line port of what the timer unit does with
  those elapses (``src/core/timer.c``), with the event loop's coalescing
  (``sleep_between()`` of ``src/libsystemd/sd-event/sd-event.c``).

Source read: systemd v252.38 (Debian 12 ``systemd_252.38.orig.tar.gz``, the
version of ``/usr/bin/systemd-analyze`` here; upstream tag v252.38 of
https://github.com/systemd/systemd-stable). Line numbers below are of that tree.

Boundary facts established from the source
------------------------------------------
* ``calendar_spec_next_usec(spec, b)`` returns the first elapse **strictly
  after** ``b`` (``src/shared/calendarspec.c:1419`` ``usec++`` before the search).
* The base ``b`` of the next elapse (``timer.c:402-407``): the last trigger
  if known, else the timer unit's activation time, else now. So a repeated
  wall time (fall-back) is found or not depending on the base: from a base in
  the first pass only the first pass fires; from a base inside the second
  pass the second-pass times fire (``systemd-analyze`` shows both).
* An elapse before the manager's start (boot) is moved to the boot instant
  (``timer.c:413-420``, ``rebased``): this is what fires a missed elapse once
  at boot with ``Persistent=yes``.
* ``Persistent=yes``: ``last_trigger`` is loaded from the stamp file's mtime
  when the timer starts (``timer.c:645-660``) and the stamp is touched with
  the trigger time on every trigger (``timer.c:607,612-613``); a timer that
  never ran creates the stamp with "now" (``timer.c:661-663``). Without it
  ``last_trigger`` is reset on start (``timer.c:638``), so elapses while the
  machine was off are never run.
* A trigger records ``last_trigger = now`` (``timer.c:607``) and the timer
  enters RUNNING; it elapses again only after the triggered unit went
  inactive (``timer_trigger_notify``, ``timer.c:786-789``), computing the next
  elapse from that last trigger: elapses during a run collapse into **one**
  start right when the unit ends (the unit "is not restarted", man
  systemd.timer ``Unit=``), which is calsim's ``buffer_one``.
* ``timer_dispatch`` only acts in state WAITING (``timer.c:753``).
* Suspend: the realtime clock keeps running; on resume the clock change makes
  ``timer_time_change`` recompute the elapse (``timer.c:812-835``), and an
  event source whose time has passed fires at once: several elapses during
  a suspend give a **single** activation at resume, with or without
  ``Persistent=`` (man systemd.timer, ``OnCalendar=``: "the timer will only
  result in a single service activation").
* ``RandomizedDelaySec=``: ``random_u64() % random_usec`` added to every
  computed elapse (``timer.c:350-367``, called at ``timer.c:537``), also to a
  ``Persistent=`` catch-up (man: "nonetheless subject to the delay"), and
  **not** capped at the next elapse: a delay past the next elapse swallows
  it (the next elapse is computed from the delayed trigger time).
* ``AccuracySec=``: the event source is armed with the elapse and the
  accuracy as slack (``timer.c:550-555``); sd-event wakes at
  ``sleep_between(elapse, elapse + accuracy)`` (``sd-event.c:3057-3133``,
  used at ``sd-event.c:3175``): the **latest** minute-aligned point
  (``+ perturb``) in the window, else 10 s, 1 s, 250 ms aligned, else the
  window's end. ``perturb`` is derived from the boot ID
  (``sd-event.c:1153-1168``), in ``[0, 1 min)``; this port takes it as 0
  (parameter ``perturb_us``).
"""

from __future__ import annotations

import datetime as dt
import functools
import os
import re
import shutil
import subprocess
from dataclasses import dataclass, field
from zoneinfo import ZoneInfo

US = 1_000_000
MIN = 60 * US
SOURCE = "systemd v252.38 (Debian 12 source package systemd_252.38.orig.tar.gz)"
ANALYZE = shutil.which("systemd-analyze") or ("/usr/bin/systemd-analyze" if os.path.exists("/usr/bin/systemd-analyze")
                                              else None)
_UTC_LINE = re.compile(r"\(in UTC\): \w+ (\d{4}-\d\d-\d\d \d\d:\d\d:\d\d(?:\.\d+)?) UTC")


def missing() -> str | None:
    """Why the real oracle cannot run here (None: it can)."""
    if ANALYZE is None:
        return "no systemd-analyze in PATH or /usr/bin"
    try:
        out = subprocess.run([ANALYZE, "--version"], capture_output=True, text=True, timeout=30)
    except OSError as exc:  # pragma: no cover - depends on the machine
        return f"systemd-analyze does not run: {exc}"
    if out.returncode != 0:  # pragma: no cover
        return f"systemd-analyze --version exited {out.returncode}: {out.stderr.strip()}"
    return None


def version() -> str:
    out = subprocess.run([ANALYZE, "--version"], capture_output=True, text=True, timeout=30)
    return out.stdout.splitlines()[0] if out.stdout else "?"


def _us_text(us: int) -> str:
    return f"@{us // US}.{us % US:06d}"


@functools.lru_cache(maxsize=None)
def calendar(expr: str, zone: str, base_us: int, n: int) -> tuple[int, ...]:
    """The first ``n`` elapses (UTC µs) of ``expr`` strictly after ``base_us``, computed by systemd itself."""
    env = dict(os.environ, TZ=zone, SYSTEMD_COLORS="0", SYSTEMD_PAGER="")
    out = subprocess.run([ANALYZE, "calendar", f"--iterations={n}", f"--base-time={_us_text(base_us)}", expr],
                         capture_output=True, text=True, env=env, timeout=60)
    if out.returncode != 0:
        raise RuntimeError(f"systemd-analyze calendar {expr!r} failed: {out.stderr.strip()}")
    times = []
    for m in _UTC_LINE.finditer(out.stdout):
        text = m.group(1)
        t = dt.datetime.fromisoformat(text).replace(tzinfo=dt.timezone.utc)
        times.append(int(t.timestamp()) * US + t.microsecond)
    return tuple(times)


def elapses_between(expr: str, zone: str, start_us: int, end_us: int, chunk: int = 200) -> list[int]:
    """Every elapse in ``(start_us, end_us)`` of a timer running without interruption (each base = previous elapse)."""
    out: list[int] = []
    base = start_us
    while True:
        got = calendar(expr, zone, base, chunk)
        for t in got:
            if t >= end_us:
                return out
            out.append(t)
        if len(got) < chunk:
            return out
        base = got[-1]


def next_elapse(expr: str, zone: str, base_us: int) -> int | None:
    """``calendar_spec_next_usec(spec, base)`` (calendarspec.c:1443): first elapse strictly after ``base_us``."""
    got = calendar(expr, zone, base_us, 1)
    return got[0] if got else None


def sleep_between(a: int, b: int, perturb: int = 0) -> int:
    """Port of ``sleep_between()``, sd-event.c:3057-3133 (µs since the epoch)."""
    assert a <= b
    if a <= 0:
        return 0
    if b <= a + 1:                                           # sd-event.c:3066-3067
        return a
    for step in (60 * US, 10 * US, 1 * US, 250_000):         # sd-event.c:3090, 3101, 3112, 3123
        c = (b // step) * step + (perturb % step)
        if c >= b:
            if c < step:
                return b
            c -= step
        if c >= a:
            return c
    return b                                                 # sd-event.c:3133


@dataclass(frozen=True)
class Outage:
    """The machine is off (``"down"``) or asleep (``"suspend"``) over ``[start_us, end_us)``."""

    start_us: int
    end_us: int
    kind: str = "down"


@dataclass
class Fire:
    """One service start: the elapse the timer computed (before the random delay), when it fired, why,
    and the base the elapse was computed from (``timer.c:402-407``).

    ``why``: ``"elapse"`` (fired in the elapse's own accuracy/delay window), ``"boot_catchup"`` (an elapse
    before boot moved to the boot instant, ``timer.c:413-420``: the ``Persistent=`` catch-up), ``"late"``
    (an elapse already past when the timer re-armed: after a suspend, or when the triggered unit ended).
    """

    elapse_us: int
    fired_us: int
    why: str
    base_us: int = 0


@dataclass
class TimerConfig:
    expr: str
    zone: str
    persistent: bool = False
    accuracy_us: int = 60 * US          # AccuracySec= default 1min (timer.c:45, manager default)
    randomized_delay_us: int = 0        # RandomizedDelaySec=
    delay_for: object = None            # elapse_us -> a draw standing for random_u64() (µs, taken modulo the delay)
    duration_us: int = 0                # how long the triggered service stays active
    perturb_us: int = 0                 # sd-event's boot-ID perturbation (sd-event.c:1166), assumed 0
    fires: list = field(default_factory=list)


def run_timer(cfg: TimerConfig, start_us: int, end_us: int, outages: list[Outage] = ()) -> list[Fire]:
    """Service starts of a calendar timer activated at ``start_us`` (the machine boots then) for the elapses
    before ``end_us`` (a start after ``end_us`` for an earlier elapse is kept, as calsim follows its
    occurrences past the horizon).

    A port of timer.c's state machine for one ``OnCalendar=`` value:
    ``timer_start`` (L623-669), ``timer_enter_waiting`` (L371-575),
    ``timer_enter_running`` (L577-621), ``timer_trigger_notify`` (L761-799),
    ``timer_time_change`` (L812-835).
    """
    outs = sorted(outages, key=lambda o: o.start_us)
    fires: list[Fire] = []
    now = start_us
    boot = start_us                   # manager->timestamps[MANAGER_TIMESTAMP_USERSPACE], mapped to realtime
    stamp: int | None = None          # mtime of /var/lib/systemd/timers/stamp-<unit> (Persistent=yes)
    last_trigger: int | None = None   # t->last_trigger.realtime (in memory)
    activated: int | None = None      # UNIT(t)->inactive_exit_timestamp.realtime
    state = "dead"
    fire_at = None
    pending_elapse = None
    pending_base = None
    pending_rebased = False
    busy_until = None                 # the triggered service is active until this instant

    def timer_start(t: int) -> None:
        nonlocal last_trigger, stamp
        last_trigger = None                                   # timer.c:638
        if cfg.persistent:
            if stamp is not None:
                if stamp < t:                                 # timer.c:655-656: only a stamp in the past
                    last_trigger = stamp
            else:
                stamp = t                                     # timer.c:661-663: touch (now) on first start
        enter_waiting(t)

    def enter_waiting(t: int) -> None:
        nonlocal fire_at, pending_elapse, pending_base, pending_rebased, state, activated
        if last_trigger is not None:                          # timer.c:402-403
            b = last_trigger
        elif activated is not None:                           # timer.c:404-405
            b = activated
        else:                                                 # timer.c:406-407
            b = t
        nxt = next_elapse(cfg.expr, cfg.zone, b)              # timer.c:409
        pending_base, pending_rebased = b, False
        if nxt is None:
            fire_at, pending_elapse = None, None
        else:
            elapse = nxt
            if nxt < boot:                                    # timer.c:417-420 (rebased)
                nxt = boot
                pending_rebased = True
            if cfg.randomized_delay_us:                       # timer.c:537 -> add_random, L350-367
                nxt += cfg.delay_for(elapse) % cfg.randomized_delay_us
            # sd_event_add_time(..., next, accuracy) (timer.c:550-555); sd-event arms the timerfd at
            # sleep_between(next, next + accuracy) (sd-event.c:3175); a time in the past fires at once.
            fire_at = max(t, sleep_between(nxt, nxt + cfg.accuracy_us, cfg.perturb_us))
            pending_elapse = elapse
        if state != "waiting" and activated is None:
            activated = t                                     # unit_notify: inactive -> active
        state = "waiting"

    def enter_running(t: int) -> None:
        nonlocal last_trigger, stamp, state, busy_until
        last_trigger = t                                      # timer.c:607 dual_timestamp_get
        if cfg.persistent:
            stamp = t                                         # timer.c:612-613 touch_file(stamp, last_trigger)
        if pending_rebased:
            why = "boot_catchup"
        elif t > pending_elapse + cfg.randomized_delay_us + cfg.accuracy_us:
            why = "late"
        else:
            why = "elapse"
        fires.append(Fire(pending_elapse, t, why, pending_base))
        state = "running"                                     # timer.c:615
        busy_until = t + cfg.duration_us

    timer_start(now)
    oi = 0
    while True:
        next_out = outs[oi] if oi < len(outs) else None
        # candidate events while up: service end (RUNNING), elapse (WAITING)
        if state == "running":
            ev, kind = busy_until, "end"
        elif state == "waiting" and fire_at is not None:
            ev, kind = fire_at, "fire"
        else:
            ev, kind = None, None
        if next_out is not None and (ev is None or next_out.start_us <= ev):
            # the machine goes off or to sleep first (an event exactly at its start is not acted on: [start, end))
            if ev is None and next_out.start_us >= end_us:
                break
            o = next_out
            oi += 1
            if o.kind == "down":
                # power off: the service is stopped, the timer unit and all memory are gone; at boot the
                # timer is started again (timers.target) with the manager's start time as ``boot``.
                now = o.end_us
                boot = o.end_us
                activated = None
                state = "dead"
                timer_start(now)
            elif o.kind == "suspend":
                # asleep: nothing runs; the service (frozen) ends later by the sleep's length
                now = o.end_us
                if state == "running":
                    busy_until += o.end_us - o.start_us
                elif state == "waiting":
                    enter_waiting(now)                        # timer_time_change -> enter_waiting(t, true)
            else:
                raise ValueError(o.kind)
            continue
        if ev is None or (kind == "fire" and pending_elapse >= end_us) or (kind == "end" and ev >= end_us + 7 * 86400 * US):
            break
        now = ev
        if kind == "end":
            enter_waiting(now)                                # timer_trigger_notify, timer.c:786-789
        else:
            enter_running(now)                                # timer_dispatch, timer.c:748-760
            if cfg.duration_us == 0:
                enter_waiting(now)
    return fires


def wall(us: int, zone: str) -> tuple[dt.datetime, int]:
    """Naive wall time and fold of an instant in ``zone`` (for the per-occurrence random draw)."""
    t = dt.datetime.fromtimestamp(us / US, dt.timezone.utc).astimezone(ZoneInfo(zone))
    naive = t.replace(tzinfo=None)
    fold = 1 if t.fold else 0
    return naive, fold
