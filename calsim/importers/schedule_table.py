"""Schedules as a table: one Parquet row per schedule, the fleet file's keys as columns.

A fleet too large to live as a Python list (a million schedules for a Dask
run) is kept as a table: :func:`write_schedules` writes one, in row groups,
from any iterable of schedules; :func:`calsim.load` reads one whole;
:func:`read` reads some of its row groups, which is what a Dask worker reads
of its share (:mod:`calsim.distributed`), so the fleet never exists whole on
the machine that submits it.

Columns, all text but ``revision`` (an integer), null where a fleet file
(:mod:`.fleet`) would leave the key out:

==================  ==========================================================
``id``, ``zone``    as in a fleet file (required)
``start``           naive local wall time, or an instant with ``Z``/offset
``rule``            RRULE, cron, ``OnCalendar=``, ``quartz:``/``robfig:`` text
``every``           ``{"period": "6h", "anchor": ..., "clock": ...}`` (JSON)
``window``          ``{"start": "08:00", "end": "20:00", "every": "30min", "days": ...}``
``gap``, ``fold``,  the policies' names
``invalid_day``
``exclude``         ``["holidays:US", "2026-12-24"]`` (JSON list)
``revision``        1, 2, ... (integer)
``effective_from``, instants
``effective_to``
``rdate``,          ``["2026-03-01T09:00", ...]`` (JSON lists)
``exdate``
``policy``          the fleet file's policy table as a JSON object
``preset``          ``{"name": "kubernetes", ...}`` (JSON object)
``account``,        a :class:`~calsim.Policy` field as a column of its own
``catchup``, ...    (text, a number or a boolean; a ``LogNormal`` duration only in ``policy``),
                    merged into the row's policy: a table exported from a
                    database reads without building JSON
==================  ==========================================================

A row is read as the fleet file reads a ``[[schedule]]`` table (the same
function), so it is checked, and refused, as that table would be; messages
name the file and the row. The file is checked as a hostile one
(:mod:`._parquet`: what its footer and pages declare, before any page is
read). :func:`write_schedules` reads each row it makes back and refuses a
schedule the table would not give back exactly (a ``datetime`` policy
duration, a calendar built from a file...), naming it: a table that loads
differently from the fleet it was written from would be worse than none.

>>> import calsim, tempfile, os
>>> fleet = calsim.examples.fleet(40, seed=3)
>>> path = os.path.join(tempfile.mkdtemp(), "fleet.parquet")
>>> write_schedules(fleet, path, row_group_size=16)
40
>>> row_groups(path)
[16, 16, 8]
>>> list(read(path, groups=[1])) == fleet[16:32], calsim.load(path) == fleet
(True, True)
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import json
import os
import stat
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from ..calendars import Calendar
from ..errors import InputError, ScheduleError, shown
from ..input_files import DEFAULT_MAX_HISTORY_BYTES, max_file_bytes, open_regular, read_all
from ..schedule import Schedule
from ..simulation.policy import Policy
from ._result import Imported, Items, Source, attach

__all__ = ["write_schedules", "read", "load", "row_groups", "is_table", "meaning", "COLUMNS", "MAX_SCHEDULES"]

COLUMNS = ("id", "zone", "start", "rule", "every", "window", "gap", "fold", "invalid_day", "exclude", "revision",
           "effective_from", "effective_to", "rdate", "exdate", "policy", "preset")
_JSON = ("every", "window", "exclude", "rdate", "exdate", "policy", "preset")
#: Policy fields a table may give as columns of their own (``account``, ``catchup``, ``cost``...), for tables
#: made elsewhere (a DuckDB or pandas export): merged into the row's policy.
POLICY_COLUMNS = tuple(f.name for f in dataclasses.fields(Policy) if f.init)
MAX_SCHEDULES = 10_000_000  # (examples.MAX_FLEET: the largest fleet calsim is built for)


def is_table(path: str | os.PathLike[str]) -> bool:
    """Whether ``path`` is a Parquet file (its first bytes), which :func:`calsim.load` reads as a schedules table.

    Only a regular file is opened (a FIFO would block the open for ever): anything else is no table, and the
    reader that then opens it refuses it by name.
    """
    try:
        if not stat.S_ISREG(os.stat(path).st_mode):
            return False
        with open(path, "rb") as f:
            return f.read(4) == b"PAR1"
    except (OSError, ValueError):
        return False


def _opened(path: str | os.PathLike[str]) -> tuple[int, int, str]:
    fd, size = open_regular(path, "schedules", None)
    cap = max_file_bytes(DEFAULT_MAX_HISTORY_BYTES)
    if size > cap:
        os.close(fd)
        raise InputError(f"schedules: {str(path)!r} is {size:,} bytes, over the limit of {cap:,} (raise it with "
                         "the CALSIM_MAX_FILE_BYTES environment variable)")
    return fd, size, Path(path).name


def row_groups(path: str | os.PathLike[str]) -> list[int]:
    """The rows of each row group of the schedules table at ``path``, from its footer alone (what a Dask client
    reads of a table: the plan, not the fleet)."""
    from ._parquet import footer_of

    fd, size, name = _opened(path)
    try:
        md = footer_of(lambda at, n: os.pread(fd, n, at), size, f"schedules: {name}", max_rows=MAX_SCHEDULES)[0]
        return [md.row_group(g).num_rows for g in range(md.num_row_groups)]
    finally:
        os.close(fd)


def load(path: str | os.PathLike[str]) -> list[Schedule]:
    """Every schedule of the table at ``path``; the first bad row is an error (as a fleet file is loaded)."""
    return list(read(path, strict=True))


def read(path: str | os.PathLike[str], *, groups: Sequence[int] | None = None, strict: bool = False) -> Imported:
    """The schedules of the table at ``path`` (only row groups ``groups``, None: all), in row order, each with
    its :class:`~calsim.importers.Source` (its row as ``item``): an :class:`~calsim.importers.Imported`, a bad
    row refused (``Imported.refused``) unless ``strict``."""
    from ._parquet import read_parquet

    fd, size, name = _opened(path)
    cap = max_file_bytes(DEFAULT_MAX_HISTORY_BYTES)
    where = f"schedules: {name}"
    try:
        frame = read_parquet(lambda at, n: os.pread(fd, n, at), lambda: _whole(fd, size, cap, name), size, where,
                             (*COLUMNS, *POLICY_COLUMNS), max_rows=MAX_SCHEDULES, max_bytes=4 * cap,
                             require=_required(where),
                             groups=groups, allowed=_allowed)
        sizes = row_groups(path) if groups else []
    finally:
        os.close(fd)
    first = [sum(sizes[:g]) for g in sorted(set(groups))] if groups else [0]
    counts = [sizes[g] for g in sorted(set(groups))] if groups else [frame.height]
    numbers = [r for f, c in zip(first, counts) for r in range(f + 1, f + c + 1)]
    items = Items(strict)
    schedules = []
    for n, entry in zip(numbers, frame.iter_rows(named=True)):
        source = Source("fleet", str(path), item=n)
        at = f"{name} row {n}"
        sid = entry.get("id")
        what = f"row {n}" + (f" {shown(sid)}" if isinstance(sid, str) else "")
        schedule = items.run(source, what, _schedule, at, entry)
        if schedule is not None:
            schedules.append(attach(schedule, source))
    return items.done(schedules)


def _whole(fd: int, size: int, cap: int, name: str) -> bytes:
    os.lseek(fd, 0, os.SEEK_SET)
    return read_all(fd, size, cap, "schedules", name)


def _allowed(name: str, t: Any, pa: Any) -> str | None:
    """Why column ``name`` of arrow type ``t`` cannot be read as a schedules table's (None: it can)."""
    types = pa.types
    if types.is_dictionary(t):
        t = t.value_type
    if name == "revision":
        return None if types.is_integer(t) else f"column 'revision' is {t}; allowed: integers"
    text = types.is_string(t) or types.is_large_string(t) or getattr(types, "is_string_view", lambda _: False)(t)
    if name in POLICY_COLUMNS:  # (a policy field: its own type, as a fleet file's policy table gives it)
        ok = text or types.is_integer(t) or types.is_floating(t) or types.is_boolean(t)
        return None if ok else f"column {name!r} is {t}; allowed: text, numbers or booleans"
    return None if text else f"column {name!r} is {t}; allowed: text"


