"""``simulate``: a scheduler running a fleet through a scenario, one ledger row per occurrence.

Run semantics (DESIGN.md §5), in the order the engine applies them:

1. **Eligibility.** ``eligible = due + jitter``; jitter is drawn per
   ``(schedule_id, nominal_local, fold)`` with a stable hash, in ``[0, jitter)``
   and never past the schedule's next occurrence (Temporal's rule).
2. **Pickup.** The scheduler wakes every ``tick`` while up (on multiples of
   ``tick`` from the Unix epoch) and once at the instant an outage ends; an
   occurrence is picked at the first such wake-up at or after ``eligible``.
   ``lateness = start - eligible``.
3. **Pauses.** An occurrence eligible or picked while its schedule is paused
   is ``skipped``/``paused`` (Temporal drops the paused span; no catch-up).
4. **Missed runs.** Lateness beyond ``misfire_grace`` (default one tick)
   makes an occurrence *missed*. The missed occurrences a schedule picks at one
   wake-up form its backlog: those later than ``max_lateness`` are
   ``expired``; if more remain than ``max_missed``, none run (``skipped``);
   otherwise ``catchup`` decides (``all``, ``latest``/``earliest`` with the
   rest ``coalesced``, ``skip``, ``bounded``).
5. **Runs.** Attempts fail with the scenario's probability (seeded), up to
   ``max_attempts`` with exponential backoff; durations are fixed or lognormal
   (seeded). A run occupies its schedule from start to its last attempt's end.
6. **Overlap, budgets, capacity** need order, so rows that can meet one of
   them (a schedule whose runs overlap, an account whose demand exceeds its
   budget in some period, any capacity limit that binds) go through an event
   loop; every other row is settled by the column operations above.

Every occurrence of the horizon gets exactly one terminal row; the scheduler
is followed past the horizon's end for occurrences it picks late (an outage
running past the end), and a run still waiting for budget at the end is
``skipped``/``budget``.
"""

from __future__ import annotations

import heapq
from dataclasses import replace

import numpy as np
import polars as pl

from ..expansion import expand_indexed
from ..schedule import Schedule
from ..times import US
from ..tzdb import release as get_release
from .ledger import LEDGER_STATES, LEDGER_REASONS, Ledger, ledger_frame
from .policy import LogNormal, Policy
from .randomness import DURATION, FAILURE, JITTER, id_key, uniform
from .scenario import Pause, Resume, Revise, Scenario, Trigger, TzUpgrade

__all__ = ["simulate"]

S = {name: i for i, name in enumerate(LEDGER_STATES)}
R = {name: i for i, name in enumerate(LEDGER_REASONS)}
NONE = -1
_CATCHUP = {"all": 0, "latest": 1, "earliest": 2, "skip": 3, "bounded": 4}
_OVERLAP = {"allow": 0, "skip": 1, "buffer_one": 2, "buffer_all": 3, "cancel_other": 4}
_BIG = np.iinfo(np.int64).max // 4
# A queued run gains one priority level per hour it waits for capacity, so
# that low-priority work is delayed, never starved (the DESIGN's "ageing").
AGEING_US = 3600 * US


def simulate(scenario: Scenario, engine: str = "local", client: object = None, output: object = None,
             progress: bool | None = None) -> Ledger:
    """Simulate ``scenario`` and return its :class:`~calsim.Ledger`.

    Parameters
    ----------
    scenario
        The fleet and its world (:class:`~calsim.Scenario`).
    engine
        ``"local"`` (this process). Distributed engines arrive with their issue.
    progress
        Show a tqdm progress bar: None (default) shows it only when
        interactive (a terminal or a notebook); False never.

    Examples
    --------
    >>> import calsim
    >>> s = calsim.Schedule("daily", "Asia/Shanghai", "2026-10-18T09:00", "FREQ=DAILY",
    ...                     policy=calsim.Policy(catchup="latest", max_lateness="2d"))
    >>> sc = calsim.Scenario("incident", [s], "2026-10-20T00:00Z", "2026-10-25T00:00Z", tick="10min",
    ...                      outages=[calsim.Outage("2026-10-20T01:01Z", "2026-10-24T12:00Z")])
    >>> calsim.simulate(sc).frame.select("nominal_local", "state", "reason").to_dicts()[1:4]  # doctest: +NORMALIZE_WHITESPACE
    [{'nominal_local': datetime.datetime(2026, 10, 21, 9, 0), 'state': 'expired', 'reason': 'max_lateness'},
     {'nominal_local': datetime.datetime(2026, 10, 22, 9, 0), 'state': 'expired', 'reason': 'max_lateness'},
     {'nominal_local': datetime.datetime(2026, 10, 23, 9, 0), 'state': 'coalesced', 'reason': 'catchup'}]
    """
    if not isinstance(scenario, Scenario):
        from ..errors import InputError

        raise InputError(f"scenario: expected a calsim.Scenario, got {type(scenario).__name__}")
    if engine != "local":
        from ..errors import InputError

        raise InputError(f"engine: unknown engine {engine!r} (allowed: 'local')")
    bar = _progress(progress, total=6, desc=f"simulate {scenario.name}")
    frame, scheds, s_of, tz_of, boundaries = _occurrences(scenario)
    bar.update(1)
    run = _Run(scenario, scheds, frame, s_of, tz_of, boundaries)
    run.eligibility()
    bar.update(1)
    run.pickup()
    run.catch_up()
    bar.update(1)
    run.attempts()
    run.settle()
    bar.update(1)
    manual = _manual_rows(scenario, scheds, run)
    bar.update(1)
    accounts = {s.id: s.policy.account for s in scheds if isinstance(s.policy, Policy) and s.policy.account}
    ledger = Ledger(scenario.name, ledger_frame(scenario.name, run, manual), accounts, scenario)
    bar.update(1)
    bar.close()
    return ledger


