"""The tzdata upgrade gate: is a change between two releases already in effect, still to come, or within a horizon?

:func:`upgrade_check` is what ``calsim tzdiff`` prints and gates on (``--fail-on future|any|in-effect|never``,
``--within``): each changed schedule is **in effect** (its zone's offsets already differ before *now*: servers on
the old release run its jobs at the wrong instant, and upgrading fixes them) or **future** (the zone's first
difference is at or after *now*); :class:`UpgradeCheck` holds the facts of the first line, the JSON summary and
the verdict. Dates are local dates in the zone named beside them; instants are UTC and say so. The diff itself is
:mod:`calsim.tzchanges`.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
from typing import Any

import numpy as np
import polars as pl

from .errors import InputError, check_choice
from .durations import duration_us, format_duration
from .expansion import as_schedules
from .times import US, instant_us
from .tz.release import ReleaseLike, release as get_release
from .tzchanges import _window, _year_of, describe_shifts, tzdiff, tzdiff_summary, zone_changes

__all__ = ["upgrade_check", "UpgradeCheck", "FAIL_ON", "LOOK_BACK"]

FAIL_ON = ("future", "any", "in-effect", "never")
LOOK_BACK = dt.timedelta(days=365)  # how far before now a change already in effect is dated from (the CLI's window)
_CALENDAR = ("dates (*_date, in_effect_since, next_change) are local dates in the zone named beside them, "
             "the calendar of the schedule's wall clock; fields named utc or *_utc are UTC instants")


def _iso(value: dt.datetime) -> str:
    """An instant as ``2026-11-01T00:00Z`` (seconds only when there are some)."""
    value = value.astimezone(dt.timezone.utc)
    return value.strftime("%Y-%m-%dT%H:%M:%SZ" if value.second or value.microsecond else "%Y-%m-%dT%H:%MZ")


def _date(value: object) -> str | None:
    return f"{value:%Y-%m-%d}" if isinstance(value, (dt.date, dt.datetime)) else None


def _plural(n: int, word: str = "schedule") -> str:
    return f"{n:,} {word}{'' if n == 1 else 's'}"


@dataclasses.dataclass(frozen=True)
class UpgradeCheck:
    """What :func:`upgrade_check` found: the facts of the first line, what to do, and the gate's verdict.

    Attributes
    ----------
    diff
        The :func:`tzdiff` frame with ``local_shift_s`` and ``shift`` (:func:`describe_shifts`).
    schedules
        :func:`tzdiff_summary` plus ``status`` (``"in_effect"`` or
        ``"future"``) and ``trips_gate``; ``in_effect_since`` (UTC) and
        ``in_effect_since_local`` (wall time in ``zone``) are the zone's
        first difference before ``now`` when the schedule's own first
        wrong run is not earlier. Sorted by that, else by first affected run.
    zones
        One row per zone: ``zone``, ``schedules``, ``occurrences``,
        ``first_local_date``, ``last_local_date`` (in the window),
        ``in_effect_since`` (the day the zone's change took effect, when
        before ``now``, else null), ``next_change`` (the first affected run
        of a change still to come, else null),
        all local dates in ``zone``; ``shifts_s`` and ``shifts`` (words), most
        frequent first.
    line
        The summary line ``calsim tzdiff`` prints first, ending with ``advice`` and ``verdict``.
    failed, exit_code
        Whether the gate (``fail_on``, ``within``) trips: exit code 1, else 0.
    """

    old: str
    new: str
    start: dt.datetime
    end: dt.datetime
    now: dt.datetime
    fleet_size: int
    fail_on: str
    within: dt.timedelta | None
    diff: pl.DataFrame
    schedules: pl.DataFrame
    zones: pl.DataFrame
    line: str
    advice: str
    verdict: str
    failed: bool

    @property
    def exit_code(self) -> int:
        return 1 if self.failed else 0

    def summary(self) -> dict[str, Any]:
        """The facts as a JSON-ready dict: what ``calsim tzdiff --format json`` writes as ``"summary"``."""
        rows = self.schedules
        first = rows.row(0, named=True) if rows.height else None
        in_effect = rows.filter(pl.col("status") == "in_effect")
        future = rows.filter(pl.col("status") == "future")

        def where(row: dict | None, in_effect: bool) -> dict[str, Any] | None:
            if row is None:
                return None
            local, utc = ("in_effect_since_local", "in_effect_since") if in_effect else ("first_local", "first_utc")
            return {"schedule_id": row["schedule_id"], "label": row["label"], "zone": row["zone"],
                    "local_date": _date(row[local]), "utc": _iso(row[utc])}

        lead = where(first, first is not None and first["status"] == "in_effect")
        if lead is not None and first is not None:
            change, shift_s, local_s, words = _typical(self.diff, first["schedule_id"])
            lead.update(change=change, shift_s=shift_s, local_shift_s=local_s, shift=words,
                        in_effect=first["status"] == "in_effect")
        zones = []
        for z in self.zones.iter_rows(named=True):
            shifts = self.diff.filter(pl.col("zone") == z["zone"]).group_by("shift_s", "local_shift_s", "shift").len()
            shifts = shifts.sort(["len", "shift_s", "shift"], descending=[True, False, False], nulls_last=True)
            zones.append({
                "zone": z["zone"], "schedules": z["schedules"], "occurrences": z["occurrences"],
                "first_local_date": _date(z["first_local_date"]), "last_local_date": _date(z["last_local_date"]),
                "in_effect_since": _date(z["in_effect_since"]), "next_change": _date(z["next_change"]),
                "shifts": [{"shift_s": sh, "local_shift_s": lo, "shift": w, "occurrences": n}
                           for sh, lo, w, n in shifts.iter_rows()],
            })
        return {
            "old": self.old, "new": self.new,
            "window": {"start": _iso(self.start), "end": _iso(self.end)},
            "now": _iso(self.now),
            "calendar": _CALENDAR,
            "schedules": self.fleet_size,
            "changed_schedules": rows.height,
            "occurrences": self.diff.height,
            "in_effect_schedules": in_effect.height,
            "future_schedules": future.height,
            "first_change": lead,
            "in_effect_since": where(in_effect.row(0, named=True) if in_effect.height else None, True),
            "next_change": where(future.row(0, named=True) if future.height else None, False),
            "zones": zones,
            "advice": self.advice,
            "gate": {
                "fail_on": self.fail_on,
                "within_s": int(self.within.total_seconds()) if self.within is not None else None,
                "until": _iso(self.now + self.within) if self.within is not None else None,
                "failed": self.failed, "exit_code": self.exit_code,
                "schedules": int(rows["trips_gate"].sum()) if rows.height else 0,
                "verdict": self.verdict,
            },
            "line": self.line,
        }


def _typical(diff: pl.DataFrame, schedule_id: str) -> tuple[str, int | None, int | None, str | None]:
    """What most of a schedule's runs do (a 0 s fold change on the first day says little): the commonest shift."""
    mine = diff.filter(pl.col("schedule_id") == schedule_id)
    moves = mine.filter(pl.col("shift_s").fill_null(0) != 0)
    row = (moves if moves.height else mine).group_by("change", "shift_s", "local_shift_s", "shift").len().sort(
        "len", "shift_s", "change", "shift", descending=[True, False, False, False], nulls_last=True).row(0, named=True)
    return row["change"], row["shift_s"], row["local_shift_s"], row["shift"]


