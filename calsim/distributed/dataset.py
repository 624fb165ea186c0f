"""A ledger as Parquet files (one per partition), read lazily: :class:`LedgerDataset`.

Its views (:meth:`~LedgerDataset.summary`, :meth:`~LedgerDataset.gaps`,
:meth:`~LedgerDataset.coverage`) are the ledger's own definitions
(:mod:`calsim.simulation.views`) run on the scan; :attr:`~LedgerDataset.frame`
gives every row in the order the local engine gives them (:func:`calsim.simulation.ledger.ledger_order`).

>>> import polars as pl
>>> from calsim.simulation.ledger import LEDGER_SCHEMA
>>> empty = LedgerDataset("s", "/nowhere/scenario=s", (), 0, 0)
>>> len(empty), empty.scan().collect_schema() == LEDGER_SCHEMA
(0, True)
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any, cast

import polars as pl

from ..atomic import show_path
from ..errors import InputError, StoreError
from ..importers._yaml import load_json
from ..input_files import read_file
from ..simulation.ledger import LEDGER_SCHEMA, ledger_order
from ..simulation.ledger_schema import with_worker_columns
import calsim.distributed.dataset_files as fs
from .metadata import FORMAT

__all__ = ["LedgerDataset", "check_metadata", "gathered"]


def gathered(client: Any, futures: list) -> list:
    """The results of ``futures`` (Dask), each released as soon as they are in: the client keeps no task's
    result (every round of tasks a run or a view submits ends so)."""
    try:
        return client.gather(futures)
    finally:
        for f in futures:
            f.release()


def _read_metadata(directory: str, meta_path: str, storage_options: dict | None) -> str:
    """The text of a dataset's ``_scenario.json``: a StoreError when it is missing, a CalsimError when unreadable."""
    missing = StoreError(f"path: no {fs.METADATA_FILE} in {show_path(directory)} (not a calsim ledger dataset, "
                         "or its run did not complete)")
    local = fs._local(meta_path)
    if local is None:
        try:
            return fs.read_text(meta_path, storage_options)
        except FileNotFoundError:
            raise missing from None
    try:
        os.stat(local)
    except (FileNotFoundError, NotADirectoryError):
        raise missing from None
    except OSError as exc:  # a name longer than the OS allows, a loop of links, no permission
        raise InputError(f"path: cannot read {show_path(meta_path)} ({exc.strerror or type(exc).__name__})") from None
    text = read_file(local, "path")
    assert isinstance(text, str)
    return text


def _is_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and 0 <= value < 2**63


def check_metadata(meta: object, where: str) -> None:
    """Refuse a ``_scenario.json`` (read from ``where``) that is not shaped as :func:`.metadata.metadata` writes it.

    Checked: what :class:`LedgerDataset` and :meth:`calsim.LedgerStore.attach`
    read from it: ``name``, ``files`` (each a partition file name in the
    dataset's directory, never a path elsewhere), ``rows``, ``partitions``,
    the instants, ``release``, ``calsim_version`` and the ``schedules``
    rows. A :class:`~calsim.errors.StoreError` naming the field and what is allowed.

    >>> check_metadata({"name": "s", "files": [{"path": "../x.parquet"}], "rows": 0, "partitions": 1}, "m.json")
    Traceback (most recent call last):
    ...
    calsim.errors.StoreError: path: m.json: files[0].path is '../x.parquet', expected a partition file name (part-NNNNN.parquet, or date=YYYY-MM-DD/part-NNNNN.parquet)
    """  # noqa: E501  (a doctest output line)
    def bad(field: str, got: object, allowed: str) -> StoreError:
        if isinstance(got, str):
            shown = repr(got[:60]) + ("..." if len(got) > 60 else "")
        elif isinstance(got, (int, float, bool)) or got is None:
            shown = repr(got) if len(repr(got)) <= 40 else f"a number of {len(repr(got))} digits"
        else:
            shown = type(got).__name__
        return StoreError(f"path: {where}: {field} is {shown}, expected {allowed}")

    if not isinstance(meta, dict):
        raise bad("the document", meta, "an object")
    if not isinstance(meta.get("name"), str) or not meta["name"]:
        raise bad("name", meta.get("name"), "a scenario name")
    for key in ("rows", "partitions"):
        if not _is_int(meta.get(key)):
            raise bad(key, meta.get(key), "a whole number")
    files = meta.get("files")
    if not isinstance(files, list):
        raise bad("files", files, "a list")
    for i, f in enumerate(files):
        if not isinstance(f, dict):
            raise bad(f"files[{i}]", f, "an object")
        if not isinstance(f.get("path"), str) or not fs.is_part_path(f["path"]):
            raise bad(f"files[{i}].path", f.get("path"), "a partition file name (part-NNNNN.parquet, or "
                                                         "date=YYYY-MM-DD/part-NNNNN.parquet)")
    for key in ("created", "horizon_start", "horizon_end"):
        value = meta.get(key)
        if value is not None and not (isinstance(value, str) and _instant(value)):
            raise bad(key, value, "an ISO 8601 instant")
    for key in ("release", "calsim_version"):
        if meta.get(key) is not None and not isinstance(meta[key], str):
            raise bad(key, meta[key], "text")
    records = meta.get("schedule_files", [])
    if not isinstance(records, list):
        raise bad("schedule_files", records, "a list")
    for i, name in enumerate(records):
        if not (isinstance(name, str) and name.startswith("_schedules/") and fs.is_part(name[len("_schedules/"):])):
            raise bad(f"schedule_files[{i}]", name, "a file of the dataset (_schedules/part-NNNNN.parquet)")
    schedules = meta.get("schedules", [])
    if not isinstance(schedules, list):
        raise bad("schedules", schedules, "a list")
    for i, row in enumerate(schedules):
        if not isinstance(row, dict):
            raise bad(f"schedules[{i}]", row, "an object")
        if not isinstance(row.get("schedule_id"), str):
            raise bad(f"schedules[{i}].schedule_id", row.get("schedule_id"), "text")
        if not _is_int(row.get("revision")):
            raise bad(f"schedules[{i}].revision", row.get("revision"), "a whole number")
        for key in ("zone", "account", "rule", "policy"):
            if row.get(key) is not None and not isinstance(row[key], str):
                raise bad(f"schedules[{i}].{key}", row[key], "text or null")


