"""Import Dagster schedules: ``dg list defs --json``, or the GraphQL API's ``schedulesOrError``.

Accepted input (JSON):

* what ``dg list defs --json`` prints (``DgDefinitionMetadataSchema``,
  ``dagster_dg_cli/cli/schemas/list_schemas.py:150-158`` in dagster-dg-cli
  1.13.27): ``{"assets": [...], ..., "schedules": [{"name", "cron_schedule",
  "source"}], ...}``. A schedule's list of cron strings is joined with
  ``", "`` there (``dagster/components/list/list.py:231-235``, Dagster
  1.13.29). It carries neither the zone nor the status: the zone is
  ``zone=`` (Dagster's default is UTC) unless the entry has an
  ``execution_timezone``, and the status is unknown unless it has a
  ``default_status`` (both read when present, e.g. joined in by hand);
* a GraphQL response with ``schedulesOrError { ... on Schedules { results {
  name cronSchedule executionTimezone scheduleState { status } } } }``
  (``{"data": {...}}`` or the inner object; ``repositoryOrError { ... on
  Repository { schedules { ... } } }`` too). ``cronSchedule`` is
  ``str(cron_schedule)`` there, a Python list's repr for several strings
  (``dagster_graphql/schema/schedules/schedules.py:86-88``), and
  ``executionTimezone`` is ``"UTC"`` when the definition has none (92-96).

Every schedule maps onto :func:`calsim.presets.dagster`:

=======================================  ============================================================
Dagster (1.13.29)                        calsim
=======================================  ============================================================
``name``                                 the schedule id; ``<name>:<n>`` (``n`` from 1) for each
                                         string of a list ``cron_schedule``
``cron_schedule`` / ``cronSchedule``     the cron rule; what Dagster refuses is refused (not 5
                                         fields after croniter's expansion, the 30th or 31st of
                                         February: ``_utils/schedules.py:61-77``)
``execution_timezone``                   the zone; absent: ``zone=`` (default UTC, as the daemon:
                                         ``_scheduler/scheduler.py:600-602``)
``scheduleState.status: STOPPED``,       ``Imported.presets[id].suspended`` and a note (a
``default_status: STOPPED``              definition's default is STOPPED,
                                         ``schedule_definition.py:608``)
=======================================  ============================================================

A schedule that cannot be read (a bad cron string, an unknown zone, a field
of the wrong type) is refused alone (``Imported.refused``; each cron string
of a list is its own item); ``strict=True`` raises the first. A GraphQL
error (``errors``, or a ``schedulesOrError`` that is a
``RepositoryNotFoundError``/``PythonError``) is an error for the whole file.

>>> from calsim.importers.dagster import from_dagster
>>> d = from_dagster('{"schedules": [{"name": "daily_refresh", "cron_schedule": "0 2 * * *"}], "assets": []}')
>>> s = d[0]
>>> s.id, s.zone, s.rule, d.presets[s.id].name
('daily_refresh', 'UTC', '0 2 * * *', 'dagster')
"""

from __future__ import annotations

import re
from typing import Any

from ..errors import CalsimError, InputError, RuleError, ScheduleError
from ..presets import Preset, dagster
from ..schedule import Schedule
from ._fields import applied, cron, obj, show, suspended, text, zone as check_zone
from ._result import Format, Imported, Items, Source, read_input, reraise
from ._yaml import load_json
from .crontab import DEFAULT_START

__all__ = ["from_dagster"]

FORMAT: Format = "dagster"
_QUOTED = re.compile(r"""\s*(?:'([^'\\]*)'|"([^"\\]*)")\s*(?:,|$)""")
_STATUS = ("RUNNING", "STOPPED")


