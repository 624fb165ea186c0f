"""Import systemd ``.timer`` units: each ``OnCalendar=`` becomes a schedule with the systemd preset.

The unit file is read as systemd.syntax(7) describes it: ``[Section]``
headers, ``Key=Value`` lines (spaces around ``=`` allowed), comments starting
with ``#`` or ``;``, a trailing ``\\`` continuing a line, and an empty
assignment (``OnCalendar=``) resetting the list built so far (as a drop-in
does). Settings of the ``[Timer]`` section:

=========================  ==================================================
setting                    calsim
=========================  ==================================================
``OnCalendar=``            one schedule each, rule ``OnCalendar=<expr>``
                           (:mod:`calsim.rules.oncalendar`); a trailing zone
                           in the expression overrides ``zone=``
``Persistent=``            :func:`calsim.presets.systemd` ``persistent``
``AccuracySec=``           ``accuracy_sec`` (default 1min)
``RandomizedDelaySec=``    ``randomized_delay_sec``
``FixedRandomDelay=``      ``fixed_random_delay``
``DeferReactivation=``     ``defer_reactivation``
``Unit=``                  the unit started (``Source.command``); default:
                           the timer's name with ``.service``
``OnBootSec=`` and the     not calendar times: listed in ``skipped``
other monotonic timers
=========================  ==================================================

Time spans follow systemd.time(7): ``90``, ``1.5h``, ``2min 30s``, ``1d``,
with units us, ms, s, min (m), h, d, w, M (30.44 days), y (365.25 days).

**Identity.** The id is the unit's name without ``.timer`` (``backup``); with
several ``OnCalendar=`` lines, ``backup:1``, ``backup:2``... in file order.
systemd runs them as *one* timer (an elapse of either starts the unit, and
coinciding elapses start it once); calsim expands each on its own, which the
source's notes say.

>>> from calsim.importers import from_systemd
>>> t = from_systemd("[Timer]\\nOnCalendar=Mon..Fri 02:30 Europe/Berlin\\nPersistent=true\\n", source="backup.timer")
>>> s = t[0]
>>> s.id, s.zone, s.kind, s.gap, s.fold, s.policy.catchup, t.sources[s.id].command
('backup', 'Europe/Berlin', 'oncalendar', 'scheduler', 'scheduler', 'latest', 'backup.service')
"""

from __future__ import annotations

import math

import datetime as dt
import re
from pathlib import Path
from typing import TypedDict

from ..errors import CalsimError, InputError, RuleError
from ..presets import Preset, systemd
from ..rules.oncalendar import PREFIX, OnCalendar
from ..schedule import Schedule
from ._result import Imported, Items, Skipped, Source, attach, read_input, reraise
from .crontab import DEFAULT_START, _check_zone


class _TimerSettings(TypedDict, total=False):
    """The [Timer] settings read, as :func:`calsim.presets.systemd` takes them."""

    persistent: bool
    accuracy_sec: dt.timedelta
    randomized_delay_sec: dt.timedelta
    fixed_random_delay: bool
    defer_reactivation: bool

__all__ = ["from_systemd", "timespan_us"]

_TRUE = ("1", "yes", "y", "true", "t", "on")
_FALSE = ("0", "no", "n", "false", "f", "off")
_MAX_SPAN_US = 365_000 * 86_400_000_000  # calsim.durations.MAX_US
_MONOTONIC = ("OnActiveSec", "OnBootSec", "OnStartupSec", "OnUnitActiveSec", "OnUnitInactiveSec")
_IGNORED = ("WakeSystem", "RemainAfterElapse", "OnClockChange", "OnTimezoneChange")
# systemd.time(7), "Parsing Time Spans"; longest names first so "min" is not read as "m" + "in".
_UNITS = {
    "usec": 1, "us": 1, "µs": 1, "μs": 1, "msec": 1_000, "ms": 1_000,
    "seconds": 10**6, "second": 10**6, "sec": 10**6, "s": 10**6,
    "minutes": 60 * 10**6, "minute": 60 * 10**6, "min": 60 * 10**6, "m": 60 * 10**6,
    "hours": 3600 * 10**6, "hour": 3600 * 10**6, "hr": 3600 * 10**6, "h": 3600 * 10**6,
    "days": 86400 * 10**6, "day": 86400 * 10**6, "d": 86400 * 10**6,
    "weeks": 7 * 86400 * 10**6, "week": 7 * 86400 * 10**6, "w": 7 * 86400 * 10**6,
    "months": 2_629_800 * 10**6, "month": 2_629_800 * 10**6, "M": 2_629_800 * 10**6,
    "years": 31_557_600 * 10**6, "year": 31_557_600 * 10**6, "y": 31_557_600 * 10**6,
}
_SPAN_PART = re.compile(r"\s*(\d+(?:\.\d*)?|\.\d+)\s*(" + "|".join(sorted(map(re.escape, _UNITS), key=len,
                                                                          reverse=True)) + r")?")


