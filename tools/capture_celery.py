#!/usr/bin/env python3
"""Record what the real Celery beat sends, on a fake clock, as JSON fixtures for calsim's Celery presets.

Usage (from the repository root; needs only ``python3`` 3.11 and access to PyPI)::

    python tools/capture_celery.py                 # both versions, about 5 min (5.7: 30-75 s, 5.4: 4-5 min)
                                                   # (the first run adds about 1 min of pip)
    python tools/capture_celery.py --only 5.7      # one version
    python tools/capture_celery.py --out tests/fixtures/celery

Writes ``tests/fixtures/celery/celery-5.7.x.json`` and ``celery-5.4.x.json``.

How
---
For each pinned version (``PINS``) this script creates, or reuses, a virtual
environment ``~/.cache/calsim-oracles/celery-<major.minor>/`` holding exactly
``celery==<pin>`` and ``time-machine==<pin>`` and re-runs itself inside it
with ``--worker``; the worker prints the fixture as JSON and the outer process
writes it (the exact versions installed, Python's version and the zone data
Python's ``zoneinfo`` reads are recorded in the fixture).

The worker drives the real ``celery.beat.PersistentScheduler`` (shelve file in
a temporary directory) the way ``celery.beat.Service.start`` does: call
``scheduler.tick()``, "sleep" the number of seconds it returns, repeat. The
clock is ``time_machine.travel(..., tick=False)``: every ``datetime.now`` and
``time.time`` in Celery reads the fake instant, which moves only when the loop
"sleeps" (``move_to``). The only patch is ``apply_entry`` (a subclass): it
records ``(entry name, fake now)`` instead of publishing a message, and
``producer`` is ``None`` so no broker connection is opened. Everything else
(``is_due``, ``remaining``, the heap, ``reserve``, the shelve store,
``beat_cron_starting_deadline``) is Celery's own code. ``app.conf.timezone``
is the zone, ``enable_utc`` is left at its default (``True``), the broker is
``memory://``, ``beat_max_loop_interval`` is the default (300 s).
``result_expires`` is ``None``, so beat does not add its own
``celery.backend_cleanup`` entry (it does when no result backend with native
expiry is configured) and the recorded job is the scheduler's only entry. That
matters in 5.4: its ``tick`` only looks at the heap's top event and returns
without re-heaping it when that entry is not due, so a second entry whose
heap time (computed with 5.4's wall-clock ``remaining``) is wrong across a DST
change blocks the job until it runs itself (celery issue 7649, fixed in 5.7's
``tick``); with the cleanup entry present 5.4's hourly interval in New York
skipped 03:00 EST on the fall-back day.

Cases
-----
``fire_cases``: for each zone (New York, Berlin, Sydney, Adelaide) and each of
its two 2026 DST changes, a window from 00:00 UTC two days before the UTC date
of the change to 00:00 UTC three days after it; beat starts at the window start
with a fresh schedule file and one entry (one scheduler per rule). Rules: the
crontabs of ``CRON_RULES`` and ``schedule(timedelta(hours=1))``,
``schedule(timedelta(hours=24))`` (these start counting at the window start,
00:00 UTC).

``outage_cases``: beat runs 30 hours with a fresh schedule file, stops
gracefully (``Service.stop`` -> ``scheduler.close()``: the shelve is synced) at
``down_utc[0]``, and restarts at ``down_utc[1]`` either with the same file
("kept") or a new empty one ("lost"), with ``beat_cron_starting_deadline``
``None`` or 300; it then runs two more days. ``runs_utc`` are the sends after
the restart, ``runs_before_utc`` those of the 30 hours before the stop.
Outages per zone (ends chosen off the hour, so a send at restart is a
catch-up, not a regular run): 3 h on a plain day (00:50-03:50 local, three
days before the spring change), 3 h from 00:45 local on the spring-change day,
3 days from 12:20 local the day before each change.

When ``tick()`` returns 0 without sending anything (5.7 does that while the
heap's time, 10 ms early by ``Scheduler.adjust``'s drift, has come but the
entry's ``is_due`` still says "not yet"), the real beat loops again at once,
spinning until real time reaches the due instant; on the frozen clock each
such tick is given 1 ms (``SPIN``), so sends land at most about 1 ms after the
due instant (fixtures keep millisecond precision when it is not zero). Every
``tick()`` call also takes 1 us (``TICK``): a real beat never wakes exactly
on a due instant (the sleep overshoots, the tick takes time), and a clock
frozen exactly on one misleads 5.4's ``beat_cron_starting_deadline`` check
(its walk to "the latest feasible run" stops at a remaining time of exactly 0
and treats the due run as missed, sending it only at the next wake-up, 5
minutes late).

Celery 5.4 with ``beat_cron_starting_deadline`` set needs one more thing.
Its ``crontab.is_due`` (``schedules.py:639-660``) walks from ``last_run_at``
to "the latest feasible run" in steps of the current (negative) remaining
time: when beat ticks a few microseconds after a due instant, the steps are
microseconds long and the walk covers the whole gap since the last run.
On a real clock each step takes real time, so the remaining time grows and
the walk ends after about sqrt(2 * gap / step cost) steps (a short CPU burst,
then the send); on a frozen clock it never ends. So for 5.4 crontabs with a
deadline, each ``app.now()`` call (``remaining_delta`` calls it once a step) moves the
fake clock 1 ms (``NOW_COST``; a real step is some 20-50 us): those sends land
a few seconds after the due instant (about 3 s for hourly, 13 s for daily
rules), where a real beat, at 20-50 us a step, would be 0.4-3 s late.

A ``ticks`` guard stops any scenario that would loop without the clock moving.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time as _time
from datetime import datetime, timedelta, timezone
from pathlib import Path

from oracle_venv import CACHE, ensure_venv, transitions

PINS = {"5.7": "5.7.0", "5.4": "5.4.0"}  # newest patch of each on PyPI when captured (2026-12-07)
TIME_MACHINE = "3.6.0"
REPO = Path(__file__).resolve().parent.parent

ZONES = ["America/New_York", "Europe/Berlin", "Australia/Sydney", "Australia/Adelaide"]
YEAR = 2026
CRON_RULES = ["30 2 * * *", "30 1 * * *", "0 2 * * *", "0 * * * *", "30 * * * *", "0 */2 * * *", "15 3 * * *"]
INTERVALS = {"schedule(timedelta(hours=1))": 3600, "schedule(timedelta(hours=24))": 86400}
BEFORE = timedelta(hours=30)  # beat runs this long before each outage
SPIN = timedelta(milliseconds=1)  # fake time a tick() that returns 0 without sending takes
TICK = timedelta(microseconds=1)  # fake time every tick() call takes
NOW_COST = timedelta(milliseconds=1)  # 5.4 with a deadline: fake time each app.now() call takes
OUTAGE_RULES = ["30 2 * * *", "0 * * * *", "schedule(timedelta(hours=1))", "schedule(timedelta(hours=24))"]


# ----------------------------------------------------------------- plan (stdlib)

def iso(dt: datetime) -> str:
    """UTC ISO text with a Z; milliseconds only when the instant is not on a whole second."""
    dt = dt.astimezone(timezone.utc)
    ms = round(dt.microsecond / 1000)
    dt = dt.replace(microsecond=0) + timedelta(milliseconds=ms)
    if dt.microsecond:
        return dt.strftime("%Y-%m-%dT%H:%M:%S.") + f"{dt.microsecond // 1000:03d}Z"
    return dt.strftime("%Y-%m-%dT%H:%M:%SZ")


def windows(zone: str) -> list[tuple[datetime, datetime, datetime]]:
    """(window start, window end, change instant) for each DST change of 2026."""
    out = []
    for tr in transitions(zone, YEAR):
        day = tr.replace(hour=0, minute=0, second=0, microsecond=0)
        out.append((day - timedelta(days=2), day + timedelta(days=3), tr))
    return out


def local(zone: str, y: int, m: int, d: int, hh: int, mm: int) -> datetime:
    from zoneinfo import ZoneInfo

    return datetime(y, m, d, hh, mm, tzinfo=ZoneInfo(zone)).astimezone(timezone.utc)


def outages(zone: str) -> list[tuple[str, datetime, datetime]]:
    from zoneinfo import ZoneInfo

    tz = ZoneInfo(zone)
    trs = transitions(zone, YEAR)
    # the spring change is the one where the offset grows
    spring = [t for t in trs
              if t.astimezone(tz).utcoffset() > (t - timedelta(seconds=1)).astimezone(tz).utcoffset()][0]
    out = []
    sday = spring.astimezone(tz).date()
    plain = sday - timedelta(days=3)
    a = local(zone, plain.year, plain.month, plain.day, 0, 50)
    out.append(("3h outage on a plain day (00:50-03:50 local)", a, a + timedelta(hours=3)))
    a = local(zone, sday.year, sday.month, sday.day, 0, 45)
    out.append(("3h outage from 00:45 local on the spring-forward day", a, a + timedelta(hours=3)))
    for tr in trs:
        d = tr.astimezone(tz).date() - timedelta(days=1)
        a = local(zone, d.year, d.month, d.day, 12, 20)
        kind = "spring-forward" if tr == spring else "fall-back"
        out.append((f"3 day outage from 12:20 local the day before the {kind} change", a, a + timedelta(days=3)))
    return out


def tzdata_info() -> dict:
    import zoneinfo

    info = {"zoneinfo_tzpath": list(zoneinfo.TZPATH)}
    for p in zoneinfo.TZPATH:
        zi = Path(p) / "tzdata.zi"
        if zi.exists():
            info["system_tzdata"] = zi.read_text().splitlines()[0].lstrip("# ").strip()
            break
    try:
        import importlib.metadata as md

        info["tzdata_package"] = md.version("tzdata")
    except Exception:
        info["tzdata_package"] = None
    return info


# ----------------------------------------------------------------- worker (inside the venv)

def worker() -> dict:
    import importlib.metadata as md
    import tempfile

    import celery
    import time_machine
    from celery import Celery
    from celery.beat import PersistentScheduler
    from celery.schedules import crontab, schedule

    records: list[tuple[str, datetime]] = []

    class RecordingScheduler(PersistentScheduler):
        producer = None  # no broker connection: apply_entry below never publishes

        def apply_entry(self, entry, producer=None):
            records.append((entry.name, datetime.now(timezone.utc)))

    def make_schedule(rule: str):
        if rule in INTERVALS:
            return schedule(timedelta(seconds=INTERVALS[rule]))
        minute, hour, *_ = rule.split()
        return crontab(minute=minute, hour=hour)

    slow_now = celery.VERSION < (5, 5)  # see NOW_COST

    def make_app(zone: str, rule: str, deadline, tm=None):
        app = Celery("calsim_oracle", broker="memory://", set_as_current=True)
        if slow_now and deadline is not None and rule not in INTERVALS:
            real_now = app.now

            def now():
                tm.shift(NOW_COST)
                return real_now()

            app.now = now
        app.conf.timezone = zone
        app.conf.beat_cron_starting_deadline = deadline
        # no celery.backend_cleanup entry: the job is beat's only entry (see the docstring)
        app.conf.result_expires = None
        app.conf.beat_schedule = {"job": {"task": "calsim.job", "schedule": make_schedule(rule)}}
        return app

    def run(app, filename: str, tm, start: datetime, end: datetime) -> list[datetime]:
        """Service.start's loop: tick, sleep what tick returns; then Service.stop -> close()."""
        tm.move_to(start)
        del records[:]
        sched = RecordingScheduler(app=app, schedule_filename=filename)
        now = start
        ticks = 0
        while True:
            ticks += 1
            if ticks > 500000:
                raise RuntimeError("beat loop without progress")
            sent = len(records)
            delay = sched.tick()
            now = datetime.now(timezone.utc)  # NOW_COST may have moved the clock during the tick
            step = TICK  # a tick and a wake-up take time: the clock never stops exactly on a due instant
            if delay and delay > 0:
                step += timedelta(seconds=delay)
            elif len(records) == sent:
                # tick() returned 0 (or less) without sending: beat loops again
                # at once (no sleep), spinning until the real clock reaches the
                # entry's time; on a frozen clock that spin is 1 ms a tick.
                step += SPIN
            now = now + step
            if now >= end:
                break
            tm.move_to(now)
        sched.close()
        return [t for name, t in records if name == "job"]

    fire_cases = []
    outage_cases = []
    clock = time_machine.travel(datetime(YEAR, 1, 1, tzinfo=timezone.utc), tick=False)
    with tempfile.TemporaryDirectory() as tmp, clock as tm:
        n = 0
        for zone in ZONES:
            for (ws, we, tr) in windows(zone):
                for rule in CRON_RULES + list(INTERVALS):
                    n += 1
                    fn = os.path.join(tmp, f"fire{n}")
                    fires = run(make_app(zone, rule, None, tm), fn, tm, ws, we)
                    fire_cases.append({
                        "zone": zone,
                        "rule": rule,
                        "kind": "interval" if rule in INTERVALS else "crontab",
                        "expr": (rule if rule in INTERVALS
                                 else "crontab(minute={!r}, hour={!r})".format(*rule.split()[:2])),
                        "dst_change_utc": iso(tr),
                        "window_utc": [iso(ws), iso(we)],
                        "beat_started_utc": iso(ws),
                        "fires_utc": [iso(t) for t in fires],
                    })
            for (label, down, up) in outages(zone):
                for rule in OUTAGE_RULES:
                    for kept in (True, False):
                        for deadline in (None, 300):
                            n += 1
                            fn = os.path.join(tmp, f"out{n}")
                            before = run(make_app(zone, rule, deadline, tm), fn, tm, down - BEFORE, down)
                            fn2 = fn if kept else os.path.join(tmp, f"out{n}-new")
                            after = run(make_app(zone, rule, deadline, tm), fn2, tm, up, up + timedelta(days=2))
                            outage_cases.append({
                                "zone": zone,
                                "rule": rule,
                                "kind": "interval" if rule in INTERVALS else "crontab",
                                "settings": {
                                    "schedule_file": "kept" if kept else "lost",
                                    "beat_cron_starting_deadline": deadline,
                                    "beat_max_loop_interval": None,
                                    "enable_utc": True,
                                },
                                "started_utc": iso(down - BEFORE),
                                "down_utc": [iso(down), iso(up)],
                                "observed_until_utc": iso(up + timedelta(days=2)),
                                "runs_before_utc": [iso(t) for t in before],
                                "runs_utc": [iso(t) for t in after],
                                "note": label + "; beat stopped gracefully (schedule synced), restarted at down_utc[1]",
                            })
    versions = {p: md.version(p) for p in ("celery", "kombu", "time-machine", "python-dateutil")}
    return {
        "system": "celery",
        "version": celery.__version__,
        "python": ".".join(map(str, sys.version_info[:3])),
        "captured_by": "python tools/capture_celery.py",
        "captured_at": None,  # filled in by the outer process (real clock)
        "packages": versions,
        "zone_data": tzdata_info(),
        "method": "celery.beat.PersistentScheduler.tick() looped as Service.start does, on time_machine's "
                  "frozen clock moved by the returned sleep; apply_entry records instead of publishing",
        "fire_cases": fire_cases,
        "outage_cases": outage_cases,
    }


