"""Exclusion calendars: days on which a schedule does not run, with a version for history.

A calendar is a set of local dates (in the schedule's zone). An occurrence
whose nominal date is in it keeps its row, loses its instant and gets the note
``excluded:<name>@<version>``: holiday tables are revised (a government moves
a holiday, the ``holidays`` package fixes one), and a ledger row must say
which revision excluded it.

Forms accepted by ``Schedule(exclude=...)``:

===================================  =============================================================
``Calendar.holidays("CN")``          public holidays of a country (``holidays`` package), version
``"holidays:US-CA"``                 = the package version; ``subdiv`` after a dash
``Calendar.business_days("CN")``     everything that is not a working day there: weekends and
``"business:CN"``                    holidays, *except* weekend make-up workdays (China's
                                     adjusted Saturdays), so a daily rule runs on exactly the
                                     working days
``["2026-12-25", date(...)]``        explicit dates; name ``dates``, version a content hash
a path to a text file                one ISO date per line (``#`` comments, optional
                                     ``# name:`` and ``# version:`` headers; the version defaults
                                     to a content hash)
===================================  =============================================================

>>> from calsim.calendars import Calendar
>>> cal = Calendar.business_days("CN")
>>> import datetime as dt
>>> days = cal.days(dt.date(2026, 2, 7), dt.date(2026, 2, 15))  # Sat 14th is a make-up workday
>>> [str(d) for d in days], cal.note.startswith("excluded:CN-business@")
(['2026-02-07', '2026-02-08', '2026-02-15'], True)
"""

from __future__ import annotations

import datetime as dt
import hashlib
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import cast

import numpy as np

from .errors import ScheduleError, did_you_mean

__all__ = ["Calendar", "as_calendars"]

_CODE = re.compile(r"^([A-Za-z]{2,3})(?:-([A-Za-z0-9]{1,5}))?$")


def _hash(items: object) -> str:
    return hashlib.blake2b(repr(items).encode(), digest_size=4).hexdigest()


@dataclass(frozen=True)
class Calendar:
    """A named, versioned set of excluded local dates.

    Build one with :meth:`holidays`, :meth:`business_days`, :meth:`from_dates`
    or :meth:`from_file`. ``days(first, last)`` gives the excluded dates in a
    range as ``datetime64[D]``.
    """

    name: str
    version: str
    dates: frozenset = frozenset()
    country: str | None = None
    subdiv: str | None = None
    business: bool = False
    _cache: dict = field(default_factory=dict, compare=False, repr=False, hash=False)

    @property
    def note(self) -> str:
        return f"excluded:{self.name}@{self.version}"

    @classmethod
    def from_dates(cls, dates, name: str = "dates", version: str | None = None) -> Calendar:
        parsed = frozenset(_date(d, "exclude") for d in dates)
        return cls(name, version or _hash(sorted(parsed)), parsed)

    @classmethod
    def holidays(cls, country: str, subdiv: str | None = None) -> Calendar:
        """Public holidays of ``country`` (ISO 3166 code) from the ``holidays`` package."""
        return cls._holidays(country, subdiv, business=False)

    @classmethod
    def business_days(cls, country: str, subdiv: str | None = None) -> Calendar:
        """Non-working days of ``country``: its weekend and holidays, minus weekend make-up workdays."""
        return cls._holidays(country, subdiv, business=True)

    @classmethod
    def _holidays(cls, country: str, subdiv: str | None, business: bool) -> Calendar:
        import holidays as hol

        code = str(country).upper()
        if code not in hol.list_supported_countries():
            raise ScheduleError(
                f"exclude: unknown calendar country {country!r} (expected an ISO 3166 code supported by "
                f"the holidays package {hol.__version__}, e.g. 'US', 'CN', 'DE')"
            )
        try:
            hol.country_holidays(code, subdiv=subdiv, years=2026)
        except NotImplementedError:
            allowed = ", ".join(hol.list_supported_countries()[code])
            raise ScheduleError(
                f"exclude: unknown subdivision {subdiv!r} of {code} (allowed: {allowed})"
                f"{did_you_mean(subdiv, hol.list_supported_countries()[code])}"
            ) from None
        name = code + (f"-{subdiv.upper()}" if subdiv else "") + ("-business" if business else "")
        return cls(name, hol.__version__, frozenset(), code, subdiv, business)

    @classmethod
    def from_file(cls, path: str | Path) -> Calendar:
        from .input_files import read_file

        p = Path(path)
        text = read_file(p, "exclude: calendar file")
        assert isinstance(text, str)
        name, version, dates = p.stem, None, []
        for n, line in enumerate(text.splitlines(), 1):
            s = line.strip()
            if s.startswith("#"):
                m = re.match(r"#\s*(name|version)\s*:\s*(\S+)", s, re.IGNORECASE)
                if m and m[1].lower() == "name":
                    name = m[2]
                elif m:
                    version = m[2]
                continue
            if s:
                try:
                    dates.append(dt.date.fromisoformat(s.split()[0].rstrip(",")))
                except ValueError:
                    raise ScheduleError(
                        f"exclude: line {n} of {str(path)!r} is {s!r}; expected an ISO date (YYYY-MM-DD) per line"
                    ) from None
        parsed = frozenset(dates)
        return cls(name, version or _hash(sorted(parsed)), parsed)

    def days(self, first: dt.date, last: dt.date) -> np.ndarray:
        """Excluded local dates in ``[first, last]`` as sorted ``datetime64[D]``."""
        if self.country is None:
            out = sorted(d for d in self.dates if first <= d <= last)
            return np.array(out, dtype="datetime64[D]")
        key = (first.year, last.year)
        hit = self._cache.get(key)
        if hit is None:
            hit = self._cache[key] = self._country_days(first.year, last.year)
        lo, hi = np.datetime64(first, "D"), np.datetime64(last, "D")
        return hit[(hit >= lo) & (hit <= hi)]

    def _country_days(self, y0: int, y1: int) -> np.ndarray:
        import holidays as hol

        assert self.country is not None  # days() reads the package only for a country's calendar
        h = hol.country_holidays(self.country, subdiv=self.subdiv, years=range(y0, y1 + 1))
        days = set(h.keys())
        if self.business:
            all_days = np.arange(np.datetime64(f"{y0}-01-01"), np.datetime64(f"{y1 + 1}-01-01"))
            weekday = (all_days.astype(np.int64) + 3) % 7  # Monday = 0
            weekend = all_days[np.isin(weekday, sorted(h.weekend))].astype(dt.date)
            workdays = set(getattr(h, "weekend_workdays", ()))
            days |= {d for d in weekend if d not in workdays}
        return np.array(sorted(days), dtype="datetime64[D]")


