"""Where a ledger dataset's files live, and how they are written, listed and read: local paths or fsspec URLs.

Layout under ``output`` (a local directory every worker can see, or an
fsspec URL)::

    <output>/scenario=<name>/part-00000.parquet     one file per partition, LEDGER_SCHEMA columns
    <output>/scenario=<name>/part-00001.parquet         but scenario (hive partitioning: the directory names it)
    <output>/scenario=<name>/_scenario.json         written last: its presence means complete
    <output>/_metadata, <output>/_common_metadata   Parquet summary files: every complete scenario's parts

``output`` is then a hive-partitioned Parquet dataset that DuckDB, polars,
pyarrow, pandas and Dask read as it is (:func:`write_summary`).

A file is never seen half written. Locally (a path or a ``file://`` URL) it
goes through :func:`calsim.atomic.write_atomically`: a temporary name in the
same directory, renamed over the final one, so a task killed and retried
never leaves a partial or duplicate file (only a hidden temporary, which the
client removes: :func:`is_leftover`). On an object store a file is one
whole-object PUT, which stores make visible atomically.

>>> scenario_directory("/data/ledgers", "nightly run")
'/data/ledgers/scenario=nightly%20run'
>>> part_name(3), is_part("part-00003.parquet"), is_leftover(".part-00003.parquet.0a1b2c3d4e5f.tmp")
('part-00003.parquet', True, True)
"""

from __future__ import annotations

import io
import os
import re
from pathlib import Path
from typing import IO, Callable
from urllib.parse import quote

import polars as pl

from ..atomic import write_atomically
from ..errors import InputError

__all__ = ["METADATA_FILE", "SUMMARY_FILES", "write_summary", "scenario_directory", "part_name", "is_part",
           "is_leftover", "is_url", "filesystem",
           "join", "write_file", "write_bytes", "listdir", "remove", "makedirs", "exists", "read_text",
           "scan_parquet", "polars_reads", "read_bytes", "remove_tree", "is_part_path", "part_paths", "NO_DATE"]

METADATA_FILE = "_scenario.json"
SUMMARY_FILES = ("_metadata", "_common_metadata")
_PART = re.compile(r"^part-(\d{5,})\.parquet$")
# A temporary file of a killed writer: calsim.atomic's name (12 hex digits), or the
# 32-digit name calsim wrote before its local writes went through calsim.atomic.
_TMP = re.compile(r"^\.(part-\d{5,}\.parquet|_scenario\.json)\.([0-9a-f]{12}|[0-9a-f]{32})\.tmp$")
# Protocols polars reads itself (object_store); others are read through fsspec, eagerly.
_POLARS_PROTOCOLS = {"s3", "s3a", "gs", "gcs", "gcp", "az", "azure", "abfs", "abfss", "adl", "http", "https", "hf"}


def scenario_directory(output: str, name: str) -> str:
    """``<output>/scenario=<name>``; the name is percent-encoded where it is not a safe file name."""
    return join(output, "scenario=" + quote(name, safe="-_.~@+,"))


def part_name(k: int) -> str:
    """The file name of partition ``k``."""
    return f"part-{k:05d}.parquet"


def is_part(name: str) -> bool:
    """Whether ``name`` is a partition file's name."""
    return _PART.match(name) is not None


#: A date level's directory (``by_date=True``): ``date=2026-03-08``, or Hive's name for a row without a date.
_DATE_DIR = re.compile(r"^date=(\d{4}-\d{2}-\d{2}|__HIVE_DEFAULT_PARTITION__)$")
NO_DATE = "__HIVE_DEFAULT_PARTITION__"


def is_part_path(path: str) -> bool:
    """Whether ``path`` (relative to a scenario's directory) is a part file: ``part-NNNNN.parquet``, or with
    the date level ``date=YYYY-MM-DD/part-NNNNN.parquet``."""
    head, _, name = path.rpartition("/")
    return is_part(name) and (not head or _DATE_DIR.match(head) is not None)


