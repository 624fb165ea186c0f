"""The outcome measures of one ledger: what a policy costs and what it leaves undone, as one row of numbers.

:func:`calsim.sweep` gives one row of these per combination, and
:func:`calsim.plots.tradeoff` draws two of them against each other:

``done``, ``late`` and ``missed`` (occurrences meant to run: on time, late,
never; :func:`.views.classified`), ``coalesced``, ``skipped``, ``expired``,
``failed`` (ledger states), ``longest_gap_s`` (the longest silence of any
schedule, :func:`.views.gaps`), ``lateness_p50_s``/``_p95_s``/``_max_s`` (of
started runs), ``cost``, ``cost_max_period`` (the most any budget's account
spent in one of its periods, in the budget's own calendar; without budgets
the most spent in a UTC day) beside ``worst_budget_limit`` (that budget's
limit), ``budget_waits`` and ``budget_wait_max_s``, ``duplicate_effects``
(effects beyond the first, worker-level scenarios), ``windows_never`` and
``windows_twice`` (data windows never and twice processed,
:func:`.views.coverage`). Spans are in seconds (floats; null when nothing
started), so that charts and sorting read them as numbers.

**Why numpy here, when the views are polars.** A sweep measures every
combination, and measuring through the views (a lazy plan with windows over
``schedule_id`` per ledger) took longer than settling the combination. The
status rule (:func:`.views.classified`: a run is late once it starts at or
after its schedule's next distinct due instant) and the gap rule
(:func:`.views.gaps`) are computed here on the ledger's integer schedule codes
with sorts and searches; ``tests/simulation/test_measures.py`` holds them to
the views on ledgers of every kind. Coverage with data windows or repeated
effects (worker-level scenarios) is the view's own.

>>> import calsim
>>> job = calsim.Schedule("h", "UTC", "2026-01-01T00:00", "0 * * * *")
>>> sc = calsim.Scenario("x", [job], "2026-01-01T00:00Z", "2026-01-02T00:00Z",
...                      outages=[calsim.Outage("2026-01-01T02:30Z", "2026-01-01T06:30Z")])
>>> m = measures(calsim.simulate(sc, progress=False))
>>> m["done"], m["late"], m["missed"], m["longest_gap_s"] / 3600
(21, 3, 0, 4.5)
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, cast

import numpy as np
import polars as pl

from ..durations import duration_us
from ..times import DAY_US, US
from ..tz.release import ReleaseLike
from .ledger import Ledger
from .ledger_schema import BY_DESIGN_REASONS, LEDGER_REASONS, LEDGER_STATES
from .scenario import Budget, Scenario
from .state import us_of

__all__ = ["measures", "measures_of_run", "MEASURES"]

#: The measure columns, in order.
MEASURES = ("done", "late", "missed", "coalesced", "skipped", "expired", "failed", "longest_gap_s",
            "lateness_p50_s", "lateness_p95_s", "lateness_max_s", "cost", "cost_max_period",
            "worst_budget_limit", "budget_waits", "budget_wait_max_s", "duplicate_effects", "windows_never",
            "windows_twice")

_DONE = LEDGER_STATES.index("done")
_BY_DESIGN = np.array([r in BY_DESIGN_REASONS for r in LEDGER_REASONS], dtype=bool)


def measures(ledger: Ledger | pl.DataFrame, scenario: Scenario | None = None, *, late_after: object = None,
             memo: dict | None = None) -> dict[str, Any]:
    """The measures of one ledger (module docstring), as a dict; ``scenario`` gives its budgets (default: the
    ledger's own); ``late_after`` as in :meth:`calsim.Ledger.gaps`.

    ``memo``: a dict kept by a caller that measures many ledgers of the same rows (a sweep's combinations):
    what depends on the rows only (each row's next due instant, the rows of each account) is found once and
    reused while the rows, their schedules and accounts are the same (checked each time)."""
    from . import views

    # A simulation's own frame keeps schedule_id as integer codes: read them as they are.
    frame = ledger._frame if isinstance(ledger, Ledger) else ledger
    scenario = scenario if scenario is not None else getattr(ledger, "scenario", None)
    accounts = ledger.accounts if isinstance(ledger, Ledger) else None
    sid, ids = _codes(frame["schedule_id"])
    meant = ((frame["kind"] == "scheduled") & frame["due_utc"].is_not_null()).to_numpy()
    reason = frame["reason"].to_physical().fill_null(len(LEDGER_REASONS)).to_numpy()
    meant &= ~np.append(_BY_DESIGN, False)[reason]
    effects = frame["effects"].drop_nulls().to_numpy()
    plain = frame["window_end_utc"].null_count() == frame.height and not len(effects)
    coverage = None if plain else views.coverage(frame, late_after=late_after)
    cols = _Columns(sid, ids, us_of(frame["due_utc"]), meant, frame["state"].to_physical().to_numpy(),
                    frame["started_utc"].is_not_null().to_numpy(), us_of(frame["started_utc"]),
                    frame["lateness_s"].to_numpy(), frame["cost"].to_numpy(), frame["budget_wait_s"].to_numpy(),
                    effects, coverage)
    return _measure(cols, scenario, accounts, late_after, memo)


def measures_of_run(run: Any, scenario: Scenario, accounts: dict[str, str], *, late_after: object = None,
                    memo: dict | None = None) -> dict[str, Any] | None:
    """:func:`measures` of the ledger the settled columns ``run`` (a :class:`.state.RunState`) would make, read
    from the columns themselves (a sweep builds no ledger frame it does not keep); None when that ledger would
    hold more than the columns (manual runs are the caller's to rule out), i.e. worker-level effects or data
    windows (then measure the ledger)."""
    if run.effects is not None or run.window is not None:
        return None
    memo = memo if memo is not None else {}
    if memo.get("codes", (None,))[0] is not run.scheds:  # (id-level codes: revisions of a schedule are one)
        code: dict[str, int] = {}
        per_sched = np.array([code.setdefault(s.id, len(code)) for s in run.scheds], dtype=np.int64)
        memo["codes"] = (run.scheds, per_sched, list(code))
    _, per_sched, ids = memo["codes"]
    # (the engine's reason codes are LEDGER_REASONS' places, -1 for none: the appended entry)
    meant = run.has_due & ~np.append(_BY_DESIGN, False)[run.reason]
    if run.backfill is not None:
        meant &= ~run.backfill
    started = run.started
    # (lateness and cost exactly as the ledger frame computes them: ledger.ledger_frame)
    lateness = np.subtract(run.start, run.eligible) / 1e6
    cols = _Columns(per_sched[run.s], ids, run.due, meant, run.state, started, run.start, lateness, run.costs(),
                    run.budget_wait, np.zeros(0, dtype=np.int64), None)
    return _measure(cols, scenario, accounts, late_after, memo)


@dataclass
class _Columns:
    """A ledger's columns the measures read, as numpy arrays (row for row)."""

    sid: np.ndarray  # schedule id codes ...
    ids: list[str]  # ... and the id of each code
    due: np.ndarray  # µs (any value where the row has none)
    meant: np.ndarray  # occurrences meant to run (:func:`.views.classified`)
    state: np.ndarray  # LEDGER_STATES codes
    started: np.ndarray
    start: np.ndarray  # µs, where started
    lateness: np.ndarray  # s, where started
    cost: np.ndarray
    budget_wait: np.ndarray  # s
    effects: np.ndarray  # of the rows that have a count (worker-level)
    coverage: pl.LazyFrame | None  # :func:`.views.coverage`, when data windows or repeated effects make it needed


def _measure(cols: _Columns, scenario: Scenario | None, accounts: dict[str, str] | None, late_after: object,
             memo: dict | None) -> dict[str, Any]:
    limit = None if late_after is None else duration_us(late_after, "late_after", allow_zero=True)
    budgets: tuple[Budget, ...] = tuple(scenario.budgets) if scenario is not None else ()
    if budgets and accounts is None:
        from .scenario_records import accounts as account_of

        accounts = account_of(scenario.schedules) if scenario is not None else {}
    sid, due, meant, started, start = cols.sid, cols.due, cols.meant, cols.started, cols.start
    rows = _rows(memo, sid, cols.ids, due, meant, budgets, accounts or {})
    m_start = start[meant]
    done = cols.state[meant] == _DONE
    late = done & rows.has_next & (m_start >= rows.next_due)
    if limit is not None:
        late |= done & (np.round(cols.lateness[meant] * US) > limit)
    gap = _longest_gap(sid[meant], due[meant], ~done | late, done, m_start, rows.order)
    lat = pl.Series(cols.lateness[started], dtype=pl.Float64)
    waits = cols.budget_wait[cols.budget_wait > 0]
    if cols.coverage is None:
        # No data windows and no repeated effects: each window is its own run's (views.windows_processed), so
        # never processed is never run and nothing is processed twice.
        never, twice = int((~done).sum()), 0
    else:
        cov = cols.coverage.select(pl.col("never").sum(), pl.col("twice").sum())
        never, twice = (int(x or 0) for x in cov.collect().row(0))
    by_state = np.bincount(cols.state, minlength=len(LEDGER_STATES))
    worst, budget_limit = _worst_period(rows, started, start, cols.cost, budgets,
                                        scenario.release if scenario is not None else None)
    return {
        "done": int((done & ~late).sum()), "late": int(late.sum()), "missed": int((~done).sum()),
        **{s: int(by_state[LEDGER_STATES.index(s)]) for s in ("coalesced", "skipped", "expired", "failed")},
        "longest_gap_s": _seconds(gap, US),
        "lateness_p50_s": _seconds(lat.quantile(0.5) if len(lat) else None),
        "lateness_p95_s": _seconds(lat.quantile(0.95) if len(lat) else None),
        "lateness_max_s": _seconds(lat.max() if len(lat) else None),
        "cost": float(np.sum(cols.cost)), "cost_max_period": worst, "worst_budget_limit": budget_limit,
        "budget_waits": len(waits), "budget_wait_max_s": _seconds(waits.max() if len(waits) else None),
        "duplicate_effects": int(np.clip(cols.effects - 1, 0, None).sum()),
        "windows_never": never, "windows_twice": twice,
    }


@dataclass
class _Rows:
    """What the measures need that depends on a ledger's rows only, not on how they were settled."""

    sid: np.ndarray  # (checked, with the three below, before a memo is reused)
    due: np.ndarray
    meant: np.ndarray
    accounts: tuple
    has_next: np.ndarray  # per row meant to run: its schedule has a later distinct due instant ...
    next_due: np.ndarray  # ... which is this one
    order: np.ndarray  # the rows meant to run by (schedule, due instant)
    acct: np.ndarray  # each row's account: its place in ``accounts[0]`` (the budgets' accounts), -1 for none
    calendars: dict = field(default_factory=dict)  # (zone, period kind) -> :meth:`calendar`

    def calendar(self, names: list[str]) -> tuple[np.ndarray, list[int]]:
        """Each row's place among the accounts ``names`` (a calendar's budgets: -1 for another or none) and
        those accounts' places in ``accounts[0]``, found once per calendar."""
        key = tuple(names)
        hit = self.calendars.get(key)
        if hit is None:
            accts = sorted({self.accounts[0].index(a) for a in names})
            local = np.full(len(self.accounts[0]) + 1, -1, dtype=np.int64)  # (the last entry: no account)
            local[accts] = np.arange(len(accts))
            hit = self.calendars[key] = (local[self.acct], accts)
        return hit


def _rows(memo: dict | None, sid: np.ndarray, ids: list[str], due: np.ndarray, meant: np.ndarray,
          budgets: tuple[Budget, ...], accounts: dict[str, str]) -> _Rows:
    names = sorted({b.account for b in budgets})
    seen = memo.get("which") if memo is not None else None
    if seen is not None and seen[0] is accounts and seen[1] is ids and seen[2] == names:
        which = seen[3]
    else:
        which = (tuple(names), tuple(accounts.get(i) for i in ids))
        if memo is not None:
            memo["which"] = (accounts, ids, names, which)
    got = memo.get("rows") if memo is not None else None
    if got is not None and got.accounts == which and np.array_equal(got.sid, sid) \
            and np.array_equal(got.due, due) and np.array_equal(got.meant, meant):
        return cast(_Rows, got)
    has_next, next_due, order = _next_due(sid[meant], due[meant])
    code = {a: i for i, a in enumerate(names)}
    acct = np.array([code.get(accounts.get(i, ""), -1) for i in ids], dtype=np.int64)[sid]
    rows = _Rows(sid, due, meant, which, has_next, next_due, order, acct)
    if memo is not None:
        memo["rows"] = rows
    return rows


def _next_due(sid: np.ndarray, due: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """For occurrences meant to run (any order): whether its schedule has a later *distinct* due instant, and
    which (two rows due at once share the next one): a run starting at or after it is late
    (:func:`.views.classified`); and the rows' order by (schedule, due instant)."""
    n = len(sid)
    if not n:
        return np.zeros(0, dtype=bool), np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
    key, = _keys((sid, due))
    order = np.argsort(key)  # (rows tied on schedule and due share their next due: any order among them)
    s_key, s_sid, s_due = key[order], sid[order], due[order]
    # Runs of equal (schedule, due): each row's next distinct due is the next run's, within its schedule.
    first = np.ones(n, dtype=bool)
    first[1:] = s_key[1:] != s_key[:-1]
    heads = np.flatnonzero(first)
    group = np.cumsum(first) - 1
    has_next = np.zeros(len(heads), dtype=bool)
    has_next[:-1] = s_sid[heads[1:]] == s_sid[heads[:-1]]
    next_due = np.zeros(len(heads), dtype=np.int64)
    next_due[:-1] = s_due[heads[1:]]
    h, d = np.empty(n, dtype=bool), np.empty(n, dtype=np.int64)
    h[order], d[order] = has_next[group], next_due[group]
    return h, d, order


def _longest_gap(sid: np.ndarray, due: np.ndarray, missing: np.ndarray, ran: np.ndarray, start: np.ndarray,
                 order: np.ndarray | None = None) -> int | None:
    """The longest span, over the ``missing`` rows, from the last start of a ``ran`` row of the same schedule at
    or before the row's due instant to the first one strictly after it (µs; None: no row has both).

    ``order``: the rows by (schedule, due instant), when known: a schedule's runs usually start in the order
    they were due, so the runs taken in that order are often sorted by start already (checked; else sorted)."""
    if not missing.any() or not ran.any():
        return None
    # (queries in key order too: a searchsorted of sorted queries walks the runs once, not at random)
    r_pos, q_pos = (order[m[order]] for m in (ran, missing)) if order is not None else (ran, missing)
    q_sid, q_t, r_sid, r_t = sid[q_pos], due[q_pos], sid[r_pos], start[r_pos]
    q_key, r_key = _keys((q_sid, q_t), (r_sid, r_t))
    if len(r_key) > 1 and not (r_key[1:] >= r_key[:-1]).all():
        o = np.argsort(r_key)
        r_key, r_sid, r_t = r_key[o], r_sid[o], r_t[o]
    after = np.searchsorted(r_key, q_key, side="right")  # the first run strictly after; the one before it is
    before = after - 1  # the last at or before
    ok = (before >= 0) & (after < len(r_key))
    before, after, q_sid = before[ok], after[ok], q_sid[ok]
    ok = (r_sid[before] == q_sid) & (r_sid[after] == q_sid)
    return int((r_t[after[ok]] - r_t[before[ok]]).max()) if ok.any() else None


def _keys(*pairs: tuple[np.ndarray, np.ndarray]) -> list[np.ndarray]:
    """One int64 sort key per ``(schedule, instant)`` pair of arrays, all on one scale: instants are offsets
    from the earliest when schedules x span fit in 62 bits (a month of µs fits a million schedules), else
    their ranks among all the instants."""
    times = [t for _, t in pairs]
    lo = min(int(t.min()) for t in times)
    span = max(int(t.max()) for t in times) - lo + 1
    if max(int(s.max()) for s, _ in pairs) + 1 < (1 << 62) // span:
        return [s * span + (t - lo) for s, t in pairs]
    uniq, rank = np.unique(np.concatenate(times), return_inverse=True)
    ranks = np.split(rank.astype(np.int64), np.cumsum([len(t) for t in times])[:-1])
    return [s * len(uniq) + r for (s, _), r in zip(pairs, ranks)]


def _worst_period(rows: _Rows, started: np.ndarray, start: np.ndarray, cost: np.ndarray,
                  budgets: tuple[Budget, ...], release: ReleaseLike) -> tuple[float | None, float | None]:
    """(the most any budget's account spent in one of its periods, that budget's limit) over started runs;
    without budgets the most spent in a UTC day and None."""
    from ..tz.release import release as get_release
    from .run_rules import period_index

    if not started.any():
        return None, None
    if not budgets:
        day = start[started] // DAY_US
        return float(np.bincount(day - day.min(), weights=cost[started]).max()), None
    rel = get_release(release)
    names = rows.accounts[0]
    spent = np.full(len(budgets), -1.0)  # the most each budget's account spent in one of its periods
    # Budgets of one calendar (zone and period kind) together: one period index over their started rows.
    calendars: dict[tuple[str, str], list[int]] = {}
    for i, b in enumerate(budgets):
        calendars.setdefault((b.zone, b.period), []).append(i)
    for (zone, period), members in calendars.items():
        code, accts = rows.calendar([budgets[i].account for i in members])  # (each row's account, 0.., or -1)
        mine = np.flatnonzero(started & (code >= 0))
        if not len(mine):
            continue
        place = code[mine]
        idx = period_index(rel.table(zone), period, start[mine])
        idx -= idx.min()
        # (per account and period, the costs summed in row order: as one bincount per account would)
        sums = np.bincount(place * (int(idx.max()) + 1) + idx, weights=cost[mine],
                           minlength=len(accts) * (int(idx.max()) + 1)).reshape(len(accts), -1)
        ran = np.bincount(place, minlength=len(accts)) > 0
        most = {a: m for a, m, r in zip(accts, sums.max(axis=1).tolist(), ran.tolist()) if r}
        for i in members:
            spent[i] = most.get(names.index(budgets[i].account), -1.0)
    if not (spent >= 0).any():
        return 0.0, float(max(b.limit for b in budgets))
    first = int(np.argmax(spent))  # (the first budget to reach the most, as budgets are read in order)
    return float(spent[first]), float(budgets[first].limit)


def _codes(ids: pl.Series) -> tuple[np.ndarray, list[str]]:
    """Schedule ids as integer codes and the id of each code (a simulation's frame holds them as an Enum)."""
    if not isinstance(ids.dtype, pl.Enum):
        ids = ids.cast(pl.String)
        ids = ids.cast(pl.Enum(ids.unique().drop_nulls().sort()))
    return ids.to_physical().to_numpy().astype(np.int64), cast(pl.Enum, ids.dtype).categories.to_list()


def _seconds(value: Any, per_second: float = 1.0) -> float | None:
    return None if value is None else round(float(value) / per_second, 6)
