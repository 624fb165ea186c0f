"""``presets.cronie()``: what Debian's cron daemon cannot show, through the line-by-line port of cronie.

The real daemon decides wherever it can: ``tests/presets/test_cronie_daemon.py`` replays
its recorded runs (285 scenarios: DST days, restarts, suspends) against calsim,
and there the cronie preset's DST, restart and suspend behaviour is measured.
This file keeps the port (:mod:`oracles.cronie`, ``src/cron.c``/``entry.c``/
``job.c`` line by line) for what the fixtures cannot hold:

* the port is first checked against the daemon itself: it reproduces every run
  of every fixture (job and instant, within the daemon's usual lag), so where
  it goes beyond them it speaks for the daemon;
* the crontab grammar's job kinds (``MIN_STAR``/``HR_STAR``: which jobs are
  "wildcard") over specs the fixtures do not use;
* ``CALSIM_LONG=1``: a dense sweep of suspends across every DST change of the
  fixtures' zones (a start every 10 min over 4 h, 7 lengths; 3,150 scenarios,
  hours of daemon time), compared with calsim exactly as the daemon's runs are,
  with the same stated differences;
* the preset's own settings (``job_kind``).
"""

from __future__ import annotations

import datetime as dt
import os

import polars as pl

import calsim
from calsim import presets
from oracles import cron_daemon as daemon
from oracles import cronie as oracle
from tests.presets.test_cronie_daemon import classify

LONG = os.environ.get("CALSIM_LONG") == "1"
UTC = dt.timezone.utc
SEC, MIN, HOUR = dt.timedelta(seconds=1), dt.timedelta(minutes=1), dt.timedelta(hours=1)
HEADS, CASES = daemon.fixtures()


def port_runs(case: daemon.Case, job_seconds: float = 0.0) -> dict[str, list[dt.datetime]]:
    """The port's runs of ``case``'s crontab, booted 30 s before the horizon as the daemon was."""
    runs = oracle.simulate(dict(case.jobs), case.zone, case.start, case.end, outages=list(case.outages),
                           release=daemon.RELEASE, boot=case.start - 30 * SEC, job_seconds=job_seconds)
    out: dict[str, list[dt.datetime]] = {job: [] for job, _ in case.jobs}
    for r in runs:
        out[r.job].append(r.at_utc)
    return out


def test_the_port_reproduces_every_run_of_the_daemon(report, capsys):
    # job_seconds 0.3: the fixtures' jobs (one date under libfaketime) end ~0.3 fake seconds after they start,
    # which is when a catch-up sleep(10) is cut short (SIGCHLD)
    compared, off = 0, []
    for case in CASES:
        ours = port_runs(case, job_seconds=0.3)
        for job, _ in case.jobs:
            mine = sorted(t for t in ours[job] if case.start <= t < case.end)
            real = [t for t in case.runs_of(job) if case.start <= t < case.end]
            compared += max(len(mine), len(real))
            free = list(real)
            for t in mine:
                hit = next((r for r in free if -SEC <= r - t <= daemon.TOLERANCE - SEC), None)
                if hit is None:
                    off.append(f"{case.id}: {job}: the port ran it at {t:%H:%M:%S}Z, the daemon did not")
                else:
                    free.remove(hit)
            off += [f"{case.id}: {job}: the daemon ran it at {r:%H:%M:%S}Z, the port did not" for r in free]
    line = (f"cronie port vs Debian cron daemon: {compared:,} runs compared over {len(CASES)} scenarios, "
            f"{len(off)} apart")
    with capsys.disabled():
        print("\n" + line)
    report.append(line)
    assert compared > 5_000 and not off, "\n".join(off[:20])


def test_catch_up_sleep_is_cut_short_when_a_job_ends():
    # cron.c sleep(10) after each catch-up minute that started a job; a job's exit (SIGCHLD) ends it early
    case = next(c for c in CASES if c.id == "suspend-America/New_York-179min-on-minute-0301")
    slow = sorted(port_runs(case, job_seconds=30.0)["fixed_0300"])
    quick = sorted(port_runs(case, job_seconds=0.0)["fixed_0300"])
    b = case.suspends[0][1]
    assert [f"{t:%H:%M:%S}" for t in quick if t >= b] == ["08:01:01"]
    assert [t for t in slow if t >= b][0] - b > 90 * SEC  # ten minutes caught up before 03:00, 10 s apart


