"""Benchmark: write fleet-year ledgers to a fresh DuckDB ledger store, then compare them.

Run: ``python benchmarks/store_benchmark.py [--n 10000]``

Two ledgers of ``examples.fleet(n)`` over 2026 with tzdata 2026f (about 10.8
million rows each for n = 10000): ``"all"`` (plain plan) and ``"latest"``
(``catchup="latest"`` with a 3-day outage). Each try writes both to a fresh
store file; the write time covers everything ``LedgerStore.write`` does
(checks, the key check, content digest, scenario parameters, Arrow hand-off,
insert into the table its CHECKs seal, schedules, commit; see
:mod:`calsim.store.tables` for why the key is the write's to check). Then
``compare`` runs over both (counts, lateness percentiles, and the gaps of
``observation_gaps``: silences with their missed and late occurrences).

Baseline, measured in the same run: a raw DuckDB load of the same Arrow table
(the ledger frame plus ``seq``, in row-group-sized batches, as the store hands
it over) into a fresh DuckDB file: ``CREATE TABLE`` with the same columns and
types (kind, state and reason as the store's ENUMs; no key, no CHECK, no
ENUM of schedule ids) and one ``INSERT ... SELECT`` from the registered table.
Each try loads a ledger raw just before the store writes it (both see the same
machine), and the best of ``--repeat`` tries of each is kept (the machine is
shared: the minimum is the least disturbed figure). CPU seconds (this
process, every thread) are printed beside the wall times: they move less when
other work shares the machine.

Prints one JSON object; exits 1 when a target is missed.
Targets: write <= 1.6x the raw load and >= 1,000,000 rows per second (each
ledger); compare of two scenarios < 3 s.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

import duckdb
import polars as pl

import calsim
from calsim.simulation.ledger import LEDGER_SCHEMA
from calsim.store import LedgerStore
from calsim.store.schema import DDL_V1, columns_sql

WRITE_TARGET = 1_000_000  # rows per second
RAW_RATIO_TARGET = 1.6  # write time / raw DuckDB load time
COMPARE_TARGET = 3.0  # seconds
BATCH_ROWS = 122_880  # DuckDB's row group size, as the store cuts its Arrow table


def ledgers(n: int) -> list[calsim.Ledger]:
    fleet = calsim.examples.fleet(n, seed=0)
    horizon = dict(start="2026-01-01T00:00Z", end="2027-01-01T00:00Z", release="2026f", tick="1min")
    plain = calsim.Scenario("all", fleet, **horizon)
    latest = calsim.Scenario("latest", calsim.with_policy(fleet, catchup="latest"), **horizon,
                             outages=[calsim.Outage("2026-10-20T01:01Z", "2026-10-23T01:01Z")])
    return [calsim.simulate(sc, progress=False) for sc in (plain, latest)]


def raw_load(frame: pl.DataFrame, path: Path) -> tuple[float, float]:
    """(wall, CPU) seconds to load ``frame`` plus ``seq`` into a fresh DuckDB file: no key, same column types."""
    data = frame.with_row_index("seq").with_columns(pl.col("seq").cast(pl.Int64))
    arrow = data.to_arrow(compat_level=pl.CompatLevel.newest())
    arrow = type(arrow).from_batches(arrow.to_batches(max_chunksize=BATCH_ROWS), schema=arrow.schema)
    con = duckdb.connect(str(path))
    try:
        con.execute("SET TimeZone = 'UTC'")
        con.execute("SET preserve_insertion_order = false")  # as the store (rows carry seq)
        for stmt in DDL_V1[1:4]:  # the store's ENUM types of kind, state and reason
            con.execute(stmt)
        con.execute("CREATE TABLE occ (seq BIGINT, " + columns_sql(LEDGER_SCHEMA, ()) + ")")
        t, c = time.perf_counter(), time.process_time()
        con.register("raw_in", arrow)
        con.execute("INSERT INTO occ SELECT * FROM raw_in")
        out = time.perf_counter() - t, time.process_time() - c
        assert con.execute("SELECT count(*) FROM occ").fetchone()[0] == frame.height
    finally:
        con.close()
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=10000)
    ap.add_argument("--repeat", type=int, default=2, help="tries of each timed load (the best is kept)")
    args = ap.parse_args(argv)
    t = time.perf_counter()
    runs = ledgers(args.n)
    build_s = time.perf_counter() - t
    inf = float("inf")
    raws, writes = [[inf, inf] for _ in runs], [[inf, inf] for _ in runs]  # best (wall, CPU) of each
    with tempfile.TemporaryDirectory() as d:
        for k in range(args.repeat):  # every try writes both ledgers to a fresh store
            path = Path(d) / f"ledger_{k}.duckdb"
            with LedgerStore(path) as store:
                for i, ledger in enumerate(runs):
                    # The raw load of the same rows just before the write: both see the same machine.
                    raw = Path(d) / "raw.duckdb"
                    raws[i] = [min(a, b) for a, b in zip(raws[i], raw_load(ledger.frame, raw))]
                    raw.unlink()
                    t, c = time.perf_counter(), time.process_time()
                    store.write(ledger)
                    took = time.perf_counter() - t, time.process_time() - c
                    writes[i] = [min(a, b) for a, b in zip(writes[i], took)]
                if k == args.repeat - 1:
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
            if k < args.repeat - 1:
                path.unlink()
    rows = [len(ledger) for ledger in runs]
    rates = [r / w[0] for r, w in zip(rows, writes)]
    ratios = [w[0] / r[0] for w, r in zip(writes, raws)]
    out = {
        "schedules": args.n,
        "rows_per_ledger": rows,
        "build_s": round(build_s, 2),
        "raw_load_s": [round(r[0], 2) for r in raws],
        "write_s": [round(w[0], 2) for w in writes],
        "write_rows_per_s": [round(r) for r in rates],
        "write_over_raw": [round(r, 2) for r in ratios],
        # CPU seconds of this process (every thread): less disturbed by other work on the machine.
        "raw_load_cpu_s": [round(r[1], 2) for r in raws],
        "write_cpu_s": [round(w[1], 2) for w in writes],
        "write_cpu_over_raw": [round(w[1] / r[1], 2) for w, r in zip(writes, raws)],
        "rewrite_same_s": round(rewrite_s, 2),
        "compare_s": round(compare_s, 2),
        "read_back_s": round(read_s, 2),
        "file_mb": round(size / 2**20, 1),
        "compare_done": cmp["done"].to_list(),
        # compare answers in Durations; JSON carries seconds (as the CLI's csv/json do)
        "compare_longest_gap_s": [None if g is None else g.total_seconds() for g in cmp["longest_gap"].to_list()],
        "compare_most_missed": cmp["most_missed"].to_list(),
        "compare_most_late": cmp["most_late"].to_list(),
        "targets": {"write_rows_per_s": WRITE_TARGET, "write_over_raw": RAW_RATIO_TARGET, "compare_s": COMPARE_TARGET},
    }
    out["meets_target"] = (min(rates) >= WRITE_TARGET and max(ratios) <= RAW_RATIO_TARGET
                           and compare_s < COMPARE_TARGET)
    print(json.dumps(out, indent=2))
    return 0 if out["meets_target"] else 1


if __name__ == "__main__":
    sys.exit(main())