def _required(where: str):
    def check(names: list[str]) -> None:
        missing = [c for c in ("id", "zone") if c not in names]
        if missing:
            raise InputError(f"{where}: no column {missing[0]!r} (a schedules table has columns "
                             f"{', '.join(COLUMNS)}; id and zone are required)")
    return check


def _schedule(at: str, row: dict[str, Any]) -> Schedule:
    from .fleet import _schedule as from_table

    entry: dict[str, Any] = {}
    fields = {k: v for k, v in row.items() if k in POLICY_COLUMNS and v is not None}
    for key, value in row.items():
        if value is None or key in POLICY_COLUMNS:
            continue
        if key in _JSON and not (key == "every" and not value.lstrip().startswith("{")):
            try:
                value = json.loads(value)
            except (ValueError, RecursionError):
                raise ScheduleError(f"{at}: {key}: {shown(value)} is not JSON (allowed: a JSON "
                                    f"{'list' if key in ('exclude', 'rdate', 'exdate') else 'object'})") from None
        entry[key] = value
    if fields:  # (policy fields as columns of their own: merged into the policy a JSON column may give)
        given = entry.get("policy", {})
        both = sorted(set(fields) & set(given) if isinstance(given, dict) else ())
        if both:
            raise ScheduleError(f"{at}: policy field {both[0]!r} is given twice, as a column and in the policy "
                                "column (allowed: one of them)")
        entry["policy"] = {**given, **fields} if isinstance(given, dict) else given
    return from_table(at, entry)


