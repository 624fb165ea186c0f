"""What a store file must hold before calsim reads anything from it: :func:`check`.

A DuckDB file is not only data. A view runs its query whenever it is read, and
that query may call ``read_text('/any/local/file')`` or ``read_csv``, or recurse
for ever; a macro kept in the file stands in for the built-in function of the
same name in every query of the connection (measured with DuckDB 2.0.1: a
macro ``count_star`` answers ``count(*)``, ``epoch_us`` and even the table
function ``duckdb_functions()`` are replaced). A store may come from someone
else (a CI artifact, a file attached to a bug report), so before calsim reads
any of it, :func:`check` reads DuckDB's catalog only, through the
``system.main`` functions, which no file can shadow, and the ``calsim_meta``
table once it is known to be calsim's table, and refuses with a one-line
:class:`~calsim.errors.StoreError` naming the object and what was expected:

* any **macro or function** (scalar or table) in the file, wherever it is;
* ``calsim_meta.schema_version`` that is not a layout this calsim knows (a whole
  number from 1 to :data:`.migrations.SCHEMA_VERSION`; a newer one is a
  :class:`~calsim.errors.SchemaVersionError`, checked before anything else of
  the layout, which this calsim cannot know);
* calsim's **tables** (``calsim_meta``, ``scenarios``, ``schedules``,
  ``occurrence_tables``, ``tz_diffs``, the ``occurrences`` table of layout 1,
  and each scenario's ``occ_<n>``) when one is missing, is a view, lacks a
  column, has a column of another type or one calsim does not write, or
  computes a column (``GENERATED``: it would run an expression on every read;
  ``DEFAULT``: on an insert), and, for the tables calsim writes to, any CHECK
  or FOREIGN KEY constraint or index (run on every write);
* any **view** that is not one calsim writes, or whose definition is not the
  text calsim writes for it: DuckDB keeps a view as its parsed query and shows
  it as SQL text (``duckdb_views().sql``); the text calsim would write, for
  this layout and the scenarios ``occurrence_tables`` lists, is shown the same
  way (``json_serialize_sql``, parsed only, on a private in-memory database) and
  the two must be equal;
* calsim's **ENUM types** holding other values, and any other type;
* an attached dataset's view (the rows of a scenario made by
  :meth:`~calsim.LedgerStore.attach`) reading anything but absolute paths of
  Parquet files, or one that exists and is not a regular file (a FIFO would
  block the read for ever, a device would never end). Those paths are the
  only files a store opened ``read_only`` may read (:attr:`Layout.files`,
  DuckDB's ``allowed_paths``).

Other tables (in any schema, with their indexes), and sequences are left
alone: they are data, which runs nothing when nobody reads it, and calsim
never reads them.
Layouts 1 to 4 are checked as calsim wrote them, before a migration changes
anything. What this cannot check is DuckDB's own reading of the file: a
crafted file may still make DuckDB fail (or, at worst, crash) while it opens it.

>>> import duckdb
>>> from calsim.store.connection import Connection
>>> db = Connection(":memory:", read_only=False)
>>> check(db.con, "':memory:'")
Layout(version=5, files=())
>>> _ = db.con.execute("CREATE MACRO epoch_us(t) AS 0")
>>> try:
...     check(db.con, "'x.duckdb'")
... except StoreError as exc:
...     print(exc)
path: 'x.duckdb' is not a ledger store as calsim writes it: it holds macro 'epoch_us' (a store holds no macros: one stands in for the built-in function of its name in every query)
>>> db.close()
"""  # noqa: E501  (a doctest output line)

from __future__ import annotations

import functools
import os
import re
import stat
import threading
from dataclasses import dataclass
from typing import Any

from ..atomic import show_path
from ..errors import SchemaVersionError, StoreError
from ..simulation.ledger_schema import KIND, LEDGER_REASONS, LEDGER_STATES
from .migrations import SCHEMA_VERSION
from .ledger_records import shown_name
from .schema import DDL_V1, OCCURRENCE_TABLES_DDL, WORKER_COLUMNS, enum_sql, gaps_sql
from .tables import OCC_COLUMNS, checked_table, dataset_sql, occurrences_sql, wrapped_dataset_sql

__all__ = ["Layout", "check", "MAX_SCENARIOS"]

