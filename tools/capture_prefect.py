#!/usr/bin/env python3
"""Record when the real Prefect 3 server schedules flow runs, as JSON fixtures for calsim's Prefect preset.

Usage (from the repository root; needs only ``python3`` 3.11 and access to PyPI)::

    python tools/capture_prefect.py              # 75-100 s, about 3-4 min on 2 busy cores (first run: +2 min of pip)
    python tools/capture_prefect.py --out tests/fixtures/prefect

    # Prefect on Python 3.13 (a venv of its own):
    python tools/capture_prefect.py --python ~/.pyenv/versions/3.13.0/bin/python3.13

Writes ``tests/fixtures/prefect/prefect-3.9.x.json`` (``prefect-3.9.x-py3.13.json``
with a Python 3.13 ``--python``). The Python version matters: on Python < 3.13
``IntervalSchedule`` and the start/end coercion use pendulum, on >= 3.13
``whenever`` (``server/schemas/schedules.py``, the ``sys.version_info >= (3, 13)``
branches); cron and RRULE dates do not depend on it.

How
---
Creates, or reuses, ``~/.cache/calsim-oracles/prefect-3.9/`` holding exactly
``prefect==PIN`` and re-runs itself inside it with ``--worker``; the worker
prints the fixture as JSON (versions of prefect, whenever, pendulum,
python-dateutil and the zone data are recorded in it).

No clock is patched: every Prefect function used takes the instant as an
argument (``start``/``end``, ``start_time``), and this script supplies fake
instants.

``fire_cases``: the server's schedule classes
(``prefect.server.schemas.schedules``: ``CronSchedule``, ``RRuleSchedule``,
``IntervalSchedule``) asked through ``_get_dates_generator(n, start, end)``, the
method the scheduler service calls (``models.deployments
._generate_scheduled_flow_runs``). ``fires_utc`` is what the scheduler service
creates over the window when it runs all the time: the service loop
(``services/scheduler.py`` ``schedule_deployments``, every ``loop_seconds`` =
60 s) emulated as below, from the window start; ``get_dates_utc`` is one
``_get_dates_generator(n=1000, start=window start, end=window end)`` call. The
two differ only if a refill starting inside a DST change would create another
set of dates (``same`` says whether they agree). Hourly RRULEs are only asked
once (``get_dates_utc``; dateutil replays them from 2020, 4 s a call).

The service emulation: every 60 s the service selects the schedule when it has
fewer than ``min_runs`` (3) SCHEDULED auto-scheduled runs at or after now, or
the latest of them is before now + ``min_scheduled_time`` (1 h)
(``_get_select_deployments_to_schedule_query``: the SQL predicate, re-written
here in Python), and then calls the REAL
``prefect.server.models.deployments._generate_scheduled_flow_runs`` with
``start_time=now``, ``end_time=now + max_scheduled_time`` (100 days),
``min_time``, ``min_runs``, ``max_runs`` (100) exactly as ``_collect_flow_runs``
does; only its database reads are stubbed (``session.get`` returns a stand-in
deployment, ``read_deployment_schedules`` the one schedule,
``with_system_labels_for_deployment_flow_run`` no labels). The runs it returns
are inserted with their idempotency key (``scheduled <deployment> <schedule>
<date>``), so a date is created once (``_insert_scheduled_flow_runs``: ON
CONFLICT DO NOTHING).

``outage_cases``: the same emulation with an outage ``down_utc``. "server":
no scheduler loop and no worker polls while down; at restart the worker's
first poll (``workers/base.py`` ``_get_scheduled_flow_runs``:
``scheduled_before = now + prefetch_seconds``) gets every SCHEDULED/Late run
due by then, ordered by ``next_scheduled_start_time``
(``get-runs-from-worker-queues.sql.jinja``), and starts them all at once;
dates that were never created are never run. "worker": the server keeps
topping up (past-due runs do not count towards ``min_runs``), the worker
starts every past-due run at its first poll after the outage, oldest first.
While both are up a run is started at its scheduled time (the worker polls
every 10 s with 10 s prefetch; a run's flow starts at its scheduled time).
``precreated_at_down_utc``: the runs that existed, in the future, when the
outage began. ``runs_utc``: start instants of runs from the outage start on;
``runs``: each with its scheduled time.

Cases
-----
Zones New York, Berlin, Sydney, Adelaide; fire windows from 00:00 UTC two days
before the UTC date of each 2026 DST change to 00:00 UTC three days after
(8 windows) x 15 schedules: the 7 crons of ``CRON_RULES``, the 5 RRULEs of
``RRULES`` and the 3 ``INTERVALS`` (anchored on 2026-01-01 local: hourly at
00:30, daily at 02:30 and 00:00) = 120 fire cases. Outages per zone: 3 h from
00:50 local on the spring-forward day and 3 days from 12:20 local the day
before each change, each as a server and as a worker outage, for the 5
``OUTAGE_RULES`` = 120 outage cases; the service runs from 1 day before the
outage to 1 day after it. Then the server outages again under each of the
``SETTING_VARIANTS`` (``min_runs`` 10, 1, 0; ``min_scheduled_time`` 1 day, 15
min; the values are in each case's ``settings``) = 300 more cases, after the
default ones (which keep their place and content).

Two emulation details matter only for these: the service's first loop always
creates runs (a new deployment is picked up by ``schedule_recent_deployments``,
``services/scheduler.py:130-167, 291``), and the predicate's ``max()`` over no
runs is NULL, which selects nothing (so with ``min_runs=0`` a deployment left
with no future run is never scheduled again).
"""
from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time as _time
from datetime import datetime, timedelta, timezone
from pathlib import Path