def from_dagster(path_or_text: object, *, zone: str = "UTC", source: str | None = None,
                 start: object = DEFAULT_START, max_catchup_runs: int = 5, strict: bool = False) -> Imported:
    """Read Dagster schedules (see the module docstring).

    Parameters
    ----------
    path_or_text
        A path, or the JSON itself (a ``str`` starting with ``{`` or holding
        a line break, or ``bytes``).
    zone
        The zone of a schedule whose entry names none (Dagster's default: UTC).
    source
        Name used in messages instead of the file's.
    start
        Anchor of every rule (local wall time).
    max_catchup_runs
        The daemon's setting, passed to the preset (it has no effect on
        schedules in Dagster 1.13; see the preset).
    strict
        False (default): a schedule that cannot be read is refused
        (``Imported.refused``) and the others imported; True: the first raises.

    Raises
    ------
    InputError
        Not JSON, a GraphQL error, no schedule in the file; with
        ``strict=True`` (or when every schedule is refused) a schedule's error.
    RuleError, ScheduleError, UnknownZoneError
        A schedule's cron string, status or zone (only with ``strict=True``
        or when every schedule is refused).
    """
    if isinstance(path_or_text, str) and path_or_text.lstrip()[:1] in ("{", "["):
        path_or_text = path_or_text + "\n"  # a one-line JSON document is content, not a file name
    text_, file, path = read_input(path_or_text, "dagster", source)
    label = source or (path.name if path is not None else file)
    where = f"dagster: {label}"
    default_zone = check_zone(zone, f"{where}: zone")
    try:
        preset = dagster(max_catchup_runs=max_catchup_runs)
    except CalsimError as exc:
        raise reraise(exc, where) from None
    entries, graphql = _entries(load_json(text_, where), where)
    if not entries:
        raise InputError(f"{where}: no schedule in the file (dg list defs --json lists them under 'schedules')")
    items = Items(strict)
    schedules: list[Schedule] = []
    presets: dict[str, Preset] = {}
    seen: dict[str, int] = {}
    for k, raw in enumerate(entries, 1):
        name = raw.get("name") if isinstance(raw, dict) else None
        at = f"{where} schedules[{k - 1}]"
        src = Source(FORMAT, file, item=k)
        what = f"schedule {name}" if isinstance(name, str) else f"schedules[{k - 1}]"
        crons = items.run(src, what, _crons, raw, at, graphql)
        if crons is None:
            continue
        name = str(raw["name"])
        if name in seen:
            items.refuse(src, what, ScheduleError(f"{at}: name: {name!r} is given twice (first schedules"
                                                  f"[{seen[name] - 1}]); a schedule's name is unique"))
            continue
        seen[name] = k
        for n, expr in enumerate(crons, 1):
            sid = name if len(crons) == 1 else f"{name}:{n}"
            esrc = Source(FORMAT, file, item=k, text=expr if isinstance(expr, str) else show(expr))
            out = items.run(esrc, sid, _schedule, raw, expr, at if len(crons) == 1 else f"{at} cron[{n - 1}]",
                            sid, esrc, default_zone, start, preset, graphql, len(crons))
            if out is not None:
                schedules.append(out[0])
                presets[sid] = out[1]
    return items.done(schedules, (), presets)


def _entries(doc: Any, where: str) -> tuple[list, bool]:
    """The schedule objects of the document, and whether they are GraphQL's (camelCase)."""
    if isinstance(doc, list):
        return doc, bool(doc) and isinstance(doc[0], dict) and "cronSchedule" in doc[0]
    doc = obj(doc, where, "a JSON object (dg list defs --json, or a GraphQL response)")
    if doc.get("errors"):
        first = doc["errors"][0] if isinstance(doc["errors"], list) and doc["errors"] else doc["errors"]
        msg = first.get("message") if isinstance(first, dict) else first
        raise InputError(f"{where}: errors: the GraphQL query failed: {show(msg)}")
    data = doc.get("data", doc)
    data = obj(data, f"{where}: data")
    for key, field in (("schedulesOrError", "results"), ("repositoryOrError", "schedules")):
        if key in data:
            inner = obj(data[key], f"{where}: {key}")
            if field not in inner:
                kind = inner.get("__typename", "an error")
                on = "Schedules" if field == "results" else "Repository"
                raise InputError(f"{where}: {key}: {show(kind)}: {show(inner.get('message', ''))} (expected "
                                 f"'{field}'; query it with '... on {on} {{ {field} {{ ... }} }}')")
            found = inner[field]
            if not isinstance(found, list):
                raise InputError(f"{where}: {key}.{field}: expected a list of schedules, got {show(found)}")
            return found, True
    if "schedules" in data:
        found = data["schedules"]
        if not isinstance(found, list):
            raise InputError(f"{where}: schedules: expected a list of schedules, got {show(found)}")
        return found, False
    raise InputError(f"{where}: no schedules: expected dg list defs --json output ('schedules') or a GraphQL "
                     f"response with schedulesOrError.results, got keys {show(sorted(map(str, data)))}")


