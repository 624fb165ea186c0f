"""Benchmark: expand a 10,000-schedule fleet for one year, against a per-occurrence baseline.

Run: ``python benchmarks/expand_benchmark.py [--n 10000] [--sample 150]``

calsim expands ``examples.fleet(n)`` over 2026 with tzdata 2026f in one call.
In the same run, a sample of the same fleet goes through the per-occurrence
baseline that code without calsim would write: python-dateutil's rrule (or
cronsim for cron, a Python loop for windows and intervals) yields each naive
local time, and a ``zoneinfo`` fold round trip resolves it with the
schedule's gap/fold policy. The ratio compares occurrences per second.
Prints one JSON object; peak memory is the process's max RSS. calsim's time
is the best of ``--repeat`` runs (the first run is reported as well).

The floor is the least any expansion of the same rows can cost, measured in
the same run: per schedule, as many rows as calsim produced, as daily rows
(at a time of day of its own, several a day for the busy ones), generated
with numpy in one pass; resolved with calsim's own vectorised kernel
(:func:`calsim.resolution.resolve_wall`, one call per zone); sorted by
instant (a stable argsort, as calsim's, over the same per-schedule runs) and
the instant, wall time and schedule index gathered in that order (a sort is
only useful with its rows). No rule logic, no notes, no frame. calsim and
the floor alternate ``--repeat`` times and the best of each is compared.
Targets: ``speedup`` >= 50 against the per-occurrence baseline, at most 10 s, and at most 1.5 x the floor.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import resource
import sys
import time

import numpy as np

import calsim
from calsim.resolution import resolve_wall
from calsim.rules.cron import Cron
from calsim.rules.every import Every
from calsim.rules.window import Window

UTC = dt.timezone.utc
START = dt.datetime(2026, 1, 1, tzinfo=UTC)
END = dt.datetime(2027, 1, 1, tzinfo=UTC)
DAY = 86_400 * 1_000_000


def _naive_walls(s: calsim.Schedule, lo: dt.datetime, hi: dt.datetime):
    """Per-occurrence generation of nominal local times with the usual libraries."""
    from cronsim import CronSim
    from dateutil.rrule import rrulestr

    start = dt.datetime(1970, 1, 1) + dt.timedelta(microseconds=s.start_wall)
    rule = s.parsed_rule
    if isinstance(rule, Cron):
        it = CronSim(rule.text, max(lo, start) - dt.timedelta(seconds=1))
        for t in it:
            if t >= hi:
                return
            yield t
    elif isinstance(rule, Window):
        day = lo.replace(hour=0, minute=0) - dt.timedelta(days=1)
        while day < hi:
            if day.weekday() in rule._days:
                t = day + dt.timedelta(microseconds=rule._start_us)
                end = t + dt.timedelta(microseconds=rule._length_us)
                while t < end:
                    if lo <= t < hi and t >= start:
                        yield t
                    t += dt.timedelta(microseconds=rule._step_us)
            day += dt.timedelta(days=1)
    else:
        yield from rrulestr(rule.text, dtstart=start).between(max(lo, start), hi, inc=True)


def baseline(schedules, release) -> int:
    """Resolve every occurrence one by one (zoneinfo fold round trip), as code without calsim does."""
    count = 0
    for s in schedules:
        zone = release.zone(s.zone)
        if isinstance(s.parsed_rule, Every):
            anchor = START
            period = dt.timedelta(microseconds=s.parsed_rule.period_us)
            first = s.start_utc or 0
            t = dt.datetime(1970, 1, 1, tzinfo=UTC) + dt.timedelta(microseconds=first)
            while t < END:
                if t >= anchor:
                    t.astimezone(zone)
                    count += 1
                t += period
            continue
        lo = (START - dt.timedelta(days=2)).replace(tzinfo=None)
        hi = (END + dt.timedelta(days=2)).replace(tzinfo=None)
        for t in _naive_walls(s, lo, hi):
            u0 = t.replace(tzinfo=zone, fold=0).astimezone(UTC)
            u1 = t.replace(tzinfo=zone, fold=1).astimezone(UTC)
            gap = u0.astimezone(zone).replace(tzinfo=None) != t
            if gap and s.gap == "skip":
                due = None
            elif s.fold == "second" or (gap and s.gap == "shift_backward"):
                due = u1
            else:
                due = u0
            if due is not None and START <= due < END:
                count += 1
    return count


class Floor:
    """generate + resolve + sort of as many rows per schedule as calsim's frame has (see the module doc)."""

    def __init__(self, schedules, frame, release):
        per_id = dict(frame.group_by("schedule_id").len().iter_rows())
        by_zone = sorted(range(len(schedules)), key=lambda i: schedules[i].zone)  # one slice per zone
        self.counts = np.array([per_id.get(schedules[i].id, 0) for i in by_zone], dtype=np.int64)
        self.index = np.array(by_zone, dtype=np.int32)
        bounds: dict[str, list[int]] = {}
        at = 0
        for i, c in zip(by_zone, self.counts):
            bounds.setdefault(schedules[i].zone, [at, at])[1] = at = at + int(c)
        self.slices = [(release.table(z), a, b) for z, (a, b) in bounds.items()]
        self.lo = int(START.timestamp()) * 1_000_000
        # Daily rows: each schedule at its own time of day (whole seconds),
        # ``per_day`` times a day, evenly spaced, day after day.
        self.per_day = np.maximum(1, np.rint(self.counts / 365)).astype(np.int64)
        self.time_of_day = np.random.default_rng(0).integers(0, 86_400, len(self.counts)) * 1_000_000
        self.rows = at

    def run(self):
        c = self.counts
        first = np.cumsum(c) - c
        k = np.arange(self.rows, dtype=np.int64) - np.repeat(first, c)
        per_day = np.repeat(self.per_day, c)
        day, nth = np.divmod(k, per_day)
        wall = self.lo + day * DAY + np.repeat(self.time_of_day, c) + nth * (DAY // per_day)
        del k, day, nth, per_day
        sched = np.repeat(self.index, c)
        due = np.empty(self.rows, dtype=np.int64)
        for table, a, b in self.slices:
            due[a:b] = resolve_wall(wall[a:b], table, gap="shift", fold="first").due
        perm = np.argsort(due, kind="stable")
        return due[perm], wall[perm], sched[perm]


def main(argv: list[str] | None = None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=10_000)
    ap.add_argument("--sample", type=int, default=150)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--release", default="2026f")
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args(argv)

    rel = calsim.release(args.release)
    fleet = calsim.examples.fleet(args.n, seed=args.seed)
    calsim.expand(fleet[:50], START, END, rel)  # warm-up: zone tables, imports

    floor = None
    runs, floor_runs, cpu, floor_cpu = [], [], [], []
    for _ in range(args.repeat):
        t, c = time.perf_counter(), time.process_time()
        frame = calsim.expand(fleet, START, END, rel)
        runs.append(time.perf_counter() - t)
        cpu.append(time.process_time() - c)
        n_occ = frame.height
        if floor is None:
            floor = Floor(fleet, frame, rel)
        del frame
        # Alternating runs see the same machine load (2 shared cores: noisy).
        t, c = time.perf_counter(), time.process_time()
        out = floor.run()
        floor_runs.append(time.perf_counter() - t)
        floor_cpu.append(time.process_time() - c)
        del out
    t_floor = min(floor_runs)
    # Best of N, as for any benchmark; the first run is reported too: on a
    # VM whose memory is backed lazily, first-touch page faults of the
    # process's first ~2 GB can dominate it.
    t_calsim = min(runs)

    sample = fleet[:: max(1, args.n // args.sample)][: args.sample]
    t = time.perf_counter()
    n_base = baseline(sample, rel)
    t_base = time.perf_counter() - t

    calsim_rate = n_occ / t_calsim
    base_rate = n_base / t_base
    result = {
        "benchmark": "expand_fleet_year",
        "schedules": args.n,
        "occurrences": n_occ,
        "calsim_seconds": round(t_calsim, 3),
        "calsim_first_run_seconds": round(runs[0], 3),
        "calsim_per_s": round(calsim_rate),
        "floor_rows": floor.rows,
        "floor_seconds": round(t_floor, 3),
        "over_floor": round(t_calsim / t_floor, 2),
        "target_over_floor": 1.5,
        # CPU seconds of all threads (the floor has one): steadier on a busy machine, for information.
        "over_floor_cpu": round(min(cpu) / min(floor_cpu), 2),
        "baseline_schedules": len(sample),
        "baseline_occurrences": n_base,
        "baseline_seconds": round(t_base, 3),
        "baseline_per_s": round(base_rate),
        "speedup": round(calsim_rate / base_rate, 1),
        "target_speedup": 50,
        "target_seconds": 10,
        "peak_rss_mib": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024),
        "python": sys.version.split()[0],
    }
    result["meets_target"] = (result["speedup"] >= 50 and result["calsim_seconds"] <= 10
                              and result["over_floor"] <= 1.5)
    print(json.dumps(result, indent=2))
    return result


if __name__ == "__main__":
    sys.exit(0 if main()["meets_target"] else 1)
