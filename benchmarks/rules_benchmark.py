"""Benchmark: per-call cost of rule expansion for the common fleet rules over about a year.

Run: ``python benchmarks/rules_benchmark.py [--instances 200] [--repeat 5]``

Mirrors what :func:`calsim.expand` does per schedule for
``examples.fleet(10000)`` over 2026: every schedule holds its own parsed rule
(so each call sees a distinct, equal, rule object), DTSTART is a day of
2025-07..2025-12 at one of the fleet's times, and the wall window is
2025-12-30T00:00 .. 2027-01-03T00:00 (the UTC window widened by two days).
:meth:`RRule.candidates` is called for RRULEs and :meth:`Cron.wall_times`
for cron expressions. Prints one JSON object: µs per call for each rule
(best of ``--repeat`` passes over ``--instances`` rule objects, each called
once), the occurrences one call yields on average, and, under ``large``, ms
for a few big expansions (to see that they do not get slower).
"""

from __future__ import annotations

import argparse
import json
import sys
import time

import numpy as np

from calsim.rules.cron import Cron
from calsim.rules.rrule import RRule

US = 1_000_000
DAY_US = 86_400 * US
LO = int(np.datetime64("2025-12-30T00:00", "us").astype(np.int64))
HI = int(np.datetime64("2027-01-03T00:00", "us").astype(np.int64))
_TIMES = ("02:30", "01:30", "00:00", "03:00", "06:00", "09:00", "12:00", "18:30", "23:59", "02:15")

# (label, rule text, invalid_day) for RRULEs; invalid_day None marks cron.
CASES = (
    ("FREQ=DAILY", "FREQ=DAILY", "omit"),
    ("FREQ=WEEKLY;BYDAY=MO,WE", "FREQ=WEEKLY;BYDAY=MO,WE", "omit"),
    ("FREQ=MONTHLY;BYMONTHDAY=31 (omit)", "FREQ=MONTHLY;BYMONTHDAY=31", "omit"),
    ("FREQ=MONTHLY;BYMONTHDAY=31 (backward)", "FREQ=MONTHLY;BYMONTHDAY=31", "backward"),
    ("FREQ=MONTHLY;BYMONTHDAY=31 (forward)", "FREQ=MONTHLY;BYMONTHDAY=31", "forward"),
    ("FREQ=MONTHLY;BYMONTHDAY=-1", "FREQ=MONTHLY;BYMONTHDAY=-1", "omit"),
    ("FREQ=MONTHLY;BYDAY=MO,TU,WE,TH,FR;BYSETPOS=-1", "FREQ=MONTHLY;BYDAY=MO,TU,WE,TH,FR;BYSETPOS=-1", "omit"),
    ("FREQ=HOURLY;INTERVAL=3;BYMINUTE=17", "FREQ=HOURLY;INTERVAL=3;BYMINUTE=17", "omit"),
    ("cron 17 9 * * *", "17 9 * * *", None),
    ("cron 5 * * * *", "5 * * * *", None),
    ("cron */15 9-17 * * 1-5", "*/15 9-17 * * 1-5", None),
    ("cron 0 9 L * *", "0 9 L * *", None),
)


# Big expansions: (label, text, start, end, invalid_day or None for cron).
LARGE = (
    ("FREQ=MINUTELY, 1 year", "FREQ=MINUTELY", "2026-01-01T00:00:30", "2027-01-01", "omit"),
    ("FREQ=SECONDLY;BYHOUR=9, 60 days", "FREQ=SECONDLY;BYHOUR=9", "2026-01-01", "2026-03-02", "omit"),
    ("FREQ=DAILY;BYHOUR=1,13, 400 years", "FREQ=DAILY;BYHOUR=1,13", "1900-01-01T00:00", "2300-01-01", "omit"),
    ("FREQ=MONTHLY;BYMONTHDAY=31 (forward), 2000 years", "FREQ=MONTHLY;BYMONTHDAY=31",
     "0500-01-01T09:00", "2500-01-01", "forward"),
    ("FREQ=MONTHLY;BYDAY=MO,TU,WE,TH,FR;BYSETPOS=-1, 1000 years", "FREQ=MONTHLY;BYDAY=MO,TU,WE,TH,FR;BYSETPOS=-1",
     "1500-01-01T17:00", "2500-01-01", "omit"),
    ("FREQ=YEARLY;BYWEEKNO=1,-1;BYDAY=MO, 2000 years", "FREQ=YEARLY;BYWEEKNO=1,-1;BYDAY=MO",
     "0500-01-01T08:00", "2500-01-01", "omit"),
    ("cron * * * * *, 1 year", "* * * * *", "2026-01-01", "2027-01-01", None),
    ("cron */15 9-17 * * 1-5, 100 years", "*/15 9-17 * * 1-5", "2000-01-01", "2100-01-01", None),
)


