"""Deterministic example fleets that look like a real multi-tenant one.

``fleet(n, seed)`` draws schedules from many regions, including the zones
where time is tricky (30-minute DST on Lord Howe, +12:45 Chatham, Morocco's
Ramadan pauses, Santiago's moving rules, Dublin's negative DST), daily times
inside DST gaps (02:30) and folds (01:30), hourly and every-N-minutes
windows, weekly, monthly on the 31st and on the last day, cron and RRULE
forms, elapsed intervals, and a few schedules with a business calendar.
The same ``(n, seed)`` gives the same fleet on every machine (numpy's PCG64).

>>> from calsim.examples import fleet
>>> f = fleet(5, seed=1)
>>> len(f), len({s.id for s in f}), f == fleet(5, seed=1)
(5, 5, True)
"""

from __future__ import annotations

from typing import cast

import numpy as np

from .calendars import Calendar
from .errors import InputError, shown
from .rules.every import Every
from .rules.window import Window
from .schedule import Schedule

__all__ = ["fleet", "ZONES"]

ZONES = (
    "America/New_York", "Europe/Berlin", "Australia/Lord_Howe", "Asia/Kolkata", "America/Sao_Paulo",
    "Pacific/Chatham", "Africa/Casablanca", "America/Santiago", "Europe/London", "Asia/Tokyo",
    "Asia/Shanghai", "America/Los_Angeles", "Europe/Dublin", "Asia/Kathmandu", "Australia/Sydney",
    "America/Chicago", "Asia/Tehran", "America/St_Johns", "Pacific/Auckland", "UTC", "Europe/Moscow",
    "America/Mexico_City", "Pacific/Apia", "Asia/Singapore", "Africa/Johannesburg", "Asia/Dubai",
    "Europe/Paris", "America/Havana", "America/Asuncion", "Asia/Gaza",
)
# Times that meet DST edges in many zones, mixed with ordinary ones.
_TIMES = ("02:30", "01:30", "00:00", "03:00", "06:00", "09:00", "12:00", "18:30", "23:59", "02:15")
_KINDS = (
    ("daily_rrule", 0.33),
    ("daily_cron", 0.13),
    ("weekly", 0.13),
    ("monthly_31", 0.05),
    ("monthly_last", 0.05),
    ("last_workday", 0.03),
    ("cron_last_day", 0.02),
    ("hourly_cron", 0.035),
    ("hourly_rrule", 0.03),
    ("window", 0.035),
    ("night_window", 0.03),
    ("business_minutes", 0.015),
    ("every", 0.04),
    ("business_daily", 0.02),
)


MAX_FLEET = 10_000_000  # schedules as Python objects: ~10 GB beyond this (a million-schedule table is Dask's job)


