"""Benchmark: the fleet-year of ``simulate_benchmark`` on the local engine and on Dask (1 and 2 workers).

Run: ``python benchmarks/distributed_benchmark.py [--n 20000] [--small 5000] [--no-local]``
(the issue's figure: ``--n 60000 --no-local``)

The scenario is ``simulate_benchmark.scenario(n, budget)``: ``examples.fleet(n)``
over 2026 (tzdata 2026f), latest catch-up, overlap skip, one-minute runs
costing 1 unit charged to the schedule's tenant, a daily budget per tenant
(Europe/Berlin days) and one 3-day outage.

Every configuration runs in a fresh Python process (so one's memory does not
hide another's): ``local`` is ``calsim.simulate``; ``dask-<w>w`` starts a
``LocalCluster(n_workers=w, threads_per_worker=1, processes=True)`` and runs
``calsim.distributed.simulate`` into a temporary directory, then the lazy
``summary()`` over the Parquet files. Reported per configuration: wall time
(cluster start apart), the client process's peak RSS while simulating
(psutil, sampled every 20 ms; ``ru_maxrss`` too, which includes imports), and
the workers' peak RSS (sampled the same way). The client's peak should stay
flat from ``small`` to ``n`` schedules: nothing large reaches it.

Figures on a shared 2-core machine are noisy (other jobs run); say so when
quoting them. Prints one JSON object.

Target (issue "one definition per concept"): on the Dask runs at ``--n`` the
client's peak RSS during ``summary()`` is at most 1.2x its peak while simulating
(exact quantiles stream over the files: no column of the dataset reaches
the client). Exits 1 when a run misses it or fails.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
MiB = 1024 * 1024
SUMMARY_RSS_TARGET = 1.2  # client peak during summary() / client peak while simulating


class Sampler:
    """Peak RSS of this process, and of its child processes (the cluster's), sampled in a thread."""

    def __init__(self, every: float = 0.02):
        import psutil

        self.proc = psutil.Process()
        self.every = every
        self.peak = self.proc.memory_info().rss
        self.children_peak = 0
        self.child_max = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        import psutil

        while not self._stop.is_set():
            try:
                self.peak = max(self.peak, self.proc.memory_info().rss)
                rss = []
                for c in self.proc.children(recursive=True):
                    try:
                        rss.append(c.memory_info().rss)
                    except psutil.Error:
                        pass
                if rss:
                    self.children_peak = max(self.children_peak, sum(rss))
                    self.child_max = max(self.child_max, max(rss))
            except psutil.Error:
                pass
            self._stop.wait(self.every)

    def reset(self) -> None:
        self.peak = self.proc.memory_info().rss
        self.children_peak = self.child_max = 0

    def __enter__(self):
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._thread.join()


def one(mode: str, n: int, workers: int, budget: float) -> dict:
    """One configuration, in this process."""
    sys.path.insert(0, HERE)
    from simulate_benchmark import scenario

    import calsim

    sc = scenario(n, budget)
    out: dict = {"config": mode if mode == "local" else f"dask-{workers}w", "schedules": n}
    with Sampler() as sampler:
        base = sampler.proc.memory_info().rss
        if mode == "local":
            t = time.perf_counter()
            ledger = calsim.simulate(sc, progress=False)
            out["seconds"] = round(time.perf_counter() - t, 2)
            s = ledger.summary(full=True).row(0, named=True)  # every column: the table reads budget_waits
            out["client_peak_rss_mib"] = round(sampler.peak / MiB)
        else:
            import logging

            from distributed import Client, LocalCluster

            from calsim.distributed import simulate

            t = time.perf_counter()
            cluster = LocalCluster(n_workers=workers, threads_per_worker=1, processes=True,
                                   dashboard_address=":0", silence_logs=logging.ERROR)
            client = Client(cluster)
            client.wait_for_workers(workers)
            out["cluster_start_s"] = round(time.perf_counter() - t, 2)
            with tempfile.TemporaryDirectory(prefix="calsim-bench-") as tmp:
                sampler.reset()
                base = sampler.proc.memory_info().rss
                t = time.perf_counter()
                ds = simulate(sc, client=client, output=tmp)
                out["seconds"] = round(time.perf_counter() - t, 2)
                out["client_peak_rss_mib"] = round(sampler.peak / MiB)
                out["client_rss_growth_mib"] = round((sampler.peak - base) / MiB)
                out["workers_peak_rss_sum_mib"] = round(sampler.children_peak / MiB)
                out["worker_peak_rss_max_mib"] = round(sampler.child_max / MiB)
                out["partitions"] = ds.partitions
                out["parquet_mib"] = round(sum(f["bytes"] for f in ds.metadata["files"]) / MiB, 1)
                sampler.reset()
                t = time.perf_counter()
                s = ds.summary().row(0, named=True)
                out["lazy_summary_s"] = round(time.perf_counter() - t, 2)
                out["client_peak_rss_during_summary_mib"] = round(sampler.peak / MiB)
            client.close()
            cluster.close()
    out["occurrences"] = s["occurrences"]
    out["per_s"] = round(s["occurrences"] / out["seconds"])
    out.update({k: s[k] for k in ("done", "coalesced", "expired", "skipped", "budget_waits")})
    out["client_ru_maxrss_mib"] = round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)
    return out


