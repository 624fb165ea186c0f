#!/usr/bin/env python3
"""Record what Debian's cron daemon really runs, under libfaketime, as JSON fixtures for the cronie preset.

Usage (from the repository root, as root, on Debian 12 with ``cron`` and
``faketime`` installed; nothing else is needed and nothing is left behind)::

    .venv/bin/python tools/capture_cron.py                  # every scenario (285, about 35 min with --jobs 5)
    .venv/bin/python tools/capture_cron.py --only suspend   # scenarios whose id contains "suspend"
    .venv/bin/python tools/capture_cron.py --only 'Dublin|Chatham|Beirut|Cairo|Sydney'  # 85, about 14 min
    .venv/bin/python tools/capture_cron.py --list           # the scenarios, nothing run
    .venv/bin/python tools/capture_cron.py --jobs 4 --rate 60 --out tests/fixtures/cron_daemon

Each scenario kind (``dst``, ``restart``, ``suspend``) is written to
``tests/fixtures/cron_daemon/<kind>.cron-<version>.faketime-<version>.tz-<release>.json``
(with ``--only``, the scenarios run replace their namesakes in the existing
files); ``tests/presets/test_cronie_daemon.py`` replays every fixture against calsim.

The grid: the 2026 DST days (both changes) of New York, Berlin, Lord Howe
(30-minute changes) and Santiago (midnight changes, west of UTC), each with
restarts and 14 suspends next to the change, plus plain-day restarts and
suspends (cron's 5- and 180-minute limits); and issue 25's other zones
(``MORE_TRANSITIONS``): Dublin (negative DST: the TZif marks winter GMT
``isdst=1``, summer IST ``isdst=0``), Chatham (02:45 changes, +12:45/+13:45),
Beirut and Cairo (midnight changes, east of UTC) and Sydney, each change
with its DST day, 2 or 3 restarts and the 5 suspends of ``SHORT_OUTAGES``.

What runs
---------
``/usr/sbin/cron -f`` (Debian's Vixie cron 3.0pl1 with its DST patches), the
real binary, one daemon per scenario, each in a namespace of its own made by
``unshare --mount --pid --fork --kill-child`` (this script re-executes itself
inside it with ``--inside``):

* a fresh tmpfs over ``/run`` (so ``/var/run``: cron's PID file
  ``/run/crond.pid`` and ``crond.reboot`` go there) and over ``/dev/shm``
  (libfaketime's semaphore and shared memory); the crontab, the clock file,
  the zone file and the run log live in ``/run/calsim-cron``;
* bind mounts of our files over ``/etc/crontab`` (the scenario's jobs, as
  system-crontab lines run by root), ``/etc/cron.d`` and
  ``/var/spool/cron/crontabs`` (both empty), so no real crontab is read or
  touched;
* the namespace ends with its PID 1 (this script's inner process): the kernel
  kills the daemon and any job left, and the mounts vanish with it. The real
  ``/run``, ``/etc`` and ``/var/spool/cron`` are never written.

The zone is calsim's release (``2026f``) compiled to TZif in the tmpfs and
given as ``TZ=:/run/calsim-cron/zoneinfo/<Zone>`` (as
``tests/oracles/native.py`` ``zoneinfo_dir`` does), so cron's ``localtime``
reads exactly the zone data calsim is given.

The clock
---------
libfaketime (``LD_PRELOAD=libfaketime.so.1``) runs the daemon's clock from
``FAKETIME_TIMESTAMP_FILE`` (re-read at every call: ``FAKETIME_NO_CACHE=1``),
which holds ``"<offset> x<rate>"``: fake = S + offset + (real - S) * rate,
where S is the start time libfaketime keeps in shared memory. This script
creates that semaphore and shared memory itself (``FAKETIME_SHARED``) with S
its own reading of the real clock, so the daemon and every job it starts
(the crontab sets the same variables, cron gives jobs only the crontab's
environment) read one fake clock, and the script knows it exactly. The rate
(default 60: a fake minute per real second) also scales every sleep: libfaketime's
``sleep``/``nanosleep`` sleep ``seconds / rate`` real seconds, in real
(``CLOCK_MONOTONIC``) time. A check at start compares a job-side ``date``
with the script's own reckoning.

Each job is ``/run/calsim-cron/rec <job>``: it appends the job's name and the
fake clock (``date +%s.%N`` under libfaketime) to the run log. Those instants,
in UTC, are the fixture's ``runs``; they include cron's own timing (it wakes
at second 1 of a minute) and a few milliseconds of fork/exec times the rate.

Outages
-------
* ``suspend`` ``[a, b)``: when the fake clock reaches ``a`` (the daemon is
  asleep then: scenarios start suspends at seconds 0 or 30, away from cron's
  second 1), the offset is raised by ``b - a``: the fake clock jumps to ``b``
  at once, while the daemon's ``nanosleep`` goes on for the rest of its real
  duration. That is a real suspend as the daemon sees it: Linux measures
  ``nanosleep`` on ``CLOCK_MONOTONIC``, which stops while the machine sleeps
  (nanosleep(2): "Linux measures the time using the CLOCK_MONOTONIC clock"),
  and the wall clock (``CLOCK_REALTIME``, what ``time()`` reads) is moved on
  by the suspended time at resume. So after the resume the daemon first sleeps
  what was left of its sleep (up to a minute), then reads the jumped clock.
  (Jobs of the whole machine would be frozen too; none is running at ``a``.)
* ``down`` ``[a, b)``: at ``a`` the daemon is killed (SIGKILL, as a crash or
  power loss: cron keeps no state on disk); the fake clock is moved to ``b``
  (nothing observes it meanwhile) and a fresh daemon is started.

The daemon is first started (booted) 30 s before the scenario's ``start`` (so
the minute of ``start`` is its first normal minute, as calsim's horizon
starts there), and killed at ``end``. Each life's fake start and stop are in
the fixture (``lives``), and the fake instant of each outage's edges.

Bounded: every scenario's real duration is its awake fake time over the
rate (suspends and downs cost nothing), each inner process has a timeout,
and ``--jobs`` of them run at once.
"""