def timespan_us(text: str, field: str = "time span") -> int:
    """A systemd time span (``"1h 30min"``, ``"90"`` = seconds) in µs; :class:`InputError` otherwise.

    >>> timespan_us("2min 30s"), timespan_us("1.5h") // 10**6, timespan_us("0")
    (150000000, 5400, 0)
    """
    s = text.strip()
    if s in ("infinity",):
        raise InputError(f"{field}: 'infinity' is not supported here (allowed a finite span such as '5min')")
    total, pos, n = 0, 0, 0
    while pos < len(s):
        m = _SPAN_PART.match(s, pos)
        if m is None or m.end() == pos:
            raise InputError(f"{field}: {text!r} is not a systemd time span (allowed e.g. '30s', '5min', "
                             "'1h 30min', a number of seconds)")
        unit = m.group(2)
        if unit is None and m.end() < len(s) and s[m.end()].isalpha():
            raise InputError(f"{field}: {text!r} has an unknown unit at {s[m.end():m.end() + 8]!r} (allowed us, "
                             "ms, s, min, h, d, w, M, y)")
        part = float(m.group(1)) * _UNITS[unit or "s"]
        if not math.isfinite(part) or part > _MAX_SPAN_US:
            raise InputError(f"{field}: {text[:40]!r} is longer than {_MAX_SPAN_US // 86_400_000_000:,} days")
        total += round(part)
        pos, n = m.end(), n + 1
    if n == 0:
        raise InputError(f"{field}: empty time span (allowed e.g. '30s', '5min')")
    return total


def _bool(value: str, where: str, key: str) -> bool:
    v = value.strip().lower()
    if v in _TRUE:
        return True
    if v in _FALSE:
        return False
    raise InputError(f"{where}: {key}={value!r} is not a boolean (allowed yes/no, true/false, on/off, 1/0)")


def _lines(text: str):
    """``(line number, section, key, value)`` of each assignment, continuation lines joined."""
    section = None
    pending, start = "", 0
    for n, raw in enumerate(text.splitlines(), 1):
        line = raw.strip()
        if not pending:
            start = n
            if not line or line[0] in "#;":
                continue
            if line.startswith("["):
                if not line.endswith("]"):
                    raise InputError(f"line {n}: section header {line!r} has no closing ']'")
                section = line[1:-1]
                continue
        elif line and line[0] in "#;":  # comment lines inside a continuation are skipped (systemd.syntax)
            continue
        if line.endswith("\\"):
            pending += line[:-1] + " "
            continue
        line, pending = pending + line, ""
        if "=" not in line:
            raise InputError(f"line {start}: {line[:60]!r} is not Key=Value")
        key, value = line.split("=", 1)
        yield start, section, key.strip(), value.strip()
    if pending:
        raise InputError(f"line {start}: the file ends inside a '\\' continuation")