#: The ledger columns of a scenario's table or view: today's, or those of layouts 1 to 4 (without
#: the worker-level columns layout 5 added), which a file of those layouts may hold.
_COLUMN_SETS = (tuple(OCC_COLUMNS), tuple(c for c in OCC_COLUMNS if c not in WORKER_COLUMNS))
#: Scenarios one store may hold: the ``occurrences`` view is the UNION ALL of their tables (a store of
#: 100,000 scenarios makes a 60 MB view text, which DuckDB takes seconds to bind).
MAX_SCENARIOS = 100_000
_FIXED_TABLES = ("calsim_meta", "scenarios", "schedules", "occurrence_tables", "tz_diffs")
_OCC_ENUM = re.compile(r"occ_[0-9]{1,18}_schedule_id")
# A view's text as DuckDB shows it: which scenario tables an ``occurrences`` view reads (in its
# order), the file list of an attached dataset's view, a column it reads as NULL.
_FROM_OCC = re.compile(r"\bFROM (occ_[0-9]{1,18})\b")
_FILES = re.compile(r"\bread_parquet\(list_value\(((?:'(?:[^']|'')*'(?:, )?)+)\)\)")
_STRING = re.compile(r"'((?:[^']|'')*)'")
_NULL_AS = re.compile(r'CAST\(NULL AS [^()]*?\) AS "?([a-z_]+)"?(?=[,) ])')


@dataclass(frozen=True)
class Layout:
    """What :func:`check` found: the layout ``version`` (None: an empty database, a new store) and the
    Parquet ``files`` attached datasets read (the only files a store opened to read may read)."""

    version: int | None
    files: tuple[str, ...] = ()


def _refuse(shown: str, what: str) -> StoreError:
    return StoreError(f"path: {shown} is not a ledger store as calsim writes it: {what}")


def check(con: Any, shown: str) -> Layout:
    """Check the store open on ``con`` (``shown``: its path for messages) before anything reads it.

    Raises :class:`~calsim.errors.StoreError` naming the first object that
    is not as calsim writes it (see the module's docstring), or
    :class:`~calsim.errors.SchemaVersionError` for a layout newer than this
    calsim. Reads DuckDB's catalog and, once it is known to be calsim's
    table, ``calsim_meta``; nothing else.
    """
    db = con.execute("SELECT system.main.current_database()").fetchall()[0][0]
    _no_functions(con, db, shown)
    tables = _tables(con, db)
    views = {(s, v): sql for s, v, sql in con.execute(
        "SELECT schema_name, view_name, sql FROM system.main.duckdb_views() WHERE database_name = ?",
        [db]).fetchall()}
    types = _types(con, db)
    main_views = {v: sql for (s, v), sql in views.items() if s == "main"}
    if "calsim_meta" not in tables:
        if "calsim_meta" in main_views:
            raise _refuse(shown, "table 'calsim_meta' is a view, expected calsim's table")
        held = sorted(tables) + sorted(f"{s}.{v}" for s, v in views) + sorted(types)
        if held:
            shown_held = ", ".join(shown_name(h) for h in held[:8]) + (f" and {len(held) - 8} more" if len(held) > 8
                                                                       else "")
            raise StoreError(f"path: {shown} is a DuckDB file but not a calsim ledger store (it has {shown_held} "
                             "and no calsim_meta table)")
        return Layout(None)
    expected = _expected_columns()
    _check_columns(shown, "calsim_meta", tables["calsim_meta"], expected["calsim_meta"])
    version = _version(con, shown)
    elsewhere = sorted(f"{s}.{v}" for s, v in views if s != "main")
    if elsewhere:
        raise _refuse(shown, f"it holds view {shown_name(elsewhere[0])}, which calsim does not write "
                             "(a view runs its query when read)")
    reasons = _check_types(shown, types, version)
    ledger = _ledger_columns(reasons)
    sets = _COLUMN_SETS[: 1 if version >= 5 else 2]  # the ledger columns a table of this layout may have
    fixed = [t for t in _FIXED_TABLES if version >= 2 or t != "occurrence_tables"]
    for name in fixed + (["occurrences"] if version == 1 else []):
        if name not in tables:
            what = "a view" if name in main_views else "missing"
            raise _refuse(shown, f"table {name!r} is {what}, expected calsim's table (layout {version})")
        _check_columns(shown, name, tables[name], expected[name] if name != "occurrences"
                       else _pick(tables[name], ledger, _COLUMN_SETS))
    _check_writes(con, db, shown, fixed + (["occurrences"] if version == 1 else []))
    occ: dict[str, str] = {}
    if version >= 2:
        rows = con.execute(f"SELECT scenario, table_name FROM occurrence_tables LIMIT {MAX_SCENARIOS + 1}").fetchall()
        if len(rows) > MAX_SCENARIOS:
            raise _refuse(shown, f"occurrence_tables lists more than {MAX_SCENARIOS:,} scenarios")
        for scenario, table in rows:
            occ[checked_table(table)] = scenario
    known = {*_fixed_views(version), *(["occurrences"] if version >= 2 else []), *occ}
    for name in main_views:
        if name not in known:
            raise _refuse(shown, f"it holds view {shown_name(name)}, which calsim does not write "
                                 "(a view runs its query when read)")
    for name, body in _fixed_views(version).items():
        _check_view(shown, name, main_views, tables, [body], version)
    files: list[str] = []
    for table, scenario in occ.items():
        if table in tables:
            _check_columns(shown, table, tables[table], _pick(tables[table], ledger, sets), enum_ids=True)
        elif table in main_views:
            files.extend(_check_dataset_view(shown, table, scenario, main_views[table], version))
        else:
            raise _refuse(shown, f"occurrence_tables names {table} for scenario {shown_name(scenario)}, "
                                 "and the file holds no such table")
    if version >= 2:
        order = _FROM_OCC.findall(main_views.get("occurrences", ""))
        if sorted(order) != sorted(occ):
            order = sorted(occ)
        _check_view(shown, "occurrences", main_views, tables,
                    [occurrences_sql(order, list(cols)) for cols in sets], version)
    return Layout(version, tuple(dict.fromkeys(files)))


