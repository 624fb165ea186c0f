"""Benchmark: ``calsim.sweep`` of 24 combinations against one ``simulate`` of the same scenario (issue 30).

Run: ``python benchmarks/sweep_benchmark.py [--n 1000] [--repeat 3] [--jobs 2] [--check]``

The scenario is ``examples.fleet(n)`` over October 2026 (tzdata 2026f, one-minute tick) with a 3-day outage,
one-minute runs costing 1 unit charged to the schedule's tenant and a daily budget of 150 per tenant
(Europe/Berlin days): ``benchmarks/simulate_paths.py``'s ``fast`` path. The grid is catch-up (all, latest,
skip) x ``max_lateness`` (6 h, none) x the budget limit (150, 300) x ``max_active`` (1, 2): 24 combinations.

Reports the wall and CPU time of one ``simulate`` and of the sweep (best of ``repeat``, interleaved), their
ratio, and with ``--check`` that every combination's measures equal those of its own ``simulate`` (24 more
simulations). Target: the sweep <= 6x one ``simulate`` (wall). Prints one JSON object; exits 1 when the target
or the check fails.
"""

from __future__ import annotations

import argparse
import json
import sys
import time

import calsim
from calsim.simulation.sweep import MEASURES, measures, variant

TARGET = 6.0
GRID = {"catchup": ["all", "latest", "skip"], "max_lateness": ["6h", None], "budget_limit": [150.0, 300.0],
        "max_active": [1, 2]}


def scenario(n: int) -> calsim.Scenario:
    fleet = [calsim.with_policy([s], catchup="latest", overlap="skip", duration="1min", cost=1.0,
                                account=s.id.split("/")[0])[0] for s in calsim.examples.fleet(n, seed=0)]
    tenants = sorted({s.policy.account for s in fleet})
    return calsim.Scenario(f"sweep-{n}", fleet, "2026-10-01T00:00Z", "2026-11-01T00:00Z", release="2026f",
                           tick="1min", outages=[calsim.Outage("2026-10-20T01:01Z", "2026-10-23T01:01Z")],
                           budgets=[calsim.Budget(t, 150.0, "day", "Europe/Berlin") for t in tenants])


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=1000)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--jobs", type=int, default=None)
    ap.add_argument("--check", action="store_true")
    args = ap.parse_args()
    sc = scenario(args.n)
    result = calsim.sweep(sc, GRID, jobs=args.jobs)  # warm: compiled kernels, imports
    calsim.simulate(sc, progress=False)
    best = {"simulate": [1e9, 1e9], "sweep": [1e9, 1e9]}
    for _ in range(args.repeat):
        for what, run in (("simulate", lambda: calsim.simulate(sc, progress=False)),
                          ("sweep", lambda: calsim.sweep(sc, GRID, jobs=args.jobs))):
            t, c = time.perf_counter(), time.process_time()
            run()
            best[what] = [min(best[what][0], time.perf_counter() - t), min(best[what][1], time.process_time() - c)]
    out: dict = {
        "n": args.n, "combinations": result.height, "rows_per_combination": calsim.simulate(sc).frame.height,
        "simulate_s": round(best["simulate"][0], 3), "simulate_cpu_s": round(best["simulate"][1], 3),
        "sweep_s": round(best["sweep"][0], 3), "sweep_cpu_s": round(best["sweep"][1], 3),
        "ratio": round(best["sweep"][0] / best["simulate"][0], 2),
        "cpu_ratio": round(best["sweep"][1] / best["simulate"][1], 2), "target_ratio": TARGET,
    }
    ok = out["ratio"] <= TARGET
    if args.check:
        apart = []
        for row in result.iter_rows(named=True):
            combo = {k: next(v for v in GRID[k] if str(v if v is not None else "none") == row[k]) for k in GRID}
            alone = measures(calsim.simulate(variant(sc, combo), progress=False))
            if alone != {m: row[m] for m in MEASURES}:
                apart.append(row["combination"])
        out["identical_to_separate_simulates"] = not apart
        ok = ok and not apart
    out["meets_target"] = ok
    print(json.dumps(out, indent=2))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