from oracle_venv import CACHE, ensure_venv, transitions

PIN = "3.9.1"  # newest 3.9.x on PyPI when captured (2026-12-07)
MINOR = "3.9"
REPO = Path(__file__).resolve().parent.parent

ZONES = ["America/New_York", "Europe/Berlin", "Australia/Sydney", "Australia/Adelaide"]
YEAR = 2026
CRON_RULES = ["30 2 * * *", "30 1 * * *", "0 2 * * *", "0 * * * *", "30 * * * *", "0 */2 * * *", "15 3 * * *"]
RRULES = {  # RRULE equivalents of some of the cron rules
    "FREQ=DAILY;BYHOUR=2;BYMINUTE=30": "30 2 * * *",
    "FREQ=DAILY;BYHOUR=1;BYMINUTE=30": "30 1 * * *",
    "FREQ=DAILY;BYHOUR=2;BYMINUTE=0": "0 2 * * *",
    "FREQ=DAILY;BYHOUR=3;BYMINUTE=15": "15 3 * * *",
    "FREQ=HOURLY;BYMINUTE=0": "0 * * * *",
}
# IntervalSchedule: (interval seconds, anchor as local wall time on 2026-01-01)
INTERVALS = {
    "IntervalSchedule(interval=timedelta(hours=1), anchor 2026-01-01T00:30 local)": (3600, (0, 30)),
    "IntervalSchedule(interval=timedelta(days=1), anchor 2026-01-01T02:30 local)": (86400, (2, 30)),
    "IntervalSchedule(interval=timedelta(days=1), anchor 2026-01-01T00:00 local)": (86400, (0, 0)),
}
SETTINGS = {  # Prefect 3.9 defaults (settings/models/server/services.py, settings/models/worker.py)
    "min_runs": 3, "max_runs": 100, "min_scheduled_time_s": 3600, "max_scheduled_time_s": 100 * 86400,
    "scheduler_loop_seconds": 60, "worker_query_seconds": 10, "worker_prefetch_seconds": 10,
}
# Server outages are also recorded under these non-default scheduler settings (the rest as SETTINGS)
SETTING_VARIANTS = [
    {"min_runs": 10},
    {"min_scheduled_time_s": 86400},
    {"min_runs": 10, "min_scheduled_time_s": 86400},
    {"min_runs": 1, "min_scheduled_time_s": 900},
    {"min_runs": 0, "min_scheduled_time_s": 900},
]
OUTAGE_RULES = ["cron:30 2 * * *", "cron:0 * * * *", "rrule:FREQ=DAILY;BYHOUR=2;BYMINUTE=30",
                "interval:IntervalSchedule(interval=timedelta(hours=1), anchor 2026-01-01T00:30 local)",
                "interval:IntervalSchedule(interval=timedelta(days=1), anchor 2026-01-01T02:30 local)"]


