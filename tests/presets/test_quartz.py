"""``presets.quartz()`` against Quartz 2.3.2's misfire handling: the real ``RAMJobStore``, and a port of the JDBC store.

With ``job_store="ram"`` the oracle is the real thing: a ``CronTriggerImpl``
of the rule in Debian's Quartz 2.3.2 jar, stored in a real ``RAMJobStore``
on a faked clock (``oracles.quartz_jar``, ``QuartzJar.trigger``): every
decision (misfired or not, the instruction's new next fire time, the fire
time after each fire, blocking with ``@DisallowConcurrentExecution``) is
the store's and the trigger's own, and so are its fire times
(``getTimeAfter`` in the zone). The scheduler thread around the store is a
port (the thread looks at the trigger at its fire time, when its job ends or
when an outage ends; the 30 s acquisition window is not modelled: a note).
With ``job_store="jdbc"`` (no database here) the oracle is the port of
:mod:`oracles.quartz` over calsim's fire times. What is compared, per
(scenario, occurrence), is whether and when the job starts, after pauses
(``Outage(kind="suspend")``: the JVM keeps its job store), restarts
(``kind="down"``: a RAMJobStore forgets, a JDBC store remembers) and with
``@DisallowConcurrentExecution``. Each scenario uses the preset setting that
matches the oracle's store (``job_store="ram"`` or ``"jdbc"``).

The grid: ``0 */15 * * * ?`` across New York's fall-back, hourly across
Berlin's spring-forward, a daily 02:30 across Lord Howe's spring-forward
(2026, tzdata 2025a: the JVM's own); every misfire instruction; thresholds of 60 s and 5 s; outages of
2 min, 1 h and 3 days ending 30 s before, at, 0.5 s after, 30 s after,
exactly the threshold after and the threshold + 1 s after a fire time; pauses with both
stores, with and without ``disallow_concurrent`` (20 min jobs); restarts with
both stores. The whole grid runs by default (each scenario simulates its 8
trigger variants at once); ``CALSIM_LONG=1`` changes nothing. ``pytest -s``
prints the counts.

Every disagreeing pair must be one of ``STATED`` (a narrow predicate over the
pair and the job store's own record, plus the exact substring of the
``presets.quartz(...).notes`` entry that states it); each stated difference
is also pinned by a minimal test (Quartz's behaviour, calsim's, the note).
What no note states would fail the grid.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import functools
from collections import Counter, defaultdict
from typing import Callable

import pytest

import calsim
from calsim import presets
from oracles import quartz as oracle
from oracles.instants import hm, iso, us_at

US = oracle.US
MIN = 60 * US
HOUR = 60 * MIN
DAY = 24 * HOUR
RELEASE = "2025a"  # the JVM's own tzdb (tests/rules/test_quartz_jar.py checks it)
INSTRUCTIONS = ["SMART_POLICY", "FIRE_ONCE_NOW", "DO_NOTHING", "IGNORE_MISFIRE_POLICY"]
JOB_MIN = 20                      # job length with disallow_concurrent (longer than the 15 min period)


_us, _iso, _hm = us_at, iso, hm


def _show(us_list) -> list[str]:
    return [_hm(u) for u in us_list]


SCHEDULES = {  # zone, Quartz expression (calsim: the quartz: rule), a fire time
    "every15-NY-fallback": ("America/New_York", "0 */15 * * * ?", _us(2026, 11, 1, 7, 0)),
    "hourly-Berlin-spring": ("Europe/Berlin", "0 0 * * * ?", _us(2026, 3, 29, 2, 0)),
    "daily-0230-LordHowe": ("Australia/Lord_Howe", "0 30 2 * * ?", _us(2026, 10, 5, 15, 30)),
    # single-scenario tests only
    "daily-0230-Berlin": ("Europe/Berlin", "0 30 2 * * ?", _us(2026, 6, 1, 0, 30)),
    "every10min-UTC": ("UTC", "0 */10 * * * ?", _us(2026, 6, 1, 12)),
    "every15-UTC": ("UTC", "0 */15 * * * ?", _us(2026, 6, 1, 12)),
}
GRID_SCHEDULES = ("every15-NY-fallback", "hourly-Berlin-spring", "daily-0230-LordHowe")
LENGTHS = {"2min": 2 * MIN, "1h": HOUR, "3d": 3 * DAY}
THRESHOLDS = {"60s": 60_000, "5s": 5_000}


def _recoveries(threshold_ms: int):
    return {"just_before": -30 * US, "at": 0, "half_second_after": US // 2, "just_after": 30 * US,
            "threshold_late": threshold_ms * 1000, "past_threshold": threshold_ms * 1000 + US}


# -- one trigger, both sides -------------------------------------------------------------------------------

@dataclasses.dataclass(frozen=True)
class Variant:
    instruction: str
    disallow: bool = False

    @property
    def sid(self) -> str:
        return f"{self.instruction}|{'disallow' if self.disallow else 'allow'}"

    @property
    def duration_us(self) -> int:
        return JOB_MIN * MIN if self.disallow else 0


@dataclasses.dataclass(frozen=True)
class Pair:
    """One (scenario, occurrence): Quartz's executions attributed to it and calsim's start."""

    case: str
    variant: Variant
    store: str
    due: int
    fires: tuple                  # oracle.Fire records
    calsim: int | None
    state: str                    # calsim's state/reason ("-": calsim has no such occurrence)

    @property
    def oracle(self) -> tuple[int, ...]:
        return tuple(f.at for f in self.fires)

    @property
    def agrees(self) -> bool:
        return self.oracle == (() if self.calsim is None else (self.calsim,))

    @property
    def last(self) -> int:
        return max([self.due, *self.oracle, *([self.calsim] if self.calsim is not None else [])])

    def __str__(self) -> str:
        q = ", ".join(f"{f.why} at {_hm(f.at)}" for f in self.fires) or "not run"
        return (f"{self.case} | {self.variant.sid} | {self.store} | fire time {_hm(self.due)} | Quartz: {q} | "
                f"calsim: {self.state} {_hm(self.calsim)}")


@dataclasses.dataclass
class Run:
    """One variant of one scenario: Quartz's record and the pairs."""

    variant: Variant
    store: str
    res: oracle.Result
    pairs: list
    preset: object
    outage: tuple | None = None    # (start, end) UTC µs
    kind: str | None = None        # the outage's kind


