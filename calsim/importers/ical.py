"""Import recurring events (VEVENT) of an iCalendar file (RFC 5545) with the ``icalendar`` package.

Each VEVENT becomes one RRULE :class:`~calsim.Schedule` whose id is its UID:

==============================  ===========================================================
iCalendar                       calsim
==============================  ===========================================================
``DTSTART;TZID=Zone:...``       zone ``Zone``, start = the wall time as written. A Windows
                                name (``Eastern Standard Time``) is mapped to IANA as
                                ``icalendar`` does; the file's VTIMEZONE definitions are
                                not used: the tzdata release chosen at expansion decides
``DTSTART:...Z`` (UTC)          zone ``"UTC"``: RFC 5545 computes recurrences of a UTC
                                start in UTC (the rule keeps the UTC time of day)
``DTSTART:...`` (floating)      zone ``zone=`` (default ``"UTC"``): a floating time is
                                wall time wherever the reader is; choose that zone
``DTSTART;VALUE=DATE:...``      00:00 of that day, floating (all-day event)
``RRULE``                       the rule, as RRULE text (one RRULE per event)
no ``RRULE``                    a one-off event: ``FREQ=DAILY;COUNT=1`` (DTSTART itself)
``EXDATE``, ``RDATE``           ``exdate``/``rdate``; a value in another zone (or UTC) is
                                converted to the event's zone, a PERIOD keeps its start
``RECURRENCE-ID`` (override)    the original time joins the master's ``exdate`` and the
                                moved DTSTART its ``rdate`` (a CANCELLED override only
                                removes it). A value type or zone other than DTSTART's
                                still names one occurrence: on an all-day series, the
                                day as written (Exchange's ``TZID=...:20200416T000000``);
                                a DATE on a timed series, that day's one occurrence
                                (several: refused); another zone, the same instant, or
                                the wall time as written if only that is an occurrence
``STATUS:CANCELLED`` (master)   skipped, listed in ``Imported.skipped``
UNTIL before DTSTART            a cancelled series (calendar clients end a series
                                before its start to cancel it): no occurrence, so
                                skipped with that note, not an error
VTODO, VJOURNAL                 skipped, listed in ``Imported.skipped``
==============================  ===========================================================

**One bad event** (no UID, a TZID that is no zone, a malformed RRULE, a
UID used twice) is refused, listed in ``Imported.refused``, and the other
events are imported; ``strict=True`` raises the first error. A bad
override is refused alone (the master keeps the occurrence it named). A
calendar whose events are all cancelled imports nothing, without error.

Time semantics stay calsim's (``gap="skip"``, ``fold="first"``, DTSTART an
occurrence only when it matches the rule, as python-dateutil: see
:class:`calsim.Schedule`); pass ``gap=``/``fold=`` to choose others. Errors
name the file, the event (UID and line of its ``BEGIN:VEVENT``) and the
property.

>>> from calsim.importers import from_ical
>>> cal = from_ical('''BEGIN:VCALENDAR
... VERSION:2.0
... PRODID:-//example//EN
... BEGIN:VEVENT
... UID:standup@example.com
... DTSTART;TZID=America/New_York:20260302T093000
... RRULE:FREQ=WEEKLY;BYDAY=MO,WE,FR
... EXDATE;TZID=America/New_York:20260304T093000
... END:VEVENT
... END:VCALENDAR
... ''')
>>> s = cal[0]
>>> s.id, s.zone, s.rule, s.exdate, cal.sources[s.id].line
('standup@example.com', 'America/New_York', 'FREQ=WEEKLY;BYDAY=MO,WE,FR', ('2026-03-04T09:30:00',), 4)
"""

from __future__ import annotations

import datetime as dt
import re
from typing import Any

import numpy as np

