"""Import Apache Airflow 3 DAG schedules: the REST API's DAG details or list, or ``airflow dags details -o json``.

Accepted input (JSON): one ``DAGDetailsResponse`` (``GET /api/v2/dags/{dag_id}/details``),
a list of them, a ``DAGCollectionResponse`` (``GET /api/v2/dags``: ``{"dags": [...],
"total_entries": n}``) or what ``airflow dags details -o json`` and ``airflow dags list -o json``
print (a list of ``DAGResponse`` objects whose every value went through ``str()``:
``"False"``, ``"16"``, ``"2026-03-01 00:00:00+00:00"``; read as the values they were).
Field names as in Airflow 3.3.2's ``airflow/api_fastapi/core_api/datamodels/dags.py``
(``DAGResponse`` 74-110, ``DAGDetailsResponse`` 177-208). Every DAG maps onto
:func:`calsim.presets.airflow`:

===================================  ============================================================
Airflow (3.3.2)                      calsim
===================================  ============================================================
``dag_id``                           the schedule id (``<dag_id>:<n>`` for each cron of a
                                     ``MultipleCronTriggerTimetable``, summary ``"a, b"``)
``timetable_summary``: cron text     the cron rule (``@daily``... expanded as Airflow's
(``"0 2 * * *"``, ``"@daily"``)      ``cron_presets``, ``utils/dates.py:24-31``)
``timetable_summary``: ``str()`` of  ``calsim.Every(delta, anchor=start_date)``: elapsed time
a timedelta (``"1:00:00"``,          (``DeltaMixin._get_next`` adds it to a UTC time,
``"1 day, 0:00:00"``) or of a        ``timetables/_delta.py``); a relativedelta of months or
relativedelta                        years is refused (not a fixed length)
the timetable's class                ``airflow(timetable=...)``: trigger or data interval (see
                                     below)
``timezone``                         the zone (see below); absent: ``zone=``
``catchup``                          ``airflow(catchup=...)``; absent (the list and CLI
                                     shapes): False, ``[scheduler] catchup_by_default``
``max_active_runs``                  ``airflow(max_active_runs=...)``; absent or null: 16
``start_date`` / ``end_date``        the start (an instant) / ``effective_to`` (a run at
                                     ``end_date`` itself still runs: ``trigger.py:107``)
``is_paused: true``                  ``Imported.presets[id].suspended`` and a note
``is_stale: true``                   skipped: the DAG file no longer defines it, nothing runs
===================================  ============================================================

**Refused per DAG** (``Imported.refused``, the rest imported; ``strict=True``
raises the first): ``schedule=None`` (summary null), ``@once``,
``@continuous``, asset-triggered DAGs (``Asset``, ``Partitioned Asset``),
events and custom timetables, a malformed cron or timedelta, a field of the
wrong type, and whatever the preset refuses, with its message: today
``timetable='cron_data_interval'``/``'delta_data_interval'`` ("not modelled
yet"; when the preset models them, such DAGs import unchanged). An
``AssetOrTimeSchedule`` (``"Asset or 0 2 * * *"``) imports its time part,
noted.

**Which timetable.** No response field names the class (``DagModel.timetable_type``
holds it, ``models/dag.py:394``, but only filters ``GET /api/v2/dags?timetable_type=``,
``routes/public/dags.py:135``), and a cron or timedelta summary reads the same
for the trigger and the data-interval timetable. In this order: a
``timetable_type`` field (the class name, if the export was joined with it)
or a serialized ``timetable`` (``{"__type": ..., "__var": ...}``, the
serialized DAG); else ``data_intervals=`` (True/False: the DAGs' Airflow
configuration); else the next run's data interval: ``next_dagrun_data_interval_start``
before ``_end`` is a data-interval timetable (a ``CronTriggerTimetable(interval=...)``
looks the same: pass ``data_intervals=False``), equal ones a trigger
timetable; with no next run, a trigger timetable, Airflow 3's default
(``[scheduler] create_cron_data_intervals = False``; the task SDK's
``_create_timetable`` reads that one option for timedeltas too,
``sdk/definitions/dag.py:134-157``). The note says which.

**Which zone.** The cron timetable's zone is not in the response:
``get_dag_details`` copies only the DAG attributes ``DagModel`` lacks
(``routes/public/dags.py:235-237``), and ``DagModel.timezone`` is a property
returning ``[core] default_timezone`` (``models/dag.py:575-577``), so
``timezone`` is the server's default for every DAG, and ``start_date`` comes
back in UTC. A DAG that sets its own zone (``start_date=pendulum.datetime(...,
tz="Europe/Berlin")``) is therefore checked: the next run
(``next_dagrun_run_after``) must be a time its cron gives in the zone read;
when it is not, the DAG is refused, naming the instant (write the DAG's zone
in its ``timezone`` field, or give a serialized ``timetable`` whose
``__var.timezone`` calsim then reads). A fixed offset (``"+01:00"``) is read
as ``Etc/GMT-1`` when whole hours, refused otherwise.

>>> from calsim.importers.airflow import from_airflow
>>> dags = from_airflow('{"dag_id": "nightly", "timetable_summary": "30 2 * * *", "timezone": "UTC",\\n'
...                     ' "catchup": true, "max_active_runs": 2, "start_date": "2026-01-01T00:00:00Z"}')
>>> s = dags[0]
>>> s.id, s.zone, s.rule, s.policy.max_active, dict(dags.presets[s.id].settings)['catchup']
('nightly', 'UTC', '30 2 * * *', 2, True)
"""

