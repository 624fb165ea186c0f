"""The run state: the ledger's columns as numpy arrays, and each schedule's policy as a narrow table.

Memory matters more than anything else at fleet scale (10k schedules is
~11M rows, where every int64 column is ~87 MB and numpy time is mostly page
faults and cache misses), so the arrays are kept few and narrow: columns the
occurrence frame already holds are read-only views of it, ``eligible`` is
``due`` itself until jitter moves it, ``start`` is ``pick`` (a run starts at
its pickup unless the event loop moves it), ``finish`` first holds each run's
occupancy, and cost is derived when the frame is built. Rows to run are a
boolean mask, not an index array.

The steps that settle these columns live in :mod:`.columns` (one pass per
rule over every row), :mod:`.budget_periods` and :mod:`.event_loop` (rows
that need order); the rules they share in :mod:`.run_rules`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, cast

import numpy as np
import polars as pl

from ..schedule import Schedule
from ..tz.release import release as get_release
from .ledger_schema import LEDGER_REASONS, LEDGER_STATES
from .policy import LogNormal, Policy
from .randomness import id_key
from .run_rules import BIG, CATCHUP, EDGE, OVERLAP, charge
from .scenario import Pause, Resume, Scenario

if TYPE_CHECKING:
    from .ledger import AttemptLog

__all__ = ["RunState", "S", "R", "NONE", "CHUNK_ROWS", "CHUNK_ROWS_PER_SCHEDULE", "schedule_keys"]

S = {name: i for i, name in enumerate(LEDGER_STATES)}
R = {name: i for i, name in enumerate(LEDGER_REASONS)}
NONE = -1
# Rows per chunk of the streamed per-schedule steps (8 MB per int64 column: cache-sized)...
CHUNK_ROWS = 1 << 20
CHUNK_ROWS_PER_SCHEDULE = 8  # ... and at least this many per schedule (per-chunk work on per-schedule arrays)


def schedule_keys(scheds: list[Schedule]) -> np.ndarray:
    """Each schedule's stable random key (:func:`.randomness.id_key` of its id): what its draws derive from."""
    return np.array([id_key(s.id) for s in scheds], dtype=np.uint64)