def spawn(mode: str, n: int, workers: int, budget: float) -> dict:
    cmd = [sys.executable, os.path.abspath(__file__), "--one", mode, "--n", str(n), "--workers", str(workers),
           "--budget", str(budget)]
    # A 60k-schedule year is ~65M occurrences, past calsim's default guard of 50M (calsim.limits).
    env = {**os.environ, "CALSIM_MAX_OCCURRENCES": os.environ.get("CALSIM_MAX_OCCURRENCES", "500000000")}
    res = subprocess.run(cmd, capture_output=True, text=True, env=env)
    if res.returncode:
        return {"config": mode, "schedules": n, "workers": workers, "error": res.stderr.strip().splitlines()[-3:]}
    return json.loads(res.stdout.strip().splitlines()[-1])


def main(argv=None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=20_000)
    ap.add_argument("--small", type=int, default=5_000)
    ap.add_argument("--budget", type=float, default=150.0, help="units per tenant and Berlin day")
    ap.add_argument("--no-local", action="store_true", help="skip the local engine (it needs several GB)")
    ap.add_argument("--one", choices=["local", "dask"], help=argparse.SUPPRESS)
    ap.add_argument("--workers", type=int, default=1, help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.one:
        result = one(args.one, args.n, args.workers, args.budget)
        print(json.dumps(result))
        return result
    runs = [spawn("dask", args.small, 2, args.budget), spawn("dask", args.n, 2, args.budget),
            spawn("dask", args.n, 1, args.budget)]
    if not args.no_local:  # last: it holds the whole ledger in one process
        runs.append(spawn("local", args.n, 1, args.budget))
    dask_big = next((r for r in runs if r.get("config") == "dask-2w" and r["schedules"] == args.n), {})
    dask_small = next((r for r in runs if r.get("config") == "dask-2w" and r["schedules"] == args.small), {})
    result = {
        "benchmark": "distributed_fleet_year",
        "cpus": os.cpu_count(),
        "runs": runs,
        "client_peak_rss_ratio_large_over_small": (
            round(dask_big["client_peak_rss_mib"] / dask_small["client_peak_rss_mib"], 2)
            if "client_peak_rss_mib" in dask_big and "client_peak_rss_mib" in dask_small else None),
        "note": "2-core machine: the workers share the cores with the client and each other; wall times are noisy",
        "python": sys.version.split()[0],
    }
    missed = [f"{r.get('config')} at {r['schedules']}: {r.get('error')}" for r in runs if "error" in r]
    for r in runs:  # (the target is the large fleet's: a small one's simulate peak is mostly imports)
        if "client_peak_rss_during_summary_mib" in r and r["schedules"] == args.n:
            r["summary_over_simulate_rss"] = round(
                r["client_peak_rss_during_summary_mib"] / r["client_peak_rss_mib"], 2)
            if r["summary_over_simulate_rss"] > SUMMARY_RSS_TARGET:
                missed.append(f"{r['config']} at {r['schedules']}: summary() peak RSS "
                              f"{r['summary_over_simulate_rss']}x the simulate peak")
    result["targets"] = {"summary_over_simulate_rss_max": SUMMARY_RSS_TARGET}
    result["missed"] = missed
    result["meets_target"] = not missed
    print(json.dumps(result, indent=2))
    return result


if __name__ == "__main__":
    if "--one" in sys.argv:
        main()
    else:
        sys.exit(0 if main()["meets_target"] else 1)
