"""Benchmark: vectorised calsim.resolve against the per-time zoneinfo baseline.

Run: ``python benchmarks/resolve_benchmark.py [--n 1000000] [--baseline-n 50000]``

Resolves ``n`` local times (one every 37 minutes from 2020, so every DST
edge of the span is crossed, in shuffled order so no cache helps) in
America/New_York with release 2026f, then, in the same process, a sample of
``baseline-n`` of the same times with the per-time baseline: the PEP 495
fold round trip through ``zoneinfo`` in a Python loop, which is what code
without calsim does. Prints one JSON object with both rates and their ratio.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import platform
import sys
import time

import numpy as np

import calsim

UTC = dt.timezone.utc


def baseline(zone, walls: list[dt.datetime]) -> int:
    """Per-time fold round trip: the two candidate instants, then back to check for a gap."""
    gaps = 0
    for t in walls:
        u0 = t.replace(tzinfo=zone, fold=0).astimezone(UTC)
        u1 = t.replace(tzinfo=zone, fold=1).astimezone(UTC)
        if u0.astimezone(zone).replace(tzinfo=None) != t:
            gaps += 1
        elif u0 != u1:
            pass
    return gaps


def best_of(fn, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return min(times)


def main(argv: list[str] | None = None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=1_000_000)
    ap.add_argument("--baseline-n", type=int, default=50_000)
    ap.add_argument("--zone", default="America/New_York")
    ap.add_argument("--release", default="2026f")
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args(argv)

    rel = calsim.release(args.release)
    start = np.datetime64("2020-01-01T00:00", "us")
    walls = start + np.arange(args.n, dtype=np.int64) * np.timedelta64(37, "m")
    np.random.default_rng(0).shuffle(walls)
    rel.table(args.zone)  # parse once: zone loading is not what is measured

    calsim.resolve(walls[:1000], args.zone, rel)  # warm-up
    t_calsim = best_of(lambda: calsim.resolve(walls, args.zone, rel, gap="shift", fold="first"), args.repeat)
    frame = calsim.resolve(walls, args.zone, rel, gap="shift", fold="first")

    zone = rel.zone(args.zone)
    sample = walls[: args.baseline_n].astype("datetime64[us]").tolist()
    t_base = best_of(lambda: baseline(zone, sample), max(1, args.repeat // 2))

    calsim_rate = args.n / t_calsim
    base_rate = args.baseline_n / t_base
    result = {
        "benchmark": "resolve",
        "zone": args.zone,
        "tzdata": rel.version,
        "n": args.n,
        "gaps": int((frame["kind"] == "gap").sum()),
        "folds": int((frame["kind"] == "fold").sum()),
        "calsim_seconds": round(t_calsim, 4),
        "calsim_per_s": round(calsim_rate),
        "baseline_n": args.baseline_n,
        "baseline_seconds": round(t_base, 4),
        "baseline_per_s": round(base_rate),
        "speedup": round(calsim_rate / base_rate, 1),
        "target_speedup": 100,
        "python": sys.version.split()[0],
        "machine": platform.machine(),
    }
    result["meets_target"] = result["speedup"] >= result["target_speedup"]
    print(json.dumps(result, indent=2))
    return result


if __name__ == "__main__":
    sys.exit(0 if main()["meets_target"] else 1)
