#!/usr/bin/env python3
"""Record when the real Dagster schedules fire across DST changes and what its scheduler daemon launches after
an outage, as a JSON fixture.

Usage (from the repository root; needs only ``python3`` >= 3.10 and PyPI)::

    python tools/capture_dagster.py            # writes tests/fixtures/dagster/dagster-1.13.29.json
    python tools/capture_dagster.py --out /tmp/dagster.json

Runtime: about 6 minutes (334 s on 2 cores; up to 10 on a loaded machine)
once the oracle virtual environment exists (the first run creates
``~/.cache/calsim-oracles/dagster-1.13.29/`` and installs ``dagster==1.13.29``
and ``time-machine==3.6.0`` into it: 1 to 2 minutes more). Nothing outside
that folder, a temporary directory (the Dagster instance's SQLite storage and
the generated definitions file) and the output file is written.

What runs
---------
The real Dagster 1.13.29 code, in its own virtual environment (this script
re-executes the ``WORKER`` source below with that venv's python):

* ``fire_cases``: for every 2026 DST change of America/New_York,
  Europe/Berlin, Australia/Sydney and Australia/Adelaide (8 windows, from 2
  days before the local day of the change to 3 days after it, 00:00 UTC), each
  of 7 cron rules as ``ScheduleDefinition(cron_schedule=rule,
  execution_timezone=zone)``: the tick times the scheduler daemon evaluates,
  from ``dagster._utils.schedules.schedule_execution_time_iterator`` (what
  ``RemoteSchedule.execution_time_iterator`` returns and
  ``launch_scheduled_runs_for_schedule_iterator`` walks), started at the
  window start. ``kind: schedule``.
* ``extra_fire_cases``: the same iterator in zones whose changes are NOT at
  01:00-03:59 local or not whole hours (America/Santiago and Asia/Beirut at
  midnight, Pacific/Chatham at 02:45, Australia/Lord_Howe's 30-minute DST),
  to test the fix-up hours ``DAYLIGHT_SAVINGS_HOURS = {1, 2, 3}``.
  ``fires_wall`` there is the zone-aware datetime the iterator yields, which
  can name a wall time that does not exist (its instant is then taken with
  the offset before the change, as ``.timestamp()`` does).
* ``outage_cases``: the real daemon function
  ``dagster._scheduler.scheduler.launch_scheduled_runs`` against a real
  ``DagsterInstance`` (``instance_for_test``, SQLite in a temporary folder,
  ``MockedRunLauncher`` so no run executes) and a real code server loading a
  generated definitions file: each case's schedule is started 3 hours before
  the daemon stops (70 minutes before the change), the daemon is called at
  every tick time until then (so every earlier tick ran), then not for 3 hours
  or 3 days, then once at the restart. ``runs`` are the ticks evaluated and
  runs launched at the restart, with ``max_catchup_runs`` 5 (the default) and
  1000 (to show it has no effect).

One library function reads the real clock: ``has_nonzero_minute_offset``
(cached per zone per process) asks ``datetime.now`` for the zone's current
offset, so hourly schedules in Australia/Lord_Howe (+10:30 in winter, +11 in
summer) give different ticks depending on the capture date. The fire cases
therefore run under ``time_machine.travel(<window start>, tick=False)`` with
that cache cleared before and after each case.

The daemon's clock is never the real one: every daemon call runs inside
``dagster._core.test_utils.freeze_time`` (which patches dagster's own
``get_current_datetime``/``get_current_timestamp``), with the daemon's
``end_datetime_utc`` argument set to the same instant.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from oracle_venv import CACHE, ensure_venv, write_fixture

ROOT = Path(__file__).resolve().parent.parent
SYSTEM = "dagster"
VERSION = "1.13.29"
PINS = {"dagster": VERSION, "time-machine": "3.6.0"}
VENV = CACHE / f"{SYSTEM}-{VERSION}"
DEFAULT_OUT = ROOT / "tests" / "fixtures" / SYSTEM / f"{SYSTEM}-{VERSION}.json"

WORKER = r'''
import datetime as dt
import json
import logging
import os
import sys
from importlib import metadata
from zoneinfo import ZoneInfo

import time_machine

import dagster
from dagster._core.instance_for_test import instance_for_test
from dagster._core.scheduler.instigation import TickStatus
from dagster._core.test_utils import create_test_daemon_workspace_context, freeze_time
from dagster._core.workspace.load_target import PythonFileTarget
from dagster._scheduler.scheduler import launch_scheduled_runs
from dagster._utils import schedules as dagster_schedules
from dagster._utils.schedules import DAYLIGHT_SAVINGS_HOURS, schedule_execution_time_iterator

UTC = dt.timezone.utc
ZONES = ["America/New_York", "Europe/Berlin", "Australia/Sydney", "Australia/Adelaide"]
CRONS = ["30 2 * * *", "30 1 * * *", "0 2 * * *", "0 * * * *", "30 * * * *", "0 */2 * * *", "15 3 * * *"]
EXTRA_ZONES = ["America/Santiago", "Asia/Beirut", "Pacific/Chatham", "Australia/Lord_Howe"]
EXTRA_CRONS = CRONS + ["30 0 * * *", "0 0 * * *", "30 23 * * *", "50 2 * * *", "15 2 * * *", "45 2 * * *"]
OUTAGES = {"3h": dt.timedelta(hours=3), "3d": dt.timedelta(days=3)}
MAX_CATCHUP = (5, 1000)
DOWN_BEFORE_CHANGE = dt.timedelta(minutes=70)
RUNNING_BEFORE_DOWN = dt.timedelta(hours=3)
WORKDIR = sys.argv[1]


def iso(t):
    return None if t is None else t.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def transitions(zone):
    tz = ZoneInfo(zone)
    out = []
    t = dt.datetime(2026, 1, 1, tzinfo=UTC)
    step = dt.timedelta(minutes=15)
    prev = t.astimezone(tz).utcoffset()
    while t.year == 2026:
        nxt = t + step
        off = nxt.astimezone(tz).utcoffset()
        if off != prev:
            local_day = (nxt - dt.timedelta(seconds=1)).astimezone(tz).date()
            out.append((nxt, local_day, prev, off))
            prev = off
        t = nxt
    return out


def windows(zones):
    for zone in zones:
        for instant, day, before, after in transitions(zone):
            start = dt.datetime.combine(day - dt.timedelta(days=2), dt.time(), UTC)
            end = dt.datetime.combine(day + dt.timedelta(days=3), dt.time(), UTC)
            change = "spring_forward" if after > before else "fall_back"
            local_before = (instant - dt.timedelta(seconds=1)).astimezone(ZoneInfo(zone))
            yield zone, instant, change, start, end, local_before


def ticks(rule, zone, start, end):
    out = []
    for t in schedule_execution_time_iterator(start.timestamp(), rule, zone):
        if t.timestamp() >= end.timestamp():
            break
        out.append(t)
        if len(out) > 1000:
            raise RuntimeError("runaway iterator")
    return out


def fire_case(zone, rule, start, end, wall=False):
    # has_nonzero_minute_offset(zone) (dagster/_utils/schedules.py) reads the REAL clock
    # (datetime.now) once per process (functools.cache): freeze it at the window start
    # and forget the cached answer, so the fixture does not depend on the capture date.
    dagster_schedules.has_nonzero_minute_offset.cache_clear()
    with time_machine.travel(start, tick=False):
        fired = ticks(rule, zone, start, end)
    dagster_schedules.has_nonzero_minute_offset.cache_clear()
    case = {
        "zone": zone,
        "rule": rule,
        "kind": "schedule",
        "window_utc": [iso(start), iso(end)],
        # the instant the daemon compares with now: the datetime's .timestamp()
        "fires_utc": [iso(dt.datetime.fromtimestamp(t.timestamp(), UTC)) for t in fired],
        "data_intervals_utc": None,
    }
    if wall:
        # the zone-aware datetime the iterator yields (may name a wall time that does not exist)
        case["fires_wall"] = [t.isoformat() + ("" if t.fold == 0 else " fold=1") for t in fired]
    return case


def schedule_name(i):
    return f"calsim_{i:04d}"


def write_definitions(cases):
    lines = [
        "import dagster as dg",
        "",
        "@dg.op",
        "def calsim_noop():",
        "    pass",
        "",
        "@dg.job",
        "def calsim_job():",
        "    calsim_noop()",
        "",
        "schedules = [",
    ]
    for i, (zone, rule) in enumerate(cases):
        lines.append(
            f"    dg.ScheduleDefinition(name={schedule_name(i)!r}, job=calsim_job, "
            f"cron_schedule={rule!r}, execution_timezone={zone!r}),"
        )
    lines += ["]", "", "defs = dg.Definitions(jobs=[calsim_job], schedules=schedules)", ""]
    path = os.path.join(WORKDIR, "calsim_schedules.py")
    with open(path, "w") as f:
        f.write("\n".join(lines))
    return path


def main():
    logger = logging.getLogger("calsim.dagster.oracle")
    logger.setLevel(logging.WARNING)
    fire_cases, extra_fire_cases, windows_out = [], [], []
    for zone, instant, change, start, end, _ in windows(ZONES):
        windows_out.append({"zone": zone, "change": change, "change_utc": iso(instant),
                            "window_utc": [iso(start), iso(end)]})
        for rule in CRONS:
            fire_cases.append(fire_case(zone, rule, start, end))
    for zone, instant, change, start, end, local_before in windows(EXTRA_ZONES):
        for rule in EXTRA_CRONS:
            case = fire_case(zone, rule, start, end, wall=True)
            case["change"] = change
            case["change_utc"] = iso(instant)
            case["change_local_hour"] = local_before.hour
            case["change_in_fixup_hours"] = local_before.hour in DAYLIGHT_SAVINGS_HOURS
            extra_fire_cases.append(case)

    plan = []  # (schedule index, zone, rule, outage label, down0, down1, max_catchup, change)
    sched_cases = []
    for zone, instant, change, start, end, _ in windows(ZONES):
        down0 = instant - DOWN_BEFORE_CHANGE
        for rule in CRONS:
            for label, length in OUTAGES.items():
                for max_catchup in MAX_CATCHUP:
                    plan.append((len(sched_cases), zone, rule, label, down0, down0 + length, max_catchup, change))
                    sched_cases.append((zone, rule))
    defs_path = write_definitions(sched_cases)

    outage_cases = []
    overrides = {"run_launcher": {"module": "dagster._core.test_utils", "class": "MockedRunLauncher"}}
    instance_dir = os.path.join(WORKDIR, "instance")
    os.makedirs(instance_dir, exist_ok=True)
    with instance_for_test(overrides=overrides, temp_dir=instance_dir) as instance:
        target = PythonFileTarget(
            python_file=defs_path, attribute=None, working_directory=WORKDIR, location_name="calsim"
        )
        with create_test_daemon_workspace_context(target, instance) as ctx:
            entry = next(iter(ctx.create_request_context().get_code_location_entries().values()))
            if entry.load_error:
                raise RuntimeError(str(entry.load_error))
            repo = next(iter(entry.code_location.get_repositories().values()))
            for index, zone, rule, label, down0, down1, max_catchup, change in plan:
                remote = repo.get_schedule(schedule_name(index))
                started = down0 - RUNNING_BEFORE_DOWN
                with freeze_time(started):
                    instance.start_schedule(remote)
                # The daemon runs at every tick until it stops, so no tick is missed before.
                calls = [t + dt.timedelta(seconds=1) for t in ticks(rule, zone, started, down0)]
                calls = [t for t in calls if t < down0] + [down1]
                for now in calls:
                    with freeze_time(now):
                        list(launch_scheduled_runs(
                            ctx, logger, now, iteration_times={}, max_catchup_runs=max_catchup))
                origin_id = remote.get_remote_origin_id()
                all_ticks = instance.get_ticks(origin_id, remote.selector_id, limit=10000)
                runs_by_id = {r.run_id: r for r in instance.get_runs(
                    filters=dagster.RunsFilter(tags={"dagster/schedule_name": remote.name}))}
                before, after = [], []
                for tick in sorted(all_ticks, key=lambda k: k.timestamp):
                    record = {
                        "tick_utc": iso(dt.datetime.fromtimestamp(tick.timestamp, UTC)),
                        "status": tick.status.value,
                        "run_count": len(tick.run_ids),
                    }
                    for run_id in tick.run_ids:
                        tags = runs_by_id[run_id].tags if run_id in runs_by_id else {}
                        record["run_tags"] = {k: v for k, v in sorted(tags.items())
                                              if k.startswith("dagster/") and "time" in k}
                    (after if tick.timestamp >= down0.timestamp() else before).append(record)
                runs = [
                    {
                        "created_at_utc": iso(down1),
                        "logical_date_utc": r["tick_utc"],
                        "data_interval_utc": None,
                        "tick_status": r["status"],
                        "run_count": r["run_count"],
                        "run_tags": r.get("run_tags", {}),
                    }
                    for r in after
                ]
                outage_cases.append({
                    "zone": zone,
                    "rule": rule,
                    "kind": "schedule",
                    "change": change,
                    "settings": {"max_catchup_runs": max_catchup, "outage": label,
                                 "schedule_started_utc": iso(started)},
                    "down_utc": [iso(down0), iso(down1)],
                    "missed_ticks_utc": [iso(t) for t in ticks(rule, zone, down0, down1 + dt.timedelta(seconds=1))],
                    "ticks_before_down": len(before),
                    "last_tick_before_down_utc": before[-1]["tick_utc"] if before else None,
                    "runs": runs,
                })
                with freeze_time(down1):
                    instance.stop_schedule(origin_id, remote.selector_id, remote)

    partition_set_names = sorted({str(repo.get_schedule(schedule_name(i)).partition_set_name)
                                  for i in range(len(sched_cases))})
    try:
        system_tz = open("/usr/share/zoneinfo/tzdata.zi").readline().strip().removeprefix("# version ")
    except OSError:
        system_tz = None
    versions = {}
    for name in ("dagster", "dagster-shared", "croniter", "pytz", "tzdata", "python-dateutil"):
        try:
            versions[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            versions[name] = None
    result = {
        "version": dagster.__version__,
        "python": sys.version.split()[0],
        "packages": versions,
        "system_tzdata": system_tz,
        "daylight_savings_hours": sorted(DAYLIGHT_SAVINGS_HOURS),
        "iterator_real_clock": "fire cases: datetime.now frozen (time-machine) at each window start",
        "schedule_snap_partition_set_names": partition_set_names,
        "windows": windows_out,
        "fire_cases": fire_cases,
        "extra_fire_cases": extra_fire_cases,
        "outage_cases": outage_cases,
    }
    # not stdout: the code server and dagster's loggers may print there
    with open(os.path.join(WORKDIR, "result.json"), "w") as f:
        json.dump(result, f)


main()
'''


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT, help="fixture to write")
    args = parser.parse_args()
    began = time.monotonic()
    python = ensure_venv(VENV, PINS)
    with tempfile.TemporaryDirectory(prefix="calsim-dagster-") as work:
        worker = Path(work) / "worker.py"
        worker.write_text(WORKER)
        env = dict(os.environ)
        env.update({"DAGSTER_HOME": work, "PYTHONHASHSEED": "0", "DAGSTER_DISABLE_TELEMETRY": "1"})
        done = subprocess.run(
            [str(python), str(worker), work], capture_output=True, text=True, env=env, cwd=work
        )
        if done.returncode != 0:
            sys.stderr.write(done.stderr[-5000:])
            return done.returncode
        captured = json.loads((Path(work) / "result.json").read_text())
    if captured["version"] != VERSION:
        raise SystemExit(f"worker ran dagster {captured['version']}, not {VERSION}")
    fixture = {
        "system": SYSTEM,
        "version": VERSION,
        "python": captured.pop("python"),
        "captured_by": "python tools/capture_dagster.py",
        "captured_at": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d"),
        "host_platform": platform.platform(),
        "notes": (
            "Real dagster code under dagster's freeze_time clock. fire_cases: schedule_execution_time_iterator "
            "from the window start. outage_cases: the real launch_scheduled_runs daemon function with a real "
            "DagsterInstance (SQLite, MockedRunLauncher) and code server; runs = the ticks evaluated at the restart "
            "(logical_date_utc = the tick's scheduled time; created_at_utc = the restart). "
            "See docs/research/airflow_dagster.md."
        ),
    }
    captured.pop("version")
    fixture.update(captured)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    with open(args.out, "w") as f:
        write_fixture(fixture, f)
    print(
        f"wrote {args.out}: {len(fixture['fire_cases'])} fire cases, "
        f"{len(fixture['extra_fire_cases'])} extra fire cases, "
        f"{len(fixture['outage_cases'])} outage cases in {time.monotonic() - began:.0f} s",
        file=sys.stderr,
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
