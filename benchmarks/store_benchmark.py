"""Benchmark: write fleet-year ledgers to a fresh DuckDB ledger store, then compare them.

Run: ``python benchmarks/store_benchmark.py [--n 10000]``

Two ledgers of ``examples.fleet(n)`` over 2026 with tzdata 2026f (about 10.8
million rows each for n = 10000): ``"all"`` (plain plan) and ``"latest"``
(``catchup="latest"`` with a 3-day outage). Each is written to a fresh file
with the primary key declared in DuckDB; the write time covers everything
``LedgerStore.write`` does (checks, content digest, Arrow hand-off, insert
with key enforcement, commit). Then ``compare`` runs over both.
Prints one JSON object; exits 1 when a target is missed.
Targets: write >= 1,000,000 rows per second; compare of two scenarios < 3 s.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

import calsim
from calsim.store import LedgerStore

WRITE_TARGET = 1_000_000  # rows per second
COMPARE_TARGET = 3.0  # seconds


def ledgers(n: int) -> list[calsim.Ledger]:
    fleet = calsim.examples.fleet(n, seed=0)
    horizon = dict(start="2026-01-01T00:00Z", end="2027-01-01T00:00Z", release="2026f", tick="1min")
    plain = calsim.Scenario("all", fleet, **horizon)
    latest = calsim.Scenario("latest", calsim.with_policy(fleet, catchup="latest"), **horizon,
                             outages=[calsim.Outage("2026-10-20T01:01Z", "2026-10-23T01:01Z")])
    return [calsim.simulate(sc, progress=False) for sc in (plain, latest)]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=10000)
    args = ap.parse_args(argv)
    t = time.perf_counter()
    runs = ledgers(args.n)
    build_s = time.perf_counter() - t
    with tempfile.TemporaryDirectory() as d:
        path = Path(d) / "ledger.duckdb"
        writes = []
        with LedgerStore(path) as store:
            for ledger in runs:
                t = time.perf_counter()
                store.write(ledger)
                writes.append((len(ledger), time.perf_counter() - t))
            t = time.perf_counter()
            store.write(runs[0])  # idempotent re-write: digest check only
            rewrite_s = time.perf_counter() - t
            t = time.perf_counter()
            cmp = store.compare([ledger.name for ledger in runs])
            compare_s = time.perf_counter() - t
            t = time.perf_counter()
            back = store.ledger(runs[0].name)
            read_s = time.perf_counter() - t
            assert back.equals(runs[0].frame)
        size = path.stat().st_size
    first_rate = writes[0][0] / writes[0][1]
    out = {
        "schedules": args.n,
        "rows_per_ledger": [w[0] for w in writes],
        "build_s": round(build_s, 2),
        "write_fresh_s": round(writes[0][1], 2),
        "write_fresh_rows_per_s": round(first_rate),
        "write_second_s": round(writes[1][1], 2),
        "write_second_rows_per_s": round(writes[1][0] / writes[1][1]),
        "rewrite_same_s": round(rewrite_s, 2),
        "compare_s": round(compare_s, 2),
        "read_back_s": round(read_s, 2),
        "file_mb": round(size / 2**20, 1),
        "compare_done": cmp["done"].to_list(),
        "compare_longest_gap_s": cmp["longest_gap_s"].to_list(),
        "targets": {"write_rows_per_s": WRITE_TARGET, "compare_s": COMPARE_TARGET},
    }
    out["meets_target"] = first_rate >= WRITE_TARGET and compare_s < COMPARE_TARGET
    print(json.dumps(out, indent=2))
    return 0 if out["meets_target"] else 1


if __name__ == "__main__":
    sys.exit(main())