def pair_up(case: str, variant: Variant, store: str, fires, rows) -> list[Pair]:
    """An execution at the instant calsim starts an occurrence is that occurrence's (FIRE_ONCE_NOW runs for
    the oldest misfired time in Quartz, calsim attributes it to the newest: the note says so); otherwise it
    belongs to its fire time (or to the misfired time a FIRE_ONCE_NOW replaces)."""
    by_start = defaultdict(list)
    for due, (start, _) in sorted(rows.items()):
        if start is not None:
            by_start[start].append(due)
    got = defaultdict(list)
    for f in fires:
        if by_start.get(f.at):
            got[by_start[f.at].pop(0)].append(f)
        else:
            got[f.nominal if f.nominal is not None else f.misfired].append(f)
    out = []
    for due in sorted(set(rows) | set(got)):
        start, state = rows.get(due, (None, "-"))
        out.append(Pair(case, variant, store, due, tuple(got.get(due, ())), start, state))
    return out


_JAR: list = []  # the faked-clock JVM (started by the first RAMJobStore scenario), or the skip it raised


@pytest.fixture(scope="module", autouse=True)
def _jar_closed():
    yield
    for j in _JAR:
        if not isinstance(j, BaseException):
            j.close()
    _JAR.clear()


def ram_store():
    """The real RAMJobStore's JVM (skips, or fails under CALSIM_REQUIRE_ORACLES=1, without Java or the jar)."""
    if not _JAR:
        from oracles.quartz_jar import QuartzJar

        try:
            _JAR.append(QuartzJar(faked_clock=True))
        except BaseException as exc:  # pytest's skip (or CALSIM_REQUIRE_ORACLES' failure): raised again each time
            _JAR.append(exc)
    if isinstance(_JAR[0], BaseException):
        raise _JAR[0]
    return _JAR[0]


