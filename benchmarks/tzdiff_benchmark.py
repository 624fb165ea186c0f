"""Benchmark: tzdiff of a 10,000-schedule fleet-year, and zone_changes between every pair of shipped releases.

Run: ``python benchmarks/tzdiff_benchmark.py [--n 10000] [--old 2025b] [--new 2026f]``

In one run: one expansion of the fleet (the reference time), ``tzdiff``
between two releases, and the brute-force diff (the whole fleet expanded
under both releases and joined) which must agree with it row for row (the
script exits 1 if not). Then ``zone_changes`` over 1970-2050 for every pair
of shipped releases. Prints one JSON object. Targets: tzdiff <= 3x one
expansion; each zone_changes < 2 s.
"""

from __future__ import annotations

import argparse
import itertools
import json
import sys
import time

import polars as pl

import calsim

START, END = "2026-01-01T00:00Z", "2027-01-01T00:00Z"
KEY = ["schedule_id", "revision", "nominal_local", "fold"]


def brute_force(fleet, old, new):
    # An Every run is identified by its instant, which no release moves (tzdiff's docstring).
    fleet = [s for s in fleet if s.kind != "every"]
    a = calsim.expand(fleet, START, END, old).select(KEY + ["due_utc", "notes"])
    b = calsim.expand(fleet, START, END, new).select(KEY + ["due_utc", "notes"])
    j = a.join(b, on=KEY, how="full", coalesce=True, suffix="_new", nulls_equal=True)
    differs = pl.col("due_utc").eq_missing(pl.col("due_utc_new")).not_() | (
        pl.col("notes").fill_null([]) != pl.col("notes_new").fill_null([])
    )
    return (j.filter(differs)
            .select(*KEY, pl.col("due_utc").alias("old_utc"), pl.col("due_utc_new").alias("new_utc")).sort(KEY))


def timed(fn):
    t = time.perf_counter()
    out = fn()
    return out, time.perf_counter() - t


def main(argv=None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=10_000)
    ap.add_argument("--old", default="2025b")
    ap.add_argument("--new", default="2026f")
    args = ap.parse_args(argv)
    old, new = calsim.release(args.old), calsim.release(args.new)
    fleet = calsim.examples.fleet(args.n, seed=0)
    calsim.expand(fleet, START, END, new)  # warm-up: zone tables and memory
    expansion, t_expand = timed(lambda: calsim.expand(fleet, START, END, new))
    n_occ = expansion.height
    del expansion
    diff, t_diff = timed(lambda: calsim.tzdiff(fleet, old, new, START, END))
    want, t_brute = timed(lambda: brute_force(fleet, old, new))
    agree = diff.select(want.columns).equals(want)

    pairs = {}
    shipped = ["2022e", "2022f", "2024a", "2025a", "2025b", "2026a", "2026f"]
    for a, b in itertools.combinations(shipped, 2):
        ra, rb = calsim.Release.from_path(calsim.release(a).source), calsim.Release.from_path(calsim.release(b).source)
        _, t = timed(lambda ra=ra, rb=rb: calsim.zone_changes(ra, rb, "1970-01-01T00:00Z", "2050-01-01T00:00Z"))
        pairs[f"{a}->{b}"] = round(t, 3)
    result = {
        "benchmark": "tzdiff",
        "schedules": args.n,
        "occurrences": n_occ,
        "old": old.version,
        "new": new.version,
        "changed_occurrences": diff.height,
        "changed_schedules": diff["schedule_id"].n_unique(),
        "expand_seconds": round(t_expand, 3),
        "tzdiff_seconds": round(t_diff, 3),
        "tzdiff_over_expand": round(t_diff / t_expand, 2),
        "target_tzdiff_over_expand": 3,
        "brute_force_seconds": round(t_brute, 3),
        "agrees_with_brute_force": agree,
        "zone_changes_seconds_max": max(pairs.values()),
        "zone_changes_seconds": pairs,
        "target_zone_changes_seconds": 2,
    }
    result["meets_target"] = agree and result["tzdiff_over_expand"] <= 3 and result["zone_changes_seconds_max"] < 2
    print(json.dumps(result, indent=2))
    return result


if __name__ == "__main__":
    sys.exit(0 if main()["meets_target"] else 1)