def _dtstarts(n: int) -> list[int]:
    rng = np.random.default_rng(0)
    days = rng.integers(0, 180, size=n)
    times = rng.integers(0, len(_TIMES), size=n)
    base = np.datetime64("2025-07-01", "D")
    out = []
    for d, t in zip(days, times):
        hh, mm = _TIMES[t].split(":")
        out.append(int(np.datetime64(f"{base + int(d)}T{hh}:{mm}", "us").astype(np.int64)))
    return out


def bench(text: str, invalid_day: str | None, instances: int, repeat: int) -> tuple[float, float]:
    """Best µs per call, and occurrences per call; every call sees a rule object never called before."""
    starts = _dtstarts(instances)
    parse = Cron.parse if invalid_day is None else RRule.parse
    # One object per schedule, as in a fleet, and a fresh set per pass: a cache kept on
    # the instance would otherwise be warm from the previous pass, which a fleet never sees.
    passes = [[parse(text) for _ in range(instances)] for _ in range(repeat + 1)]

    def one_pass(rules: list) -> int:
        n = 0
        if invalid_day is None:
            for r in rules:
                n += len(r.wall_times(LO, HI))
        else:
            for r, s in zip(rules, starts):
                n += len(r.candidates(s, max(LO, s), HI, invalid_day)[0])
        return n

    occ = one_pass(passes[0])  # warm-up
    best = float("inf")
    for rules in passes[1:]:
        t = time.perf_counter()
        one_pass(rules)
        best = min(best, time.perf_counter() - t)
    return best / instances * 1e6, occ / instances


def bench_large(text: str, start: str, end: str, invalid_day: str | None, repeat: int) -> tuple[float, int]:
    """Best ms for one big expansion (checks that the per-call work did not get slower)."""
    lo = int(np.datetime64(start, "us").astype(np.int64))
    hi = int(np.datetime64(end, "us").astype(np.int64))
    best, n = float("inf"), 0
    for _ in range(repeat):
        if invalid_day is None:
            rule = Cron.parse(text)
            t = time.perf_counter()
            n = len(rule.wall_times(lo, hi))
        else:
            rule = RRule.parse(text)
            t = time.perf_counter()
            n = len(rule.candidates(lo, lo, hi, invalid_day)[0])
        best = min(best, time.perf_counter() - t)
    return best * 1e3, n


def main(argv: list[str] | None = None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--instances", type=int, default=200)
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args(argv)
    rules = {}
    for label, text, inv in CASES:
        us, occ = bench(text, inv, args.instances, args.repeat)
        rules[label] = {"us_per_call": round(us, 1), "occurrences_per_call": round(occ, 1)}
    large = {}
    for label, text, start, end, inv in LARGE:
        ms, n = bench_large(text, start, end, inv, args.repeat)
        large[label] = {"ms_per_call": round(ms, 2), "occurrences": n}
    result = {
        "benchmark": "rules_per_call",
        "window": "2025-12-30..2027-01-03 (wall)",
        "instances": args.instances,
        "repeat": args.repeat,
        "rules": rules,
        "large": large,
        "python": sys.version.split()[0],
        "numpy": np.__version__,
    }
    print(json.dumps(result, indent=2))
    return result


if __name__ == "__main__":
    main()
