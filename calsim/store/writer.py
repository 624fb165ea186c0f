"""Writing a store: a ledger (checked, then published in one step), an attached Parquet dataset, a tz diff.

Each function takes the store's :class:`~.connection.Connection` first; the
rules (idempotence, refusing or replacing another ledger under a name, all or
nothing) are :mod:`.ledger_store`'s "Decisions".

>>> import calsim
>>> from calsim.store.connection import Connection
>>> s = calsim.Schedule("h", "UTC", "2026-01-01T00:00", "FREQ=HOURLY")
>>> ledger = calsim.simulate(calsim.Scenario("x", [s], "2026-01-01T00:00Z", "2026-01-02T00:00Z"), progress=False)
>>> db = Connection(":memory:", read_only=False)
>>> write(db, ledger), write(db, ledger), stored(db, ledger)
(True, False, 'same')
>>> db.close()
"""

from __future__ import annotations

import concurrent.futures
import contextlib
import datetime as dt
import hashlib
import json
import os
import stat
from pathlib import Path
from typing import Any

import polars as pl

from ..atomic import show_path
from ..errors import DuplicateKeyError, InputError, LedgerSchemaError, ScenarioExistsError
from ..simulation.ledger import Ledger
from ..simulation.ledger_schema import LEDGER_SCHEMA
from ..tzchanges import TZDIFF_SCHEMA
from .connection import Connection
from .migrations import SCHEMA_VERSION
from .queries import ledger as stored_ledger
from .ledger_records import (
    SCENARIO_ROW,
    SCHEDULE_ROW,
    check_frame,
    check_name,
    comparable,
    digest,
    duplicate_error,
    repeats_a_key,
    same_rows,
    scenario_row,
    schedules_frame,
    shown_name,
)
from .schema import KEY
from .sql import identifier, literals
from .tables import (dataset_sql, drop_orphans, fill_scenario_table, forget_scenario, next_table,
                     refresh_occurrences_view)

__all__ = ["write", "stored", "attach", "write_tzdiff"]

_BATCH_ROWS = 122_880  # DuckDB's row group size


def write(db: Connection, ledger: Ledger | pl.DataFrame, *, name: str | None = None, scenario: object = None,
          replace: bool = False) -> bool:
    """Store ``ledger`` under its name, atomically (see :meth:`calsim.LedgerStore.write`)."""
    db.writable()
    frame = ledger.frame if isinstance(ledger, Ledger) else ledger
    if not isinstance(frame, pl.DataFrame):
        raise InputError(f"ledger: expected a calsim.Ledger or a polars DataFrame, got {type(ledger).__name__}")
    name = name if name is not None else getattr(ledger, "name", None)
    if scenario is None:  # a Ledger that carries its Scenario records it without being asked
        scenario = getattr(ledger, "scenario", None)
    check_name(name)
    check_frame(frame, LEDGER_SCHEMA, "ledger")
    nulls = {c: n for c, n in frame.select(pl.col(list(KEY)).null_count()).row(0, named=True).items() if n}
    if nulls:
        raise LedgerSchemaError(f"ledger: key columns may not be null, got nulls in {nulls}")
    other = frame.filter(pl.col("scenario") != name)
    if other.height:
        raise InputError(f"ledger: column 'scenario' holds {shown_name(other['scenario'][0])}, "
                         f"expected {shown_name(name)} in every row")
    assert isinstance(name, str)
    # Unbounded in time: the write reads the rows it was handed and the tables the store's check accepted.
    with db.writing(f"ledger {shown_name(name)}"), db.unbounded():
        return _write(db, frame, name, ledger, scenario, replace)


def stored(db: Connection, ledger: Ledger | pl.DataFrame) -> str:
    """``"absent"``, ``"same"`` or ``"different"``: what is stored under ``ledger``'s name (read-only)."""
    frame = ledger.frame if isinstance(ledger, Ledger) else ledger
    name = getattr(ledger, "name", None)
    rows = db.con.execute("SELECT digest, schema_version FROM scenarios WHERE name = ?", [name]).fetchall()
    if not rows or name is None:  # (no stored ledger is named NULL)
        return "absent"
    return "same" if _same(db, rows[0], digest(frame), name, frame) else "different"


