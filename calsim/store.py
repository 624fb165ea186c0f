"""``LedgerStore``: many simulated ledgers side by side in one DuckDB file (DESIGN.md §6).

Tables
------
``calsim_meta``   ``key``/``value``; ``schema_version`` is the store's layout version.
``scenarios``     one row per written ledger: ``name``, ``created``, ``horizon_start``,
                  ``horizon_end`` (from the scenario when given, else the ledger's
                  first and last ``due_utc``), ``release`` (the ``tzdata`` values),
                  ``parameters`` (JSON), ``calsim_version``, ``schema_version``,
                  ``rows``, ``digest`` (content hash used for idempotence).
``schedules``     one row per (scenario, schedule_id, revision): ``zone``, ``account``,
                  and when ``scenario=`` was passed, ``rule`` text and ``policy`` JSON.
``occurrences``   a view: the ledger frame plus ``seq`` (row order), the
                  ``UNION ALL`` of one table per scenario (see :mod:`calsim.store_schema`).
``occurrence_tables``  ``scenario`` -> ``table_name`` of that scenario's table (or,
                  for a Parquet dataset attached with :meth:`LedgerStore.attach`,
                  of the view that reads its files).
``tz_diffs``      :func:`calsim.tzdiff` frames by name (:meth:`LedgerStore.write_tzdiff`).

Views: ``state_counts``, ``observation_gaps`` (as :meth:`Ledger.gaps`),
``daily_cost`` (as :meth:`Ledger.daily_cost`), ``lateness`` (per scenario).

Layout: one keyed table per scenario; the reasons, measured, are in :mod:`calsim.store_schema`.

Decisions
---------
* Writing a ledger whose content equals the stored one is a no-op; content
  is the rows, in any order (the stored order stays the first write's). Writing a
  *different* ledger under an existing name is refused
  (:class:`ScenarioExistsError`) unless ``replace=True``, which deletes and
  re-inserts in the same transaction. Refusing is the default because a
  ledger is evidence: silently overwriting it would lose a comparison.
* Every write is one DuckDB transaction: a failure (or a killed process)
  leaves the previous state; an interrupted scenario is absent, never partial.
* Concurrency is DuckDB's: one process may open a file for writing; a second
  one gets :class:`LedgerLockedError`. Several processes may open the same
  file with ``read_only=True`` when no process has it open for writing.
  Inside one process, share one store (DuckDB serialises its writers).
* :meth:`LedgerStore.reconcile` compares a production run history with a
  stored ledger and changes nothing.
* Only a local file (or ``":memory:"``) is opened, and nothing reaches the
  network: a path DuckDB would read as an extension or a remote location
  (``md:``, ``s3://``, ``https://``, any ``scheme:`` prefix) is refused,
  and the connection never installs or loads an extension by itself
  (``autoinstall_known_extensions``/``autoload_known_extensions`` off), so a
  SQLite file, a remote URL or a view in a foreign file cannot fetch one.
  ``enable_external_access`` stays on: attached datasets are views over
  local Parquet files and :meth:`LedgerStore.export_parquet` writes files.
* What is opened must be a DuckDB file (its header says ``DUCK``) or a new
  name in a writable directory; anything else is a one-line
  :class:`StoreError` before DuckDB sees it: a directory, a device, a FIFO
  (DuckDB would block reading it), a symlink to anything but a regular file
  (one to a file opens that file, so the write-ahead log sits beside it), a
  Parquet, SQLite or text file, and an empty file (DuckDB refuses one too;
  an existing file is never taken over as a new store). Opening for writing
  also needs a writable directory (DuckDB writes ``<file>.wal`` beside the
  file) and a ``<file>.wal``, when there is one, that is a regular file.
* An I/O failure while writing (a full disk, a file size limit) is a
  :class:`StoreError` naming the file and the cause; the write is rolled
  back. When DuckDB invalidates the database after such a failure, the
  store reopens it (DuckDB replays its log up to the last commit) and drops
  the unpublished table of the failed write, so the store reads as before.
* Instants are ``TIMESTAMPTZ`` read back in UTC (the connection's ``TimeZone``
  is set to UTC), nominal times ``TIMESTAMP``; ``kind``/``state``/``reason``
  are DuckDB ENUMs restored as polars Enums.

>>> import calsim
>>> s = calsim.Schedule("h", "UTC", "2026-01-01T00:00", "FREQ=HOURLY")
>>> ledger = calsim.simulate(calsim.Scenario("x", [s], "2026-01-01T00:00Z", "2026-01-02T00:00Z"), progress=False)
>>> with LedgerStore() as store:
...     _ = store.write(ledger)
...     store.ledger("x").equals(ledger.frame), store.compare(["x"])["done"][0]
(True, 24)
"""

from __future__ import annotations

