"""``LedgerStore``: many simulated ledgers side by side in one DuckDB file (DESIGN.md §6).

The class is the store's one public face; its methods check their arguments
and hand the work to :mod:`.writer` (write, attach, tz diffs) and
:mod:`.queries` (read, compare, export) over its :class:`~.connection.Connection`.
What a store holds (tables and views) is listed in :mod:`.schema`; why each
scenario has its own table, in :mod:`.tables`.

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
* A store file is not trusted: before anything is read, its catalog is
  checked against the layout it claims (:mod:`calsim.store.catalog`: no
  macro, no view calsim did not write, calsim's tables with calsim's
  columns), so that opening a file from elsewhere runs no query calsim did
  not write. Opened ``read_only``, DuckDB reads no other file than the
  store and the Parquet files of its attached datasets
  (``enable_external_access`` off, ``allowed_paths``, the configuration
  locked). Opened for writing, files stay reachable: :meth:`attach` reads
  the datasets it is given and :meth:`export_parquet` writes files.
* Every query has a time bound (``timeout``, DuckDB's ``max_execution_time``);
  a write's own statements and a migration have none (they read what they
  were handed and what the check accepted).
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

import functools
import os
from pathlib import Path
from typing import Any, Callable, Concatenate, ParamSpec, Sequence, TypeVar

import polars as pl

from ..simulation.ledger import Ledger
import calsim.store.queries as queries
import calsim.store.writer as writer
from .connection import Connection
from .reconcile import reconcile

__all__ = ["LedgerStore"]

_P = ParamSpec("_P")
_R = TypeVar("_R")


def _guarded(method: Callable[Concatenate[LedgerStore, _P], _R]) -> Callable[Concatenate[LedgerStore, _P], _R]:
    """A store operation whose DuckDB failures (the time bound included) come out as one-line StoreErrors."""
    @functools.wraps(method)
    def run(self: LedgerStore, *args: _P.args, **kwargs: _P.kwargs) -> _R:
        with self._db.guard():
            return method(self, *args, **kwargs)

    return run


class LedgerStore:
    """Ledgers of many scenarios in one DuckDB file (or ``":memory:"``).

    Parameters
    ----------
    path
        A local DuckDB file (created with its tables when new) or
        ``":memory:"``; never a URL or an extension prefix (see "Decisions").
    read_only
        Open for reading only; several processes may do so at once when no
        process holds the file open for writing (DuckDB's rule). DuckDB then
        reads no file but the store and its attached datasets' Parquet files.
    timeout
        The time bound of one query, in seconds (default: the
        ``CALSIM_STORE_TIMEOUT`` environment variable, else 300): a query
        still running then, a user's through :meth:`sql` or calsim's own
        (writing a ledger and migrating a layout aside), is stopped with a
        :class:`StoreError` naming the bound.

    Raises
    ------
    LedgerLockedError
        Another process has the file open (for writing, or read-only when
        this one wants to write: the message says which, and its PID).
    SchemaVersionError
        The file's store layout is newer than this calsim knows.
    StoreError
        The path is not a local file, the file is not a DuckDB database (or
        is corrupt) or not a calsim store as calsim writes it (a view, macro,
        type or column it did not write: :mod:`calsim.store.catalog`, checked
        before anything is read), or it cannot be written.
    """

    def __init__(self, path: str | os.PathLike[str] = ":memory:", *, read_only: bool = False,
                 timeout: float | None = None) -> None:
        self._db = Connection(path, read_only=read_only, timeout=timeout)
        self.path = self._db.path
        self.read_only = self._db.read_only

    @property
    def _con(self) -> Any:
        """The DuckDB connection itself (None once closed), for tests and the odd statement ``sql`` cannot run."""
        return self._db.con

    # -- lifecycle ---------------------------------------------------------
    def close(self) -> None:
        """Close the connection (idempotent)."""
        db = getattr(self, "_db", None)
        if db is not None:
            db.close()

    def __enter__(self) -> "LedgerStore":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"LedgerStore({self.path!r}{', read_only=True' if self.read_only else ''})"

    # -- writing -----------------------------------------------------------
    @_guarded
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
            (the schedules as a count), with each schedule revision's rule and
            policy in ``schedules`` (``Revise`` events' revisions included, as
            a Dask dataset records them); by default the ledger's ``scenario`` attribute
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
        return writer.write(self._db, ledger, name=name, scenario=scenario, replace=replace)

    @_guarded
    def stored(self, ledger: Ledger) -> str:
        """``"absent"``, ``"same"`` or ``"different"``: what is stored under ``ledger``'s name (read-only).

        What :meth:`write` would do without ``replace``: write, nothing, or
        refuse. A command that writes several ledgers asks first for each, so
        it refuses before it has written any of them.
        """
        return writer.stored(self._db, ledger)

    @_guarded
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
        return writer.attach(self._db, dataset, name, replace=replace)

    @_guarded
    def write_tzdiff(self, name: str, diff: pl.DataFrame, *, replace: bool = False) -> bool:
        """Store a :func:`calsim.tzdiff` frame under ``name`` (same rules as :meth:`write`)."""
        return writer.write_tzdiff(self._db, name, diff, replace=replace)

    # -- reading -----------------------------------------------------------
    @_guarded
    def sql(self, query: str, params: Sequence[object] | None = None) -> pl.DataFrame:
        """Run ``query`` (bound ``params``: ``?`` or ``$1``) and return a polars frame (instants in UTC)."""
        return self._db.sql(query, params)

    @_guarded
    def scenarios(self) -> pl.DataFrame:
        """One row per stored scenario (name, created, horizon, release, parameters, versions, rows)."""
        return queries.scenarios(self._db)

    @_guarded
    def _known(self, names: list[str]) -> None:
        """Refuse a name no stored scenario has (:class:`UnknownScenarioError`, listing those stored)."""
        self._db.known(names)

    @_guarded
    def ledger(self, name: str) -> pl.DataFrame:
        """The ledger frame stored as ``name``, equal to the one written (order and dtypes)."""
        return queries.ledger(self._db, name)

    @_guarded
    def tzdiff(self, name: str) -> pl.DataFrame:
        """The tz diff frame stored under ``name``."""
        return queries.tzdiff(self._db, name)

    @_guarded
    def compare(self, names: list[str] | str) -> pl.DataFrame:
        """One row per scenario, in the order given.

        Columns: ``scenario``, ``occurrences`` (scheduled rows), ``manual``,
        one count per state (``done``, ``coalesced``, ``skipped``, ``expired``,
        ``cancelled``, ``failed``), one per reason (``reason_<name>``),
        ``lateness_p50``/``_p95``/``_max`` (Durations over started runs; nearest
        rank, equal to :meth:`Ledger.summary`'s), ``cost``, and from the gaps
        (``observation_gaps``, as :meth:`Ledger.gaps`): ``longest_gap`` (a
        Duration; null when no gap is closed at both ends), ``most_missed`` and
        ``most_late`` (the most occurrences missed, or run late, in one gap);
        and, as :meth:`Ledger.summary` has them (the same aggregations), from
        the worker-level columns: ``duplicate_effects`` (the sum of
        ``effects - 1`` over runs whose effect happened twice or more; 0 when
        ``effects`` is null) and ``rate_wait_max`` (a Duration: the longest
        wait for a rate-limit token; null when no run waited).
        """
        return queries.compare(self._db, [names] if isinstance(names, str) else list(names))

    @_guarded
    def export_parquet(self, directory: str | os.PathLike[str]) -> list[Path]:
        """Write every table to ``<directory>/<table>.parquet``; returns the paths.

        Each file is written atomically and only over a regular file (see
        :mod:`calsim.atomic`); a failure is a :class:`StoreError` naming the file.
        """
        return queries.export_parquet(self._db, directory)

    # -- reconciliation ----------------------------------------------------
    @_guarded
    def reconcile(self, name: str, actual: pl.DataFrame | str | os.PathLike[str], *, grace: object = "5min",
                  max_shift: object = "3h", start: object = None, end: object = None) -> pl.DataFrame:
        """Classify an actual run history against the stored ledger ``name`` (read-only).

        The stored rows are read here and compared by
        :func:`calsim.store.reconcile.reconcile`, which documents ``actual``,
        the options (``start``/``end``: compare only that window of instants),
        the columns and the classes.
        """
        return reconcile(queries.ledger_rows(self._db, name), actual, grace=grace, max_shift=max_shift,
                         start=start, end=end)