class RunState:
    """Every occurrence's columns, settled step by step, and the per-schedule policy tables (``p_*``).

    The streamed chunks hold ``CHUNK_ROWS`` rows, and at least
    ``CHUNK_ROWS_PER_SCHEDULE`` per schedule (read when a run starts: tests
    set tiny ones to prove that chunking changes nothing).
    """

    def __init__(self, scenario: Scenario, scheds: list[Schedule], frame: pl.DataFrame, s_of: np.ndarray,
                 tz_of: np.ndarray, boundaries: list[tuple[int, str, int]], policies: list[Policy] | None = None,
                 keys: np.ndarray | None = None, base: dict | None = None):
        """``base``: a dict shared by the run states of one occurrence frame (a sweep's combinations): the
        columns read from the frame, and the reasons of rows without an instant, found once."""
        self.sc, self.scheds, self.frame = scenario, scheds, frame
        self.boundaries = boundaries
        self.chunk_rows = (max(1, CHUNK_ROWS), CHUNK_ROWS_PER_SCHEDULE)
        n = frame.height
        self.n = n
        # The narrowest schedule index: gathers of per-schedule tables read
        # less, and a stable sort on a 16-bit key is a radix sort.
        base = base if base is not None else {}
        self.base = base
        if not base:
            base["s"] = s_of.astype(np.int16 if len(scheds) < 2**15 else np.int32, copy=False)
            base["nominal"] = us_of(frame["nominal_local"])
            base["fold"] = frame["fold"].to_numpy()
            base["has_due"] = frame["due_utc"].is_not_null().to_numpy()
            base["due"] = us_of(frame["due_utc"])
            base["no_run"] = _no_run_reasons(frame, base["has_due"])
        self.s: np.ndarray = base["s"]
        self.tz_of = tz_of
        self.nominal, self.fold, self.has_due, self.due = base["nominal"], base["fold"], base["has_due"], base["due"]
        self.state = np.full(n, -1, dtype=np.int8)
        self.reason = np.full(n, NONE, dtype=np.int8)
        self.eligible = self.due  # the same array until eligibility adds jitter (copy on write)
        self.pick = np.zeros(n, dtype=np.int64)
        # A run starts at its pickup unless the event loop moves it, and pick
        # is not read once the event loop has begun: one array serves both.
        self.start = self.pick
        self.finish = np.zeros(n, dtype=np.int64)
        self.started = np.zeros(n, dtype=bool)
        self.attempts_n = np.zeros(n, dtype=np.int32)
        # np.zeros maps untouched pages lazily: only rows that waited cost memory.
        self.budget_wait = np.zeros(n, dtype=np.float64)
        self.run = np.zeros(n, dtype=bool)  # rows that get attempts (set by columns.attempts)
        self.success = self.run
        self.in_turn: np.ndarray | None = None  # rows of backlogs run in turn (set by columns.catch_up)
        self.fixed_duration = True  # every run's occupancy is its schedule's duration (set by columns.attempts)
        # rows to run, by the path that settled them
        self.settled = {"columns": 0, "budget_periods": 0, "event_loop": 0}
        # Worker-level columns (:mod:`.worker_loop`, :mod:`.data_windows`); None: the ledger's columns are null.
        self.effects: np.ndarray | None = None
        self.worker: np.ndarray | None = None
        self.rate_wait: np.ndarray | None = None
        self.attempt_log: AttemptLog = None  # worker-level: one row per attempt (:func:`.worker_loop.worker_loop`)
        self.window: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None  # (start, end, has a window)
        # The instant that opened each data-interval schedule's first interval (schedule index -> µs):
        # :func:`.occurrences.interval_openings` drops that row, :mod:`.data_windows` starts the first window there.
        self.openings: dict[int, int] = {}
        # Backfill runs (:func:`.occurrences.backfill_rows`): which rows, and each row's logical instant
        # (its occurrence's; for a backfill run not its due, which is its arrival). None: no backfill.
        self.backfill: np.ndarray | None = None
        self.logical: np.ndarray | None = None
        default = Policy()
        pol = policies if policies is not None else [s.policy if isinstance(s.policy, Policy) else default
                                                     for s in scheds]
        self.pol = pol
        tick = scenario.tick_us
        # Each table over the distinct policy objects, then gathered: a fleet shares a few (a sweep's
        # combination always does), and a table is then a few calls, not one per schedule.
        distinct: dict[int, Policy] = {}
        for p in pol:
            distinct.setdefault(id(p), p)
        place = {k: i for i, k in enumerate(distinct)}
        of = np.array([place[id(p)] for p in pol], dtype=np.intp)
        arr = lambda f, dt=np.int64: np.array([f(p) for p in distinct.values()], dtype=dt)[of]  # noqa: E731
        self.p_jitter = arr(lambda p: p.jitter_us)
        self.p_grace = arr(lambda p: tick if p.misfire_grace_us is None else p.misfire_grace_us)
        self.p_maxlate = arr(lambda p: BIG if p.max_lateness_us is None else p.max_lateness_us)
        self.p_edge = arr(lambda p: EDGE[p.limit_edge], np.int8)
        self.p_catchup = arr(lambda p: CATCHUP[p.catchup], np.int8)
        self.p_limit = arr(lambda p: p.limit or 0)
        self.p_maxmissed = arr(lambda p: BIG if p.max_missed is None else p.max_missed)
        self.p_in_turn = arr(lambda p: p.backlog == "in_turn", bool)
        self.p_recovery = arr(lambda p: p.recovery_wake, bool)
        self.p_sleep_end = arr(lambda p: p.suspend_wake == "sleep_end", bool)
        self.p_down_missed = arr(lambda p: p.down_is_missed, bool)
        self.p_suspend_catchup = arr(lambda p: CATCHUP[p.suspend_catchup or p.catchup], np.int8)
        self.p_suspend_limit = arr(lambda p: BIG if p.suspend_limit_us is None else p.suspend_limit_us)
        self.p_overlap = arr(lambda p: OVERLAP[p.overlap], np.int8)
        # How many runs may be going before the overlap mode applies (0: any number, with "allow").
        self.p_max_active = arr(lambda p: p.max_active or (0 if p.overlap == "allow" else 1))
        self.p_cost = arr(lambda p: float(p.cost), np.float64)
        self.p_dur = arr(lambda p: p.duration_us)
        self.p_sigma = arr(lambda p: p.duration.sigma if isinstance(p.duration, LogNormal) else 0.0, np.float64)
        self.p_priority = arr(lambda p: p.priority)
        budgets = {b.account: i for i, b in enumerate(scenario.budgets)}
        self.p_account = arr(lambda p: budgets.get(p.account, -1) if p.account else -1)
        self.p_onbudget_wait = arr(lambda p: p.on_budget == "wait", bool)
        self.key = keys if keys is not None else schedule_keys(scheds)
        self.rel = get_release(scenario.release)
        self.budget_tables = [self.rel.table(b.zone) for b in scenario.budgets]
        self.outages = tuple((o.start_us, o.end_us) for o in scenario.outages)
        self.suspends = np.array([o.kind == "suspend" for o in scenario.outages], dtype=bool)
        self.pauses = self._pause_spans()

        # Rows without an instant are settled now, with the reason their notes give.
        no_run, reason = base["no_run"]
        if len(no_run):
            self.state[no_run] = S["skipped"]
            self.reason[no_run] = reason

    def per_row(self, table: np.ndarray, rows: np.ndarray | None = None):
        """``table[s]`` for each row (or for ``rows``), or the scalar when every schedule agrees.

        Fleets usually share one policy: a scalar spares an n-row gather and temporary.
        """
        if len(table) and (table == table[0]).all():
            return table[0]
        return table[self.s] if rows is None else table[self.s[rows]]

    def costs(self) -> np.ndarray:
        """Cost per row: every started run (a cancelled one too) is charged per attempt; the rest nothing."""
        out = np.zeros(self.n, dtype=np.float64)
        np.copyto(out, charge(self.per_row(self.p_cost), self.attempts_n), where=self.started)
        return out

    def chunks(self):
        """Row ranges ``[lo, hi)`` of a few MB each, in frame (instant) order.

        The per-schedule steps stream over these instead of sorting whole
        columns: a chunk's sort and gathers stay in cache, and its temporaries
        are small and reused by the allocator, so the cost per row does not
        grow with the fleet. A chunk spans several times the number of
        schedules, so per-chunk work on per-schedule arrays stays a small share.
        """
        rows, per_schedule = self.chunk_rows
        step = max(rows, per_schedule * len(self.scheds))
        for lo in range(0, self.n, step):
            yield lo, min(self.n, lo + step)

    def by_schedule(self) -> np.ndarray:
        """Every row in schedule order, row (instant) order within: a stable sort of ``s``, the same for every
        run state of one frame (a sweep's combinations), so found once."""
        if "by_schedule" not in self.base:
            self.base["by_schedule"] = np.argsort(self.s, kind="stable")
        return cast(np.ndarray, self.base["by_schedule"])

    def settle_rows(self, rows: np.ndarray, t: np.ndarray, occupancy: np.ndarray, ok: np.ndarray) -> None:
        """Rows ``rows`` start at ``t`` and occupy their schedule for ``occupancy``: done, or failed."""
        self.start[rows] = t
        self.finish[rows] = t + occupancy
        self.started[rows] = True
        self.state[rows] = np.where(ok, S["done"], S["failed"]).astype(np.int8)
        self.reason[rows] = np.where(ok, NONE, R["retries_exhausted"]).astype(np.int8)

    def _pause_spans(self) -> dict[int, list[tuple[int, int]]]:
        """Half-open paused spans ``[Pause, Resume)`` per schedule index (only schedules ever paused)."""
        spans: dict[str | None, list[list[int]]] = {}
        for ev in self.sc.events:
            if isinstance(ev, Pause):
                spans.setdefault(ev.schedule_id, []).append([ev.at_us, BIG])
            elif isinstance(ev, Resume):
                for key in ([ev.schedule_id] if ev.schedule_id is not None else list(spans)):
                    for span in spans.get(key, []):
                        if span[1] == BIG and span[0] <= ev.at_us:
                            span[1] = ev.at_us
        out: dict[int, list[tuple[int, int]]] = {}
        if not spans:
            return out
        for i, s in enumerate(self.scheds):
            mine = spans.get(None, []) + spans.get(s.id, [])
            if mine:
                out[i] = sorted((a, b) for a, b in mine)
        return out