import concurrent.futures
import contextlib
import datetime as dt
import hashlib
import json
import os
from pathlib import Path
from typing import Any, Callable

import polars as pl

from .errors import (
    DuplicateKeyError,
    InputError,
    LedgerLockedError,
    LedgerSchemaError,
    ScenarioExistsError,
    SchemaVersionError,
    StoreError,
    UnknownScenarioError,
)
from .atomic import check_writable, os_error_cause, show_path, write_atomically
from .store_records import (  # what is recorded beside the occurrences: rows, digest, checks
    SCHEMA_VERSION,
    _SCENARIO_ROW,
    _SCHEDULE_ROW,
    _check_frame,
    _check_name,
    _digest,
    _digest_prefix,
    _duplicate_error,
    _repeats_a_key,
    _same_rows,
    _shown_name,
    check_scenario_name,
    scenario_row,
    schedule_rows,
)
from .store_files import (  # where a store may live (local DuckDB files only)
    CONFIG,
    _cause,
    _check_store_file,
    _lock_error,
    _store_path,
    check_store_path,
)
from .simulation.ledger import LEDGER_REASONS, LEDGER_SCHEMA, LEDGER_STATES, Ledger
from .simulation.views import seconds_to_duration
from .reconcile import RECONCILE_CLASSES
from .tzchanges import TZDIFF_SCHEMA
from .store_schema import (  # the schema, tables and migrations
    _BATCH_ROWS,
    _checked_table,
    _DDL_V1,
    _drop_orphans,
    _fill_scenario_table,
    _forget_scenario,
    _GAPS_SQL,
    KEY,
    _literal,
    MIGRATIONS,
    _next_table,
    _q,
    _refresh_occurrences_view,
    _sql_type,
)

# The store's errors live in calsim.errors (one hierarchy) and are re-exported here.
__all__ = ["LedgerStore", "SCHEMA_VERSION", "RECONCILE_CLASSES", "check_store_path", "check_scenario_name"]

