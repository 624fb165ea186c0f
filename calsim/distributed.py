"""Scale-out of :func:`calsim.simulate` on a Dask cluster; the ledger lands in Parquet, not in memory.

:func:`simulate` cuts a scenario into sub-scenarios that share nothing,
simulates each one with the local engine on a ``dask.distributed`` worker, and
has every worker write its part of the ledger straight to Parquet. The client
only receives a few numbers per partition, so it never holds the ledger (its
memory follows the fleet it submits); the result is a :class:`LedgerDataset`
over the files.

What couples schedules, and so must stay in one partition:

- a **budget**: schedules whose policy's ``account`` has a :class:`~calsim.Budget`
  share its spending (every revision's account counts, ``Revise`` events
  included); accounts are joined with a union-find, so schedules linked
  through any chain of shared accounts land together. An account without a
  budget couples nothing.
- ``capacity``: a scenario-wide bound on concurrent runs couples the whole
  fleet, so such a scenario is simulated as **one partition** (on one worker;
  no speed-up, but the ledger still goes to Parquet and not to the client).

Events follow their schedule (``Pause``/``Resume``/``Trigger`` with a
``schedule_id``, ``Revise``); scenario-wide ones (``Pause``/``Resume`` without
an id, ``TzUpgrade``) and the world (horizon, release, tick, outages,
failures, seed) go to every partition. Randomness is drawn per
``(schedule_id, nominal_local, fold, seed)``, never from row positions, so the
same scenario gives the same ledger whatever the number of partitions or
workers (the tests check it row for row against the local engine).

Layout under ``output`` (a local directory every worker can see, or an
fsspec URL)::

    <output>/scenario=<name>/part-00000.parquet     one file per partition, LEDGER_SCHEMA columns
    <output>/scenario=<name>/part-00001.parquet
    <output>/scenario=<name>/_scenario.json         written last: its presence means complete

Each partition file is written under a temporary name in the same directory
and renamed over the final one (``os.replace``), so a task killed and
retried never leaves a partial or duplicate file; re-running a scenario to
the same output replaces its files (and removes parts a previous run with
more partitions left). ``_scenario.json`` is removed when a run starts and
written (atomically too) when every part is in place.

>>> import calsim
>>> a = calsim.Schedule("a", "UTC", "2026-01-01T00:00", "FREQ=DAILY", policy=calsim.Policy(account="t1"))
>>> b = calsim.Schedule("b", "UTC", "2026-01-01T00:00", "FREQ=DAILY", policy=calsim.Policy(account="t1"))
>>> c = calsim.Schedule("c", "UTC", "2026-01-01T00:00", "FREQ=DAILY")
>>> sc = calsim.Scenario("s", [a, b, c], "2026-01-01T00:00Z", "2026-01-08T00:00Z",
...                      budgets=[calsim.Budget("t1", 5)])
>>> couplings(sc)
[['a', 'b'], ['c']]
>>> couplings(dataclasses.replace(sc, capacity=1))
[['a', 'b', 'c']]
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import hashlib
import heapq
import io
import json
import math
import os
import re
import time
import uuid
from dataclasses import dataclass, field
from urllib.parse import quote

import polars as pl

from . import limits
from .errors import CalsimError, InputError, StoreError
from .simulation.ledger import LEDGER_SCHEMA, LEDGER_STATES
from .simulation.occurrences import check_scenario
from .simulation.policy import Policy
from .simulation.scenario import Pause, Resume, Revise, Scenario, Trigger

__all__ = ["simulate", "LedgerDataset", "couplings", "partition", "scenario_directory", "METADATA_FILE", "FORMAT"]

METADATA_FILE = "_scenario.json"
FORMAT = "calsim.ledger-dataset/1"
KEY = ("scenario", "schedule_id", "revision", "nominal_local", "fold", "kind")
# Default partition size: about this many schedules per task (bounds a worker's memory per task).
SCHEDULES_PER_PARTITION = 1000
_PART = re.compile(r"^part-(\d{5,})\.parquet$")
_TMP = re.compile(r"^\.(part-\d{5,}\.parquet|_scenario\.json)\.[0-9a-f]{32}\.tmp$")
# Protocols polars reads itself (object_store); others are read through fsspec, eagerly.
_POLARS_PROTOCOLS = {"s3", "s3a", "gs", "gcs", "gcp", "az", "azure", "abfs", "abfss", "adl", "http", "https", "hf"}


# ---------------------------------------------------------------------------
# Partitioning
# ---------------------------------------------------------------------------


def _account(schedule) -> str | None:
    p = schedule.policy
    return p.account if isinstance(p, Policy) and p.account else None


def _revisions(scenario: Scenario) -> list:
    """Every schedule revision a run can meet: the fleet's and the ``Revise`` events'."""
    return list(scenario.schedules) + [ev.schedule for ev in scenario.events if isinstance(ev, Revise)]


def couplings(scenario: Scenario) -> list[list[str]]:
    """Groups of schedule ids that must be simulated together, each sorted, the groups by first id.

    Schedules paying from the same budgeted account are joined (union-find
    over accounts); with a ``capacity`` every schedule is in one group.
    """
    ids = sorted({s.id for s in scenario.schedules})
    if scenario.capacity is not None:
        return [ids] if ids else []
    budgeted = {b.account for b in scenario.budgets}
    parent: dict[object, object] = {}

    def find(x: object) -> object:
        parent.setdefault(x, x)
        root = x
        while parent[root] != root:
            root = parent[root]
        while parent[x] != root:  # path compression
            parent[x], x = root, parent[x]
        return root

    for s in _revisions(scenario):
        node = ("id", s.id)
        find(node)
        acct = _account(s)
        if acct in budgeted:
            ra, rb = find(node), find(("account", acct))
            if ra != rb:
                parent[ra] = rb
    groups: dict[object, list[str]] = {}
    for i in ids:
        groups.setdefault(find(("id", i)), []).append(i)
    return sorted(groups.values(), key=lambda g: g[0])


def partition(scenario: Scenario, partitions: int) -> list[list[str]]:
    """Schedule ids per partition: coupled groups packed into at most ``partitions`` bins.

    Deterministic: groups go, largest first (by schedule revisions, ties by
    first id), to the least loaded bin (ties by index). Fewer bins than asked
    come back when there are fewer groups. Each bin's ids are sorted.
    """
    groups = couplings(scenario)
    if not groups:
        return []
    weight: dict[str, int] = {}
    for s in _revisions(scenario):
        weight[s.id] = weight.get(s.id, 0) + 1
    n = max(1, min(partitions, len(groups)))
    ranked = sorted(groups, key=lambda g: (-sum(weight[i] for i in g), g[0]))
    heap = [(0, k) for k in range(n)]
    bins: list[list[str]] = [[] for _ in range(n)]
    for g in ranked:
        load, k = heapq.heappop(heap)
        bins[k].extend(g)
        heapq.heappush(heap, (load + sum(weight[i] for i in g), k))
    return [sorted(b) for b in bins if b]


def _sub_scenario(scenario: Scenario, ids: set[str]) -> Scenario:
    """The scenario restricted to ``ids``: their schedules, events and budgets, the same world."""
    events = []
    for ev in scenario.events:
        if isinstance(ev, (Pause, Resume)):
            keep = ev.schedule_id is None or ev.schedule_id in ids
        elif isinstance(ev, Trigger):
            keep = ev.schedule_id in ids
        elif isinstance(ev, Revise):
            keep = ev.schedule is not None and ev.schedule.id in ids
        else:  # TzUpgrade and anything scenario-wide
            keep = True
        if keep:
            events.append(ev)
    schedules = [s for s in scenario.schedules if s.id in ids]
    accounts = {_account(s) for s in _revisions(scenario) if s.id in ids}
    budgets = [b for b in scenario.budgets if b.account in accounts]
    return dataclasses.replace(scenario, schedules=tuple(schedules), events=tuple(events), budgets=tuple(budgets))


# ---------------------------------------------------------------------------
# Storage: local paths, or fsspec URLs
# ---------------------------------------------------------------------------


def _is_url(location: str) -> bool:
    return "://" in location


def _fs(location: str, storage_options: dict | None):
    """``(filesystem, path)`` for a URL (None for a local path)."""
    if not _is_url(location):
        return None, location
    try:
        import fsspec
    except ImportError:  # pragma: no cover - fsspec ships with dask
        raise InputError(f"output: {location!r} is a URL, which needs fsspec (pip install fsspec, and "
                         "s3fs or gcsfs for object stores)") from None
    try:
        fs, path = fsspec.core.url_to_fs(location, **(storage_options or {}))
    except (ImportError, ValueError) as exc:
        raise InputError(f"output: cannot open {location!r} with fsspec: {exc}") from None
    return fs, path


def _local_of(location: str) -> str | None:
    """The local path of a local location (a path, or a ``file://`` URL), else None."""
    if not _is_url(location):
        return location
    if location.startswith("file://"):
        return location[len("file://"):] or "/"
    return None


def _join(location: str, name: str) -> str:
    return location.rstrip("/") + "/" + name if _is_url(location) else os.path.join(location, name)


def _write_atomic(data_writer, location: str, name: str, storage_options: dict | None) -> int:
    """Write a file ``name`` under directory ``location`` so that no reader ever sees it half written.

    Locally: a temporary name in the same directory, flushed, then renamed
    over the final one (``os.replace`` is atomic on POSIX and Windows). On an
    object store: one whole-object PUT, which stores make visible atomically.
    ``data_writer(file)`` writes the bytes. Returns the size in bytes.
    """
    local = _local_of(location)
    if local is not None:
        final = os.path.join(local, name)
        tmp = os.path.join(local, f".{name}.{uuid.uuid4().hex}.tmp")
        try:
            with open(tmp, "wb") as fh:
                data_writer(fh)
                fh.flush()
                os.fsync(fh.fileno())
            os.replace(tmp, final)
        except BaseException:
            try:
                os.remove(tmp)
            except OSError:
                pass
            raise
        return os.path.getsize(final)
    fs, path = _fs(location, storage_options)
    buf = io.BytesIO()
    data_writer(buf)
    fs.pipe_file(path.rstrip("/") + "/" + name, buf.getvalue())
    return buf.tell()


def _listdir(location: str, storage_options: dict | None) -> list[str]:
    local = _local_of(location)
    if local is not None:
        return sorted(os.listdir(local)) if os.path.isdir(local) else []
    fs, path = _fs(location, storage_options)
    try:
        return sorted(p.rstrip("/").rsplit("/", 1)[-1] for p in fs.ls(path, detail=False))
    except FileNotFoundError:
        return []


def _remove(location: str, name: str, storage_options: dict | None) -> None:
    local = _local_of(location)
    try:
        if local is not None:
            os.remove(os.path.join(local, name))
        else:
            fs, path = _fs(location, storage_options)
            fs.rm(path.rstrip("/") + "/" + name)
    except FileNotFoundError:
        pass


def _makedirs(location: str, storage_options: dict | None) -> None:
    local = _local_of(location)
    if local is not None:
        os.makedirs(local, exist_ok=True)
    else:
        fs, path = _fs(location, storage_options)
        fs.makedirs(path, exist_ok=True)


def _exists(location: str, storage_options: dict | None) -> bool:
    local = _local_of(location)
    if local is not None:
        return os.path.exists(local)
    fs, path = _fs(location, storage_options)
    return fs.exists(path)


def _read_text(location: str, storage_options: dict | None) -> str:
    local = _local_of(location)
    if local is not None:
        with open(local, encoding="utf-8") as fh:
            return fh.read()
    fs, path = _fs(location, storage_options)
    with fs.open(path, "rb") as fh:
        return fh.read().decode("utf-8")


def scenario_directory(output: str, name: str) -> str:
    """``<output>/scenario=<name>``; the name is percent-encoded where it is not a safe file name."""
    return _join(output, "scenario=" + quote(name, safe="-_.~@+,"))


# ---------------------------------------------------------------------------
# The task run on a worker
# ---------------------------------------------------------------------------


def _run_partition(sub: Scenario, k: int, directory: str, storage_options: dict | None,
                   max_occurrences: int | None = None) -> dict:
    """Simulate one sub-scenario, write its ledger as ``part-<k>.parquet``; return a few numbers.

    ``max_occurrences`` is the client's limit (the whole fleet was checked
    against it), so a worker's environment does not decide it.
    """
    from .simulation.engine import run_local

    t0 = time.perf_counter()
    with limits.scope(max_occurrences):
        frame = run_local(sub, progress=False).frame
    t1 = time.perf_counter()
    name = f"part-{k:05d}.parquet"
    size = _write_atomic(lambda fh: frame.write_parquet(fh, compression="zstd", statistics=True),
                         directory, name, storage_options)
    states = {s: n for s, n in frame.group_by("state").len().iter_rows() if n}
    releases = sorted(frame["tzdata"].drop_nulls().unique().to_list())
    return {"partition": k, "path": name, "rows": frame.height, "schedules": len({s.id for s in sub.schedules}),
            "bytes": size, "states": states, "releases": releases,
            "simulate_s": round(t1 - t0, 4), "write_s": round(time.perf_counter() - t1, 4)}


# ---------------------------------------------------------------------------
# The client side
# ---------------------------------------------------------------------------


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
    if not _is_url(output):
        output = os.path.abspath(output)  # the workers' working directory is not ours
        if os.path.exists(output) and not os.path.isdir(output):
            raise InputError(f"output: {output!r} exists and is not a directory")
    return output


def _schedule_rows(scenario: Scenario) -> list[dict]:
    """Per schedule revision: what a ledger store keeps in its ``schedules`` table.

    ``rule`` is the rule text (a rule object's repr), ``policy`` the policy as
    JSON text (``json.dumps(..., sort_keys=True)``, None without one),
    ``account`` the schedule's account (its latest revision's, as a ledger's
    ``accounts``). Revisions made by ``Revise`` events are numbered as the
    engine numbers them.
    """
    from .store_records import _jsonable

    revs = [(s, s.revision) for s in scenario.schedules]
    for ev in scenario.events:
        if isinstance(ev, Revise) and ev.schedule is not None:
            top = max((r for s, r in revs if s.id == ev.schedule.id), default=0)
            revs.append((ev.schedule, ev.schedule.revision if ev.schedule.revision > top else top + 1))
    revs.sort(key=lambda x: (x[0].id, x[1]))
    accounts = {s.id: _account(s) for s, _ in revs if _account(s)}
    seen, rows = set(), []
    for s, r in revs:
        if (s.id, r) in seen:
            continue
        seen.add((s.id, r))
        rows.append({"schedule_id": s.id, "revision": r, "zone": s.zone, "account": accounts.get(s.id),
                     "rule": s.rule if isinstance(s.rule, str) else repr(s.rule),
                     "policy": None if s.policy is None else json.dumps(_jsonable(s.policy), sort_keys=True)})
    return rows


def _iso(us: int) -> str:
    return (dt.datetime(1970, 1, 1, tzinfo=dt.timezone.utc) + dt.timedelta(microseconds=us)).isoformat()


def simulate(scenario: Scenario, client: object = None, output: object = None, partitions: int | None = None, *,
             retries: int = 2, storage_options: dict | None = None,
             max_occurrences: int | None = None) -> "LedgerDataset":
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
    check_scenario(scenario, cap)  # the whole fleet, before anything is partitioned or submitted
    if _is_url(output):
        _fs(output, storage_options)  # fails early, naming output, when fsspec cannot open it
    client, owned = _get_client(client)
    try:
        return _simulate(scenario, client, output, partitions, retries, storage_options, cap)
    finally:
        if owned:
            client.close()


def _simulate(scenario: Scenario, client, output: str, partitions: int | None, retries: int,
              storage_options: dict | None, cap: int) -> "LedgerDataset":
    from ._version import __version__

    t0 = time.perf_counter()
    if partitions is None:
        threads = sum(client.nthreads().values()) or 1
        partitions = max(2 * threads, math.ceil(len(scenario.schedules) / SCHEDULES_PER_PARTITION))
    bins = partition(scenario, partitions)
    directory = scenario_directory(output, scenario.name)
    _makedirs(directory, storage_options)
    # Not complete until written again at the end.
    _remove(directory, METADATA_FILE, storage_options)
    token = _token(scenario, directory, len(bins), __version__)
    futures = []
    for k, ids in enumerate(bins):
        sub = _sub_scenario(scenario, set(ids))
        futures.append(client.submit(_run_partition, sub, k, directory, storage_options, cap,
                                     key=f"calsim-partition-{token}-{k:05d}", retries=retries))
    try:
        results = client.gather(futures)
    finally:
        for f in futures:
            f.release()
        del futures
    names = {r["path"] for r in results}
    # Parts a previous run with more partitions left, and temporary files of killed attempts.
    for name in _listdir(directory, storage_options):
        if (_PART.match(name) and name not in names) or _TMP.match(name):
            _remove(directory, name, storage_options)
    missing = [r["path"] for r in results if not _exists(_join(directory, r["path"]), storage_options)]
    if missing:
        raise StoreError(f"output: the workers wrote {missing[0]!r} (and {len(missing) - 1} more) under "
                         f"{directory!r}, which this client cannot see; use a directory shared by the client and "
                         "every worker, or an object-store URL")
    from .store_records import _jsonable

    # The ledger store's `parameters` (its _jsonable of the scenario, schedules as a count),
    # built without materialising every schedule's JSON form first.
    params = {f.name: (len(scenario.schedules) if f.name == "schedules" else _jsonable(getattr(scenario, f.name)))
              for f in dataclasses.fields(scenario) if f.init}
    states = {s: sum(r["states"].get(s, 0) for r in results) for s in LEDGER_STATES}
    meta = {
        "format": FORMAT,
        "name": scenario.name,
        "horizon_start": _iso(scenario.start_us),
        "horizon_end": _iso(scenario.end_us),
        "release": ",".join(sorted({v for r in results for v in r["releases"]})) or None,
        "seed": scenario.seed,
        "tick": scenario.tick if isinstance(scenario.tick, str) else str(scenario.tick),
        "partitions": len(results),
        "rows": sum(r["rows"] for r in results),
        "files": [{"path": r["path"], "rows": r["rows"], "schedules": r["schedules"], "bytes": r["bytes"]}
                  for r in sorted(results, key=lambda r: r["partition"])],
        "states": states,
        "calsim_version": __version__,
        "engine": "dask",
        "created": dt.datetime.now(dt.timezone.utc).isoformat(),
        "seconds": round(time.perf_counter() - t0, 3),
        "ledger_schema": {k: str(v) for k, v in LEDGER_SCHEMA.items()},
        "parameters": params,
        "schedules": _schedule_rows(scenario),
    }
    _write_atomic(lambda fh: fh.write(json.dumps(meta, indent=1).encode()), directory, METADATA_FILE,
                  storage_options)
    return LedgerDataset._from_meta(directory, meta, storage_options)


# ---------------------------------------------------------------------------
# The result
# ---------------------------------------------------------------------------


@dataclass(frozen=True)
class LedgerDataset:
    """A ledger as Parquet files (one per partition), read lazily.

    ``name`` is the scenario's, ``path`` its directory (``.../scenario=<name>``),
    ``files`` the part files (full paths or URLs), ``rows`` their total,
    ``partitions`` how many. :meth:`scan` is the lazy frame; :attr:`frame`
    reads everything (mind the size); :meth:`summary` and :meth:`counts`
    aggregate without collecting the rows. :meth:`open` reopens a dataset
    from its directory.
    """

    name: str
    path: str
    files: tuple[str, ...]
    rows: int
    partitions: int
    metadata: dict = field(default_factory=dict, compare=False, repr=False)
    storage_options: dict | None = field(default=None, compare=False, repr=False)

    @classmethod
    def _from_meta(cls, directory: str, meta: dict, storage_options: dict | None) -> "LedgerDataset":
        files = tuple(_join(directory, f["path"]) for f in meta["files"])
        return cls(meta["name"], directory, files, int(meta["rows"]), int(meta["partitions"]), meta,
                   storage_options)

    @classmethod
    def open(cls, path: object, name: str | None = None, storage_options: dict | None = None) -> "LedgerDataset":
        """The dataset in directory ``path`` (``.../scenario=<name>``), or under ``path`` for scenario ``name``.

        Raises :class:`~calsim.errors.StoreError` when its ``_scenario.json``
        is missing (never written, or a run is in progress or failed).
        """
        path = os.fspath(path) if isinstance(path, os.PathLike) else path
        if not isinstance(path, str) or not path:
            raise InputError(f"path: expected a directory path or URL, got {path!r}")
        directory = scenario_directory(path, name) if name is not None else path
        meta_path = _join(directory, METADATA_FILE)
        try:
            meta = json.loads(_read_text(meta_path, storage_options))
        except FileNotFoundError:
            raise StoreError(f"path: no {METADATA_FILE} in {directory!r} (not a calsim ledger dataset, "
                             "or its run did not complete)") from None
        if meta.get("format") != FORMAT:
            raise StoreError(f"path: {meta_path!r} has format {meta.get('format')!r}, expected {FORMAT!r}")
        return cls._from_meta(directory, meta, storage_options)

    def __len__(self) -> int:
        return self.rows

    def scan(self) -> pl.LazyFrame:
        """The ledger as a lazy frame with the local ledger's schema (Enums, UTC instants, naive nominal time)."""
        return self._scan(self.files)

    def scans(self) -> list[pl.LazyFrame]:
        """:meth:`scan` of each file, in order (for passes that read one partition at a time).

        (A filesystem only fsspec reads is read eagerly: then one scan of every file.)
        """
        lazy = not self.files or not _is_url(self.files[0]) or \
            self.files[0].split("://", 1)[0] in ("file", *_POLARS_PROTOCOLS)
        return [self._scan((f,)) for f in self.files] if lazy else [self.scan()]

    def _scan(self, files: tuple[str, ...]) -> pl.LazyFrame:
        names = LEDGER_SCHEMA.names()
        if not files:
            return pl.LazyFrame(schema=LEDGER_SCHEMA)
        protocol = files[0].split("://", 1)[0] if _is_url(files[0]) else None
        if protocol is None or protocol == "file" or protocol in _POLARS_PROTOCOLS:
            files = [(_local_of(f) or f) for f in files]
            lf = pl.scan_parquet(files, hive_partitioning=False, storage_options=self.storage_options
                                 if protocol not in (None, "file") else None)
        else:  # a filesystem only fsspec knows: read through it (eagerly, file by file)
            fs, _ = _fs(files[0], self.storage_options)
            parts = []
            for f in files:
                with fs.open(_fs(f, self.storage_options)[1], "rb") as fh:
                    parts.append(pl.read_parquet(fh).lazy())
            lf = pl.concat(parts, how="vertical")
        return lf.select(names).cast(dict(LEDGER_SCHEMA))

    @property
    def frame(self) -> pl.DataFrame:
        """Every row, in the local ledger's order (reads all files: for data that fits in memory).

        The local ledger is sorted by instant, then key, where a row without an
        instant (gap-skipped, merged, excluded) is placed by its nominal time
        read with the offset before the gap (``gap="shift"``); when manual runs
        exist, rows without an instant come last (as the local engine sorts
        them then).
        """
        return _local_order(self.scan().collect())

    def to_ledger(self):
        """A :class:`~calsim.Ledger` on :attr:`frame` (in memory: for small data)."""
        from .simulation.ledger import Ledger

        accounts = {r["schedule_id"]: r["account"] for r in self.metadata.get("schedules", []) if r.get("account")}
        return Ledger(self.name, self.frame, accounts)

    def counts(self) -> pl.DataFrame:
        """Rows per (kind, state, reason), computed lazily (as :meth:`calsim.Ledger.counts`)."""
        return (self.scan().group_by("kind", "state", "reason").len("rows").sort("kind", "state", "reason")
                .collect())

    def summary(self) -> pl.DataFrame:
        """One row, the columns of :meth:`calsim.Ledger.summary`, computed lazily over the files.

        The same definition (:func:`calsim.simulation.views.summary`) on the
        scan, streamed: the client never holds a column of the dataset (its
        memory stays flat whatever the fleet size). Lateness quantiles are
        exact ("nearest", as polars' default: :func:`~calsim.simulation.views.nearest_quantiles`);
        sums add in another order than the local ledger does, so a
        non-integral cost or mean wait can differ in the last bits.
        """
        from .simulation import views

        return views.summary(self.scan(), self.name, streamed=True, parts=self.scans()).collect(engine="streaming")

    def gaps(self) -> pl.DataFrame:
        """:meth:`calsim.Ledger.gaps` on the scan (reads a few columns of every scheduled row to the client)."""
        from .simulation import views

        return views.gaps(self.scan()).collect()

    def coverage(self) -> pl.DataFrame:
        """:meth:`calsim.Ledger.coverage` on the scan (reads a few columns of every scheduled row to the client)."""
        from .simulation import views

        return views.coverage(self.scan()).collect()


def _local_order(frame: pl.DataFrame) -> pl.DataFrame:
    """``frame`` sorted as the local engine sorts a ledger (see :attr:`LedgerDataset.frame`)."""
    if not frame.height:
        return frame
    key = ["schedule_id", "revision", "nominal_local", "fold"]
    if (frame["kind"] == "manual").any():
        order = ["due_utc", "kind", "_place", *key]
        return frame.with_columns(_place=_placement(frame)).sort(order, nulls_last=True).drop("_place")
    return frame.with_columns(_place=_placement(frame)).sort(["_place", *key]).drop("_place")


def _placement(frame: pl.DataFrame) -> pl.Series:
    """Each row's instant; a row without one: its nominal time read with the offset before the gap."""
    from .resolution import resolve

    due = frame["due_utc"]
    if not due.null_count():
        return due
    idx = frame.with_row_index("_i").filter(pl.col("due_utc").is_null()).select("_i", "zone", "tzdata", "nominal_local")
    rows, values = [], []
    for (zone, tzdata), part in idx.group_by("zone", "tzdata", maintain_order=True):
        try:
            v = resolve(part["nominal_local"], zone, release=tzdata or None, gap="shift", fold="first")["due_utc"]
        except CalsimError:  # a release this process cannot load: place by the wall time read as UTC
            v = part["nominal_local"].dt.replace_time_zone("UTC")
        rows.append(part["_i"])
        values.append(v.cast(due.dtype))
    return due.clone().scatter(pl.concat(rows), pl.concat(values))
