"""Import Prefect 3 deployment schedules from a ``prefect.yaml``: cron, interval and RRULE schedules.

Each ``deployments[n]`` entry's ``schedules:`` list (or the older singular
``schedule:`` mapping, read as a list of one, as
``prefect/cli/deploy/_config.py:533-552`` does) is read as ``prefect deploy``
builds it (``_schedule_config_to_deployment_schedule``,
``prefect/cli/deploy/_schedules.py:43-94``, Prefect 3.9.1): the first of
``cron``, ``interval``, ``rrule`` that is set decides the kind, and each maps
onto :func:`calsim.presets.prefect` of that ``kind``:

=========================================  ===========================================================
``prefect.yaml``                           calsim
=========================================  ===========================================================
``cron`` (+ ``day_or``)                    the cron rule (``CronSchedule``); ``day_or: false`` (both
                                           day fields must match, croniter's AND) is written as the
                                           RRULE that says so when both are restricted
``interval`` (seconds, ``PT1H``,           ``calsim.Every(interval, anchor=anchor_date)`` with
``01:00:00``) + ``anchor_date``            ``kind="interval"`` (``IntervalSchedule``); a naive
                                           ``anchor_date`` is UTC (``parse_datetime``, as deploy reads
                                           it); absent, Prefect takes the deploy time: noted, ``start``
``rrule`` (text, or the JSON of an         the RRULE (``RRuleSchedule``): ``DTSTART``'s *wall time* in
``RRuleSchedule``)                         ``timezone`` (``to_rrule`` replaces every tzinfo, so a ``Z``
                                           or ``TZID`` is dropped, ``UNTIL``'s too); without DTSTART
                                           2020-01-01 00:00 (``DEFAULT_ANCHOR_DATE``); ``RDATE`` and
                                           ``EXDATE`` as rdate/exdate; ``EXRULE`` refused
``timezone``                               the zone; absent: UTC (``server/schemas/schedules.py:83``
                                           for cron, the ``RRuleSchedule`` default, the anchor's zone
                                           or UTC for intervals)
``active: false``                          ``Imported.presets[id].suspended`` and a note
deployment ``paused: true``                the same, for each of its schedules
=========================================  ===========================================================

Field names checked against Prefect 3.9.1: ``prefect/client/schemas/schedules.py``
(``IntervalSchedule`` 67-103, ``CronSchedule`` 121-164, ``RRuleSchedule``
189-216, its timezone default 329-340), ``_internal/schemas/validators.py``
(cron strings 276-287: ``R`` and ``H`` refused; RRULEs 294-310: at most 6,500
characters).

**Identity.** The deployment's ``name``; ``<name>:<n>`` (``n`` from 1) when it
has several schedules. A refused schedule keeps its number. A deployment
without schedules (``schedules: null``, ``schedule: {}``) is listed in
``Imported.skipped``.

**Refusals.** A schedule entry is an item: a bad one (no kind, a malformed
cron, interval or RRULE, an unknown zone, a ``{{ ... }}`` template calsim
cannot evaluate; also a cron of six fields, which Prefect's croniter reads
with seconds and calsim's five-field cron does not) is refused alone with its
``deployments[n].schedules[k]`` path, field and value, and so is one the preset refuses, with its message
(today ``kind="interval"``: "not modelled yet"; when the preset models it,
those entries import unchanged). A deployment-level problem (no ``name``, both
``schedule`` and ``schedules``, a ``name`` given twice) refuses its schedules
as one item.

>>> from calsim.importers.prefect import from_prefect
>>> p = from_prefect('''
... deployments:
...   - name: nightly-report
...     entrypoint: flows/report.py:report
...     schedules:
...       - cron: "30 2 * * *"
...         timezone: Europe/Berlin
... ''')
>>> s = p[0]
>>> s.id, s.zone, s.rule, p.presets[s.id].name
('nightly-report', 'Europe/Berlin', '30 2 * * *', 'prefect')
"""

from __future__ import annotations

import datetime as dt
import json
import re
from typing import Any