def _same(db: Connection, old: tuple[str, int], new: str, name: str, frame: pl.DataFrame) -> bool:
    """Whether the ledger stored as ``name`` (``old``: its digest and the layout it was written under) holds
    ``frame``'s rows (digest ``new``)."""
    return old[0] == new or (not comparable(*old) and same_rows(stored_ledger(db, name), frame))


def _write(db: Connection, frame: pl.DataFrame, name: str, ledger: object, scenario: object, replace: bool) -> bool:
    rows = db.con.execute("SELECT digest, schema_version FROM scenarios WHERE name = ?", [name]).fetchall()
    old = rows[0] if rows else None
    content = None
    if old is not None:  # the digest decides: same ledger (nothing to do), refused, or replaced
        content = digest(frame)
        if _same(db, old, content, name, frame):
            return False
        if not replace:
            raise ScenarioExistsError(
                f"name: a different ledger is already stored as {shown_name(name)} in {db.shown}; "
                "pass replace=True to replace it, or write under another name")

    # The key check, the digest and the scenario row are needed only when
    # the ledger is published: they are computed on a thread while DuckDB
    # inserts the rows (both release the GIL), not before. Leaving the
    # block waits for the thread, so a failed write leaves none behind.
    def checked_meta() -> pl.DataFrame:
        if repeats_a_key(frame):  # the key is the write's to check (.tables says why)
            raise duplicate_error(frame, name)
        return scenario_row(name, frame, scenario, content or digest(frame))

    with concurrent.futures.ThreadPoolExecutor(1, thread_name_prefix="calsim-digest") as pool:
        return _insert(db, frame, name, ledger, scenario, old is not None, pool.submit(checked_meta))


def _insert(db: Connection, frame: pl.DataFrame, name: str, ledger: object, scenario: object, replacing: bool,
            meta: concurrent.futures.Future) -> bool:
    """Fill the scenario's table, then publish it with ``meta`` (its ``scenarios`` row, once its key is checked)."""
    data = frame.with_row_index("seq").with_columns(pl.col("seq").cast(pl.Int64))
    arrow = data.to_arrow(compat_level=pl.CompatLevel.newest())
    # DuckDB's Arrow scan hands out one record batch per task, so a frame
    # in one chunk (what simulate returns) would insert on one thread:
    # cut it into row-group-sized batches (zero-copy slices).
    arrow = type(arrow).from_batches(arrow.to_batches(max_chunksize=_BATCH_ROWS), schema=arrow.schema)

    def fill(con: Any) -> str:
        drop_orphans(con)
        return fill_scenario_table(con, name, "_calsim_occ_in")

    def publish(con: Any, table: str) -> None:
        if replacing:
            forget_scenario(con, name)
        con.execute("INSERT INTO scenarios SELECT * FROM _calsim_meta_in")
        con.execute("INSERT INTO occurrence_tables VALUES (?, ?)", [name, table])
        # One (schedule_id, revision) per schedule revision, with the zone of
        # its first row: grouping DuckDB's ENUM codes takes a fraction of
        # what grouping 10M strings in polars does (~1.7 s of CPU).
        base = pl.from_arrow(con.sql(
            f"SELECT CAST(schedule_id AS VARCHAR) AS schedule_id, revision, arg_min(zone, seq) AS zone "
            f"FROM {identifier(table)} GROUP BY ALL").to_arrow_table())
        assert isinstance(base, pl.DataFrame)
        sched = schedules_frame(name, base, ledger, scenario)
        con.register("_calsim_sched_in", sched.to_arrow())
        con.execute("INSERT INTO schedules SELECT * FROM _calsim_sched_in")
        refresh_occurrences_view(con)

    import duckdb

    db.con.register("_calsim_occ_in", arrow)
    # Rows carry their order in ``seq``, so the insert need not keep it:
    # DuckDB then appends in parallel.
    db.con.execute("SET preserve_insertion_order = false")
    # Two transactions: the rows go into a table no scenario points to yet,
    # then, the key checked, one transaction publishes it (scenario row,
    # schedules, the occurrences view). Killed in between, the store
    # shows no trace of the write: the unpublished table is an orphan that
    # the next write drops. Readers never see a partial scenario.
    table = None
    try:
        table = db.transaction(fill)
        db.con.register("_calsim_meta_in", meta.result().to_arrow())  # a repeated key raises here
        db.transaction(lambda con: publish(con, table))
    finally:
        # Best effort: after a fatal I/O error the connection is unusable
        # (the caller reopens it) and the original error must surface.
        with contextlib.suppress(duckdb.Error):
            if table is not None:  # a failed publish leaves the filled table unpublished: drop it
                db.transaction(drop_orphans)
        with contextlib.suppress(duckdb.Error):
            db.con.execute("RESET preserve_insertion_order")
        for v in ("_calsim_meta_in", "_calsim_sched_in", "_calsim_occ_in"):
            with contextlib.suppress(duckdb.Error):
                db.con.unregister(v)
    return True


