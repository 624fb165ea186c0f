"""systemd timers (``OnCalendar=``) as an oracle.

Two parts:

* :func:`calendar` runs the real calendar code: ``TZ=:<file> systemd-analyze
  calendar --iterations=N --base-time=@<epoch> '<expr>' ...`` (the same
  ``calendar_spec_next_usec()`` that ``timer.c`` calls). Each call gives the
  elapses strictly after the base, in the zone of ``TZ``; the zone data is
  pinned: ``TZ`` names the file of the zone in
  :func:`oracles.native.zoneinfo_dir` of calsim's release :data:`RELEASE`
  and ``TZDIR`` points there too (glibc reads an expression's own trailing
  zone, ``... Europe/Berlin``, from ``$TZDIR``; systemd only checks that the
  machine's ``/usr/share/zoneinfo`` has the name), so systemd and calsim read
  the same transitions. :func:`calendar_many` asks one process for many
  expressions (``systemd-analyze calendar`` takes several). The walk itself
  is ported in ``calsim/rules/calendarspec.py``: Debian's 252.38 carries the
  negative-DST fix of systemd PR #36897 (v252.31 of systemd-stable lacks
  it), read from the machine's ``libsystemd-shared-252.so``.
* :func:`glibc_calls` runs glibc's own ``mktime``/``localtime_r``
  (``glibc/mktime.c``, built here), which the walk reads the clock with.
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
from pathlib import Path
from zoneinfo import ZoneInfo

from . import native

US = 1_000_000
MIN = 60 * US
SOURCE = "systemd v252.38 (Debian 12 source package systemd_252.38.orig.tar.gz)"
RELEASE = "2026f"  # calsim's tz release systemd-analyze is given (TZ=:<file>, TZDIR)
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


def require() -> None:
    """Skip (or fail under CALSIM_REQUIRE_ORACLES=1) where systemd-analyze does not run."""
    why = missing()
    if why is not None:
        native.unavailable(f"a working systemd-analyze ({why})", "apt-get install systemd")


def version() -> str:
    out = subprocess.run([ANALYZE, "--version"], capture_output=True, text=True, timeout=30)
    return out.stdout.splitlines()[0] if out.stdout else "?"


def _us_text(us: int) -> str:
    return f"@{us // US}.{us % US:06d}"


def env(zone: str, release: str = RELEASE) -> dict[str, str]:
    """The environment that makes glibc read ``zone`` from calsim's release ``release``."""
    d = native.zoneinfo_dir(release)
    if not (d / zone).is_file():
        raise FileNotFoundError(f"zone {zone!r} is not in release {release} ({d})")
    return dict(os.environ, TZ=f":{d / zone}", TZDIR=str(d), SYSTEMD_COLORS="0", SYSTEMD_PAGER="", LC_ALL="C")


_ELAPSE_LINE = re.compile(r"^\s*(?:Next elapse|Iter\. #\d+): \w+ (\d{4}-\d\d-\d\d \d\d:\d\d:\d\d(?:\.\d+)?) (\S+)$")
_UTC_ONLY = re.compile(r"^\s*\(in UTC\): \w+ (\d{4}-\d\d-\d\d \d\d:\d\d:\d\d(?:\.\d+)?) UTC$")


def _instant(text: str, tzinfo) -> int:
    t = dt.datetime.fromisoformat(text).replace(tzinfo=tzinfo)
    return int(t.timestamp()) * US + t.microsecond


def _parse_times(block: str, zone: str, release: str) -> tuple[int, ...]:
    """The elapses of one expression's block: its "(in UTC)" lines, or, where systemd-analyze prints none
    (glibc says the zone is UTC: ``timezone == 0 && daylight == 0``, e.g. Morocco from 2026-09-20 in 2026f),
    the local line read in the zone, its pass chosen by the abbreviation printed."""
    lines = block.splitlines()
    times = []
    for i, line in enumerate(lines):
        m = _ELAPSE_LINE.match(line)
        if m is None:
            continue
        u = _UTC_ONLY.match(lines[i + 1]) if i + 1 < len(lines) else None
        if u is not None:
            times.append(_instant(u.group(1), dt.timezone.utc))
            continue
        naive = dt.datetime.fromisoformat(m.group(1))
        tz = _zone(zone, release)
        fits = {int(t.timestamp()) * US + t.microsecond for t in (naive.replace(tzinfo=tz, fold=f) for f in (0, 1))
                if t.tzname() == m.group(2)}
        if len(fits) != 1:
            raise RuntimeError(f"cannot place {line.strip()!r} in {zone} ({release}): {sorted(fits)}")
        times.append(fits.pop())
    return tuple(times)


RUNS = [0]  # systemd-analyze processes started (the report prints it)