def iso(dt: datetime) -> str:
    dt = dt.astimezone(timezone.utc)
    if dt.microsecond:
        return dt.strftime("%Y-%m-%dT%H:%M:%S.%fZ")
    return dt.strftime("%Y-%m-%dT%H:%M:%SZ")


def windows(zone: str):
    for tr in transitions(zone, YEAR):
        day = tr.replace(hour=0, minute=0, second=0, microsecond=0)
        yield day - timedelta(days=2), day + timedelta(days=3), tr


def outages(zone: str):
    """(label, down, up): 3 h across the spring-forward change, 3 days across each change."""
    from zoneinfo import ZoneInfo

    tz = ZoneInfo(zone)
    out = []
    for tr in transitions(zone, YEAR):
        spring = tr.astimezone(tz).utcoffset() > (tr - timedelta(seconds=1)).astimezone(tz).utcoffset()
        kind = "spring-forward" if spring else "fall-back"
        d = tr.astimezone(tz).date()
        if spring:
            a = datetime(d.year, d.month, d.day, 0, 50, tzinfo=tz).astimezone(timezone.utc)
            out.append((f"3h outage from 00:50 local on the {kind} day", a, a + timedelta(hours=3)))
        d = d - timedelta(days=1)
        a = datetime(d.year, d.month, d.day, 12, 20, tzinfo=tz).astimezone(timezone.utc)
        out.append((f"3 day outage from 12:20 local the day before the {kind} change", a, a + timedelta(days=3)))
    return out


def tzdata_info() -> dict:
    import importlib.metadata as md
    import zoneinfo

    info = {"zoneinfo_tzpath": list(zoneinfo.TZPATH)}
    for p in zoneinfo.TZPATH:
        zi = Path(p) / "tzdata.zi"
        if zi.exists():
            info["system_tzdata"] = zi.read_text().splitlines()[0].lstrip("# ").strip()
            break
    for pkg in ("tzdata",):
        try:
            info[pkg + "_package"] = md.version(pkg)
        except Exception:
            info[pkg + "_package"] = None
    return info


# ----------------------------------------------------------------- worker (inside the venv)