def _date(value: object, field_name: str) -> dt.date:
    if isinstance(value, dt.datetime):
        return value.date()
    if isinstance(value, dt.date):
        return value
    if isinstance(value, str):
        try:
            return dt.date.fromisoformat(value.strip())
        except ValueError:
            pass
    raise ScheduleError(f"{field_name}: {value!r} is not a date (expected 'YYYY-MM-DD' or a datetime.date)")


def as_calendars(exclude: object) -> tuple[Calendar, ...]:
    """Normalise ``Schedule(exclude=...)`` into calendars (see the module docstring)."""
    if exclude is None:
        return ()
    if isinstance(exclude, Calendar):
        return (exclude,)
    if isinstance(exclude, (str, Path)):
        return (_from_string(exclude),)
    if isinstance(exclude, (dt.date,)):
        return (Calendar.from_dates([exclude]),)
    try:
        items = list(cast("Iterable[object]", exclude))  # a non-iterable raises TypeError here
    except TypeError:
        raise ScheduleError(
            f"exclude: expected calendars, dates or calendar names, got {type(exclude).__name__} {exclude!r}"
        ) from None
    cals = [i for i in items if isinstance(i, Calendar)]
    specs = [i for i in items if isinstance(i, str) and (":" in i or Path(i).is_file())]
    dates = [i for i in items if not isinstance(i, Calendar) and i not in specs]
    out = cals + [_from_string(s) for s in specs]
    if dates:
        out.append(Calendar.from_dates(dates))
    return tuple(out)


def _from_string(spec: str | Path) -> Calendar:
    s = str(spec)
    kind, _, rest = s.partition(":")
    if kind in ("holidays", "business") and rest:
        m = _CODE.match(rest.strip())
        if not m:
            raise ScheduleError(f"exclude: {s!r} names no country (expected e.g. '{kind}:CN' or '{kind}:US-CA')")
        make = Calendar.holidays if kind == "holidays" else Calendar.business_days
        return make(m[1], m[2])
    if Path(s).is_file():
        return Calendar.from_file(s)
    try:
        return Calendar.from_dates([dt.date.fromisoformat(s)])
    except ValueError:
        raise ScheduleError(
            f"exclude: unknown calendar {s!r} (expected 'holidays:CC', 'business:CC', a calendar file path, "
            "an ISO date, or a Calendar)"
        ) from None