from ..durations import duration_us
from ..errors import CalsimError, InputError, RuleError, ScheduleError
from ..presets import Preset, prefect
from ..rules.every import Every
from ..schedule import Schedule
from ..times import US
from ._fields import applied, cron, day_and_rule, flag, iso, obj, show, suspended, text, zone as check_zone
from ._result import Format, Imported, Items, Skipped, Source, read_input, reraise
from ._yaml import child, documents
from .crontab import DEFAULT_START

__all__ = ["from_prefect"]

FORMAT: Format = "prefect"
MAX_RRULE_LENGTH = 6500  # prefect/_internal/schemas/validators.py:291
RRULE_ANCHOR = "2020-01-01T00:00"  # DEFAULT_ANCHOR_DATE, prefect/server/schemas/schedules.py:732
_CLOCK = re.compile(r"^(?:(\d{1,6}) days?, )?(\d{1,2}):(\d{2}):(\d{2})(?:\.(\d{1,6}))?$")
_RRULE_DATE = re.compile(r"^(\d{8})(?:T(\d{6}))?Z?$")


def from_prefect(path_or_text: object, *, source: str | None = None, start: object = DEFAULT_START,
                 strict: bool = False) -> Imported:
    """Read the deployment schedules of a ``prefect.yaml`` (see the module docstring).

    Parameters
    ----------
    path_or_text
        A path, or the YAML itself (a ``str`` with a line break, or ``bytes``).
    source
        Name used in messages instead of the file's.
    start
        Anchor of cron rules, and of an interval without ``anchor_date``.
    strict
        False (default): a bad schedule entry is refused
        (``Imported.refused``) and the others imported; True: the first raises.

    Returns
    -------
    Imported
        One schedule per entry of ``schedules``, with the ``prefect`` preset
        of its kind; deployments without schedules in ``skipped``.

    Raises
    ------
    InputError
        Not YAML, no ``deployments:`` list; with ``strict=True`` (or when
        every entry is refused) an entry's error.
    RuleError, ScheduleError, PolicyError, UnknownZoneError
        An entry's rule, deployment, preset setting or zone (only with
        ``strict=True`` or when every entry is refused).
    """
    text_, file, path = read_input(path_or_text, "prefect", source)
    label = source or (path.name if path is not None else file)
    where = f"prefect: {label}"
    docs = documents(text_, where)
    root_node, data = (docs[0][1], docs[0][2]) if docs else (None, None)
    if not isinstance(data, dict) or "deployments" not in data:
        raise InputError(f"{where}: not a prefect.yaml: expected a mapping with a 'deployments:' list, got "
                         f"{show(data) if not isinstance(data, dict) else 'keys ' + show(sorted(map(str, data)))}")
    deployments = data["deployments"]
    if not isinstance(deployments, list) or not deployments:
        raise InputError(f"{where}: deployments: expected a list of deployments, got {show(deployments)}")
    dep_nodes = child(root_node, "deployments")
    items = Items(strict)
    schedules: list[Schedule] = []
    presets: dict[str, Preset] = {}
    skipped: list[Skipped] = []
    seen: dict[str, int] = {}
    for i, dep in enumerate(deployments):
        node = dep_nodes.value[i] if dep_nodes is not None and i < len(dep_nodes.value) else None
        line = node.start_mark.line + 1 if node is not None else None
        at = f"{where} deployments[{i}]" + (f" (line {line})" if line else "")
        name = dep.get("name") if isinstance(dep, dict) else None
        src = Source(FORMAT, file, line=line, item=i + 1)
        what = f"deployment {name}" if isinstance(name, str) else f"deployments[{i}]"
        entries = items.run(src, what, _deployment, dep, at, seen, i)
        if entries is None:
            continue
        if not entries:
            skipped.append(Skipped(src, what, "no schedules: the deployment runs only when triggered"))
            continue
        sched_nodes = child(node, "schedules") or child(node, "schedule")
        for k, (key, raw) in enumerate(entries):
            snode = sched_nodes.value[k] if sched_nodes is not None and key == "schedules" \
                and k < len(sched_nodes.value) else sched_nodes
            sline = snode.start_mark.line + 1 if snode is not None else line
            sat = f"{where} deployments[{i}].{key}" + (f"[{k}]" if key == "schedules" else "") + \
                (f" (line {sline})" if sline else "")
            sid = str(dep["name"]) if len(entries) == 1 else f"{dep['name']}:{k + 1}"
            esrc = Source(FORMAT, file, line=sline, item=i + 1, text=_text_of(raw))
            out = items.run(esrc, f"{sid}", _entry, raw, sat, sid, esrc, start,
                            flag(dep.get("paused"), f"{at}: paused", False))
            if out is not None:
                schedules.append(out[0])
                presets[sid] = out[1]
    return items.done(schedules, skipped, presets)


