"""The local engine: a scenario's occurrences settled step by step into a :class:`~calsim.Ledger`.

Run semantics are DESIGN.md §5; each rule is defined once in :mod:`.run_rules`.
The steps, in order:

1. :mod:`.occurrences`: expansion with revisions and tzdata upgrades spliced in;
2. :mod:`.columns`: eligibility (jitter), pickup (wake-ups, outages), pauses
   and revision boundaries, missed runs and catch-up, attempts and durations,
   each over every row at once;
3. rows that overlap, budgets, capacity or a backlog run in turn make
   order-dependent (:mod:`.order`) are settled in order: budget-bound accounts of the common
   kind period by period in columns (:mod:`.budget_periods`), the rest by the
   event loop (:mod:`.event_loop`); every other row starts at its pickup;
4. manual runs (:class:`~calsim.Trigger`) and the ledger frame.

Every occurrence of the horizon gets exactly one terminal row; the scheduler
is followed past the horizon's end for occurrences it picks late (an outage
running past the end), and a run still waiting for budget at the end is
``skipped``/``budget``.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import cast

import numpy as np
import polars as pl

import calsim.simulation.columns as columns
from .order import needs_order
from .budget_periods import budget_periods
from .event_loop import event_loop
from .ledger import Ledger, ledger_frame
from .occurrences import backfill_rows, interval_openings, manual_rows, occurrences, restarted_intervals
from .scenario_records import accounts
from .scenario import Backfill, Scenario
from .state import RunState, schedule_keys
from .data_windows import data_windows
from .worker_loop import worker_loop

__all__ = ["run_local", "prepare", "settle_prepared", "settle_run", "ledger_of", "Prepared", "SETTLE"]

# How order-dependent rows are settled: "columns" (default) uses the column
# paths wherever they are exact; "events" sends every row that runs through
# the ordered event loop, the reference the column paths are tested against.
SETTLE = ("columns", "events")


def run_local(scenario: Scenario, *, settle: str = "columns", progress: bool | None = None) -> Ledger:
    """Simulate ``scenario`` in this process (see :func:`calsim.simulate`).

    >>> import calsim
    >>> from calsim.simulation.engine import run_local
    >>> s = calsim.Schedule("h", "UTC", "2026-01-01T00:00", "FREQ=HOURLY", policy=calsim.Policy(duration="2h",
    ...                     overlap="skip"))
    >>> sc = calsim.Scenario("x", [s], "2026-01-01T00:00Z", "2026-01-01T06:00Z")
    >>> run_local(sc).frame["state"].to_list() == run_local(sc, settle="events").frame["state"].to_list()
    True
    """
    if isinstance(scenario.capacity, dict):
        return _pooled(scenario, settle, progress)
    bar = _progress(progress, total=5, desc=f"simulate {scenario.name}")
    prepared = prepare(scenario, settle=settle)
    bar.update(1)
    return settle_prepared(scenario, prepared, settle=settle, bar=bar)


def _pooled(scenario: Scenario, settle: str, progress: bool | None) -> Ledger:
    """A scenario with capacity pools (``capacity={"etl": 4, ...}``): each pool's schedules, and those of no
    pool, settled on their own with that pool's slots as the capacity (they share nothing else:
    :func:`.couplings.pools_of` refuses pools coupled by a budget, a bucket or a breaker), the ledger their rows
    in the local order (:func:`.ledger.ledger_order`), as the Dask engine's parts read back are."""
    from .couplings import pools_of, sub_scenario
    from .ledger import ledger_order

    parts = [run_local(replace(sub_scenario(scenario, set(ids)), capacity=slots), settle=settle, progress=progress)
             for slots, ids in pools_of(scenario) if ids]
    frame = ledger_order(pl.concat([p.frame for p in parts])) if parts else \
        run_local(replace(scenario, capacity=None), settle=settle, progress=progress).frame
    ledger = Ledger(scenario.name, frame, {k: v for p in parts for k, v in p.accounts.items()}, scenario)
    for p in parts:
        for k, n in p.settled.items():
            ledger.settled[k] = ledger.settled.get(k, 0) + n
    logs = [p for p in parts if p.attempt_log is not None]
    if logs:
        ledger.attempt_log = lambda: pl.concat([cast(pl.DataFrame, p.attempt_log) for p in logs]) \
            .sort("started_utc", maintain_order=True)
    return ledger