from ..errors import CalsimError, InputError, RuleError, ScheduleError
from ..resolution import FoldPolicy, GapPolicy
from ..rules.rrule import DAY_US, RRule
from ..schedule import Schedule
from ..times import local_us
from ..tz.release import release
from ._result import Imported, Items, Skipped, Source, attach, read_input, reraise
from .crontab import _check_zone

__all__ = ["from_ical"]


def from_ical(path_or_text: object, *, zone: str = "UTC", source: str | None = None,
              gap: GapPolicy = "skip", fold: FoldPolicy = "first", strict: bool = False) -> Imported:
    """Read the VEVENTs of an ``.ics`` file into schedules (see the module docstring).

    Parameters
    ----------
    path_or_text
        A path (``str`` without a line break, or ``pathlib.Path``), or the
        file's text (a ``str`` with a line break, or ``bytes``).
    zone
        The zone of floating (and all-day) DTSTARTs.
    source
        Name used in messages instead of the file's.
    gap, fold
        DST policies given to every schedule (calsim's defaults).
    strict
        False (default): a bad VEVENT is refused (``Imported.refused``) and
        the others imported; True: the first bad VEVENT raises.

    Returns
    -------
    Imported
        The schedules (a sequence; id = UID), their sources (file, UID, line
        of ``BEGIN:VEVENT``), the skipped components (VTODO, cancelled
        events and series) and the refused ones.

    Raises
    ------
    InputError
        Unreadable file, not an iCalendar file, no VEVENT. The errors below
        with ``strict=True``, or when every event is refused:
    ScheduleError
        A VEVENT without UID or DTSTART, a UID twice, an unsupported form.
    RuleError
        A malformed RRULE.
    UnknownZoneError
        A TZID (or ``zone``) that is no IANA zone.
    """
    text, file, path = read_input(path_or_text, "ical", source)
    label = source or (path.name if path is not None else file)
    floating_zone = _check_zone(zone, f"ical: {label}: zone")
    if "BEGIN:VCALENDAR" not in text.upper():
        raise InputError(f"ical: {label}: not an iCalendar file (no BEGIN:VCALENDAR)")
    import icalendar  # imported here, on first use, so ``import calsim`` does not load it

    try:
        cal = icalendar.Calendar.from_ical(text)
    except Exception as exc:  # icalendar raises ValueError and friends
        raise InputError(f"ical: {label}: not a valid iCalendar file ({_first_line(exc)})") from None
    lines = _begin_lines(text)
    items = Items(strict)

    masters: list[tuple[str, Any, Source]] = []
    overrides: list[tuple[str, Any, Source]] = []
    skipped: list[Skipped] = []
    counters: dict[str, int] = {}
    for comp in cal.walk():
        name = comp.name
        if name not in ("VEVENT", "VTODO", "VJOURNAL"):
            continue
        counters[name] = counters.get(name, 0) + 1
        line = lines.get(name, [])[counters[name] - 1] if counters[name] <= len(lines.get(name, [])) else None
        uid = comp.get("UID")
        uid = str(uid) if uid is not None else None
        base = Source("ical", file, line=line, uid=uid)
        if name != "VEVENT":
            skipped.append(Skipped(base, name, f"a {name} is not an event"))
            continue
        where = f"ical: {base.where}"
        if not uid:
            items.refuse(base, "VEVENT", ScheduleError(
                f"{where}: UID: missing (every VEVENT needs a UID; it is the schedule id)"))
            continue
        if comp.get("RECURRENCE-ID") is not None:
            overrides.append((where, comp, base))
        elif str(comp.get("STATUS", "")).upper() == "CANCELLED":
            skipped.append(Skipped(base, f"VEVENT {uid}", "STATUS:CANCELLED"))
        else:
            masters.append((where, comp, base))
    if not masters and not overrides and not items.refused and not any(s.what.startswith("VEVENT") for s in skipped):
        raise InputError(f"ical: {label}: no VEVENT in the calendar")

    built: dict[str, dict[str, Any]] = {}
    for where, comp, base in masters:
        uid = base.uid
        assert uid is not None
        if uid in built:
            items.refuse(base, f"VEVENT {uid}", ScheduleError(
                f"{where}: UID: {uid!r} is used by two events (first at line {built[uid]['line']}); "
                "a UID must be unique (a changed occurrence needs RECURRENCE-ID)"))
            continue
        ev = items.run(base, f"VEVENT {uid}", _event, comp, where, base, floating_zone)
        if ev is not None:
            built[uid] = ev
    for where, comp, base in overrides:
        uid = base.uid
        assert uid is not None  # (a VEVENT without one is refused above)
        master = built.get(uid)
        if master is None:
            if any(r.source.uid == uid for r in items.refused):
                continue  # its series is refused already
            skipped.append(Skipped(base, f"VEVENT {uid} RECURRENCE-ID", "override of an event not in the file"))
            continue
        items.run(base, f"VEVENT {uid} RECURRENCE-ID", _override, comp, master, where, base)

    schedules: list[Schedule] = []
    for uid, ev in built.items():
        src = Source("ical", file, line=ev["line"], uid=uid, text=ev["rule"], notes=tuple(ev["notes"]))
        cancelled = _until_before_start(ev)
        if cancelled:
            skipped.append(Skipped(src, f"VEVENT {uid}", cancelled))
            continue
        sched = items.run(src, f"VEVENT {uid}", _schedule, uid, ev, gap, fold)
        if sched is not None:
            schedules.append(attach(sched, src))
    return items.done(schedules, skipped, {})