from __future__ import annotations

import argparse
import base64
import concurrent.futures
import ctypes
import datetime as dt
import json
import mmap
import os
import re
import shutil
import signal
import struct
import subprocess
import sys
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CRON = "/usr/sbin/cron"
LIBFAKETIME = "/usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1"
WORK = Path("/run/calsim-cron")
SEM_NAME, SHM_NAME = "/calsim_cron_sem", "/calsim_cron_shm"
RELEASE = "2026f"
RATE = 60.0
BOOT_LEAD = 30  # the daemon starts this many fake seconds before the scenario's start
UTC = dt.timezone.utc
MIN, HOUR, DAY = 60, 3600, 86400

# ---------------------------------------------------------------------------------------------
# The scenarios (fake UTC instants as epoch seconds)

JOBS = {
    # fixed-time jobs (no '*' first in minute or hour)
    "fixed_0000": "0 0 * * *", "fixed_0030": "30 0 * * *", "fixed_0115": "15 1 * * *",
    "fixed_0130_0145": "30,45 1 * * *", "fixed_0145": "45 1 * * *", "fixed_0200_0230": "0,30 2 * * *",
    "fixed_0215": "15 2 * * *", "fixed_0230": "30 2 * * *", "fixed_0300": "0 3 * * *", "fixed_2330": "30 23 * * *",
    # wildcard jobs
    "wild_1min": "* * * * *", "wild_15min": "*/15 * * * *", "wild_hourly": "0 * * * *",
    "wild_half": "30 * * * *", "wild_5min_2h": "*/5 2 * * *", "wild_10min_0h": "*/10 0 * * *",
}

