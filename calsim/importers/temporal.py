"""Import Temporal Schedules: a ``ScheduleSpec`` as ``temporal schedule describe -o json`` prints it.

The input is the JSON of a ``DescribeScheduleResponse`` (``{"schedule": {"spec":
..., "policies": ...}, "info": ...}``, what the CLI's ``-o json`` prints), a
bare ``Schedule`` (``{"spec": ..., "policies": ...}``) or a bare
``ScheduleSpec``. Field names are protojson's camelCase (``structuredCalendar``,
``dayOfMonth``) or the proto's snake_case; every part of the spec becomes
calsim rules with the :func:`calsim.presets.temporal` preset:

=================================  ===========================================================
Temporal (``message.proto``)       calsim
=================================  ===========================================================
``structuredCalendar``,            one schedule each: a cron rule where Vixie cron says the
``calendar``, ``cronString``       same (seconds 0, not both day fields restricted, any year),
                                   else ``FREQ=DAILY`` RRULE with BYMONTH, BYMONTHDAY, BYDAY
                                   (ANDed, as Temporal does), BYHOUR, BYMINUTE, BYSECOND; a
                                   contiguous year range becomes the start and ``UNTIL``
``interval`` ``{interval,phase}``  ``Every(interval, anchor=1970-01-01T00:00Z + phase)``:
                                   Temporal fires at ``epoch + n * interval + phase``
``excludeStructuredCalendar``,     ``exclude=``: a calendar of the local dates it names
``excludeCalendar``                (note ``excluded:temporal-exclude<n>@<hash>``)
``startTime`` / ``endTime``        ``start`` / ``effective_to`` (end inclusive, 1 s resolution)
``timezoneName``                   the zone (``""``: UTC)
``jitter``                         ``temporal(jitter=...)``
``policies.overlapPolicy``         ``temporal(overlap=...)`` (``SCHEDULE_OVERLAP_POLICY_SKIP``
                                   or ``SKIP``; unspecified is SKIP, the server default)
``policies.catchupWindow``         ``temporal(catchup_window=...)`` (absent: 365 d)
``state.paused``                   ``Preset.suspended`` (model it with Pause/Resume)
=================================  ===========================================================

**Identity.** The id is the JSON's ``scheduleId`` if present (``describe``
does not print it), else the file name without ``.json``; with several
calendars and intervals, ``<id>:1``, ``<id>:2``... in this order:
``structuredCalendar``, ``calendar``, calendar cron strings, ``@every`` cron
strings, ``interval``. A calendar that matches no time is skipped and takes
no number; a refused item keeps its number, so the others' ids do not move.
Temporal takes the *union* of them (an instant two specs match fires once);
calsim expands each as its own schedule, which the notes say.

**Refusals.** Each calendar, cron string and interval is an item: a bad one
is refused (``Imported.refused``, naming ``spec.cronString[2]``, the field
and the value) and the others imported, unless ``strict=True``. The shared
fields (zone, start/end, jitter, policies, a malformed exclude) and a conflict
between cron strings' ``TZ=`` refuse the whole file; an exclude that covers
only some of one item's times (see below) refuses that item.

**Excludes.** Temporal skips each *instant* an exclude calendar matches;
calsim's exclusion works on local dates. An exclude whose time fields cover
every time the rule fires becomes a date calendar; one whose time fields miss
them all excludes nothing for that rule (noted: a ``CalendarSpec`` exclude
written with only a date keeps Temporal's defaults ``hour=0, minute=0,
second=0`` and so removes only midnight); a partial overlap is refused.

>>> from calsim.importers.temporal import from_temporal
>>> spec = '{"scheduleId": "report", "spec": {"cronString": ["30 2 * * MON-FRI"], "timezoneName": "Europe/Berlin"}}'
>>> t = from_temporal(spec)
>>> s = t[0]
>>> s.id, s.zone, s.rule, s.gap, s.fold, s.policy.overlap
('report', 'Europe/Berlin', '30 2 * * 1-5', 'skip', 'both', 'skip')
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import re
import zoneinfo
from pathlib import Path
from typing import Any

from ..errors import CalsimError, InputError, RuleError
from ..presets import Preset, temporal
from ..presets import TemporalOverlap as Overlap
from ..rules.every import Every
from ..schedule import Schedule
from ._yaml import load_json
from ._result import Imported, Items, Skipped, Source, attach, read_input, reraise
from .crontab import DEFAULT_START, _check_zone
from .temporal_calendar import (TemporalExclude, _Cal, _calendar_rule, _cron_body, _cron_kind, _cron_tz,
                                _duration, _excludes, _from_strings, _get, _obj, _show, _structured)

__all__ = ["from_temporal", "TemporalExclude"]

_OVERLAP: tuple[Overlap, ...] = ("SKIP", "BUFFER_ONE", "BUFFER_ALL", "CANCEL_OTHER", "TERMINATE_OTHER", "ALLOW_ALL")
_EPOCH = dt.datetime(1970, 1, 1, tzinfo=dt.timezone.utc)
_SPEC_KEYS = ("structuredCalendar", "calendar", "cronString", "interval", "excludeStructuredCalendar",
              "excludeCalendar", "startTime", "endTime", "jitter", "timezoneName")


def from_temporal(path_or_text: object, *, source: str | None = None, start: object = None,
                  strict: bool = False) -> Imported:
    """Read a Temporal schedule's JSON into schedules (see the module docstring).

    Parameters
    ----------
    path_or_text
        A path, or the JSON itself (a ``str`` starting with ``{`` or holding
        a line break, or ``bytes``).
    source
        Name used in ids and messages instead of the file's.
    start
        Anchor of the calendar rules when the spec has no ``startTime``
        (default ``2000-01-01T00:00``, Temporal's first calendar year).
    strict
        False (default): a calendar, cron string or interval that is
        malformed or that calsim cannot express is refused
        (``Imported.refused``) and the others imported; True: the first one
        (in id order) raises. The spec's shared fields (zone, start/end,
        jitter, policies, excludes) apply to all: a bad one refuses the file
        with one error, whatever ``strict`` says.

    Returns
    -------
    Imported
        One schedule per calendar and interval, with the
        :func:`calsim.presets.temporal` preset built from ``policies`` and
        ``jitter``; calendars that match no time are in ``skipped``.

    Raises
    ------
    InputError
        Not JSON, no spec, a field of the wrong type, a bad duration or time.
    RuleError
        A range out of bounds, a malformed cron string or calendar, an
        interval Temporal refuses, an exclude calsim cannot express.
    PolicyError
        An unknown overlap policy.

    An item's error (a calendar, cron string or interval, or an exclude
    that covers only some of that item's times) raises only with
    ``strict=True`` or when every item is refused (the first, naming how
    many more: as every importer does).
    """
    if isinstance(path_or_text, str) and path_or_text.lstrip().startswith(("{", "[")):
        text, file, path = path_or_text, source or "<temporal text>", None
    else:
        text, file, path = read_input(path_or_text, "temporal", source)
    label = source or (path.name if path is not None else file)
    where = f"temporal: {label}"
    doc = load_json(text, where)
    if not isinstance(doc, dict):
        raise InputError(f"{where}: expected a JSON object (temporal schedule describe -o json), "
                         f"got {type(doc).__name__}")
    sched = _get(doc, "schedule")
    if isinstance(sched, dict):
        pass
    elif _get(doc, "spec") is not None:
        sched = doc
    elif any(_get(doc, k) is not None for k in _SPEC_KEYS):
        sched = {"spec": doc}
    else:
        raise InputError(f"{where}: no schedule spec (expected 'schedule.spec', 'spec' or ScheduleSpec fields "
                         "such as 'structuredCalendar', 'interval', 'cronString')")
    spec = _obj(_get(sched, "spec"), f"{where}: spec")
    policies = _obj(_get(sched, "policies") or {}, f"{where}: policies")
    state = _obj(_get(sched, "state") or {}, f"{where}: state")

    sid_raw = _get(doc, "scheduleId")
    if sid_raw is not None and (not isinstance(sid_raw, str) or not sid_raw.strip()):
        raise InputError(f"{where}: scheduleId: expected a non-empty string, got {sid_raw!r}")
    name = Path(label).name if label and not label.startswith("<") else "temporal"
    sid = sid_raw.strip() if isinstance(sid_raw, str) else (name[:-5] if name.endswith(".json") else name)

    items = Items(strict)
    notes: list[str] = []
    tz_name = _get(spec, "timezoneName") or ""
    if not isinstance(tz_name, str):
        raise InputError(f"{where}: spec.timezoneName: expected a zone name, got {tz_name!r}")
    entries = _entries(spec, where)
    # An item's error is kept (not raised) until the shared fields are read: a bad shared field refuses
    # the file in both modes, and strict=True then raises the first bad item in id order.
    errors: dict[int, CalsimError] = {}
    # A cron string's TZ= sets the whole spec's zone (spec.go canonicalizeSpec), so every prefix is read
    # first, even of a string whose fields are bad: refusing that string must not move the others' zone.
    # Temporal compares every string's prefix, absent ones included ("" for none): a TZ= string beside
    # one without refuses the spec (spec.go canonicalizeSpec, errConflictingTimezoneNames).
    cron_tz: str | None = None
    first: tuple[str, str] | None = None
    for n, (key, at, raw) in enumerate(entries):
        if key != "cronString":
            continue
        try:
            tz = _cron_tz(raw, at)[0]
        except CalsimError as exc:
            errors[n] = exc
            continue
        if first is not None and (tz or "") != first[0]:
            mine, theirs = (f"TZ={tz}" if tz else "no TZ="), (f"TZ={first[0]}" if first[0] else "no TZ=")
            raise RuleError(f"{at}: {mine} conflicts with {theirs} of {first[1].split(': ')[-1]} "
                            "(Temporal requires all cron strings to agree on the zone, a missing TZ= included)")
        if first is None:
            first = (tz or "", at)
        cron_tz = tz or cron_tz
    if cron_tz:
        if tz_name and tz_name != cron_tz:
            raise RuleError(f"{where}: spec.cronString: TZ={cron_tz} conflicts with timezoneName {tz_name!r}")
        tz_name = cron_tz
    excludes = [_structured(raw, f"{where}: spec.excludeStructuredCalendar[{i}]", False)
                for i, raw in enumerate(_list(spec, "excludeStructuredCalendar", where), 1)]
    excludes += [_from_strings(raw, f"{where}: spec.excludeCalendar[{i}]")
                 for i, raw in enumerate(_list(spec, "excludeCalendar", where), 1)]

    zone = _check_zone(tz_name or "UTC", f"{where}: spec.timezoneName")
    if _get(spec, "timezoneData"):
        notes.append("spec.timezoneData (a TZif file) is not read: calsim resolves times with its own tzdata "
                     f"release for {zone!r}")
    start_at = _time(_get(spec, "startTime"), f"{where}: spec.startTime")
    end_at = _time(_get(spec, "endTime"), f"{where}: spec.endTime")
    if start_at and end_at and end_at < start_at:
        raise InputError(f"{where}: spec.endTime {_iso(end_at)} is before spec.startTime {_iso(start_at)}")
    jitter = _duration(_get(spec, "jitter"), f"{where}: spec.jitter")

    overlap = _overlap(_get(policies, "overlapPolicy"), f"{where}: policies.overlapPolicy")
    window = _duration(_get(policies, "catchupWindow"), f"{where}: policies.catchupWindow")
    try:
        preset: Preset = temporal(overlap=overlap, catchup_window="365d" if window is None else window,
                                  jitter=jitter or None)
    except CalsimError as exc:
        raise reraise(exc, f"{where}: policies") from None
    if _get(policies, "pauseOnFailure") is True:
        notes.append("policies.pauseOnFailure: true: a failed run pauses the schedule; not modelled")
    if _get(state, "paused") is True:
        preset = dataclasses.replace(preset, suspended=True)
        notes.append("state.paused: true: Temporal takes no scheduled action; model it with calsim.Pause/Resume "
                     "(Imported.presets[id].suspended)")
    if _get(state, "limitedActions") is True:
        notes.append(f"state.limitedActions: only {_get(state, 'remainingActions') or 0} more actions run; "
                     "not modelled")
    if len(entries) > 1:
        notes.append("Temporal takes the union of all calendars and intervals (an instant two of them match "
                     "fires once, and jitter stops at the next time of any); calsim expands each as its own "
                     "schedule")

    # Number the items: a calendar that matches no time is skipped and takes no number (as before
    # refusals existed); a refused item keeps its number, so fixing it does not rename the others.
    skipped: list[Skipped] = []
    numbered: list[tuple[str, Any, _Cal | tuple[int, int] | CalsimError]] = []
    for n, (key, at, raw) in enumerate(entries):
        body: _Cal | tuple[int, int] | CalsimError | None = errors.get(n)
        if body is None:
            try:
                body = _item(key, raw, at)
            except CalsimError as exc:
                body = exc
        if isinstance(body, _Cal) and body.empty():
            skipped.append(Skipped(Source("temporal", file, text=key), at.split(": ")[-1],
                                   "a field has no range, so the calendar matches no time (Temporal: all "
                                   "fields must have at least one range)"))
        else:
            numbered.append((at, raw, body))
    if not numbered:
        raise InputError(f"{where}: the spec has no calendar, cron string or interval that matches a time")

    end_to = None if end_at is None else end_at + dt.timedelta(seconds=1)  # endTime is inclusive, 1 s resolution
    schedules: list[Schedule] = []
    presets: dict[str, Preset] = {}
    for k, (at, raw, body) in enumerate(numbered, 1):
        rid = sid if len(numbered) == 1 else f"{sid}:{k}"
        label = at.split(": ")[-1]
        src = Source("temporal", file, item=k, text=raw if isinstance(raw, str) else label)
        if isinstance(body, CalsimError):
            items.refuse(src, label, body)
            continue
        out = items.run(src, label, _rule_schedule, body, at, rid, notes, start_at, start, zone, excludes, end_to,
                        Source("temporal", file, item=k), preset)
        if out is not None:
            schedules.append(out)
            presets[rid] = preset
    return items.done(schedules, skipped, presets)


def _entries(spec: dict, where: str) -> list[tuple[str, str, Any]]:
    """``(field, where, raw)`` of every calendar, cron string and interval, in id order (see Identity)."""
    def of(key: str) -> list[tuple[str, str, Any]]:
        return [(key, f"{where}: spec.{key}[{i}]", raw) for i, raw in enumerate(_list(spec, key, where), 1)]
    crons = of("cronString")
    return (of("structuredCalendar") + of("calendar") + [c for c in crons if _cron_kind(c[2]) == "calendar"]
            + [c for c in crons if _cron_kind(c[2]) == "interval"] + of("interval"))


def _item(key: str, raw: Any, at: str) -> _Cal | tuple[int, int]:
    """One calendar (:class:`_Cal`) or interval ``(every, phase)`` in seconds, checked."""
    if key == "structuredCalendar":
        return _structured(raw, at, True)
    if key == "calendar":
        return _from_strings(raw, at)
    if key == "cronString":
        _, body = _cron_body(_cron_tz(raw, at)[1], raw, at)
        return body if isinstance(body, _Cal) else _interval(*body, at)
    iv = _obj(raw, at)
    return _interval(_duration(_get(iv, "interval"), f"{at}.interval", required=True),
                     _duration(_get(iv, "phase"), f"{at}.phase") or 0, at)


def _interval(every: int, phase: int, at: str) -> tuple[int, int]:
    # spec.go validateInterval: at least 1 s, 0 <= phase < interval (both truncated to seconds).
    if every < 1:
        raise RuleError(f"{at}: interval {every} s is too small (Temporal requires at least 1s)")
    if phase >= every:
        raise RuleError(f"{at}: phase {phase}s must be less than the interval {every}s")
    return every, phase


def _rule_schedule(body: _Cal | tuple[int, int], at: str, rid: str, notes: list[str], start_at: dt.datetime | None,
                   start: object, zone: str, excludes: list, end_to: dt.datetime | None, source: Source,
                   preset: Preset) -> Schedule:
    """The schedule of one calendar or interval of the spec."""
    rnotes = list(notes)
    rule: str | Every  # an RRULE's text, or the interval
    if isinstance(body, _Cal):
        rule, first, until = _calendar_rule(body, at)
        sched_start: object = _start(first, start_at, start, zone)
        if until is not None:
            rule += f";UNTIL={until}"
        exclude = _excludes(excludes, body.times(), None, at, rnotes, zone)
        text = rule
    else:
        e, p = body
        rule = Every(dt.timedelta(seconds=e), anchor=_EPOCH + dt.timedelta(seconds=p))
        sched_start = _iso(start_at) if start_at is not None else (start or DEFAULT_START)
        times = None
        if zone == "UTC" and 86400 % e == 0:
            times = frozenset((p + j * e) % 86400 for j in range(86400 // e))
        exclude = _excludes(excludes, times, e, at, rnotes, zone)
        text = f"interval {e}s phase {p}s"
    try:
        sched = preset.apply(Schedule(rid, zone, sched_start, rule, exclude=tuple(exclude),
                                      effective_to=None if end_to is None else _iso(end_to)))
    except CalsimError as exc:
        raise reraise(exc, at) from None
    assert isinstance(sched, Schedule)
    return attach(sched, dataclasses.replace(source, text=text, notes=tuple(rnotes)))


# -- JSON values of the document (the shared readers are in temporal_calendar)


def _list(obj: dict, key: str, where: str) -> list:
    value = _get(obj, key)
    if value is None:
        return []
    if not isinstance(value, list):
        raise InputError(f"{where}: spec.{key}: expected a JSON array, got {_show(value)}")
    return value


def _time(value: Any, where: str) -> dt.datetime | None:
    if value is None or value == "":
        return None
    if isinstance(value, str):
        try:
            t = dt.datetime.fromisoformat(value.strip().replace("z", "Z"))
        except ValueError:
            t = None
        if t is not None and t.tzinfo is not None:
            return t.astimezone(dt.timezone.utc).replace(microsecond=0)  # Temporal works in whole seconds
    raise InputError(f"{where}: {_show(value)} is not an RFC 3339 time with a zone (e.g. '2026-03-01T00:00:00Z')")


def _iso(t: dt.datetime) -> str:
    return t.astimezone(dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def _overlap(value: Any, where: str) -> Overlap:
    """``SKIP``... from ``SCHEDULE_OVERLAP_POLICY_SKIP``, ``Skip``, ``BufferOne``, the enum number or absent."""
    if value is None or value == "" or value == 0:
        return "SKIP"  # SCHEDULE_OVERLAP_POLICY_UNSPECIFIED: the server treats it as SKIP (enums/v1/schedule.proto)
    if isinstance(value, int) and not isinstance(value, bool) and 1 <= value <= 6:
        return _OVERLAP[value - 1]
    if isinstance(value, str):
        v = value.strip()
        v = re.sub(r"(?<=[a-z])(?=[A-Z])", "_", v).upper()
        v = v.removeprefix("SCHEDULE_OVERLAP_POLICY_")
        if v == "UNSPECIFIED":
            return "SKIP"
        if v in _OVERLAP:
            return v
    raise InputError(f"{where}: unknown overlap policy {_show(value)} (allowed SCHEDULE_OVERLAP_POLICY_ + "
                     f"{', '.join(_OVERLAP)})")


def _start(first_year: int | None, start_at: dt.datetime | None, default: object, zone: str) -> object:
    """The schedule's start: ``startTime`` (an instant), or the first year's 1 January (local), the later."""
    if first_year is None:
        return _iso(start_at) if start_at is not None else (default or DEFAULT_START)
    year_start = dt.datetime(first_year, 1, 1)
    if start_at is not None and start_at.astimezone(zoneinfo.ZoneInfo(zone)).replace(tzinfo=None) > year_start:
        return _iso(start_at)
    return year_start.isoformat(timespec="seconds")