def upgrade_check(schedules: object, old: ReleaseLike, new: ReleaseLike, start: object, end: object, *,
                  now: object = None, fail_on: str = "future", within: object = None,
                  diff: pl.DataFrame | None = None, max_occurrences: int | None = None) -> UpgradeCheck:
    """Before (or after) a tzdata upgrade: which schedules move, which already do, what to do, and the CI gate.

    A changed schedule is **in effect** when its zone's UTC offsets already
    differ between the two releases before ``now`` (looking back a year, or
    from the window's start if that is earlier), or its own runs already
    did: servers on ``old`` have run that zone's jobs at the wrong instant
    since then, and upgrading fixes them. A change counts per zone, as a
    government makes it: once in effect, it is in effect for every changed
    schedule of the zone, their runs still to come included (a monthly job
    whose first affected run is next week does not make the upgrade that
    fixes its zone a future change). A changed schedule is **future** when
    its zone's first difference, and its first affected run, are at or after
    ``now``. The gate, ``fail_on``:

    ============= =================================================================
    ``"future"``  (default) fails on a change still to come, so an upgrade that
                  fixes a change already in effect is not blocked
    ``"any"``     fails on any change (``calsim tzdiff --fail-on-change``)
    ``"in-effect"`` fails on a change already in effect (servers run jobs wrongly now)
    ``"never"``   never fails (a report, not a gate)
    ============= =================================================================

    ``within`` (a duration, e.g. ``"30d"``; with ``"future"`` or ``"any"``)
    counts a future change only when its first affected run is before
    ``now + within``; a change in effect is always within.

    Parameters
    ----------
    schedules, old, new, start, end
        As :func:`tzdiff`.
    now
        The instant that splits in effect from future (default: the current time).
    diff
        A :func:`tzdiff` frame of the same arguments already computed (else computed here).

    Returns
    -------
    UpgradeCheck
        ``line`` (the first line of ``calsim tzdiff``), ``advice``,
        ``verdict``, ``exit_code``, ``summary()`` (the JSON summary), and the
        frames ``diff``, ``schedules``, ``zones``. Dates are local dates in
        each schedule's zone.

    >>> import calsim
    >>> s = calsim.Schedule("mx", "America/Mexico_City", "2023-01-01T09:00", "FREQ=DAILY")
    >>> c = upgrade_check([s], "2022e", "2022f", "2023-01-01T00:00Z", "2024-01-01T00:00Z", now="2023-06-01T00:00Z")
    >>> c.exit_code, c.advice
    (0, 'upgrade to 2022f now, it fixes the runs already at the wrong instant')
    >>> c.zones.select("zone", "in_effect_since", "shifts").row(0)
    ('America/Mexico_City', datetime.date(2023, 4, 2), ['1 h later in UTC, same local time'])
    """
    check_choice("fail_on", fail_on, FAIL_ON, error=InputError)
    if within is not None and fail_on not in ("future", "any"):
        raise InputError(f"within: {within!r} bounds changes still to come; with fail_on={fail_on!r} it would "
                         "change nothing (allowed with fail_on 'future' or 'any')")
    horizon = dt.timedelta(microseconds=duration_us(within, "within")) if within is not None else None
    a, b = get_release(old), get_release(new)
    lo, hi = _window(start, end)
    now_us = instant_us(now, "now") if now is not None else int(np.datetime64("now", "us").astype(np.int64))
    epoch = dt.datetime(1970, 1, 1, tzinfo=dt.timezone.utc)
    t_now, t_lo, t_hi = (epoch + dt.timedelta(microseconds=v) for v in (now_us, lo, hi))
    scheds = as_schedules(schedules)
    if diff is None:
        diff = tzdiff(scheds, a, b, t_lo, t_hi, max_occurrences=max_occurrences)
    described = describe_shifts(diff, a, b)
    rows = tzdiff_summary(described, scheds, t_now)
    since = _zones_in_effect(a, b, sorted(set(diff["zone"].to_list())), min(t_lo, t_now - LOOK_BACK), t_now)
    rows = rows.join(since, on="zone", how="left", maintain_order="left")
    by_zone = pl.col("zone_since").is_not_null() & (
        pl.col("in_effect_since").is_null() | (pl.col("zone_since") < pl.col("in_effect_since")))
    rows = rows.with_columns(
        pl.when(by_zone).then(pl.col("zone_since")).otherwise(pl.col("in_effect_since")).alias("in_effect_since"),
        pl.when(by_zone).then(pl.col("zone_since_local")).otherwise(pl.col("in_effect_since_local"))
        .alias("in_effect_since_local"),
    ).drop("zone_since", "zone_since_local")
    until = pl.lit(now_us + (horizon // dt.timedelta(microseconds=1) if horizon is not None else 0))
    soon = (pl.col("first_utc") < until.cast(pl.Datetime("us", "UTC"))) if horizon is not None else pl.lit(True)
    status = pl.when(pl.col("in_effect_since").is_not_null()).then(pl.lit("in_effect")).otherwise(pl.lit("future"))
    trips = {"future": (status == "future") & soon, "any": (status == "in_effect") | soon,
             "in-effect": status == "in_effect", "never": pl.lit(False)}[fail_on]
    rows = (rows.with_columns(status.alias("status"), trips.fill_null(False).alias("trips_gate"))
            .sort(pl.coalesce("in_effect_since", "first_utc"), "schedule_id", nulls_last=True))
    zones = _zones(rows, described)
    advice = _advice(rows, b.version)
    verdict = _verdict(rows, fail_on, horizon, t_now)
    failed = bool(rows["trips_gate"].any()) if rows.height else False
    line = f"{_facts_line(described, rows, len(scheds), a.version, b.version, t_lo, t_hi)}; to do: {advice}; {verdict}"
    return UpgradeCheck(a.version, b.version, t_lo, t_hi, t_now, len(scheds), fail_on, horizon, described, rows,
                        zones, line, advice, verdict, failed)


def _zones_in_effect(a, b, zones: list[str], lo: dt.datetime, now: dt.datetime) -> pl.DataFrame:
    """Zones whose offsets already differ between the releases before ``now`` (from ``lo``): the change is in effect.

    ``zone_since`` is the first differing instant, ``zone_since_local`` the
    wall time it is in the zone by the new release (the correct clock).
    """
    schema = pl.Schema({"zone": pl.String(), "zone_since": pl.Datetime("us", "UTC"),
                        "zone_since_local": pl.Datetime("us")})
    if not zones or lo >= now:
        return pl.DataFrame(schema=schema)
    kinds = ("transition_moved", "transition_added", "transition_removed", "offset_changed")
    changed = zone_changes(a, b, lo, now).filter(pl.col("kind").is_in(kinds), pl.col("zone").is_in(zones))
    rows = []
    for zone, first in changed.select("zone", "first_utc").iter_rows():
        sec = int(first.timestamp())
        off = int(b.table(zone).covering(_year_of(sec * US) + 1).offset_at_utc(np.array([sec]))[0])
        rows.append((zone, first, first.replace(tzinfo=None) + dt.timedelta(seconds=off)))
    return pl.DataFrame(rows, schema=schema, orient="row")


def _zones(rows: pl.DataFrame, diff: pl.DataFrame) -> pl.DataFrame:
    """Per zone, from the per-schedule rows and the described diff (local dates of the zone)."""
    first = pl.col("first_utc")
    per = rows.group_by("zone", maintain_order=True).agg(
        pl.len().cast(pl.Int64).alias("schedules"),
        pl.col("occurrences").sum().cast(pl.Int64),
        pl.col("first_affected").min().dt.date().alias("first_local_date"),
        pl.col("last_affected").max().dt.date().alias("last_local_date"),
        pl.col("in_effect_since_local").sort_by(pl.col("in_effect_since")).drop_nulls().first().dt.date()
        .alias("in_effect_since"),
        pl.col("first_local").filter(pl.col("status") == "future").sort_by(
            first.filter(pl.col("status") == "future")).first().dt.date().alias("next_change"),
        first.min().alias("_first"),
    )
    shifts = (diff.group_by("zone", "shift_s", "shift").len()
              .sort(["zone", "len", "shift_s", "shift"], descending=[False, True, False, False], nulls_last=True)
              .group_by("zone", maintain_order=True)
              .agg(pl.col("shift_s").drop_nulls().unique(maintain_order=True).alias("shifts_s"),
                   pl.col("shift").drop_nulls().alias("shifts")))
    out = per.join(shifts, on="zone", how="left").sort("_first", "zone")
    return out.select("zone", "schedules", "occurrences", "first_local_date", "last_local_date", "in_effect_since",
                      "next_change", "shifts_s", "shifts")


def _facts_line(diff: pl.DataFrame, rows: pl.DataFrame, n: int, old: str, new: str, start: dt.datetime,
                end: dt.datetime) -> str:
    head = f"between tzdata {old} and {new} in [{_iso(start)}, {_iso(end)})"
    if not diff.height:
        return f"0 of {n:,} schedules change {head}"
    first = rows.row(0, named=True)  # sorted by first affected instant
    change, shift_s, _, _ = _typical(diff, first["schedule_id"])
    what = f"{change}, {shift_s if shift_s is not None else 'n/a'} s"
    if first["status"] == "in_effect":
        lead = (f"already in effect since {first['in_effect_since_local']:%Y-%m-%d} in {first['zone']} ({what}): "
                f"servers on tzdata {old} have run these jobs at the wrong instant since then")
    else:
        lead = f"first on {first['first_local']:%Y-%m-%d} in {first['zone']} ({what})"
    in_effect = int((rows["status"] == "in_effect").sum())
    also = f"; {in_effect:,} schedule(s) already affected" if in_effect > 1 else ""
    return f"{rows.height:,} of {n:,} schedules change {head}: {diff.height:,} occurrences, {lead}{also}"


def _next(rows: pl.DataFrame) -> dict | None:
    future = rows.filter(pl.col("status") == "future")
    return future.row(0, named=True) if future.height else None


def _advice(rows: pl.DataFrame, new: str) -> str:
    """What to do, in time: upgrade now when a change is already in effect, else before the first one to come."""
    if not rows.height:
        return "nothing, no run moves"
    nxt = _next(rows)
    coming = f"{nxt['first_local']:%Y-%m-%d} in {nxt['zone']}" if nxt is not None else ""
    if (rows["status"] == "in_effect").any():
        return (f"upgrade to {new} now, it fixes the runs already at the wrong instant"
                + (f" (the next change comes on {coming})" if nxt is not None else ""))
    return (f"upgrade to {new} before {coming} (the first change to come; earlier still if your scheduler "
            "stores its next runs ahead)")


def _verdict(rows: pl.DataFrame, fail_on: str, horizon: dt.timedelta | None, now: dt.datetime) -> str:
    span = format_duration(horizon // dt.timedelta(microseconds=1)) if horizon is not None else ""
    flag = f"gate --fail-on {fail_on}" + (f" --within {span}" if horizon is not None else "")
    if fail_on == "never":
        return f"{flag}: pass (exit 0), it never fails"
    if not rows.height:
        return f"{flag}: pass (exit 0), nothing moves"
    tripped = rows.filter(pl.col("trips_gate"))
    nxt = _next(rows)
    if tripped.height:
        parts = []
        live = tripped.filter(pl.col("status") == "in_effect").height
        if live:
            parts.append(f"{_plural(live)} already {'runs' if live == 1 else 'run'} at the wrong instant")
        soon = tripped.filter(pl.col("status") == "future")
        if soon.height:
            row = soon.row(0, named=True)
            verb = "changes" if soon.height == 1 else "change"
            parts.append(f"{_plural(soon.height)} {verb} from {row['first_local']:%Y-%m-%d} in {row['zone']}"
                         + (f", within {span} of now" if horizon is not None else ""))
        return f"{flag}: FAIL (exit 1), {' and '.join(parts)}"
    if fail_on == "in-effect":
        return f"{flag}: pass (exit 0), no change is in effect yet"
    if nxt is None:
        return f"{flag}: pass (exit 0), no change still to come"
    assert horizon is not None  # a future change that did not trip "future"/"any": beyond the horizon
    return (f"{flag}: pass (exit 0), the next change, on {nxt['first_local']:%Y-%m-%d} in {nxt['zone']}, "
            f"is more than {span} away")