def worker() -> dict:
    import asyncio
    import importlib.metadata as md
    import uuid
    from types import SimpleNamespace
    from zoneinfo import ZoneInfo

    import prefect
    from prefect.server.models import deployments as dep_models
    from prefect.server.schemas.schedules import CronSchedule, IntervalSchedule, RRuleSchedule

    def make(kindrule: str, zone: str):
        kind, rule = kindrule.split(":", 1)
        if kind == "cron":
            return CronSchedule(cron=rule, timezone=zone)
        if kind == "rrule":
            return RRuleSchedule(rrule=rule, timezone=zone)
        secs, (hh, mm) = INTERVALS[rule]
        return IntervalSchedule(interval=timedelta(seconds=secs),
                                anchor_date=datetime(YEAR, 1, 1, hh, mm, tzinfo=ZoneInfo(zone)), timezone=zone)

    # ---- the real _generate_scheduled_flow_runs with its database reads stubbed
    dep_id, sched_id = uuid.uuid4(), uuid.uuid4()
    current = {}

    class FakeSession:
        async def get(self, model, ident):
            return SimpleNamespace(id=dep_id, flow_id=uuid.uuid4(), version=None, work_queue_name="default",
                                   work_queue_id=None, parameters={}, infrastructure_document_id=None, tags=[])

    async def read_deployment_schedules(session, deployment_id, deployment_schedule_filter=None):
        return [SimpleNamespace(id=sched_id, schedule=current["schedule"], parameters={}, slug=None)]

    async def labels(session, deployment):
        return {}

    dep_models.read_deployment_schedules = read_deployment_schedules
    dep_models.with_system_labels_for_deployment_flow_run = labels
    fake_db = SimpleNamespace(Deployment=object)
    session = FakeSession()

    def generate(schedule, now: datetime, S: dict) -> list[datetime]:
        current["schedule"] = schedule
        runs = asyncio.run(dep_models._generate_scheduled_flow_runs(
            fake_db, session=session, deployment_id=dep_id, start_time=now,
            end_time=now + timedelta(seconds=S["max_scheduled_time_s"]),
            min_time=timedelta(seconds=S["min_scheduled_time_s"]), min_runs=S["min_runs"], max_runs=S["max_runs"]))
        out = []
        for r in runs:
            assert r["idempotency_key"].startswith(f"scheduled {dep_id} {sched_id} ")
            out.append(r["next_scheduled_start_time"].astimezone(timezone.utc))
        return out

    def service(schedule, start: datetime, end: datetime, down=None, outage=None, S: dict = SETTINGS):
        """Emulate scheduler loop + worker from ``start`` to ``end``; returns (runs, precreated at down)."""
        created: dict[datetime, datetime | None] = {}  # scheduled -> started (None: still SCHEDULED)
        precreated = None
        loop = timedelta(seconds=S["scheduler_loop_seconds"])
        poll = timedelta(seconds=S["worker_query_seconds"])
        now = start
        step = poll  # the scheduler loop (60 s) is a multiple of the worker poll (10 s)
        k = 0
        while now < end:
            server_up = not (down and down[0] <= now < down[1] and outage == "server")
            worker_up = not (down and down[0] <= now < down[1])
            if down and precreated is None and now >= down[0]:
                precreated = sorted(d for d, s in created.items() if s is None and d >= down[0])
            if server_up and k % (loop // poll) == 0:
                future = [d for d, s in created.items() if s is None and d >= now]
                # SQL: count < min_runs OR max(...) < now + min_time; max() of no rows is NULL (not selected).
                # The first loop also selects it as a just-created deployment (``schedule_recent_deployments``,
                # scheduler.py:130-167, 291).
                if (k == 0 or len(future) < S["min_runs"]
                        or (future and max(future) < now + timedelta(seconds=S["min_scheduled_time_s"]))):
                    for d in generate(schedule, now, S):
                        created.setdefault(d, None)
            if server_up and worker_up:
                horizon = now + poll  # the run due before the next poll: started at its time (or now, if late)
                for d in sorted(created):
                    if created[d] is None and d < horizon:
                        created[d] = max(d, now)
            now += step
            k += 1
        return created, precreated

    def outage_case(zone, label, down, up, kr, outage, S):
        kind, rule = kr.split(":", 1)
        sch = make(kr, zone)
        start, end = down - timedelta(days=1), up + timedelta(days=1)
        created, pre = service(sch, start, end, (down, up), outage, S)
        runs = sorted(((s, d) for d, s in created.items() if s is not None and s >= down),
                      key=lambda x: (x[0], x[1]))
        never = sorted(d for d in created if created[d] is None and d < end)
        return {
            "zone": zone, "rule": rule, "kind": kind,
            "settings": {"outage": outage, **S},
            "started_utc": iso(start),
            "down_utc": [iso(down), iso(up)],
            "observed_until_utc": iso(end),
            "precreated_at_down_utc": [iso(d) for d in pre or []],
            "runs_utc": [iso(s) for s, d in runs],
            "runs": [{"scheduled_utc": iso(d), "started_utc": iso(s)} for s, d in runs],
            "not_started_utc": [iso(d) for d in never],
            "note": label + f"; {outage} down",
        }

    fire_cases, outage_cases = [], []
    for zone in ZONES:
        for ws, we, tr in windows(zone):
            rules = ([f"cron:{r}" for r in CRON_RULES] + [f"rrule:{r}" for r in RRULES]
                     + [f"interval:{r}" for r in INTERVALS])
            for kr in rules:
                kind, rule = kr.split(":", 1)
                sch = make(kr, zone)
                once = [d.astimezone(timezone.utc) for d in sch._get_dates_generator(n=1000, start=ws, end=we)]
                case = {
                    "zone": zone, "rule": rule, "kind": kind,
                    "expr": {"cron": f"CronSchedule(cron={rule!r}, timezone={zone!r})",
                             "rrule": f"RRuleSchedule(rrule={rule!r}, timezone={zone!r})",
                             "interval": rule.replace("local)", f"local, timezone={zone!r})")}[kind],
                    "dst_change_utc": iso(tr), "window_utc": [iso(ws), iso(we)],
                    "get_dates_utc": [iso(d) for d in sorted(once)],
                }
                if kind == "rrule":
                    case["cron_equivalent"] = RRULES[rule]
                if kind == "interval":
                    secs, (hh, mm) = INTERVALS[rule]
                    case["interval_s"] = secs
                    case["anchor_local"] = f"{YEAR}-01-01T{hh:02d}:{mm:02d}"
                if rule == "FREQ=HOURLY;BYMINUTE=0":
                    case["fires_utc"] = case["get_dates_utc"]
                    case["fires_from"] = "get_dates"
                else:
                    created, _ = service(sch, ws, we)
                    fires = sorted(d for d in created if ws <= d < we)
                    case["fires_utc"] = [iso(d) for d in fires]
                    case["fires_from"] = "service emulation"
                    case["same"] = case["fires_utc"] == [iso(d) for d in sorted(once) if d < we]
                fire_cases.append(case)
        for label, down, up in outages(zone):
            for kr in OUTAGE_RULES:
                for outage in ("server", "worker"):
                    outage_cases.append(outage_case(zone, label, down, up, kr, outage, SETTINGS))
    # after the default cases (which keep their place): server outages under other scheduler settings
    for variant in SETTING_VARIANTS:
        for zone in ZONES:
            for label, down, up in outages(zone):
                for kr in OUTAGE_RULES:
                    outage_cases.append(outage_case(zone, label, down, up, kr, "server", {**SETTINGS, **variant}))
    packages = {}
    for p in ("prefect", "whenever", "pendulum", "python-dateutil", "croniter"):
        try:
            packages[p] = md.version(p)
        except Exception:
            packages[p] = None
    return {
        "system": "prefect",
        "version": prefect.__version__,
        "python": ".".join(map(str, sys.version_info[:3])),
        "captured_by": "python tools/capture_prefect.py",
        "captured_at": None,
        "packages": packages,
        "zone_data": tzdata_info(),
        "settings": SETTINGS,
        "method": "server schedule classes' _get_dates_generator; scheduler service emulated around the real "
                  "models.deployments._generate_scheduled_flow_runs (DB reads stubbed)",
        "fire_cases": fire_cases,
        "outage_cases": outage_cases,
    }


# ----------------------------------------------------------------- outer (any python3)

def python_version(interpreter: str) -> str:
    out = subprocess.run([interpreter, "-c", "import sys; print('%d.%d' % sys.version_info[:2])"],
                         capture_output=True, text=True, check=True)
    return out.stdout.strip()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--out", default=str(REPO / "tests" / "fixtures" / "prefect"))
    ap.add_argument("--python", metavar="INTERPRETER",
                    help="run Prefect under this interpreter (e.g. python3.13 or a path; default: this python3)")
    args = ap.parse_args()
    if args.worker:
        json.dump(worker(), sys.stdout, indent=1)
        return
    t0 = _time.monotonic()
    python = python_version(args.python) if args.python else None
    py = ensure_venv(CACHE / (f"prefect-{MINOR}" + (f"-py{python}" if python else "")), {"prefect": PIN}, args.python)
    # cwd=/ : never import a local "types" or "prefect" directory by accident
    env = {"PATH": "/usr/bin:/bin", "HOME": str(Path.home()), "PREFECT_HOME": str(CACHE / "prefect-home"),
           "PREFECT_LOGGING_LEVEL": "WARNING"}
    res = subprocess.run([str(py), str(Path(__file__).resolve()), "--worker"], capture_output=True, text=True, cwd="/",
                         env=env)
    if res.returncode:
        sys.stderr.write(res.stderr)
        raise SystemExit("prefect worker failed")
    data = json.loads(res.stdout)
    data["captured_at"] = datetime.now(timezone.utc).replace(microsecond=0).isoformat().replace("+00:00", "Z")
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    suffix = f"-py{python_version(args.python)}" if args.python else ""
    path = out / f"prefect-{MINOR}.x{suffix}.json"
    if args.python:
        data["captured_by"] += f" --python {args.python}"
    path.write_text(json.dumps(data, indent=1) + "\n")
    print(f"{path}: {len(data['fire_cases'])} fire cases, {len(data['outage_cases'])} outage cases, "
          f"prefect {data['version']}, {_time.monotonic() - t0:.0f} s")


if __name__ == "__main__":
    main()
