"""The task a Dask worker runs: simulate one sub-scenario with the local engine, write its part of the ledger.

The worker returns only a few numbers (rows, states, releases, bytes,
seconds), so the client never holds the ledger. A task killed and retried
rewrites the same file name atomically (:func:`.dataset_files.write_file`), so no
partial or duplicate part is ever visible.

>>> import calsim, tempfile
>>> s = calsim.Schedule("a", "UTC", "2026-01-01T00:00", "FREQ=DAILY")
>>> sc = calsim.Scenario("s", [s], "2026-01-01T00:00Z", "2026-01-04T00:00Z")
>>> r = run_partition(sc, 0, tempfile.mkdtemp(), None)
>>> r["path"], r["rows"], r["states"]
('part-00000.parquet', 3, {'done': 3})
"""

from __future__ import annotations

import time

import calsim.limits as limits
from ..simulation.scenario import Scenario
import calsim.distributed.dataset_files as files

__all__ = ["run_partition"]


def run_partition(sub: Scenario, k: int, directory: str, storage_options: dict | None,
                  max_occurrences: int | None = None) -> dict:
    """Simulate one sub-scenario, write its ledger as ``part-<k>.parquet``; return a few numbers.

    ``max_occurrences`` is the client's limit (the whole fleet was checked
    against it), so a worker's environment does not decide it.
    """
    from ..simulation.engine import run_local  # the engine is loaded on the worker, when a task runs

    t0 = time.perf_counter()
    with limits.scope(max_occurrences):
        frame = run_local(sub, progress=False).frame
    t1 = time.perf_counter()
    name = files.part_name(k)
    # Without the scenario column: the directory names it (scenario=<name>, hive partitioning), and a reader
    # that partitions by it (pyarrow, pandas) refuses a file column of the same name.
    part = frame.drop("scenario")
    size = files.write_file(directory, name, lambda sink: part.write_parquet(sink, compression="zstd",
                                                                               statistics=True), storage_options)
    states = {s: n for s, n in frame.group_by("state").len().iter_rows() if n}
    releases = sorted(frame["tzdata"].drop_nulls().unique().to_list())
    return {"partition": k, "path": name, "rows": frame.height, "schedules": len({s.id for s in sub.schedules}),
            "bytes": size, "states": states, "releases": releases,
            "simulate_s": round(t1 - t0, 4), "write_s": round(time.perf_counter() - t1, 4)}