def write_schedules(schedules: Iterable[Schedule], path: str | os.PathLike[str], *,
                    row_group_size: int = 100_000) -> int:
    """Write ``schedules`` as a schedules table at ``path`` (Parquet, zstd), ``row_group_size`` rows a row
    group; returns how many were written. The file appears whole or not at all.

    Schedules are taken from the iterable a row group at a time, so a generator writes a fleet larger than
    memory. Each row is read back and must give the same schedule (module docstring): otherwise an
    :class:`~calsim.InputError` names the schedule and the field, and nothing is written.
    """
    import pyarrow as pa
    import pyarrow.parquet as pq

    from ..atomic import write_atomically

    if isinstance(row_group_size, bool) or not isinstance(row_group_size, int) or not 1 <= row_group_size <= 10**7:
        raise InputError(f"row_group_size: {shown(row_group_size)} (allowed a whole number from 1 to 10,000,000)")
    schema = pa.schema([(c, pa.int64() if c == "revision" else pa.string()) for c in COLUMNS])
    written = [0]

    def write(tmp: str) -> None:
        with pq.ParquetWriter(tmp, schema, compression="zstd") as writer:
            batch: list[dict[str, Any]] = []
            for s in schedules:
                batch.append(_row(s))
                if len(batch) == row_group_size:
                    writer.write_table(pa.Table.from_pylist(batch, schema=schema), row_group_size=row_group_size)
                    written[0] += len(batch)
                    batch = []
            if batch or not written[0]:
                writer.write_table(pa.Table.from_pylist(batch, schema=schema), row_group_size=row_group_size)
                written[0] += len(batch)

    write_atomically(path, write, "path")
    return written[0]