def _override(comp: Any, master: dict[str, Any], where: str, base: Source) -> None:
    """Apply one RECURRENCE-ID override to its master's exdate/rdate/notes."""
    rid, how = _recurrence_id(comp["RECURRENCE-ID"], master, where)
    moved = None
    if str(comp.get("STATUS", "")).upper() != "CANCELLED":
        if comp.get("DTSTART") is None:
            raise ScheduleError(f"{where}: DTSTART: missing in the override (RECURRENCE-ID {rid})")
        moved = _local(comp["DTSTART"], master["zone"], where, "DTSTART")
    master["exdate"].append(rid)  # only once the override is known good: a refused one changes nothing
    if moved is not None:
        master["rdate"].append(moved)
    master["notes"].append(f"RECURRENCE-ID {rid} (line {base.line}) moves or cancels one occurrence{how}")


def _schedule(uid: str, ev: dict[str, Any], gap: GapPolicy, fold: FoldPolicy) -> Schedule:
    try:
        return Schedule(uid, ev["zone"], ev["start"], ev["rule"], gap=gap, fold=fold,
                        rdate=tuple(_dedupe(ev["rdate"])), exdate=tuple(_dedupe(ev["exdate"])))
    except CalsimError as exc:
        field = "RRULE" if isinstance(exc, RuleError) else "VEVENT"
        raise reraise(exc, f"{ev['where']}: {field}") from None