@dataclass
class Prepared:
    """A scenario's occurrence rows before any run rule (:func:`prepare`): what scenarios that differ only in
    their run rules (catch-up, lateness, overlap, budgets, capacity: :func:`calsim.sweep`) share."""

    frame: pl.DataFrame
    scheds: list
    s_of: np.ndarray
    tz_of: np.ndarray
    boundaries: list
    openings: dict
    n_scheduled: int
    logical: np.ndarray | None
    keys: np.ndarray  # (each schedule's random key: :func:`.state.schedule_keys`)
    base: dict = field(default_factory=dict)  # (the run states' columns read from the frame: :class:`.RunState`)


def prepare(scenario: Scenario, *, settle: str = "columns") -> Prepared:
    """Step 1: the occurrence rows (expansion, revisions, tzdata upgrades, re-anchored intervals, data-interval
    openings, backfill runs)."""
    frame, scheds, s_of, tz_of, boundaries = occurrences(scenario)
    frame, s_of, tz_of = restarted_intervals(scenario, scheds, frame, s_of, tz_of)
    frame, s_of, tz_of, openings = interval_openings(scenario, scheds, frame, s_of, tz_of)
    n_scheduled = frame.height
    frame, s_of, tz_of, logical = backfill_rows(scenario, scheds, frame, s_of, tz_of, _ran(scenario, settle))
    return Prepared(frame, scheds, s_of, tz_of, boundaries, openings, n_scheduled, logical, schedule_keys(scheds))


def settle_prepared(scenario: Scenario, prepared: Prepared, *, settle: str = "columns", bar=None,
                    policies: list | None = None) -> Ledger:
    """Steps 2-4 on prepared rows: the ledger. ``policies`` (default the prepared schedules' own) are the run
    policies of the prepared schedules, in their order (a sweep's combination); ``scenario`` may differ from
    the prepared one in its run rules only (budgets, capacity, workers, seed), never in what expands."""
    bar = bar if bar is not None else _NoBar()
    run, manual = settle_run(scenario, prepared, settle=settle, bar=bar, policies=policies)
    bar.update(1)
    ledger = ledger_of(scenario, run, manual)
    bar.update(1)
    bar.close()
    return ledger


def ledger_of(scenario: Scenario, run: RunState, manual: list[dict]) -> Ledger:
    """Step 4's ledger from settled columns (:func:`settle_run`)."""
    ledger = Ledger(scenario.name, ledger_frame(scenario.name, run, manual), accounts(run.scheds, run.pol), scenario)
    ledger.settled = dict(run.settled)
    ledger.attempt_log = run.attempt_log
    return ledger


def settle_run(scenario: Scenario, prepared: Prepared, *, settle: str = "columns", bar=None,
               policies: list | None = None) -> tuple[RunState, list[dict]]:
    """Steps 2-3 and the manual runs, on prepared rows (as :func:`settle_prepared`): the settled columns,
    before any ledger frame is built (a sweep measures them as they are)."""
    bar = bar if bar is not None else _NoBar()
    scheds = prepared.scheds
    frame, s_of, tz_of = prepared.frame, prepared.s_of, prepared.tz_of
    run = RunState(scenario, scheds, frame, s_of, tz_of, prepared.boundaries, policies, prepared.keys, prepared.base)
    run.openings = prepared.openings
    if prepared.logical is not None:
        run.backfill, run.logical = np.arange(run.n) >= prepared.n_scheduled, prepared.logical
    columns.eligibility(run)
    columns.pickup(run)
    columns.catch_up(run)
    bar.update(1)
    if scenario.worker_level:
        # Workers, crashes, rate limits, breakers, duplicate schedulers: one attempt at a time.
        _notice_compile(bar)
        worker_loop(run)
        ordered = None
    else:
        columns.attempts(run)
        ordered = needs_order(run, everything=settle == "events")
        columns.settle_in_place(run, run.run if ordered is None else run.run & ~ordered)
    if ordered is not None:
        rows = np.flatnonzero(run.run & ordered)
        del ordered
        if len(rows) and settle == "columns":
            n = len(rows)
            rows = budget_periods(run, rows)
            run.settled["budget_periods"] += n - len(rows)
        if len(rows):
            _notice_compile(bar)
            event_loop(run, rows)
    _notice_compiled(bar)
    bar.update(1)
    manual = manual_rows(scenario, scheds, run)
    data_windows(run)
    return run, manual


