"""POSIX TZ strings (the footer of a TZif file, and a what-if rule), parsed, checked and turned into transitions.

A TZ string such as ``EST5EDT,M3.2.0,M11.1.0`` names a standard offset and,
optionally, a daylight offset with the two yearly rules that switch between
them (POSIX.1-2017 §8.3, with the RFC 8536 §3.3.1 extensions: rule times of
hours up to 167 and negative). :class:`PosixTZ` computes the transitions of
any range of years at once, as ``int64`` UTC seconds, for
:class:`calsim.tz.tzif.ZoneTable` to append after a zone's explicit ones.

Examples
--------
>>> from calsim.tz.posix import PosixTZ
>>> tz = PosixTZ.parse("EST5EDT,M3.2.0,M11.1.0")
>>> tz.std_offset, tz.dst_offset
(-18000, -14400)
>>> [t for t, _ in tz.transitions(2026)]  # 2026-03-08T07:00Z, 2026-11-01T06:00Z
[1772953200, 1793512800]
>>> PosixTZ.parse("EST5EDT,M13.2.0,M11.1.0")
Traceback (most recent call last):
...
calsim.errors.CorruptReleaseError: tz_string: 'EST5EDT,M13.2.0,M11.1.0' has month 13 in rule 'M13.2.0' ...
"""

from __future__ import annotations

import calendar
import re
from dataclasses import dataclass

import numpy as np

from ..errors import CorruptReleaseError

__all__ = ["PosixTZ", "MAX_TZ_STRING", "cut", "days_from_civil"]

_DAYS_BEFORE_MONTH = (0, 0, 31, 59, 90, 120, 151, 181, 212, 243, 273, 304, 334)
_MONTH_DAYS = (0, 31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31)
_EPOCH_ORDINAL = 719163  # date(1970, 1, 1).toordinal()


def days_from_civil(year: int, month: int, day: int) -> int:
    """Days since 1970-01-01 of a proleptic Gregorian date.

    >>> days_from_civil(1970, 1, 2), days_from_civil(1969, 12, 31)
    (1, -1)
    """
    leap = 1 if (month > 2 and calendar.isleap(year)) else 0
    y = year - 1
    ordinal = y * 365 + y // 4 - y // 100 + y // 400 + _DAYS_BEFORE_MONTH[month] + leap + day
    return ordinal - _EPOCH_ORDINAL


def _isleap(years: np.ndarray) -> np.ndarray:
    return (years % 4 == 0) & ((years % 100 != 0) | (years % 400 == 0))


def _days_np(years: np.ndarray, month: int, day: int) -> np.ndarray:
    """:func:`days_from_civil` for an array of years (one month and day)."""
    y = years - 1
    leap = _isleap(years) if month > 2 else False
    return y * 365 + y // 4 - y // 100 + y // 400 + (_DAYS_BEFORE_MONTH[month] + day - _EPOCH_ORDINAL) + leap


def cut(value: object, limit: int = 60) -> str:
    """``repr`` of a value for a message, cut so that a hostile file or argument cannot flood it.

    Every module of :mod:`calsim.tz` quotes through this one function (this
    module is the lowest of the package, so each can import it).

    >>> cut("x" * 100, 5)
    "'xxxxx'..."
    """
    if isinstance(value, str):
        return repr(value) if len(value) <= limit else repr(value[:limit]) + "..."
    text = repr(value)
    return text if len(text) <= limit else text[:limit] + "..."


# POSIX.1-2017 §8.3, with the RFC 8536 §3.3.1 extensions (hours up to 167 and
# negative transition times).
_NAME = r"(?:<[+\-0-9A-Za-z]+>|[A-Za-z]{3,})"
_OFFSET = r"[+\-]?\d{1,3}(?::\d{1,2}(?::\d{1,2})?)?"
_DATE = r"(?:J\d{1,3}|\d{1,3}|M\d{1,2}\.\d\.\d)"
_TZ_RE = re.compile(
    rf"^(?P<std>{_NAME})(?P<stdoff>{_OFFSET})"
    rf"(?:(?P<dst>{_NAME})(?P<dstoff>{_OFFSET})?"
    rf"(?:,(?P<start>{_DATE})(?:/(?P<starttime>{_OFFSET}))?"
    rf",(?P<end>{_DATE})(?:/(?P<endtime>{_OFFSET}))?)?)?$",
    re.ASCII,  # "\d" must not accept other scripts' digits
)
MAX_TZ_STRING = 1024  # two names of tz's 255-byte maximum, offsets and rules fit easily


def _parse_hms(text: str) -> int:
    sign = -1 if text.startswith("-") else 1
    parts = [int(p) for p in text.lstrip("+-").split(":")]
    parts += [0] * (3 - len(parts))
    return sign * (parts[0] * 3600 + parts[1] * 60 + parts[2])


def _check_hms(text: str, what: str, max_hours: int, fail) -> int:
    """Range-check ``[+-]hh[:mm[:ss]]``: POSIX allows hours 0..24 in offsets; RFC 8536 §3.3.1 allows
    -167..167 in rule times (as tz's localtime.c ``getsecs``); minutes and seconds are 0..59."""
    parts = [int(p) for p in text.lstrip("+-").split(":")]
    if parts[0] > max_hours:
        lo = -max_hours if what == "time" else 0
        fail(f"{what} {text!r} (hours allowed {lo}..{max_hours})")
    if any(p > 59 for p in parts[1:]):
        fail(f"{what} {text!r} (minutes and seconds allowed 0..59)")
    return _parse_hms(text)


