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
from functools import partial

import polars as pl

import calsim.limits as limits
from ..simulation.scenario import Scenario
import calsim.distributed.dataset_files as files

__all__ = ["run_partition", "chunk_links", "plan_chunk", "run_planned", "part_view", "SCHEDULE_RECORDS"]


def run_partition(sub: Scenario, k: int, directory: str, storage_options: dict | None,
                  max_occurrences: int | None = None, by_date: bool = False) -> dict:
    """Simulate one sub-scenario, write its ledger as ``part-<k>.parquet``; return a few numbers.

    ``max_occurrences`` is the client's limit (the whole fleet was checked
    against it), so a worker's environment does not decide it. ``by_date``:
    one file per UTC date of the rows' due instants (a row without one, by its
    nominal date), ``date=<YYYY-MM-DD>/part-<k>.parquet``, a hive level readers
    prune by.
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
    if by_date:
        day = pl.coalesce(pl.col("due_utc").dt.date(), pl.col("nominal_local").dt.date())
        groups = [(f"date={d or files.NO_DATE}/{name}", g.drop("_day"))
                  for (d,), g in part.with_columns(day.alias("_day")).group_by("_day", maintain_order=True)]
    else:
        groups = [(name, part)]
    written = []
    for path, rows in sorted(groups, key=lambda pg: pg[0]):
        where, _, file = path.rpartition("/")
        target = files.join(directory, where) if where else directory
        if where:
            files.makedirs(target, storage_options)
        size = files.write_file(target, file, partial(_write_part, rows), storage_options)
        written.append({"path": path, "rows": rows.height, "schedules": rows["schedule_id"].n_unique(),
                        "bytes": size})
    states = {s: n for s, n in frame.group_by("state").len().iter_rows() if n}
    releases = sorted(frame["tzdata"].drop_nulls().unique().to_list())
    return {"partition": k, "path": name, "files": written, "rows": frame.height,
            "schedules": len({s.id for s in sub.schedules}), "bytes": sum(f["bytes"] for f in written),
            "states": states, "releases": releases,
            "simulate_s": round(t1 - t0, 4), "write_s": round(time.perf_counter() - t1, 4)}


def _write_part(rows: pl.DataFrame, sink) -> None:
    rows.write_parquet(sink, compression="zstd", statistics=True)


def chunk_links(source, c: int, kinds: tuple[frozenset[str], ...]) -> list[tuple]:
    """The distinct sets of two or more coupling keys the schedules of chunk ``c`` join
    (:func:`.fleet_source.coupling_keys` of the world's accounts, buckets and pools, ``kinds``): what the
    client's union-find needs, never the schedules."""
    from .fleet_source import coupling_keys, read_chunk

    return sorted({keys for s in read_chunk(source, c) if len(keys := coupling_keys(s, *kinds)) > 1})


def plan_chunk(source, c: int, world: Scenario, kinds: tuple[frozenset[str], ...], roots: dict,
               partitions: int, plan: str, storage_options: dict | None) -> dict:
    """Read chunk ``c``, estimate its occurrences, and write its schedules to the partitions they belong to
    (``<plan>/k<partition>-c<chunk>.pkl``, pickled lists read by :func:`run_planned`); returns the estimate
    per release of ``world`` and the schedules written per partition."""
    import pickle

    from .fleet_source import coupling_keys, partition_of, read_chunk
    from ..simulation.scenario import TzUpgrade
    from ..tz.release import release

    scheds = read_chunk(source, c)
    releases = [world.release] + [ev.to for ev in world.events if isinstance(ev, TzUpgrade)]
    estimates = [int(limits.estimates(scheds, world.start_us, world.end_us, release(r)).sum()) if scheds else 0
                 for r in releases]
    parts: dict[int, list] = {}
    for s in scheds:
        keys = coupling_keys(s, *kinds)
        key = roots.get(keys[0], keys[0]) if keys else ("id", s.id)
        parts.setdefault(partition_of(key, partitions), []).append(s)
    for k, members in parts.items():
        files.write_bytes(plan, f"k{k:05d}-c{c:05d}.pkl", pickle.dumps(members, protocol=pickle.HIGHEST_PROTOCOL),
                          storage_options)
    return {"chunk": c, "schedules": len(scheds), "estimates": estimates,
            "counts": {k: len(v) for k, v in parts.items()}}


def run_planned(world: Scenario, k: int, plan: str, chunks: list[int], directory: str,
                storage_options: dict | None, max_occurrences: int | None = None, by_date: bool = False) -> dict:
    """Partition ``k`` of a planned run: its schedules from the plan's files of ``chunks``, simulated in
    ``world`` (its budgets and breakers those of these schedules), written as :func:`run_partition` does; their
    records (:func:`calsim.simulation.scenario_records.schedule_rows`) go to ``_schedules/part-<k>.parquet``."""
    import pickle

    from .partitioning import sub_scenario
    from ..simulation.scenario_records import schedule_rows

    scheds = []
    for c in chunks:
        scheds.extend(pickle.loads(files.read_bytes(files.join(plan, f"k{k:05d}-c{c:05d}.pkl"), storage_options)))
    sub = sub_scenario(world, {s.id for s in scheds}, schedules=tuple(scheds))
    result = run_partition(sub, k, directory, storage_options, max_occurrences, by_date)
    rows = pl.DataFrame(schedule_rows(sub), schema=SCHEDULE_RECORD, orient="row") if scheds else \
        pl.DataFrame(schema=SCHEDULE_RECORD)
    records = files.join(directory, SCHEDULE_RECORDS)
    files.makedirs(records, storage_options)
    files.write_file(records, files.part_name(k), lambda sink: rows.write_parquet(sink, compression="zstd"),
                     storage_options)
    return result


#: Where a planned run keeps its schedule records (one file per partition, beside the ledger's parts: a
#: directory whose name starts with "_" is not part of the dataset for hive readers).
SCHEDULE_RECORDS = "_schedules"
SCHEDULE_RECORD = {"schedule_id": pl.String, "revision": pl.Int64, "zone": pl.String, "account": pl.String,
                   "rule": pl.String, "policy": pl.String}


def part_view(path: str, view: str, storage_options: dict | None) -> pl.DataFrame:
    """One ledger view (``"gaps"``, ``"coverage"``: :mod:`calsim.simulation.views`) of one part file: a
    schedule's rows are all in one part, so the parts' views together are the ledger's."""
    from ..simulation import views

    return getattr(views, view)(files.scan_parquet([path], storage_options)).collect()
