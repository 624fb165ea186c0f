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
calendars and intervals, ``<id>:1``, ``<id>:2``... in the order above.
Temporal takes the *union* of them (an instant two specs match fires once);
calsim expands each as its own schedule, which the notes say.

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
import hashlib
import json
import re
import zoneinfo
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from ..calendars import Calendar
from ..errors import CalsimError, InputError, RuleError
from ..presets import Preset, temporal
from ..rules.every import Every
from ..schedule import Schedule
from ._result import Imported, Items, Skipped, Source, attach, read_input, reraise
from .crontab import DEFAULT_START, _check_zone

__all__ = ["from_temporal", "TemporalExclude"]

# Field bounds of StructuredCalendarSpec (service/worker/scheduler/spec.go validateStructuredCalendar;
# years: calendar.go minCalendarYear/maxCalendarYear, what "*" compiles to).
_FIELDS = ("second", "minute", "hour", "dayOfMonth", "month", "year", "dayOfWeek")
_BOUNDS = {"second": (0, 59), "minute": (0, 59), "hour": (0, 23), "dayOfMonth": (1, 31), "month": (1, 12),
           "year": (2000, 2100), "dayOfWeek": (0, 7)}
# CalendarSpec string defaults (message.proto): seconds, minutes and hours default to 0, the rest to "*".
_DEFAULTS = {"second": "0", "minute": "0", "hour": "0", "dayOfMonth": "*", "month": "*", "year": "*",
             "dayOfWeek": "*"}
_MONTHS = ("january", "february", "march", "april", "may", "june", "july", "august", "september", "october",
           "november", "december")
_DOWS = ("sunday", "monday", "tuesday", "wednesday", "thursday", "friday", "saturday")
_RRULE_DAYS = ("SU", "MO", "TU", "WE", "TH", "FR", "SA")
_OVERLAP = ("SKIP", "BUFFER_ONE", "BUFFER_ALL", "CANCEL_OTHER", "TERMINATE_OTHER", "ALLOW_ALL")
_EPOCH = dt.datetime(1970, 1, 1, tzinfo=dt.timezone.utc)
_DURATION = re.compile(r"(\d+(?:\.\d*)?|\.\d+)(ns|us|µs|ms|s|m|h|d)")
_DUR_UNITS = {"ns": 1e-9, "us": 1e-6, "µs": 1e-6, "ms": 1e-3, "s": 1, "m": 60, "h": 3600, "d": 86400}
_SPEC_KEYS = ("structuredCalendar", "calendar", "cronString", "interval", "excludeStructuredCalendar",
              "excludeCalendar", "startTime", "endTime", "jitter", "timezoneName")


@dataclass(frozen=True)
class TemporalExclude(Calendar):
    """The local dates a Temporal exclude calendar names (year, month, day of month, day of week, ANDed).

    ``days()`` computes them for any range, so an exclude such as "every
    25 December" needs no horizon.

    >>> import datetime as dt
    >>> cal = TemporalExclude("x", "1", months=frozenset({12}), doms=frozenset({25}))
    >>> [str(d) for d in cal.days(dt.date(2026, 12, 1), dt.date(2027, 12, 31))]
    ['2026-12-25', '2027-12-25']
    """

    years: frozenset = field(default=frozenset(range(2000, 2101)), repr=False)
    months: frozenset = field(default=frozenset(range(1, 13)), repr=False)
    doms: frozenset = field(default=frozenset(range(1, 32)), repr=False)
    dows: frozenset = field(default=frozenset(range(7)), repr=False)  # 0 = Sunday, as Temporal counts

    def days(self, first: dt.date, last: dt.date) -> np.ndarray:
        """Excluded local dates in ``[first, last]`` as sorted ``datetime64[D]``."""
        d = np.arange(np.datetime64(first, "D"), np.datetime64(last, "D") + 1)
        if d.size == 0:
            return d
        y = d.astype("datetime64[Y]").astype(np.int64) + 1970
        m = d.astype("datetime64[M]").astype(np.int64) % 12 + 1
        dom = (d - d.astype("datetime64[M]")).astype(np.int64) + 1
        dow = (d.astype(np.int64) + 4) % 7  # 1970-01-01 was a Thursday (4 when Sunday is 0)
        keep = (np.isin(y, sorted(self.years)) & np.isin(m, sorted(self.months)) & np.isin(dom, sorted(self.doms))
                & np.isin(dow, sorted(self.dows)))
        return d[keep]