from __future__ import annotations

import datetime as dt
import re
from typing import Any

from ..errors import CalsimError, InputError, RuleError, ScheduleError
from ..presets import Preset, airflow
from ..rules.cron import Cron
from ..rules.every import Every
from ..schedule import Schedule
from ..times import US
from ._fields import applied, cron, flag, instant, iso, obj, show, suspended, text, whole, zone as check_zone
from ._result import Format, Imported, Items, Skipped, Source, read_input, reraise
from ._yaml import load_json
from .crontab import DEFAULT_START

__all__ = ["from_airflow"]

FORMAT: Format = "airflow"
# airflow/utils/dates.py:24-31 (CronMixin applies it before its summary, timetables/_cron.py:67).
CRON_PRESETS = {"@hourly": "0 * * * *", "@daily": "0 0 * * *", "@weekly": "0 0 * * 0", "@monthly": "0 0 1 * *",
                "@quarterly": "0 0 1 */3 *", "@yearly": "0 0 1 1 *"}
_TIMETABLES = {  # class name -> (form, data interval)
    "CronTriggerTimetable": ("cron", False), "MultipleCronTriggerTimetable": ("cron", False),
    "CronDataIntervalTimetable": ("cron", True), "DeltaTriggerTimetable": ("delta", False),
    "DeltaDataIntervalTimetable": ("delta", True), "AssetOrTimeSchedule": ("either", None),
}
_NOT_TIME = {  # summaries of the timetables that are not a time schedule (timetables/simple.py, assets.py)
    "@once": "@once (OnceTimetable): one run at start_date, not a recurring schedule",
    "@continuous": "@continuous (ContinuousTimetable): a new run as soon as the last one ends, not a time schedule",
    "Asset": "asset-triggered (AssetTriggeredTimetable): runs when assets are updated, not at times",
    "Partitioned Asset": "asset-triggered (PartitionedAssetTimetable): runs when assets are updated, not at times",
    "PartitionedAtRuntime": "partitions discovered at run time (PartitionedAtRuntime), no schedule",
}
_TIMEDELTA = re.compile(r"^(?:(-?\d{1,9}) days?, )?(\d{1,2}):(\d{2}):(\d{2})(?:\.(\d{6}))?$")
_RELATIVE = re.compile(r"^relativedelta\((.*)\)$")
_REL_PART = re.compile(r"^\s*([a-z]+)=([+-]?\d{1,12})\s*$")
_REL_ELAPSED = {"days": 86400 * US, "hours": 3600 * US, "minutes": 60 * US, "seconds": US, "microseconds": 1}
_OFFSET = re.compile(r"^([+-])(\d{2}):(\d{2})$")