def test_wildcard_jobs_are_those_whose_minute_or_hour_field_starts_with_a_star():
    # ENTRY_C:210-211, 221-222 (first character of the field), 192 (@hourly); CRON_C:588-590
    preset = presets.cronie()
    for spec in ("*/5 2 * * *", "0-59 3 * * *", "0 */2 * * *", "5 * * * *", "@hourly", "@daily", "30 2 * * *",
                 "*/15 * * * *", "0,30 2 * * *", "* 3 * * *", "15 * 1 * *", "0 0-23 * * *"):
        wild = oracle.load_entry("j", spec).wildcard
        assert daemon.is_wild(spec) == wild, spec
        gap_fold = preset.dst_for(calsim.Schedule("j", "America/New_York", "2026-01-01T00:00", spec))
        assert gap_fold == (("skip", "both") if wild else ("next_valid", "first")), spec


def test_wildcard_jobs_get_the_5_wall_minute_limit_and_fixed_time_jobs_the_180_minute_one():
    p = presets.cronie()
    [wild, fixed] = p.apply([calsim.Schedule(n, "UTC", "2026-01-01T00:00", e)
                             for n, e in (("w", "*/5 * * * *"), ("f", "30 2 * * *"))])
    # J = 1 + floor((L + 1 s) / 1 min) <= 5 (or 180): L < 299 s (or 10799 s)
    assert (wild.policy.suspend_limit_us, fixed.policy.suspend_limit_us) == (299 * 10**6 - 1, 10799 * 10**6 - 1)
    assert wild.policy.suspend_wake == fixed.policy.suspend_wake == "sleep_end"


def test_forced_job_kinds_behave_as_auto():
    # presets.cronie(job_kind="fixed") / "wildcard" on jobs of that kind give the same ledger as "auto"
    cols = ["schedule_id", "nominal_local", "fold", "state", "reason", "started_utc"]
    for case in CASES[::9]:
        fleet = [presets.cronie(job_kind="wildcard" if daemon.is_wild(spec) else "fixed").apply(
            calsim.Schedule(name, case.zone, "2025-12-01T00:00", spec)) for name, spec in case.jobs]
        forced = calsim.simulate(calsim.Scenario(
            case.id, fleet, case.start, case.end, release=daemon.RELEASE, tick="1min",
            outages=[calsim.Outage(a, b, kind=k) for a, b, k in case.outages])).frame
        assert forced.filter(pl.col("kind") == "scheduled").select(cols).equals(
            daemon.calsim_frame(case).select(cols)), case.id


# ---------------------------------------------------------------------------------------------
# CALSIM_LONG=1: the dense sweep the daemon cannot run in reasonable time, the port standing in for it

def _sweep_cases() -> list[daemon.Case]:
    out = []
    jobs = tuple(CASES[0].jobs)
    for case in CASES:
        if case.kind != "dst":
            continue
        t = next(t for t, _ in daemon.transitions(case.zone, case.start, case.end))
        for k in range(-18, 7):
            for minutes in (3, 6, 20, 45, 90, 150, 240):
                a = t + k * 10 * MIN + 30 * SEC * (k % 2)
                b = a + minutes * MIN
                start = (a - 2 * HOUR).replace(second=0)
                end = (b + 2 * HOUR).replace(second=0)
                base = daemon.Case(f"sweep-{case.zone}-{t:%m%d}-{k * 10:+d}min-{minutes}min", "sweep", case.zone,
                                   start, end, ((a, b, "suspend"),), jobs, (), "port")
                runs = port_runs(base)
                out.append(daemon.Case(base.id, base.kind, base.zone, start, end, base.outages, jobs,
                                       tuple((j, tuple(sorted(runs[j]))) for j, _ in jobs), "port"))
    return out


def test_long_sweep_of_suspends_across_dst_changes_has_no_unstated_disagreements(report, capsys):
    if not LONG:
        n = 25 * 7 * sum(c.kind == "dst" for c in CASES)
        line = f"cronie DST suspend sweep (port): not run (CALSIM_LONG=1 runs {n:,} scenarios)"
        report.append(line)
        return
    n, unstated = 0, []
    cases = _sweep_cases()
    for case in cases:
        pairs, bad = daemon.compare(case)
        n += pairs
        unstated += [p for p in bad if classify(p) is None]
    line = (f"cronie DST suspend sweep (port standing in for the daemon): {n:,} pairs over {len(cases)} scenarios, "
            f"{len(unstated)} unstated")
    with capsys.disabled():
        print("\n" + line)
    report.append(line)
    assert not unstated, "\n".join(p.describe() for p in unstated[:20])