def calendar_many(exprs, zone: str, base_us: int, n: int, release: str = RELEASE,
                  chunk: int = 400) -> dict[str, tuple[int, ...]]:
    """The first ``n`` elapses (UTC µs) strictly after ``base_us`` of each expression, from one
    ``systemd-analyze calendar`` process per ``chunk`` expressions (its output has one block per expression).

    Within one process glibc's remembered ``mktime`` offset passes from one
    expression to the next; each walk's first ``mktime`` is given the base's
    own ``tm_isdst``, which fixes it (but for a base inside a repeated hour
    whose two passes have the same ``tm_isdst``).
    """
    exprs = list(dict.fromkeys(exprs))
    out: dict[str, tuple[int, ...]] = {}
    for i in range(0, len(exprs), chunk):
        part = exprs[i:i + chunk]
        stdout, failed = _run(part, zone, base_us, n, release)
        # One block per expression that did not fail, each with a "Normalized form:" line ("Original form:"
        # only when different); an expression whose walk failed prints nothing (test_calendar_one returns
        # before table_print), only "Failed to determine next elapse for '<expr>'" on stderr.
        blocks = stdout.split("Normalized form: ")[1:]
        shown = [e for e in part if e not in failed]
        if len(blocks) != len(shown):
            raise RuntimeError(f"systemd-analyze printed {len(blocks)} blocks for {len(shown)} expressions")
        for expr, block in zip(shown, blocks):
            out[expr] = _parse_times(block, zone, release)
        for expr in failed:
            out[expr] = _until_failure(expr, zone, base_us, n, release)
    return out


_FAILED = re.compile(r"^Failed to determine next elapse for '(.*)': (.*)$", re.M)


def _run(part: list[str], zone: str, base_us: int, n: int, release: str) -> tuple[str, dict[str, str]]:
    RUNS[0] += 1
    got = subprocess.run([ANALYZE, "calendar", f"--iterations={n}", f"--base-time={_us_text(base_us)}", *part],
                         capture_output=True, text=True, env=env(zone, release), timeout=600)
    failed = {m.group(1): m.group(2) for m in _FAILED.finditer(got.stderr)}
    if got.returncode != 0 and not failed:
        raise RuntimeError(f"systemd-analyze calendar {part[:3]!r}... failed: {got.stderr.strip()[:500]}")
    return got.stdout, failed


def _until_failure(expr: str, zone: str, base_us: int, n: int, release: str) -> tuple[int, ...]:
    """The elapses before ``calendar_spec_next_usec()`` fails ("Infinite loop in calendar calculation",
    -EDEADLK: a timer then has no next elapse and stops, timer.c:409-411): the most iterations that print."""
    lo, hi = 0, n  # lo iterations print, hi fail
    while hi - lo > 1:
        mid = (lo + hi) // 2
        _, failed = _run([expr], zone, base_us, mid, release)
        lo, hi = (lo, mid) if failed else (mid, hi)
    if lo == 0:
        return ()
    stdout, _ = _run([expr], zone, base_us, lo, release)
    return _parse_times(stdout.split("Normalized form: ")[1], zone, release)


@functools.lru_cache(maxsize=None)
def calendar(expr: str, zone: str, base_us: int, n: int, release: str = RELEASE) -> tuple[int, ...]:
    """The first ``n`` elapses (UTC µs) of ``expr`` strictly after ``base_us``, computed by systemd itself."""
    return calendar_many([expr], zone, base_us, n, release)[expr]


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
        if (ev is None or (kind == "fire" and pending_elapse >= end_us)
                or (kind == "end" and ev >= end_us + 7 * 86400 * US)):
            break
        now = ev
        if kind == "end":
            enter_waiting(now)                                # timer_trigger_notify, timer.c:786-789
        else:
            enter_running(now)                                # timer_dispatch, timer.c:748-760
            if cfg.duration_us == 0:
                enter_waiting(now)
    return fires


@functools.lru_cache(maxsize=None)
def _zone(zone: str, release: str = RELEASE) -> ZoneInfo:
    with open(native.zoneinfo_dir(release) / zone, "rb") as f:
        return ZoneInfo.from_file(f, key=zone)


def wall(us: int, zone: str, release: str = RELEASE) -> tuple[dt.datetime, int]:
    """Naive wall time and fold of an instant in ``zone`` (for the per-occurrence random draw), read in the
    pinned release's zone data."""
    t = dt.datetime.fromtimestamp(us / US, dt.timezone.utc).astimezone(_zone(zone, release))
    naive = t.replace(tzinfo=None)
    fold = 1 if t.fold else 0
    return naive, fold


# -- glibc's own mktime(), the clock systemd's walk reads -------------------------------------------------

MKTIME_SOURCE = Path(__file__).with_name("glibc") / "mktime.c"


def glibc_version() -> str:
    out = subprocess.run(["ldd", "--version"], capture_output=True, text=True)
    return out.stdout.splitlines()[0] if out.returncode == 0 and out.stdout else "?"


@functools.cache
def mktime_binary() -> Path:
    """``glibc/mktime.c`` (ours: a line protocol around libc's localtime_r/mktime) built with the machine's
    C compiler against its glibc, into the oracle cache."""
    native.require("cc", install="apt-get install gcc")
    cc = subprocess.run(["cc", "--version"], capture_output=True, text=True).stdout
    d = native.cache_dir("glibc-mktime", MKTIME_SOURCE.read_bytes(), cc, glibc_version())
    exe = d / "mktime"
    if not exe.exists():
        subprocess.run(["cc", "-O1", "-o", str(exe) + ".tmp", str(MKTIME_SOURCE)], check=True, capture_output=True)
        os.replace(str(exe) + ".tmp", exe)
    return exe


def glibc_calls(lines: list[str], zone: str, release: str = RELEASE) -> list[list[int]]:
    """Run ``M ...``/``L ...`` lines through one glibc process reading ``zone`` from calsim's ``release``."""
    got = subprocess.run([str(mktime_binary())], input="".join(x + "\n" for x in lines), capture_output=True,
                         text=True, env=env(zone, release), timeout=300, check=True)
    return [[int(v) for v in row.split()] for row in got.stdout.splitlines()]