def _no_functions(con: Any, db: str, shown: str) -> None:
    """Refuse any macro or function the file holds (the catalog's ``internal`` flag is the file's to set: not asked)."""
    found = con.execute("SELECT schema_name, function_name, function_type FROM system.main.duckdb_functions() "
                        "WHERE database_name = ? ORDER BY ALL LIMIT 1", [db]).fetchall()
    if found:
        schema, name, kind = found[0]
        kind = {"table_macro": "table macro"}.get(kind, kind)
        shown_fn = shown_name(name if schema == "main" else f"{schema}.{name}")
        raise _refuse(shown, f"it holds {kind} {shown_fn} (a store holds no macros: one stands in for the "
                             "built-in function of its name in every query)")


def _tables(con: Any, db: str) -> dict[str, list[tuple[str, str, bool]]]:
    """Each table of schema ``main``: its columns (name, type as DuckDB shows it, computed) in order.

    A column is "computed" when it is ``GENERATED`` (evaluated on every read)
    or has a ``DEFAULT`` (evaluated on an insert that leaves it out); calsim
    writes neither.
    """
    out: dict[str, list[tuple[str, str, bool]]] = {
        t: [] for (t,) in con.execute("SELECT table_name FROM system.main.duckdb_tables() "
                                      "WHERE database_name = ? AND schema_name = 'main'", [db]).fetchall()}
    for table, col, dtype, generated, default in con.execute(
            "SELECT table_name, column_name, data_type, is_generated, column_default FROM system.main.duckdb_columns() "
            "WHERE database_name = ? AND schema_name = 'main' ORDER BY table_name, column_index", [db]).fetchall():
        if table in out:
            out[table].append((col, dtype, bool(generated) or default is not None))
    return out


def _check_writes(con: Any, db: str, shown: str, tables: list[str]) -> None:
    """Refuse what would run an expression when calsim writes to its own ``tables``: a CHECK or FOREIGN KEY
    constraint, an index (calsim declares keys only: PRIMARY KEY, UNIQUE, NOT NULL)."""
    for table, kind in con.execute(
            "SELECT table_name, constraint_type FROM system.main.duckdb_constraints() WHERE database_name = ? "
            "AND schema_name = 'main' AND constraint_type NOT IN ('PRIMARY KEY', 'UNIQUE', 'NOT NULL') "
            "ORDER BY ALL", [db]).fetchall():
        if table in tables:
            raise _refuse(shown, f"table {table} has a {kind} constraint, which calsim does not write")
    for index, table in con.execute(
            "SELECT index_name, table_name FROM system.main.duckdb_indexes() WHERE database_name = ? "
            "AND schema_name = 'main' ORDER BY ALL", [db]).fetchall():
        if table in tables:
            raise _refuse(shown, f"table {table} has an index {shown_name(index)}, which calsim does not make")