# ----------------------------------------------------------------- outer (any python3)

def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--only", choices=sorted(PINS), help="one Celery minor version")
    ap.add_argument("--out", default=str(REPO / "tests" / "fixtures" / "celery"))
    args = ap.parse_args()
    if args.worker:
        json.dump(worker(), sys.stdout, indent=1)
        return
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    for minor in ([args.only] if args.only else list(PINS)):
        t0 = _time.monotonic()
        py = ensure_venv(CACHE / f"celery-{minor}", {"celery": PINS[minor], "time-machine": TIME_MACHINE})
        res = subprocess.run([str(py), str(Path(__file__).resolve()), "--worker"],
                             capture_output=True, text=True, cwd="/")
        if res.returncode:
            sys.stderr.write(res.stderr)
            raise SystemExit(f"celery {minor}: worker failed")
        data = json.loads(res.stdout)
        data["captured_at"] = datetime.now(timezone.utc).replace(microsecond=0).isoformat().replace("+00:00", "Z")
        path = out / f"celery-{minor}.x.json"
        path.write_text(json.dumps(data, indent=1) + "\n")
        print(f"{path}: {len(data['fire_cases'])} fire cases, {len(data['outage_cases'])} outage cases, "
              f"celery {data['version']}, {_time.monotonic() - t0:.0f} s")


if __name__ == "__main__":
    main()