def _ran(scenario: Scenario, settle: str) -> pl.DataFrame | None:
    """For a scenario with :class:`~calsim.Backfill` events: the occurrences each backfill finds with a run
    (the scenario settled once without its backfills: rows that started before the backfill's ``at``, or are
    due at or after it), as ``schedule_id``, ``nominal_local``, ``fold``, ``at``; None without a backfill.

    A backfill, as Airflow's default ``reprocess_behavior="none"``, runs only the logical dates without a run:
    which those are is known once the scenario has run up to the backfill, so a scenario with backfills is
    settled twice (the backfills arrive after the rows they look at, so the first settling stands for them).
    """
    fills = [ev for ev in scenario.events if isinstance(ev, Backfill)]
    if not fills:
        return None
    first = run_local(replace(scenario, events=tuple(e for e in scenario.events if not isinstance(e, Backfill))),
                      settle=settle, progress=False).frame
    parts = []
    for ev in fills:
        at = ev.at_us if ev.at_us is not None else scenario.start_us
        t = pl.lit(at).cast(pl.Datetime("us", "UTC"))
        parts.append(first.filter((pl.col("schedule_id") == ev.schedule_id) & (pl.col("kind") == "scheduled")
                                  & ((pl.col("started_utc") < t) | (pl.col("due_utc") >= t)))
                     .select(pl.col("schedule_id").cast(pl.String), "nominal_local", pl.col("fold").cast(pl.Int8),
                             pl.lit(at, pl.Int64).alias("at")))
    return pl.concat(parts)


class _NoBar:
    """No progress bar: ``quiet`` (``progress=False``, or a caller's own steps) says nothing at all; otherwise
    (no terminal or notebook to draw a bar in, e.g. a CI log) the compile notice is still one line on stderr."""

    def __init__(self, quiet: bool = True) -> None:
        self.quiet = quiet

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
        return _NoBar(quiet=False)
    from tqdm.auto import tqdm

    return tqdm(total=total, desc=desc, leave=False)


#: Said once per process when the ordered loop is about to be compiled (numba's cache holds no code for it).
COMPILE_NOTICE = "calsim: compiling the simulation (first use, ~30 s)"
_COMPILING = ": compiling (first use, ~30 s)"  # what the bar's description gets meanwhile
_noticed = False


def _notice_compile(bar) -> None:
    """Before the compiled loop (:mod:`.worker_kernel`) first runs: when numba must compile it (its cache is empty
    for this code: a fresh install, a new ``NUMBA_CACHE_DIR``, a changed rule), say so, as the first simulation
    would otherwise sit silently at 2/5 for half a minute: one line on stderr (the bar's own line in a
    terminal, :data:`COMPILE_NOTICE`), and the bar's description (a notebook's bar shows nothing else). Nothing
    with ``progress=False``; once per process."""
    global _noticed
    if _noticed or (isinstance(bar, _NoBar) and bar.quiet):
        return
    import sys

    import calsim.simulation.worker_kernel as kernel

    if not _must_compile(kernel.settle):
        return
    _noticed = True
    if isinstance(bar, _NoBar):
        print(COMPILE_NOTICE, file=sys.stderr, flush=True)
        return
    bar.set_description_str(f"{bar.desc}{_COMPILING}")  # (tqdm's set_description would add ': ' to desc)
    if not _in_notebook():
        bar.write(COMPILE_NOTICE, file=sys.stderr)


def _in_notebook() -> bool:
    """Whether this runs in a Jupyter kernel (an IPython shell with a kernel; ipykernel merely imported, as
    pytest's nbval does, is not one)."""
    import sys

    ipython = sys.modules.get("IPython")
    shell = getattr(ipython, "get_ipython", lambda: None)() if ipython is not None else None
    return shell is not None and hasattr(shell, "kernel")


def _notice_compiled(bar) -> None:
    """The bar's description back once the loop is compiled (see :func:`_notice_compile`)."""
    desc = getattr(bar, "desc", None)
    if isinstance(desc, str) and desc.endswith(_COMPILING):
        bar.set_description_str(desc.removesuffix(_COMPILING))


def _must_compile(dispatcher) -> bool:
    """Whether calling numba's ``dispatcher`` compiles it: nothing compiled in this process, and no entry for this
    function's code in numba's on-disk cache (the index file, ``<function>-<line>.pyXY.nbi``, beside the module
    in ``__pycache__`` or under ``NUMBA_CACHE_DIR``; numba itself reads it before compiling). Reading it is one
    small unpickling; on anything unexpected (another numba's layout), False: say nothing rather than
    something wrong."""
    import hashlib

    try:
        if dispatcher.overloads:
            return False
        index = dispatcher._cache._cache_file._load_index()  # {(signature, target, (code hash, ...)): file}
        code = hashlib.sha256(dispatcher.py_func.__code__.co_code).hexdigest()
        return not any(key[2][0] == code for key in index)
    except Exception:
        return False