class _NoBar:
    def update(self, n: int) -> None:
        pass

    def close(self) -> None:
        pass


def _progress(progress: bool | None, total: int, desc: str):
    if progress is False:
        return _NoBar()
    import sys

    interactive = bool(getattr(sys.stderr, "isatty", lambda: False)()) or "ipykernel" in sys.modules
    if progress is None and not interactive:
        return _NoBar()
    from tqdm.auto import tqdm

    return tqdm(total=total, desc=desc, leave=False)


# ---------------------------------------------------------------------------
# Occurrences: revisions, tz upgrades, expansion
# ---------------------------------------------------------------------------


def _revised(scenario: Scenario) -> tuple[list[Schedule], list[tuple[int, str, int]]]:
    """Schedules with Revise events applied; returns also (at, id, old revision) boundaries."""
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
            scheds[i] = replace(scheds[i], effective_to=_iso(ev.at_us))
        revision = new.revision if new.revision > max(s.revision for s in scheds if s.id == new.id) else \
            max(s.revision for s in scheds if s.id == new.id) + 1
        scheds.append(replace(new, revision=revision, effective_from=_iso(ev.at_us)))
    return scheds, boundaries


def _iso(us: int) -> str:
    return str(np.datetime64(int(us), "us")) + "Z"


def _occurrences(scenario: Scenario):
    scheds, boundaries = _revised(scenario)
    rel = get_release(scenario.release)
    start, end = _iso(scenario.start_us), _iso(scenario.end_us)
    frame, ordered, s_of = expand_indexed(scheds, start, end, rel)
    tz_of = np.zeros(frame.height, dtype=np.int8)
    for ev in scenario.events:
        if not isinstance(ev, TzUpgrade):
            continue
        # Before `at` (and, with mode="keep", for what was materialised up to
        # at + horizon) the old instants stand; later ones follow the new release.
        new_rel = get_release(ev.to)
        cut = ev.at_us + (ev.horizon_us if ev.mode == "keep" else 0)
        new_frame, ordered_new, s_new = expand_indexed(scheds, start, end, new_rel)
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
    return frame["due_utc"].dt.epoch("us").fill_null(_BIG).to_numpy()


# ---------------------------------------------------------------------------
# The run: columns of every occurrence, settled step by step
# ---------------------------------------------------------------------------


