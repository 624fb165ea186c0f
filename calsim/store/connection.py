"""One DuckDB connection to a store file: opened as :mod:`.store_paths` allows, its catalog checked
(:mod:`.catalog`) and migrated, what DuckDB may reach from it, a time bound per query, transactions, and
DuckDB's failures as one-line :class:`~calsim.errors.StoreError` s.

:class:`~calsim.store.LedgerStore` holds one :class:`Connection`; the modules
that write (:mod:`.writer`) and read (:mod:`.queries`) take it as their first
argument.

Opening a file, in order, so that nothing in it runs before it is known to be calsim's:

1. :mod:`.store_paths` refuses what is not a local DuckDB file, before DuckDB sees it.
2. A file to be opened for writing that has a write-ahead log (``<file>.wal``)
   is first opened read-only and checked (:func:`.catalog.check`): DuckDB
   replays the log into a file it opens for writing and checkpoints it when
   the connection closes, so a refused file would not stay byte for byte as
   it was. Without a log, opening and closing a file for writing changes
   nothing in it (measured with DuckDB 2.0.1; the hostile-store tests check it
   on every refusal), and step 3 checks it before anything is read.
3. The connection is made with DuckDB's extension autoload and autoinstall off
   and a time bound on every query (``max_execution_time`` of the session,
   :func:`query_timeout`), and the catalog is checked (again, for a file
   opened for writing: it is locked now; a new file or ``:memory:`` holds
   nothing to check). The check reads the catalog in milliseconds and has a
   bound of its own, at least a minute, so that a small bound set for
   queries does not make opening a store depend on how busy the machine is.
4. Opened ``read_only``, DuckDB's access to files outside the store is then
   turned off (``enable_external_access``), but for the Parquet files of the
   attached datasets the check found (``allowed_paths``), and the
   configuration is locked, so that no statement can turn either back on.
   Opened for writing, files stay reachable: :meth:`~calsim.LedgerStore.attach`
   reads the files it is given and :meth:`~calsim.LedgerStore.export_parquet`
   writes them (the check at step 3 is what stands between a file from
   elsewhere and a query).

>>> db = Connection(":memory:", read_only=False, timeout=0.5)
>>> db.sql("SELECT value FROM calsim_meta WHERE key = 'schema_version'")["value"].to_list()
['5']
>>> try:
...     db.sql("WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r) SELECT count(*) FROM r")
... except StoreError as exc:
...     print(str(exc)[:61])
query: stopped after 0.5 s, the time bound of one query on a
>>> db.close()
"""

from __future__ import annotations

import contextlib
import math
import os
from typing import Any, Callable, Iterator, Sequence

import polars as pl

from ..atomic import show_path
from ..errors import InputError, LedgerLockedError, SchemaVersionError, StoreError, UnknownScenarioError
import calsim.store.catalog as catalog
from .store_paths import CONFIG, cause, check_store_file, lock_error, store_path
from .migrations import MIGRATIONS, SCHEMA_VERSION
from .ledger_records import shown_name
from .schema import DDL_V1
from .sql import literals
from .tables import drop_orphans

__all__ = ["Connection", "query_timeout", "DEFAULT_TIMEOUT", "TIMEOUT_ENV"]

#: Seconds one query on a store may run (DuckDB's ``max_execution_time``): minutes above what the largest
#: stores measured take (a 10.85M-row fleet-year: ``compare`` ~1.3 s, reading a ledger back a few seconds).
DEFAULT_TIMEOUT = 300.0
TIMEOUT_ENV = "CALSIM_STORE_TIMEOUT"
_MAX_TIMEOUT = 366 * 86400
_CHECK_MS = 60_000