def part_paths(directory: str, storage_options: dict | None) -> list[str]:
    """The part files under a scenario's ``directory`` (relative paths), its date level's included, sorted."""
    out = []
    for name in listdir(directory, storage_options):
        if is_part(name):
            out.append(name)
        elif _DATE_DIR.match(name):
            out.extend(f"{name}/{n}" for n in listdir(join(directory, name), storage_options) if is_part(n))
    return sorted(out)


def is_leftover(name: str) -> bool:
    """Whether ``name`` is the temporary file of a writer that was killed before its rename."""
    return _TMP.match(name) is not None


def is_url(location: str) -> bool:
    return "://" in location


def filesystem(location: str, storage_options: dict | None):
    """``(filesystem, path)`` for a URL (None for a local path)."""
    if not is_url(location):
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


def _local(location: str) -> str | None:
    """The local path of a local location (a path, or a ``file://`` URL), else None."""
    if not is_url(location):
        return location
    if location.startswith("file://"):
        return location[len("file://"):] or "/"
    return None


def join(location: str, name: str) -> str:
    return location.rstrip("/") + "/" + name if is_url(location) else os.path.join(location, name)


def write_file(location: str, name: str, write: Callable[[str | IO[bytes]], object],
               storage_options: dict | None) -> int:
    """Write a file ``name`` under directory ``location`` so that no reader ever sees it half written.

    ``write(sink)`` writes the bytes to ``sink``: a temporary local path, or
    for a URL a binary buffer (polars' ``write_parquet`` takes either).
    Returns the size in bytes. A local failure (full disk, read-only
    directory) is an :class:`~calsim.errors.InputError` naming ``output``.
    """
    local = _local(location)
    if local is not None:
        final = os.path.join(local, name)
        write_atomically(final, write, "output")
        return os.path.getsize(final)
    fs, path = filesystem(location, storage_options)
    buf = io.BytesIO()
    write(buf)
    data = buf.getvalue()
    fs.pipe_file(path.rstrip("/") + "/" + name, data)
    return len(data)


def write_bytes(location: str, name: str, data: bytes, storage_options: dict | None) -> int:
    """:func:`write_file` of ``data``."""
    def write(sink) -> None:
        if isinstance(sink, str):  # calsim.atomic's temporary file
            Path(sink).write_bytes(data)
        else:
            sink.write(data)

    return write_file(location, name, write, storage_options)


def listdir(location: str, storage_options: dict | None) -> list[str]:
    """The names in directory ``location``, sorted (none when it does not exist)."""
    local = _local(location)
    if local is not None:
        return sorted(os.listdir(local)) if os.path.isdir(local) else []
    fs, path = filesystem(location, storage_options)
    try:
        return sorted(p.rstrip("/").rsplit("/", 1)[-1] for p in fs.ls(path, detail=False))
    except FileNotFoundError:
        return []


def remove(location: str, name: str, storage_options: dict | None) -> None:
    """Remove ``name`` from directory ``location`` if it is there."""
    local = _local(location)
    try:
        if local is not None:
            os.remove(os.path.join(local, name))
        else:
            fs, path = filesystem(location, storage_options)
            fs.rm(path.rstrip("/") + "/" + name)
    except FileNotFoundError:
        pass


def makedirs(location: str, storage_options: dict | None) -> None:
    local = _local(location)
    if local is not None:
        os.makedirs(local, exist_ok=True)
    else:
        fs, path = filesystem(location, storage_options)
        fs.makedirs(path, exist_ok=True)


def exists(location: str, storage_options: dict | None) -> bool:
    local = _local(location)
    if local is not None:
        return os.path.exists(local)
    fs, path = filesystem(location, storage_options)
    return fs.exists(path)


def read_text(location: str, storage_options: dict | None) -> str:
    """The file at ``location`` as UTF-8 text (``FileNotFoundError`` when it is missing)."""
    local = _local(location)
    if local is not None:
        with open(local, encoding="utf-8") as fh:
            return fh.read()
    fs, path = filesystem(location, storage_options)
    with fs.open(path, "rb") as fh:
        return fh.read().decode("utf-8")