def from_airflow(path_or_text: object, *, zone: str = "UTC", source: str | None = None, start: object = DEFAULT_START,
                 data_intervals: bool | None = None, strict: bool = False) -> Imported:
    """Read Airflow DAG details (see the module docstring).

    Parameters
    ----------
    path_or_text
        A path, or the JSON itself (a ``str`` starting with ``{``/``[`` or
        holding a line break, or ``bytes``).
    zone
        Airflow's ``[core] default_timezone``: the zone of DAGs whose entry
        has no ``timezone`` (the list and CLI shapes).
    source
        Name used in messages instead of the file's.
    start
        Anchor of a DAG without ``start_date`` (local wall time).
    data_intervals
        None (default): the timetable as the export says or suggests (see
        the module docstring); True/False: a cron or timedelta DAG whose
        class the export does not name uses the data-interval (True) or
        the trigger timetable (False), as Airflow's
        ``create_cron_data_intervals`` option says.
    strict
        False (default): a DAG that cannot be read or simulated is refused
        (``Imported.refused``) and the others imported; True: the first raises.

    Returns
    -------
    Imported
        One schedule per DAG (per cron of a multiple-cron timetable), with
        the ``airflow`` preset per id; stale DAGs in ``skipped``.

    Raises
    ------
    InputError
        Not JSON, no DAG in it; with ``strict=True`` (or when every DAG is
        refused) a DAG's error: a field of the wrong type.
    RuleError, ScheduleError, PolicyError, UnknownZoneError
        A DAG's cron or timedelta, schedule kind, preset setting or zone
        (only with ``strict=True`` or when every DAG is refused).
    """
    if data_intervals is not None and not isinstance(data_intervals, bool):
        raise InputError(f"data_intervals: expected None, True or False, got {show(data_intervals)}")
    if isinstance(path_or_text, str) and path_or_text.lstrip()[:1] in ("{", "["):
        path_or_text = path_or_text + "\n"  # a one-line JSON document is content, not a file name
    text_, file, path = read_input(path_or_text, "airflow", source)
    label = source or (path.name if path is not None else file)
    where = f"airflow: {label}"
    default_zone = check_zone(zone, f"{where}: zone")
    dags = _dags(load_json(text_, where), where)
    items = Items(strict)
    schedules: list[Schedule] = []
    presets: dict[str, Preset] = {}
    skipped: list[Skipped] = []
    seen: dict[str, int] = {}
    for k, raw in enumerate(dags, 1):
        dag_id = raw.get("dag_id") if isinstance(raw, dict) else None
        summary = raw.get("timetable_summary") if isinstance(raw, dict) else None
        what = f"DAG {dag_id}" if isinstance(dag_id, str) else f"item {k}"
        src = Source(FORMAT, file, item=k, text=summary[:200] if isinstance(summary, str) else "")
        at = f"{where} item {k}"
        out = items.run(src, what, _dag, raw, at, src, default_zone, start, data_intervals)
        if out is None:
            continue
        if isinstance(out, Skipped):
            skipped.append(out)
            continue
        if dag_id in seen:
            items.refuse(src, what, ScheduleError(f"{at}: dag_id: {dag_id!r} is given twice (first as item "
                                                  f"{seen[dag_id]}); a DAG id is unique"))
            continue
        seen[str(dag_id)] = k
        for sched, preset in out:
            schedules.append(sched)
            presets[sched.id] = preset
    return items.done(schedules, skipped, presets)


def _dags(doc: Any, where: str) -> list:
    """The DAG objects of the document, in order."""
    if isinstance(doc, dict) and "dags" in doc and "dag_id" not in doc:
        dags = doc["dags"]
        if not isinstance(dags, list):
            raise InputError(f"{where}: dags: expected a list of DAG objects, got {show(dags)}")
    elif isinstance(doc, dict):
        if "dag_id" not in doc:
            raise InputError(f"{where}: no DAG: expected a DAG object with 'dag_id' and 'timetable_summary' "
                             "(GET /api/v2/dags/{dag_id}/details), a list of them or {\"dags\": [...]}")
        dags = [doc]
    elif isinstance(doc, list):
        dags = doc
    else:
        raise InputError(f"{where}: expected a DAG object or a list of them, got {show(doc)}")
    if not dags:
        raise InputError(f"{where}: no DAG in the file (an empty list)")
    return dags


