"""``preview``: the next occurrences of one schedule, each explained in words.

>>> import calsim
>>> s = calsim.Schedule("nightly", "America/New_York", "2026-03-07T02:30", "FREQ=DAILY")
>>> for text in calsim.preview(s, n=3, release="2026f")["explain"]:
...     print(text)
2026-03-07 02:30 EST (07:30Z)
2026-03-08: not run, 02:30 does not exist in America/New_York (tzdata 2026f)
2026-03-09 02:30 EDT (06:30Z)
"""

from __future__ import annotations

import datetime as dt

import numpy as np
import polars as pl

import calsim.limits as limits
from .errors import InputError
from .expansion import expand_indexed
from .tz.release import ReleaseLike, release as get_release
from .resolution import resolve_wall
from .schedule import Schedule
from .times import US, instant_us, iso_z

__all__ = ["preview"]

_YEAR = 366 * 86400 * US
_LIMIT_YEARS = 400


def _start_instant(s: Schedule, rel) -> int:
    if s.start_utc is not None:
        return s.start_utc
    if s.start_wall is not None:
        table = rel.table(s.zone)
        r = resolve_wall(np.array([s.start_wall]), table, gap="shift_backward", fold="first")
        return int(r.due[0]) - 86400 * US  # a day early: the start row may be a gap placed before it
    return s.parsed_rule.anchor_us(0)


def preview(schedule: Schedule, n: int = 10, after: object = None, release: ReleaseLike = None, *,
            max_occurrences: int | None = None) -> pl.DataFrame:
    """The first ``n`` occurrences at or after ``after`` (default: the schedule's start), explained.

    Returns the occurrence frame of :func:`calsim.expand` plus an ``explain``
    column (str): when it runs in local time and UTC, or why it does not
    ("2026-03-08: not run, 02:30 does not exist in America/New_York (tzdata
    2026f)"). Searches forward in growing windows for up to 400 years, so a
    rule that never matches returns an empty frame instead of hanging.

    ``max_occurrences`` (None: ``CALSIM_MAX_OCCURRENCES``, else 100 million)
    bounds the work: an ``n`` above it is refused before anything is done,
    and no search window is expanded whose estimated rows exceed it (see
    :mod:`calsim.limits`).
    """
    if not isinstance(schedule, Schedule):
        raise InputError(f"schedule: expected a calsim.Schedule, got {type(schedule).__name__} "
                         "(calsim.load or calsim.Schedule make one)")
    cap = limits.max_occurrences(max_occurrences)
    limits.check_count(n, cap, "preview", "n")
    rel = get_release(release)
    lo = instant_us(after, "after") if after is not None else _start_instant(schedule, rel)
    span = _fit(schedule, lo, 0, 31 * 86400 * US, rel, cap)
    frame = _expand(schedule, lo, span, rel, cap)
    while frame.height < n and span < _LIMIT_YEARS * _YEAR:
        span = _fit(schedule, lo, span, span * 4, rel, cap)
        frame = _expand(schedule, lo, span, rel, cap)
    frame = frame.head(n)
    texts = [_explain(row, rel.version, rel) for row in frame.iter_rows(named=True)]
    return frame.with_columns(pl.Series("explain", texts, dtype=pl.String))


def _expand(schedule: Schedule, lo: int, span: int, rel, cap: int) -> pl.DataFrame:
    frame, _, _ = expand_indexed([schedule], iso_z(lo), iso_z(lo + span), rel, max_occurrences=cap,
                                 what="preview")
    return frame


def _fit(schedule: Schedule, lo: int, span: int, wanted: int, rel, cap: int) -> int:
    """The next search window: ``wanted`` long, or the longest the limit allows (refused if not past ``span``)."""
    if limits.estimate([schedule], lo, lo + wanted, rel) <= cap:
        return wanted
    # A dense rule, or many rows asked for: bisect on whole minutes.
    step = 60 * US
    good, bad = span // step, wanted // step
    while bad - good > 1:
        mid = (good + bad) // 2
        if limits.estimate([schedule], lo, lo + mid * step, rel) <= cap:
            good = mid
        else:
            bad = mid
    if good * step <= span:  # cannot grow: refused with the usual message, naming the estimate
        limits.check([schedule], lo, lo + wanted, cap, "preview", rel)
    return good * step


