"""The client side of a Dask run: check the call, cut the fleet, submit one task per partition, record the run.

:func:`simulate` partitions the scenario (:mod:`.partitioning`), submits
:func:`.worker.run_partition` for each part, gathers only a few numbers per
part, removes what an earlier run or a killed attempt left in the directory,
and writes ``_scenario.json`` (:mod:`.metadata`) last. Dask itself is
imported here, and only when a run starts, so ``import calsim.distributed``
stays light.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import time
import warnings

import calsim.limits as limits
from ..errors import InputError, StoreError
from ..simulation.occurrences import check_scenario
from ..simulation.scenario import Scenario
import calsim.distributed.dataset_files as fs
from .dataset import LedgerDataset, gathered
from .metadata import metadata
from .partitioning import fleet_wide, partition, sub_scenario
from ..simulation.couplings import shared_keys
from .worker import run_partition

__all__ = ["simulate", "SCHEDULES_PER_PARTITION"]

# Default partition size: about this many schedules per task (bounds a worker's memory per task).
SCHEDULES_PER_PARTITION = 1000


def _token(*parts: object) -> str:
    """A short hash of ``parts``' reprs (dataclass reprs: every field that defines the scenario).

    The same scenario gives the same token, so resubmitting it reuses the
    same task keys; ``repr`` is used, not a canonical walk, because it is
    several times faster on large fleets (a set's repr could order
    differently in another process; keys only need to be stable in one).
    """
    h = hashlib.blake2b(digest_size=10)
    for p in parts:
        h.update(repr(p).encode())
        h.update(b"\0")
    return h.hexdigest()


def _callers_level() -> int:
    """The ``stacklevel`` of the first frame outside calsim, seen from the function that calls this one (a
    warning names the user's line, whether they called ``calsim.simulate`` or this module)."""
    import sys

    level, frame = 1, sys._getframe(1)
    while frame.f_back is not None and frame.f_globals.get("__name__", "").startswith("calsim"):
        frame, level = frame.f_back, level + 1
    return level


def _get_client(client: object):
    try:
        from distributed import Client, get_client
    except ImportError:
        raise InputError("engine: 'dask' needs dask.distributed on the client and the workers: "
                         "pip install 'calsim[dask]'") from None
    if client is None:
        try:
            return get_client(), False
        except ValueError:
            raise InputError("client: no Dask client is running; start one first — "
                             "`from distributed import Client; Client()` for a local cluster, "
                             "`Client('tcp://scheduler:8786')` for a running one — or pass client=") from None
    if isinstance(client, str):
        try:
            return Client(client), True
        except (OSError, TimeoutError) as exc:
            raise InputError(f"client: cannot connect to the Dask scheduler at {client!r}: {exc}") from None
    if not isinstance(client, Client):
        raise InputError(f"client: expected a distributed.Client, a scheduler address or None, "
                         f"got {type(client).__name__}")
    return client, False


def _check_output(output: object) -> str:
    if output is None:
        raise InputError("output: required with engine='dask' (a directory every worker can write, "
                         "or an fsspec URL such as 's3://bucket/ledgers')")
    if isinstance(output, os.PathLike):
        output = os.fspath(output)
    if not isinstance(output, str) or not output:
        raise InputError(f"output: expected a directory path or URL, got {output!r}")
    if not fs.is_url(output):
        output = os.path.abspath(output)  # the workers' working directory is not ours
        if os.path.exists(output) and not os.path.isdir(output):
            raise InputError(f"output: {output!r} exists and is not a directory")
    return output


def simulate(scenario: Scenario, client: object = None, output: object = None, partitions: int | None = None, *,
             retries: int = 2, storage_options: dict | None = None,
             max_occurrences: int | None = None, schedules: object = None, by_date: bool = False) -> LedgerDataset:
    """Simulate ``scenario`` on a Dask cluster, the ledger written as Parquet under ``output``.

    Parameters
    ----------
    scenario
        The fleet and its world (:class:`~calsim.Scenario`).
    client
        A ``distributed.Client``, a scheduler address (``"tcp://host:8786"``;
        a client is opened and closed for the call), or None: the current
        default client (``distributed.get_client()``).
    output
        Directory (created if needed) under which ``scenario=<name>/`` goes:
        a local path that every worker sees at the same place (a shared
        filesystem), or a URL fsspec understands (``s3://...`` needs s3fs,
        ``gs://...`` gcsfs, on the client and on every worker).
    partitions
        Most partitions (tasks) to cut the fleet into; fewer when fewer
        groups of coupled schedules exist (see :func:`couplings`; a
        ``capacity`` makes one). None: about one per
        ``SCHEDULES_PER_PARTITION`` schedules, and at least two per worker
        thread. The ledger does not depend on it.
    retries
        Times Dask reruns a partition whose task raised (a lost worker's
        tasks are rerun by the scheduler anyway). A rerun replaces the file.
    storage_options
        Passed to fsspec (and to polars when reading) for URL outputs.
    max_occurrences
        Refuse, on the client and before partitioning, a scenario whose
        estimated occurrences exceed this (see :func:`calsim.simulate`);
        None: ``CALSIM_MAX_OCCURRENCES``, else 100 million. The workers
        check their partitions against the same limit.
    schedules
        The fleet, when this process should not hold it: the path of a
        Parquet schedules table (:func:`calsim.write_schedules`), of a TOML
        fleet file, or ``"example:N[:SEED]"``, read (built) by the workers chunk by chunk
        (:mod:`.fleet_source`); ``scenario`` is then the world alone, without
        schedules (so without events that name one). The client holds the plan: a few
        numbers per chunk and partition, the keys that couple schedules
        (accounts, rate-limit buckets), never a schedule. Partitions are
        chosen by a stable hash of each schedule's coupling key (its budgeted
        account, else its bucket, else its id), so the ledger is the same
        whatever the chunking.
    by_date
        Also partition each scenario's files by date (hive, one level below
        ``scenario=``): ``date=<YYYY-MM-DD>/part-<k>.parquet``, the UTC date
        of each row's due instant (a row without one: its nominal date), so
        that readers prune by date (``WHERE date >= '2026-03-01'``). More,
        smaller files: a partition writes one per date it has rows on.

    Returns
    -------
    LedgerDataset
        Over the written files; nothing large is gathered to the client.

    Raises
    ------
    InputError
        Bad ``output``, ``partitions``, ``retries``, ``client``, or no client running.
    CalsimError
        Whatever the local engine raises for the scenario (e.g. a
        ``NonexistentTimeError`` with ``gap="reject"``), re-raised as is.
    """
    if not isinstance(scenario, Scenario):
        raise InputError(f"scenario: expected a calsim.Scenario, got {type(scenario).__name__}")
    output = _check_output(output)
    if partitions is not None and (isinstance(partitions, bool) or not isinstance(partitions, int) or partitions < 1):
        raise InputError(f"partitions: {partitions!r} (allowed an integer >= 1 or None)")
    if isinstance(retries, bool) or not isinstance(retries, int) or retries < 0:
        raise InputError(f"retries: {retries!r} (allowed an integer >= 0)")
    if storage_options is not None and not isinstance(storage_options, dict):
        raise InputError(f"storage_options: expected a dict or None, got {type(storage_options).__name__}")
    cap = limits.max_occurrences(max_occurrences)
    source = None
    if schedules is not None:
        source = _world_only(scenario, schedules)
    else:
        check_scenario(scenario, cap)  # the whole fleet, before anything is partitioned or submitted
    if fs.is_url(output):
        fs.filesystem(output, storage_options)  # fails early, naming output, when fsspec cannot open it
    dask_client, owned = _get_client(client)
    try:
        if source is not None:
            return _simulate_planned(scenario, source, dask_client, output, partitions, retries, storage_options,
                                     cap, by_date)
        return _simulate(scenario, dask_client, output, partitions, retries, storage_options, cap, by_date)
    finally:
        if owned:
            dask_client.close()


def _simulate(scenario: Scenario, client, output: str, partitions: int | None, retries: int,
              storage_options: dict | None, cap: int, by_date: bool = False) -> LedgerDataset:
    from .._version import __version__

    t0 = time.perf_counter()
    bins = partition(scenario, _partitions(client, scenario, len(scenario.schedules), partitions))
    directory = _started(output, scenario.name, storage_options)
    token = _token(scenario, directory, len(bins), __version__)
    futures = []
    for k, ids in enumerate(bins):
        sub = sub_scenario(scenario, set(ids))
        futures.append(client.submit(run_partition, sub, k, directory, storage_options, cap, by_date,
                                     key=f"calsim-partition-{token}-{k:05d}", retries=retries))
    results = gathered(client, futures)
    del futures
    _tidy(directory, results, storage_options)
    meta = metadata(scenario, results, __version__, round(time.perf_counter() - t0, 3))
    fs.write_bytes(directory, fs.METADATA_FILE, json.dumps(meta, indent=1).encode(), storage_options)
    fs.write_summary(output, storage_options)  # (once the scenario is complete: it is then part of the dataset)
    return LedgerDataset._from_meta(directory, meta, storage_options)


def _partitions(client, scenario: Scenario, schedules: int, partitions: int | None) -> int:
    """How many partitions: ``partitions``, else about one per :data:`SCHEDULES_PER_PARTITION` schedules and at
    least two per worker thread; one, with a warning naming it, when a resource is shared by the whole fleet."""
    if partitions is None:
        threads = sum(client.nthreads().values()) or 1
        partitions = max(2 * threads, math.ceil(schedules / SCHEDULES_PER_PARTITION))
    resource = fleet_wide(scenario)
    if resource is None:
        return partitions
    if partitions > 1 and schedules > 1:
        warnings.warn(f"engine='dask': {resource} is shared by every schedule of scenario {scenario.name!r}, so it "
                      "runs as one task on one worker (no speed-up; the ledger still goes to Parquet)",
                      UserWarning, stacklevel=_callers_level())
    return 1


def _started(output: str, name: str, storage_options: dict | None) -> str:
    """Scenario ``name``'s directory under ``output``, made, and marked incomplete (its ``_scenario.json``
    removed: written again when the run ends)."""
    directory = fs.scenario_directory(output, name)
    fs.makedirs(directory, storage_options)
    fs.remove(directory, fs.METADATA_FILE, storage_options)
    return directory


def _world_only(scenario: Scenario, schedules: object):
    """The :class:`.fleet_source.FleetSource` of ``schedules``, once ``scenario`` is checked to be a world alone.

    (A world names no schedule: a :class:`~calsim.Scenario` without schedules already refuses an event naming
    one, so Pause/Resume of one schedule, Trigger, Backfill and Revise have no place with a table yet.)
    """
    from .fleet_source import fleet_source

    if scenario.schedules:
        raise InputError(f"schedules: given with a scenario that has {len(scenario.schedules):,} schedules of its "
                         "own (allowed: one or the other; the scenario is then the world alone)")
    return fleet_source(schedules)


def _simulate_planned(world: Scenario, source, client, output: str, partitions: int | None, retries: int,
                      storage_options: dict | None, cap: int, by_date: bool = False) -> LedgerDataset:
    """:func:`simulate` of a fleet the workers read (``source``): three rounds of tasks, the client holding
    only their few numbers.

    1. (only when one schedule can join two kinds of key: two of budgets or account breakers, capacity
       pools and rate limits) each chunk's sets of joined keys, for a union-find over the keys;
    2. each chunk read, estimated against ``cap`` per release, and written to the partitions of its
       schedules' keys (``_plan/``, removed at the end); nothing is simulated before the estimates of every
       chunk are summed and checked, as a local run checks the whole fleet;
    3. each partition read back from the plan, simulated and written as :func:`simulate` writes it.
    """
    from .._version import __version__
    from .worker import SCHEDULE_RECORDS

    t0 = time.perf_counter()
    partitions = _partitions(client, world, source.rows, partitions)
    kinds = shared_keys(world)
    directory = _started(output, world.name, storage_options)
    plan = fs.join(directory, "_plan")
    fs.remove_tree(plan, storage_options)
    fs.makedirs(plan, storage_options)
    token = _token(world, str(source), source.chunks, directory, partitions, __version__)
    # The world and the keys once on the cluster, each task given their futures: passed by value, a world with
    # a budget per tenant (20,000 for a million schedules, ~1 MB pickled) is copied into every task's graph.
    shared_world, shared_kinds = client.scatter([world, kinds], hash=False)
    shared = [shared_world, shared_kinds]
    try:
        results = _rounds(client, source, plan, directory, storage_options, partitions, retries, cap, token,
                          shared_world, kinds, shared, by_date)
    finally:
        for f in shared:
            f.release()
    fs.remove_tree(plan, storage_options)
    _tidy(directory, results, storage_options)
    names = {r["path"] for r in results}
    records = fs.join(directory, SCHEDULE_RECORDS)
    for name in fs.listdir(records, storage_options):
        if name not in names:
            fs.remove(records, name, storage_options)
    meta = metadata(world, results, __version__, round(time.perf_counter() - t0, 3),
                    schedule_files=[f"{SCHEDULE_RECORDS}/{name}" for name in sorted(names)])
    fs.write_bytes(directory, fs.METADATA_FILE, json.dumps(meta, indent=1).encode(), storage_options)
    fs.write_summary(output, storage_options)
    return LedgerDataset._from_meta(directory, meta, storage_options)


def _rounds(client, source, plan: str, directory: str, storage_options: dict | None, partitions: int, retries: int,
            cap: int, token: str, world, kinds: tuple, shared: list, by_date: bool = False) -> list[dict]:
    """Rounds 1-3 of :func:`_simulate_planned` (``world``: the scattered world's future; ``kinds`` the keys,
    scattered as ``shared[1]``; what this scatters joins ``shared``, released by the caller): the partitions'
    results."""
    from .fleet_source import joined
    from .worker import chunk_links, plan_chunk, run_planned

    chunks = range(len(source.chunks))
    roots: dict = {}
    if sum(bool(k) for k in kinds) > 1:  # (one kind of key: no schedule can join two)
        links = gathered(client, [client.submit(chunk_links, source, c, shared[1],
                                                key=f"calsim-links-{token}-{c:05d}", retries=retries)
                                  for c in chunks])
        roots = joined(sorted({keys for part in links for keys in part}))
    shared.append(client.scatter([roots], hash=False)[0])  # (a dict given alone is scattered value by value)
    planned = gathered(client, [client.submit(plan_chunk, source, c, world, shared[1], shared[-1], partitions, plan,
                                              storage_options, key=f"calsim-plan-{token}-{c:05d}", retries=retries)
                                for c in chunks])
    estimates = [p["estimates"] for p in planned]
    total = max((sum(e[r] for e in estimates) for r in range(len(estimates[0]))), default=0) if estimates else 0
    if total > cap:
        fs.remove_tree(plan, storage_options)
        raise limits.over_limit("simulate", total, f"the {source.rows:,} schedules of {source}", cap)
    where: dict[int, list[int]] = {}
    for p in planned:
        for k in p["counts"]:
            where.setdefault(int(k), []).append(p["chunk"])
    return gathered(client, [client.submit(run_planned, world, k, plan, sorted(where[k]), directory, storage_options,
                                           cap, by_date, key=f"calsim-partition-{token}-{k:05d}", retries=retries)
                             for k in sorted(where)])


def _tidy(directory: str, results: list[dict], storage_options: dict | None) -> None:
    """After the parts are written: remove the parts an earlier run left (more partitions, another date
    level) and killed attempts' temporary files, then check the client sees every part the workers wrote."""
    names = {f["path"] for r in results for f in r.get("files", [r])}
    for path in fs.part_paths(directory, storage_options):
        if path not in names:
            where, _, name = path.rpartition("/")
            fs.remove(fs.join(directory, where) if where else directory, name, storage_options)
    levels = [name for name in fs.listdir(directory, storage_options) if name.startswith("date=")]
    for level in ["", *levels]:
        at = fs.join(directory, level) if level else directory
        for name in fs.listdir(at, storage_options):
            if fs.is_leftover(name):
                fs.remove(at, name, storage_options)
        if level and not fs.listdir(at, storage_options):  # (a date no part of this run has rows on)
            fs.remove_tree(at, storage_options)
    missing = [p for p in sorted(names) if not fs.exists(fs.join(directory, p), storage_options)]
    if missing:
        raise StoreError(f"output: the workers wrote {missing[0]!r} (and {len(missing) - 1} more) under "
                         f"{directory!r}, which this client cannot see; use a directory shared by the client and "
                         "every worker, or an object-store URL")