def _types(con: Any, db: str) -> dict[str, tuple[str, str, tuple[str, ...] | None]]:
    """Each type the file defines: its schema, kind (``ENUM``, ``STRUCT``...) and ENUM labels."""
    return {name: (schema, kind, tuple(labels) if labels is not None else None)
            for schema, name, kind, labels in con.execute(
                "SELECT schema_name, type_name, logical_type, labels FROM system.main.duckdb_types() "
                "WHERE database_name = ? AND NOT internal", [db]).fetchall()}


def _version(con: Any, shown: str) -> int:
    """The layout ``calsim_meta.schema_version`` gives, refused unless it is a whole number this calsim knows."""
    rows = con.execute("SELECT value FROM calsim_meta WHERE key = 'schema_version' LIMIT 2").fetchall()
    if len(rows) != 1:
        raise _refuse(shown, "calsim_meta holds no schema_version" if not rows
                      else "calsim_meta holds two schema_version rows")
    raw = rows[0][0]
    allowed = f"expected a layout version, a whole number from 1 to {SCHEMA_VERSION}"
    if not isinstance(raw, str) or not re.fullmatch(r"[0-9]{1,9}", raw):
        return_shown = shown_name(raw) if isinstance(raw, str) else "NULL"
        raise _refuse(shown, f"calsim_meta.schema_version is {return_shown}, {allowed}")
    version = int(raw)
    if version > SCHEMA_VERSION:
        raise SchemaVersionError(
            f"path: {shown} has store schema version {version}, newer than {SCHEMA_VERSION} "
            "(the newest this calsim knows); upgrade calsim to read it")
    if version < 1:
        raise _refuse(shown, f"calsim_meta.schema_version is {raw!r}, {allowed}")
    return version


def _check_types(shown: str, types: dict, version: int) -> tuple[str, ...]:
    """Refuse a type calsim does not make, or one of calsim's with other values; the reasons the store's
    ``calsim_reason`` holds (all of today's from layout 5; before, the first ones, which a migration completes)."""
    want = {"calsim_kind": tuple(KIND.categories.to_list()), "calsim_state": tuple(LEDGER_STATES)}
    for name, (schema, kind, _labels) in sorted(types.items()):
        mine = schema == "main" and (name in ("calsim_kind", "calsim_state", "calsim_reason")
                                     or _OCC_ENUM.fullmatch(name))
        if not mine:
            raise _refuse(shown, f"it holds type {shown_name(name)} ({kind}), which calsim does not make")
        if kind != "ENUM":
            raise _refuse(shown, f"type {name} is {kind}, expected calsim's ENUM")
    for name, values in want.items():
        if name not in types:
            raise _refuse(shown, f"it has no type {name} (layout {version} has one)")
        if types[name][2] != values:
            raise _refuse(shown, f"type {name} holds {_values(types[name][2])}, expected {_values(values)}")
    if "calsim_reason" not in types:
        raise _refuse(shown, f"it has no type calsim_reason (layout {version} has one)")
    reasons = types["calsim_reason"][2] or ()
    ok = reasons == tuple(LEDGER_REASONS) if version >= 5 else (
        bool(reasons) and reasons == tuple(LEDGER_REASONS[:len(reasons)]))
    if not ok:
        expected = "every reason" if version >= 5 else "a prefix of"
        raise _refuse(shown, f"type calsim_reason holds {_values(reasons)}, expected {expected} "
                             f"{_values(tuple(LEDGER_REASONS))} (layout {version})")
    return reasons


def _values(values: tuple[str, ...] | None) -> str:
    if values is None:
        return "no values"
    text = ", ".join(shown_name(v) for v in values[:6])
    return "[" + text + (f" and {len(values) - 6} more" if len(values) > 6 else "") + "]"