def attach(db: Connection, dataset: object, name: str | None = None, *, replace: bool = False) -> bool:
    """Make a Parquet ledger dataset a scenario of the store (see :meth:`calsim.LedgerStore.attach`)."""
    from ..distributed import LedgerDataset

    db.writable()
    ds = dataset if isinstance(dataset, LedgerDataset) else LedgerDataset.open(dataset, name)
    name = ds.name if name is None else name
    check_name(name)
    if name != ds.name:
        raise InputError(f"name: the dataset holds scenario {ds.name!r}, not {name!r}")
    if any("://" in f for f in ds.files):
        raise InputError(f"dataset: {ds.files[0]!r} is not a local file "
                         "(attach datasets on a local or mounted filesystem)")
    files = [str(Path(f).resolve()) for f in ds.files]
    for f in files:
        # Before DuckDB opens any: a FIFO would block the scan for ever, a device never end.
        try:
            st = os.stat(f)
        except (OSError, ValueError) as exc:
            why = "it does not exist" if isinstance(exc, FileNotFoundError) else getattr(exc, "strerror", None)
            raise InputError(f"dataset: {show_path(f)} is not a local file ({why or type(exc).__name__}; attach "
                             "datasets on a local or mounted filesystem)") from None
        if not stat.S_ISREG(st.st_mode):
            raise InputError(f"dataset: {show_path(f)} is not a regular file (a dataset's parts are Parquet files)")
    meta = ds.metadata
    content = "dataset:" + hashlib.blake2b(json.dumps([files, meta], sort_keys=True, default=str).encode(),
                                           digest_size=16).hexdigest()
    rows = db.con.execute("SELECT digest FROM scenarios WHERE name = ?", [name]).fetchall()
    if rows and rows[0][0] == content:
        return False
    if rows and not replace:
        raise ScenarioExistsError(f"name: a different ledger is already stored as {shown_name(name)} in "
                                  f"{db.shown}; pass replace=True to replace it")
    if files:
        source = "read_parquet([" + literals(files) + "])"
        have = {d[0] for d in db.con.execute(f"SELECT * FROM {source} LIMIT 0").description}
        # (Parts written since datasets are hive-partitioned leave the scenario to their directory.)
        bad = db.con.execute(f"SELECT count(*) FROM {source} WHERE scenario IS DISTINCT FROM ?",
                             [name]).fetchall()[0] if "scenario" in have else (0,)
        if bad[0]:
            raise InputError(f"dataset: {bad[0]} rows of {ds.path!r} belong to another scenario than {name!r}")
        keys = ", ".join(identifier(c) for c in KEY[1:])
        found = db.con.execute(f"SELECT {keys}, count(*) AS n FROM {source} GROUP BY ALL HAVING n > 1 "
                               "LIMIT 1").fetchall()
        dup = found[0] if found else None
        if dup:
            raise DuplicateKeyError(f"dataset: rows of {name!r} share a key, e.g. "
                                    f"({', '.join(f'{k}={v!s}' for k, v in zip(KEY[1:], dup))}); nothing attached")
        # A dataset written before the worker-level columns existed reads them as null (as a stored
        # ledger migrated to version 5 does); any other column missing fails the attach.
        select = dataset_sql(files, have, name=name)
    else:
        select = dataset_sql([])

    def instant(text: object) -> object:
        return None if text is None else dt.datetime.fromisoformat(str(text).replace("Z", "+00:00"))

    from .._version import __version__

    scen = pl.DataFrame(
        {"name": [name], "created": [instant(meta.get("created")) or dt.datetime.now(dt.timezone.utc)],
         "horizon_start": [instant(meta.get("horizon_start"))], "horizon_end": [instant(meta.get("horizon_end"))],
         "release": [meta.get("release")],
         "parameters": [json.dumps(meta.get("parameters"), sort_keys=True)],
         "calsim_version": [meta.get("calsim_version", __version__)], "schema_version": [SCHEMA_VERSION],
         "rows": [ds.rows], "digest": [content]},
        schema=SCENARIO_ROW)
    sched = ds.schedule_records().select(pl.lit(name).alias("scenario"), pl.all()).cast(SCHEDULE_ROW)

    def body(con: Any) -> None:
        if rows:
            forget_scenario(con, name)
        con.execute("INSERT INTO scenarios SELECT * FROM _calsim_meta_in")
        con.execute("INSERT INTO schedules SELECT * FROM _calsim_sched_in")
        view = next_table(con)
        con.execute(f"CREATE VIEW {identifier(view)} AS {select}")
        con.execute("INSERT INTO occurrence_tables VALUES (?, ?)", [name, view])
        refresh_occurrences_view(con)

    with db.writing(f"dataset {shown_name(name)}"):
        db.con.register("_calsim_meta_in", scen.to_arrow())
        db.con.register("_calsim_sched_in", sched.to_arrow())
        try:
            db.transaction(body)
        finally:
            for v in ("_calsim_meta_in", "_calsim_sched_in"):
                with contextlib.suppress(Exception):
                    db.con.unregister(v)
    return True