class LedgerStore:
    """Ledgers of many scenarios in one DuckDB file (or ``":memory:"``).

    Parameters
    ----------
    path
        A local DuckDB file (created with its tables when new) or
        ``":memory:"``; never a URL or an extension prefix (see "Decisions").
    read_only
        Open for reading only; several processes may do so at once when no
        process holds the file open for writing (DuckDB's rule).

    Raises
    ------
    LedgerLockedError
        Another process has the file open (for writing, or read-only when
        this one wants to write: the message says which, and its PID).
    SchemaVersionError
        The file's store layout is newer than this calsim knows.
    StoreError
        The path is not a local file, the file is not a DuckDB database (or
        is corrupt) or not a calsim store, or it cannot be written.
    """

    def __init__(self, path: str | os.PathLike[str] = ":memory:", *, read_only: bool = False) -> None:
        import duckdb

        self._con = None  # type: ignore[assignment]
        self.path = _store_path(path)
        self.read_only = bool(read_only)
        self._shown = show_path(self.path)
        memory = self.path == ":memory:"
        self._file = self.path if memory else _check_store_file(self.path, self.read_only)
        created = not memory and not os.path.exists(self._file)
        try:
            self._con = self._connect()
        except LedgerLockedError:
            raise
        except StoreError:
            if created:
                self._remove_created()
            raise
        try:
            self._con.execute("SET TimeZone = 'UTC'")
            self._open_schema()
        except BaseException as exc:
            self.close()  # release the file before reporting
            if created:
                self._remove_created()  # a store that could not be made leaves no file behind
            if isinstance(exc, duckdb.Error):
                raise StoreError(f"path: cannot open {self._shown} as a calsim store: {_cause(exc)}") from None
            raise

    def _connect(self) -> Any:
        import duckdb

        try:
            return duckdb.connect(self._file, read_only=self.read_only, config=dict(CONFIG))
        except duckdb.Error as exc:
            if "Could not set lock on file" in str(exc):
                raise _lock_error(self._shown, exc) from None
            raise StoreError(f"path: cannot open {self._shown} as a DuckDB database: {_cause(exc)}") from None

    def _remove_created(self) -> None:
        """Remove the file (and log) this store created before failing to make it a store."""
        for f in (self._file, self._file + ".wal"):
            try:
                if os.path.isfile(f) and not os.path.islink(f):
                    os.unlink(f)
            except OSError:
                pass

    def _recover(self) -> None:
        """Reopen the file after DuckDB invalidated the database (a fatal I/O error such as a full disk).

        DuckDB replays its log up to the last commit; the unpublished table of
        the failed write is dropped (best effort: if the disk is still full, the
        next write drops it). If the file cannot be reopened, the store stays closed.
        """
        try:
            self._con.close()
        except Exception:  # noqa: BLE001 - closing an invalidated database
            pass
        try:
            con = self._connect()
        except StoreError:
            return
        self._con = con
        try:
            con.execute("SET TimeZone = 'UTC'")
            self._transaction(_drop_orphans)
        except Exception:  # noqa: BLE001 - best effort, see above
            pass

    @contextlib.contextmanager
    def _writing(self, what: str) -> Any:
        """Turn DuckDB's failures while writing ``what`` into a :class:`StoreError` naming the file and the cause."""
        import duckdb

        try:
            yield
        except duckdb.Error as exc:
            if isinstance(exc, duckdb.FatalException) or "invalidated" in str(exc):
                self._recover()
            raise StoreError(f"path: cannot write {what} to {self._shown}: {_cause(exc)}; "
                             "the store keeps what it held before") from None

    # -- lifecycle ---------------------------------------------------------
    def close(self) -> None:
        """Close the connection (idempotent)."""
        if getattr(self, "_con", None) is not None:
            self._con.close()
            self._con = None  # type: ignore[assignment]

    def __enter__(self) -> "LedgerStore":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"LedgerStore({self.path!r}{', read_only=True' if self.read_only else ''})"

    def _open_schema(self) -> None:
        con = self._con
        tables = {r[0] for r in con.execute("SELECT table_name FROM duckdb_tables()").fetchall()}
        if "calsim_meta" not in tables:
            if tables:
                raise StoreError(f"path: {self._shown} is a DuckDB file but not a calsim ledger store "
                                 f"(it has tables {sorted(tables)} and no calsim_meta)")
            if self.read_only:
                raise StoreError(f"path: {self._shown} is empty; open it once without read_only to create the store")
            self._transaction(self._create)
            return
        row = con.execute("SELECT value FROM calsim_meta WHERE key = 'schema_version'").fetchall()
        version = int(row[0][0]) if row else 0
        if version > SCHEMA_VERSION:
            raise SchemaVersionError(
                f"path: {self._shown} has store schema version {version}, newer than {SCHEMA_VERSION} "
                "(the newest this calsim knows); upgrade calsim to read it")
        while version < SCHEMA_VERSION:
            if self.read_only:
                raise SchemaVersionError(f"path: {self._shown} has store schema version {version}; open it "
                                         f"without read_only once to migrate it to {SCHEMA_VERSION}")
            step = MIGRATIONS.get(version)
            if step is None:
                raise SchemaVersionError(f"path: no migration from store schema version {version}")

            def run(con: Any, step: Callable[[Any], None] = step, to: int = version + 1) -> None:
                step(con)
                con.execute("UPDATE calsim_meta SET value = ? WHERE key = 'schema_version'", [str(to)])

            self._transaction(run)
            version += 1

    def _create(self, con: Any) -> None:
        for stmt in _DDL_V1:
            con.execute(stmt)
        for version in range(1, SCHEMA_VERSION):  # the same steps as an old file's migration
            MIGRATIONS[version](con)
        con.execute("INSERT INTO calsim_meta VALUES ('schema_version', ?)", [str(SCHEMA_VERSION)])

    def _transaction(self, body: Callable[[Any], Any]) -> Any:
        con = self._con
        con.execute("BEGIN TRANSACTION")
        try:
            out = body(con)
        except BaseException:
            con.execute("ROLLBACK")
            raise
        try:
            con.execute("COMMIT")
        except BaseException:
            # A failed COMMIT (an I/O error writing the log, a constraint
            # checked at commit) has already aborted the transaction; make sure.
            try:
                con.execute("ROLLBACK")
            except Exception:  # noqa: BLE001 - "no transaction is active"
                pass
            raise
        return out

    def _writable(self) -> None:
        if self.read_only:
            raise StoreError(f"path: {self._shown} was opened with read_only=True; open it without to write")

    # -- writing -----------------------------------------------------------
    def write(self, ledger: Ledger | pl.DataFrame, *, name: str | None = None, scenario: object = None,
              replace: bool = False) -> bool:
        """Store ``ledger`` under its name, atomically.

        Parameters
        ----------
        ledger
            A :class:`~calsim.Ledger` (or a ledger frame with ``name=``).
        name
            Overrides the ledger's name; the frame's ``scenario`` column must match it.
        scenario
            Optional :class:`~calsim.Scenario` recorded as JSON parameters
            (the schedules as a count), with each schedule's rule and policy
            in ``schedules``; by default the ledger's ``scenario`` attribute
            if it has one. Without it, the horizon is the ledger's first and
            last ``due_utc`` and rules and policies are null.
        replace
            Replace a different ledger already stored under this name.

        Returns
        -------
        bool
            True when rows were written, False when the same ledger was already stored.

        Raises
        ------
        InputError, LedgerSchemaError, DuplicateKeyError, ScenarioExistsError
            Nothing is written.
        """
        self._writable()
        frame = ledger.frame if isinstance(ledger, Ledger) else ledger
        if not isinstance(frame, pl.DataFrame):
            raise InputError(f"ledger: expected a calsim.Ledger or a polars DataFrame, got {type(ledger).__name__}")
        name = name if name is not None else getattr(ledger, "name", None)
        if scenario is None:  # a Ledger that carries its Scenario records it without being asked
            scenario = getattr(ledger, "scenario", None)
        _check_name(name)
        _check_frame(frame, LEDGER_SCHEMA, "ledger")
        nulls = {c: n for c, n in frame.select(pl.col(list(KEY)).null_count()).row(0, named=True).items() if n}
        if nulls:
            raise LedgerSchemaError(f"ledger: key columns may not be null, got nulls in {nulls}")
        other = frame.filter(pl.col("scenario") != name)
        if other.height:
            raise InputError(f"ledger: column 'scenario' holds {_shown_name(other['scenario'][0])}, "
                             f"expected {_shown_name(name)} in every row")
        with self._writing(f"ledger {_shown_name(name)}"):
            return self._write(frame, name, ledger, scenario, replace)

    def stored(self, ledger: Ledger) -> str:
        """``"absent"``, ``"same"`` or ``"different"``: what is stored under ``ledger``'s name (read-only).

        What :meth:`write` would do without ``replace``: write, nothing, or
        refuse. A command that writes several ledgers asks first for each, so
        it refuses before it has written any of them.
        """
        frame = ledger.frame if isinstance(ledger, Ledger) else ledger
        name = getattr(ledger, "name", None)
        rows = self._con.execute("SELECT digest FROM scenarios WHERE name = ?", [name]).fetchall()
        if not rows:
            return "absent"
        return "same" if self._same(rows[0][0], _digest(frame), name, frame) else "different"

    def _same(self, old: str, digest: str, name: str, frame: pl.DataFrame) -> bool:
        return old == digest or (not old.startswith(_digest_prefix()) and _same_rows(self.ledger(name), frame))

    def _write(self, frame: pl.DataFrame, name: str, ledger: object, scenario: object, replace: bool) -> bool:
        rows = self._con.execute("SELECT digest FROM scenarios WHERE name = ?", [name]).fetchall()
        old = rows[0] if rows else None
        digest = None
        if old is not None:  # the digest decides: same ledger (nothing to do), refused, or replaced
            digest = _digest(frame)
            if self._same(old[0], digest, name, frame):
                return False
            if not replace:
                raise ScenarioExistsError(
                    f"name: a different ledger is already stored as {_shown_name(name)} in {self._shown}; "
                    "pass replace=True to replace it, or write under another name")
        # The key check, the digest and the scenario row are needed only when
        # the ledger is published: they are computed on a thread while DuckDB
        # inserts the rows (both release the GIL), not before. Leaving the
        # block waits for the thread, so a failed write leaves none behind.
        def checked_meta() -> pl.DataFrame:
            if _repeats_a_key(frame):  # the key is the write's to check (store_schema says why)
                raise _duplicate_error(frame, name)
            return scenario_row(name, frame, scenario, digest or _digest(frame))

        with concurrent.futures.ThreadPoolExecutor(1, thread_name_prefix="calsim-digest") as pool:
            return self._insert(frame, name, ledger, scenario, old is not None, pool.submit(checked_meta))

    def _insert(self, frame: pl.DataFrame, name: str, ledger: object, scenario: object, replacing: bool,
                meta: concurrent.futures.Future) -> bool:
        """Fill the scenario's table, then publish it with ``meta`` (its ``scenarios`` row, once its key is checked)."""
        data = frame.with_row_index("seq").with_columns(pl.col("seq").cast(pl.Int64))
        arrow = data.to_arrow(compat_level=pl.CompatLevel.newest())
        # DuckDB's Arrow scan hands out one record batch per task, so a frame
        # in one chunk (what simulate returns) would insert on one thread:
        # cut it into row-group-sized batches (zero-copy slices).
        arrow = type(arrow).from_batches(arrow.to_batches(max_chunksize=_BATCH_ROWS), schema=arrow.schema)

        def fill(con: Any) -> str:
            _drop_orphans(con)
            return _fill_scenario_table(con, name, "_calsim_occ_in")

        def publish(con: Any, table: str) -> None:
            if replacing:
                _forget_scenario(con, name)
            con.execute("INSERT INTO scenarios SELECT * FROM _calsim_meta_in")
            con.execute("INSERT INTO occurrence_tables VALUES (?, ?)", [name, table])
            # One (schedule_id, revision) per schedule revision, with the zone of
            # its first row: grouping DuckDB's ENUM codes takes a fraction of
            # what grouping 10M strings in polars does (~1.7 s of CPU).
            base = pl.from_arrow(con.sql(
                f"SELECT CAST(schedule_id AS VARCHAR) AS schedule_id, revision, arg_min(zone, seq) AS zone "
                f"FROM {table} GROUP BY ALL").to_arrow_table())
            assert isinstance(base, pl.DataFrame)
            sched = schedule_rows(name, base, ledger, scenario)
            con.register("_calsim_sched_in", sched.to_arrow())
            con.execute("INSERT INTO schedules SELECT * FROM _calsim_sched_in")
            _refresh_occurrences_view(con)

        import duckdb

        self._con.register("_calsim_occ_in", arrow)
        # Rows carry their order in ``seq``, so the insert need not keep it:
        # DuckDB then appends in parallel.
        self._con.execute("SET preserve_insertion_order = false")
        # Two transactions: the rows go into a table no scenario points to yet,
        # then, the key checked, one transaction publishes it (scenario row,
        # schedules, the occurrences view). Killed in between, the store
        # shows no trace of the write: the unpublished table is an orphan that
        # the next write drops. Readers never see a partial scenario.
        table = None
        try:
            table = self._transaction(fill)
            self._con.register("_calsim_meta_in", meta.result().to_arrow())  # a repeated key raises here
            self._transaction(lambda con: publish(con, table))
        finally:
            # Best effort: after a fatal I/O error the connection is unusable
            # (the caller reopens it) and the original error must surface.
            with contextlib.suppress(duckdb.Error):
                if table is not None:  # a failed publish leaves the filled table unpublished: drop it
                    self._transaction(_drop_orphans)
            with contextlib.suppress(duckdb.Error):
                self._con.execute("RESET preserve_insertion_order")
            for v in ("_calsim_meta_in", "_calsim_sched_in", "_calsim_occ_in"):
                with contextlib.suppress(duckdb.Error):
                    self._con.unregister(v)
        return True

    def attach(self, dataset: object, name: str | None = None, *, replace: bool = False) -> bool:
        """Make a Parquet ledger dataset (written by the Dask engine) a scenario of this store.

        ``dataset`` is a :class:`calsim.distributed.LedgerDataset`, its
        directory (``.../scenario=<name>``), or the output directory with
        ``name``. Nothing is copied: the scenario's rows are a view over the
        Parquet files (DuckDB reads them directly), so :meth:`compare`, the
        views, :meth:`ledger` and SQL work as for a written ledger, and the
        files must stay where they are. The dataset's ``_scenario.json``
        fills the ``scenarios`` and ``schedules`` tables.

        The key is checked once here (one scan: a duplicate refuses the
        attach with :class:`DuplicateKeyError`); a view carries no index, and
        the files are immutable evidence, written atomically, one run per
        directory. Attaching the same dataset again changes nothing; another
        dataset under an existing name needs ``replace=True``. Only datasets
        on a local or mounted filesystem can be attached.

        Returns True when the scenario was added, False when it was already attached.
        """
        from .distributed import LedgerDataset

        self._writable()
        ds = dataset if isinstance(dataset, LedgerDataset) else LedgerDataset.open(dataset, name)
        name = ds.name if name is None else name
        _check_name(name)
        if name != ds.name:
            raise InputError(f"name: the dataset holds scenario {ds.name!r}, not {name!r}")
        files = [str(Path(f).resolve()) for f in ds.files]
        missing = [f for f in files if not Path(f).is_file()]
        if missing or any("://" in f for f in ds.files):
            raise InputError(f"dataset: {missing[0] if missing else ds.files[0]!r} is not a local file "
                             "(attach datasets on a local or mounted filesystem)")
        meta = ds.metadata
        digest = "dataset:" + hashlib.blake2b(json.dumps([files, meta], sort_keys=True, default=str).encode(),
                                              digest_size=16).hexdigest()
        rows = self._con.execute("SELECT digest FROM scenarios WHERE name = ?", [name]).fetchall()
        if rows and rows[0][0] == digest:
            return False
        if rows and not replace:
            raise ScenarioExistsError(f"name: a different ledger is already stored as {_shown_name(name)} in "
                                      f"{self._shown}; pass replace=True to replace it")
        source = "read_parquet([" + ", ".join(_literal(f) for f in files) + "])" if files else None
        types = {c: _sql_type(c, t) for c, t in LEDGER_SCHEMA.items()}
        if source is not None:
            bad = self._con.execute(f"SELECT count(*) FROM {source} WHERE scenario IS DISTINCT FROM ?", [name]).fetchall()[0]
            if bad[0]:
                raise InputError(f"dataset: {bad[0]} rows of {ds.path!r} belong to another scenario than {name!r}")
            keys = ", ".join(_q(c) for c in KEY[1:])
            found = self._con.execute(f"SELECT {keys}, count(*) AS n FROM {source} GROUP BY ALL HAVING n > 1 "
                                      "LIMIT 1").fetchall()
            dup = found[0] if found else None
            if dup:
                raise DuplicateKeyError(f"dataset: rows of {name!r} share a key, e.g. "
                                        f"({', '.join(f'{k}={v!s}' for k, v in zip(KEY[1:], dup))}); nothing attached")
            cols = ", ".join(f"CAST({_q(c)} AS {types[c]}) AS {_q(c)}" for c in LEDGER_SCHEMA.names())
            select = f"SELECT CAST(NULL AS BIGINT) AS seq, {cols} FROM {source}"
        else:
            select = ("SELECT CAST(NULL AS BIGINT) AS seq, "
                      + ", ".join(f"CAST(NULL AS {types[c]}) AS {_q(c)}" for c in LEDGER_SCHEMA.names()) + " WHERE false")

        def instant(text: object) -> object:
            return None if text is None else dt.datetime.fromisoformat(str(text).replace("Z", "+00:00"))

        from ._version import __version__

        scen = pl.DataFrame(
            {"name": [name], "created": [instant(meta.get("created")) or dt.datetime.now(dt.timezone.utc)],
             "horizon_start": [instant(meta.get("horizon_start"))], "horizon_end": [instant(meta.get("horizon_end"))],
             "release": [meta.get("release")],
             "parameters": [json.dumps(meta.get("parameters"), sort_keys=True)],
             "calsim_version": [meta.get("calsim_version", __version__)], "schema_version": [SCHEMA_VERSION],
             "rows": [ds.rows], "digest": [digest]},
            schema=_SCENARIO_ROW)
        sched = pl.DataFrame(
            [(name, d["schedule_id"], int(d["revision"]), d.get("zone"), d.get("account"), d.get("rule"), d.get("policy"))
             for d in meta.get("schedules", [])],
            schema=_SCHEDULE_ROW, orient="row")

        def body(con: Any) -> None:
            if rows:
                _forget_scenario(con, name)
            con.execute("INSERT INTO scenarios SELECT * FROM _calsim_meta_in")
            con.execute("INSERT INTO schedules SELECT * FROM _calsim_sched_in")
            view = _next_table(con)
            con.execute(f"CREATE VIEW {view} AS {select}")
            con.execute("INSERT INTO occurrence_tables VALUES (?, ?)", [name, view])
            _refresh_occurrences_view(con)

        with self._writing(f"dataset {_shown_name(name)}"):
            self._con.register("_calsim_meta_in", scen.to_arrow())
            self._con.register("_calsim_sched_in", sched.to_arrow())
            try:
                self._transaction(body)
            finally:
                for v in ("_calsim_meta_in", "_calsim_sched_in"):
                    with contextlib.suppress(Exception):
                        self._con.unregister(v)
        return True

    def write_tzdiff(self, name: str, diff: pl.DataFrame, *, replace: bool = False) -> bool:
        """Store a :func:`calsim.tzdiff` frame under ``name`` (same rules as :meth:`write`)."""
        self._writable()
        _check_name(name)
        _check_frame(diff, TZDIFF_SCHEMA, "diff")
        old = self.sql("SELECT * EXCLUDE (name) FROM tz_diffs WHERE name = $1 ORDER BY seq", [name])
        if old.height:
            if old.drop("seq").select(TZDIFF_SCHEMA.names()).equals(diff.select(TZDIFF_SCHEMA.names())):
                return False
            if not replace:
                raise ScenarioExistsError(f"name: a different tz diff is already stored as {_shown_name(name)}; "
                                          "pass replace=True")
        data = diff.select(TZDIFF_SCHEMA.names()).with_row_index("seq").with_columns(
            pl.lit(name).alias("name"), pl.col("seq").cast(pl.Int64))
        cols = ", ".join(_q(c) for c in ["name", "seq", *TZDIFF_SCHEMA.names()])
        with self._writing(f"tz diff {_shown_name(name)}"):
            self._con.register("_calsim_tz_in", data.to_arrow(compat_level=pl.CompatLevel.newest()))
            try:
                self._transaction(lambda con: (
                    con.execute("DELETE FROM tz_diffs WHERE name = ?", [name]),
                    con.execute(f"INSERT INTO tz_diffs ({cols}) SELECT {cols} FROM _calsim_tz_in")))
            finally:
                with contextlib.suppress(Exception):
                    self._con.unregister("_calsim_tz_in")
        return True

    def tzdiff(self, name: str) -> pl.DataFrame:
        """The tz diff frame stored under ``name``."""
        out = self.sql("SELECT * FROM tz_diffs WHERE name = $1 ORDER BY seq", [name])
        if not out.height:
            raise UnknownScenarioError(f"name: no tz diff {_shown_name(name)} in {self._shown}")
        return out.select(TZDIFF_SCHEMA.names()).cast(dict(TZDIFF_SCHEMA))

    # -- reading -----------------------------------------------------------
    def sql(self, query: str, params: list[object] | None = None) -> pl.DataFrame:
        """Run ``query`` (bound ``params``: ``?`` or ``$1``) and return a polars frame (instants in UTC)."""
        import duckdb

        try:
            rel = self._con.sql(query, params=params or None)
            if rel is None:
                return pl.DataFrame()
            table = rel.to_arrow_table()
        except duckdb.Error as exc:
            # DuckDB's message spans lines (hints, a caret under the query): its first line says what failed.
            first = next((ln.strip() for ln in str(exc).splitlines() if ln.strip()), type(exc).__name__)
            raise StoreError(f"query: {first[:300]}") from None
        out = pl.from_arrow(table)
        assert isinstance(out, pl.DataFrame)
        return out

    def scenarios(self) -> pl.DataFrame:
        """One row per stored scenario (name, created, horizon, release, parameters, versions, rows)."""
        return self.sql("SELECT * EXCLUDE (digest) FROM scenarios ORDER BY name")

    def _known(self, names: list[str]) -> None:
        have = set(self.sql("SELECT name FROM scenarios")["name"].to_list())
        for n in names:
            if n not in have:
                stored = ", ".join(_shown_name(h) for h in sorted(have)[:10]) + (
                    f" and {len(have) - 10} more" if len(have) > 10 else "")
                raise UnknownScenarioError(f"name: no scenario {_shown_name(n)} in {self._shown} "
                                           f"(stored: {stored or 'none'})")

    def ledger(self, name: str) -> pl.DataFrame:
        """The ledger frame stored as ``name``, equal to the one written (order and dtypes)."""
        self._known([name])
        table = _checked_table(
            self.sql("SELECT table_name FROM occurrence_tables WHERE scenario = $1", [name])["table_name"][0])
        if self.sql("SELECT count(*) AS n FROM duckdb_views() WHERE view_name = $1", [table])["n"][0]:
            # An attached dataset: its rows in the order the local engine gives (see calsim.distributed).
            from .distributed.dataset import local_order

            out = self.sql(f"SELECT * EXCLUDE (seq) FROM {table}")
            return local_order(out.select(LEDGER_SCHEMA.names()).cast(dict(LEDGER_SCHEMA)))
        out = self.sql(f"SELECT * EXCLUDE (seq) FROM {table} ORDER BY seq")
        return out.select(LEDGER_SCHEMA.names()).cast(dict(LEDGER_SCHEMA))

    def compare(self, names: list[str] | str) -> pl.DataFrame:
        """One row per scenario, in the order given.

        Columns: ``scenario``, ``occurrences`` (scheduled rows), ``manual``,
        one count per state (``done``, ``coalesced``, ``skipped``, ``expired``,
        ``cancelled``, ``failed``), one per reason (``reason_<name>``),
        ``lateness_p50``/``_p95``/``_max`` (Durations over started runs; nearest
        rank, equal to :meth:`Ledger.summary`'s), ``cost``, and from the gaps
        (``observation_gaps``, as :meth:`Ledger.gaps`): ``longest_gap`` (a
        Duration; null when no gap is closed at both ends), ``most_missed`` and
        ``most_late`` (the most occurrences missed, or run late, in one gap).
        """
        names = [names] if isinstance(names, str) else list(names)
        if not names:
            raise InputError("names: expected at least one scenario name")
        self._known(names)
        # ``scenario IN ($1, ...)`` rather than list_contains: an IN list of
        # constants reaches the scan, which skips other scenarios' row groups.
        ins = "scenario IN (" + ", ".join(f"${i + 1}" for i in range(len(names))) + ")"
        # One grouped scan (enums hash fast), pivoted in polars.
        groups = self.sql(f"""
            SELECT scenario, kind::VARCHAR AS kind, state::VARCHAR AS state, reason::VARCHAR AS reason,
                   count(*) AS n, sum(cost) AS cost,
                   count(lateness_s) FILTER (WHERE started_utc IS NOT NULL) AS started,
                   max(lateness_s) FILTER (WHERE started_utc IS NOT NULL) AS lateness_max
            FROM occurrences WHERE {ins} GROUP BY ALL""", names)
        order = pl.DataFrame({"scenario": names})
        by = lambda col, value: pl.col("n").filter(pl.col(col) == value).sum()  # noqa: E731
        base = groups.group_by("scenario").agg(
            by("kind", "scheduled").alias("occurrences"), by("kind", "manual").alias("manual"),
            *(by("state", st).alias(st) for st in LEDGER_STATES),
            *(by("reason", r).alias("reason_" + r) for r in LEDGER_REASONS),
            pl.col("started").sum().alias("_n"), pl.col("lateness_max").max(), pl.col("cost").sum())
        base = order.join(base, on="scenario", how="left")
        # Percentiles by nearest rank, as polars' default (Ledger.summary): the
        # value at index k = round((n - 1) q). DuckDB's quantile_disc picks index
        # ceil(n q') - 1, so q' = (k + 0.5) / n selects index k exactly; q' depends
        # on n, so each scenario gets its own (filtered) aggregate in one scan.
        aggs, params = [], list(names)
        for i, (scen, n) in enumerate(base.select("scenario", "_n").iter_rows()):
            for label, q in (("p50", 0.5), ("p95", 0.95)):
                qq = (int((n - 1) * q + 0.5) + 0.5) / n if n else 0.5
                aggs.append(f"quantile_disc(lateness_s, {qq!r}) FILTER (WHERE scenario = ${len(params) + 1}) "
                            f"AS {_q(f'{label}_{i}')}")
                params.append(scen)
        row = self.sql(f"""SELECT {", ".join(aggs)} FROM occurrences
                           WHERE {ins} AND started_utc IS NOT NULL""", params).row(0)
        base = base.with_columns(pl.Series("lateness_p50", row[0::2], pl.Float64),
                                 pl.Series("lateness_p95", row[1::2], pl.Float64)).drop("_n")
        tables = {s: _checked_table(t) for s, t in
                  self.sql("SELECT scenario, table_name FROM occurrence_tables").iter_rows()}
        # On each scenario's own table (its ENUM ids join as integers); a gap in microseconds, exact.
        gaps = pl.concat([
            self.sql("WITH g AS (" + _GAPS_SQL.format(where="", source=tables[n]) + ")\n"
                     "SELECT CAST(scenario AS VARCHAR) AS scenario, "
                     "CAST(max(epoch_us(to_utc) - epoch_us(from_utc)) AS BIGINT) AS longest_gap, "
                     "CAST(max(missed) AS BIGINT) AS most_missed, CAST(max(late) AS BIGINT) AS most_late "
                     "FROM g GROUP BY scenario")
            for n in dict.fromkeys(names)], how="vertical_relaxed")
        out = base.join(gaps, on="scenario", how="left")
        counts = ["occurrences", "manual", *LEDGER_STATES, *("reason_" + r for r in LEDGER_REASONS)]
        return out.select(
            "scenario", pl.col(counts).fill_null(0).cast(pl.Int64),
            # Seconds to Durations as Ledger.summary() makes them, so the two are equal.
            *(seconds_to_duration(pl.col(c).cast(pl.Float64)).alias(c)
              for c in ("lateness_p50", "lateness_p95", "lateness_max")),
            pl.col("cost").fill_null(0.0).cast(pl.Float64),
            pl.col("longest_gap").cast(pl.Int64).cast(pl.Duration("us")),
            pl.col("most_missed", "most_late").fill_null(0).cast(pl.Int64))

    def export_parquet(self, directory: str | os.PathLike[str]) -> list[Path]:
        """Write every table to ``<directory>/<table>.parquet``; returns the paths.

        Each file is written atomically and only over a regular file (see
        :mod:`calsim.atomic`); a failure is a :class:`StoreError` naming the file.
        """
        import duckdb

        d = Path(directory)
        try:
            d.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise InputError(f"directory: cannot create {show_path(d)}: {os_error_cause(exc)}") from None
        targets = [(table, d / f"{table}.parquet") for table in ("scenarios", "schedules", "occurrences", "tz_diffs")]
        for _, p in targets:  # refuse a bad target before writing any file
            check_writable(p, "directory")
        for table, p in targets:
            order = "name" if table == "scenarios" else ("name, seq" if table == "tz_diffs" else
                                                         "scenario, seq" if table == "occurrences" else "scenario, schedule_id, revision")

            def copy(tmp: str, table: str = table, order: str = order) -> None:
                self._con.execute(f"COPY (SELECT * FROM {_q(table)} ORDER BY {order}) "
                                  f"TO {_literal(tmp)} (FORMAT parquet)")

            try:
                write_atomically(p, copy, "directory")
            except duckdb.Error as exc:
                raise StoreError(f"directory: cannot write {show_path(p)}: {_cause(exc)}") from None
        return [p for _, p in targets]

    # -- reconciliation ----------------------------------------------------
    def reconcile(self, name: str, actual: pl.DataFrame | str | os.PathLike[str], *, grace: object = "5min",
                  max_shift: object = "3h") -> pl.DataFrame:
        """Classify an actual run history against the stored ledger ``name`` (read-only).

        See :func:`calsim.reconcile.reconcile` for the columns and classes.
        """
        from .reconcile import reconcile

        return reconcile(self, name, actual, grace=grace, max_shift=max_shift)