@dataclass(frozen=True)
class _RuleDate:
    """One POSIX date rule: ``Jn`` (1..365, no Feb 29), ``n`` (0..365) or ``Mm.w.d``."""

    kind: str  # "J", "n" or "M"
    a: int
    b: int = 0
    c: int = 0

    @classmethod
    def parse(cls, text: str, fail=None) -> _RuleDate:
        def bad(what: str, value: int, lo: int, hi: int) -> None:
            if not lo <= value <= hi:
                msg = f"{what} {value} in rule {text!r} (allowed {lo}..{hi}, POSIX.1-2017 §8.3)"
                if fail is None:
                    raise CorruptReleaseError(f"tz_string: {msg}")
                fail(msg)

        if text.startswith("J"):
            bad("Julian day", int(text[1:]), 1, 365)
            return cls("J", int(text[1:]))
        if text.startswith("M"):
            m, w, d = (int(x) for x in text[1:].split("."))
            bad("month", m, 1, 12)
            bad("week", w, 1, 5)
            bad("weekday", d, 0, 6)
            return cls("M", m, w, d)
        bad("day of year", int(text), 0, 365)
        return cls("n", int(text))

    def days(self, years: np.ndarray) -> np.ndarray:
        """Days since the epoch of this rule's date in each of ``years`` (an int64 array)."""
        jan1 = _days_np(years, 1, 1)
        if self.kind == "J":
            # Julian day 1..365; February 29 is never counted, so day 60 is
            # always March 1.
            return jan1 + (self.a - 1) + (_isleap(years) & (self.a >= 60))
        if self.kind == "n":
            return jan1 + self.a  # zero-based, counts February 29
        month, week, weekday = self.a, self.b, self.c
        first = _days_np(years, month, 1)
        # 1970-01-01 was a Thursday (weekday 4 with Sunday = 0); numpy's % is
        # Python's, never negative.
        day = first + (weekday - (first + 4) % 7) % 7 + 7 * (week - 1)
        if week == 5:
            # "5" is the last such weekday: at most one week too far, as
            # first + 6 + 28 - 7 < first + 28.
            length = _MONTH_DAYS[month] + (_isleap(years) if month == 2 else 0)
            day = np.where(day >= first + length, day - 7, day)
        return day

    def day(self, year: int) -> int:
        """Days since the epoch of this rule's date in ``year``."""
        return int(self.days(np.array([year], dtype=np.int64))[0])


@dataclass(frozen=True)
class PosixTZ:
    """A parsed POSIX TZ string; offsets are seconds east of UTC (so ``EST5`` is -18000)."""

    text: str
    std_offset: int
    dst_offset: int | None = None
    start: _RuleDate | None = None
    start_time: int = 7200
    end: _RuleDate | None = None
    end_time: int = 7200

    @classmethod
    def parse(cls, text: str, field: str = "tz_string") -> PosixTZ:
        """Parse and range-check a TZ string; ``field`` starts every error message."""

        def fail(what: str) -> None:
            raise CorruptReleaseError(f"{field}: {cut(text)} has {what}")

        m = _TZ_RE.match(text) if isinstance(text, str) and len(text) <= MAX_TZ_STRING else None
        if m is None:
            raise CorruptReleaseError(
                f"{field}: cannot parse {cut(text)} "
                "(expected a POSIX TZ string such as 'EST5' or 'EST5EDT,M3.2.0,M11.1.0', RFC 8536 §3.3)"
            )
        # POSIX offsets count hours *west* of Greenwich: "EST5" is UTC-5.
        std = -_check_hms(m["stdoff"], "offset", 24, fail)
        if m["dst"] is None:
            return cls(text, std)
        dst = -_check_hms(m["dstoff"], "offset", 24, fail) if m["dstoff"] else std + 3600
        if m["start"] is None:
            raise CorruptReleaseError(
                f"{field}: POSIX TZ string {cut(text)} names a DST zone without rules; "
                "TZif footers must carry explicit ',start,end' rules (RFC 8536 §3.3)"
            )
        return cls(
            text,
            std,
            dst,
            _RuleDate.parse(m["start"], fail),
            _check_hms(m["starttime"], "time", 167, fail) if m["starttime"] else 7200,
            _RuleDate.parse(m["end"], fail),
            _check_hms(m["endtime"], "time", 167, fail) if m["endtime"] else 7200,
        )

    @property
    def has_dst(self) -> bool:
        return self.dst_offset is not None

    def transitions_between(self, first_year: int, last_year: int) -> tuple[np.ndarray, np.ndarray]:
        """Every transition of years ``first_year..last_year``: ``(utc_seconds, offset_after)``.

        Two per year in rule order (start, end), year after year, computed for
        all years at once. The start time is read in standard time and the end
        time in daylight time, the local time in force just before each change
        (POSIX).
        """
        if self.dst_offset is None or last_year < first_year:
            return np.empty(0, np.int64), np.empty(0, np.int32)
        assert self.start is not None and self.end is not None
        years = np.arange(first_year, last_year + 1, dtype=np.int64)
        start = self.start.days(years) * 86400 + (self.start_time - self.std_offset)
        end = self.end.days(years) * 86400 + (self.end_time - self.dst_offset)
        utc = np.stack([start, end], axis=1).ravel()
        offsets = np.tile(np.array([self.dst_offset, self.std_offset], dtype=np.int32), len(years))
        return utc, offsets

    def transitions(self, year: int) -> list[tuple[int, int]]:
        """The two transitions of ``year`` as ``(utc_seconds, offset_after)``, in rule order."""
        utc, offsets = self.transitions_between(year, year)
        return [(int(t), int(o)) for t, o in zip(utc, offsets)]