def write_tzdiff(db: Connection, name: str, diff: pl.DataFrame, *, replace: bool = False) -> bool:
    """Store a :func:`calsim.tzdiff` frame under ``name`` (same rules as :func:`write`)."""
    db.writable()
    check_name(name)
    check_frame(diff, TZDIFF_SCHEMA, "diff")
    old = db.sql("SELECT * EXCLUDE (name) FROM tz_diffs WHERE name = $1 ORDER BY seq", [name])
    if old.height:
        if old.drop("seq").select(TZDIFF_SCHEMA.names()).equals(diff.select(TZDIFF_SCHEMA.names())):
            return False
        if not replace:
            raise ScenarioExistsError(f"name: a different tz diff is already stored as {shown_name(name)}; "
                                      "pass replace=True")
    data = diff.select(TZDIFF_SCHEMA.names()).with_row_index("seq").with_columns(
        pl.lit(name).alias("name"), pl.col("seq").cast(pl.Int64))
    cols = ", ".join(identifier(c) for c in ["name", "seq", *TZDIFF_SCHEMA.names()])
    with db.writing(f"tz diff {shown_name(name)}"):
        db.con.register("_calsim_tz_in", data.to_arrow(compat_level=pl.CompatLevel.newest()))
        try:
            db.transaction(lambda con: (
                con.execute("DELETE FROM tz_diffs WHERE name = ?", [name]),
                con.execute(f"INSERT INTO tz_diffs ({cols}) SELECT {cols} FROM _calsim_tz_in")))
        finally:
            with contextlib.suppress(Exception):
                db.con.unregister("_calsim_tz_in")
    return True