def _deployment(dep: Any, at: str, seen: dict[str, int], i: int) -> list[tuple[str, Any]]:
    """``[("schedules", entry), ...]`` of one deployment, its own fields checked."""
    dep = obj(dep, at, "a deployment (a mapping with name and schedules)")
    name = text(dep.get("name"), f"{at}: name", required=True)
    _no_template(name, f"{at}: name")
    if name in seen:
        raise ScheduleError(f"{at}: name: {name!r} is given twice (first deployments[{seen[name]}]); calsim's "
                            "schedule ids are deployment names")
    seen[name] = i
    flag(dep.get("paused"), f"{at}: paused", False)
    legacy, many = dep.get("schedule"), dep.get("schedules")
    if legacy and "schedules" in dep:  # _config.py:_handle_deprecated_schedule_fields
        raise ScheduleError(f"{at}: both 'schedule' and 'schedules' are given (Prefect refuses it: use only "
                            "'schedules')")
    if legacy:
        obj(legacy, f"{at}: schedule", "a schedule mapping (cron, interval or rrule)")
        return [("schedule", legacy)]
    if many is None:
        return []
    if isinstance(many, str):
        _no_template(many, f"{at}: schedules")
    if not isinstance(many, list):
        raise InputError(f"{at}: schedules: expected a list of schedules, got {show(many)}")
    return [("schedules", raw) for raw in many]


def _text_of(raw: Any) -> str:
    if isinstance(raw, dict):
        for key in ("cron", "interval", "rrule"):
            if raw.get(key):
                return f"{key}: {str(raw[key])[:200]}"
    return ""


def _entry(raw: Any, at: str, sid: str, src: Source, start: object, paused: bool) -> tuple[Schedule, Preset]:
    """One schedule entry as ``_schedule_config_to_deployment_schedule`` reads it."""
    entry = obj(raw, at, "a schedule mapping (cron, interval or rrule)")
    for key, value in entry.items():
        if isinstance(value, str):
            _no_template(value, f"{at}: {key}")
    notes: list[str] = []
    tz_raw = entry.get("timezone")
    tz = None if tz_raw is None else check_zone(text(tz_raw, f"{at}: timezone", required=True), f"{at}: timezone")
    kind: Any  # the preset's Kind: "cron", "interval" or "rrule"
    rdate: tuple = ()
    exdate: tuple = ()
    if entry.get("cron"):
        kind = "cron"
        rule: object = _cron(entry, at, notes)
        first: object = start
        zone = tz or "UTC"
    elif entry.get("interval"):
        kind = "interval"
        rule, first, zone = _interval(entry, at, tz, start, notes)
    elif entry.get("rrule"):
        kind = "rrule"
        rule, first, zone, rdate, exdate = _rrule(entry, at, tz, notes)
    else:
        raise ScheduleError(f"{at}: no schedule kind: expected a non-empty 'cron', 'interval' or 'rrule' (Prefect: "
                            f"'Unknown schedule type'), got keys {show(sorted(map(str, entry)))}")
    if tz is None and kind != "interval":
        notes.append("no timezone: UTC, Prefect's default")
    try:
        preset = prefect(kind=kind)
    except CalsimError as exc:  # the preset's refusal, with its message (e.g. a kind not modelled yet)
        raise reraise(exc, at) from None
    if not flag(entry.get("active"), f"{at}: active", True):
        preset = suspended(preset, notes, "active: false")
    if paused:
        preset = suspended(preset, notes, "deployment paused: true")
    out = Source(src.format, src.file, line=src.line, item=src.item, text=src.text, notes=tuple(notes))
    return applied(preset, Schedule(sid, zone, first, rule, rdate=rdate, exdate=exdate), at, out), preset