def _dag(raw: Any, at: str, base: Source, default_zone: str, start: object,
         data_intervals: bool | None) -> list[tuple[Schedule, Preset]] | Skipped:
    """The schedules of one DAG object (or why it is skipped)."""
    d = obj(raw, at, "a DAG object")
    dag_id = text(d.get("dag_id"), f"{at}: dag_id", required=True)
    where = f"{at} {dag_id!r}"
    if flag(d.get("is_stale"), f"{where}: is_stale", False):
        return Skipped(base, f"DAG {dag_id}", "is_stale: true: its DAG file no longer defines it, so Airflow "
                                              "schedules nothing")
    summary = d.get("timetable_summary")
    if summary is not None and not isinstance(summary, str):
        raise InputError(f"{where}: timetable_summary: expected a string or null, got {show(summary)}")
    notes: list[str] = []
    klass, tt_zone = _class(d, where)
    if summary is None or summary.strip() in ("", "None"):
        raise ScheduleError(f"{where}: timetable_summary: {summary!r}: schedule=None, the DAG runs only when "
                            "triggered; nothing to simulate (allowed: a cron expression or a timedelta)")
    summary = summary.strip()
    if summary in _NOT_TIME:
        raise ScheduleError(f"{where}: timetable_summary: {summary!r} is {_NOT_TIME[summary]} (allowed: a cron "
                            "expression or a timedelta)")
    if summary.startswith("Asset or "):
        summary = summary[len("Asset or "):]
        notes.append("AssetOrTimeSchedule: the runs its assets trigger are not modelled, only the time schedule")
    form, rules = _rules(summary, f"{where}: timetable_summary")
    kind = _kind(form, klass, data_intervals, d, where, notes)

    sched_zone = tt_zone or _zone(d.get("timezone"), f"{where}: timezone", default_zone, notes)
    catchup = False
    if d.get("catchup") is None:
        notes.append("catchup absent: False, Airflow's [scheduler] catchup_by_default")
    else:
        catchup = flag(d["catchup"], f"{where}: catchup", False)
    max_runs = 16
    if d.get("max_active_runs") is None:
        notes.append("max_active_runs absent: 16, Airflow's [core] max_active_runs_per_dag")
    else:
        max_runs = whole(d["max_active_runs"], f"{where}: max_active_runs", 1, 2**31)
    begin = instant(d.get("start_date"), f"{where}: start_date")
    end = instant(d.get("end_date"), f"{where}: end_date")
    if begin is not None and end is not None and end < begin:
        raise ScheduleError(f"{where}: end_date {iso(end)} is before start_date {iso(begin)}")
    if begin is None:
        notes.append(f"no start_date: the rule is anchored at {start} (local)")
    if form == "cron" and tt_zone is None:
        notes.append(_check_next_run(d, rules, sched_zone, where))
    try:
        preset: Preset = airflow(timetable=kind, catchup=catchup, max_active_runs=max_runs)
    except CalsimError as exc:  # the preset's refusal, with its message (e.g. a timetable not modelled yet)
        raise reraise(exc, where) from None
    if flag(d.get("is_paused"), f"{where}: is_paused", False):
        preset = suspended(preset, notes, "is_paused: true")
    if len(rules) > 1:
        notes.append("MultipleCronTriggerTimetable: Airflow creates one run for a time several crons give; "
                     "calsim expands each cron as its own schedule")
    out = []
    for n, rule in enumerate(rules, 1):
        sid = dag_id if len(rules) == 1 else f"{dag_id}:{n}"
        rnotes = list(notes)
        body: object = rule if isinstance(rule, str) else \
            Every(dt.timedelta(microseconds=rule), anchor=None if begin is None else iso(begin))
        to = None if end is None else _effective_to(end, rule, kind, sched_zone)
        first: object = iso(begin) if begin is not None else start
        src = Source(FORMAT, base.file, item=base.item, text=summary if len(rules) == 1 else str(rule),
                     command=d.get("fileloc") if isinstance(d.get("fileloc"), str) else None, notes=tuple(rnotes))
        sched = Schedule(sid, sched_zone, first, body, effective_to=None if to is None else iso(to))
        out.append((applied(preset, sched, f"{where}: timetable_summary {summary!r}", src), preset))
    return out


def _class(d: dict, where: str) -> tuple[str | None, str | None]:
    """The timetable's class name and zone, when the export carries them (see "Which timetable")."""
    klass: Any = d.get("timetable_type")
    tz = None
    tt = d.get("timetable")
    if isinstance(tt, dict):
        klass = tt.get("__type") if klass is None else klass
        var = tt.get("__var")
        if isinstance(var, dict) and var.get("timezone") is not None:
            tz = _zone(var["timezone"], f"{where}: timetable.__var.timezone", "UTC", [])
    elif tt is not None:
        klass = tt if klass is None else klass
    if klass is None:
        return None, tz
    if not isinstance(klass, str) or not klass.strip():
        raise InputError(f"{where}: timetable_type: expected a timetable class name, got {show(klass)}")
    name = klass.strip().rsplit(".", 1)[-1]
    if name not in _TIMETABLES and name not in ("NullTimetable", "OnceTimetable", "ContinuousTimetable",
                                                "AssetTriggeredTimetable", "PartitionedAssetTimetable",
                                                "PartitionedAtRuntime"):
        raise ScheduleError(f"{where}: timetable_type: {klass[:80]!r} is an events or custom timetable calsim "
                            f"cannot read (allowed: {', '.join(_TIMETABLES)})")
    return name, tz