def _crons(raw: Any, at: str, graphql: bool) -> list[str]:
    """The cron strings of one schedule entry (a list's repr, a ``", "``-joined list or a JSON list)."""
    entry = obj(raw, at, "a schedule object")
    name = text(entry.get("name"), f"{at}: name", required=True)
    key = "cronSchedule" if graphql else "cron_schedule"
    value = entry.get(key, entry.get("cron_schedule" if graphql else "cronSchedule"))
    where = f"{at} {name!r}: {key}"
    if isinstance(value, list):
        crons = value
    elif isinstance(value, str) and value.strip().startswith("["):
        crons = _repr_list(value, where)
    elif isinstance(value, str):
        crons = [part.strip() for part in value.split(", ")]
    else:
        raise RuleError(f"{where}: expected a cron string or a list of them, got {show(value)}")
    if not crons or len(crons) > 100:
        raise RuleError(f"{where}: {len(crons)} cron strings (allowed 1..100)")
    return crons


def _repr_list(value: str, where: str) -> list[str]:
    """``"['0 9 * * *', '0 17 * * *']"`` (``str()`` of a Python list) as its strings."""
    body = value.strip()
    if not body.endswith("]"):
        raise RuleError(f"{where}: {show(value)} is not a list of cron strings")
    body, out, pos = body[1:-1], [], 0
    while pos < len(body):
        m = _QUOTED.match(body, pos)
        if m is None or m.end() == pos:
            raise RuleError(f"{where}: {show(value)} is not a list of quoted cron strings")
        out.append(m.group(1) if m.group(1) is not None else m.group(2))
        pos = m.end()
    return out


def _schedule(raw: dict, expr: Any, at: str, sid: str, src: Source, default_zone: str, start: object,
              base: Preset, graphql: bool, count: int) -> tuple[Schedule, Preset]:
    """One cron string of one schedule entry."""
    name = str(raw["name"])
    where = f"{at} {name!r}"
    c = cron(expr, f"{where}: cron_schedule")
    if c.months == (2,) and len(c.days) == 1 and min(c.days) in (30, 31) and not c.last_day:
        raise RuleError(f"{where}: cron_schedule {expr!r}: the {min(c.days)}th of February never occurs (Dagster "
                        "refuses it: is_valid_cron_string)")
    notes: list[str] = []
    tz_raw = raw.get("executionTimezone" if graphql else "execution_timezone", raw.get("execution_timezone"))
    if tz_raw in (None, ""):
        zone = default_zone
        notes.append(f"no execution_timezone in the export: {zone} (zone=; Dagster's default is UTC)")
    else:
        zone = check_zone(tz_raw, f"{where}: execution_timezone")
    preset = base
    status = _status(raw, where, notes)
    if status == "STOPPED":
        preset = suspended(preset, notes, "status STOPPED")
    if count > 1:
        notes.append("a list cron_schedule: Dagster ticks at the union of its strings; calsim expands each as its "
                     "own schedule")
    out = Source(src.format, src.file, item=src.item, text=c.text.strip(), notes=tuple(notes))
    return applied(preset, Schedule(sid, zone, start, c.text.strip()), f"{where}: cron_schedule", out), preset


def _status(raw: dict, where: str, notes: list[str]) -> str | None:
    """RUNNING, STOPPED or None (unknown): ``scheduleState.status``, else ``default_status``/``defaultStatus``."""
    state = raw.get("scheduleState")
    if state is not None:
        status = obj(state, f"{where}: scheduleState").get("status")
        field = "scheduleState.status"
    else:
        status = raw.get("default_status", raw.get("defaultStatus"))
        field = "default_status"
    if status is None:
        notes.append("status not in the export: a schedule runs only when started (its default_status is STOPPED "
                     "unless set to RUNNING); expanded as running")
        return None
    if status not in _STATUS:
        raise ScheduleError(f"{where}: {field}: {show(status)} is not RUNNING or STOPPED")
    return str(status)
