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
   is ``skipped``/``paused`` (Temporal drops the paused span; no catch-up),
   and so is a run held (buffered, waiting for budget or capacity) until a
   moment its schedule is paused: a paused schedule starts nothing.
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
   loop; every other row is settled by the column operations above. Accounts
   of the common kind (fixed durations, one cost, overlap ``allow``/``skip``,
   no pauses, no capacity limit) are instead settled one budget period at a
   time in columns, with the event loop's outcome (``_budget_periods``). A run
   leaving the capacity queue meets its schedule's overlap mode again at its
   actual start (the run it queued behind may be over, or a sibling that
   left the queue first may be going).

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
# Rows per chunk of the streamed per-schedule steps (8 MB per int64 column: cache-sized).
CHUNK_ROWS = 1 << 20
CHUNK_ROWS_PER_SCHEDULE = 8  # ... and at least this many per schedule (per-chunk work on per-schedule arrays)


def simulate(scenario: Scenario, engine: str = "local", client: object = None, output: object = None,
             progress: bool | None = None) -> Ledger:
    """Simulate ``scenario`` and return its :class:`~calsim.Ledger`.

    Parameters
    ----------
    scenario
        The fleet and its world (:class:`~calsim.Scenario`).
    engine
        ``"local"`` (this process) or ``"dask"``: partitions simulated on the
        workers of ``client`` (default: the current Dask client), written as
        Parquet under ``output``, returned as a
        :class:`calsim.distributed.LedgerDataset` (see :mod:`calsim.distributed`).
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
    if engine == "dask":
        # Partitions run on Dask workers and go to Parquet under ``output``;
        # the result is a calsim.distributed.LedgerDataset (not held in memory).
        from ..distributed import simulate as simulate_on_dask

        return simulate_on_dask(scenario, client=client, output=output)  # type: ignore[return-value]
    if engine != "local":
        from ..errors import InputError

        raise InputError(f"engine: unknown engine {engine!r} (allowed: 'local' or 'dask')")
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
    """The ledger's columns, one numpy array per column, settled step by step.

    Memory matters more than anything else at fleet scale (10k schedules is
    ~11M rows, where every int64 column is ~87 MB and numpy time is mostly
    page faults and cache misses), so the arrays are kept few and narrow:
    columns the frame already holds are read-only views of it, ``eligible``
    is ``due`` itself until jitter moves it, ``start`` is ``pick`` (a run
    starts at its pickup unless the event loop moves it), ``finish`` first
    holds each run's occupancy, and cost is derived when the frame is built.
    Rows to run are a boolean mask, not an index array.
    """

    def __init__(self, scenario: Scenario, scheds: list[Schedule], frame: pl.DataFrame, s_of: np.ndarray,
                 tz_of: np.ndarray, boundaries: list[tuple[int, str, int]]):
        self.sc, self.scheds, self.frame = scenario, scheds, frame
        self.boundaries = boundaries
        n = frame.height
        self.n = n
        # The narrowest schedule index: gathers of per-schedule tables read
        # less, and a stable sort on a 16-bit key is a radix sort.
        self.s = s_of.astype(np.int16 if len(scheds) < 2**15 else np.int32, copy=False)
        self.tz_of = tz_of
        self.nominal = _us(frame["nominal_local"])
        self.fold = frame["fold"].to_numpy()
        due = frame["due_utc"]
        self.has_due = due.is_not_null().to_numpy()
        self.due = _us(due)
        self.state = np.full(n, -1, dtype=np.int8)
        self.reason = np.full(n, NONE, dtype=np.int8)
        self.eligible = self.due  # the same array until eligibility() adds jitter (copy on write)
        self.pick = np.zeros(n, dtype=np.int64)
        # A run starts at its pickup unless the event loop moves it, and pick
        # is not read once the event loop has begun: one array serves both.
        self.start = self.pick
        self.finish = np.zeros(n, dtype=np.int64)
        self.started = np.zeros(n, dtype=bool)
        self.attempts_n = np.zeros(n, dtype=np.int32)
        # np.zeros maps untouched pages lazily: only rows that waited cost memory.
        self.budget_wait = np.zeros(n, dtype=np.float64)
        self.run = np.zeros(n, dtype=bool)  # rows that get attempts (set by attempts())
        self.success = self.run
        self.fixed_duration = True  # every run's occupancy is its schedule's duration (set by attempts())
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
        self.pauses = self._pause_spans()

        # Rows without an instant are settled now, with the reason their notes give.
        no_run = np.flatnonzero(~self.has_due)
        if len(no_run):
            notes = frame["notes"].gather(pl.Series(no_run))
            merged = notes.list.eval(pl.element().str.starts_with("merged_into:")).list.any().to_numpy()
            excluded = notes.list.eval(pl.element().str.starts_with("excluded:")).list.any().to_numpy()
            reason = np.where(merged, R["merged"], np.where(excluded, R["calendar"], R["dst_gap"]))
            self.state[no_run] = S["skipped"]
            self.reason[no_run] = reason

    def _per_row(self, table: np.ndarray, rows: np.ndarray | None = None):
        """``table[s]`` for each row (or for ``rows``), or the scalar when every schedule agrees.

        Fleets usually share one policy: a scalar spares an n-row gather and temporary.
        """
        if len(table) and (table == table[0]).all():
            return table[0]
        return table[self.s] if rows is None else table[self.s[rows]]

    def costs(self) -> np.ndarray:
        """Cost per row: every started run (a cancelled one too) costs its attempts; the rest nothing."""
        out = np.zeros(self.n, dtype=np.float64)
        np.multiply(self._per_row(self.p_cost), self.attempts_n, out=out, where=self.started)
        return out

    # -- 1. eligibility ------------------------------------------------------
    def eligibility(self) -> None:
        if not (self.p_jitter > 0).any():
            return
        idx = np.flatnonzero(self.has_due & (self.p_jitter[self.s] > 0))
        if not len(idx):
            return
        self.eligible = self.due.copy()
        jit = self.p_jitter[self.s[idx]]
        u = uniform(self.key[self.s[idx]], self.nominal[idx], self.fold[idx], self.sc.seed, JITTER)
        draw = np.floor(u * jit).astype(np.int64)
        # Never past the schedule's next occurrence (Temporal caps jitter there).
        # Rows with an instant are in due order in the frame, so a stable sort
        # by schedule orders them by (schedule, due).
        runs = np.flatnonzero(self.has_due)
        order = runs[np.argsort(self.s[runs], kind="stable")]
        nxt = np.full(self.n, _BIG, dtype=np.int64)
        same = self.s[order][1:] == self.s[order][:-1]
        nxt[order[:-1][same]] = self.due[order[1:][same]]
        cap = np.maximum(nxt[idx] - self.due[idx] - 1, 0)
        self.eligible[idx] = self.due[idx] + np.minimum(draw, cap)

    # -- 2/3. pickup and pauses ----------------------------------------------
    def pickup(self) -> None:
        tick = self.sc.tick_us
        pick, e = self.pick, self.eligible
        # ceil to a tick, in place (a row without an instant has eligible 0, so pick 0)
        np.negative(e, out=pick)
        np.floor_divide(pick, tick, out=pick)
        np.multiply(pick, -tick, out=pick)
        outs = self.sc.outages
        if outs:
            starts = np.array([o.start_us for o in outs], dtype=np.int64)
            ends = np.array([o.end_us for o in outs], dtype=np.int64)
            # Only rows whose [eligible, pick] span meets the outages' hull can move.
            near = pick >= starts[0]
            near &= e < ends.max()
            near &= self.has_due
            idx = np.flatnonzero(near)
            del near
            ei, pi = e[idx], pick[idx]
            # Down when eligible, or at the tick it would be picked: picked at the come-back instant.
            for probe in (ei, pi):
                j = np.searchsorted(starts, probe, side="right") - 1
                inside = (j >= 0) & (probe < ends[np.maximum(j, 0)])
                pi = np.where(inside, ends[np.maximum(j, 0)], pi)
            # An outage end inside the next outage (adjacent spans): wake at that one's end.
            for _ in range(len(outs)):
                j = np.searchsorted(starts, pi, side="right") - 1
                inside = (j >= 0) & (pi < ends[np.maximum(j, 0)])
                if not inside.any():
                    break
                pi = np.where(inside, ends[np.maximum(j, 0)], pi)
            pick[idx] = pi
        self._pauses()
        self._revisions()

    def _revisions(self) -> None:
        """Occurrences of a replaced revision not yet started at its boundary: ``cancelled``/``revision``."""
        for at, sid, rev in self.boundaries:
            member = np.array([s.id == sid and s.revision == rev for s in self.scheds], dtype=bool)
            rows = np.flatnonzero(self.has_due & (self.state < 0) & member[self.s] & (self.pick >= at))
            self.state[rows] = S["cancelled"]
            self.reason[rows] = R["revision"]

    def _pause_spans(self) -> dict[int, list[tuple[int, int]]]:
        """Half-open paused spans ``[Pause, Resume)`` per schedule index (only schedules ever paused)."""
        spans: dict[str | None, list[list[int]]] = {}
        for ev in self.sc.events:
            if isinstance(ev, Pause):
                spans.setdefault(ev.schedule_id, []).append([ev.at_us, _BIG])
            elif isinstance(ev, Resume):
                for key in ([ev.schedule_id] if ev.schedule_id is not None else list(spans)):
                    for span in spans.get(key, []):
                        if span[1] == _BIG and span[0] <= ev.at_us:
                            span[1] = ev.at_us
        out: dict[int, list[tuple[int, int]]] = {}
        for i, s in enumerate(self.scheds):
            mine = spans.get(None, []) + spans.get(s.id, [])
            if mine:
                out[i] = sorted((a, b) for a, b in mine)
        return out

    def _pauses(self) -> None:
        if not self.pauses:
            return
        by_spans: dict[tuple, list[int]] = {}
        for i, items in self.pauses.items():
            by_spans.setdefault(tuple(items), []).append(i)
        for items, members in by_spans.items():
            member = np.zeros(len(self.scheds), bool)
            member[members] = True
            rows = np.flatnonzero(self.has_due & (self.state < 0) & member[self.s])
            for a, b in items:
                hit = rows[((self.eligible[rows] >= a) & (self.eligible[rows] < b))
                           | ((self.pick[rows] >= a) & (self.pick[rows] < b))]
                self.state[hit] = S["skipped"]
                self.reason[hit] = R["paused"]

    # -- 4. missed runs --------------------------------------------------------
    def catch_up(self) -> None:
        missed = self.pick - self.eligible
        missed = missed > self._per_row(self.p_grace)
        missed &= self.has_due
        missed &= self.state < 0
        m = np.flatnonzero(missed)
        del missed
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
        """Attempts, success and occupancy (start to last attempt's end) of every row that runs.

        The occupancy is written into ``finish``; settle() adds the start.
        """
        run = self.has_due & (self.state < 0)
        self.run = run
        f = self.sc.failures
        max_att = 1 if f is None else f.max_attempts
        p_fail = 0.0 if f is None else f.probability
        if p_fail == 0 and not (self.p_sigma > 0).any():
            # Every run is one attempt of its schedule's fixed duration, and it succeeds.
            np.copyto(self.finish, self._per_row(self.p_dur), where=run)
            np.copyto(self.attempts_n, 1, where=run)
            self.success = run
            self.fixed_duration = True
            return
        self.fixed_duration = False
        idx = np.flatnonzero(run)
        s = self.s[idx]
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
        self.finish[idx] = occupancy
        self.attempts_n[idx] = attempts
        self.success = np.zeros(self.n, dtype=bool)
        self.success[idx] = succeeded

    # -- 6. overlap, budgets, capacity, and the rest by columns ----------------
    def settle(self) -> None:
        run, pick, finish = self.run, self.pick, self.finish
        np.add(finish, pick, out=finish, where=run)  # occupancy -> finish
        sequential = self._overlap_rows()
        by_budget = self._budget_rows()
        if by_budget is not None:
            sequential = by_budget if sequential is None else (sequential | by_budget)
            del by_budget
        if self.sc.capacity is not None and _max_concurrency(pick[run], finish[run]) > self.sc.capacity:
            sequential = run
        fast = run if sequential is None else run & ~sequential
        # Settled by columns: a run starts at its pickup (start is pick).
        np.copyto(self.started, fast)
        np.copyto(self.state, S["done"], where=fast & self.success)
        failed = fast & ~self.success
        if failed.any():
            np.copyto(self.state, S["failed"], where=failed)
            np.copyto(self.reason, R["retries_exhausted"], where=failed)
        del fast, failed
        if sequential is not None:
            rows = np.flatnonzero(run & sequential)
            if len(rows):
                # Budget-ordered accounts of the common kind are settled period by
                # period in columns; the event loop takes what is left (exactly the
                # same rules, one event at a time).
                rows = self._budget_periods(rows)
            if len(rows):
                self._event_loop(rows, finish[rows] - pick[rows], self.success[rows])

    def _chunks(self):
        """Row ranges ``[lo, hi)`` of a few MB each, in frame (instant) order.

        The per-schedule steps below stream over these instead of sorting
        whole columns: a chunk's sort and gathers stay in cache, and its
        temporaries are small and reused by the allocator, so the cost per
        row does not grow with the fleet. A chunk spans several times the
        number of schedules, so per-chunk work on per-schedule arrays stays
        a small share.
        """
        step = max(CHUNK_ROWS, CHUNK_ROWS_PER_SCHEDULE * len(self.scheds))
        for lo in range(0, self.n, step):
            yield lo, min(self.n, lo + step)

    def _overlap_rows(self) -> np.ndarray | None:
        """Rows that need order for overlap (None: none do).

        A start before an earlier run of the same schedule finished is a
        conflict. Rows chained by such starts form a cluster; only clusters
        need order for skip and cancel_other (they never delay a start),
        while buffering delays starts, so a buffering schedule needs order
        from its first cluster on.

        Rows come in instant order, and within a schedule eligibility (jitter
        is capped before the next occurrence) and so pickup keep that order:
        within a chunk a stable sort by schedule (a radix sort on 16-bit keys)
        orders them by (schedule, start), and what a schedule's earlier
        chunks left (until when it is busy, its last row) is carried in
        per-schedule arrays.
        """
        checked = self.p_overlap != _OVERLAP["allow"]
        if not checked.any():
            return None
        G = len(self.scheds)
        fixed = self.fixed_duration
        dur = self._per_row(self.p_dur)
        busy = np.full(G, -_BIG, dtype=np.int64)  # fixed: last start + duration; else latest finish so far
        last_row = np.full(G, -1, dtype=np.int64)  # the schedule's previous row (global index)
        hits = []
        for lo, hi in self._chunks():
            sel = self.run[lo:hi] if checked.all() else self.run[lo:hi] & checked[self.s[lo:hi]]
            rows = np.flatnonzero(sel)
            if not len(rows):
                continue
            s_c = self.s[lo:hi][rows]
            o = np.argsort(s_c, kind="stable")
            idx = rows[o]
            idx += lo
            s_o = s_c[o]
            del rows, s_c, o
            st_o = self.pick[idx]
            head = np.empty(len(idx), dtype=bool)  # first row of its schedule in the chunk
            head[0] = True
            np.not_equal(s_o[1:], s_o[:-1], out=head[1:])
            tail = np.empty(len(idx), dtype=bool)  # last row of its schedule in the chunk
            tail[-1] = True
            tail[:-1] = head[1:]
            # prev: when the schedule is busy until, just before each row
            prev = np.empty(len(idx), dtype=np.int64)
            if fixed:
                # One fixed occupancy per schedule: finishes grow with starts,
                # so the schedule is busy until the previous row's finish.
                prev[1:] = st_o[:-1]
                prev[1:] += dur if np.ndim(dur) == 0 else self.p_dur[s_o[:-1]]
                fin_tail = st_o[tail] + (dur if np.ndim(dur) == 0 else self.p_dur[s_o[tail]])
            else:
                # Lognormal or retried occupancies: the latest finish so far, this
                # chunk's rows before it and what earlier chunks left.
                prev[1:], fin_tail = _group_running_max(self.finish[idx], head)
                prev[head] = -_BIG
                np.maximum(prev, busy[s_o], out=prev)
            if fixed:
                prev[head] = busy[s_o[head]]
            conflict = st_o < prev
            del prev
            if conflict.any():
                # A cluster is a non-conflicting row and the conflicting rows after
                # it: a row is in one of two or more when it conflicts or its
                # schedule's next row does (that one may be in a later chunk).
                in_cluster = conflict.copy()
                in_cluster[:-1] |= conflict[1:] & ~head[1:]
                hits.append(idx[in_cluster])
                back = last_row[s_o[conflict & head]]
                hits.append(back[back >= 0])
            ts = s_o[tail]
            busy[ts] = fin_tail if fixed else np.maximum(busy[ts], fin_tail)
            last_row[ts] = idx[tail]
        if not hits:
            return None
        out = np.zeros(self.n, dtype=bool)
        for h in hits:
            out[h] = True
        buffering = (self.p_overlap == _OVERLAP["buffer_one"]) | (self.p_overlap == _OVERLAP["buffer_all"])
        if buffering.any():
            hit = np.flatnonzero(out & buffering[self.s])
            if len(hit):
                # A buffering schedule needs order from its first cluster on.
                first = np.full(G, _BIG, dtype=np.int64)
                np.minimum.at(first, self.s[hit], self.pick[hit])
                for lo, hi in self._chunks():
                    s_c = self.s[lo:hi]
                    out[lo:hi] |= self.run[lo:hi] & buffering[s_c] & (self.pick[lo:hi] >= first[s_c])
        return out

    def _budget_rows(self) -> np.ndarray | None:
        """Rows that need order for budgets (None: none do).

        From an account's first period whose demand exceeds its limit, its
        rows need order (a held run spills into the next period). Demand per
        (account, period) is summed chunk by chunk.
        """
        budgets = self.sc.budgets
        paying = self.p_account >= 0
        if not budgets or not paying.any():
            return None
        acct_of = self.p_account.astype(np.int32)
        cost = self.p_cost[paying]
        # One integral cost: count * cost is exactly the sum the weights would give.
        unit = float(cost[0]) if (cost == cost[0]).all() and float(cost[0]).is_integer() \
            and self.n * float(cost[0]) < 2**53 else None
        run_pay = self.run if paying.all() else self.run & paying[self.s]
        if not run_pay.any():
            return None
        # The period index space: every kind's periods of the instants, with a
        # two-day margin (a local period is never more than a day off the UTC
        # one); periods without demand at either end change nothing below.
        day2 = 2 * 86400 * US
        ends = np.array([int(np.min(self.pick, where=run_pay, initial=_BIG)) - day2,
                         int(np.max(self.pick, where=run_pay, initial=-_BIG)) + day2], dtype=np.int64)
        bounds = [_local_period(self.budget_tables[a], b.period, ends) for a, b in enumerate(budgets)]
        p0 = min(int(x[0]) for x in bounds)
        span = max(int(x[1]) for x in bounds) - p0 + 1

        def cells(lo: int, hi: int):
            rows = np.flatnonzero(run_pay[lo:hi])
            s_c = self.s[lo:hi][rows]
            acct = acct_of[s_c]
            cell = self._period_index(acct, self.pick[lo:hi][rows])
            cell -= p0
            cell += acct.astype(np.int64) * span
            return rows, s_c, cell

        demand = np.zeros(len(budgets) * span, dtype=np.float64)
        for lo, hi in self._chunks():
            _, s_c, cell = cells(lo, hi)
            if unit is not None:
                demand += np.bincount(cell, minlength=len(demand)) * unit
            else:
                demand += np.bincount(cell, weights=self.p_cost[s_c], minlength=len(demand))
        demand = demand.reshape(len(budgets), span)
        need = np.zeros_like(demand, dtype=bool)
        for a, b in enumerate(budgets):
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
        if not need.any():
            return None
        need = need.ravel()
        out = np.zeros(self.n, dtype=bool)
        for lo, hi in self._chunks():
            rows, _, cell = cells(lo, hi)
            out[lo + rows[need[cell]]] = True
        return out

    def _period_index(self, acct: np.ndarray, t: np.ndarray) -> np.ndarray:
        """Index of each instant's local calendar period of its account's budget (day/week/month).

        Budgets sharing a zone and a period kind are computed in one pass.
        """
        kinds: dict[tuple[str, str], list[int]] = {}
        for a, b in enumerate(self.sc.budgets):
            kinds.setdefault((b.zone, b.period), []).append(a)
        if len(kinds) == 1:
            (_, period), members = next(iter(kinds.items()))
            return _local_period(self.budget_tables[members[0]], period, t)
        out = np.zeros(len(t), dtype=np.int64)
        for (zone, period), members in kinds.items():
            member = np.zeros(len(self.sc.budgets) + 1, dtype=bool)
            member[np.array(members) + 1] = True
            rows = np.flatnonzero(member[acct + 1])
            if len(rows):
                out[rows] = _local_period(self.budget_tables[members[0]], period, t[rows])
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

    # -- 6b. budgets, period by period in columns ------------------------------
    def _budget_periods(self, rows: np.ndarray) -> np.ndarray:
        """Settle the ordered rows of the common budget case by columns; return the rows left to the event loop.

        The event loop's rules for an account touch nothing outside it (without
        a capacity limit, the only state shared across accounts), so accounts
        can be settled separately. An account is settled here when every run
        of it is one attempt of a fixed duration (no failures, no lognormal),
        its schedules share one cost, overlap is ``allow`` or ``skip`` and none
        of them is ever paused, and its budget's local periods never go back in
        time (no zone transition moving local time back across a period
        boundary). What the event loop does for such an account, period by
        period, is then (see ``_period_step``):

        * the runs held from the previous period arrive first, at the
          period's opening (an ``opened`` event sorts before the picks at
          its instant), after their expiry and catch-up; then the period's
          picks, in the loop's event order (pick, schedule, nominal, row);
        * each arrival meets its schedule's overlap mode, then the budget:
          with one cost ``c``, the sum started in a period after ``k`` starts
          is the same float whatever ran (``0.0 + c + c ...``), so exactly the
          first ``K`` arrivals that pass the overlap check start, ``K``
          being the number of those partial sums within the limit;
        * what does not fit waits for the next period's opening (or is
          skipped with ``on_budget="skip"``), in arrival order.
        """
        sc = self.sc
        budgets = sc.budgets
        if sc.capacity is not None or not self.fixed_duration or not budgets or not len(rows):
            return rows
        nb = len(budgets)
        acct = self.p_account
        paying = acct >= 0
        # Per account: may it be settled here?
        ok = np.ones(nb, dtype=bool)
        hard = ~np.isin(self.p_overlap, [_OVERLAP["allow"], _OVERLAP["skip"]])
        for i in self.pauses:
            hard[i] = True
        ok[acct[paying & hard]] = False
        cmin = np.full(nb, np.inf)
        cmax = np.full(nb, -np.inf)
        np.minimum.at(cmin, acct[paying], self.p_cost[paying])
        np.maximum.at(cmax, acct[paying], self.p_cost[paying])
        ok &= cmin == cmax  # one cost per account (else a smaller later run may fit: the loop decides)
        groups: dict[tuple[str, str], list[int]] = {}
        for a, b in enumerate(budgets):
            if ok[a]:
                groups.setdefault((b.zone, b.period), []).append(a)
        # A zone moving local time back across a period boundary makes the
        # period index go back: leave those to the loop.
        # (Over every instant that can matter: the picks, and period openings
        # until the horizon's end, which a backlog can be carried to.)
        # (Chunk by chunk: a gather of every ordered row's pick is a fresh
        # full-size array, and at fleet scale fresh memory is what costs.)
        lo_p, hi_p = _BIG, -_BIG
        for i in range(0, len(rows), CHUNK_ROWS):
            pc = self.pick[rows[i:i + CHUNK_ROWS]]
            lo_p, hi_p = min(lo_p, int(pc.min())), max(hi_p, int(pc.max()))
        del pc
        lo_t = lo_p - 2 * 86400 * US
        hi_t = max(hi_p, sc.end_us) + 2 * 86400 * US
        for (zone, period), members in list(groups.items()):
            table = self.budget_tables[members[0]]
            tr = table.utc[(table.utc >= lo_t // US) & (table.utc <= hi_t // US)].astype(np.int64) * US
            if len(tr):
                pair = _local_period(table, period, np.concatenate([tr - 1, tr]))
                if (pair[len(tr):] < pair[:len(tr)]).any():
                    ok[members] = False
                    del groups[(zone, period)]
        if not groups:
            return rows
        # Per schedule, then gathered once (narrow tables: narrow gathers).
        a_dtype = np.int16 if nb < 2**15 else np.int32
        fast_s = paying & ok[np.where(paying, acct, 0)]
        s_r = self.s[rows]
        fast = fast_s[s_r]
        if fast.all():
            fr, s_f, rest = rows, s_r, rows[:0]
        elif not fast.any():
            return rows
        else:
            rest = rows[~fast]
            fr, s_f = rows[fast], s_r[fast]
        del s_r, fast
        # The loop's event order of picks: (pick, schedule, nominal), ties in row order.
        sbits = max(1, int(len(self.scheds) - 1).bit_length())
        key = self.pick[fr]
        pmin, pmax = int(key.min()), int(key.max())
        if (pmax - pmin).bit_length() + sbits <= 62:
            key -= pmin
            key <<= sbits
            key |= s_f
            o = np.argsort(key, kind="stable")
            key = key[o]
            fr = fr[o]
            del o
            # Pick and schedule come back from the sorted key (no gathers).
            s_f = np.empty(len(key), dtype=self.s.dtype)
            np.bitwise_and(key, (1 << sbits) - 1, out=s_f, casting="unsafe")
            tie = key[1:] == key[:-1]
            pk = key
            pk >>= sbits
            pk += pmin
            del key
            if tie.any():
                # Same pick and schedule: by nominal (stable: row order for equal nominal).
                pos = np.flatnonzero(np.concatenate([tie, [False]]) | np.concatenate([[False], tie]))
                sub = np.lexsort((self.nominal[fr[pos]], s_f[pos], pk[pos]))
                fr[pos], s_f[pos], pk[pos] = fr[pos][sub], s_f[pos][sub], pk[pos][sub]
            del tie
        else:
            pk = key
            o = np.lexsort((self.nominal[fr], s_f, pk))
            fr, s_f, pk = fr[o], s_f[o], pk[o]
            del o
        a_f = acct.astype(a_dtype)[s_f]
        # The loop starts a picked run at up(pick); picks are up already, but follow it exactly.
        u_f = self._up_sorted(pk)
        gid = np.full(nb, -1, dtype=np.int16)
        for k, members in enumerate(groups.values()):
            gid[members] = k
        g_s = np.where(paying, gid[np.where(paying, acct, 0)], -1).astype(np.int16)
        one = len(groups) == 1
        lastS = np.full(len(self.scheds), -_BIG, dtype=np.int64)  # each schedule's last start so far
        for k, ((zone, period), members) in enumerate(groups.items()):
            if one:  # every fast row is of this group: no gathers
                rows_g, s_g, a_g, c_g, u_g = fr, s_f, a_f, pk, u_f
            else:
                sel = np.flatnonzero(g_s[s_f] == k)
                if not len(sel):
                    continue
                rows_g, s_g, a_g, c_g, u_g = fr[sel], s_f[sel], a_f[sel], pk[sel], u_f[sel]
                del sel
            # The budget period is the start instant's (try_start's up(t)); starts
            # come in time order and periods do not go back (checked above), so
            # each period's rows are one slice: only where they begin is needed.
            cuts = _period_cuts(self.budget_tables[members[0]], period, u_g)
            self._periods(members, rows_g, s_g, a_g, c_g, u_g, cuts, lastS)
            del rows_g, s_g, a_g, c_g, u_g
        return rest

    def _up(self, t: np.ndarray) -> np.ndarray:
        """The loop's ``up``, vectorised: past each outage (in order) that ``t`` falls in."""
        t = t.copy()
        for o in self.sc.outages:
            np.copyto(t, o.end_us, where=(t >= o.start_us) & (t < o.end_us))
        return t

    def _up_sorted(self, t: np.ndarray) -> np.ndarray:
        """:meth:`_up` of ascending ``t`` (still ascending): ``t`` itself when no instant moves.

        An outage's instants are one slice of sorted ``t``; moving them to its
        end keeps the order, so each outage in turn is a slice again.
        """
        out = t
        for o in self.sc.outages:
            lo, hi = np.searchsorted(out, [o.start_us, o.end_us], side="left").tolist()
            if hi > lo:
                if out is t:
                    out = t.copy()
                out[lo:hi] = o.end_us
        return out

    def _periods(self, members: list[int], rows: np.ndarray, s: np.ndarray, a: np.ndarray, c: np.ndarray,
                 u: np.ndarray, cuts: tuple[list[int], list[int], list[int]], lastS: np.ndarray) -> None:
        """Settle the rows of budget accounts ``members`` (one zone and period kind), period by period.

        ``rows`` and their schedule, account, pick (``c``, when the overlap
        check runs) and start instant (``u``) come in the loop's event order;
        ``cuts`` gives each budget period's slice of them, ``(starts, stops,
        periods)`` (see :func:`_period_cuts`). ``lastS`` holds each
        schedule's last start.
        """
        sc = self.sc
        b0 = sc.budgets[members[0]]
        end = sc.end_us
        nb = len(sc.budgets)
        # K[a]: how many runs of the account's one cost fit in a period. The
        # loop starts a run when spent + cost <= limit + 1e-9, spent being the
        # running float sum of the costs started: 0.0 + c, (0.0 + c) + c, ...
        # which np.cumsum (a sequential add) reproduces bit for bit.
        K = np.zeros(nb, dtype=np.int64)
        n_acct = np.zeros(nb, dtype=np.int64)
        for i in range(0, len(a), CHUNK_ROWS):  # chunk by chunk: no full-size int64 copy of ``a``
            n_acct += np.bincount(a[i:i + CHUNK_ROWS], minlength=nb)
        for m in members:
            idx = np.flatnonzero(self.p_account == m)
            cost = float(self.p_cost[idx[0]]) if len(idx) else 0.0
            cap = int(n_acct[m]) + 1  # never more arrivals in a period than the account has rows
            lim = sc.budgets[m].limit + 1e-9
            if cost == 0.0:
                K[m] = cap
                continue
            ratio = sc.budgets[m].limit / cost
            size = cap if ratio + 3 >= cap else int(ratio) + 3
            while True:
                sums = np.cumsum(np.full(size, cost))
                k = int(np.searchsorted(sums, lim, side="right"))
                if k < size or size >= cap:
                    break
                size = min(cap, size * 2)
            K[m] = k
        period_fn = self._period_fn(members[0])
        outages = [(o.start_us, o.end_us) for o in sc.outages]

        def up(t: int) -> int:
            for lo, hi in outages:
                if lo <= t < hi:
                    t = hi
            return t

        starts, stops, steps = cuts
        pending: dict[int, tuple] = {}  # period -> the backlog arriving in it (rows, s, a, c, u)
        i = 0
        while i < len(steps) or pending:
            j_pick = steps[i] if i < len(steps) else None
            j_pend = min(pending) if pending else None
            j = j_pick if j_pend is None else (j_pend if j_pick is None else min(j_pick, j_pend))
            parts = []
            if j in pending:
                parts.append(pending.pop(j))
            if j_pick == j:
                lo, hi = starts[i], stops[i]
                parts.append((rows[lo:hi], s[lo:hi], a[lo:hi], c[lo:hi], u[lo:hi]))
                i += 1
            held = self._period_step(parts, K, lastS)
            if held is None:
                continue
            h_rows, h_s, h_a, h_since = held
            T = self._period_start(b0, j + 1)
            if T >= end:
                # The loop ignores openings at or past the horizon's end: what
                # waits then never gets budget.
                self.state[h_rows] = S["skipped"]
                self.reason[h_rows] = R["budget"]
                self.budget_wait[h_rows] += np.maximum(0, end - h_since) / US
                continue
            backlog = self._period_open(T, h_rows, h_s, h_a, h_since)
            if backlog is None:
                continue
            b_rows, b_s, b_a = backlog
            tu = up(T)
            q = period_fn(tu)
            # The backlog arrives in the period of up(T): any period between
            # lies in an outage (no picks, so no other backlog lands there).
            assert q not in pending and q > j
            n = len(b_rows)
            pending[q] = (b_rows, b_s, b_a, np.full(n, T, dtype=np.int64), np.full(n, tu, dtype=np.int64))

    def _period_step(self, parts: list[tuple], K: np.ndarray, lastS: np.ndarray):
        """One budget period of some accounts: arrivals (backlog first, then picks) meet overlap, then budget.

        Returns the runs held for budget (rows, schedule, account, since) in
        arrival order per account, or None.
        """
        if len(parts) == 1:
            rows, s, a, c, u = parts[0]
        else:
            rows, s, a, c, u = (np.concatenate(x) for x in zip(*parts))
        if len(parts) > 1 or a.min() != a.max():
            # Account-major, arrival order within (a stable radix sort on a narrow key).
            o = np.argsort(a, kind="stable")
            rows, s, a, c, u = rows[o], s[o], a[o], c[o], u[o]
        n = len(rows)
        d = self.p_dur[s]
        skipmode = self.p_overlap[s] == _OVERLAP["skip"]
        # -- overlap: the chain each schedule would follow with budget to spare.
        # An arrival is turned away when it comes before its schedule's last
        # start plus the (fixed) duration. Starts (u) never decrease along a
        # schedule's arrivals, so an arrival at least a duration after the
        # previous arrival (started or not) is never turned away, and one less
        # than that after a started previous arrival always is: only runs of
        # two or more such arrivals need a look one by one.
        chain = np.ones(n, dtype=bool)
        if skipmode.any():
            o = np.argsort(s, kind="stable")
            s2, c2, u2 = s[o], c[o], u[o]
            head = np.empty(n, dtype=bool)
            head[0] = True
            np.not_equal(s2[1:], s2[:-1], out=head[1:])
            prev = np.empty(n, dtype=np.int64)
            prev[1:] = u2[:-1]
            prev[head] = lastS[s2[head]]
            flag = skipmode[o] & (c2 < prev + d[o])
            if flag.any():
                chain2 = ~flag
                cont = flag.copy()
                cont[0] = False
                cont[1:] &= flag[:-1] & ~head[1:]
                if cont.any():
                    L = prev  # for a flagged row: the last chained start before it
                    d2 = d[o]
                    for k in np.flatnonzero(cont).tolist():
                        lk = int(u2[k - 1]) if chain2[k - 1] else int(L[k - 1])
                        L[k] = lk
                        chain2[k] = int(c2[k]) >= lk + int(d2[k])
                chain[o] = chain2
        # -- budget: the first K[a] chained arrivals of each account start.
        cs = np.cumsum(chain)
        cs -= chain  # chained arrivals before each row
        ahead = np.empty(n, dtype=bool)
        ahead[0] = True
        np.not_equal(a[1:], a[:-1], out=ahead[1:])
        first = np.flatnonzero(ahead)
        cs -= np.repeat(cs[first], np.diff(np.append(first, n)))
        after = cs >= K[a]
        start = chain & ~after
        # Before the K-th start the chain is what happens; after it nothing
        # starts, so an arrival is turned away only by a start already made.
        st = np.flatnonzero(start)
        if len(st):
            np.maximum.at(lastS, s[st], u[st])
            r = rows[st]
            self.start[r] = u[st]
            self.finish[r] = u[st] + d[st]
            self.started[r] = True
            self.state[r] = S["done"]
            self.reason[r] = NONE
        turned = ~chain & ~after
        turned |= after & skipmode & (c < lastS[s] + d)
        if turned.any():
            r = rows[turned]
            self.state[r] = S["skipped"]
            self.reason[r] = R["overlap"]
        no_room = after & ~turned
        if not no_room.any():
            return None
        wait = no_room & self.p_onbudget_wait[s]
        skip = no_room & ~wait
        if skip.any():
            r = rows[skip]
            self.state[r] = S["skipped"]
            self.reason[r] = R["budget"]
        if not wait.any():
            return None
        return rows[wait], s[wait], a[wait], u[wait]

    def _period_open(self, T: int, rows: np.ndarray, s: np.ndarray, a: np.ndarray, since: np.ndarray):
        """A budget period opens at ``T`` for the held runs: their wait, expiry and catch-up, as the loop.

        Returns the runs that arrive (rows, schedule, account) in the loop's
        order: schedules by their first held run, each one's by (nominal, fold).
        """
        self.budget_wait[rows] += (T - since) / US
        n = len(rows)
        pos = np.arange(n)
        # Each schedule's first place in the held list (accounts apart, held order within).
        o = np.argsort(s, kind="stable")
        s_o = s[o]
        head = np.empty(n, dtype=bool)
        head[0] = True
        np.not_equal(s_o[1:], s_o[:-1], out=head[1:])
        firstpos = np.empty(n, dtype=np.int64)
        hpos = np.flatnonzero(head)
        firstpos[o] = np.repeat(pos[o][hpos], np.diff(np.append(hpos, n)))
        expired = (T - self.eligible[rows]) > self.p_maxlate[s]
        if expired.any():
            self.state[rows[expired]] = S["expired"]
            self.reason[rows[expired]] = R["max_lateness"]
            live = ~expired
            rows, s, a, firstpos = rows[live], s[live], a[live], firstpos[live]
            n = len(rows)
            if not n:
                return None
        nom, fold = self.nominal[rows], self.fold[rows]
        o = np.lexsort((fold, nom, firstpos))
        rows, s, a, firstpos = rows[o], s[o], a[o], firstpos[o]
        # firstpos is one value per schedule: its groups are the schedules.
        head = np.empty(n, dtype=bool)
        head[0] = True
        np.not_equal(firstpos[1:], firstpos[:-1], out=head[1:])
        gidx = np.cumsum(head) - 1
        size = np.bincount(gidx)[gidx]
        if (size > 1).any():  # a backlog again: the catch-up mode decides
            at = np.arange(n) - np.flatnonzero(head)[gidx]
            from_end = size - 1 - at
            mode = self.p_catchup[s]
            keep = (size == 1) | (mode == _CATCHUP["all"])
            keep |= (mode == _CATCHUP["latest"]) & (from_end == 0)
            keep |= (mode == _CATCHUP["earliest"]) & (at == 0)
            keep |= (mode == _CATCHUP["bounded"]) & (from_end < self.p_limit[s])
            drop = ~keep
            if drop.any():
                coalesce = drop & ((mode == _CATCHUP["latest"]) | (mode == _CATCHUP["earliest"]))
                self.state[rows[drop]] = np.where(coalesce[drop], S["coalesced"], S["skipped"]).astype(np.int8)
                self.reason[rows[drop]] = R["catchup"]
                rows, s, a = rows[keep], s[keep], a[keep]
                if not len(rows):
                    return None
        return rows, s, a

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

        pauses = self.pauses

        def paused(s: int, t: int) -> bool:
            return s in pauses and any(a <= t < b for a, b in pauses[s])

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
            running[s] = (r, t + occ[r])
            active += 1
            heapq.heappush(events, (t + occ[r], 0, seq, r))
            seq += 1

        def try_start(r: int, t: int, from_queue: bool = False) -> None:
            nonlocal seq
            t = up(t)  # a buffered or budget-held run waits for the scheduler to be up
            s = int(self.s[r])
            if paused(s, t):
                # Held (buffer, budget, capacity) into a pause: a paused schedule starts nothing.
                self.state[r], self.reason[r] = S["skipped"], R["paused"]
                return
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

        def arrive(r: int, t: int, from_queue: bool = False) -> None:
            """Row ``r`` wants to start at ``t``: the overlap mode first, then capacity and budget.

            Also called when a run leaves the capacity queue, as the run that
            held the schedule when it queued may be over, and another run of
            the schedule may have left the queue before it.
            """
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
            try_start(r, t, from_queue)

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
                    arrive(q, t, from_queue=True)
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