def _no_run_reasons(frame: pl.DataFrame, has_due: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The rows without an instant, and the reason their notes give (``skipped`` is their state)."""
    no_run = np.flatnonzero(~has_due)
    if not len(no_run):
        return no_run, np.zeros(0, dtype=np.int8)
    notes = frame["notes"].gather(pl.Series(no_run))
    merged = notes.list.eval(pl.element().str.starts_with("merged_into:")).list.any().to_numpy()
    excluded = notes.list.eval(pl.element().str.starts_with("excluded:")).list.any().to_numpy()
    # A scheduler whose own walk stalled (calsim.emulation: dst_stuck:<scheduler>) never runs it again.
    stuck = notes.list.eval(pl.element().str.starts_with("dst_stuck:")).list.any().to_numpy()
    reason = np.where(merged, R["merged"], np.where(excluded, R["calendar"],
                                                    np.where(stuck, R["stuck"], R["dst_gap"])))
    return no_run, reason.astype(np.int8)


def us_of(col: pl.Series) -> np.ndarray:
    """Epoch microseconds of a Datetime column, nulls as 0.

    Without nulls, or with 0 already in their slots, this is a read-only view of the
    frame's own buffer (no copy).
    """
    dtype = col.dtype
    assert isinstance(dtype, pl.Datetime)
    if dtype.time_unit != "us":
        col = col.dt.cast_time_unit("us")
    phys = col.to_physical()
    if phys.null_count():
        # Expansion leaves 0 in the slots of its nulls: then the values buffer is the answer as it
        # is, and a filled copy of a 10M-row column (80 MB at the peak) is not needed.
        arr = phys.rechunk().to_arrow()
        values = np.frombuffer(arr.buffers()[1], np.int64, len(arr), arr.offset * 8)
        if not values[phys.is_null().to_numpy()].any():
            return values
        phys = phys.fill_null(0)
    return phys.to_numpy()