def polars_reads(location: str) -> bool:
    """Whether polars scans ``location`` itself (lazily): a local path, ``file://`` or an object store it knows."""
    return not is_url(location) or location.split("://", 1)[0] in ("file", *_POLARS_PROTOCOLS)


def scan_parquet(files: tuple[str, ...] | list[str], storage_options: dict | None) -> pl.LazyFrame:
    """One lazy frame over the Parquet ``files`` (all on one filesystem), in order.

    A filesystem only fsspec knows is read through it, eagerly, file by file.
    """
    if polars_reads(files[0]):
        remote = is_url(files[0]) and not files[0].startswith("file://")
        return pl.scan_parquet([(_local(f) or f) for f in files], hive_partitioning=False,
                               storage_options=storage_options if remote else None)
    fs, _ = filesystem(files[0], storage_options)
    parts = []
    for f in files:
        with fs.open(filesystem(f, storage_options)[1], "rb") as fh:
            parts.append(pl.read_parquet(fh).lazy())
    return pl.concat(parts, how="vertical")


def write_summary(output: str, storage_options: dict | None) -> int | None:
    """Write ``output``'s Parquet summary files: ``_common_metadata`` (the schema) and ``_metadata`` (the footer
    of every part of every complete scenario, its path relative to ``output``), as Spark and Dask write them,
    so that a reader plans the dataset from one file (``dask.dataframe.read_parquet``,
    ``pyarrow.dataset.parquet_dataset``). Returns the parts listed.

    Rebuilt after each run from the footers (a few KiB each: the client reads O(partitions), never rows).
    When the scenarios' parts differ in schema (one written by an older calsim), none is written and any
    older one is removed: a summary must describe every file. Two runs into one ``output`` at once may leave
    the summary of the first to finish; the next run rewrites it.
    """
    import pyarrow.parquet as pq

    collector, schema = [], None
    for d in listdir(output, storage_options):
        if not d.startswith("scenario="):
            continue
        directory = join(output, d)
        names = listdir(directory, storage_options)
        if METADATA_FILE not in names:  # (a run in progress or failed: not part of the dataset yet)
            continue
        for n in part_paths(directory, storage_options):
            meta = _footer(join(directory, n), storage_options, pq)
            part_schema = meta.schema.to_arrow_schema()
            if schema is None:
                schema = part_schema
            elif not part_schema.equals(schema):
                for name in SUMMARY_FILES:
                    remove(output, name, storage_options)
                return None
            meta.set_file_path(f"{d}/{n}")
            collector.append(meta)
    if schema is None:
        for name in SUMMARY_FILES:
            remove(output, name, storage_options)
        return 0
    write_file(output, "_common_metadata", lambda sink: pq.write_metadata(schema, sink), storage_options)
    write_file(output, "_metadata", lambda sink: pq.write_metadata(schema, sink, metadata_collector=collector),
               storage_options)
    return len(collector)


def _footer(location: str, storage_options: dict | None, pq):
    local = _local(location)
    if local is not None:
        return pq.read_metadata(local)
    fs, path = filesystem(location, storage_options)
    with fs.open(path, "rb") as fh:
        return pq.read_metadata(fh)


def read_bytes(location: str, storage_options: dict | None) -> bytes:
    """The file at ``location`` (``FileNotFoundError`` when it is missing)."""
    local = _local(location)
    if local is not None:
        with open(local, "rb") as fh:
            return fh.read()
    fs, path = filesystem(location, storage_options)
    with fs.open(path, "rb") as fh:
        return fh.read()


def remove_tree(location: str, storage_options: dict | None) -> None:
    """Remove directory ``location`` and what it holds, if it is there."""
    import shutil

    local = _local(location)
    if local is not None:
        shutil.rmtree(local, ignore_errors=True)
        return
    fs, path = filesystem(location, storage_options)
    try:
        fs.rm(path, recursive=True)
    except FileNotFoundError:
        pass