def fleet(n: int, seed: int = 0, *, rows: range | None = None) -> list[Schedule]:
    """``n`` schedules, deterministic in ``(n, seed)``; ids ``tenant-<t>/job-<i>``.

    ``rows`` (a ``range`` within ``0..n``): only those of the ``n``, the same
    objects ``fleet(n, seed)[rows.start:rows.stop]`` gives, built without the
    others (a Dask worker builds its share of ``example:N`` so).

    >>> fleet(10, rows=range(4, 6)) == fleet(10)[4:6]
    True

    ``n`` is a whole number from 0 to 10,000,000 and ``seed`` one from 0 to
    2**63 - 1 (numpy's generators take no negative seed); anything else is an
    :class:`~calsim.InputError` naming it.

    >>> fleet(-1)
    Traceback (most recent call last):
    ...
    calsim.errors.InputError: fleet: n -1 is not a whole number from 0 to 10,000,000
    """
    for name, value, hi in (("n", n, MAX_FLEET), ("seed", seed, 2**63 - 1)):
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or not 0 <= value <= hi:
            raise InputError(f"fleet: {name} {shown(value)} is not a whole number from 0 to {hi:,}")
    rows = range(n) if rows is None else rows
    if not isinstance(rows, range) or rows.step != 1 or not 0 <= rows.start <= rows.stop <= n:
        raise InputError(f"fleet: rows {shown(rows)} is not a range within 0..{n}")
    rng = np.random.default_rng(seed)
    kinds = [k for k, _ in _KINDS]
    weights = np.array([w for _, w in _KINDS])
    kind_ix = rng.choice(len(kinds), size=n, p=weights / weights.sum())
    zone_ix = rng.integers(0, len(ZONES), size=n)
    time_ix = rng.integers(0, len(_TIMES), size=n)
    gaps = rng.choice(["skip", "shift", "next_valid", "shift_backward"], size=n, p=[0.6, 0.2, 0.1, 0.1])
    folds = rng.choice(["first", "second", "both"], size=n, p=[0.7, 0.15, 0.15])
    invalid = rng.choice(["omit", "backward", "forward"], size=n)
    start_day = rng.integers(0, 180, size=n)
    minutes = rng.integers(0, 60, size=n)
    tenants = rng.integers(0, max(1, n // 50), size=n)
    weekdays = ("MO", "TU", "WE", "TH", "FR", "SA", "SU")
    cn_business = Calendar.business_days("CN") if "business_daily" in {kinds[i] for i in kind_ix} else None
    out = []
    for i in range(rows.stop):
        kind = kinds[kind_ix[i]]
        drawn = _draw(kind, rng)  # (every earlier row's draws are made: row i is the same whatever rows are built)
        if i < rows.start:
            continue
        zone = ZONES[zone_ix[i]]
        hh, mm = _TIMES[time_ix[i]].split(":")
        start = str(np.datetime64("2025-07-01") + np.timedelta64(int(start_day[i]), "D")) + f"T{hh}:{mm}"
        kw: dict = {"gap": str(gaps[i]), "fold": str(folds[i])}
        if kind == "daily_rrule":
            rule: object = "FREQ=DAILY"
        elif kind == "daily_cron":
            rule = f"{int(mm)} {int(hh)} * * *"
        elif kind == "weekly":
            rule = "FREQ=WEEKLY;BYDAY=" + ",".join(weekdays[d] for d in cast(list, drawn))
        elif kind == "monthly_31":
            rule = "FREQ=MONTHLY;BYMONTHDAY=31"
            kw["invalid_day"] = str(invalid[i])
        elif kind == "monthly_last":
            rule = "FREQ=MONTHLY;BYMONTHDAY=-1"
        elif kind == "last_workday":
            rule = "FREQ=MONTHLY;BYDAY=MO,TU,WE,TH,FR;BYSETPOS=-1"
        elif kind == "cron_last_day":
            rule = f"{int(mm)} {int(hh)} L * *"
        elif kind == "hourly_cron":
            rule = f"{int(minutes[i])} * * * *"
        elif kind == "hourly_rrule":
            rule = f"FREQ=HOURLY;INTERVAL={drawn};BYMINUTE={int(minutes[i])}"
        elif kind == "window":
            rule = Window("08:00", "20:00", drawn, days="MO,TU,WE,TH,FR")
        elif kind == "night_window":
            rule = Window("22:00", "03:00", "30min")
        elif kind == "business_minutes":
            rule = "*/15 9-17 * * 1-5"
        elif kind == "every":
            rule = Every(drawn)
        else:  # business_daily: every day, minus what is not a working day in China
            rule = "FREQ=DAILY"
            kw["exclude"] = cn_business
        out.append(Schedule(f"tenant-{tenants[i]:03d}/job-{i:05d}", zone, start, rule, **kw))
    return out


def _draw(kind: str, rng: np.random.Generator) -> object:
    """What row of ``kind`` draws from the fleet's generator as the rows are walked (weekdays, an interval, a
    period), in the order :func:`fleet` has always drawn it; None for a kind that draws nothing."""
    if kind == "weekly":
        return sorted(rng.choice(7, size=int(rng.integers(1, 4)), replace=False))
    if kind == "hourly_rrule":
        return int(rng.choice([2, 3, 6, 12]))
    if kind == "window":
        return str(rng.choice(["30min", "1h", "2h"]))
    if kind == "every":
        return str(rng.choice(["2h", "6h", "24h"]))
    return None
