"""Benchmark: peak memory of ``calsim.simulate`` per ledger row, for the simulate benchmark's fleet-year.

Run: ``python benchmarks/simulate_memory.py [--n 10000]``

The scenario is ``benchmarks/simulate_benchmark.py``'s (``examples.fleet(n)``
over 2026, catch-up, overlap, per-tenant daily budgets, a 3-day outage).
Peak RSS only grows within a process, so each measurement runs in a fresh
child: it builds the scenario, warms up on a 50-schedule one (imports, zone
tables), reads its RSS, runs ``simulate`` and reads its peak RSS
(``ru_maxrss``). Bytes per ledger row = (peak - RSS before) / rows: what
``simulate`` itself needed, the interpreter and libraries left out (they
are reported too, as the absolute peak per row). A second child then also
reads ``ledger.frame``, where schedule ids and zones become strings (two
16-byte views a row): what a user who reads the whole frame pays.
Prints one JSON object. Target: at most 100 bytes per ledger row for
``simulate`` at 10,000 schedules; exits 1 when missed.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import resource
import subprocess
import sys

TARGET_BYTES_PER_ROW = 100


def _rss() -> int:
    """This process's resident memory now, in bytes (Linux; elsewhere its peak so far)."""
    try:
        with open("/proc/self/statm") as f:
            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except OSError:
        return _peak()


def _peak() -> int:
    """This process's peak resident memory, in bytes (ru_maxrss is KiB on Linux, bytes on macOS)."""
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return peak if sys.platform == "darwin" else peak * 1024


def child(n: int, read_frame: bool) -> dict:
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import calsim
    from simulate_benchmark import scenario

    sc = scenario(n, 150.0)
    calsim.simulate(scenario(50, 150.0), progress=False)  # warm-up: imports, zone tables, first allocations
    gc.collect()
    before = _rss()
    ledger = calsim.simulate(sc, progress=False)
    if read_frame:
        ledger.frame  # noqa: B018 -- ids and zones become strings here
    peak = _peak()
    rows = len(ledger)
    return {"rows": rows, "rss_before_mib": round(before / 2**20), "peak_mib": round(peak / 2**20),
            "bytes_per_row": round((peak - before) / rows, 1), "absolute_bytes_per_row": round(peak / rows, 1)}


def main(argv: list[str] | None = None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=10_000)
    ap.add_argument("--child", choices=["simulate", "frame"], help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.child:
        print(json.dumps(child(args.n, args.child == "frame")))
        sys.exit(0)

    def measure(what: str) -> dict:
        out = subprocess.run([sys.executable, os.path.abspath(__file__), "--n", str(args.n), "--child", what],
                             capture_output=True, text=True, check=True)
        return json.loads(out.stdout.strip().splitlines()[-1])

    sim = measure("simulate")
    frame = measure("frame")
    result = {
        "benchmark": "simulate_memory",
        "schedules": args.n,
        "ledger_rows": sim["rows"],
        "simulate": sim,
        "simulate_then_read_frame": frame,
        "bytes_per_row": sim["bytes_per_row"],
        "target_bytes_per_row": TARGET_BYTES_PER_ROW,
        "python": sys.version.split()[0],
    }
    result["meets_target"] = sim["bytes_per_row"] <= TARGET_BYTES_PER_ROW
    print(json.dumps(result, indent=2))
    return result


if __name__ == "__main__":
    sys.exit(0 if main()["meets_target"] else 1)