def _check_columns(shown: str, table: str, got: list[tuple[str, str, bool]], want: list[tuple[str, str]],
                   enum_ids: bool = False) -> None:
    """Refuse a table whose columns are not ``want`` (names and types, in order), or one that computes a column.

    ``enum_ids``: a scenario's table, whose ``schedule_id`` is its own ENUM (any values).
    """
    for name, _, computed in got:
        if computed:
            raise _refuse(shown, f"column {table}.{shown_name(name)} is computed (GENERATED or DEFAULT), "
                                 "expected a stored column")
    have = {name: dtype for name, dtype, _ in got}
    for name, dtype in want:
        if name not in have:
            raise _refuse(shown, f"table {table} has no column {name} ({dtype})")
        ok = have[name].startswith("ENUM(") if (enum_ids and name == "schedule_id") else have[name] == dtype
        if not ok:
            expected = "an ENUM" if (enum_ids and name == "schedule_id") else dtype
            raise _refuse(shown, f"column {table}.{name} is {shown_name(have[name])}, expected {expected}")
    names = [n for n, _ in want]
    extra = [n for n, _, _ in got if n not in names]
    if extra:
        raise _refuse(shown, f"table {table} has a column {shown_name(extra[0])} that calsim does not write")
    if [n for n, _, _ in got] != names:
        raise _refuse(shown, f"table {table} has calsim's columns in another order")


def _pick(got: list[tuple[str, str, bool]], ledger: dict, sets: tuple) -> list[tuple[str, str]]:
    """The ledger columns of ``sets`` whose names ``got`` has (else the first: the message names what differs)."""
    names = [n for n, _, _ in got]
    return next((ledger[s] for s in sets if [n for n, _ in ledger[s]] == names), ledger[sets[0]])


def _fixed_views(version: int) -> dict[str, str]:
    """The views every store has, name -> query, as layout ``version`` defines them."""
    views = {m[1]: m[2] for m in (re.match(r"CREATE VIEW (\w+) AS\n(.*)", s, re.S) for s in DDL_V1) if m}
    if version >= 4:
        views["observation_gaps"] = gaps_sql("occurrences")
    return views


def _check_view(shown: str, name: str, views: dict[str, str], tables: dict, bodies: list[str], version: int) -> None:
    """Refuse unless ``name`` is a view whose definition is one of ``bodies`` (the queries calsim writes)."""
    if name not in views:
        what = "a table" if name in tables else "missing"
        raise _refuse(shown, f"view {name!r} is {what}, expected calsim's view (layout {version})")
    if not any(_same_view(name, views[name], body) for body in bodies):
        raise _refuse(shown, f"view {name!r} is not the definition calsim writes for it (layout {version}; "
                             "a view runs its query when read)")


def _same_view(name: str, stored: str, body: str) -> bool:
    """Whether the view text DuckDB shows (``stored``) is ``body`` as calsim writes it.

    Shown the same way (parsed and printed by DuckDB), the two texts are
    equal. A view a DuckDB of another version stored may print differently
    yet parse to the same query: then its own text, printed again, is
    ``body``'s (only for a text of about the expected size: nothing larger is parsed).
    """
    want = _render(body)
    if want is None:
        return False
    prefix = f"CREATE VIEW {name} AS "
    if stored == f"{prefix}{want};":
        return True
    if not (stored.startswith(prefix) and stored.endswith(";")) or len(stored) > 2 * len(want) + 1000:
        return False
    return _render(stored[len(prefix):-1]) == want


def _check_dataset_view(shown: str, view: str, scenario: str, stored: str, version: int) -> list[str]:
    """Refuse an attached dataset's view unless calsim wrote it; the Parquet files it reads."""
    found = _FILES.search(stored)
    files = [m.replace("''", "'") for m in _STRING.findall(found[1])] if found else []
    nulls = set(_NULL_AS.findall(stored))
    bodies = []
    for cols in _COLUMN_SETS[: 1 if version >= 5 else 2]:  # as attach wrote it, under this layout or before
        have = [c for c in cols if c not in WORKER_COLUMNS or c not in nulls]
        bodies.append(dataset_sql(files, have, [c for c in cols if c != "seq"]))
        # (files that leave the scenario to their directory: the view names it)
        bodies.append(dataset_sql(files, [c for c in have if c != "scenario"], [c for c in cols if c != "seq"],
                                  name=scenario))
    if version >= 5:  # a layout-4 view a migration gave the worker-level columns, as NULLs
        bodies.append(wrapped_dataset_sql(dataset_sql(files, None, [c for c in _COLUMN_SETS[1] if c != "seq"]),
                                          WORKER_COLUMNS))
    if not any(_same_view(view, stored, body) for body in bodies):
        raise _refuse(shown, f"view {view} (the rows of scenario {shown_name(scenario)}) is not the definition "
                             f"calsim writes for an attached dataset (layout {version}; a view runs its query "
                             "when read)")
    for f in files:
        if not os.path.isabs(f):
            raise _refuse(shown, f"view {view} (scenario {shown_name(scenario)}) reads {show_path(f)}, "
                                 "a relative path (attach records absolute ones)")
        try:
            st = os.stat(f)
        except (OSError, ValueError):
            continue  # missing or unreachable: the read fails, naming it
        if not stat.S_ISREG(st.st_mode):
            raise _refuse(shown, f"view {view} (scenario {shown_name(scenario)}) reads {show_path(f)}, which is "
                                 "not a regular file (an attached dataset's files are Parquet files)")
    return files


