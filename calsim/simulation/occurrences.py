"""Occurrence rows of a scenario: revisions, the TzUpgrade splice, and manual runs.

* :class:`~calsim.Revise` events end a schedule's revision at their instant
  and start a new one (numbered after the highest so far).
* A :class:`~calsim.TzUpgrade` keeps the old release's instants before
  ``at`` (and, with ``mode="keep"``, for what was materialised up to
  ``at + horizon``); later occurrences follow the new release.
* :class:`~calsim.Trigger` events add manual runs at the first wake-up at or
  after the trigger (:func:`.run_rules.wake`); they move nothing.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import polars as pl

import calsim.limits as limits
from ..expansion import expand_indexed
from ..schedule import Schedule
from ..times import US, iso_z
from ..tz.release import release as get_release
from .run_rules import BIG, wake
from .scenario import Revise, Scenario, Trigger, TzUpgrade
from .state import RunState

__all__ = ["occurrences", "manual_rows", "check_scenario", "revised"]


def revised(scenario: Scenario) -> tuple[list[Schedule], list[tuple[int, str, int]]]:
    """Schedules with Revise events applied; returns also (at, id, old revision) boundaries.

    The one numbering of revisions: the engine, the ledger store's ``schedules``
    table and a Dask dataset's ``_scenario.json`` all take it from here
    (:func:`calsim.simulation.scenario_records.schedule_rows`). A revision made by an
    event is the event's schedule's own revision when that is above every
    revision of its id so far, else the highest so far plus one.
    """
    scheds = list(scenario.schedules)
    boundaries = []
    for ev in scenario.events:
        if not isinstance(ev, Revise):
            continue
        new = ev.schedule
        assert new is not None
        current = [i for i, s in enumerate(scheds) if s.id == new.id and (s.to_utc is None or s.to_utc > ev.at_us)
                   and (s.from_utc is None or s.from_utc <= ev.at_us)]
        for i in current:
            boundaries.append((ev.at_us, new.id, scheds[i].revision))
            scheds[i] = replace(scheds[i], effective_to=iso_z(ev.at_us))
        revision = new.revision if new.revision > max(s.revision for s in scheds if s.id == new.id) else \
            max(s.revision for s in scheds if s.id == new.id) + 1
        scheds.append(replace(new, revision=revision, effective_from=iso_z(ev.at_us)))
    return scheds, boundaries


def check_scenario(scenario: Scenario, max_occurrences: int | None = None) -> int:
    """Refuse a scenario whose expansion (revisions included, under each release it uses) would exceed the limit.

    Returns the largest estimate; see :func:`calsim.limits.check`.
    """
    scheds, _ = revised(scenario)
    cap = limits.max_occurrences(max_occurrences)
    releases = [scenario.release] + [ev.to for ev in scenario.events if isinstance(ev, TzUpgrade)]
    return max(limits.check(scheds, scenario.start_us, scenario.end_us, cap, "simulate", get_release(r))
               for r in releases)


def occurrences(scenario: Scenario, max_occurrences: int | None = None):
    """The scenario's occurrence rows; each expansion is checked against ``max_occurrences``
    (None: :func:`calsim.limits.max_occurrences`, which :func:`calsim.simulate` sets with
    :func:`calsim.limits.scope`)."""
    scheds, boundaries = revised(scenario)
    rel = get_release(scenario.release)
    start, end = iso_z(scenario.start_us), iso_z(scenario.end_us)
    # schedule_id and zone stay integer codes through the simulation (the
    # ledger turns them into strings when read): 3 bytes a row, not 32.
    frame, ordered, s_of = expand_indexed(scheds, start, end, rel, max_occurrences=max_occurrences,
                                          what="simulate", codes=True)
    tz_of = np.zeros(frame.height, dtype=np.int8)
    for ev in scenario.events:
        if not isinstance(ev, TzUpgrade):
            continue
        # Before `at` (and, with mode="keep", for what was materialised up to
        # at + horizon) the old instants stand; later ones follow the new release.
        new_rel = get_release(ev.to)
        cut = ev.at_us + (ev.horizon_us if ev.mode == "keep" else 0)
        new_frame, ordered_new, s_new = expand_indexed(scheds, start, end, new_rel,
                                                       max_occurrences=max_occurrences, what="simulate", codes=True)
        assert [s.id for s in ordered_new] == [s.id for s in ordered]
        place_old = _place(frame)
        place_new = _place(new_frame)
        keep_old = frame.filter(pl.Series(place_old < cut))
        s_keep = s_of[place_old < cut]
        key = ["schedule_id", "revision", "nominal_local", "fold"]
        taken = keep_old.select(key).with_columns(pl.lit(True).alias("_taken"))
        cand = new_frame.with_columns(pl.Series("_s", s_new), pl.Series("_p", place_new)).filter(pl.col("_p") >= cut)
        cand = cand.join(taken, on=key, how="left").filter(pl.col("_taken").is_null())
        tz_new = np.ones(cand.height, dtype=np.int8)
        frame = pl.concat([keep_old, cand.select(frame.columns)])
        s_of = np.concatenate([s_keep, cand["_s"].to_numpy()])
        tz_of = np.concatenate([tz_of[place_old < cut], tz_new])
    return frame, ordered, s_of, tz_of, boundaries


def _place(frame: pl.DataFrame) -> np.ndarray:
    """Each row's instant (µs); a row without one (gap-skipped, merged, excluded) sorts after every instant."""
    return frame["due_utc"].dt.epoch("us").fill_null(BIG).to_numpy()


def manual_rows(scenario: Scenario, scheds: list[Schedule], run: RunState) -> list[dict]:
    """Trigger events: manual runs at the first wake-up at or after the trigger (they move nothing)."""
    out = []
    by_id: dict[str, int] = {}
    for i, s in enumerate(scheds):
        by_id.setdefault(s.id, i)
    tick = scenario.tick_us
    for ev in scenario.events:
        if not isinstance(ev, Trigger):
            continue
        i = by_id[ev.schedule_id]
        s = scheds[i]
        p = run.pol[i]
        t = int(wake(np.array([ev.at_us], dtype=np.int64), tick, run.outages, p.recovery_wake, run.suspends,
                     p.suspend_wake == "sleep_end")[0])
        # Its identity is the trigger's local wall time (the ledger key needs a
        # nominal time), read with the release in force at the trigger: the
        # scenario's, or the last TzUpgrade's at or before it. Never a row's
        # release, which would depend on what else is in the fleet.
        rel = run.rel
        for up in scenario.events:
            if isinstance(up, TzUpgrade) and up.at_us <= ev.at_us:
                rel = get_release(up.to)
        off = int(rel.table(s.zone).offset_at_utc(np.array([ev.at_us // US]))[0])
        out.append({"i": i, "schedule": s, "at": ev.at_us, "wall": ev.at_us + off * US, "offset": off,
                    "start": t, "finish": t + p.duration_us, "cost": float(p.cost), "tzdata": rel.version})
    return out