@dataclass(frozen=True)
class _Cal:
    """A compiled calendar: the set of values each field matches."""

    sets: dict[str, frozenset]
    where: str

    def times(self) -> frozenset:
        """Seconds of the day it matches."""
        return frozenset(h * 3600 + m * 60 + s for h in self.sets["hour"] for m in self.sets["minute"]
                         for s in self.sets["second"])

    def empty(self) -> bool:
        return any(not v for v in self.sets.values())


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
        False (default): a calendar or interval calsim cannot express is
        refused (``Imported.refused``) and the others imported; True: the
        first one raises. The spec's shared fields (zone, start/end,
        policies) apply to all: a bad one refuses the file.

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
    """
    if isinstance(path_or_text, str) and path_or_text.lstrip().startswith(("{", "[")):
        text, file, path = path_or_text, source or "<temporal text>", None
    else:
        text, file, path = read_input(path_or_text, "temporal", source)
    label = source or (path.name if path is not None else file)
    where = f"temporal: {label}"
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as exc:
        raise InputError(f"{where}: not JSON ({exc.msg} at line {exc.lineno} column {exc.colno})") from None
    except RecursionError:
        raise InputError(f"{where}: JSON nested too deeply") from None
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

    notes: list[str] = []
    tz_name = _get(spec, "timezoneName") or ""
    if not isinstance(tz_name, str):
        raise InputError(f"{where}: spec.timezoneName: expected a zone name, got {tz_name!r}")
    calendars: list[tuple[str, _Cal]] = []
    for i, raw in enumerate(_list(spec, "structuredCalendar", where), 1):
        calendars.append(("structuredCalendar", _structured(raw, f"{where}: spec.structuredCalendar[{i}]", True)))
    for i, raw in enumerate(_list(spec, "calendar", where), 1):
        calendars.append(("calendar", _from_strings(raw, f"{where}: spec.calendar[{i}]")))
    intervals: list[tuple[int, int, str]] = []
    cron_tz: str | None = None
    for i, raw in enumerate(_list(spec, "cronString", where), 1):
        at = f"{where}: spec.cronString[{i}]"
        kind, value, tz = _cron_string(raw, at)
        if tz is not None:
            if cron_tz is not None and tz != cron_tz:
                raise RuleError(f"{at}: TZ={tz} conflicts with TZ={cron_tz} of an earlier cron string "
                                "(Temporal requires all cron strings to agree)")
            cron_tz = tz
        if kind == "calendar":
            calendars.append(("cronString", value))
        else:
            intervals.append((*value, at))
    if cron_tz:
        if tz_name and tz_name != cron_tz:
            raise RuleError(f"{where}: spec.cronString: TZ={cron_tz} conflicts with timezoneName {tz_name!r}")
        tz_name = cron_tz
    for i, raw in enumerate(_list(spec, "interval", where), 1):
        at = f"{where}: spec.interval[{i}]"
        iv = _obj(raw, at)
        every = _duration(_get(iv, "interval"), f"{at}.interval", required=True)
        phase = _duration(_get(iv, "phase"), f"{at}.phase") or 0
        intervals.append((every, phase, at))
    for every, phase, at in intervals:
        # spec.go validateInterval: at least 1 s, 0 <= phase < interval (both truncated to seconds).
        if every < 1:
            raise RuleError(f"{at}: interval {every} s is too small (Temporal requires at least 1s)")
        if phase >= every:
            raise RuleError(f"{at}: phase {phase}s must be less than the interval {every}s")
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
    if len(calendars) + len(intervals) > 1:
        notes.append("Temporal takes the union of all calendars and intervals (an instant two of them match "
                     "fires once, and jitter stops at the next time of any); calsim expands each as its own "
                     "schedule")

    skipped: list[Skipped] = []
    live = []
    for kind, cal in calendars:
        if cal.empty():
            skipped.append(Skipped(Source("temporal", file, text=kind), cal.where.split(": ")[-1],
                                   "a field has no range, so the calendar matches no time (Temporal: all "
                                   "fields must have at least one range)"))
        else:
            live.append((kind, cal))
    rules = [("calendar", kind, cal) for kind, cal in live] + [("interval", at, (e, p)) for e, p, at in intervals]
    if not rules:
        raise InputError(f"{where}: the spec has no calendar, cron string or interval that matches a time")

    end_to = None if end_at is None else end_at + dt.timedelta(seconds=1)  # endTime is inclusive, 1 s resolution
    schedules: list[Schedule] = []
    presets: dict[str, Preset] = {}
    items = Items(strict)
    for k, (what, kind, body) in enumerate(rules, 1):
        rid = sid if len(rules) == 1 else f"{sid}:{k}"
        text = kind if isinstance(kind, str) and what == "interval" else getattr(body, "where", kind)
        out = items.run(Source("temporal", file, item=k, text=str(text).split(": ")[-1]), str(text).split(": ")[-1],
                        _rule_schedule, what, kind, body, rid, notes, start_at, start, zone, excludes, end_to, file,
                        preset)
        if out is not None:
            schedules.append(out)
            presets[rid] = preset
    return items.done(schedules, skipped, presets)


def _rule_schedule(what: str, kind: Any, body: Any, rid: str, notes: list[str], start_at: dt.datetime | None,
                   start: object, zone: str, excludes: list, end_to: dt.datetime | None, file: str,
                   preset: Preset) -> Schedule:
    """The schedule of one calendar or interval of the spec."""
    rnotes = list(notes)
    if what == "calendar":
        assert isinstance(body, _Cal)
        at = body.where
        rule, first, until = _calendar_rule(body, at)
        sched_start: object = _start(first, start_at, start, zone)
        if until is not None:
            rule += f";UNTIL={until}"
        exclude = _excludes(excludes, body.times(), None, at, rnotes, zone)
    else:
        e, p = body  # type: ignore[misc]
        at = kind
        rule = Every(dt.timedelta(seconds=e), anchor=_EPOCH + dt.timedelta(seconds=p))
        sched_start = _iso(start_at) if start_at is not None else (start or DEFAULT_START)
        times = None
        if zone == "UTC" and 86400 % e == 0:
            times = frozenset((p + j * e) % 86400 for j in range(86400 // e))
        exclude = _excludes(excludes, times, e, at, rnotes, zone)
    text = rule if isinstance(rule, str) else f"interval {body[0]}s phase {body[1]}s"  # type: ignore[index]
    src = Source("temporal", file, text=text, notes=tuple(rnotes))
    try:
        sched = preset.apply(Schedule(rid, zone, sched_start, rule, exclude=tuple(exclude),
                                      effective_to=None if end_to is None else _iso(end_to)))
    except CalsimError as exc:
        raise reraise(exc, at) from None
    assert isinstance(sched, Schedule)
    return attach(sched, src)


# -- JSON helpers: every message names the field and the value


def _snake(key: str) -> str:
    return re.sub(r"([A-Z])", lambda m: "_" + m[1].lower(), key)


def _get(obj: Any, key: str) -> Any:
    """``obj[key]`` under its protojson (camelCase) or proto (snake_case) name; None if absent."""
    if not isinstance(obj, dict):
        return None
    if key in obj:
        return obj[key]
    return obj.get(_snake(key))


def _obj(value: Any, where: str) -> dict:
    if not isinstance(value, dict):
        raise InputError(f"{where}: expected a JSON object, got {_show(value)}")
    return value


def _list(obj: dict, key: str, where: str) -> list:
    value = _get(obj, key)
    if value is None:
        return []
    if not isinstance(value, list):
        raise InputError(f"{where}: spec.{key}: expected a JSON array, got {_show(value)}")
    return value


def _show(value: Any) -> str:
    text = json.dumps(value) if not isinstance(value, str) else repr(value)
    return f"{type(value).__name__} {text[:40] + '...' if len(text) > 40 else text}"


def _duration(value: Any, where: str, *, required: bool = False) -> int | None:
    """Whole seconds of a protojson Duration (``"3600s"``, ``"1.5s"``) or Go-style ``"1h30m"``/``"2d"``.

    Temporal truncates intervals, phases and windows to the second (message.proto IntervalSpec).
    """
    if value is None:
        if required:
            raise InputError(f"{where}: required (a duration such as '3600s' or '1h')")
        return None
    if isinstance(value, (int, float)) and not isinstance(value, bool) and value >= 0 and value == value \
            and value < 1e12:
        return int(value)
    if isinstance(value, str):
        s = value.strip()
        total, pos = 0.0, 0
        for m in _DURATION.finditer(s):
            if m.start() != pos:
                break
            total += float(m[1]) * _DUR_UNITS[m[2]]
            pos = m.end()
        if s and pos == len(s) and total < 1e12:
            return int(total)
    raise InputError(f"{where}: {_show(value)} is not a duration (allowed e.g. '3600s', '1.5s', '1h30m', '2d')")


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


def _overlap(value: Any, where: str) -> str:
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


# -- calendars


def _int(value: Any, where: str) -> int:
    if value is None:
        return 0  # protojson omits zero values
    if isinstance(value, bool) or not isinstance(value, (int, str)):
        raise InputError(f"{where}: expected an integer, got {_show(value)}")
    try:
        return int(value)
    except ValueError:
        raise InputError(f"{where}: expected an integer, got {_show(value)}") from None


def _structured(raw: Any, where: str, strict: bool) -> _Cal:
    """The value sets of a StructuredCalendarSpec (calendar.go iterateRanges; bounds of spec.go)."""
    cal = _obj(raw, where)
    sets: dict[str, frozenset] = {}
    for f in _FIELDS:
        ranges = _get(cal, f)
        if ranges is None:
            ranges = []
        if not isinstance(ranges, list):
            raise InputError(f"{where}.{f}: expected an array of ranges, got {_show(ranges)}")
        lo, hi = _BOUNDS[f]
        values: set[int] = set()
        for j, r in enumerate(ranges, 1):
            at = f"{where}.{f}[{j}]"
            r = _obj(r, at)
            a, b, step = _int(_get(r, "start"), at + ".start"), _int(_get(r, "end"), at + ".end"), \
                _int(_get(r, "step"), at + ".step")
            if not lo <= a <= hi:
                raise RuleError(f"{at}: start {a} is out of range (allowed {lo}..{hi})")
            if b != 0 and (b > hi or (strict and b < a)):
                raise RuleError(f"{at}: end {b} is before start {a} or out of range (allowed {a}..{hi})")
            if step < 0:
                raise RuleError(f"{at}: step {step} is negative (allowed 0 or more; 0 means 1)")
            # message.proto Range: end < start reads as end = start, step 0 as 1.
            values.update(range(a, max(a, b) + 1, step or 1))
        if f == "dayOfWeek":
            values = {v % 7 for v in values}  # 7 is Sunday too (calendar.go makeBitMatcher)
        sets[f] = frozenset(values)
    return _Cal(sets, where)


def _from_strings(raw: Any, where: str) -> _Cal:
    """A CalendarSpec (string fields, message.proto defaults) compiled as calendar.go parseCalendarToStructured."""
    cal = _obj(raw, where)
    sets = {}
    for f in _FIELDS:
        value = _get(cal, f)
        if value is not None and not isinstance(value, str):
            raise InputError(f"{where}.{f}: expected a string such as '*' or '1-5', got {_show(value)}")
        sets[f] = _make_range(value or "", _DEFAULTS[f], f, f"{where}.{f}")
    return _Cal(sets, where)


def _cron_string(raw: Any, where: str):
    """``("calendar", _Cal, tz)`` or ``("interval", (every, phase), tz)`` of a Temporal cron string.

    calendar.go parseCronString: optional ``TZ=``/``CRON_TZ=`` prefix, ``@every <interval>[/<phase>]``,
    the @hourly... shorthands, then 5 (minute..day-of-week), 6 (+ year) or 7 (second first) fields;
    a ``#`` starts a comment.
    """
    if not isinstance(raw, str):
        raise InputError(f"{where}: expected a string, got {_show(raw)}")
    text = raw.split("#", 1)[0].strip()
    tz = None
    if text.startswith(("TZ=", "CRON_TZ=")):
        head, _, text = text.partition(" ")
        tz = head.split("=", 1)[1]
        text = text.strip()
        if not text or not tz:
            raise RuleError(f"{where}: {raw!r} has a TZ= prefix but no zone or no schedule after it")
    if text.startswith("@every"):
        body = text[len("@every"):].strip()
        every, _, phase = body.partition("/")
        if not every:
            raise RuleError(f"{where}: {raw!r}: @every needs a duration such as '@every 1h' or '@every 1h/15m'")
        e = _duration(every, where)
        p = _duration(phase, where) if phase else 0
        return "interval", (e, p), tz
    text = {"@yearly": "0 0 1 1 *", "@annually": "0 0 1 1 *", "@monthly": "0 0 1 * *", "@weekly": "0 0 * * 0",
            "@daily": "0 0 * * *", "@midnight": "0 0 * * *", "@hourly": "0 * * * *"}.get(text, text)
    fields = text.split()
    names = {5: ("minute", "hour", "dayOfMonth", "month", "dayOfWeek"),
             6: ("minute", "hour", "dayOfMonth", "month", "dayOfWeek", "year"),
             7: ("second", "minute", "hour", "dayOfMonth", "month", "dayOfWeek", "year")}.get(len(fields))
    if names is None:
        raise RuleError(f"{where}: {raw!r} has {len(fields)} fields (allowed 5, 6 or 7, or @every/@daily...)")
    given = dict(zip(names, fields))
    sets = {f: _make_range(given.get(f, ""), _DEFAULTS[f] if f != "year" else "*", f, f"{where} {f}")
            for f in _FIELDS}
    return "calendar", _Cal(sets, where), tz


def _make_range(s: str, default: str, field: str, where: str) -> frozenset:
    """The values a CalendarSpec string matches (calendar.go makeRange)."""
    lo, hi = _BOUNDS[field]
    s = s.strip() or default
    values: set[int] = set()
    for part in s.split(","):
        step, has_step = 1, False
        if "/" in part:
            base, _, st = part.partition("/")
            if "/" in st or not st.isdigit() or int(st) < 1:
                raise RuleError(f"{where}: {s!r}: bad step in {part!r} (allowed a whole number >= 1)")
            part, step, has_step = base, int(st), True
        a, b = lo, hi
        if part != "*":
            if "-" in part:
                x, _, y = part.partition("-")
                a = _value(x, lo, hi, field, where, s)
                b = _value(y, a, hi, field, where, s)
            else:
                a = _value(part, lo, hi, field, where, s)
                b = a if not has_step else hi  # "x/y" runs from x to the end of the field
        values.update(range(a, b + 1, step))
    if field == "dayOfWeek":
        values = {v % 7 for v in values}
    return frozenset(values)


def _value(token: str, lo: int, hi: int, field: str, where: str, whole: str) -> int:
    t = token.strip().lower()
    # calendar.go parseValue: month names by a prefix of 3+ letters, weekdays by 2+.
    table, need = ((_MONTHS, 3) if field == "month" else (_DOWS, 2) if field == "dayOfWeek" else ((), 99))
    if len(t) >= need and t.isalpha():
        for i, name in enumerate(table):
            if name.startswith(t):
                return i + 1 if field == "month" else i
    if t.isdigit() and lo <= int(t) <= hi:
        return int(t)
    raise RuleError(f"{where}: {whole!r}: {token!r} is out of range or not a value (allowed {lo}..{hi}"
                    + (", month names" if field == "month" else ", weekday names" if field == "dayOfWeek" else "")
                    + ")")


def _compact(values: frozenset) -> str:
    """``1,2,3,5`` -> ``1-3,5``."""
    out, run = [], []
    for v in sorted(values):
        if run and v == run[-1] + 1:
            run.append(v)
            continue
        if run:
            out.append(str(run[0]) if len(run) == 1 else f"{run[0]}-{run[-1]}")
        run = [v]
    if run:
        out.append(str(run[0]) if len(run) == 1 else f"{run[0]}-{run[-1]}")
    return ",".join(out)


def _calendar_rule(cal: _Cal, where: str) -> tuple[str, int | None, str | None]:
    """``(rule, first year or None, local UNTIL or None)``: Vixie cron where exact, else an RRULE."""
    s = cal.sets
    full = {f: s[f] == frozenset(range(_BOUNDS[f][0], _BOUNDS[f][1] + 1)) for f in _FIELDS if f != "dayOfWeek"}
    full["dayOfWeek"] = s["dayOfWeek"] == frozenset(range(7))
    years = sorted(s["year"])
    first = until = None
    if not full["year"]:
        if years[-1] - years[0] + 1 != len(years):
            raise RuleError(f"{where}: year {_compact(s['year'])}: calsim imports one contiguous range of years "
                            "(split the calendar into one per range)")
        first, until = years[0], f"{years[-1]}1231T235959"
    # Temporal ANDs day of month and day of week (message.proto); Vixie cron ORs them when both are
    # restricted, so such a calendar (and any with seconds or years) becomes an RRULE, whose BYxxx
    # parts all limit a DAILY rule.
    if s["second"] == {0} and full["year"] and (full["dayOfMonth"] or full["dayOfWeek"]):
        parts = [_compact(s["minute"]), _compact(s["hour"])]
        parts += ["*" if full[f] else _compact(s[f]) for f in ("dayOfMonth", "month", "dayOfWeek")]
        return " ".join(parts), None, None
    rule = ["FREQ=DAILY"]
    if not full["month"]:
        rule.append("BYMONTH=" + ",".join(map(str, sorted(s["month"]))))
    if not full["dayOfMonth"]:
        rule.append("BYMONTHDAY=" + ",".join(map(str, sorted(s["dayOfMonth"]))))
    if not full["dayOfWeek"]:
        rule.append("BYDAY=" + ",".join(_RRULE_DAYS[d] for d in sorted(s["dayOfWeek"])))
    # BYHOUR/BYMINUTE/BYSECOND always: left out, RFC 5545 would take them from DTSTART.
    for part, f in (("BYHOUR", "hour"), ("BYMINUTE", "minute"), ("BYSECOND", "second")):
        rule.append(f"{part}=" + ",".join(map(str, sorted(s[f]))))
    return ";".join(rule), first, until


def _start(first_year: int | None, start_at: dt.datetime | None, default: object, zone: str) -> object:
    """The schedule's start: ``startTime`` (an instant), or the first year's 1 January (local), the later."""
    if first_year is None:
        return _iso(start_at) if start_at is not None else (default or DEFAULT_START)
    year_start = dt.datetime(first_year, 1, 1)
    if start_at is not None and start_at.astimezone(zoneinfo.ZoneInfo(zone)).replace(tzinfo=None) > year_start:
        return _iso(start_at)
    return year_start.isoformat(timespec="seconds")


def _excludes(excludes: list[_Cal], times: frozenset | None, period: int | None, where: str,
              notes: list[str], zone: str) -> list[Calendar]:
    """calsim calendars for the excludes that remove whole local days of this rule."""
    out: list[Calendar] = []
    day = frozenset(range(86400))
    for n, ex in enumerate(excludes, 1):
        label = ex.where.split(": ")[-1]
        if ex.empty():
            notes.append(f"{label} has a field with no range: it excludes nothing")
            continue
        ex_times = ex.times()
        if ex_times == day or (times is not None and times <= ex_times):
            digest = hashlib.blake2b(repr(sorted((f, sorted(v)) for f, v in ex.sets.items())).encode(),
                                     digest_size=4).hexdigest()
            out.append(TemporalExclude(f"temporal-exclude{n}", digest, years=ex.sets["year"],
                                       months=ex.sets["month"], doms=ex.sets["dayOfMonth"],
                                       dows=ex.sets["dayOfWeek"]))
        elif times is not None and not times & ex_times:
            notes.append(f"{label} matches none of this rule's times of day (a CalendarSpec exclude defaults to "
                         "hour 0, minute 0, second 0): it excludes nothing")
        else:
            what = "an interval's times of day vary" if period is not None else "it matches some of the rule's times"
            raise RuleError(f"{where}: {label}: calsim excludes whole local days, but this exclude covers only some "
                            f"times of day and {what} (widen it to hour 0-23, minute 0-59, second 0-59)")
    return out