# -- what calsim writes, as DuckDB shows it: on a private in-memory database -----------------------------------

_SCRATCH: Any = None
_LOCK = threading.Lock()
_FORSAKEN: list[Any] = []  # the parent's scratch databases, never closed in a child


def _after_fork() -> None:
    """A child made by ``fork`` makes its own scratch database and lock (DuckDB's threads, and a lock another
    thread held, do not survive a fork). The parent's database is kept, not dropped: closing it in the child
    would join threads the child does not have (a segmentation fault in every ``subprocess`` started with a
    ``preexec_fn`` after a store was opened)."""
    global _SCRATCH, _LOCK
    if _SCRATCH is not None:
        _FORSAKEN.append(_SCRATCH)
    _SCRATCH, _LOCK = None, threading.Lock()


os.register_at_fork(after_in_child=_after_fork)


def _scratch() -> Any:
    """A private in-memory DuckDB holding a new store's tables: what calsim's own text looks like once DuckDB
    has parsed it. Nothing of a store file ever reaches it but view texts to parse. Called holding ``_LOCK``.
    """
    global _SCRATCH
    if _SCRATCH is None:
        import duckdb

        from .store_paths import CONFIG

        con = duckdb.connect(":memory:", config=dict(CONFIG, enable_external_access=False))
        for stmt in DDL_V1:
            con.execute(stmt)
        con.execute(OCCURRENCE_TABLES_DDL)
        _SCRATCH = con
    return _SCRATCH


@functools.lru_cache(maxsize=1)
def _expected_columns() -> dict[str, list[tuple[str, str]]]:
    """The columns (name, type as DuckDB shows it) of each table a new store makes."""
    with _LOCK:
        rows = _scratch().execute("SELECT table_name, column_name, data_type FROM duckdb_columns() "
                                  "WHERE database_name = 'memory' ORDER BY table_name, column_index").fetchall()
    out: dict[str, list[tuple[str, str]]] = {}
    for table, col, dtype in rows:
        out.setdefault(table, []).append((col, dtype))
    return out


@functools.lru_cache(maxsize=8)
def _ledger_columns(reasons: tuple[str, ...]) -> dict[tuple[str, ...], list[tuple[str, str]]]:
    """The columns of a scenario's table (layout 1: the ``occurrences`` table) for each column set, where the
    ``reason`` ENUM holds ``reasons``."""
    full = dict(_expected_columns()["occurrences"])
    with _LOCK:
        full["reason"] = _scratch().execute(f"SELECT typeof(CAST(NULL AS {enum_sql(reasons)}))").fetchall()[0][0]
    return {cols: [(c, full[c]) for c in cols] for cols in _COLUMN_SETS}


def _render(body: str) -> str | None:
    """``body`` (one SELECT) as DuckDB prints it once parsed, or None if it does not parse (remembered when short:
    the views every store has, the ``occurrences`` view of a few scenarios)."""
    return _render_short(body) if len(body) <= 65536 else _render_now(body)


@functools.lru_cache(maxsize=256)
def _render_short(body: str) -> str | None:
    return _render_now(body)


def _render_now(body: str) -> str | None:
    import duckdb

    with _LOCK:
        try:
            return _scratch().execute("SELECT json_deserialize_sql(json_serialize_sql(?))", [body]).fetchall()[0][0]
        except duckdb.Error:
            return None

