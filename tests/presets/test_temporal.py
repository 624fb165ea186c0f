"""``presets.temporal()`` against a port of Temporal's scheduler workflow (:mod:`oracles.temporal`).

Compared per (scenario, occurrence): whether the nominal time starts, and when
(Temporal's buffered starts carry their nominal time, so the attribution is
exact). Outages are the server or worker being down (``Outage(kind="down")``)
or its machine asleep (``kind="suspend"``): the workflow is durable either
way, its timers fire when it is back, so both kinds must give the same result.

The grid: an hourly UTC schedule, ``*/15`` and ``30,45 1`` across New York's
fall-back (2026-11-01, tzdata 2026f), every overlap policy, outages of 1 h and
3 days ending 30 s before, at and 30 s after an action time, catch-up windows
of 365 d (default) and 1 h, workflows of 5 and 50 min, ``after_outage`` both
ways for ``SKIP``; and an every-minute schedule after 3 days down, which
overflows the 1000-start buffer. The whole grid runs by default (a few
seconds); ``CALSIM_LONG=1`` changes nothing. ``pytest -s`` prints the counts.

Every disagreeing pair must be one of ``STATED`` (a narrow predicate over the
pair and the workflow's own record, plus the exact substring of the
``presets.temporal(...).notes`` entry that states it).
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import functools
from collections import Counter
from typing import Callable

import pytest

import calsim
from calsim import presets
from oracles import temporal as oracle
from oracles.instants import hm, iso, us_at

US = oracle.US
MIN = 60 * US
HOUR = 60 * MIN
DAY = 24 * HOUR
RELEASE = "2026f"
POLICIES = ["SKIP", "BUFFER_ONE", "BUFFER_ALL", "ALLOW_ALL", "CANCEL_OTHER", "TERMINATE_OTHER"]


_us, _iso, _show = us_at, iso, hm


# (name, zone, cron for calsim, minutes, hours, an action time F near which the outage ends)
SCHEDULES = {
    "hourly-UTC": ("UTC", "0 * * * *", {0}, set(range(24)), _us(2026, 6, 10, 10)),
    "every15-NY-fallback": ("America/New_York", "*/15 * * * *", {0, 15, 30, 45}, set(range(24)),
                            _us(2026, 11, 1, 7, 0)),                 # 02:00 EST, just after the repeated hour
    "0130-0145-NY-fallback": ("America/New_York", "30,45 1 * * *", {30, 45}, {1}, _us(2026, 11, 1, 6, 45)),
    "every1-UTC": ("UTC", "* * * * *", set(range(60)), set(range(24)), _us(2026, 6, 10, 10)),
}
GRID_SCHEDULES = ("hourly-UTC", "every15-NY-fallback", "0130-0145-NY-fallback")
LENGTHS = {"1h": HOUR, "3d": 3 * DAY}
RECOVERY = {"just_before": -30 * US, "at": 0, "just_after": 30 * US}
WINDOWS = {"default": None, "1h": HOUR}
DURATIONS = {"5min": 5 * MIN, "50min": 50 * MIN}


@dataclasses.dataclass(frozen=True)
class Case:
    schedule: str
    policy: str
    length: str
    recovery: str
    window: str
    duration: str
    kind: str = "down"
    after_outage: str = "earliest"

    @property
    def name(self):
        return "-".join([self.schedule, self.policy, self.length, self.recovery, f"w{self.window}", self.duration,
                         self.kind] + ([f"after_{self.after_outage}"] if self.after_outage != "earliest" else []))

    def preset(self):
        kw = {} if WINDOWS[self.window] is None else {"catchup_window": dt.timedelta(microseconds=WINDOWS[self.window])}
        return presets.temporal(overlap=self.policy, after_outage=self.after_outage, **kw)


@dataclasses.dataclass(frozen=True)
class Pair:
    """One (scenario, occurrence): when Temporal starts the nominal time (None: never) and when calsim does."""

    case: object
    nominal: int
    oracle: int | None
    calsim: int | None
    state: str            # calsim's state/reason ("-": calsim has no such occurrence)
    outage: tuple | None  # (start, end) of the scenario's outage

    @property
    def agrees(self) -> bool:
        return self.oracle == self.calsim and self.state != "-"

    def __str__(self) -> str:
        return (f"{getattr(self.case, 'name', self.case)} | {_show(self.nominal)} | Temporal "
                f"{'not started' if self.oracle is None else 'starts ' + _show(self.oracle)} | calsim {self.state} "
                f"{_show(self.calsim)}")


@dataclasses.dataclass
class Run:
    case: object
    want: oracle.Result
    pairs: list
    preset: object

    @functools.cached_property
    def dropped(self) -> set:
        return {n for n, _ in self.want.buffer_dropped}


def run(case, schedule: str, policy: str, window_us, duration_us: int, outage: tuple | None, start: int, end: int,
        kind: str = "down", after_outage: str = "earliest") -> Run:
    zone, cron, minutes, hours, _ = SCHEDULES[schedule]
    times = oracle.spec_times(minutes, hours, zone, start, end)
    want = oracle.run_schedule(times, start, end, policy, window_us, duration_us, [outage] if outage else [])
    kw = {} if window_us is None else {"catchup_window": dt.timedelta(microseconds=window_us)}
    preset = presets.temporal(overlap=policy, after_outage=after_outage, **kw)
    sched = preset.apply(calsim.Schedule("sched", zone, "2025-12-01T00:00", cron,
                                         policy=calsim.Policy(duration=dt.timedelta(microseconds=duration_us))))
    sc = calsim.Scenario("temporal-oracle", [sched], _iso(start), _iso(end), release=RELEASE, tick=preset.tick,
                         outages=[calsim.Outage(_iso(outage[0]), _iso(outage[1]), kind=kind)] if outage else [])
    frame = calsim.simulate(sc, progress=False).frame
    rows = frame.filter(frame["due_utc"].is_not_null())
    due = [int(v) for v in rows["due_utc"].dt.epoch("us").to_list()]
    started = rows["started_utc"].dt.epoch("us").to_list()
    states = [f"{a}/{b}" for a, b in zip(rows["state"].cast(str).to_list(), rows["reason"].cast(str).to_list())]
    got = {d: (None if s is None else int(s), x) for d, s, x in zip(due, started, states)}
    pairs = []
    for nominal in sorted(set(got) | set(times)):
        start_c, state = got.get(nominal, (None, "-"))
        pairs.append(Pair(case, nominal, want.started.get(nominal), start_c, state, outage))
    return Run(case, want, pairs, preset)


# -- stated differences ------------------------------------------------------------------------------------

@dataclasses.dataclass(frozen=True)
class Stated:
    name: str
    note: str                      # exact substring of presets.temporal(...).notes
    applies: Callable


def _after_outage_latest(p: Pair, r: Run) -> bool:
    """after_outage='latest' with SKIP: calsim runs the newest missed time, Temporal's processBuffer the
    first buffered (oldest) one."""
    c = p.case
    if not (getattr(c, "after_outage", None) == "latest" and c.policy == "SKIP" and p.outage):
        return False
    a, b = p.outage
    return a <= p.nominal <= b


def _buffer_cap(p: Pair, r: Run) -> bool:
    """addStart drops starts beyond MaxBufferSize (1000): the dropped times themselves; the times of the
    wake-up that overflowed (CANCEL_OTHER replaces up to the 1000th buffered, not the newest); and, for
    BUFFER_ALL, the later times both start after that wake-up (calsim's chain holds every missed time,
    Temporal's only the 1000 buffered ones, so the chains drift apart)."""
    if not r.want.buffer_dropped or not p.outage:
        return False
    wake = min(w for _, w in r.want.buffer_dropped)
    if p.nominal in r.dropped or p.outage[0] <= p.nominal <= wake:
        return True
    chain = p.case.policy == "BUFFER_ALL" and p.nominal > wake
    return chain and min(x for x in (p.oracle, p.calsim) if x is not None) >= wake


STATED = [
    Stated("after_outage_latest",
           "after_outage='latest': the most recent missed action runs; the current server code starts the earliest "
           "(after_outage='earliest')", _after_outage_latest),
    Stated("buffer_cap", "catch-up buffer cap (1000 actions, overflow dropped) is not modelled", _buffer_cap),
]


def classify(p: Pair, r: Run) -> Stated | None:
    for s in STATED:
        if s.applies(p, r):
            return s
    return None


# -- the grid ----------------------------------------------------------------------------------------------

@functools.lru_cache(maxsize=None)
def run_case(case: Case) -> Run:
    zone, cron, minutes, hours, fire = SCHEDULES[case.schedule]
    back = fire + RECOVERY[case.recovery]
    outage = (back - LENGTHS[case.length], back)
    # The schedule is created off any action time (Temporal's first action is strictly after creation).
    start, end = outage[0] - 6 * HOUR - 7 * MIN - 30 * US, back + 6 * HOUR
    return run(case, case.schedule, case.policy, WINDOWS[case.window], DURATIONS[case.duration], outage, start, end,
               case.kind, case.after_outage)


def _cases(policies=POLICIES, kinds=("down", "suspend")):
    for schedule in GRID_SCHEDULES:
        for policy in policies:
            for length in LENGTHS:
                for recovery in RECOVERY:
                    for window in WINDOWS:
                        for duration in DURATIONS:
                            for kind in kinds:
                                yield Case(schedule, policy, length, recovery, window, duration, kind)
                                if policy == "SKIP":
                                    yield Case(schedule, policy, length, recovery, window, duration, kind, "latest")


def buffer_cap_cases():
    return [Case("every1-UTC", policy, "3d", "at", "default", "5min") for policy in POLICIES]


def grid_cases():
    return list(_cases()) + buffer_cap_cases()


@functools.lru_cache(maxsize=None)
def grid():
    """(pairs compared, Counter of stated differences, unstated pairs, [(Stated, notes)] used)."""
    n, used, unstated, checked = 0, Counter(), [], {}
    for case in grid_cases():
        r = run_case(case)
        n += len(r.pairs)
        for p in r.pairs:
            if p.agrees:
                continue
            s = classify(p, r)
            if s is None:
                unstated.append(p)
            else:
                used[s.name] += 1
                checked[(s.name, case.policy, case.after_outage)] = (s, r.preset.notes)
    return n, used, unstated, list(checked.values())


def compared_pairs() -> int:
    return grid()[0]


def _unstated(r: Run) -> list[Pair]:
    return [p for p in r.pairs if not p.agrees and classify(p, r) is None]


def _explain(pairs, limit: int = 8) -> str:
    return f"{len(pairs)} unstated disagreements, first ones:\n" + "\n".join(f"  {p}" for p in pairs[:limit])


def _note(preset, name: str) -> None:
    s = next(s for s in STATED if s.name == name)
    assert any(s.note in x for x in preset.notes), f"note of {name!r} missing from temporal's notes"


@pytest.mark.parametrize("case", list(_cases(["SKIP"])), ids=lambda c: c.name)
def test_skip_starts_the_earliest_missed_run_in_the_window_and_skips_the_rest(case):
    bad = _unstated(run_case(case))
    assert not bad, _explain(bad)


@pytest.mark.parametrize("case", list(_cases(["BUFFER_ONE"])), ids=lambda c: c.name)
def test_buffer_one_starts_the_earliest_and_keeps_the_next_one_buffered(case):
    bad = _unstated(run_case(case))
    assert not bad, _explain(bad)


@pytest.mark.parametrize("case", list(_cases(["BUFFER_ALL"])), ids=lambda c: c.name)
def test_buffer_all_runs_every_missed_run_one_after_another(case):
    bad = _unstated(run_case(case))
    assert not bad, _explain(bad)


@pytest.mark.parametrize("case", list(_cases(["ALLOW_ALL"])), ids=lambda c: c.name)
def test_allow_all_starts_every_missed_run_at_once(case):
    bad = _unstated(run_case(case))
    assert not bad, _explain(bad)


@pytest.mark.parametrize("case", list(_cases(["CANCEL_OTHER", "TERMINATE_OTHER"])), ids=lambda c: c.name)
def test_cancel_other_starts_only_the_latest_missed_run(case):
    bad = _unstated(run_case(case))
    assert not bad, _explain(bad)


@pytest.mark.parametrize("case", buffer_cap_cases(), ids=lambda c: c.name)
def test_more_than_1000_missed_starts_overflow_the_buffer(case):
    bad = _unstated(run_case(case))
    assert not bad, _explain(bad)


def test_grid_disagreements_are_all_stated_in_the_notes(report):
    n, used, unstated, checked = grid()
    line = (f"temporal: {n:,} (scenario, occurrence) pairs compared (full grid, {len(grid_cases())} scenarios; "
            f"workflow.go/buffer.go port), {len(unstated)} unstated disagreements, stated: {dict(used)}")
    print("\n" + line)
    report.append(line)
    missing = [(s.name, s.note) for s, notes in checked if not any(s.note in x for x in notes)]
    assert not missing, f"stated differences whose note is not in presets.temporal(...).notes: {missing}"
    assert not unstated, _explain(unstated)


def test_compares_many_pairs():
    assert compared_pairs() > 50_000


def test_down_and_suspend_outages_give_the_same_ledger():
    """The workflow is durable: a server restart and a machine asleep both just delay its timers."""
    for case in _cases(["SKIP", "BUFFER_ALL"], ("down",)):
        other = dataclasses.replace(case, kind="suspend")
        assert [(p.nominal, p.calsim) for p in run_case(case).pairs] == \
            [(p.nominal, p.calsim) for p in run_case(other).pairs], case.name


# -- stated differences, pinned -----------------------------------------------------------------------------

def test_after_outage_latest_starts_the_newest_missed_time_where_temporal_starts_the_oldest():
    """processBuffer with nothing running starts the first buffered start (buffer.go: "If there's nothing
    running, we can start this one no matter what the policy is"), i.e. the oldest missed time; calsim with
    after_outage='latest' starts the newest."""
    back = _us(2026, 6, 10, 10, 0, 30)
    outage = (back - 2 * HOUR, back)                       # 08:00:30 - 10:00:30: 09:00 and 10:00 missed
    case = Case("hourly-UTC", "SKIP", "2h", "just_after", "default", "5min", after_outage="latest")
    r = run(case, "hourly-UTC", "SKIP", None, 5 * MIN, outage, back - 6 * HOUR, back + 3 * HOUR,
            after_outage="latest")
    bad = [p for p in r.pairs if not p.agrees]
    older, newer = _us(2026, 6, 10, 9), _us(2026, 6, 10, 10)
    assert [(p.nominal, p.oracle, p.calsim) for p in bad] == [(older, back, None), (newer, None, back)]
    assert all(classify(p, r).name == "after_outage_latest" for p in bad)
    _note(r.preset, "after_outage_latest")


def test_allow_all_after_4320_missed_minutes_starts_only_the_first_1000():
    """addStart: a buffer of MaxBufferSize (1000) starts drops the rest ("Buffer too large"); ALLOW_ALL then
    starts the 1000 buffered ones at once. calsim starts all 4320."""
    r = run_case(Case("every1-UTC", "ALLOW_ALL", "3d", "at", "default", "5min"))
    back = SCHEDULES["every1-UTC"][4]
    missed = [p for p in r.pairs if back - 3 * DAY <= p.nominal < back]
    assert len(missed) == 4320
    assert sum(p.oracle == back for p in missed) == 1000 and len(r.want.buffer_dropped) == 4321 - 1000
    assert all(p.calsim == back for p in missed)
    assert {classify(p, r).name for p in r.pairs if not p.agrees} == {"buffer_cap"}
    _note(r.preset, "buffer_cap")


# -- the catch-up window boundary: `end.Sub(next.Next) > catchupWindow` ------------------------------

@pytest.mark.parametrize("policy", POLICIES)
@pytest.mark.parametrize("delta_s", [-1, 0, 1])
def test_catchup_window_exactly_equal_to_the_lateness_still_starts(policy, delta_s):
    """processTimeRange: a time is missed only when now - time > catchupWindow; equal is started."""
    back = _us(2026, 6, 10, 10, 0, 30)
    outage = (back - 5 * HOUR, back)
    window = (2 * HOUR + 30 * US) + delta_s * US   # the 08:00 action is exactly 2h0m30s old at recovery
    start, end = outage[0] - 3 * HOUR - 7 * MIN, back + 3 * HOUR
    r = run(f"window {window / US:g}s {policy}", "hourly-UTC", policy, window, 5 * MIN, outage, start, end)
    bad = [p for p in r.pairs if not p.agrees]
    assert not bad, _explain(bad)


@pytest.mark.parametrize("late_s", [8, 10, 11])
def test_catchup_window_below_10s_is_clamped_to_10s(late_s):
    """getCatchupWindow: a window below MinCatchupWindow (10 s) counts as 10 s."""
    back = _us(2026, 6, 10, 10, 0, late_s)
    outage = (back - 20 * MIN, back)
    start, end = outage[0] - 3 * HOUR - 7 * MIN, back + 3 * HOUR
    r = run(f"clamp {late_s}s", "hourly-UTC", "SKIP", 5 * US, 5 * MIN, outage, start, end)
    assert (_us(2026, 6, 10, 10) in r.want.started) == (late_s <= 10)
    bad = [p for p in r.pairs if not p.agrees]
    assert not bad, _explain(bad)


# -- after a fall-back: SKIP starts the earliest missed run in UTC order ----------------------------

@pytest.mark.parametrize("schedule", ["every15-NY-fallback", "0130-0145-NY-fallback"])
@pytest.mark.parametrize("outage_start", ["05:20", "05:40", "06:10"])
def test_skip_after_fall_back_starts_the_earliest_missed_run_in_utc_order(schedule, outage_start):
    """Outage from 01:20/01:40 EDT (or 01:10 EST) to 02:05 EST on 2026-11-01 covering the repeated hour:
    Temporal's getNextTime walks instants, so the earliest missed action is the earliest UTC one (01:45 EDT
    comes before 01:30 EST), not the earliest wall time."""
    h, m = map(int, outage_start.split(":"))
    outage = (_us(2026, 11, 1, h, m), _us(2026, 11, 1, 7, 5))
    start, end = _us(2026, 11, 1, 0, 7), _us(2026, 11, 1, 12)
    r = run(f"fall-back {schedule} {outage_start}", schedule, "SKIP", None, 5 * MIN, outage, start, end)
    bad = [p for p in r.pairs if not p.agrees]
    assert not bad, _explain(bad)
    first = min(p.nominal for p in r.pairs if outage[0] <= p.nominal < outage[1])
    assert r.want.started[first] == outage[1]