def _no_template(value: str, where: str) -> None:
    if "{{" in value:
        raise InputError(f"{where}: {show(value)} is a Prefect template ('{{{{ ... }}}}'), filled in by "
                         "`prefect deploy`; calsim needs the value itself")


def _cron(entry: dict, at: str, notes: list[str]) -> str:
    raw = entry["cron"]
    if not isinstance(raw, str):
        raise RuleError(f"{at}: cron: expected a cron string such as '0 9 * * *', got {show(raw)}")
    if any(tok.casefold() in ("r", "h") for tok in raw.split()):  # validators.py:283-286
        raise RuleError(f"{at}: cron: {show(raw)}: random and hashed expressions (R, H) are unsupported by Prefect")
    c = cron(raw, f"{at}: cron")
    if flag(entry.get("day_or"), f"{at}: day_or", True):
        return c.text.strip()
    try:
        anded = day_and_rule(c)
    except RuleError as exc:
        raise RuleError(f"{at}: cron with day_or: false: {exc}") from None
    if anded is None:
        return c.text.strip()
    notes.append(f"day_or: false: both day fields must match (croniter's AND), read as {anded}")
    return anded


def _interval(entry: dict, at: str, tz: str | None, start: object,
              notes: list[str]) -> tuple[Every, object, str]:
    """``(rule, start, zone)`` of an ``interval`` entry."""
    raw = entry["interval"]
    where = f"{at}: interval"
    if isinstance(raw, str):
        m = _CLOCK.match(raw.strip())
        if m is not None:
            days, h, mi, s, frac = m.groups()
            us = ((int(days or 0) * 24 + int(h)) * 3600 + int(mi) * 60 + int(s)) * US + int((frac or "0").ljust(6, "0"))
        elif raw.strip().upper().startswith("P"):
            us = duration_us(raw, where)
        else:
            raise InputError(f"{where}: {show(raw)} is not an interval (allowed: seconds as a number, an ISO 8601 "
                             "duration such as 'PT1H', or 'HH:MM:SS')")
    elif isinstance(raw, dt.timedelta) or (isinstance(raw, (int, float)) and not isinstance(raw, bool)):
        us = duration_us(raw, where)
    else:
        raise InputError(f"{where}: expected seconds, an ISO 8601 duration or 'HH:MM:SS', got {show(raw)}")
    if us <= 0:
        raise InputError(f"{where}: {show(raw)} must be more than 0 (IntervalSchedule: interval > 0)")
    anchor = _anchor(entry.get("anchor_date"), f"{at}: anchor_date")
    zone = tz or "UTC"
    if anchor is None:
        notes.append(f"no anchor_date: Prefect anchors at the time of `prefect deploy`; calsim at {start}")
        return Every(dt.timedelta(microseconds=us)), start, zone
    if tz is None:
        notes.append("no timezone: the anchor's zone when it names one, else UTC (Prefect's default_timezone); "
                     "an anchor with only an offset is UTC")
    return Every(dt.timedelta(microseconds=us), anchor=iso(anchor)), iso(anchor), zone


def _anchor(value: Any, where: str) -> dt.datetime | None:
    """``anchor_date`` as an instant: a naive time is UTC (``parse_datetime`` in the deploy path)."""
    if value is None or value == "":
        return None
    if isinstance(value, dt.date) and not isinstance(value, dt.datetime):  # YAML reads a bare date itself
        value = dt.datetime(value.year, value.month, value.day)
    if isinstance(value, dt.datetime):
        t = value
    elif isinstance(value, str) and len(value) <= 64:
        try:
            t = dt.datetime.fromisoformat(value.strip().replace("z", "Z"))
        except ValueError:
            raise InputError(f"{where}: {show(value)} is not an ISO 8601 date and time "
                             "(e.g. '2026-03-01T09:00:00')") from None
    else:
        raise InputError(f"{where}: expected an ISO 8601 date and time, got {show(value)}")
    return (t if t.tzinfo is not None else t.replace(tzinfo=dt.timezone.utc)).astimezone(dt.timezone.utc)