def _rules(summary: str, where: str) -> tuple[str, list[str | int]]:
    """``("cron", [cron text...])`` or ``("delta", [µs])`` of a timetable summary."""
    delta = _delta(summary, where)
    if delta is not None:
        return "delta", [delta]
    parts = [p.strip() for p in summary.split(", ")]  # MultipleCronTriggerTimetable.summary, trigger.py:299-300
    if len(parts) > 100:
        raise RuleError(f"{where}: {len(parts):,} cron expressions (calsim reads at most 100 per DAG)")
    out: list[str | int] = []
    for part in parts:
        body = CRON_PRESETS.get(part, part)
        if not body.startswith("@") and len(body.split()) != 5:
            shown_ = summary if len(summary) <= 60 else summary[:57] + "..."
            raise RuleError(f"{where}: {shown_!r} is not a cron expression of 5 fields, a timedelta "
                            "('1:00:00', '1 day, 0:00:00') or a relativedelta; an events or custom timetable "
                            "calsim cannot read")
        out.append(cron(body, where).text.strip())
    return "cron", out


def _delta(summary: str, where: str) -> int | None:
    """µs of a ``str(timedelta)`` or ``str(relativedelta)`` summary; None when it is neither."""
    m = _TIMEDELTA.match(summary)
    if m is not None:
        days, h, mi, s, frac = m.groups()
        if int(mi) > 59 or int(s) > 59:
            raise RuleError(f"{where}: {summary!r} is not a timedelta (minutes and seconds 0..59)")
        us = ((int(days or 0) * 24 + int(h)) * 3600 + int(mi) * 60 + int(s)) * US + int(frac or 0)
    else:
        m = _RELATIVE.match(summary)
        if m is None:
            return None
        us = 0
        for part in m.group(1).split(","):
            p = _REL_PART.match(part)
            if p is None or p.group(1) not in _REL_ELAPSED:
                raise RuleError(f"{where}: {summary[:80]!r}: {part.strip()[:30]!r} is not a fixed length of time "
                                "(allowed: days, hours, minutes, seconds, microseconds; months and years vary)")
            us += int(p.group(2)) * _REL_ELAPSED[p.group(1)]
    if us <= 0:
        raise RuleError(f"{where}: {summary!r}: the schedule interval must be positive (Airflow's "
                        "DeltaMixin.validate)")
    return us


def _kind(form: str, klass: str | None, data_intervals: bool | None, d: dict, where: str,
          notes: list[str]) -> Any:
    """The preset's ``timetable`` for this DAG (see "Which timetable")."""
    interval: bool | None = None
    if klass is not None and klass in _TIMETABLES:
        want, interval = _TIMETABLES[klass]
        if want not in ("either", form):
            raise ScheduleError(f"{where}: timetable_type {klass!r} does not read a {form} summary "
                                f"(expected a {want} one)")
        if interval is not None:
            notes.append(f"timetable: {klass}, as the export says")
    if interval is None and data_intervals is not None:
        interval = data_intervals
        notes.append(f"timetable: {'data interval' if interval else 'trigger'}, as data_intervals={interval} says")
    if interval is None:
        lo = instant(d.get("next_dagrun_data_interval_start"), f"{where}: next_dagrun_data_interval_start")
        hi = instant(d.get("next_dagrun_data_interval_end"), f"{where}: next_dagrun_data_interval_end")
        interval = lo is not None and hi is not None and lo < hi
        if lo is None or hi is None:
            notes.append("timetable: trigger, Airflow 3's default (create_cron_data_intervals = False); the export "
                         "has no next run to tell (data_intervals=True reads it as a data-interval timetable)")
        elif interval:
            notes.append("timetable: data interval, because the next run's data interval is not empty (a "
                         "CronTriggerTimetable(interval=...) looks the same: data_intervals=False reads it so)")
        else:
            notes.append("timetable: trigger, because the next run's data interval is empty")
    return f"{form}_{'data_interval' if interval else 'trigger'}"  # the preset's Timetable (it checks the name)