def query_timeout(value: object = None) -> float:
    """The time bound of one query in seconds: ``value``, else ``CALSIM_STORE_TIMEOUT``, else :data:`DEFAULT_TIMEOUT`.

    >>> query_timeout(), query_timeout(0.5)
    (300.0, 0.5)
    """
    where = "timeout"
    if value is None:
        raw = os.environ.get(TIMEOUT_ENV)
        if raw is None or not raw.strip():
            return DEFAULT_TIMEOUT
        where = TIMEOUT_ENV
        try:
            value = float(raw) if len(raw) <= 40 else math.nan
        except ValueError:
            value = math.nan
        shown = repr(raw[:40])
    else:
        shown = repr(value)[:40] if isinstance(value, (int, float)) else type(value).__name__
    if (isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value)
            or not 0 < value <= _MAX_TIMEOUT):
        raise InputError(f"{where}: expected a number of seconds above 0 and at most {_MAX_TIMEOUT:,} "
                         f"(a year), got {shown}")
    return float(value)


class Connection:
    """The DuckDB connection of one store (``con``), with the path as given (``path``) and as shown in messages.

    ``timeout``: the time bound of one query in seconds (:func:`query_timeout`).
    """

    def __init__(self, path: str | os.PathLike[str], *, read_only: bool, timeout: object = None) -> None:
        import duckdb

        self.con: Any = None
        self.timeout = query_timeout(timeout)
        self.path = store_path(path)
        self.read_only = bool(read_only)
        self.shown = show_path(self.path)
        memory = self.path == ":memory:"
        self.file = self.path if memory else check_store_file(self.path, self.read_only)
        created = not memory and not os.path.exists(self.file)
        if not (memory or created or self.read_only) and os.path.lexists(self.file + ".wal"):
            self._check_before_writing()
        try:
            self.con = self._connect()
        except LedgerLockedError:
            raise
        except StoreError:
            if created:
                self._remove_created()
            raise
        try:
            self._session()
            self._open_schema(fresh=memory or created)
        except BaseException as exc:
            self.close()  # release the file before reporting
            if created:
                self._remove_created()  # a store that could not be made leaves no file behind
            if isinstance(exc, duckdb.Error):
                if self.timed_out(exc):
                    raise self.failure(exc, "path") from None
                raise StoreError(f"path: cannot open {self.shown} as a calsim store: {cause(exc)}") from None
            raise

    @property
    def _bound_ms(self) -> int:
        return max(1, round(self.timeout * 1000))

    def _connect(self, read_only: bool | None = None) -> Any:
        import duckdb

        read_only = self.read_only if read_only is None else read_only
        try:
            return duckdb.connect(self.file, read_only=read_only, config=dict(CONFIG))
        except duckdb.Error as exc:
            if "Could not set lock on file" in str(exc):
                raise lock_error(self.shown, exc) from None
            raise StoreError(f"path: cannot open {self.shown} as a DuckDB database: {cause(exc)}") from None

    def _session(self, con: Any = None) -> None:
        """This connection's own settings: instants in UTC, the time bound.

        Session settings, not the database's: DuckDB gives every connection
        to one file in a process the same database (and refuses one with
        another configuration), so stores of one file may differ in their bound.
        """
        con = self.con if con is None else con
        con.execute("SET SESSION TimeZone = 'UTC'")
        con.execute(f"SET SESSION max_execution_time = {self._bound_ms}")

    def _check(self, con: Any) -> catalog.Layout:
        """:func:`.catalog.check` on ``con``, bounded by at least a minute: it reads DuckDB's catalog and two
        small tables (``calsim_meta``, ``occurrence_tables``), in milliseconds, so a bound set for queries
        (as small as it may be) does not make opening a store depend on how busy the machine is."""
        con.execute(f"SET SESSION max_execution_time = {max(self._bound_ms, _CHECK_MS)}")
        try:
            return catalog.check(con, self.shown)
        finally:
            con.execute(f"SET SESSION max_execution_time = {self._bound_ms}")

    def _check_before_writing(self) -> None:
        """Check an existing file through a read-only connection before it is opened for writing (step 2 above).

        When this process has the file open for writing already (another
        store of it), DuckDB refuses a read-only connection: that store
        checked the file when it opened it, and step 3 checks it again.
        """
        import duckdb

        try:
            con = duckdb.connect(self.file, read_only=True, config=dict(CONFIG))
        except duckdb.Error as exc:
            if "different configuration" in str(exc):
                return
            con = self._connect(read_only=True)  # the one-line error (a lock, a file DuckDB cannot read)
        try:
            self._session(con)
            self._check(con)
        except duckdb.Error as exc:
            if self.timed_out(exc):
                raise self.failure(exc, "path") from None
            raise StoreError(f"path: cannot open {self.shown} as a calsim store: {cause(exc)}") from None
        finally:
            con.close()

    def _remove_created(self) -> None:
        """Remove the file (and log) this store created before failing to make it a store."""
        for f in (self.file, self.file + ".wal"):
            try:
                if os.path.isfile(f) and not os.path.islink(f):
                    os.unlink(f)
            except OSError:
                pass

    def _open_schema(self, fresh: bool) -> None:
        """Check the catalog (:mod:`.catalog`); create the tables of a new store, or migrate an older one; then,
        read-only, turn DuckDB's access to other files off (step 4 above).

        ``fresh``: a database this connection made (``:memory:``, a new file), which holds nothing to check.
        """
        layout = catalog.Layout(None) if fresh else self._check(self.con)
        if layout.version is None:
            if self.read_only:
                raise StoreError(f"path: {self.shown} is empty; open it once without read_only to create the store")
            with self.unbounded():
                self.transaction(_create)
            return
        version = layout.version
        while version < SCHEMA_VERSION:
            if self.read_only:
                raise SchemaVersionError(f"path: {self.shown} has store schema version {version}; open it "
                                         f"without read_only once to migrate it to {SCHEMA_VERSION}")
            step = MIGRATIONS.get(version)
            if step is None:
                raise SchemaVersionError(f"path: no migration from store schema version {version}")

            def run(con: Any, step: Callable[[Any], None] = step, to: int = version + 1) -> None:
                step(con)
                con.execute("UPDATE calsim_meta SET value = ? WHERE key = 'schema_version'", [str(to)])

            with self.unbounded():  # a migration reads only what the check accepted
                self.transaction(run)
            version += 1
        if self.read_only:
            self._confine(layout.files)

    def _confine(self, files: tuple[str, ...]) -> None:
        """No file but the store and ``files`` (attached datasets' Parquet files) for DuckDB, and no setting changed.

        DuckDB checks ``allowed_paths`` only while external access is off, and
        takes no change of it once it is (nor turns external access back on):
        hence this order. ``lock_configuration`` then refuses any ``SET`` but
        of this connection's own two settings (``allowed_configs``), so no
        statement can reach an extension or another file. These are the
        database's settings, shared by every read-only store of this file in
        the process: when another one confined it, the files it allows are
        this one's (the file cannot change while a process reads it).
        """
        con = self.con
        if con.execute("SELECT current_setting('enable_external_access')").fetchall()[0][0]:
            if files:
                con.execute(f"SET allowed_paths = [{literals(files)}]")
            con.execute("SET enable_external_access = false")
            con.execute("SET allowed_configs = ['TimeZone', 'max_execution_time']")
            con.execute("SET lock_configuration = true")
            return
        allowed = set(con.execute("SELECT current_setting('allowed_paths')").fetchall()[0][0] or ())
        if not set(files) <= allowed:
            raise StoreError(f"path: {self.shown} changed while this process had it open read-only "
                             "(its attached datasets differ); close its other stores and open it again")

    @contextlib.contextmanager
    def unbounded(self) -> Iterator[None]:
        """Lift the time bound for a write's own statements (they read what they were handed, and tables the
        check accepted), restoring it afterwards. Never on a read-only connection."""
        import duckdb

        if self.read_only:
            yield
            return
        self.con.execute("SET SESSION max_execution_time = 0")
        try:
            yield
        finally:
            with contextlib.suppress(duckdb.Error):  # an invalidated database is reopened with the bound (recover)
                if self.con is not None:
                    self.con.execute(f"SET SESSION max_execution_time = {self._bound_ms}")

    @staticmethod
    def timed_out(exc: BaseException) -> bool:
        """Whether DuckDB stopped a query at the time bound."""
        import duckdb

        return isinstance(exc, duckdb.InterruptException) and "maximum execution time" in str(exc)

    def failure(self, exc: BaseException, what: str = "query") -> StoreError:
        """A DuckDB failure as a one-line StoreError: the time bound named with its setting, else DuckDB's
        first line."""
        if self.timed_out(exc):
            return StoreError(f"{what}: {self._bound_text()}")
        # DuckDB's message spans lines (hints, a caret under the query): its first line says what failed.
        first = next((ln.strip() for ln in str(exc).splitlines() if ln.strip()), type(exc).__name__)
        return StoreError(f"{what}: {first[:300]}")

    def _bound_text(self) -> str:
        return (f"stopped after {self.timeout:g} s, the time bound of one query on a store "
                f"(raise it with LedgerStore(..., timeout=SECONDS) or {TIMEOUT_ENV}=SECONDS)")

    @contextlib.contextmanager
    def guard(self) -> Iterator[None]:
        """Turn a DuckDB failure escaping a store operation into a one-line StoreError (:meth:`failure`)."""
        import duckdb

        try:
            yield
        except duckdb.Error as exc:
            raise self.failure(exc) from None

    def recover(self) -> None:
        """Reopen the file after DuckDB invalidated the database (a fatal I/O error such as a full disk).

        DuckDB replays its log up to the last commit; the unpublished table of
        the failed write is dropped (best effort: if the disk is still full, the
        next write drops it). If the file cannot be reopened, the store stays closed.
        """
        try:
            self.con.close()
        except Exception:  # noqa: BLE001 - closing an invalidated database
            pass
        try:
            con = self._connect()
        except StoreError:
            return
        self.con = con
        try:
            self._session()
            self.transaction(drop_orphans)
        except Exception:  # noqa: BLE001 - best effort, see above
            pass

    @contextlib.contextmanager
    def writing(self, what: str) -> Iterator[None]:
        """Turn DuckDB's failures while writing ``what`` into a :class:`StoreError` naming the file and the cause."""
        import duckdb

        try:
            yield
        except duckdb.Error as exc:
            if isinstance(exc, duckdb.FatalException) or "invalidated" in str(exc):
                self.recover()
            why = self._bound_text() if self.timed_out(exc) else cause(exc)
            raise StoreError(f"path: cannot write {what} to {self.shown}: {why}; "
                             "the store keeps what it held before") from None

    def close(self) -> None:
        """Close the connection (idempotent)."""
        if self.con is not None:
            self.con.close()
            self.con = None

    def transaction(self, body: Callable[[Any], Any]) -> Any:
        """Run ``body(con)`` in one transaction: committed when it returns, rolled back when it raises."""
        con = self.con
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

    def writable(self) -> None:
        """Refuse to write through a read-only connection."""
        if self.read_only:
            raise StoreError(f"path: {self.shown} was opened with read_only=True; open it without to write")

    def sql(self, query: str, params: Sequence[object] | None = None) -> pl.DataFrame:
        """Run ``query`` (bound ``params``: ``?`` or ``$1``) and return a polars frame (instants in UTC)."""
        import duckdb

        try:
            rel = self.con.sql(query, params=params or None)
            if rel is None:
                return pl.DataFrame()
            table = rel.to_arrow_table()
        except duckdb.Error as exc:
            raise self.failure(exc) from None
        out = pl.from_arrow(table)
        assert isinstance(out, pl.DataFrame)
        return out

    def known(self, names: list[str]) -> None:
        """Refuse a name no stored scenario has, listing (up to ten of) those stored."""
        have = set(self.sql("SELECT name FROM scenarios")["name"].to_list())
        for n in names:
            if n not in have:
                stored = ", ".join(shown_name(h) for h in sorted(have)[:10]) + (
                    f" and {len(have) - 10} more" if len(have) > 10 else "")
                raise UnknownScenarioError(f"name: no scenario {shown_name(n)} in {self.shown} "
                                           f"(stored: {stored or 'none'})")


def _create(con: Any) -> None:
    """The tables of a new store: version 1, then the same steps as an old file's migration."""
    for stmt in DDL_V1:
        con.execute(stmt)
    for version in range(1, SCHEMA_VERSION):
        MIGRATIONS[version](con)
    con.execute("INSERT INTO calsim_meta VALUES ('schema_version', ?)", [str(SCHEMA_VERSION)])