def _abbr(zone: str, rel, due: dt.datetime) -> str:
    z = rel.zone(zone)
    name = due.astimezone(z).tzname() or ""
    return name if name and name[0] not in "+-" else "UTC" + name if name else ""


# Who walks the calendar for a rule fired with gap/fold="scheduler" (the note suffix of calsim.emulation's rows).
_WALKERS = {"robfig": "robfig/cron's Next() (a Kubernetes CronJob)", "quartz": "Quartz's getTimeAfter",
            "systemd": "systemd's calendar walk", "apscheduler": "APScheduler's CronTrigger"}


def _explain(row: dict, version: str, rel) -> str:
    nominal: dt.datetime = row["nominal_local"]
    due: dt.datetime | None = row["due_utc"]
    zone = row["zone"]
    day = nominal.date().isoformat()
    hm = nominal.strftime("%H:%M") + (nominal.strftime(":%S") if nominal.second else "")
    notes: list[str] = row["notes"]
    parts: list[str] = []
    if due is not None:
        local = (due + dt.timedelta(seconds=row["utc_offset_s"])).replace(tzinfo=None)
        when = f"{local:%Y-%m-%d %H:%M} {_abbr(zone, rel, due)} ({due:%H:%M}Z)"
    for note in notes:
        if note == "dst_gap_skipped":
            parts.append(f"{day}: not run, {hm} does not exist in {zone} (tzdata {version})")
        elif note.startswith("dst_gap_"):
            how = {
                "dst_gap_shifted": "shifted forward by the length of the gap",
                "dst_gap_next_valid": "at the first valid time after the gap",
                "dst_gap_shifted_backward": "read with the offset after the gap",
            }[note]
            parts.append(f"{day}: {hm} does not exist in {zone} (tzdata {version}); runs {when}, {how}")
        elif note.startswith("dst_fold_"):
            which = "second" if row["fold"] == 1 else "first"
            extra = " (it also runs on the other pass)" if note == "dst_fold_both" else ""
            parts.append(f"{day}: {hm} happens twice in {zone} (tzdata {version}); "
                         f"runs on the {which} pass, {when}{extra}")
        elif note == "invalid_day_backward":
            parts.append(f"{day}: the rule's day does not exist in this month; moved back to its last day")
        elif note == "invalid_day_forward":
            parts.append(f"{day}: the rule's day does not exist in that month; moved forward to the 1st")
        elif note.startswith("merged_with:"):
            parts.append(f"also stands for {note.split(':', 1)[1]}, which resolves to the same instant")
        elif note.startswith("merged_into:"):
            parts.append(f"{day}: not run, resolves to the same instant as {note.split(':', 1)[1]}, which runs")
        elif note.startswith("excluded:"):
            parts.append(f"{day}: not run, excluded by calendar {note.split(':', 1)[1]}")
        elif note.startswith(("dst_lost:", "dst_extra:", "dst_stuck:")):  # calsim.emulation: a scheduler's own walk
            kind, who = note.split(":", 1)
            walker = _WALKERS.get(who, who)
            if kind == "dst_lost":
                parts.append(f"{day}: not run, {walker} skips {hm} next to a DST change in {zone} (tzdata {version})")
            elif kind == "dst_extra":
                parts.append(f"{day}: runs {when}, a time the rule does not name: {walker} lands on it next to a "
                             f"DST change in {zone}")
            else:
                parts.append(f"{day}: not run, {walker} stopped at a DST change in {zone} and never fires again")
    if not parts:
        return when
    if due is not None and not any("runs" in p for p in parts):
        parts.insert(0, when)
    return "; ".join(parts)