def _until_before_start(ev: dict[str, Any]) -> str | None:
    """The skip reason of a series whose UNTIL precedes DTSTART (and has no RDATE), else None.

    Calendar clients cancel a whole series by ending it before it starts
    (RFC 5545 §3.3.10: UNTIL bounds the recurrence set, so it is empty);
    python-dateutil yields no instance for such a rule. calsim's Schedule
    refuses that rule as a mistake, which is right for a rule a user types,
    but in a calendar file it is the calendar's way of saying "cancelled".
    """
    if ev["rdate"]:
        return None  # the RDATEs still occur
    try:
        rule = RRule.parse(ev["rule"])
        start = int(local_us([ev["start"]], "DTSTART")[0])
    except CalsimError:
        return None  # the Schedule reports what is wrong
    if rule.until is None:
        return None
    start = RRule.anchor(start)
    if rule.until_utc:
        wall = dt.datetime.fromisoformat(ev["start"])
        utc = wall.replace(tzinfo=release().zone(ev["zone"])).astimezone(dt.timezone.utc).replace(tzinfo=None)
        start = int((utc - dt.datetime(1970, 1, 1)) // dt.timedelta(microseconds=1))
    if rule.until >= start:
        return None
    until = np.datetime64(rule.until, "us").astype("datetime64[s]")
    return (f"a cancelled series: UNTIL {until}{'Z' if rule.until_utc else ''} is before DTSTART "
            f"{ev['start']}, so it has no occurrence")


def _begin_lines(text: str) -> dict[str, list[int]]:
    """Line numbers of each ``BEGIN:<component>``, in file order."""
    out: dict[str, list[int]] = {}
    for n, raw in enumerate(text.splitlines(), 1):
        m = re.match(r"^BEGIN:(VEVENT|VTODO|VJOURNAL)\s*$", raw.strip(), re.IGNORECASE)
        if m:
            out.setdefault(m[1].upper(), []).append(n)
    return out


def _dt(prop: Any, where: str, name: str) -> Any:
    """``prop.dt``, or an error naming the property (icalendar keeps a malformed value as a broken property)."""
    from icalendar.prop.broken import vBroken

    if isinstance(prop, vBroken):
        raise ScheduleError(f"{where}: {name}: malformed value {str(prop)!r} ({_first_line(prop.parse_error)})")
    try:
        return prop.dt
    except Exception as exc:
        raise ScheduleError(f"{where}: {name}: malformed value ({_first_line(exc)})") from None


def _first_line(exc: object) -> str:
    return (str(exc).strip().splitlines() or [type(exc).__name__])[0]


def _zone_of(prop: Any, where: str, name: str) -> str | None:
    """The IANA zone of a date-time property: TZID (mapped by icalendar), ``"UTC"``, or None if floating."""
    value = _dt(prop, where, name)
    tzid = prop.params.get("TZID")
    if tzid is not None:
        key = getattr(getattr(value, "tzinfo", None), "key", None)
        for candidate in (tzid, key):
            if candidate:
                try:
                    release().table(candidate)
                    return candidate
                except CalsimError:
                    pass
        raise ScheduleError(f"{where}: {name}: TZID {tzid!r} is not an IANA zone of the installed tzdata "
                            "(calsim resolves with tzdata releases; the file's VTIMEZONE is not used)")
    if isinstance(value, dt.datetime) and value.tzinfo is not None:
        off = value.utcoffset()
        if off == dt.timedelta(0):
            return "UTC"
        raise ScheduleError(f"{where}: {name}: a fixed offset {off} without TZID is not supported")
    return None


def _event(comp: Any, where: str, base: Source, floating_zone: str) -> dict[str, Any]:
    from icalendar.prop.broken import vBroken

    notes: list[str] = []
    prop = comp.get("DTSTART")
    if prop is None:
        raise ScheduleError(f"{where}: DTSTART: missing (a recurring event needs a start)")
    if isinstance(prop, list):
        raise ScheduleError(f"{where}: DTSTART: given {len(prop)} times; exactly one is allowed")
    value = _dt(prop, where, "DTSTART")
    if isinstance(value, dt.datetime):
        zone = _zone_of(prop, where, "DTSTART")
        if zone is None:
            zone = floating_zone
            notes.append(f"floating DTSTART: read as wall time in {zone}")
        start = value.replace(tzinfo=None)
    elif isinstance(value, dt.date):
        zone = floating_zone
        start = dt.datetime(value.year, value.month, value.day)
        notes.append(f"all-day event: runs at 00:00 in {zone}")
    else:
        raise ScheduleError(f"{where}: DTSTART: unsupported value {value!r}")
    rrule = comp.get("RRULE")
    if isinstance(rrule, list):
        raise ScheduleError(f"{where}: RRULE: {len(rrule)} RRULE properties; calsim takes one per event "
                            "(split the event, or use RDATE)")
    if comp.get("EXRULE") is not None:
        raise ScheduleError(f"{where}: EXRULE: not supported (deprecated in RFC 5545); use EXDATE")
    if rrule is None:
        rule = "FREQ=DAILY;COUNT=1"
        notes.append("no RRULE: a one-off event (FREQ=DAILY;COUNT=1)")
    elif isinstance(rrule, vBroken):
        rule = str(rrule)  # as written: calsim's RRULE parser names what is wrong
    else:
        try:
            rule = rrule.to_ical().decode()
        except Exception as exc:
            raise RuleError(f"{where}: RRULE: cannot be read ({_first_line(exc)})") from None
    if "FREQ=" not in rule.upper():
        raise RuleError(f"{where}: RRULE: FREQ is required (RFC 5545), got {rule!r}")
    exdate = [t for p in _props(comp, "EXDATE") for t in _values(p, zone, where, "EXDATE")]
    rdate = [t for p in _props(comp, "RDATE") for t in _values(p, zone, where, "RDATE")]
    return {"zone": zone, "start": start.isoformat(), "rule": rule, "exdate": exdate, "rdate": rdate,
            "notes": notes, "line": base.line, "where": where, "all_day": not isinstance(value, dt.datetime),
            "series_rdate": tuple(rdate)}  # the series' own RDATEs, before overrides add theirs


def _recurrence_id(prop: Any, master: dict[str, Any], where: str) -> tuple[str, str]:
    """The master's occurrence an override's RECURRENCE-ID names (naive ISO in the master's zone).

    Returns the wall time and how it was matched when that was not exact
    (``""``, or a clause for the master's notes). RFC 5545 §3.8.4.4 wants
    RECURRENCE-ID to have DTSTART's value type, but writers differ: Exchange
    puts ``RECURRENCE-ID;TZID=...:20200416T000000`` on an all-day series.
    Taking such a value literally (that instant in the series' zone) names
    no occurrence, so the original would stay *and* the moved one be added.
    python-recurring-ical-events keys an override both by its UTC instant and
    by its wall time as written (``util.to_recurrence_ids``), and matches a
    date-time RECURRENCE-ID on a DATE series (its ``issue-36`` calendar);
    calsim matches the same cases, and refuses the one it cannot decide.
    """
    value = _dt(prop, where, "RECURRENCE-ID")
    if not isinstance(value, dt.date):
        raise ScheduleError(f"{where}: RECURRENCE-ID: unsupported value {value!r} (expected a DATE or DATE-TIME)")
    written = value.replace(tzinfo=None).isoformat() if isinstance(value, dt.datetime) else None
    aware = isinstance(value, dt.datetime) and value.tzinfo is not None
    if master["all_day"]:
        # An all-day series has one occurrence per day: the day as written names it,
        # whatever time and zone come with it (midnight in Exchange's files); else
        # the day of that instant in the series' zone (a UTC writer's 23:00Z).
        days = [_midnight(value)]
        if aware:
            days.append(_midnight(dt.datetime.fromisoformat(_local(prop, master["zone"], where, "RECURRENCE-ID"))))
        wall = next((d for d in days if _is_occurrence(master, d)), days[0])
        how = "" if written is None else f" (a DATE-TIME {value.isoformat()} on an all-day series: matched by its date)"
        return wall, how + _unmatched(master, wall)
    if written is None:
        # A DATE on a timed series names that day's occurrence, if there is exactly one.
        walls = _occurrences(master, _midnight(value))
        if not walls:
            wall = dt.datetime.combine(value, dt.datetime.fromisoformat(master["start"]).time()).isoformat()
            return wall, f" (a DATE on a timed series, read at DTSTART's time){_unmatched(master, wall)}"
        if len(walls) > 1:
            raise ScheduleError(
                f"{where}: RECURRENCE-ID: the DATE {value.isoformat()} names {len(walls)} occurrences of a "
                f"timed series ({', '.join(w[11:16] for w in walls[:4])}); give the DATE-TIME of the one it replaces"
            )
        return walls[0], " (a DATE on a timed series: matched by its date)"
    wall = _local(prop, master["zone"], where, "RECURRENCE-ID")  # the same instant in the series' zone
    if aware and wall != written and not _is_occurrence(master, wall) \
            and _is_occurrence(master, written):
        # Another zone: the instant is the RFC reading; a writer that meant the
        # series' wall time wrote it as such (the second key of recurring-ical-events).
        return written, " (in another zone: matched by its wall time as written)"
    return wall, _unmatched(master, wall)


def _midnight(value: dt.date) -> str:
    return dt.datetime(value.year, value.month, value.day).isoformat()


def _unmatched(master: dict[str, Any], wall: str) -> str:
    """A note when ``wall`` is no occurrence of the series: nothing is removed, nothing doubled."""
    found = _occurrences(master, wall[:10] + "T00:00:00")
    return "" if found is None or wall in found else " (it names no occurrence of the series)"


def _occurrences(master: dict[str, Any], day: str) -> list[str] | None:
    """The series' occurrences (rule and own RDATEs) on one day (``day``: its midnight, ISO), as naive ISO.

    None when the rule cannot be read yet. COUNT and UNTIL are not applied: a
    RECURRENCE-ID past them removes nothing either way.
    """
    try:
        rule = RRule.parse(master["rule"])
        dtstart, lo = (int(x) for x in local_us([master["start"], day], "RECURRENCE-ID"))
        walls = rule.candidates(dtstart, lo, lo + DAY_US)[0].tolist() if lo + DAY_US > dtstart else []
    except CalsimError:
        return None  # a malformed RRULE is reported with its own message when the schedule is built
    rdates = [int(x) for x in local_us(list(master["series_rdate"]), "RDATE")] if master["series_rdate"] else []
    walls = sorted(set(walls) | {r for r in rdates if lo <= r < lo + DAY_US})
    return [str(np.datetime64(w, "us").astype("datetime64[s]")) for w in walls]


def _is_occurrence(master: dict[str, Any], wall: str) -> bool:
    found = _occurrences(master, wall[:10] + "T00:00:00")
    return found is not None and wall in found


def _props(comp: Any, name: str) -> list[Any]:
    p = comp.get(name)
    if p is None:
        return []
    return p if isinstance(p, list) else [p]


def _values(prop: Any, zone: str, where: str, name: str) -> list[str]:
    from icalendar.prop.broken import vBroken

    out = []
    if isinstance(prop, vBroken):
        raise ScheduleError(f"{where}: {name}: malformed value {str(prop)!r} ({_first_line(prop.parse_error)})")
    try:
        values = list(prop.dts)
    except Exception as exc:
        raise ScheduleError(f"{where}: {name}: malformed value ({_first_line(exc)})") from None
    for v in values:
        out.append(_local(v, zone, where, name, params=prop.params))
    return out


def _local(prop: Any, zone: str, where: str, name: str, params: Any = None) -> str:
    """A date-time (or date, or period start) property value as naive wall time in ``zone`` (ISO)."""
    value = _dt(prop, where, name)
    if isinstance(value, tuple):  # PERIOD: (start, end or duration)
        value = value[0]
    if isinstance(value, dt.datetime):
        if value.tzinfo is not None:
            params = params if params is not None else getattr(prop, "params", {})
            tzid = params.get("TZID") if params is not None else None
            own = tzid if tzid and tzid == zone else None
            if own is None:
                key = getattr(value.tzinfo, "key", None)
                if key == zone:
                    own = zone
            if own is None:
                value = value.astimezone(release().zone(zone))
        return value.replace(tzinfo=None).isoformat()
    if isinstance(value, dt.date):
        return dt.datetime(value.year, value.month, value.day).isoformat()
    raise ScheduleError(f"{where}: {name}: unsupported value {value!r}")


def _dedupe(items: list[str]) -> list[str]:
    return list(dict.fromkeys(items))