# The 2026 DST changes (release 2026f), UTC.
TRANSITIONS = {
    ("America/New_York", "spring"): "2026-03-08T07:00:00Z",  # 02:00 EST -> 03:00 EDT
    ("America/New_York", "fall"): "2026-11-01T06:00:00Z",  # 02:00 EDT -> 01:00 EST
    ("Europe/Berlin", "spring"): "2026-03-29T01:00:00Z",  # 02:00 CET -> 03:00 CEST
    ("Europe/Berlin", "fall"): "2026-10-25T01:00:00Z",  # 03:00 CEST -> 02:00 CET
    ("Australia/Lord_Howe", "spring"): "2026-10-03T15:30:00Z",  # 02:00 +1030 -> 02:30 +11
    ("Australia/Lord_Howe", "fall"): "2026-04-04T15:00:00Z",  # 02:00 +11 -> 01:30 +1030
    ("America/Santiago", "spring"): "2026-09-06T04:00:00Z",  # 00:00 -04 -> 01:00 -03
    ("America/Santiago", "fall"): "2026-04-05T03:00:00Z",  # 24:00 -03 -> 23:00 -04
}
# Issue 25's other zones: each change's DST day and a few outages across it (SHORT_OUTAGES, not the whole grid).
MORE_TRANSITIONS = {
    ("Europe/Dublin", "spring"): "2026-03-29T01:00:00Z",  # 01:00 GMT -> 02:00 IST (TZif: GMT is isdst=1, -1 h)
    ("Europe/Dublin", "fall"): "2026-10-25T01:00:00Z",  # 02:00 IST -> 01:00 GMT (back to the negative DST)
    ("Pacific/Chatham", "spring"): "2026-09-26T14:00:00Z",  # 02:45 +1245 -> 03:45 +1345
    ("Pacific/Chatham", "fall"): "2026-04-04T14:00:00Z",  # 03:45 +1345 -> 02:45 +1245
    ("Asia/Beirut", "spring"): "2026-03-28T22:00:00Z",  # 00:00 EET -> 01:00 EEST
    ("Asia/Beirut", "fall"): "2026-10-24T21:00:00Z",  # 24:00 EEST -> 23:00 EET
    ("Africa/Cairo", "spring"): "2026-04-23T22:00:00Z",  # 00:00 EET -> 01:00 EEST (a Friday)
    ("Africa/Cairo", "fall"): "2026-10-29T21:00:00Z",  # 24:00 EEST -> 23:00 EET (a Thursday)
    ("Australia/Sydney", "spring"): "2026-10-03T16:00:00Z",  # 02:00 AEST -> 03:00 AEDT
    ("Australia/Sydney", "fall"): "2026-04-04T16:00:00Z",  # 03:00 AEDT -> 02:00 AEST
}
# The suspends next to each of MORE_TRANSITIONS (length, where): a jump across the change (wall J != real J),
# one beginning just before it, one ending at it, one over the fixed-time limit across it, one from it.
SHORT_OUTAGES = ((3, "3min", "ending-2min-after"), (60, "1h", "starting-2min-before"),
                 (60, "1h", "ending-at-the-change"), (180, "3h", "ending-2min-after"),
                 (240, "4h", "starting-at-the-change"))
# A day without a change, and the UTC instant of its local 03:00.
PLAIN_0300 = {"America/New_York": "2026-03-01T08:00:00Z", "Europe/Berlin": "2026-03-22T02:00:00Z",
              "Australia/Lord_Howe": "2026-09-26T16:30:00Z", "America/Santiago": "2026-08-30T07:00:00Z"}


def _t(iso: str) -> float:
    return dt.datetime.fromisoformat(iso.replace("Z", "+00:00")).timestamp()


def _iso(t: float, ms: bool = False) -> str:
    d = dt.datetime.fromtimestamp(t, UTC)
    return d.strftime("%Y-%m-%dT%H:%M:%S") + (f".{d.microsecond // 1000:03d}" if ms else "") + "Z"