def _row(s: Schedule) -> dict[str, Any]:
    if not isinstance(s, Schedule):
        raise InputError(f"schedules: expected calsim.Schedule objects, got {type(s).__name__}")
    at = f"write_schedules: schedule {s.id!r}"
    row: dict[str, Any] = dict.fromkeys(COLUMNS)
    row.update(id=s.id, zone=s.zone, start=_text(s.start, f"{at}: start"), revision=s.revision,
               effective_from=_text(s.effective_from, f"{at}: effective_from"),
               effective_to=_text(s.effective_to, f"{at}: effective_to"))
    kind = getattr(s.rule, "kind", None)  # (a rule object's kind names its fleet-file key: every, window)
    if isinstance(s.rule, str):
        row["rule"] = s.rule
    elif kind in ("every", "window"):
        row[kind] = _json(_plain(s.rule), f"{at}: {kind}")
    else:
        raise InputError(f"{at}: rule {type(s.rule).__name__} has no table form (allowed: rule text, Every, Window)")
    for key in ("gap", "fold", "invalid_day"):
        value = getattr(s, key)
        if not isinstance(value, str):
            raise InputError(f"{at}: {key} {shown(value)} has no table form (allowed: a policy's name)")
        row[key] = value
    if s.exclude:
        row["exclude"] = json.dumps([_calendar(c, at) for c in _items(s.exclude)])
    for key in ("rdate", "exdate"):
        if getattr(s, key):
            row[key] = json.dumps([_text(t, f"{at}: {key}") for t in getattr(s, key)])
    if s.policy is not None:
        row["policy"] = _json(_policy(s.policy, at), f"{at}: policy")
    back = _schedule(at, row)
    if meaning(back) != meaning(s):
        raise InputError(f"{at}: does not read back as the same schedule from a table row "
                         f"({_first_difference(back, s)}); give its values as text, as a fleet file would")
    return row


def _items(exclude: object) -> list:
    return list(exclude) if isinstance(exclude, (list, tuple)) else [exclude]


def _calendar(c: object, at: str) -> str:
    if isinstance(c, str):
        return c
    if isinstance(c, dt.date):
        return c.isoformat()
    if isinstance(c, Calendar) and c.country:
        return f"{'business' if c.business else 'holidays'}:{c.country}{'-' + c.subdiv if c.subdiv else ''}"
    raise InputError(f"{at}: exclude {shown(c)} has no table form (allowed: calendar names such as "
                     "'holidays:US', dates, or calendars made by Calendar.holidays/business_days)")


def _text(value: object, at: str) -> str | None:
    if value is None or isinstance(value, str):
        return value
    if isinstance(value, (dt.datetime, dt.date)):
        return value.isoformat()
    raise InputError(f"{at}: {shown(value)} has no table form (allowed: ISO 8601 text or a datetime)")


def _plain(value: object) -> Any:
    """A dataclass (a rule, a policy, its LogNormal duration) as the dict of its init fields, as a fleet file
    writes it; anything else as it is."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: _plain(getattr(value, f.name)) for f in dataclasses.fields(value) if f.init}
    return value


def _json(value: object, at: str) -> str:
    try:
        return json.dumps(value, sort_keys=True)
    except (TypeError, ValueError):
        raise InputError(f"{at}: {shown(value)} has no table form (allowed: text and numbers, as a fleet file "
                         "gives them)") from None


def _policy(policy: object, at: str) -> dict[str, Any]:
    if not isinstance(policy, Policy):
        raise InputError(f"{at}: policy {type(policy).__name__} has no table form (allowed: a calsim.Policy)")
    default = _plain(Policy())
    return {k: v for k, v in _plain(policy).items() if v != default.get(k)}


def meaning(s: Schedule) -> tuple:
    """What a schedule means, not how its values were given (a datetime start and its ISO text are one)."""
    return (s.id, s.zone, s.rule, s.gap, s.fold, s.invalid_day, s.calendars, s.revision, s.start_wall, s.start_utc,
            s.from_utc, s.to_utc, s.rdate_wall, s.exdate_wall, s.policy)


def _first_difference(a: Schedule, b: Schedule) -> str:
    names = ("id", "zone", "rule", "gap", "fold", "invalid_day", "exclude", "revision", "start", "start",
             "effective_from", "effective_to", "rdate", "exdate", "policy")
    for name, x, y in zip(names, meaning(a), meaning(b)):
        if x != y:
            return f"its {name} differs"
    return "a field differs"  # pragma: no cover - meaning differed somewhere