def from_systemd(path_or_text: object, *, zone: str = "UTC", source: str | None = None,
                 start: object = DEFAULT_START, strict: bool = False) -> Imported:
    """Read a systemd ``.timer`` unit into schedules (see the module docstring).

    Parameters
    ----------
    path_or_text
        A path (``str`` without a line break, or ``pathlib.Path``), or the
        unit's text (a ``str`` with a line break, or ``bytes``).
    zone
        The machine's zone (systemd reads ``OnCalendar=`` in it unless the
        expression names one).
    source
        Name used in ids and messages instead of the file's (default
        ``"timer"`` for text).
    start
        Anchor of every rule (local wall time): the timer's activation.
    strict
        False (default): a bad ``OnCalendar=`` line is refused (``Imported.refused``) and
        the others imported; True: the first bad ``OnCalendar=`` line raises.
        (The ``[Timer]`` settings apply to every line: a bad one refuses
        the file.)

    Returns
    -------
    Imported
        The schedules, their sources (file, line of ``OnCalendar=``, the
        started unit in ``command``), the monotonic timers skipped, and the
        :func:`calsim.presets.systemd` preset per id.

    Raises
    ------
    InputError
        Unreadable file, a line that is not ``Key=Value``, no ``[Timer]``
        section, a bad boolean or time span.
    RuleError
        An ``OnCalendar=`` expression systemd would refuse (line named).
    UnknownZoneError
        ``zone`` names no zone.
    """
    text, file, path = read_input(path_or_text, "systemd", source)
    label = source or (path.name if path is not None else file)
    name = Path(source).name if source else (path.name if path is not None else "timer")
    stem = name[: -len(".timer")] if name.endswith(".timer") else name
    machine_zone = _check_zone(zone, f"systemd: {label}: zone")
    where = f"systemd: {label}"

    calendars: list[tuple[int, str]] = []
    skipped: list[Skipped] = []
    settings: _TimerSettings = {}
    notes: list[str] = []
    unit = f"{stem}.service"
    has_timer = False
    try:
        for n, section, key, value in _lines(text):
            if section != "Timer":
                continue
            has_timer = True
            at = f"{where} line {n}"
            if key == "OnCalendar":
                if value:
                    calendars.append((n, value))
                else:
                    calendars.clear()  # an empty assignment resets the list (systemd.timer(5))
            elif key in _MONOTONIC:
                skipped.append(Skipped(Source("systemd", file, line=n, text=f"{key}={value}"), f"{key}={value}",
                                       "a monotonic timer (time since boot or activation), not a calendar time"))
            elif key == "Persistent":
                settings["persistent"] = _bool(value, at, key)
            elif key == "FixedRandomDelay":
                settings["fixed_random_delay"] = _bool(value, at, key)
            elif key == "DeferReactivation":
                settings["defer_reactivation"] = _bool(value, at, key)
            elif key in ("AccuracySec", "RandomizedDelaySec"):
                span = dt.timedelta(microseconds=timespan_us(value, f"{at}: {key}"))
                if key == "AccuracySec":
                    settings["accuracy_sec"] = span
                else:
                    settings["randomized_delay_sec"] = span
            elif key == "Unit":
                unit = value or unit
            elif key in _IGNORED:
                notes.append(f"{key}={value} is not modelled")
            else:
                notes.append(f"{key}= is not a [Timer] setting calsim knows; ignored (systemd logs and ignores "
                             "unknown settings too)")
    except InputError as exc:
        msg = str(exc)
        raise InputError(msg if msg.startswith(where) else f"{where} {msg}") from None
    if not has_timer:
        raise InputError(f"{where}: no [Timer] section (a .timer unit has OnCalendar= under [Timer])")

    try:
        preset: Preset = systemd(**settings)
    except CalsimError as exc:
        raise reraise(exc, where) from None
    if len(calendars) > 1:
        notes.append("several OnCalendar= are one timer in systemd (coinciding elapses start the unit once, "
                      "and a running unit holds back all of them); calsim expands each as its own schedule")
    schedules: list[Schedule] = []
    presets: dict[str, Preset] = {}
    items = Items(strict)
    for k, (n, expr) in enumerate(calendars, 1):
        sid = stem if len(calendars) == 1 else f"{stem}:{k}"
        src = Source("systemd", file, line=n, text=f"OnCalendar={expr}", command=unit,
                     notes=tuple(notes))
        sched = items.run(src, f"OnCalendar={expr}", _calendar, expr, sid, machine_zone, start, preset,
                          f"{where} line {n}")
        if sched is None:
            continue
        schedules.append(attach(sched, src))
        presets[sid] = preset
    return items.done(schedules, skipped, presets)


def _calendar(expr: str, sid: str, zone: str, start: object, preset: Preset, at: str) -> Schedule:
    try:
        OnCalendar.parse(expr)
        sched = preset.apply(Schedule(sid, zone, start, PREFIX + expr))
    except CalsimError as exc:
        field = "OnCalendar" if isinstance(exc, RuleError) else "timer"
        raise reraise(exc, f"{at}: {field}={expr!r}") from None
    assert isinstance(sched, Schedule)
    return sched

