"""One DuckDB connection to a store file: opened as :mod:`.files` allows, its layout checked and migrated,
transactions, and DuckDB's failures as one-line :class:`~calsim.errors.StoreError` s.

:class:`~calsim.store.LedgerStore` holds one :class:`Connection`; the modules
that write (:mod:`.writer`) and read (:mod:`.queries`) take it as their first
argument.

>>> db = Connection(":memory:", read_only=False)
>>> db.sql("SELECT value FROM calsim_meta WHERE key = 'schema_version'")["value"].to_list()
['5']
>>> db.close()
"""

from __future__ import annotations

import contextlib
import os
from typing import Any, Callable, Iterator

import polars as pl

from ..atomic import show_path
from ..errors import LedgerLockedError, SchemaVersionError, StoreError, UnknownScenarioError
from .files import CONFIG, cause, check_store_file, lock_error, store_path
from .migrations import MIGRATIONS, SCHEMA_VERSION
from .records import shown_name
from .schema import DDL_V1
from .tables import drop_orphans

__all__ = ["Connection"]


class Connection:
    """The DuckDB connection of one store (``con``), with the path as given (``path``) and as shown in messages."""

    def __init__(self, path: str | os.PathLike[str], *, read_only: bool) -> None:
        import duckdb

        self.con: Any = None
        self.path = store_path(path)
        self.read_only = bool(read_only)
        self.shown = show_path(self.path)
        memory = self.path == ":memory:"
        self.file = self.path if memory else check_store_file(self.path, self.read_only)
        created = not memory and not os.path.exists(self.file)
        try:
            self.con = self._connect()
        except LedgerLockedError:
            raise
        except StoreError:
            if created:
                self._remove_created()
            raise
        try:
            self.con.execute("SET TimeZone = 'UTC'")
            self._open_schema()
        except BaseException as exc:
            self.close()  # release the file before reporting
            if created:
                self._remove_created()  # a store that could not be made leaves no file behind
            if isinstance(exc, duckdb.Error):
                raise StoreError(f"path: cannot open {self.shown} as a calsim store: {cause(exc)}") from None
            raise

    def _connect(self) -> Any:
        import duckdb

        try:
            return duckdb.connect(self.file, read_only=self.read_only, config=dict(CONFIG))
        except duckdb.Error as exc:
            if "Could not set lock on file" in str(exc):
                raise lock_error(self.shown, exc) from None
            raise StoreError(f"path: cannot open {self.shown} as a DuckDB database: {cause(exc)}") from None

    def _remove_created(self) -> None:
        """Remove the file (and log) this store created before failing to make it a store."""
        for f in (self.file, self.file + ".wal"):
            try:
                if os.path.isfile(f) and not os.path.islink(f):
                    os.unlink(f)
            except OSError:
                pass

    def _open_schema(self) -> None:
        """Create the tables of a new store, or check an existing one's layout version and migrate it."""
        con = self.con
        tables = {r[0] for r in con.execute("SELECT table_name FROM duckdb_tables()").fetchall()}
        if "calsim_meta" not in tables:
            if tables:
                raise StoreError(f"path: {self.shown} is a DuckDB file but not a calsim ledger store "
                                 f"(it has tables {sorted(tables)} and no calsim_meta)")
            if self.read_only:
                raise StoreError(f"path: {self.shown} is empty; open it once without read_only to create the store")
            self.transaction(_create)
            return
        row = con.execute("SELECT value FROM calsim_meta WHERE key = 'schema_version'").fetchall()
        version = int(row[0][0]) if row else 0
        if version > SCHEMA_VERSION:
            raise SchemaVersionError(
                f"path: {self.shown} has store schema version {version}, newer than {SCHEMA_VERSION} "
                "(the newest this calsim knows); upgrade calsim to read it")
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

            self.transaction(run)
            version += 1

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
            con.execute("SET TimeZone = 'UTC'")
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
            raise StoreError(f"path: cannot write {what} to {self.shown}: {cause(exc)}; "
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

    def sql(self, query: str, params: list[object] | None = None) -> pl.DataFrame:
        """Run ``query`` (bound ``params``: ``?`` or ``$1``) and return a polars frame (instants in UTC)."""
        import duckdb

        try:
            rel = self.con.sql(query, params=params or None)
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
