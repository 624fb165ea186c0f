"""What the readers of the analysts' schedulers share: typed field reads with one-line messages, and rules.

The Airflow, Prefect, Celery beat and Dagster readers
(:mod:`calsim.importers.airflow`, :mod:`~calsim.importers.prefect`,
:mod:`~calsim.importers.celery_beat`, :mod:`~calsim.importers.dagster`)
read JSON or YAML that a scheduler (or a person) wrote. Every read here
names where it is (``"airflow: dags.json item 2 'etl': catchup"``), the
value it got (cut to 60 characters: never an attacker-sized repr) and what
is allowed, and raises a :class:`~calsim.CalsimError`, so a bad item is
refused alone (:class:`~calsim.importers._result.Items`).

:func:`day_and_rule` writes a cron whose day-of-month and day-of-week fields
must *both* match (Celery's ``crontab``, Prefect's ``day_or: false``) as the
RRULE that says so: Vixie cron, which calsim's cron follows, lets either
match when both are restricted.

>>> day_and_rule(Cron.parse("0 9 1-7 * 1"))
'FREQ=DAILY;BYMONTHDAY=1,2,3,4,5,6,7;BYDAY=MO;BYHOUR=9;BYMINUTE=0;BYSECOND=0'
>>> day_and_rule(Cron.parse("0 9 * * 1")) is None  # one day field is '*': cron already ANDs
True
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import re
from typing import Any

from ..errors import CalsimError, InputError, RuleError, shown
from ..presets import Preset
from ..rules.cron import Cron
from ..schedule import Schedule
from ._result import Source, attach, reraise
from .crontab import _check_zone

__all__ = ["show", "obj", "text", "flag", "whole", "instant", "iso", "zone", "cron", "day_and_rule",
           "applied", "suspended"]

_WEEKDAYS = ("SU", "MO", "TU", "WE", "TH", "FR", "SA")
_TRUE, _FALSE = ("True", "true"), ("False", "false")


def show(value: Any) -> str:
    """``value`` for a message: its type and at most 60 characters of it."""
    return f"{type(value).__name__} {shown(value)}"


def obj(value: Any, where: str, what: str = "an object") -> dict:
    """``value`` if it is a mapping, else an :class:`InputError` naming ``where``."""
    if not isinstance(value, dict):
        raise InputError(f"{where}: expected {what}, got {show(value)}")
    return value


def text(value: Any, where: str, *, required: bool = False, default: str = "") -> str:
    """A string field (None: ``default``, or an error when ``required``)."""
    if value is None and not required:
        return default
    if not isinstance(value, str) or (required and not value.strip()):
        raise InputError(f"{where}: expected a non-empty string, got {show(value)}")
    return value


def flag(value: Any, where: str, default: bool) -> bool:
    """A boolean field; ``"True"``/``"False"`` too (``airflow ... -o json`` prints every value with ``str()``)."""
    if value is None:
        return default
    if isinstance(value, bool):
        return value
    if value in _TRUE or value in _FALSE:
        return value in _TRUE
    raise InputError(f"{where}: expected true or false, got {show(value)}")


def whole(value: Any, where: str, lo: int, hi: int) -> int:
    """A whole number in ``lo..hi`` (a string of digits too: the Airflow CLI prints numbers as text)."""
    if isinstance(value, str) and re.fullmatch(r"\s*[0-9]{1,18}\s*", value):
        value = int(value)
    if isinstance(value, bool) or not isinstance(value, int) or not lo <= value <= hi:
        raise InputError(f"{where}: expected a whole number {lo}..{hi}, got {show(value)}")
    return value


def instant(value: Any, where: str, *, naive: str | None = None) -> dt.datetime | None:
    """An aware UTC datetime from ISO 8601 text (``Z``, an offset, or ``str(datetime)``'s space), or None.

    A time without an offset is read in the zone ``naive`` (None: refused).
    """
    if value is None or value == "":
        return None
    t = None
    if isinstance(value, str) and len(value) <= 64:
        try:
            t = dt.datetime.fromisoformat(value.strip().replace("z", "Z"))
        except ValueError:
            t = None
    if t is None:
        raise InputError(f"{where}: {show(value)} is not an ISO 8601 date and time "
                         "(e.g. '2026-03-01T00:00:00Z')")
    if t.tzinfo is None:
        if naive is None:
            raise InputError(f"{where}: {show(value)} has no UTC offset (expected e.g. '2026-03-01T00:00:00Z')")
        from ..tz.release import release

        t = t.replace(tzinfo=release().zone(naive))
    try:
        return t.astimezone(dt.timezone.utc)
    except OverflowError:  # 0001-01-01 with a positive offset
        raise InputError(f"{where}: {show(value)} is out of range") from None


def iso(t: dt.datetime) -> str:
    """``2026-03-01T05:00:00Z`` (with the microseconds when it has some)."""
    t = t.astimezone(dt.timezone.utc)
    return t.strftime("%Y-%m-%dT%H:%M:%S" + (".%f" if t.microsecond else "") + "Z")


def zone(value: Any, where: str) -> str:
    """An IANA zone name the tz database has."""
    return _check_zone(value, where)


def cron(value: Any, where: str) -> Cron:
    """A five-field cron expression (or ``@daily``-style macro), as calsim's cron reads it."""
    if not isinstance(value, str) or not value.strip():
        raise RuleError(f"{where}: expected a cron expression such as '0 2 * * *', got {show(value)}")
    try:
        return Cron.parse(value.strip())
    except CalsimError as exc:
        msg = str(exc)
        raise RuleError(f"{where}: {msg[len('cron: '):] if msg.startswith('cron: ') else msg}") from None


def day_and_rule(c: Cron) -> str | None:
    """The RRULE of ``c`` with both day fields required, or None when cron already means that.

    Raises :class:`RuleError` for ``L``, ``W`` and ``#`` (they have no place in an ANDed day rule here).
    """
    if not c.day_or:
        return None
    if c.last_day or c.last_weekday or c.nearest_weekday or c.last_of_weekday or c.nth_weekday:
        raise RuleError(f"cron {c.text!r}: L, W and # cannot be read with both day fields required (allowed: "
                        "numbers, ranges, steps and names)")
    parts = ["FREQ=DAILY"]
    if c.months != tuple(range(1, 13)):
        parts.append("BYMONTH=" + ",".join(map(str, c.months)))
    parts.append("BYMONTHDAY=" + ",".join(map(str, sorted(c.days))))
    parts.append("BYDAY=" + ",".join(_WEEKDAYS[w] for w in sorted(c.weekdays)))
    parts.append("BYHOUR=" + ",".join(map(str, c.hours)))
    parts.append("BYMINUTE=" + ",".join(map(str, c.minutes)))
    parts.append("BYSECOND=0")
    return ";".join(parts)


def suspended(preset: Preset, notes: list[str], why: str) -> Preset:
    """The preset marked ``suspended`` (the scheduler starts nothing), with the note every reader gives."""
    notes.append(f"{why}: the scheduler starts no run; expanded as if active, model it with calsim.Pause/Resume "
                 "(Imported.presets[id].suspended)")
    return dataclasses.replace(preset, suspended=True)


def applied(preset: Preset, schedule: Schedule, where: str, source: Source) -> Schedule:
    """``preset.apply(schedule)`` with ``source`` attached; an error names ``where``."""
    try:
        out = preset.apply(schedule)
    except CalsimError as exc:
        raise reraise(exc, where) from None
    assert isinstance(out, Schedule)
    return attach(out, source)