def _instant(text: str) -> bool:
    import datetime as dt

    try:
        dt.datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return False
    return True


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
        files = tuple(fs.join(directory, f["path"]) for f in meta["files"])
        return cls(meta["name"], directory, files, int(meta["rows"]), int(meta["partitions"]), meta,
                   storage_options)

    @classmethod
    def open(cls, path: object, name: str | None = None, storage_options: dict | None = None) -> "LedgerDataset":
        """The dataset in directory ``path`` (``.../scenario=<name>``), or under ``path`` for scenario ``name``.

        Raises :class:`~calsim.errors.StoreError` when its ``_scenario.json``
        is missing (never written, or a run is in progress or failed), and a
        :class:`~calsim.errors.CalsimError` naming the file when it cannot be
        read or is not one the Dask engine writes (:func:`check_metadata`):
        a local one is read as every user file is (:func:`calsim.input_files.read_file`:
        a regular file, of bounded size), and parsed with the importers' JSON
        loader (its depth cap), so that no name or structure escapes as an ``OSError``
        or a ``RecursionError``.
        """
        path = os.fspath(path) if isinstance(path, os.PathLike) else path
        if not isinstance(path, str) or not path:
            raise InputError(f"path: expected a directory path or URL, got {path!r}")
        if "\x00" in path:
            raise InputError(f"path: {show_path(path)} holds a NUL character, which no file name can")
        directory = fs.scenario_directory(path, name) if name is not None else path
        meta_path = fs.join(directory, fs.METADATA_FILE)
        meta = load_json(_read_metadata(directory, meta_path, storage_options), f"path: {show_path(meta_path)}")
        check_metadata(meta, show_path(meta_path))
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
        lazy = not self.files or fs.polars_reads(self.files[0])
        return [self._scan((f,)) for f in self.files] if lazy else [self.scan()]

    def _scan(self, files: tuple[str, ...]) -> pl.LazyFrame:
        if not files:
            return pl.LazyFrame(schema=LEDGER_SCHEMA)
        lf = fs.scan_parquet(files, self.storage_options)
        names = lf.collect_schema().names()
        if "scenario" not in names:  # (the directory names it; datasets of calsim 0.x held it in every file)
            lf = lf.with_columns(pl.lit(self.name, pl.String).alias("scenario"))
        # A dataset written before the worker-level columns existed reads them as null.
        lf = with_worker_columns(lf, names)
        return lf.select(LEDGER_SCHEMA.names()).cast(LEDGER_SCHEMA)

    @property
    def frame(self) -> pl.DataFrame:
        """Every row, in the local ledger's order (reads all files: for data that fits in memory).

        The local ledger is sorted by instant, then key, where a row without an
        instant (gap-skipped, merged, excluded) is placed by its nominal time
        read with the offset before the gap (``gap="shift"``); when manual runs
        exist, rows without an instant come last (as the local engine sorts
        them then).
        """
        return ledger_order(self.scan().collect())

    def to_ledger(self):
        """A :class:`~calsim.Ledger` on :attr:`frame` (in memory: for small data)."""
        from ..simulation.ledger import Ledger

        records = self.schedule_records()
        accounts = dict(records.filter(pl.col("account").is_not_null()).select("schedule_id", "account").iter_rows())
        return Ledger(self.name, self.frame, accounts)

    def schedule_records(self) -> pl.DataFrame:
        """One row per schedule revision (``schedule_id``, ``revision``, ``zone``, ``account``, ``rule``,
        ``policy``): from ``_scenario.json``, or for a fleet the workers read (``schedules=``) from the files
        they wrote beside the parts (``_schedules/``)."""
        from .worker import SCHEDULE_RECORD

        files = self.metadata.get("schedule_files", [])
        if files:
            return fs.scan_parquet([fs.join(self.path, f) for f in files], self.storage_options) \
                .select(list(SCHEDULE_RECORD)).collect()
        return pl.DataFrame(self.metadata.get("schedules", []), schema=SCHEDULE_RECORD, orient="row")

    def counts(self) -> pl.DataFrame:
        """Rows per (kind, state, reason), computed lazily (as :meth:`calsim.Ledger.counts`)."""
        return (self.scan().group_by("kind", "state", "reason").len("rows").sort("kind", "state", "reason")
                .collect())

    def summary(self, *, client: object = None) -> pl.DataFrame:
        """One row, the columns of :meth:`calsim.Ledger.summary`, computed lazily over the files.

        The same definition (:func:`calsim.simulation.views.summary`) on the
        scan, streamed: the client never holds a column of the dataset (its
        memory stays flat whatever the fleet size). Lateness quantiles are
        exact ("nearest", as polars' default: :func:`~calsim.simulation.views.nearest_quantiles`);
        sums add in another order than the local ledger does, so a
        non-integral cost or mean wait can differ in the last bits.
        With a Dask client (``client``, or the running one when None) each
        part is aggregated on the workers and the client adds a few numbers
        per part (:mod:`.part_summary`); ``client=False``: here, streamed.
        """
        from ..simulation import views

        dask = self._client(client)
        if dask is not None and self.files:
            from .part_summary import summary_on_workers

            return summary_on_workers(self.name, lambda fn, *args: self._on_parts(dask, fn, *args),
                                      self.storage_options)
        return views.summary(self.scan(), self.name, streamed=True, parts=self.scans()).collect(engine="streaming")

    def gaps(self, *, client: object = None) -> pl.DataFrame:
        """:meth:`calsim.Ledger.gaps`, computed part by part and put back in its order.

        A schedule's rows are all in one part (partitions never split a
        schedule), so each part's gaps are the ledger's for its schedules:
        they are computed on the Dask workers (``client``, or the running
        client when None), else here one part at a time (``client=False``, or
        no client running): this process holds one part's columns at a time,
        never the whole ledger's.
        """
        from ..simulation import views

        return views.gaps_order(self._per_part("gaps", client))

    def coverage(self, *, client: object = None) -> pl.DataFrame:
        """:meth:`calsim.Ledger.coverage`, computed part by part as :meth:`gaps` is."""
        from ..simulation import views

        return views.coverage_order(self._per_part("coverage", client))

    def _per_part(self, view: str, client: object) -> pl.DataFrame:
        from ..simulation import views
        from .worker import part_view

        if not self.files:
            return getattr(views, view)(self.scan()).collect()
        dask = self._client(client)
        if dask is None:
            frames = [part_view(f, view, self.storage_options) for f in self.files]
        else:
            frames = self._on_parts(dask, part_view, view, self.storage_options)
        return pl.concat(frames)

    def _on_parts(self, dask: Any, fn: Any, *args: object) -> list:
        """``fn(file, *args)`` of every part file, as tasks on ``dask``'s workers, in file order."""
        return gathered(dask, [dask.submit(fn, f, *args, pure=False) for f in self.files])

    @staticmethod
    def _client(client: object) -> Any:
        """The Dask client views run on: ``client``, or the running one when None (None: none, or ``False``)."""
        if client is None:
            try:
                from distributed import get_client

                return get_client()
            except (ImportError, ValueError):  # (no Dask, or no client running: here)
                return None
        return None if client is False else cast(Any, client)  # (a distributed.Client, not typed here)