def _rrule(entry: dict, at: str, tz: str | None,
           notes: list[str]) -> tuple[str, str, str, tuple[str, ...], tuple[str, ...]]:
    """``(rule, start, zone, rdate, exdate)`` of an ``rrule`` entry."""
    raw = entry["rrule"]
    where = f"{at}: rrule"
    if not isinstance(raw, str):
        raise RuleError(f"{where}: expected RRULE text, got {show(raw)}")
    try:
        as_json = json.loads(raw)  # _schedules.py: RRuleSchedule(**json.loads(rrule)) first
    except (ValueError, RecursionError):
        as_json = None
    if isinstance(as_json, dict):
        inner = as_json.get("rrule")
        if not isinstance(inner, str):
            raise RuleError(f"{where}: the JSON form needs an 'rrule' string, got {show(inner)}")
        if tz is None and as_json.get("timezone") is not None:
            tz = check_zone(as_json["timezone"], f"{where}: timezone")
        raw = inner
    if len(raw) > MAX_RRULE_LENGTH:
        raise RuleError(f"{where}: {len(raw):,} characters is longer than Prefect's {MAX_RRULE_LENGTH:,}")
    zone = tz or "UTC"
    rule: str | None = None
    start = RRULE_ANCHOR
    rdate: list[str] = []
    exdate: list[str] = []
    for line in re.sub(r"\r?\n[ \t]", "", raw).splitlines():
        line = line.strip()
        if not line:
            continue
        head, sep, value = line.partition(":")
        name = head.split(";")[0].upper() if sep else "RRULE"
        value = value if sep else line
        if name == "RRULE":
            if rule is not None:
                raise RuleError(f"{where}: more than one RRULE line (calsim reads one rule per schedule)")
            rule = _local_until(value.strip(), where)
        elif name == "DTSTART":
            start = _wall(value, f"{where}: DTSTART")
        elif name in ("RDATE", "EXDATE"):
            (rdate if name == "RDATE" else exdate).extend(_wall(v, f"{where}: {name}") for v in value.split(","))
        else:
            raise RuleError(f"{where}: {head[:30]!r} lines are not read (allowed: DTSTART, RRULE, RDATE, EXDATE)")
    if rule is None:
        raise RuleError(f"{where}: no RRULE in {show(raw)}")
    if start == RRULE_ANCHOR:
        notes.append("no DTSTART: 2020-01-01 00:00 local, Prefect's DEFAULT_ANCHOR_DATE")
    notes.append(f"rrule: DTSTART, UNTIL, RDATE and EXDATE are wall times in {zone} (Prefect's to_rrule replaces "
                 "their zone with the schedule's)")
    return rule, start, zone, tuple(rdate), tuple(exdate)


def _wall(value: str, where: str) -> str:
    """``20260301T090000`` (``Z`` or ``VALUE=DATE`` forms too) as a naive ISO wall time."""
    m = _RRULE_DATE.match(value.strip())
    if m is None:
        raise RuleError(f"{where}: {show(value)} is not a date-time such as 20260301T090000")
    d, t = m.group(1), m.group(2) or "000000"
    try:
        return dt.datetime.strptime(d + t, "%Y%m%d%H%M%S").isoformat()
    except ValueError:
        raise RuleError(f"{where}: {show(value)} is not a real date and time") from None


def _local_until(rule: str, where: str) -> str:
    """The RRULE with a UTC ``UNTIL`` made a wall time (Prefect compares it in the schedule's zone)."""
    parts = []
    for part in rule.split(";"):
        key, _, value = part.partition("=")
        if key.strip().upper() == "UNTIL" and value.strip().upper().endswith("Z"):
            part = f"{key}={value.strip()[:-1]}"
        parts.append(part)
    if len(parts) > 50:
        raise RuleError(f"{where}: {len(parts):,} RRULE parts is not a rule")
    return ";".join(parts)