def _us(col: pl.Series) -> np.ndarray:
    """Epoch microseconds of a Datetime column, nulls as 0.

    Without nulls this is a read-only view of the frame's own buffer (no copy).
    """
    if col.dtype.time_unit != "us":  # type: ignore[union-attr]
        col = col.dt.cast_time_unit("us")
    phys = col.to_physical()
    if phys.null_count():
        phys = phys.fill_null(0)
    return phys.to_numpy()


def _local_period(table, period: str, t: np.ndarray) -> np.ndarray:
    """Index of the local calendar period (``day``/``week``/``month`` in ``table``'s zone) of each instant (µs).

    Days count from 1970-01-01, ISO weeks (Monday first) from the week of
    1970-01-01, months from 1970-01. Only the zone's transitions within
    [min t, max t] are searched (a year has a couple), which costs about one
    pass over ``t`` instead of a binary search of the whole table per row.
    """
    if not len(t):
        return np.zeros(0, dtype=np.int64)
    utc, offs = table.utc, table.offsets
    # offsets[j] is in force from utc[j-1]: j = searchsorted(utc, t // US, "right"), as offset_at_utc.
    j0 = int(np.searchsorted(utc, int(t.min()) // US, side="right"))
    j1 = int(np.searchsorted(utc, int(t.max()) // US, side="right"))
    off_us = offs[j0:j1 + 1].astype(np.int64) * US
    if j1 == j0:
        local = t + off_us[0]
    else:
        # utc <= t // US  <=>  utc * US <= t (integers)
        local = off_us[np.searchsorted(utc[j0:j1].astype(np.int64) * US, t, side="right")]
        local += t
    day = np.floor_divide(local, 86400 * US, out=local)
    if period == "day":
        return day
    if period == "week":  # ISO weeks, Monday first; 1970-01-01 was a Thursday
        day += 3
        day //= 7
        return day
    month_of = lambda d: int(np.datetime64(int(d), "D").astype("datetime64[M]").astype(np.int64))  # noqa: E731
    m_lo, m_hi = month_of(day.min()), month_of(day.max())
    firsts = np.arange(m_lo, m_hi + 1).astype("datetime64[M]").astype("datetime64[D]").astype(np.int64)
    month = np.searchsorted(firsts, day, side="right")
    month += m_lo - 1
    return month


def _period_cuts(table, period: str, t: np.ndarray) -> tuple[list[int], list[int], list[int]]:
    """Slices of ascending instants ``t`` (µs) by local period (as :func:`_local_period`), whose
    index must not go back along ``t``: ``(starts, stops, periods)``, one entry per period present.

    Each period's first row is found by bisection (a few dozen steps over the
    periods at once), not by the period of every row: no full-size array.
    """
    n = len(t)
    if not n:
        return [], [], []
    p_first, p_last = (int(x) for x in _local_period(table, period, t[[0, n - 1]]))
    assert p_last >= p_first
    ps = np.arange(p_first + 1, p_last + 1, dtype=np.int64)
    # The first row of period p or later lies in [1, n - 1] (row 0 is in p_first < p, row n-1 in p_last >= p).
    lo = np.ones(len(ps), dtype=np.int64)
    hi = np.full(len(ps), n - 1, dtype=np.int64)
    while True:
        act = lo < hi
        if not act.any():
            break
        mid = (lo + hi) // 2
        ge = _local_period(table, period, t[mid]) >= ps
        hi = np.where(act & ge, mid, hi)
        lo = np.where(act & ~ge, mid + 1, lo)
    cuts = np.unique(lo)
    starts = np.concatenate([[0], cuts]).astype(np.int64)
    stops = np.concatenate([cuts, [n]]).astype(np.int64)
    periods = _local_period(table, period, t[starts])
    # Monotone periods (the caller's check): each slice's last row is in its first row's period.
    assert (periods[1:] > periods[:-1]).all()
    assert (_local_period(table, period, t[stops - 1]) == periods).all()
    return starts.tolist(), stops.tolist(), periods.tolist()


def _group_running_max(values: np.ndarray, head: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """For rows grouped contiguously (``head`` marks each group's first row):
    the running max of ``values`` up to each row but the last, within its group
    (``-_BIG`` after a group's end: the caller overwrites heads), and each group's max.

    Each group is lifted above the previous one (``gid * span``) so that one
    running maximum over the whole column never leaks across groups.
    """
    gid = np.cumsum(head)
    gid -= 1
    lo = int(values.min())
    span = int(values.max()) - lo + 1
    tail = np.empty(len(values), dtype=bool)
    tail[-1] = True
    tail[:-1] = head[1:]
    if int(gid[-1]) * span >= 2**62:  # an absurd horizon: no lift fits, go group by group
        run = values.copy()
        starts = np.flatnonzero(head)
        for a, b in zip(starts.tolist(), np.append(starts[1:], len(values)).tolist()):
            np.maximum.accumulate(run[a:b], out=run[a:b])
        return run[:-1], run[tail]
    lift = gid * span
    lift -= lo
    run = values + lift
    np.maximum.accumulate(run, out=run)
    run -= lift
    return run[:-1], run[tail]


def _max_concurrency(start: np.ndarray, finish: np.ndarray) -> int:
    """Most runs going at once; a finish at t frees its slot before a start at t.

    The level just after the i-th start (in time order) is i + 1 minus the
    finishes at or before it. Starts come nearly sorted (instant order), which
    a stable (merge/tim) sort handles in about one pass, and two one-key sorts
    cost less than a two-key lexsort of both columns.
    """
    if not len(start):
        return 0
    st = np.sort(start, kind="stable")
    fi = np.sort(finish, kind="stable")
    level = np.arange(1, len(st) + 1, dtype=np.int64)
    level -= np.searchsorted(fi, st, side="right")
    return int(level.max())


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
