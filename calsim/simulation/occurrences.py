"""Occurrence rows of a scenario: revisions, the TzUpgrade splice, and manual runs.

* :class:`~calsim.Revise` events end a schedule's revision at their instant
  and start a new one (numbered after the highest so far).
* A :class:`~calsim.TzUpgrade` keeps the old release's instants before
  ``at`` (and, with ``mode="keep"``, for what was materialised up to
  ``at + horizon``); later occurrences follow the new release.
* :class:`~calsim.Trigger` events add manual runs at the first wake-up at or
  after the trigger (:func:`.run_rules.wake`); they move nothing.
* A schedule whose policy ``covers="data_interval"`` (Airflow's
  ``CronDataIntervalTimetable``/``DeltaDataIntervalTimetable``) runs each
  interval at its end: its first time at or after its start only opens the
  first interval (:func:`interval_openings`).
* :class:`~calsim.Backfill` events add a run for each occurrence of their
  range the horizon does not hold (:func:`backfill_rows`).
* An :class:`~calsim.Every` whose policy has ``interval_from="last_run"`` or
  ``"restart"`` counts from the run the scheduler sent at its return from an
  outage, or from that return (Celery beat's intervals,
  :func:`restarted_intervals`).
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any, cast

import numpy as np
import polars as pl

import calsim.limits as limits
from ..expansion import expand_indexed
from ..resolution import resolve_wall
from ..schedule import Schedule
from ..times import US, iso_z
from ..tz.release import release as get_release
from .policy import Policy
from .run_rules import BIG, wake
from .scenario import Backfill, Revise, Scenario, Trigger, TzUpgrade
from .state import RunState

__all__ = ["occurrences", "manual_rows", "check_scenario", "revised", "interval_openings",
           "restarted_intervals", "backfill_rows"]


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
    if isinstance(scenario.capacity, dict):
        from .couplings import pools_of

        pools_of(scenario)  # (pools that share something are refused here, before anything runs)
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


def interval_openings(scenario: Scenario, ordered: list[Schedule], frame: pl.DataFrame, s_of: np.ndarray,
                      tz_of: np.ndarray) -> tuple[pl.DataFrame, np.ndarray, np.ndarray, dict[int, int]]:
    """Drop the row that opens each data-interval schedule's first interval; returns it per schedule index.

    Airflow's data-interval timetables run the interval ``[t_k, t_k+1)`` at
    ``t_k+1`` (``timetables/interval.py`` ``_DataIntervalTimetable.next_dagrun_info``:
    the first interval starts at the first time at or after ``start_date``,
    ``run_after = data_interval.end``), so the schedule's first time is a
    boundary, not a run. Known only when the schedule starts inside the
    horizon; one that started before it is taken to have opened an interval
    before every row of the horizon (as :mod:`.data_windows` takes the
    schedule as regular before the horizon). A revision a :class:`~calsim.Revise`
    makes keeps the intervals going (it has ``effective_from``). The dropped
    instants (schedule index -> µs) give the first run's window its start.
    """
    which = [i for i, s in enumerate(ordered) if isinstance(s.policy, Policy) and s.policy.covers == "data_interval"
             and s.from_utc is None and _start_instant(s, scenario) >= scenario.start_us]
    if not which or not frame.height:
        return frame, s_of, tz_of, {}
    due = _place(frame)
    flagged = np.zeros(len(ordered), dtype=bool)
    flagged[which] = True
    rows = np.flatnonzero(flagged[s_of] & (due < BIG))
    by = rows[np.lexsort((due[rows], s_of[rows]))]  # each schedule's rows by due instant: its first is first
    first = by[np.r_[True, s_of[by][1:] != s_of[by][:-1]]] if len(by) else by
    opening = dict(zip(s_of[first].tolist(), due[first].tolist()))
    keep = np.ones(frame.height, dtype=bool)
    keep[first] = False
    return frame.filter(pl.Series(keep)), s_of[keep], tz_of[keep], opening


def restarted_intervals(scenario: Scenario, ordered: list[Schedule], frame: pl.DataFrame, s_of: np.ndarray,
                        tz_of: np.ndarray) -> tuple[pl.DataFrame, np.ndarray, np.ndarray]:
    """Re-anchor the intervals that count from the last run the scheduler sent, outage by outage.

    Celery beat's interval entry is due when ``last_run_at + run_every`` has
    passed (``celery/schedules.py:157-204``, ``schedule.is_due``) and sending
    it sets ``last_run_at`` to now (``beat.py:424-426``). So after beat was
    down over ``[a, b)``:

    * ``interval_from="last_run"`` (the schedule file kept): when a run was
      due in ``[a, b)``, the one run sent at the return (the catch-up, at the
      scheduler's first wake-up after ``b``) restarts the count: the next
      runs are due one interval after it, then every interval; with nothing
      due during the outage nothing moves;
    * ``interval_from="restart"`` (the file lost: a new entry's
      ``last_run_at`` is the restart, ``ScheduleEntry.__init__``): every return
      from an ``Outage(kind="down")`` restarts the count, whatever was due.

    Rows due at or after ``b`` on the old grid are replaced by the new grid's
    (expanded by the same rule, anchored at the return, so a local-clock
    interval stays one); rows due during the outage stay and meet the
    catch-up. New rows follow the scenario's release.
    """
    which = [i for i, s in enumerate(ordered) if isinstance(s.policy, Policy) and s.policy.interval_from != "schedule"
             and s.parsed_rule.elapsed]
    if not which or not scenario.outages:
        return frame, s_of, tz_of
    outages = tuple((o.start_us, o.end_us) for o in scenario.outages)
    suspends = np.array([o.kind == "suspend" for o in scenario.outages], dtype=bool)
    rel = get_release(scenario.release)
    for i in which:
        s = ordered[i]
        policy = cast(Policy, s.policy)
        for (a, b), suspend in zip(outages, suspends):
            due = _place(frame)
            mine = (s_of == i) & (due < BIG)
            missed = bool((mine & (due >= a) & (due < b)).any())
            if not (missed if policy.interval_from == "last_run" else not suspend):
                continue
            back = int(wake(np.array([a], dtype=np.int64), scenario.tick_us, outages, policy.recovery_wake, suspends,
                            policy.suspend_wake == "sleep_end")[0])
            if back >= scenario.end_us:
                continue
            keep = ~(mine & (due >= b))
            # An elapsed rule (Every) is a dataclass with its own anchor: the same rule, re-anchored.
            rule = replace(cast(Any, s.parsed_rule), anchor=iso_z(back))
            new, _, _ = expand_indexed([replace(s, rule=rule)], iso_z(back + 1), iso_z(scenario.end_us), rel,
                                       what="simulate", codes=True)
            new = new.with_columns(pl.col(c).cast(pl.String).cast(frame.schema[c]) for c in ("schedule_id", "zone"))
            frame = pl.concat([frame.filter(pl.Series(keep)), new.select(frame.columns)])
            s_of = np.concatenate([s_of[keep], np.full(new.height, i, dtype=s_of.dtype)])
            tz_of = np.concatenate([tz_of[keep], np.zeros(new.height, dtype=tz_of.dtype)])
    return frame, s_of, tz_of


def backfill_rows(scenario: Scenario, ordered: list[Schedule], frame: pl.DataFrame, s_of: np.ndarray,
                  tz_of: np.ndarray, ran: pl.DataFrame | None = None
                  ) -> tuple[pl.DataFrame, np.ndarray, np.ndarray, np.ndarray | None]:
    """Append the runs of each :class:`~calsim.Backfill`; also returns each row's logical instant (µs; the
    frame's ``due_utc`` for a scheduled row), or None when there is no backfill.

    The range is expanded as the schedule's own rule (its revision in force
    at the range's end) over ``[start, end)`` up to ``at``, from the
    schedule's start on, less the occurrences that have a run: ``ran`` (the
    scenario settled without its backfills: ``schedule_id``,
    ``nominal_local``, ``fold`` of the scheduled rows that started before
    ``at`` or are due at or after it) and those an earlier backfill took. The
    runs are due one microsecond apart in their order (oldest first, or
    newest first with ``reverse``), the last at ``at`` (default the
    scenario's start), so one wake-up picks them in that order.
    """
    fills = [ev for ev in scenario.events if isinstance(ev, Backfill)]
    if not fills:
        return frame, s_of, tz_of, None
    rel = get_release(scenario.release)
    logical = [_place(frame)]
    parts, s_parts, tz_parts = [frame], [s_of], [tz_of]
    arrival = scenario.start_us
    key = ["schedule_id", "nominal_local", "fold"]
    taken = pl.DataFrame(schema={"schedule_id": pl.String, "nominal_local": pl.Datetime("us"), "fold": pl.Int8,
                                 "at": pl.Int64})
    if ran is not None:
        taken = pl.concat([taken, ran.select(*key, "at").cast(taken.schema)])
    for ev in fills:
        at = ev.at_us if ev.at_us is not None else scenario.start_us
        revisions = [i for i, s in enumerate(ordered) if s.id == ev.schedule_id]
        i = next((i for i in revisions if (ordered[i].from_utc or -BIG) < ev.end_us), revisions[0])
        s = replace(ordered[i], effective_from=None, effective_to=None)
        # Its range is of logical dates: a data-interval run's is its interval's start, one step before its due
        # (Airflow backfills the intervals that start in [from_date, to_date)).
        step = 1 if isinstance(s.policy, Policy) and s.policy.covers == "data_interval" else 0
        lo = max(ev.start_us + step, _start_instant(s, scenario))
        hi = min(ev.end_us + step, at + 1)
        if hi <= lo:
            continue
        new, _, _ = expand_indexed([s], iso_z(lo), iso_z(hi), rel, what="simulate", codes=True)
        new = new.drop_nulls("due_utc").sort("due_utc", descending=ev.reverse)
        had = taken.filter((pl.col("schedule_id") == s.id) & (pl.col("at") <= at)).drop("at")
        if had.height:
            probe = new.select(pl.col("schedule_id").cast(pl.String), "nominal_local", pl.col("fold").cast(pl.Int8))
            left = probe.with_row_index("_i").join(had, on=key, how="anti")["_i"]
            new = new[left.sort().to_numpy()]
        if not new.height:
            continue
        taken = pl.concat([taken, new.select(pl.col("schedule_id").cast(pl.String), "nominal_local",
                                             pl.col("fold").cast(pl.Int8), pl.lit(at, pl.Int64).alias("at"))])
        # One microsecond apart and the last at `at`: the scheduler's wake-up at or after `at` picks them all,
        # in this order.
        base = max(arrival, at - (new.height - 1))
        logical.append(_place(new))
        due = pl.Series("due_utc", base + np.arange(new.height, dtype=np.int64)).cast(pl.Datetime("us", "UTC"))
        new = new.with_columns(due, *(pl.col(c).cast(pl.String).cast(frame.schema[c]) for c in ("schedule_id", "zone")))
        parts.append(new.select(frame.columns))
        s_parts.append(np.full(new.height, i, dtype=s_of.dtype))
        tz_parts.append(np.zeros(new.height, dtype=tz_of.dtype))
        arrival = base + new.height  # a later backfill of the same instant queues behind this one
    return pl.concat(parts), np.concatenate(s_parts), np.concatenate(tz_parts), np.concatenate(logical)


def _start_instant(s: Schedule, scenario: Scenario) -> int:
    """The schedule's start as an instant (a wall start resolved in its zone, as expansion resolves it)."""
    if s.start_utc is not None:
        return s.start_utc
    if s.start_wall is None:  # an Every with its own anchor
        return s.parsed_rule.anchor_us(0)
    table = get_release(scenario.release).table(s.zone)
    return int(resolve_wall(np.array([s.start_wall]), table, gap="shift", fold="first").due[0])


def _place(frame: pl.DataFrame) -> np.ndarray:
    """Each row's instant (µs); a row without one (gap-skipped, merged, excluded) sorts after every instant."""
    return frame["due_utc"].dt.epoch("us").fill_null(BIG).to_numpy()


def manual_rows(scenario: Scenario, scheds: list[Schedule], run: RunState) -> list[dict]:
    """Trigger events: manual runs at the first wake-up at or after the trigger (they move nothing)."""
    out: list[dict] = []
    if not any(isinstance(ev, Trigger) for ev in scenario.events):
        return out
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