def ram_trigger(expr: str, zone: str, v: Variant, threshold_ms: int, start: int, end: int, outages,
                times: list[int]) -> oracle.Result:
    """The real RAMJobStore's executions (``QuartzJar.trigger``) as the port's records (µs)."""
    fires, misfires = ram_store().trigger(expr, zone, v.instruction, threshold_ms, start // 1000, end // 1000,
                                          [(a // 1000, b // 1000, k) for a, b, k in outages], v.duration_us // 1000,
                                          v.disallow)
    known = set(times)
    res = oracle.Result()
    for scheduled, at, once, misfired in fires:
        at_us = at * 1000
        # A FIRE_ONCE_NOW execution is for no fire time of its own unless "now" is one (as the port attributes it).
        nominal = (at_us if at_us in known else None) if once else scheduled * 1000
        res.fired.append(oracle.Fire(nominal, at_us, "fire_once_now" if once else "fire",
                                     None if misfired is None else misfired * 1000))
    res.misfires.extend(oracle.Misfire(n * 1000, now * 1000, cause) for n, now, cause in misfires)
    return res


def simulate(case: str, schedule: str, threshold_ms: int, outage, kind: str, store: str, variants, start: int,
             end: int) -> dict[Variant, Run]:
    """calsim (one scenario holding every variant's trigger) and the oracle for each variant."""
    zone, expr, _ = SCHEDULES[schedule]
    cron = "quartz:" + expr
    scheds, prs = [], {}
    for v in variants:
        preset = presets.quartz(misfire_instruction=v.instruction, misfire_threshold_ms=threshold_ms,
                                disallow_concurrent=v.disallow, job_store=store)
        prs[v] = preset
        policy = calsim.Policy(duration=dt.timedelta(microseconds=v.duration_us))
        scheds.append(preset.apply(calsim.Schedule(v.sid, zone, "2025-12-01T00:00", cron, policy=policy)))
    sc = calsim.Scenario("quartz-oracle", scheds, _iso(start), _iso(end), release=RELEASE,
                         tick=prs[variants[0]].tick,
                         outages=[calsim.Outage(_iso(outage[0]), _iso(outage[1]), kind=kind)] if outage else [])
    frame = calsim.simulate(sc, progress=False).frame
    f = frame.filter(frame["due_utc"].is_not_null())
    cols = dict(sid=f["schedule_id"].to_list(), due=f["due_utc"].dt.epoch("us").to_list(),
                st=f["started_utc"].dt.epoch("us").to_list(), state=f["state"].cast(str).to_list(),
                reason=f["reason"].cast(str).to_list())
    rows: dict[str, dict] = defaultdict(dict)
    for sid, d, s, a, b in zip(cols["sid"], cols["due"], cols["st"], cols["state"], cols["reason"]):
        rows[sid][int(d)] = (None if s is None else int(s), f"{a}/{b}")
    out = {}
    for v in variants:
        times = sorted(rows[v.sid])
        outages = [(outage[0], outage[1], kind)] if outage else []
        if store == "ram":
            res = ram_trigger(expr, zone, v, threshold_ms, start, end, outages, times)
        else:
            res = oracle.run_trigger(times, start, end, v.instruction, threshold_ms * 1000, outages, v.duration_us,
                                     v.disallow, store)
        out[v] = Run(v, store, res, pair_up(case, v, store, res.fired, rows[v.sid]), prs[v], outage, kind)
    return out


# -- stated differences ------------------------------------------------------------------------------------

@dataclasses.dataclass(frozen=True)
class Stated:
    name: str
    note: str                      # exact substring of presets.quartz(...).notes
    applies: Callable


def _do_nothing_same_wakeup(p: Pair, r: Run) -> bool:
    """DO_NOTHING: updateAfterMisfire sets getFireTimeAfter(now) (CronTriggerImpl.java:620-626), strictly
    after the instant the misfire was applied, so a fire time due by then (on time, or less late than the
    threshold) is skipped with the misfired ones; calsim starts it at that wake-up."""
    if p.variant.instruction != "DO_NOTHING" or p.fires or p.calsim is None:
        return False
    return p.due <= p.calsim and any(m.now == p.calsim and m.cause != "blocked" for m in r.res.misfires)


def _disallow_blocked_misfire(p: Pair, r: Run) -> bool:
    """@DisallowConcurrentExecution: a trigger BLOCKED while the job runs meets applyMisfire when the job
    completes (RAMJobStore.java:1612-1648); if it is then threshold-late the instruction applies (DO_NOTHING
    skips to the next time) where calsim's buffer_one runs it. With 20 min jobs every 15 min the trigger is
    blocked at every fire time, so the two chains differ from the first such misfire on. (SMART_POLICY and
    FIRE_ONCE_NOW run the blocked time when the job ends, as buffer_one does: no difference to state.)"""
    if not (p.variant.disallow and p.variant.instruction == "DO_NOTHING"):
        return False
    blocked = [m.now for m in r.res.misfires if m.cause == "blocked"]
    return bool(blocked) and min(blocked) <= p.last


def _ram_restart_last_second(p: Pair, r: Run) -> bool:
    """RAMJobStore, restart: the trigger scheduled again at start has computeFirstFireTime =
    getFireTimeAfter(startTime - 1000 ms) (CronTriggerImpl.java:783-792), so a fire time in (restart - 1 s,
    restart] fires at the restart; calsim (down_is_missed) counts it as due while down and skips it."""
    if r.store != "ram" or r.kind != "down" or r.outage is None:
        return False
    back = r.outage[1]
    return (back - US < p.due <= back and p.calsim is None and p.state == "skipped/catchup"
            and [(f.at, f.why, f.nominal) for f in p.fires] == [(back, "fire", p.due)])


@functools.lru_cache(maxsize=None)
def _first_passes(zone: str) -> tuple[tuple[int, int], ...]:
    """The first passes of the repeated hours of ``zone`` (UTC µs ``[T - r, T)`` before each fall-back ``T``)."""
    table = calsim.release(RELEASE).table(zone)
    out = []
    for i, t in enumerate(table.utc):
        drop = int(table.offsets[i]) - int(table.offsets[i + 1])
        if drop > 0:
            out.append(((int(t) - drop) * US, int(t) * US))
    return tuple(out)


def _misfire_now_in_a_first_pass(p: Pair, r: Run) -> bool:
    """A misfire instruction that computes the next fire time from "now" (FIRE_ONCE_NOW: triggered() after the
    run at now; DO_NOTHING: getFireTimeAfter(now), CronTriggerImpl.java:610-630) with now in the first pass of a
    repeated hour: getTimeAfter reads now's wall time back in the second pass (tests/rules/test_quartz_jar.py),
    so the second pass's fire times up to it are skipped, and with @DisallowConcurrentExecution every later
    run shifts with them; calsim takes the next time of the trigger's own chain. From that misfire on."""
    zone = SCHEDULES[max((k for k in SCHEDULES if p.case.startswith(k)), key=len)][0]
    return any(a <= m.now < b and m.now <= p.last for m in r.res.misfires for a, b in _first_passes(zone))


STATED = [
    Stated("do_nothing_skips_the_fire_time_of_the_misfire_instant",
           "DO_NOTHING moves a misfired trigger to its first fire time strictly after now, so a fire time met at "
           "the same wake-up as misfired ones (on time, or less late than the threshold) is skipped too; calsim "
           "runs it", _do_nothing_same_wakeup),
    Stated("disallow_concurrent_blocked_trigger_misfires",
           "disallow_concurrent -> 'buffer_one': a blocked trigger waits for the running job; if it is then later "
           "than misfireThreshold, Quartz applies the misfire instruction, calsim runs it", _disallow_blocked_misfire),
    Stated("ram_store_restart_fires_a_fire_time_of_its_last_second",
           "job_store='ram': a fire time in the last second before a restart, or exactly at it, still fires in "
           "Quartz (computeFirstFireTime counts from startTime - 1 s); calsim counts it as missed while down",
           _ram_restart_last_second),
    Stated("misfire_now_in_the_first_pass_of_a_repeated_hour",
           "a misfire instruction that takes the next fire time after \"now\" (FIRE_ONCE_NOW, DO_NOTHING) with now "
           "in the first pass of a repeated hour: Quartz's getTimeAfter(now) reads now in the second pass and skips "
           "that pass's fire times up to it; calsim takes the next time of the trigger's own chain",
           _misfire_now_in_a_first_pass),
]


def classify(p: Pair, r: Run) -> Stated | None:
    for s in STATED:
        if s.applies(p, r):
            return s
    return None


# -- the grid ----------------------------------------------------------------------------------------------

@dataclasses.dataclass(frozen=True)
class Group:
    """One scenario: a schedule, a threshold, an outage, a store; every variant runs in it."""

    schedule: str
    threshold: str
    length: str
    recovery: str
    kind: str
    store: str
    variants: tuple

    @property
    def name(self) -> str:
        return "-".join([self.schedule, self.threshold, self.length, self.recovery, self.kind, self.store])


@functools.lru_cache(maxsize=None)
def run_group(g: Group) -> dict[Variant, Run]:
    zone, cron, fire = SCHEDULES[g.schedule]
    threshold_ms = THRESHOLDS[g.threshold]
    back = fire + _recoveries(threshold_ms)[g.recovery]
    outage = (back - LENGTHS[g.length], back)
    start, end = outage[0] - 6 * HOUR - 7 * MIN, back + 6 * HOUR
    return simulate(g.name, g.schedule, threshold_ms, outage, g.kind, g.store, g.variants, start, end)


ALL_VARIANTS = tuple(Variant(i, d) for i in INSTRUCTIONS for d in (False, True))
PLAIN_VARIANTS = tuple(Variant(i) for i in INSTRUCTIONS)


def _groups(kind: str, store: str, variants) -> list[Group]:
    return [Group(s, t, ln, rc, kind, store, variants) for s in GRID_SCHEDULES for t in THRESHOLDS for ln in LENGTHS
            for rc in _recoveries(THRESHOLDS[t])]


def pause_groups() -> list[Group]:
    return _groups("suspend", "ram", ALL_VARIANTS) + _groups("suspend", "jdbc", ALL_VARIANTS)


def restart_groups() -> list[Group]:
    return _groups("down", "ram", PLAIN_VARIANTS) + _groups("down", "jdbc", PLAIN_VARIANTS)


def grid_groups() -> list[Group]:
    return pause_groups() + restart_groups()


def _unstated(runs) -> list[Pair]:
    return [p for r in runs.values() for p in r.pairs if not p.agrees and classify(p, r) is None]


@functools.lru_cache(maxsize=None)
def grid():
    """(pairs compared, Counter of stated differences, unstated pairs, [(Stated, notes)] used, pairs per store)."""
    n, used, unstated, checked, per_store = 0, Counter(), [], {}, Counter()
    for g in grid_groups():
        for v, r in run_group(g).items():
            n += len(r.pairs)
            per_store[g.store] += len(r.pairs)
            for p in r.pairs:
                if p.agrees:
                    continue
                s = classify(p, r)
                if s is None:
                    unstated.append(p)
                else:
                    used[s.name] += 1
                    checked[(s.name, v, g.store)] = (s, r.preset.notes)
    return n, used, unstated, list(checked.values()), per_store


def compared_pairs() -> int:
    return grid()[0]


def _explain(pairs, limit: int = 8) -> str:
    return f"{len(pairs)} unstated disagreements, first ones:\n" + "\n".join(f"  {p}" for p in pairs[:limit])


@pytest.mark.parametrize("group", pause_groups(), ids=lambda g: g.name)
def test_paused_jvm_applies_the_misfire_instruction_when_next_fire_time_is_threshold_late(group):
    """RAMJobStore.applyMisfire (L1398-1432) / the JDBC misfire query (StdJDBCConstants.java:62-69) at the
    first acquisition after the pause, every instruction, with and without @DisallowConcurrentExecution."""
    bad = _unstated(run_group(group))
    assert not bad, _explain(bad)


@pytest.mark.parametrize("group", _groups("down", "ram", PLAIN_VARIANTS), ids=lambda g: g.name)
def test_restart_with_ram_job_store_forgets_the_missed_fire_times(group):
    """A RAMJobStore (Quartz's default store, org/quartz/quartz.properties:18) lives in the JVM: after a
    restart the application schedules the trigger again and CronTriggerImpl.computeFirstFireTime
    (L783-792) starts after startTime - 1 s; no misfire instruction ever applies to the downtime."""
    bad = _unstated(run_group(group))
    assert not bad, _explain(bad)


@pytest.mark.parametrize("group", _groups("down", "jdbc", PLAIN_VARIANTS), ids=lambda g: g.name)
def test_restart_with_jdbc_job_store_applies_the_misfire_instruction(group):
    """A JDBC job store keeps NEXT_FIRE_TIME; at start recoverMisfiredJobs (JobStoreSupport.java:871) applies
    the instruction to triggers with NEXT_FIRE_TIME < now - threshold (StdJDBCConstants.java:68)."""
    bad = _unstated(run_group(group))
    assert not bad, _explain(bad)


def test_grid_disagreements_are_all_stated_in_the_notes(report):
    n, used, unstated, checked, per_store = grid()
    line = (f"quartz: {n:,} (scenario, occurrence) pairs compared (full grid, {len(grid_groups())} scenarios x "
            f"their trigger variants; RAMJobStore: the real one in {ram_store().describe()}, "
            f"{per_store['ram']:,} pairs; JDBC store: the port, {per_store['jdbc']:,} pairs), {len(unstated)} "
            f"unstated disagreements, stated: {dict(used)}")
    print("\n" + line)
    report.append(line)
    missing = [(s.name, s.note) for s, notes in checked if not any(s.note in x for x in notes)]
    assert not missing, f"stated differences whose note is not in presets.quartz(...).notes: {missing}"
    assert not unstated, _explain(unstated)


def test_compares_many_pairs():
    assert compared_pairs() > 100_000


# -- single scenarios ----------------------------------------------------------------------------------

def _one(schedule: str, variant: Variant, threshold_ms: int, outage, kind: str, store: str, start: int, end: int):
    return simulate(f"{schedule}-one", schedule, threshold_ms, outage, kind, store, (variant,), start, end)[variant]


def _starts(r: Run):
    want = sorted(f.at for f in r.res.fired)
    got = sorted(p.calsim for p in r.pairs if p.calsim is not None)
    return want, got


def _diff(want, got) -> str:
    return f"only Quartz {_show(sorted(set(want) - set(got)))}, only calsim {_show(sorted(set(got) - set(want)))}" \
        + ("" if set(want) != set(got) else f" (counts: Quartz {len(want)}, calsim {len(got)})")


def _note(preset, name: str) -> None:
    s = next(s for s in STATED if s.name == name)
    assert any(s.note in x for x in preset.notes), f"note of {name!r} missing from quartz's notes"


@pytest.mark.parametrize("late_by_ms", [59_999, 60_000, 60_001])
def test_paused_jvm_misfires_a_fire_time_exactly_threshold_late_ram_store(late_by_ms):
    """RAMJobStore.java:1406: not misfired only if nextFireTime > now - misfireThreshold. Paused JVM resumes
    exactly 60 s after 02:30: misfired, and DO_NOTHING (CronTriggerImpl.java:620-626) moves to the next fire
    time after now: the 02:30 run is not started. 1 ms less late: it is started at resume (both sides)."""
    fire = _us(2026, 6, 1, 0, 30)                       # 02:30 CEST
    back = fire + late_by_ms * 1000
    r = _one("daily-0230-Berlin", Variant("DO_NOTHING"), 60_000, (fire - 10 * MIN, back), "suspend", "ram",
             fire - DAY - 7 * MIN, fire + DAY)
    want, got = _starts(r)
    assert (back in want) == (late_by_ms < 60_000)
    assert got == want, _diff(want, got)


@pytest.mark.parametrize("late_by_ms", [59_999, 60_000, 60_001])
def test_restarted_jdbc_store_misfires_a_fire_time_only_later_than_the_threshold(late_by_ms):
    """StdJDBCConstants.java:62-69: misfired only if NEXT_FIRE_TIME < now - misfireThreshold: exactly 60 s
    late still fires (job_store='jdbc': limit_edge='on_time')."""
    fire = _us(2026, 6, 1, 0, 30)
    back = fire + late_by_ms * 1000
    r = _one("daily-0230-Berlin", Variant("DO_NOTHING"), 60_000, (fire - 10 * MIN, back), "down", "jdbc",
             fire - DAY - 7 * MIN, fire + DAY)
    want, got = _starts(r)
    assert (back in want) == (late_by_ms <= 60_000)
    assert got == want, _diff(want, got)


def test_smart_policy_fires_once_now_and_drops_a_later_miss_within_the_threshold():
    """The oldest missed fire time decides (applyMisfire looks at nextFireTime only): FIRE_ONCE_NOW sets the next
    fire time to now, triggered() then moves it strictly after now, so a second missed time only 20 s late is
    not run on its own."""
    back = _us(2026, 6, 1, 12, 0, 20)
    r = _one("every10min-UTC", Variant("SMART_POLICY"), 60_000, (back - 25 * MIN, back), "suspend", "ram",
             back - 3 * HOUR - 3 * MIN, back + HOUR)
    want, got = _starts(r)
    assert want.count(back) == 1
    assert got == want, _diff(want, got)


def test_ignore_misfire_policy_with_disallow_concurrent_runs_every_missed_time_in_turn():
    """IGNORE_MISFIRE_POLICY skips applyMisfire (RAMJobStore.java:1406-1408); with @DisallowConcurrentExecution
    each completion unblocks the trigger (L1636-1646), whose next fire time is the next missed one: every
    missed time runs, one after another (calsim: overlap='buffer_all')."""
    back = _us(2026, 6, 1, 12)
    r = _one("every15-UTC", Variant("IGNORE_MISFIRE_POLICY", True), 60_000, (back - 2 * HOUR, back), "suspend",
             "ram", back - 6 * HOUR - 7 * MIN, back + 6 * HOUR)
    want, got = _starts(r)
    assert got == want, _diff(want, got)


def test_restart_with_ram_job_store_runs_nothing_missed():
    """Quartz's default job store is RAMJobStore (org/quartz/quartz.properties:18): a restart loses the trigger;
    scheduled again at start, its first fire time is after startTime - 1 s (CronTriggerImpl.java:784)."""
    back = _us(2026, 6, 1, 12, 0, 30)
    outage = (back - 2 * HOUR, back)
    r = _one("every15-UTC", Variant("SMART_POLICY"), 60_000, outage, "down", "ram", back - 6 * HOUR - 7 * MIN,
             back + 2 * HOUR)
    want, got = _starts(r)
    assert not [at for at in want if outage[0] <= at <= back]
    assert got == want, _diff(want, got)


# -- stated differences, pinned: Quartz's behaviour, calsim's, and the note --------------------------------

def test_do_nothing_skips_an_on_time_fire_time_met_with_misfired_ones():
    """The paused JVM resumes exactly at 12:00 with 10:30..11:45 misfired: applyMisfire looks at nextFireTime
    (10:30), DO_NOTHING sets getFireTimeAfter(now) (CronTriggerImpl.java:621), strictly after 12:00: 12:00 is
    not run. calsim (suspend_catchup='skip') skips the missed ones but runs the on-time 12:00."""
    back = _us(2026, 6, 1, 12)
    r = _one("every15-UTC", Variant("DO_NOTHING"), 60_000, (back - 90 * MIN, back), "suspend", "ram",
             back - 6 * HOUR - 7 * MIN, back + 3 * HOUR)
    want, got = _starts(r)
    assert back not in want and back in got
    assert [u for u in want if u != back] == [u for u in got if u != back]
    bad = [p for p in r.pairs if not p.agrees]
    assert [(p.due, p.oracle, p.calsim) for p in bad] == [(back, (), back)]
    assert classify(bad[0], r).name == "do_nothing_skips_the_fire_time_of_the_misfire_instant"
    _note(r.preset, "do_nothing_skips_the_fire_time_of_the_misfire_instant")


def test_blocked_trigger_past_the_threshold_when_the_job_ends_meets_its_misfire_instruction():
    """@DisallowConcurrentExecution: the trigger is BLOCKED while the job runs (RAMJobStore.java:1579-1590) and
    is checked by applyMisfire when triggeredJobComplete puts it back (L1636-1646). A 20 min job on a
    */15 trigger: the run of 00:15 ends at 00:35, when the 00:30 time is 5 min late (> 60 s): DO_NOTHING
    skips to 00:45, so Quartz runs every 30 min, on time; calsim's buffer_one runs 00:30 at 00:35, back to
    back."""
    start, end = _us(2026, 6, 1, 0, 7), _us(2026, 6, 1, 6, 7)
    r = _one("every15-UTC", Variant("DO_NOTHING", True), 60_000, None, "suspend", "ram", start, end)
    want, got = _starts(r)
    assert all(b - a == 30 * MIN and a % (15 * MIN) == 0 for a, b in zip(want, want[1:]))  # Quartz: every 30 min
    assert all(b - a == JOB_MIN * MIN for a, b in zip(got, got[1:]))          # calsim: back to back
    assert {classify(p, r).name for p in r.pairs if not p.agrees} == {"disallow_concurrent_blocked_trigger_misfires"}
    _note(r.preset, "disallow_concurrent_blocked_trigger_misfires")


@pytest.mark.parametrize("late_ms", [0, 500])
def test_restart_in_the_last_second_of_a_fire_time_fires_it_with_the_ram_store_calsim_counts_it_missed(late_ms):
    """RAMJobStore, restart exactly at 12:00 or 0.5 s after: the trigger scheduled again at start has
    computeFirstFireTime = getFireTimeAfter(startTime - 1000 ms) (CronTriggerImpl.java:783-792), which is 12:00
    itself: it fires at the restart (within the threshold). calsim (down_is_missed: due while down, or at the
    instant the scheduler comes back) skips it. Everything else agrees."""
    back = _us(2026, 6, 1, 12) + late_ms * 1000
    r = _one("every15-UTC", Variant("SMART_POLICY"), 60_000, (back - HOUR, back), "down", "ram",
             back - 6 * HOUR - 7 * MIN, back + 2 * HOUR)
    want, got = _starts(r)
    assert back in want and back not in got
    assert [u for u in want if u != back] == got
    bad = [p for p in r.pairs if not p.agrees]
    assert [(p.due, p.oracle, p.calsim, p.state) for p in bad] == [(_us(2026, 6, 1, 12), (back,), None,
                                                                    "skipped/catchup")]
    assert classify(bad[0], r).name == "ram_store_restart_fires_a_fire_time_of_its_last_second"
    _note(r.preset, "ram_store_restart_fires_a_fire_time_of_its_last_second")


def test_restart_more_than_a_second_after_a_fire_time_does_not_fire_it_with_the_ram_store():
    """The edge of the stated difference above: 1 s after 12:00 getFireTimeAfter(12:00) is 12:15: 12:00 is
    not run on either side."""
    back = _us(2026, 6, 1, 12, 0, 1)
    r = _one("every15-UTC", Variant("SMART_POLICY"), 60_000, (back - HOUR, back), "down", "ram",
             back - 6 * HOUR - 7 * MIN, back + 2 * HOUR)
    want, got = _starts(r)
    assert back not in want
    assert got == want, _diff(want, got)


# -- agreements that were disagreements before the engine decided catch-up per wake-up ------------------

def test_a_pause_ending_exactly_on_a_fire_time_fires_once_now():
    """RAMJobStore, SMART_POLICY, the JVM paused 11:00:00-12:00:00: at resume applyMisfire finds nextFireTime
    11:15 misfired, FIRE_ONCE_NOW (CronTriggerImpl.java:610-630) fires once at 12:00 (covering 12:00, which
    triggered() then steps over). calsim: the resume wake-up's mode is suspend_catchup='latest' and the on-time
    12:00 row joins its backlog: one start at 12:00."""
    back = _us(2026, 6, 1, 12)
    r = _one("every15-UTC", Variant("SMART_POLICY"), 60_000, (back - HOUR, back), "suspend", "ram",
             back - 6 * HOUR - 7 * MIN, back + 2 * HOUR)
    want, got = _starts(r)
    assert [u for u in want if back - HOUR <= u <= back] == [back]
    assert got == want, _diff(want, got)


def test_a_run_once_now_in_a_repeated_hours_first_pass_skips_fire_times_of_the_second_pass_in_quartz():
    """@DisallowConcurrentExecution, 20 min jobs every 15 min, SMART_POLICY, New York's fall-back: the blocked
    00:45 EDT time misfires when the job ends at 01:00 EDT (05:00Z) and runs once now; triggered() then asks
    getFireTimeAfter(01:00 EDT), which reads 01:00:01 back in EST and gives 01:15 EST (06:15Z): 01:00 EST
    (06:00Z) never runs. calsim's next time after the 05:00Z run is the chain's 06:00Z."""
    start, end = _us(2026, 11, 1, 0, 50), _us(2026, 11, 1, 8, 7)  # runs at 01:00Z, 01:20Z, ... 05:00Z
    r = _one("every15-NY-fallback", Variant("SMART_POLICY", True), 60_000, None, "suspend", "ram", start, end)
    quartz = [(f.at, f.why) for f in r.res.fired]
    assert (_us(2026, 11, 1, 5, 0), "fire_once_now") in quartz and (_us(2026, 11, 1, 6, 15), "fire") in quartz
    assert _us(2026, 11, 1, 6, 0) not in {f.at for f in r.res.fired}
    assert _us(2026, 11, 1, 6, 0) in {p.calsim for p in r.pairs}
    bad = [p for p in r.pairs if not p.agrees]
    assert bad and {classify(p, r).name for p in bad} == {"misfire_now_in_the_first_pass_of_a_repeated_hour"}
    assert min(p.due for p in bad) >= _us(2026, 11, 1, 5, 0)
    _note(r.preset, "misfire_now_in_the_first_pass_of_a_repeated_hour")
