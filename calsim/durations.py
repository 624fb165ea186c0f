"""Durations: ISO 8601 (``"PT10M"``, ``"P1DT2H"``) or short forms (``"10min"``, ``"2d"``), as int64 µs.

Durations here are *elapsed* time (a day is 86,400 s), which is what an
interval between runs, a grace period or a jitter means. Calendar periods
(a month, a local day across DST) are rules, not durations, so ``"P1M"`` and
``"P1Y"`` are refused rather than guessed.

>>> from calsim.durations import duration_us
>>> duration_us("PT1H30M") == duration_us("90min") == 5_400_000_000
True
"""

from __future__ import annotations

import datetime as dt
import math
import re

from .errors import InputError, shown
from .times import US

__all__ = ["duration_us", "format_duration"]

# Longer than any grace, window or period a scheduler takes, and far inside int64 µs (292,000 years),
# so due + duration never overflows for any instant calsim handles (years 1..9999).
MAX_DAYS = 365_000
MAX_US = MAX_DAYS * 86400 * US
_UNITS = {
    "us": 1, "ms": 1_000, "s": US, "sec": US, "secs": US, "second": US, "seconds": US,
    "m": 60 * US, "min": 60 * US, "mins": 60 * US, "minute": 60 * US, "minutes": 60 * US,
    "h": 3600 * US, "hr": 3600 * US, "hrs": 3600 * US, "hour": 3600 * US, "hours": 3600 * US,
    "d": 86400 * US, "day": 86400 * US, "days": 86400 * US,
    "w": 7 * 86400 * US, "week": 7 * 86400 * US, "weeks": 7 * 86400 * US,
}
_SHORT = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([a-z]+)\s*$", re.IGNORECASE)
_ISO = re.compile(
    r"^P(?:(?P<w>\d+(?:\.\d+)?)W)?(?:(?P<d>\d+(?:\.\d+)?)D)?"
    r"(?:T(?:(?P<h>\d+(?:\.\d+)?)H)?(?:(?P<m>\d+(?:\.\d+)?)M)?(?:(?P<s>\d+(?:\.\d+)?)S)?)?$"
)
_ALLOWED = "an ISO 8601 duration such as 'PT10M' or 'P1DT2H', or a short form such as '30s', '10min', '2h', '1d'"


def duration_us(value: object, field: str = "duration", *, allow_zero: bool = False) -> int:
    """Parse a duration into int64 microseconds (``timedelta`` and numbers of seconds accepted too)."""
    if isinstance(value, dt.timedelta):
        us = (value.days * 86400 + value.seconds) * US + value.microseconds
    elif isinstance(value, bool):
        raise InputError(f"{field}: expected {_ALLOWED}, got {shown(value)}")
    elif isinstance(value, (int, float)):
        too_big = (abs(value) > MAX_US // US if isinstance(value, int)
                   else not math.isfinite(value) or abs(value) > MAX_US / US)
        if too_big:
            raise InputError(f"{field}: {shown(value)} seconds is out of range (at most {MAX_DAYS:,} days)")
        us = round(value * US)
    elif isinstance(value, str):
        us = _parse(value.strip(), field)
    else:
        raise InputError(f"{field}: expected {_ALLOWED}, got {type(value).__name__} {shown(value)}")
    if us > MAX_US:
        raise InputError(f"{field}: {shown(value)} is longer than {MAX_DAYS:,} days (1,000 years), the longest "
                         "duration calsim takes")
    if us < 0 or (us == 0 and not allow_zero):
        raise InputError(f"{field}: {shown(value)} must be {'at least 0' if allow_zero else 'positive'}")
    return us


def _parse(text: str, field: str) -> int:
    if len(text) > 100:
        raise InputError(f"{field}: {shown(text)} is not a duration ({len(text):,} characters); expected {_ALLOWED}")
    m = _SHORT.match(text)
    if m and m[2].lower() in _UNITS:
        return _us(float(m[1]) * _UNITS[m[2].lower()], text, field)
    m = _ISO.match(text.upper())
    if m and text.upper() not in ("P", "PT") and not text.upper().endswith("T"):
        parts = {k: float(v) for k, v in m.groupdict().items() if v}
        return _us(
            parts.get("w", 0) * 7 * 86400 * US
            + parts.get("d", 0) * 86400 * US
            + parts.get("h", 0) * 3600 * US
            + parts.get("m", 0) * 60 * US
            + parts.get("s", 0) * US, text, field
        )
    if re.match(r"^P(\d+Y|\d+M)", text.upper()):
        raise InputError(
            f"{field}: {shown(text)} is a calendar period (months/years have no fixed length); "
            f"expected {_ALLOWED}, or use a calendar rule (RRULE/cron) for calendar periods"
        )
    raise InputError(f"{field}: cannot parse {shown(text)}; expected {_ALLOWED}")


def _us(value: float, text: str, field: str) -> int:
    """Round to µs, refusing what is beyond MAX_US (also infinity: float('1' * 400) is inf)."""
    if not math.isfinite(value) or value > MAX_US:
        raise InputError(f"{field}: {shown(text)} is longer than {MAX_DAYS:,} days (1,000 years), the longest "
                         "duration calsim takes")
    return round(value)


def format_duration(us: int) -> str:
    """A short human form: ``5400000000`` -> ``'1h30m'``.

    >>> format_duration(5_400_000_000), format_duration(86_400_000_000), format_duration(1_500_000)
    ('1h30m', '1d', '1.5s')
    """
    s, rem = divmod(int(us), US)
    out = []
    for unit, size in (("d", 86400), ("h", 3600), ("m", 60)):
        q, s = divmod(s, size)
        if q:
            out.append(f"{q}{unit}")
    if s or rem:
        out.append(f"{s + rem / US:g}s")
    return "".join(out) or "0s"