@dataclass
class Scenario:
    id: str
    kind: str  # "dst", "restart" or "suspend"
    zone: str
    start: str  # the horizon compared (UTC); the daemon boots BOOT_LEAD s before start
    end: str
    outages: list = field(default_factory=list)  # [start, end, "down"|"suspend"] (UTC ISO)
    jobs: dict = field(default_factory=lambda: dict(JOBS))

    def awake(self) -> float:
        """Fake seconds the daemon is up and not suspended (real time = this / rate)."""
        span = _t(self.end) - _t(self.start) + BOOT_LEAD
        return span - sum(_t(b) - _t(a) for a, b, _ in self.outages)


def _around(id_: str, kind: str, zone: str, outages: list[tuple[float, float, str]], before: float, after: float,
            until: float | None = None) -> Scenario:
    lo = min(a for a, _, _ in outages) - before
    hi = max(max(b for _, b, _ in outages) + after, until or 0)
    return Scenario(id_, kind, zone, _iso(lo // MIN * MIN), _iso(-(-hi // MIN) * MIN),
                    [[_iso(a), _iso(b), k] for a, b, k in outages])


def scenarios() -> list[Scenario]:
    out: list[Scenario] = []
    # DST days: from 75 min before each change to 125 min after it (local 00:45-03:05 or so)
    for (zone, season), iso in {**TRANSITIONS, **MORE_TRANSITIONS}.items():
        t = _t(iso)
        out.append(Scenario(f"dst-{zone}-{season}", "dst", zone, _iso(t - 75 * MIN), _iso(t + 125 * MIN)))
    # Restarts: the daemon killed and started again (3 s before, at and 30 s after local 03:00)
    for zone, iso in PLAIN_0300.items():
        f = _t(iso)
        for bname, back in (("3s-before", f - 3), ("at", f), ("30s-after", f + 30)):
            for lname, length in (("30s", 30), ("1h", HOUR), ("3d", 3 * DAY)):
                if zone != "America/New_York" and lname != "1h":
                    continue
                out.append(_around(f"restart-{zone}-0300-down{lname}-back-{bname}", "restart", zone,
                                   [(back - length, back, "down")], 4 * MIN, 10 * MIN))
    for (zone, season), iso in {**TRANSITIONS, **MORE_TRANSITIONS}.items():
        t = _t(iso)
        until = t + 50 * MIN if season == "fall" else None  # a repeated hour's second pass
        out.append(_around(f"restart-{zone}-{season}-across", "restart", zone, [(t - 10 * MIN, t + 10 * MIN, "down")],
                           4 * MIN, 10 * MIN, until))
        out.append(_around(f"restart-{zone}-{season}-down1h-ending-at-the-change", "restart", zone,
                           [(t - HOUR, t, "down")], 4 * MIN, 10 * MIN, until))
        if season == "fall":  # back inside the repeated hour's second pass
            back = t + (10 if zone == "Australia/Lord_Howe" else 15) * MIN
            out.append(_around(f"restart-{zone}-fall-second-pass", "restart", zone,
                               [(t - 45 * MIN, back, "down")], 4 * MIN, 10 * MIN, until))
    # Suspends on a plain day, resuming at local 03:01 (on the minute, or 30 s in): cron's limits (a jump of
    # <= 5 and <= 180 wall minutes), then 1 h and 4 h
    for zone, iso in PLAIN_0300.items():
        f = _t(iso)
        lengths = ((3, "3min"), (4, "4min"), (5, "5min"), (6, "6min"), (60, "1h"), (179, "179min"), (180, "3h"),
                   (181, "181min"), (240, "4h"))
        for minutes, lname in lengths:
            if zone != "America/New_York" and lname not in ("5min", "1h", "3h", "4h"):
                continue
            for oname, off in (("on-minute", 0), ("30s-in", 30)):
                b = f + MIN + off
                out.append(_around(f"suspend-{zone}-{lname}-{oname}-0301", "suspend", zone,
                                   [(b - minutes * MIN, b, "suspend")], 3 * MIN, 10 * MIN))
    # Suspends next to each DST change: across it (ending 2 min after), starting 2 min before it, ending at it
    # and starting at it; 3 min, 1 h, 3 h and 4 h long
    for (zone, season), iso in TRANSITIONS.items():
        t = _t(iso)
        for minutes, lname in ((3, "3min"), (60, "1h"), (180, "3h"), (240, "4h")):
            L = minutes * MIN
            for pname, a in (("ending-2min-after", t + 2 * MIN - L), ("starting-2min-before", t - 2 * MIN),
                             ("ending-at-the-change", t - L), ("starting-at-the-change", t)):
                if lname == "3min" and pname in ("ending-at-the-change", "starting-at-the-change"):
                    continue
                until = t + 50 * MIN if season == "fall" and a + L < t + 50 * MIN else None
                out.append(_around(f"suspend-{zone}-{season}-{lname}-{pname}", "suspend", zone,
                                   [(a, a + L, "suspend")], 3 * MIN, 10 * MIN, until))
    for (zone, season), iso in MORE_TRANSITIONS.items():
        t = _t(iso)
        for minutes, lname, pname in SHORT_OUTAGES:
            L = minutes * MIN
            a = {"ending-2min-after": t + 2 * MIN - L, "starting-2min-before": t - 2 * MIN,
                 "ending-at-the-change": t - L, "starting-at-the-change": t}[pname]
            until = t + 50 * MIN if season == "fall" and a + L < t + 50 * MIN else None
            out.append(_around(f"suspend-{zone}-{season}-{lname}-{pname}", "suspend", zone,
                               [(a, a + L, "suspend")], 3 * MIN, 10 * MIN, until))
    return out


# ---------------------------------------------------------------------------------------------
# Inside the namespace


def _mount(*args: str) -> None:
    subprocess.run(["mount", *args], check=True)


class FakeClock:
    """The fake clock: ``fake = S + offset + (real - S) * rate``, written to libfaketime's timestamp file."""

    def __init__(self, path: Path, rate: float, start_fake: float) -> None:
        self.path, self.rate = path, rate
        self.S = time.clock_gettime(time.CLOCK_REALTIME)
        mon, raw = time.clock_gettime(time.CLOCK_MONOTONIC), time.clock_gettime(time.CLOCK_MONOTONIC_RAW)
        boot = time.clock_gettime(time.CLOCK_BOOTTIME)
        self._shared_memory(self.S, mon, raw, boot)
        self.offset = 0.0
        self.set(start_fake)

    @staticmethod
    def _shared_memory(real: float, mon: float, raw: float, boot: float) -> None:
        """libfaketime's ``FAKETIME_SHARED`` objects: a semaphore (value 1) and ``struct ft_shared_s``
        (libfaketime 0.9.10 ``src/faketime_common.h``: ``uint64_t ticks, file_idx``, then ``start_time``: the
        real, monotonic, monotonic-raw and boottime ``timespec`` every process reckons from)."""
        libc = ctypes.CDLL("libc.so.6", use_errno=True)
        libc.sem_open.restype = ctypes.c_void_p
        sem = libc.sem_open(SEM_NAME.encode(), os.O_CREAT | os.O_EXCL, 0o600, 1)
        if not sem or sem == ctypes.c_void_p(-1).value:
            raise OSError(ctypes.get_errno(), "sem_open " + SEM_NAME)
        libc.sem_close(ctypes.c_void_p(sem))

        def ts(x: float) -> tuple[int, int]:
            sec = int(x // 1)
            return sec, int(round((x - sec) * 1e9)) % 1_000_000_000

        data = struct.pack("<QQ8q", 0, 0, *ts(real), *ts(mon), *ts(raw), *ts(boot))
        with open("/dev/shm" + SHM_NAME, "wb") as f:
            f.write(data.ljust(mmap.PAGESIZE, b"\0"))
        os.chmod("/dev/shm" + SHM_NAME, 0o600)

    def fake(self, real: float | None = None) -> float:
        r = time.clock_gettime(time.CLOCK_REALTIME) if real is None else real
        return self.S + self.offset + (r - self.S) * self.rate

    def real_at(self, fake: float) -> float:
        return self.S + (fake - self.S - self.offset) / self.rate

    def _write(self) -> None:
        tmp = self.path.with_suffix(".tmp")
        tmp.write_text(f"{self.offset:+.6f} x{self.rate:g}\n")
        os.replace(tmp, self.path)  # readers see the old or the new line, never half of one

    def set(self, fake_now: float) -> None:
        """Make the clock read ``fake_now`` now (and run on at the rate)."""
        r = time.clock_gettime(time.CLOCK_REALTIME)
        self.offset = fake_now - self.S - (r - self.S) * self.rate
        self._write()

    def jump(self, seconds: float) -> None:
        """Move the clock on by exactly ``seconds``, whenever this runs."""
        self.offset += seconds
        self._write()

    def sleep_until(self, fake: float) -> None:
        while True:
            left = self.real_at(fake) - time.clock_gettime(time.CLOCK_REALTIME)
            if left <= 0:
                return
            time.sleep(min(left, 0.5))


def _faketime_env() -> dict[str, str]:
    return {"LD_PRELOAD": LIBFAKETIME, "FAKETIME_TIMESTAMP_FILE": str(WORK / "clock"), "FAKETIME_NO_CACHE": "1",
            "FAKETIME_SHARED": f"{SEM_NAME} {SHM_NAME}", "FAKETIME_DONT_FAKE_MONOTONIC": "1", "NO_FAKE_STAT": "1"}


def _setup(sc: Scenario, tzif: bytes) -> None:
    """The namespace's private /run and /dev/shm, our crontab over the real ones, the zone file."""
    _mount("-t", "tmpfs", "-o", "mode=755", "calsim-cron-run", "/run")
    _mount("-t", "tmpfs", "-o", "mode=1777", "calsim-cron-shm", "/dev/shm")
    for d in ("cron.d", "crontabs", "zoneinfo"):
        (WORK / d).mkdir(parents=True)
    # /var/spool/cron/crontabs as Debian ships it (root:crontab 1730)
    shutil.chown(WORK / "crontabs", "root", "crontab")
    os.chmod(WORK / "crontabs", 0o1730)
    zf = WORK / "zoneinfo" / sc.zone
    zf.parent.mkdir(parents=True, exist_ok=True)
    zf.write_bytes(tzif)
    env = "".join(f'{k}="{v}"\n' for k, v in _faketime_env().items())
    # the job: one exec of date (under libfaketime), its line appended to the run log ('\%': crontab(5))
    lines = "".join(f'{spec} root date "+{name} \\%s.\\%N" >> {WORK / "runs"}\n' for name, spec in sc.jobs.items())
    crontab = WORK / "crontab"
    crontab.write_text(f"# calsim capture_cron: {sc.id}\nSHELL=/bin/sh\nPATH=/usr/bin:/bin\nMAILTO=\"\"\n{env}{lines}")
    crontab.chmod(0o644)
    _mount("--bind", str(crontab), "/etc/crontab")
    _mount("--bind", str(WORK / "cron.d"), "/etc/cron.d")
    _mount("--bind", str(WORK / "crontabs"), "/var/spool/cron/crontabs")


def _die_with_parent() -> None:
    ctypes.CDLL("libc.so.6").prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG


def _start_daemon(sc: Scenario) -> subprocess.Popen:
    env = {"PATH": "/usr/bin:/bin:/usr/sbin:/sbin", "TZ": f":{WORK / 'zoneinfo' / sc.zone}", **_faketime_env()}
    return subprocess.Popen([CRON, "-f", "-L", "0"], env=env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                            stderr=open(WORK / "cron.stderr", "ab"), preexec_fn=_die_with_parent)


def _stop_daemon(p: subprocess.Popen) -> None:
    p.kill()
    p.wait(timeout=10)


def run_inside(sc: Scenario, rate: float, tzif: bytes) -> dict:
    """Run one scenario (inside its namespace) and return its record."""
    _setup(sc, tzif)
    boot = _t(sc.start) - BOOT_LEAD
    clock = FakeClock(WORK / "clock", rate, boot - 2)
    # check: a job-side date reads our fake clock
    env = {"PATH": "/usr/bin:/bin", **_faketime_env()}
    r0 = time.clock_gettime(time.CLOCK_REALTIME)
    out = subprocess.run(["date", "+%s.%N"], env=env, capture_output=True, text=True, check=True).stdout
    r1 = time.clock_gettime(time.CLOCK_REALTIME)
    seen = float(out)
    if not clock.fake(r0) - 1 <= seen <= clock.fake(r1) + 1:
        raise RuntimeError(f"libfaketime clock check failed: date read {seen}, "
                           f"expected {clock.fake(r0)}..{clock.fake(r1)}")
    clock.set(boot)
    lives, events = [], []
    daemon = _start_daemon(sc)
    life_start = boot
    try:
        for a_iso, b_iso, kind in sorted(sc.outages):
            a, b = _t(a_iso), _t(b_iso)
            clock.sleep_until(a)
            if daemon.poll() is not None:
                raise RuntimeError(f"cron exited ({daemon.returncode}) before {a_iso}")
            if kind == "suspend":
                at = clock.fake()
                clock.jump(b - a)
                events.append({"kind": "suspend", "at": _iso(at, True), "to": _iso(at + b - a, True)})
            else:
                at = clock.fake()
                _stop_daemon(daemon)
                lives.append([_iso(life_start, True), _iso(at, True)])
                clock.set(b)
                daemon = _start_daemon(sc)
                life_start = b
                events.append({"kind": "down", "at": _iso(at, True), "to": _iso(b, True)})
        clock.sleep_until(_t(sc.end))
        if daemon.poll() is not None:
            raise RuntimeError(f"cron exited ({daemon.returncode}) before the end")
        lives.append([_iso(life_start, True), _iso(clock.fake(), True)])
    finally:
        if daemon.poll() is None:
            _stop_daemon(daemon)
    time.sleep(0.3)  # jobs started at the very end finish writing
    runs: dict[str, list[str]] = {name: [] for name in sc.jobs}
    log = WORK / "runs"
    for line in (log.read_text().splitlines() if log.exists() else []):
        name, t = line.split()
        runs[name].append(_iso(float(t), True))
    stderr = (WORK / "cron.stderr").read_text(errors="replace").strip()
    return {**asdict(sc), "lives": lives, "events": events, "runs": {k: sorted(v) for k, v in runs.items()},
            "cron_stderr": stderr}


# ---------------------------------------------------------------------------------------------
# Outside: checks, one namespace per scenario, the fixture files


def _version(package: str) -> str:
    out = subprocess.run(["dpkg-query", "-W", "-f=${Version}", package], capture_output=True, text=True)
    if out.returncode != 0 or not out.stdout.strip():
        sys.exit(f"capture_cron: Debian package {package!r} is not installed (apt-get install cron faketime)")
    return out.stdout.strip()


def _run_one(sc: Scenario, rate: float, tzif: bytes) -> dict:
    timeout = 60 + 3 * sc.awake() / rate
    # SCHED_FIFO for the controller, the daemon and its jobs (inherited): other load on the machine must not
    # delay a wake-up, since every real millisecond is `rate` fake ones
    argv = ["unshare", "--mount", "--pid", "--fork", "--kill-child", "--propagation", "private", "--",
            "chrt", "--fifo", "10", sys.executable, str(Path(__file__).resolve()), "--inside", "--rate", str(rate)]
    given = {**asdict(sc), "tzif": base64.b64encode(tzif).decode()}
    p = subprocess.run(argv, input=json.dumps(given), capture_output=True, text=True, timeout=timeout)
    if p.returncode != 0:
        raise RuntimeError(f"{sc.id}: inner run failed ({p.returncode}):\n{p.stderr[-3000:]}")
    return json.loads(p.stdout)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--only", help="run only scenarios whose id contains this (a regular expression)")
    ap.add_argument("--list", action="store_true", help="list the scenarios and their real duration, run nothing")
    ap.add_argument("--rate", type=float, default=RATE, help="fake seconds per real second (default 60)")
    # 5 at once on 2 cores: the daemons sleep nearly all the time, and the runs of the issue-25 zones, recorded so,
    # lie 1.22-3.89 s into their minute as the first capture's do (1.22-4.15 s)
    ap.add_argument("--jobs", type=int, default=5, help="scenarios run at once (default 5)")
    ap.add_argument("--out", default=str(ROOT / "tests" / "fixtures" / "cron_daemon"))
    ap.add_argument("--inside", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.inside:
        given = json.loads(sys.stdin.read())
        tzif = base64.b64decode(given.pop("tzif"))
        print(json.dumps(run_inside(Scenario(**given), args.rate, tzif)))
        return 0
    todo = [s for s in scenarios() if not args.only or re.search(args.only, s.id)]
    if args.list:
        for s in todo:
            print(f"{s.id:75s} {s.awake() / args.rate:6.0f} s")
        print(f"{len(todo)} scenarios, {sum(s.awake() for s in todo) / args.rate / 60:.1f} min of daemon time "
              f"at rate {args.rate:g}")
        return 0
    if os.geteuid() != 0:
        sys.exit("capture_cron: must run as root (it makes a mount namespace and runs cron)")
    for exe in (CRON, LIBFAKETIME, shutil.which("unshare") or "/usr/bin/unshare"):
        if not os.path.exists(exe):
            sys.exit(f"capture_cron: {exe} is missing (apt-get install cron faketime util-linux)")
    versions = {"cron": _version("cron"), "faketime": _version("libfaketime"), "release": RELEASE}
    sys.path.insert(0, str(ROOT))
    import calsim  # the zone data calsim is given, compiled to TZif for cron's localtime

    tzifs = {z: calsim.release(RELEASE).tzif(z) for z in {s.zone for s in todo}}
    t0 = time.monotonic()
    results: dict[str, dict] = {}
    with concurrent.futures.ThreadPoolExecutor(max_workers=args.jobs) as pool:
        futures = {pool.submit(_run_one, s, args.rate, tzifs[s.zone]): s
                   for s in sorted(todo, key=lambda s: -s.awake())}
        for n, fut in enumerate(concurrent.futures.as_completed(futures), 1):
            s = futures[fut]
            results[s.id] = fut.result()
            print(f"[{n}/{len(todo)}] {s.id}: {sum(map(len, results[s.id]['runs'].values()))} runs "
                  f"({time.monotonic() - t0:.0f} s)", file=sys.stderr, flush=True)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    for kind in sorted({s.kind for s in todo}):
        path = out / f"{kind}.cron-{versions['cron']}.faketime-{versions['faketime']}.tz-{RELEASE}.json"
        old = json.loads(path.read_text())["scenarios"] if path.exists() and args.only else []
        ran = {s.id for s in todo if s.kind == kind}
        order = [s.id for s in scenarios() if s.kind == kind]
        merged = {r["id"]: r for r in old if r["id"] not in ran} | {i: results[i] for i in ran}
        body = {
            "about": "Debian cron run under libfaketime by tools/capture_cron.py; "
                     "replayed by tests/presets/test_cronie_daemon.py",
            "command": "sudo .venv/bin/python tools/capture_cron.py"
                       + (f" --rate {args.rate:g}" if args.rate != RATE else ""),
            "cron": versions["cron"], "faketime": versions["faketime"], "release": RELEASE, "rate": args.rate,
            "boot_lead_s": BOOT_LEAD,
            "scenarios": [merged[i] for i in order if i in merged],
        }
        path.write_text(json.dumps(body, indent=1) + "\n")
        print(f"wrote {path.relative_to(ROOT) if path.is_relative_to(ROOT) else path} "
              f"({len(body['scenarios'])} scenarios)", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