class _Run:
    def __init__(self, scenario: Scenario, scheds: list[Schedule], frame: pl.DataFrame, s_of: np.ndarray,
                 tz_of: np.ndarray, boundaries: list[tuple[int, str, int]]):
        self.sc, self.scheds, self.frame = scenario, scheds, frame
        self.boundaries = boundaries
        n = frame.height
        self.n = n
        self.s = s_of.astype(np.int64)
        self.tz_of = tz_of
        self.nominal = frame["nominal_local"].dt.epoch("us").to_numpy()
        self.fold = frame["fold"].to_numpy()
        due = frame["due_utc"]
        self.has_due = due.is_not_null().to_numpy()
        self.due = due.dt.epoch("us").fill_null(0).to_numpy()
        self.state = np.full(n, -1, dtype=np.int8)
        self.reason = np.full(n, NONE, dtype=np.int8)
        self.eligible = self.due.copy()
        self.pick = np.zeros(n, dtype=np.int64)
        self.start = np.zeros(n, dtype=np.int64)
        self.finish = np.zeros(n, dtype=np.int64)
        self.started = np.zeros(n, dtype=bool)
        self.attempts_n = np.zeros(n, dtype=np.int32)
        self.cost = np.zeros(n, dtype=np.float64)
        self.budget_wait = np.zeros(n, dtype=np.float64)
        pol = [s.policy if isinstance(s.policy, Policy) else Policy() for s in scheds]
        self.pol = pol
        tick = scenario.tick_us
        arr = lambda f, dt=np.int64: np.array([f(p) for p in pol], dtype=dt)  # noqa: E731
        self.p_jitter = arr(lambda p: p.jitter_us)
        self.p_grace = arr(lambda p: tick if p.misfire_grace_us is None else p.misfire_grace_us)
        self.p_maxlate = arr(lambda p: _BIG if p.max_lateness_us is None else p.max_lateness_us)
        self.p_catchup = arr(lambda p: _CATCHUP[p.catchup], np.int8)
        self.p_limit = arr(lambda p: p.limit or 0)
        self.p_maxmissed = arr(lambda p: _BIG if p.max_missed is None else p.max_missed)
        self.p_overlap = arr(lambda p: _OVERLAP[p.overlap], np.int8)
        self.p_cost = arr(lambda p: float(p.cost), np.float64)
        self.p_dur = arr(lambda p: p.duration_us)
        self.p_sigma = arr(lambda p: p.duration.sigma if isinstance(p.duration, LogNormal) else 0.0, np.float64)
        self.p_priority = arr(lambda p: p.priority)
        budgets = {b.account: i for i, b in enumerate(scenario.budgets)}
        self.p_account = arr(lambda p: budgets.get(p.account, -1) if p.account else -1)
        self.p_onbudget_wait = arr(lambda p: p.on_budget == "wait", bool)
        self.key = np.array([id_key(s.id) for s in scheds], dtype=np.uint64)
        self.rel = get_release(scenario.release)
        self.budget_tables = [self.rel.table(b.zone) for b in scenario.budgets]

        # Rows without an instant are settled now, with the reason their notes give.
        no_run = np.flatnonzero(~self.has_due)
        if len(no_run):
            notes = frame["notes"].gather(pl.Series(no_run))
            merged = notes.list.eval(pl.element().str.starts_with("merged_into:")).list.any().to_numpy()
            excluded = notes.list.eval(pl.element().str.starts_with("excluded:")).list.any().to_numpy()
            reason = np.where(merged, R["merged"], np.where(excluded, R["calendar"], R["dst_gap"]))
            self.state[no_run] = S["skipped"]
            self.reason[no_run] = reason

    # -- 1. eligibility ------------------------------------------------------
    def eligibility(self) -> None:
        idx = np.flatnonzero(self.has_due & (self.p_jitter[self.s] > 0))
        if not len(idx):
            return
        jit = self.p_jitter[self.s[idx]]
        u = uniform(self.key[self.s[idx]], self.nominal[idx], self.fold[idx], self.sc.seed, JITTER)
        draw = np.floor(u * jit).astype(np.int64)
        # Never past the schedule's next occurrence (Temporal caps jitter there).
        runs = np.flatnonzero(self.has_due)
        order = runs[np.lexsort((self.due[runs], self.s[runs]))]
        nxt = np.full(self.n, _BIG, dtype=np.int64)
        same = self.s[order][1:] == self.s[order][:-1]
        nxt[order[:-1][same]] = self.due[order[1:][same]]
        cap = np.maximum(nxt[idx] - self.due[idx] - 1, 0)
        self.eligible[idx] = self.due[idx] + np.minimum(draw, cap)

    # -- 2/3. pickup and pauses ----------------------------------------------
    def pickup(self) -> None:
        tick = self.sc.tick_us
        idx = np.flatnonzero(self.has_due)
        e = self.eligible[idx]
        pick = -((-e) // tick) * tick  # ceil to a tick
        outs = self.sc.outages
        if outs:
            starts = np.array([o.start_us for o in outs], dtype=np.int64)
            ends = np.array([o.end_us for o in outs], dtype=np.int64)
            # Down when eligible, or at the tick it would be picked: picked at the come-back instant.
            for probe in (e, pick):
                j = np.searchsorted(starts, probe, side="right") - 1
                inside = (j >= 0) & (probe < ends[np.maximum(j, 0)])
                pick = np.where(inside, ends[np.maximum(j, 0)], pick)
            # An outage end inside the next outage (adjacent spans): wake at that one's end.
            for _ in range(len(outs)):
                j = np.searchsorted(starts, pick, side="right") - 1
                inside = (j >= 0) & (pick < ends[np.maximum(j, 0)])
                if not inside.any():
                    break
                pick = np.where(inside, ends[np.maximum(j, 0)], pick)
        self.pick[idx] = pick
        self._pauses()
        self._revisions()

    def _revisions(self) -> None:
        """Occurrences of a replaced revision not yet started at its boundary: ``cancelled``/``revision``."""
        for at, sid, rev in self.boundaries:
            member = np.array([s.id == sid and s.revision == rev for s in self.scheds], dtype=bool)
            rows = np.flatnonzero(self.has_due & (self.state < 0) & member[self.s] & (self.pick >= at))
            self.state[rows] = S["cancelled"]
            self.reason[rows] = R["revision"]

    def _pauses(self) -> None:
        spans: dict[str | None, list[list[int]]] = {}
        for ev in self.sc.events:
            if isinstance(ev, Pause):
                spans.setdefault(ev.schedule_id, []).append([ev.at_us, _BIG])
            elif isinstance(ev, Resume):
                for key in ([ev.schedule_id] if ev.schedule_id is not None else list(spans)):
                    for span in spans.get(key, []):
                        if span[1] == _BIG and span[0] <= ev.at_us:
                            span[1] = ev.at_us
        if not spans:
            return
        ids = np.array([s.id for s in self.scheds], dtype=object)
        for sid, items in spans.items():
            member = np.ones(len(self.scheds), bool) if sid is None else (ids == sid)
            rows = np.flatnonzero(self.has_due & (self.state < 0) & member[self.s])
            for a, b in items:
                hit = rows[((self.eligible[rows] >= a) & (self.eligible[rows] < b))
                           | ((self.pick[rows] >= a) & (self.pick[rows] < b))]
                self.state[hit] = S["skipped"]
                self.reason[hit] = R["paused"]

    # -- 4. missed runs --------------------------------------------------------
    def catch_up(self) -> None:
        idx = np.flatnonzero(self.has_due & (self.state < 0))
        late = self.pick[idx] - self.eligible[idx]
        s = self.s[idx]
        missed = late > self.p_grace[s]
        m = idx[missed]
        if not len(m):
            return
        expired = (self.pick[m] - self.eligible[m]) > self.p_maxlate[self.s[m]]
        self.state[m[expired]] = S["expired"]
        self.reason[m[expired]] = R["max_lateness"]
        m = m[~expired]
        if not len(m):
            return
        # Backlogs: the missed rows one schedule picks at one wake-up, oldest first.
        order = m[np.lexsort((self.fold[m], self.nominal[m], self.pick[m], self.s[m]))]
        s_o, p_o = self.s[order], self.pick[order]
        new_group = np.concatenate([[True], (s_o[1:] != s_o[:-1]) | (p_o[1:] != p_o[:-1])])
        gid = np.cumsum(new_group) - 1
        size = np.bincount(gid)
        first = np.flatnonzero(new_group)
        pos = np.arange(len(order)) - first[gid]
        from_end = size[gid] - 1 - pos
        mode = self.p_catchup[s_o]
        runs = np.zeros(len(order), dtype=bool)
        runs |= mode == _CATCHUP["all"]
        runs |= (mode == _CATCHUP["latest"]) & (from_end == 0)
        runs |= (mode == _CATCHUP["earliest"]) & (pos == 0)
        runs |= (mode == _CATCHUP["bounded"]) & (from_end < self.p_limit[s_o])
        too_many = size[gid] > self.p_maxmissed[s_o]
        runs &= ~too_many
        coalesce = ~runs & np.isin(mode, [_CATCHUP["latest"], _CATCHUP["earliest"]]) & ~too_many
        skip = ~runs & ~coalesce
        self.state[order[coalesce]] = S["coalesced"]
        self.reason[order[coalesce]] = R["catchup"]
        self.state[order[skip]] = S["skipped"]
        self.reason[order[skip]] = R["catchup"]

    # -- 5. attempts and durations ---------------------------------------------
    def attempts(self) -> None:
        idx = np.flatnonzero(self.has_due & (self.state < 0))
        self.to_run = idx
        s = self.s[idx]
        f = self.sc.failures
        max_att = 1 if f is None else f.max_attempts
        p_fail = 0.0 if f is None else f.probability
        occupancy = np.zeros(len(idx), dtype=np.int64)
        attempts = np.zeros(len(idx), dtype=np.int32)
        succeeded = np.zeros(len(idx), dtype=bool)
        alive = np.ones(len(idx), dtype=bool)
        for k in range(max_att):
            a = np.flatnonzero(alive)
            if not len(a):
                break
            dur = self.p_dur[s[a]].astype(np.float64)
            sig = self.p_sigma[s[a]]
            if (sig > 0).any():
                u = uniform(self.key[s[a]], self.nominal[idx[a]], self.fold[idx[a]], self.sc.seed, DURATION, k)
                z = _norm_ppf(np.clip(u, 1e-12, 1 - 1e-12))
                dur = np.where(sig > 0, dur * np.exp(sig * z), dur)
            occupancy[a] += dur.astype(np.int64)
            attempts[a] += 1
            if p_fail > 0:
                u = uniform(self.key[s[a]], self.nominal[idx[a]], self.fold[idx[a]], self.sc.seed, FAILURE, k)
                ok = u >= p_fail
            else:
                ok = np.ones(len(a), dtype=bool)
            succeeded[a[ok]] = True
            alive[a[ok]] = False
            if k + 1 < max_att and f is not None:
                retry = a[~ok]
                occupancy[retry] += f.backoff_us * (2 ** k)
        self.occupancy = occupancy
        self.attempts_n[idx] = attempts
        self.success = succeeded

    # -- 6. overlap, budgets, capacity, and the rest by columns ----------------
    def settle(self) -> None:
        idx = self.to_run
        start = self.pick[idx]
        finish = start + self.occupancy
        s = self.s[idx]
        # Overlap: a start before an earlier run of the same schedule finished.
        # Rows chained by such starts form a cluster; only clusters need order
        # for skip and cancel_other (they never delay a start), while buffering
        # delays starts, so a buffering schedule needs order from its first
        # cluster on.
        # Rows come in instant order, and within a schedule eligibility (jitter
        # is capped before the next occurrence) and so pickup keep that order:
        # a stable sort by schedule (a radix sort on 16-bit keys) orders them
        # by (schedule, start).
        key = s.astype(np.int16 if len(self.scheds) < 2**15 else np.int32)
        order = np.argsort(key, kind="stable")
        s_o, st_o, fi_o = s[order], start[order], finish[order]
        busy = _running_max_by_group(fi_o, s_o)
        mode_o = self.p_overlap[s_o]
        conflict = (st_o < busy) & (mode_o != _OVERLAP["allow"])
        by_overlap = np.zeros(len(idx), dtype=bool)
        if conflict.any():
            cluster = np.cumsum(~conflict)
            in_cluster = np.bincount(cluster)[cluster] > 1
            buffering = (mode_o == _OVERLAP["buffer_one"]) | (mode_o == _OVERLAP["buffer_all"])
            first = np.full(len(self.scheds), _BIG, dtype=np.int64)
            hit = in_cluster & buffering
            np.minimum.at(first, s_o[hit], st_o[hit])
            need = in_cluster | (buffering & (st_o >= first[s_o]))
            by_overlap[order[need]] = True
        # Budgets: from an account's first period whose demand exceeds its limit,
        # its rows need order (a held run spills into the next period).
        acct = self.p_account[s]
        by_budget = np.zeros(len(idx), dtype=bool)
        if self.sc.budgets:
            paying = np.flatnonzero(acct >= 0)
            period = self._period_index(acct[paying], start[paying])
            p0 = int(period.min()) if len(paying) else 0
            span = int(period.max()) - p0 + 1 if len(paying) else 1
            cell = acct[paying] * span + (period - p0)
            demand = np.bincount(cell, weights=self.p_cost[s[paying]], minlength=len(self.sc.budgets) * span)
            demand = demand.reshape(len(self.sc.budgets), span)
            need = np.zeros_like(demand, dtype=bool)
            for a, b in enumerate(self.sc.budgets):
                if not (demand[a] > b.limit + 1e-9).any():
                    continue
                # A period needs order when its demand, plus what earlier
                # periods held over (runs waiting for budget), exceeds the
                # limit; the carry is an upper bound (catch-up can only
                # shrink a backlog), so no period that needs order is missed.
                carry = 0.0
                for k, d in enumerate(demand[a].tolist()):
                    need[a, k] = carry > 0 or d > b.limit + 1e-9
                    carry = max(0.0, carry + d - b.limit)
            by_budget[paying[need.ravel()[cell]]] = True
        sequential = by_overlap | by_budget
        if self.sc.capacity is not None and _max_concurrency(start, finish) > self.sc.capacity:
            sequential[:] = True
        fast = idx[~sequential]
        self.start[fast] = start[~sequential]
        self.finish[fast] = finish[~sequential]
        self.started[fast] = True
        self._terminal(fast, self.success[~sequential], self.occupancy[~sequential])
        if sequential.any():
            self._event_loop(idx[sequential], self.occupancy[sequential], self.success[sequential])

    def _terminal(self, rows: np.ndarray, success: np.ndarray, occupancy: np.ndarray) -> None:
        self.state[rows] = np.where(success, S["done"], S["failed"])
        self.reason[rows] = np.where(success, NONE, R["retries_exhausted"])
        self.cost[rows] = self.p_cost[self.s[rows]] * self.attempts_n[rows]

    def _period_index(self, acct: np.ndarray, t: np.ndarray) -> np.ndarray:
        """Index of each instant's local calendar period of its account's budget (day/week/month).

        Budgets sharing a zone and a period kind are computed in one pass.
        """
        out = np.zeros(len(t), dtype=np.int64)
        kinds: dict[tuple[str, str], list[int]] = {}
        for a, b in enumerate(self.sc.budgets):
            kinds.setdefault((b.zone, b.period), []).append(a)
        for (zone, period), members in kinds.items():
            member = np.zeros(len(self.sc.budgets) + 1, dtype=bool)
            member[np.array(members) + 1] = True
            rows = np.flatnonzero(member[acct + 1])
            if not len(rows):
                continue
            table = self.budget_tables[members[0]]
            local = t[rows] + table.offset_at_utc(t[rows] // US).astype(np.int64) * US
            day = local // (86400 * US)
            if period == "day":
                out[rows] = day
            elif period == "week":  # ISO weeks, Monday first; 1970-01-01 was a Thursday
                out[rows] = (day + 3) // 7
            else:
                out[rows] = local.astype("datetime64[us]").astype("datetime64[M]").astype(np.int64)
        return out

    def _period_start(self, b, period: int) -> int:
        """UTC instant (µs) at which local period ``period`` of budget ``b`` begins (its local midnight)."""
        from ..resolution import resolve_wall

        if b.period == "day":
            wall = period * 86400 * US
        elif b.period == "week":
            wall = (period * 7 - 3) * 86400 * US
        else:
            wall = np.datetime64(int(period), "M").astype("datetime64[us]").astype(np.int64)
        table = self.budget_tables[self.sc.budgets.index(b)]
        # A midnight that does not exist (a DST jump at 00:00) opens at the jump.
        r = resolve_wall(np.array([wall], dtype=np.int64), table, gap="next_valid", fold="first")
        return int(r.due[0])

    def _period_fn(self, a: int):
        """A scalar ``t -> period index`` for budget ``a`` (bisect on its zone's transitions)."""
        import bisect
        import datetime as dt

        b, table = self.sc.budgets[a], self.budget_tables[a]
        utc, offs = table.utc.tolist(), table.offsets.tolist()

        def period(t: int) -> int:
            sec = t // US
            local = sec + offs[bisect.bisect_right(utc, sec)]
            day = local // 86400
            if b.period == "day":
                return day
            if b.period == "week":
                return (day + 3) // 7
            d = dt.date(1970, 1, 1) + dt.timedelta(days=day)
            return (d.year - 1970) * 12 + d.month - 1

        return period

    def _event_loop(self, rows: np.ndarray, occupancy: np.ndarray, success: np.ndarray) -> None:
        """Order-dependent rules, one event at a time, for the rows that need them."""
        sc = self.sc
        occ = dict(zip(rows.tolist(), occupancy.tolist()))
        ok = dict(zip(rows.tolist(), success.tolist()))
        budgets = sc.budgets
        spent: dict[tuple[int, int], float] = {}
        running: dict[int, tuple[int, int]] = {}  # schedule -> (row, finish)
        buffers: dict[int, list[int]] = {}
        waiting: dict[int, list[tuple[int, int]]] = {}  # account -> [(row, since)]
        cap_queue: list[tuple[int, int, int, int]] = []  # (priority, eligible, queued_at, row)
        active = 0
        capacity = sc.capacity
        events: list[tuple[int, int, int, int]] = []  # (time, order, seq, payload)
        seq = 0
        order_rows = rows[np.lexsort((self.nominal[rows], self.s[rows], self.pick[rows]))]
        for r in order_rows.tolist():
            events.append((int(self.pick[r]), 2, seq, r))
            seq += 1
        heapq.heapify(events)
        opened: set[tuple[int, int]] = set()
        end = sc.end_us

        period_fns = [self._period_fn(a) for a in range(len(budgets))]

        def period_of(a: int, t: int) -> int:
            return period_fns[a](t)

        # No state is needed from the rows settled by columns: a run that
        # overlaps an ordered one is in its overlap cluster (so ordered too),
        # and a budget period is either ordered for its whole account or has
        # room for all of its demand.

        outages = [(o.start_us, o.end_us) for o in sc.outages]

        def up(t: int) -> int:
            """The first instant at or after t at which the scheduler is up."""
            for a, b in outages:
                if a <= t < b:
                    t = b
            return t

        def settle_run(r: int, t: int) -> None:
            nonlocal active, seq
            s = int(self.s[r])
            self.start[r] = t
            self.finish[r] = t + occ[r]
            self.started[r] = True
            self.state[r] = S["done"] if ok[r] else S["failed"]
            self.reason[r] = NONE if ok[r] else R["retries_exhausted"]
            self.cost[r] = self.p_cost[s] * self.attempts_n[r]
            running[s] = (r, t + occ[r])
            active += 1
            heapq.heappush(events, (t + occ[r], 0, seq, r))
            seq += 1

        def try_start(r: int, t: int, from_queue: bool = False) -> None:
            nonlocal seq
            t = up(t)  # a buffered or budget-held run waits for the scheduler to be up
            s = int(self.s[r])
            a = int(self.p_account[s])
            if capacity is not None and active >= capacity and not from_queue:
                prio = int(self.p_priority[s])
                cap_queue.append((prio, int(self.eligible[r]), t, r))
                seq += 1
                return
            if a >= 0:
                b = budgets[a]
                p = period_of(a, t)
                cost = float(self.p_cost[s]) * int(self.attempts_n[r])
                if spent.get((a, p), 0.0) + cost > b.limit + 1e-9:
                    if not self.p_onbudget_wait[s]:
                        self.state[r] = S["skipped"]
                        self.reason[r] = R["budget"]
                        return
                    waiting.setdefault(a, []).append((r, t))
                    if (a, p + 1) not in opened:
                        opened.add((a, p + 1))
                        heapq.heappush(events, (self._period_start(b, p + 1), 1, seq, a))
                        seq += 1
                    return
                spent[(a, p)] = spent.get((a, p), 0.0) + cost
            settle_run(r, t)

        freed: set[int] = set()  # cancelled runs: their slot is free before their finish event

        def arrive(r: int, t: int) -> None:
            nonlocal active
            s = int(self.s[r])
            mode = int(self.p_overlap[s])
            cur = running.get(s)
            if cur is not None and cur[1] > t and mode != _OVERLAP["allow"]:
                if mode == _OVERLAP["skip"]:
                    self.state[r], self.reason[r] = S["skipped"], R["overlap"]
                    return
                if mode == _OVERLAP["buffer_one"]:
                    if buffers.get(s):
                        self.state[r], self.reason[r] = S["skipped"], R["overlap"]
                        return
                    buffers.setdefault(s, []).append(r)
                    return
                if mode == _OVERLAP["buffer_all"]:
                    buffers.setdefault(s, []).append(r)
                    return
                # cancel_other: the running one stops now, keeping its cost (a sent call is not refunded).
                old = cur[0]
                self.state[old], self.reason[old] = S["cancelled"], R["superseded"]
                self.finish[old] = t
                running.pop(s, None)
                freed.add(old)
                active -= 1
            try_start(r, t)

        while events:
            t, kind, _, payload = heapq.heappop(events)
            if kind == 0:  # a run finished
                r = payload
                s = int(self.s[r])
                if r in freed:
                    continue
                active -= 1
                if running.get(s, (None,))[0] == r:
                    running.pop(s, None)
                if buffers.get(s) and s not in running:
                    nxt = buffers[s].pop(0)
                    try_start(nxt, t)
                while capacity is not None and cap_queue and active < capacity:
                    # Highest priority first, ageing one level per AGEING_US waited so that
                    # low priority never starves; ties by eligibility (oldest first).
                    best = max(range(len(cap_queue)), key=lambda i: (
                        cap_queue[i][0] + (t - cap_queue[i][2]) // AGEING_US, -cap_queue[i][1], -i))
                    _, _, _, q = cap_queue.pop(best)
                    try_start(q, t, from_queue=True)
            elif kind == 1:  # a budget period opens
                a = payload
                if t >= end:
                    continue
                held = waiting.pop(a, [])
                by_sched: dict[int, list[tuple[int, int]]] = {}
                for r, since in held:
                    by_sched.setdefault(int(self.s[r]), []).append((r, since))
                for s, items in by_sched.items():
                    items.sort(key=lambda x: (self.nominal[x[0]], self.fold[x[0]]))
                    live = []
                    for r, since in items:
                        self.budget_wait[r] += (t - since) / US
                        if t - self.eligible[r] > self.p_maxlate[s]:
                            self.state[r], self.reason[r] = S["expired"], R["max_lateness"]
                        else:
                            live.append(r)
                    mode = int(self.p_catchup[s])
                    if len(live) > 1:  # a backlog again: the catch-up mode decides
                        keep = {0: live, 1: live[-1:], 2: live[:1], 3: [], 4: live[-int(self.p_limit[s]):]}[mode]
                        for r in live:
                            if r not in keep:
                                coalesced = mode in (1, 2)
                                self.state[r] = S["coalesced"] if coalesced else S["skipped"]
                                self.reason[r] = R["catchup"]
                        live = keep
                    for r in live:
                        arrive(r, t)
            else:  # kind 2: an occurrence is picked
                arrive(payload, t)
        # Whatever still waits for budget at the horizon's end never got it.
        for a, held in waiting.items():
            for r, since in held:
                self.state[r], self.reason[r] = S["skipped"], R["budget"]
                self.budget_wait[r] += max(0, end - since) / US
        for s, buf in buffers.items():
            for r in buf:
                if self.state[r] < 0:
                    self.state[r], self.reason[r] = S["skipped"], R["overlap"]
        for _, _, _, r in cap_queue:
            if self.state[r] < 0:
                self.state[r], self.reason[r] = S["skipped"], R["overlap"]


def _running_max_by_group(finish: np.ndarray, group: np.ndarray) -> np.ndarray:
    """For rows sorted by (group, start): the latest finish among earlier rows of the same group.

    Each group is lifted above the previous one (``group * span``) so that one
    running maximum over the whole column never leaks across groups.
    """
    out = np.full(len(finish), -_BIG, dtype=np.int64)
    if len(finish) < 2:
        return out
    lo = int(finish.min())
    span = int(finish.max()) - lo + 1
    if int(group.max()) * span >= 2**62:  # an absurd horizon: no lift fits, go group by group
        starts = np.flatnonzero(np.concatenate([[True], group[1:] != group[:-1]]))
        for a, b in zip(starts, np.append(starts[1:], len(finish))):
            run = np.maximum.accumulate(finish[a:b])
            out[a + 1:b] = run[:-1]
        return out
    lifted = finish - lo + group.astype(np.int64) * span
    run = np.maximum.accumulate(lifted)
    same = group[1:] == group[:-1]
    out[1:] = np.where(same, run[:-1] - group[1:].astype(np.int64) * span + lo, -_BIG)
    return out


def _max_concurrency(start: np.ndarray, finish: np.ndarray) -> int:
    if not len(start):
        return 0
    t = np.concatenate([start, finish])
    d = np.concatenate([np.ones(len(start), np.int64), -np.ones(len(finish), np.int64)])
    order = np.lexsort((d, t))  # a finish at t frees its slot before a start at t
    return int(np.cumsum(d[order]).max())


def _norm_ppf(u: np.ndarray) -> np.ndarray:
    """Inverse standard normal CDF (Acklam's rational approximation, |error| < 1.2e-9), vectorised."""
    a = [-3.969683028665376e01, 2.209460984245205e02, -2.759285104469687e02, 1.383577518672690e02,
         -3.066479806614716e01, 2.506628277459239e00]
    b = [-5.447609879822406e01, 1.615858368580409e02, -1.556989798598866e02, 6.680131188771972e01,
         -1.328068155288572e01]
    c = [-7.784894002430293e-03, -3.223964580411365e-01, -2.400758277161838e00, -2.549732539343734e00,
         4.374664141464968e00, 2.938163982698783e00]
    d = [7.784695709041462e-03, 3.224671290700398e-01, 2.445134137142996e00, 3.754408661907416e00]
    lo, hi = 0.02425, 1 - 0.02425
    q = np.where(u < lo, np.sqrt(-2 * np.log(np.maximum(u, 1e-300))), np.sqrt(-2 * np.log(np.maximum(1 - u, 1e-300))))
    tail = (((((c[0] * q + c[1]) * q + c[2]) * q + c[3]) * q + c[4]) * q + c[5]) / \
        ((((d[0] * q + d[1]) * q + d[2]) * q + d[3]) * q + 1)
    r = (u - 0.5) ** 2
    mid = (((((a[0] * r + a[1]) * r + a[2]) * r + a[3]) * r + a[4]) * r + a[5]) * (u - 0.5) / \
        (((((b[0] * r + b[1]) * r + b[2]) * r + b[3]) * r + b[4]) * r + 1)
    return np.where(u < lo, tail, np.where(u > hi, -tail, mid))


def _manual_rows(scenario: Scenario, scheds: list[Schedule], run: _Run) -> list[dict]:
    """Trigger events: manual runs at the first wake-up at or after the trigger (they move nothing)."""
    out = []
    by_id = {}
    for i, s in enumerate(scheds):
        by_id.setdefault(s.id, i)
    tick = scenario.tick_us
    for ev in scenario.events:
        if not isinstance(ev, Trigger):
            continue
        i = by_id[ev.schedule_id]
        s = scheds[i]
        p = run.pol[i]
        t = -((-ev.at_us) // tick) * tick
        for o in scenario.outages:
            if o.start_us <= t < o.end_us or o.start_us <= ev.at_us < o.end_us:
                t = o.end_us
        # Its identity is the trigger's local wall time (the ledger key needs a nominal time).
        off = int(run.rel.table(s.zone).offset_at_utc(np.array([ev.at_us // US]))[0])
        out.append({"i": i, "schedule": s, "at": ev.at_us, "wall": ev.at_us + off * US, "offset": off,
                    "start": t, "finish": t + p.duration_us, "cost": float(p.cost)})
    return out
