"""Benchmark: the occurrence estimate that guards every expansion, against the expansion it guards.

Run: ``python benchmarks/limits_benchmark.py [--n 20000]``

``calsim.limits.estimate`` runs before every ``expand``/``simulate``/``tzdiff``
call, so it must cost next to nothing: for ``examples.fleet(n)`` over 2026
(tzdata 2026f) it is timed (best of 5) against ``calsim.expand`` of the same
fleet-year in the same run. Also reports the estimate against the true row
count (an upper bound, tight for common rules). Prints one JSON object; exits 1
when a target is missed.
Targets: estimate <= 2% of the expansion's time, and >= the true row count,
within 5% of it.
"""

from __future__ import annotations

import argparse
import json
import sys
import time

import calsim
from calsim import limits

START, END = "2026-01-01T00:00Z", "2027-01-01T00:00Z"


def main(argv: list[str] | None = None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=20_000)
    args = ap.parse_args(argv)
    rel = calsim.release("2026f")
    fleet = calsim.examples.fleet(args.n, seed=0)
    limits.estimate(fleet[:100], START, END, rel)  # warm-up
    best = float("inf")
    for _ in range(5):
        t0 = time.perf_counter()
        est = limits.estimate(fleet, START, END, rel)
        best = min(best, time.perf_counter() - t0)
    t0 = time.perf_counter()
    rows = calsim.expand(fleet, START, END, rel, max_occurrences=10**12).height
    expand_s = time.perf_counter() - t0
    out = {"schedules": args.n, "rows": rows, "estimate": est, "estimate_over_rows": round(est / rows, 4),
           "estimate_s": round(best, 4), "expand_s": round(expand_s, 3),
           "estimate_share_of_expand": round(best / expand_s, 5)}
    out["ok"] = bool(out["estimate_share_of_expand"] <= 0.02 and rows <= est <= 1.05 * rows)
    print(json.dumps(out))
    return out


if __name__ == "__main__":
    sys.exit(0 if main()["ok"] else 1)