def _zone(value: Any, where: str, default: str, notes: list[str]) -> str:
    """An IANA zone from an Airflow zone string (``str(pendulum Timezone)``); absent: ``default``, noted."""
    if value is None:
        notes.append(f"no timezone in the export: read in {default} (zone=, Airflow's [core] default_timezone)")
        return default
    if isinstance(value, str):
        m = _OFFSET.match(value.strip())
        if m is not None:  # a pendulum FixedTimezone
            sign, hh, mm = m.groups()
            if mm != "00" or int(hh) > 14:
                raise ScheduleError(f"{where}: {value!r}: a fixed offset calsim reads only in whole hours "
                                    "-12..+14 (as Etc/GMT zones)")
            if int(hh) == 0:
                return "UTC"
            return check_zone(f"Etc/GMT{'-' if sign == '+' else '+'}{int(hh)}", where)
    return check_zone(value, where)


def _check_next_run(d: dict, rules: list, zone_name: str, where: str) -> str:
    """Refuse a DAG whose next run is not a time of its crons in ``zone_name`` (see "Which zone"); else a note."""
    said = (f"timezone {zone_name!r}: Airflow 3.3.2 reports its [core] default_timezone there for every DAG "
            "(models/dag.py:575-577), not the zone of the DAG's own timetable" if d.get("timezone") is not None else
            f"zone {zone_name!r}: the export names none")
    why = ("Airflow 3.3.2 reports its [core] default_timezone as every DAG's 'timezone'"
           if d.get("timezone") is not None else "the export names no zone, and zone= (--zone) gave this one")
    raw = d.get("next_dagrun_run_after", d.get("next_dagrun_create_after"))
    t = instant(raw, f"{where}: next_dagrun_run_after")
    if t is None:
        return said + "; the export has no next run to check it against"
    from ..tz.release import release

    tz = release().zone(zone_name)
    offsets = {(t + dt.timedelta(days=k)).astimezone(tz).utcoffset() for k in (-1, 0, 1)}
    epoch = dt.datetime(1970, 1, 1, tzinfo=dt.timezone.utc)
    crons = [Cron.parse(r) for r in rules]
    for off in offsets:  # the wall time of the instant at each offset near it: a gap time moved forward too
        assert off is not None
        wall = int(((t - epoch) + off) / dt.timedelta(microseconds=1))
        day = wall - wall % (86400 * US)
        if any(wall in c.wall_times(day, day + 86400 * US) for c in crons):
            return said + f"; the next run {iso(t)} is a time of the cron in it"
    raise ScheduleError(f"{where}: timezone: the next run {iso(t)} (next_dagrun_run_after) is not a time "
                        f"{' or '.join(repr(r) for r in rules)} gives in {zone_name!r}: the DAG's timetable runs in "
                        f"another zone ({why}); write the DAG's zone in its 'timezone' field")


def _effective_to(end: dt.datetime, rule: str | int, kind: str, zone_name: str) -> dt.datetime:
    """The end of the validity window: a run at ``end_date`` still runs, and so does one whose data interval
    starts there (``interval.py:128``: ``start > restriction.latest`` ends the runs), due one period later."""
    if kind == "delta_data_interval" and not isinstance(rule, str):
        return end + dt.timedelta(microseconds=rule + 1)
    if kind != "cron_data_interval" or not isinstance(rule, str):
        return end + dt.timedelta(microseconds=1)
    from ..tz.release import release

    tz = release().zone(zone_name)
    local = end.astimezone(tz).replace(tzinfo=None)
    wall = int((local - dt.datetime(1970, 1, 1)) / dt.timedelta(microseconds=1))
    c = Cron.parse(rule)
    for days in (2, 64, 4 * 366):  # the next time is usually near: never list four years of every minute
        times = c.wall_times(wall + 1, wall + days * 86400 * US)
        if len(times):
            break
    else:
        return end + dt.timedelta(microseconds=1)
    nxt = dt.datetime(1970, 1, 1) + dt.timedelta(microseconds=int(times[0]))
    return nxt.replace(tzinfo=tz).astimezone(dt.timezone.utc) + dt.timedelta(microseconds=1)
