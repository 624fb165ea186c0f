"""``presets.systemd()`` against systemd itself (``systemd-analyze calendar``) and a port of ``timer.c``.

Each case is one ``OnCalendar=`` expression, run through the real
``systemd-analyze`` (zone data pinned to calsim's release 2026f) and the
port of ``timer.c``, and as a calsim schedule with ``presets.systemd()``
(its DST is systemd's own walk, ``gap``/``fold="scheduler"``; the grid of
expressions, zones and changes for that walk is
``tests/rules/test_calendarspec.py``). What is compared is, per (scenario,
occurrence), the instants at which the service starts (:func:`pair_up` says
how starts are attributed to occurrences).

The oracle is :mod:`oracles.systemd` (see its docstring for every boundary,
with lines of systemd v252.38).

The grid: spring-forward and fall-back days of America/New_York,
Europe/Berlin and Australia/Lord_Howe (2026, tzdata 2026f); the machine off
(``Outage(kind="down")``: a boot) or asleep (``kind="suspend"``) for 30 s,
1 h or 2 days, back 30 s before, at or 30 s after an elapse right after the
change, with and without ``Persistent=``; a unit still active (10..95 min
runs of a 15 min timer); ``RandomizedDelaySec=`` shorter and longer than the
period, and with a ``Persistent=`` catch-up at boot; ``AccuracySec=`` of 1 s,
1 min and 1 h. By default :func:`outage_cases` runs a deterministic third
(every outage setting -- length, recovery, kind, ``Persistent=`` -- in 4 of
the 12 zone/season/expression combinations, rotating; calsim now walks each
``OnCalendar=`` expression as systemd does, which made the whole grid take
about a minute); ``CALSIM_LONG=1`` runs the whole grid. ``pytest -s``
prints which ran, and the counts.

Every disagreeing pair must be one of ``STATED`` (a difference a note of
``presets.systemd(...)`` states: a narrow predicate over the pair and the
timer's own record of why it fired, plus the exact substring of the note).
What no note states is kept failing, in the grid and in its own minimal test
(``test_unstated_*``).
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import functools
import os
from collections import Counter, defaultdict
from typing import Callable

import numpy as np
import pytest

import calsim
from calsim import presets
from calsim.durations import duration_us
from calsim.simulation.randomness import JITTER, id_key, uniform
from oracles import systemd as oracle
from oracles.instants import hm, iso, us_at

US = oracle.US
MIN = 60 * US
HOUR = 60 * MIN
DAY = 24 * HOUR
RELEASE = "2026f"
FULL = os.environ.get("CALSIM_LONG") == "1"  # the whole outage grid (a third of it by default)

@pytest.fixture(autouse=True)
def _needs_systemd_analyze():
    """Skip (fail under CALSIM_REQUIRE_ORACLES=1) where systemd-analyze does not run."""
    oracle.require()


_us, _iso, _hm = us_at, iso, hm


def _show(us_list) -> list[str]:
    return [_hm(u) for u in us_list]


# The DST transitions of 2026 (UTC instants of the change) per zone.
TRANSITIONS = {
    ("America/New_York", "spring"): _us(2026, 3, 8, 7),     # 02:00 EST -> 03:00 EDT
    ("America/New_York", "fall"): _us(2026, 11, 1, 6),      # 02:00 EDT -> 01:00 EST
    ("Europe/Berlin", "spring"): _us(2026, 3, 29, 1),       # 02:00 CET -> 03:00 CEST
    ("Europe/Berlin", "fall"): _us(2026, 10, 25, 1),        # 03:00 CEST -> 02:00 CET
    ("Australia/Lord_Howe", "fall"): _us(2026, 4, 4, 15),   # 02:00 +11 -> 01:30 +1030
    ("Australia/Lord_Howe", "spring"): _us(2026, 10, 3, 15, 30),  # 02:00 +1030 -> 02:30 +11
}

# (OnCalendar= expression, its cron spelling: the test ids)
EXPRESSIONS = [
    ("*-*-* *:00/15:00", "*/15 * * * *"),
    ("*-*-* 02:30:00", "30 2 * * *"),
    ("*-*-* 01:30,45:00", "30,45 1 * * *"),
    ("*-*-* 02:15:00", "15 2 * * *"),
    ("*-*-* 01:45:00", "45 1 * * *"),
    ("*-*-* 02:00,59:00", "0,59 2 * * *"),
    ("*-*-* *:00:00", "0 * * * *"),
]
EVERY15 = ("*-*-* *:00/15:00", "*/15 * * * *")


def _schedule(expr: str, zone: str, preset: calsim.presets.Preset, policy: calsim.Policy | None = None,
              sid: str = "timer") -> calsim.Schedule:
    s = calsim.Schedule(sid, zone, "2025-12-01T00:00", "OnCalendar=" + expr, policy=policy)
    return preset.apply(s)


def _outage(start_us: int, end_us: int, kind: str) -> calsim.Outage:
    return calsim.Outage(_iso(start_us), _iso(end_us), kind=kind)


def _calsim_fires(schedule: calsim.Schedule, preset, start_us: int, end_us: int, outages=(), seed: int = 0):
    sc = calsim.Scenario("systemd-oracle", [schedule], _iso(start_us), _iso(end_us), release=RELEASE,
                         tick=preset.tick, outages=list(outages), seed=seed)
    frame = calsim.simulate(sc, progress=False).frame
    started = frame.filter(frame["started_utc"].is_not_null())["started_utc"]
    fires = sorted(int(v) for v in started.dt.epoch("us").to_list())
    return fires, frame


def _delay_for(schedule: calsim.Schedule, delay_us: int, seed: int = 0):
    """systemd's ``random_u64() % RandomizedDelaySec`` per elapse, drawn from calsim's own per-occurrence
    uniform (the randomness is not what is compared; the use of the draw is): uncapped."""
    key = np.array([id_key(schedule.id)], dtype=np.uint64)

    def draw(elapse_us: int) -> int:
        naive, fold = oracle.wall(elapse_us, schedule.zone)
        nominal = int((naive - dt.datetime(1970, 1, 1)) / dt.timedelta(microseconds=1))
        u = uniform(key, np.array([nominal]), np.array([fold]), seed, JITTER)[0]
        return int(np.floor(u * delay_us))

    return draw


def _only(want, got) -> str:
    return f"only systemd {_show(sorted(set(want) - set(got)))}, only calsim {_show(sorted(set(got) - set(want)))}"


def _second_pass(us: int, zone: str) -> bool:
    """Whether an instant is in the second pass of a repeated wall hour (PEP 495 fold 1)."""
    return oracle.wall(us, zone)[1] == 1


# -- pairs and their classification ----------------------------------------------------------------------

@dataclasses.dataclass(frozen=True)
class Pair:
    """One (scenario, occurrence): the starts systemd gives it (with the oracle's records) and calsim's."""

    case: "Case"
    due: int                      # the occurrence's instant (UTC µs)
    fires: tuple                  # oracle.Fire records attributed to it
    calsim: int | None            # calsim's start
    state: str | None             # calsim's state/reason ("-" when calsim has no such occurrence)

    @property
    def oracle(self) -> tuple[int, ...]:
        return tuple(f.fired_us for f in self.fires)

    @property
    def agrees(self) -> bool:
        return self.oracle == (() if self.calsim is None else (self.calsim,))

    @property
    def first(self) -> int:
        return min([self.due, *self.oracle, *([self.calsim] if self.calsim is not None else [])])

    def __str__(self) -> str:
        why = ",".join(f"{f.why}@{_hm(f.fired_us)} (elapse {_hm(f.elapse_us)}, base {_hm(f.base_us)})"
                       for f in self.fires) or "not started"
        return (f"{self.case.name} | occurrence {_hm(self.due)} | systemd: {why} | calsim: "
                f"{self.state} {_hm(self.calsim)}")


def pair_up(case, fires, rows, tolerance: int) -> list[Pair]:
    """Attribute starts to occurrences on both sides and pair them.

    ``rows``: calsim's ``due -> (start, state)``. systemd attributes no start to an elapse (a catch-up
    covers several), so an oracle start at the instant calsim starts an occurrence is that occurrence's;
    one left over is matched to a calsim start left over at most ``tolerance`` (``AccuracySec=``) away,
    else it belongs to the elapse the timer computed.
    """
    by_start = defaultdict(list)
    for due, (start, _) in sorted(rows.items()):
        if start is not None:
            by_start[start].append(due)
    got = defaultdict(list)
    left = []
    for f in fires:
        if by_start.get(f.fired_us):
            got[by_start[f.fired_us].pop(0)].append(f)
        else:
            left.append(f)
    spare = sorted((s, dues[0]) for s, dues in by_start.items() if dues)
    for f in left:
        near = [(abs(s - f.fired_us), s, d) for s, d in spare if abs(s - f.fired_us) <= tolerance and d not in got]
        if near:
            _, s, d = min(near)
            spare.remove((s, d))
            got[d].append(f)
        else:
            got[f.elapse_us].append(f)
    pairs = []
    for due in sorted(set(rows) | set(got)):
        start, state = rows.get(due, (None, "-"))
        pairs.append(Pair(case, due, tuple(got.get(due, ())), start, state))
    return pairs


@dataclasses.dataclass(frozen=True)
class Stated:
    """A difference a note of the preset states: ``applies(pair, run)`` recognises a disagreeing pair as it."""

    name: str
    note: str                      # exact substring of presets.systemd(...).notes
    applies: Callable


def _dst_second_pass(p: Pair, run: "Run") -> bool:
    """systemd fires a second-pass wall time calsim (fold='first') has no occurrence for, computed from a
    base (boot, resume or last trigger) inside the repeated hour (timer.c:402-409)."""
    return (p.calsim is None and p.state == "-" and bool(p.fires) and _second_pass(p.due, p.case.zone)
            and all(_second_pass(f.base_us, p.case.zone) for f in p.fires))


def _dst_knock_on(p: Pair, run: "Run") -> bool:
    """A unit running at least as long as the timer's period is busy at every elapse: a start moved by a
    second-pass trigger moves every later start of the chain (timer.c:402-403: the base is the last trigger)."""
    return (p.case.duration_min * MIN >= run.period and run.first_dst is not None and p.first >= run.first_dst)


def _persistent_delay(p: Pair, run: "Run") -> bool:
    """Persistent= catch-up at boot moved by RandomizedDelaySec= (timer.c:419-420 then 537), and the elapses
    it swallows (the next one is computed from the delayed trigger)."""
    c = p.case
    catchups = [f for f in run.fires if f.why == "boot_catchup"]
    if not (c.persistent and c.delay and c.kind == "down" and catchups):
        return False
    boot, fired = run.outages[0][1], catchups[0].fired_us
    if any(f.why == "boot_catchup" for f in p.fires):
        return True
    calsim_catchup = p.calsim is not None and p.due < boot <= p.calsim <= boot + run.tick
    swallowed = not p.fires and boot <= p.due <= fired
    return calsim_catchup or swallowed


def _delay_longer_than_period(p: Pair, run: "Run") -> bool:
    """RandomizedDelaySec= longer than the timer's period, no outage: systemd's next elapse follows the
    delayed trigger (timer.c:402-403, 537), calsim caps each delay before the next occurrence."""
    return bool(p.case.delay) and run.delay_us > run.period and not run.outages


def _persistent_boot_on_accuracy_point(p: Pair, run: "Run") -> bool:
    """Persistent=yes, boot exactly on an AccuracySec= point (sleep_between(boot, boot + accuracy) is boot,
    sd-event.c:3090-3099): the elapse missed while off (rebased to boot, timer.c:413-420) or the elapse at the
    boot instant itself (computed from the stamp, timer.c:402-403, 645-660) fires at the boot instant; calsim
    (recovery_wake=False) catches it up at the next tick."""
    c = p.case
    if not (c.persistent and c.kind == "down" and not c.delay and len(p.fires) == 1 and p.calsim is not None):
        return False
    boot, f = run.outages[0][1], p.fires[0]
    return (oracle.sleep_between(boot, boot + run.accuracy_us) == boot and f.fired_us == boot
            and f.elapse_us <= boot and p.due <= boot and p.calsim == boot + run.tick)


def _accuracy_point(p: Pair, run: "Run") -> bool:
    """Both start the occurrence once, inside its AccuracySec= window: systemd at sleep_between()'s point
    (sd-event.c:3057-3133, the latest aligned one before the window's end), calsim at its next tick."""
    if len(p.fires) != 1 or p.calsim is None:
        return False
    lo = max(p.due, min(p.oracle[0], p.calsim))
    return lo <= p.oracle[0] <= lo + run.accuracy_us and lo <= p.calsim <= lo + run.accuracy_us


STATED = [
    Stated("dst_second_pass",
           "a timer that boots, resumes or triggers inside the repeated hour fires the second-pass times after "
           "that instant too", _dst_second_pass),
    Stated("dst_second_pass_knock_on",
           "a timer that boots, resumes or triggers inside the repeated hour fires the second-pass times after "
           "that instant too", _dst_knock_on),
    Stated("persistent_catch_up_delayed",
           "the Persistent= catch-up at boot is still delayed by RandomizedDelaySec= in systemd; calsim starts it "
           "at the first wake-up", _persistent_delay),
    Stated("delay_longer_than_period",
           "RandomizedDelaySec= longer than the period swallows the elapses inside the delay in systemd; calsim "
           "caps each delay before the next elapse and runs them all", _delay_longer_than_period),
    Stated("persistent_catch_up_at_boot_on_accuracy_point",
           "a Persistent= catch-up at a boot exactly on an AccuracySec= point fires at the boot instant in systemd; "
           "calsim starts it at the next tick", _persistent_boot_on_accuracy_point),
    Stated("accuracy_point",
           "AccuracySec= places the elapse at a host-specific stable point in the window; tick=AccuracySec "
           "aligns wake-ups to the Unix epoch instead", _accuracy_point),
]


def classify(p: Pair, run: "Run") -> Stated | None:
    for s in STATED:
        if s.applies(p, run):
            return s
    return None


# -- scenarios ---------------------------------------------------------------------------------------------

LENGTHS = {"30s": 30 * US, "1h": HOUR, "2d": 2 * DAY}
RECOVERY = {"just_before": -30 * US, "at": 0, "just_after": 30 * US}
OUTAGE_EXPRESSIONS = [EVERY15, ("*-*-* 01:30,45:00", "30,45 1 * * *")]
ACCURACY = {"1s": US, "1min": MIN, "1h": HOUR}


@dataclasses.dataclass(frozen=True)
class Case:
    family: str                    # "outage", "busy", "delay", "accuracy"
    zone: str
    season: str | None
    expr: str
    cron: str
    persistent: bool = False
    kind: str | None = None        # Outage kind, None: no outage
    length: str | None = None
    recovery: str | None = None
    duration_min: int = 0
    delay: str | None = None       # RandomizedDelaySec=
    accuracy: str = "1min"
    at: int | None = None          # the elapse the outage is placed around (default: 15 min after the change)

    @property
    def name(self) -> str:
        parts = [self.family, self.zone.split("/")[-1], self.season or _hm(self.at), self.cron.replace(" ", "_")]
        if self.kind:
            parts += [self.length, self.recovery, self.kind]
        parts.append("persistent" if self.persistent else "plain")
        if self.duration_min:
            parts.append(f"run{self.duration_min}min")
        if self.delay:
            parts.append(f"delay{self.delay}")
        if self.accuracy != "1min":
            parts.append(f"accuracy{self.accuracy}")
        return "-".join(parts)

    def preset(self) -> calsim.presets.Preset:
        return presets.systemd(persistent=self.persistent, accuracy_sec=self.accuracy,
                               randomized_delay_sec=self.delay or 0)

    def window(self) -> tuple[int, int, tuple]:
        """(start, end, ((outage start, outage end, kind),)) of the scenario."""
        t = TRANSITIONS[(self.zone, self.season)] if self.season else self.at
        if self.kind is None:
            if self.family == "accuracy":
                return t - DAY - 7 * MIN, t + (3 * DAY if self.accuracy == "1h" else DAY), ()
            return t - 6 * HOUR - 7 * MIN, t + 6 * HOUR, ()
        fire = t + 15 * MIN if self.season else t     # an elapse of '*/15' right after the change
        back = fire + RECOVERY[self.recovery]
        down = back - LENGTHS[self.length]
        return down - DAY - 7 * MIN, back + DAY, ((down, back, self.kind),)


@dataclasses.dataclass
class Run:
    case: Case
    fires: list
    pairs: list
    outages: tuple
    tick: int
    period: int
    delay_us: int
    accuracy_us: int
    first_dst: int | None = None


@functools.lru_cache(maxsize=None)
def run_case(case: Case) -> Run:
    start, end, outs = case.window()
    preset = case.preset()
    policy = calsim.Policy(duration=f"{case.duration_min}min") if case.duration_min else None
    sched = _schedule(case.expr, case.zone, preset, policy=policy)
    delay_us = preset.policy.jitter_us
    accuracy_us = ACCURACY[case.accuracy]
    cfg = oracle.TimerConfig(case.expr, case.zone, persistent=case.persistent, accuracy_us=accuracy_us,
                             randomized_delay_us=delay_us, duration_us=case.duration_min * MIN,
                             delay_for=_delay_for(sched, delay_us) if delay_us else None)
    fires = oracle.run_timer(cfg, start, end, [oracle.Outage(a, b, k) for a, b, k in outs])
    _, frame = _calsim_fires(sched, preset, start, end, [_outage(a, b, k) for a, b, k in outs])
    rows_f = frame.filter(frame["due_utc"].is_not_null())
    due = [int(v) for v in rows_f["due_utc"].dt.epoch("us").to_list()]
    st = rows_f["started_utc"].dt.epoch("us").to_list()
    state = [f"{a}/{b}" for a, b in zip(rows_f["state"].cast(str).to_list(), rows_f["reason"].cast(str).to_list())]
    rows = {d: (None if s is None else int(s), x) for d, s, x in zip(due, st, state)}
    period = min(b - a for a, b in zip(due, due[1:]))
    run = Run(case, fires, [], tuple((a, b) for a, b, _ in outs), duration_us(preset.tick, "tick"), period,
              delay_us, accuracy_us)
    run.pairs = pair_up(case, fires, rows, accuracy_us)
    dst = [p.first for p in run.pairs if not p.agrees and _dst_second_pass(p, run)]
    run.first_dst = min(dst) if dst else None
    return run


def _zones():
    return list(TRANSITIONS)


def outage_cases(full: bool = FULL) -> list[Case]:
    """The default third: setting k (of 36) with zone/expression z (of 12) when (k + z) % 3 == 0, so every
    setting runs in 4 zone/expressions and every zone/expression with 12 settings."""
    cases = []
    z = 0
    for zone, season in _zones():
        for expr, cron in OUTAGE_EXPRESSIONS:
            k = 0
            for length in LENGTHS:
                for recovery in RECOVERY:
                    for kind in ("down", "suspend"):
                        for persistent in (False, True):
                            if full or (k + z) % 3 == 0:
                                cases.append(Case("outage", zone, season, expr, cron, persistent, kind, length,
                                                  recovery))
                            k += 1
            z += 1
    return cases


def busy_cases() -> list[Case]:
    return [Case("busy", z, s, *EVERY15, duration_min=d) for z, s in _zones() for d in (10, 20, 40, 95)]


def delay_cases() -> list[Case]:
    cases = [Case("delay", z, s, *EVERY15, delay=d) for z, s in _zones() for d in ("5min", "14min", "40min")]
    at = _us(2026, 6, 1, 10, 0)
    for persistent in (False, True):
        for recovery in RECOVERY:
            cases.append(Case("delay", "Europe/Berlin", None, *EVERY15, persistent, "down", "1h", recovery,
                              delay="10min", at=at))
    return cases


def accuracy_cases() -> list[Case]:
    out = [Case("accuracy", "America/New_York", "spring", *EVERY15, accuracy=a) for a in ("1s", "1min")]
    out.append(Case("accuracy", "Europe/Berlin", None, "*-*-* 02:30:00", "30 2 * * *", accuracy="1h",
                    at=_us(2026, 6, 1, 0, 7)))
    return out


def grid_cases(full: bool = FULL) -> list[Case]:
    return outage_cases(full) + busy_cases() + delay_cases() + accuracy_cases()


@functools.lru_cache(maxsize=None)
def grid(full: bool = FULL):
    """(pairs compared, Counter of stated differences, unstated pairs, [(stated, preset notes)] used)."""
    n, used, unstated, checked = 0, Counter(), [], {}
    for case in grid_cases(full):
        run = run_case(case)
        n += len(run.pairs)
        for p in run.pairs:
            if p.agrees:
                continue
            s = classify(p, run)
            if s is None:
                unstated.append(p)
            else:
                used[s.name] += 1
                checked[(s.name, case.persistent, case.delay, case.accuracy)] = (s, case.preset().notes)
    return n, used, unstated, list(checked.values())


def pairs_compared(full: bool = FULL) -> int:
    return grid(full)[0] + sum(_calendar_case(*c)[2] for c in _dst_cases())


def _unstated_of(case: Case) -> list[Pair]:
    run = run_case(case)
    return [p for p in run.pairs if not p.agrees and classify(p, run) is None]


def _explain(pairs: list[Pair], limit: int = 8) -> str:
    return f"{len(pairs)} unstated disagreements, first ones:\n" + "\n".join(f"  {p}" for p in pairs[:limit])


# -- 1. where an OnCalendar= expression elapses across DST (continuous running) -----------------------

# The calendar cases also run where systemd's walk loses more than the missing times (they are cheap).
CALENDAR_TRANSITIONS = {**TRANSITIONS,
                        ("Europe/Dublin", "spring"): _us(2026, 3, 29, 1),      # 01:00 GMT -> 02:00 IST
                        ("Europe/Dublin", "fall"): _us(2026, 10, 25, 1),       # 02:00 IST -> 01:00 GMT
                        ("Pacific/Chatham", "spring"): _us(2026, 9, 26, 14)}   # 02:45 -> 03:45


def _dst_cases():
    for (zone, season), t in CALENDAR_TRANSITIONS.items():
        for expr, cron in EXPRESSIONS:
            yield zone, season, t, expr, cron


@functools.lru_cache(maxsize=None)
def _calendar_case(zone, season, t, expr, cron):
    start, end = t - DAY - 7 * MIN, t + 2 * DAY
    want = oracle.elapses_between(expr, zone, start, end)
    sched = _schedule(expr, zone, presets.systemd())
    f = calsim.expand([sched], _iso(start), _iso(end), release=RELEASE)
    got = sorted(int(v) for v in f.filter(f["due_utc"].is_not_null())["due_utc"].dt.epoch("us").to_list())
    return want, got, f.height


@pytest.mark.parametrize("zone,season,t,expr,cron", list(_dst_cases()),
                         ids=[f"{z}-{s}-{c}" for z, s, _, _, c in _dst_cases()])
def test_calendar_elapses_across_dst_match_systemd_analyze(zone, season, t, expr, cron):
    want, got, _ = _calendar_case(zone, season, t, expr, cron)
    assert got == want, (f"{zone} {season} {expr!r} / cron {cron!r}: "
                         f"only systemd {_show(sorted(set(want) - set(got)))}, "
                         f"only calsim {_show(sorted(set(got) - set(want)))}")


# -- 2. the grid: every disagreement is a stated one ------------------------------------------------------

@pytest.mark.parametrize("case", outage_cases(), ids=lambda c: c.name)
def test_outage_grid_has_only_stated_disagreements(case):
    """Machine off (a boot: timer_start, timer.c:623-669) or asleep (timer_time_change, timer.c:812-835),
    with and without Persistent=."""
    bad = _unstated_of(case)
    assert not bad, _explain(bad)


@pytest.mark.parametrize("case", busy_cases() + delay_cases() + accuracy_cases(), ids=lambda c: c.name)
def test_settings_grid_has_only_stated_disagreements(case):
    """A unit still active (timer_trigger_notify, timer.c:786-789: no second start, one when it ends),
    RandomizedDelaySec= (timer.c:350-367, 537) and AccuracySec= (sd-event.c:3057-3133)."""
    bad = _unstated_of(case)
    assert not bad, _explain(bad)


def test_grid_disagreements_are_all_stated_in_the_notes(report):
    n, used, unstated, checked = grid()
    line = (f"systemd: {n:,} (scenario, occurrence) pairs compared ({'full grid' if FULL else 'default subset'}, "
            f"{len(grid_cases())} scenarios + {len(list(_dst_cases()))} calendar cases; {oracle.version()} and "
            f"the timer.c port), {len(unstated)} unstated disagreements, stated: {dict(used)}")
    print("\n" + line)
    report.append(line)
    missing = [(s.name, s.note) for s, notes in checked if not any(s.note in x for x in notes)]
    assert not missing, f"stated differences whose note is not in presets.systemd(...).notes: {missing}"
    assert not unstated, _explain(unstated)


def test_compares_many_pairs():
    assert pairs_compared() > 20_000


# -- 3. stated differences, pinned: systemd's behaviour, calsim's, and the note --------------------------

def _note(preset, name: str) -> None:
    s = next(s for s in STATED if s.name == name)
    assert any(s.note in x for x in preset.notes), f"note of {name!r} missing from {preset.name}'s notes"


def test_boot_inside_the_repeated_hour_fires_the_second_pass_times():
    """timer.c:404-409: from a base inside the second pass of a fall-back, calendar_spec_next_usec()
    finds the second-pass wall times (systemd-analyze --base-time shows it): a machine booted at
    01:10 EST on 2026-11-01 runs '*:00/15' at 01:15, 01:30, 01:45 EST, which calsim (fold='first') never
    produces."""
    zone, t = "America/New_York", _us(2026, 11, 1, 6, 10)   # 01:10 EST
    start, end = t - 3 * HOUR - 7 * MIN, t + 2 * HOUR
    want = [f.fired_us for f in oracle.run_timer(oracle.TimerConfig(EVERY15[0], zone), start, end,
                                                 [oracle.Outage(t - 2 * HOUR, t)])]
    preset = presets.systemd()
    got, _ = _calsim_fires(_schedule(EVERY15[0], zone, preset), preset, start, end, [_outage(t - 2 * HOUR, t, "down")])
    second = [t + 5 * MIN, t + 20 * MIN, t + 35 * MIN]         # 01:15, 01:30, 01:45 EST
    assert [u for u in want if t <= u < t + 50 * MIN] == second
    assert [u for u in got if t <= u < t + 50 * MIN] == []
    assert [u for u in want if u not in second] == got
    _note(preset, "dst_second_pass")


def test_unit_still_active_triggers_inside_the_repeated_hour_and_fires_second_pass_times():
    """A 20 min unit on a 15 min timer: the trigger at 01:00 EST (the unit's end) is the base of the next
    elapse (timer.c:402-403), found in the second pass: 01:15 EST fires at 01:20 EST, 01:30 at 01:40."""
    zone, season = "America/New_York", "fall"
    run = run_case(Case("busy", zone, season, *EVERY15, duration_min=20))
    t = TRANSITIONS[(zone, season)]
    extra = [p for p in run.pairs if not p.agrees]
    assert [(p.due, p.oracle, p.calsim) for p in extra] == [(t + 15 * MIN, (t + 20 * MIN,), None),
                                                            (t + 30 * MIN, (t + 40 * MIN,), None)]
    assert all(classify(p, run).name == "dst_second_pass" for p in extra)
    _note(run.case.preset(), "dst_second_pass")


def test_randomized_delay_longer_than_the_period_swallows_the_next_elapse():
    """timer.c:537 adds the delay to the computed elapse and the next elapse is computed from the delayed
    trigger (timer.c:402-403, 607): nothing caps the delay at the next elapse, so elapses inside the delay are
    never run. calsim caps jitter at the next occurrence (Temporal's rule) and runs every occurrence."""
    run = run_case(Case("delay", "America/New_York", "fall", *EVERY15, delay="40min"))
    oracle_n = sum(len(p.fires) for p in run.pairs)
    rows = [p for p in run.pairs if p.state != "-"]                    # calsim's occurrences
    assert all(p.calsim is not None for p in rows) and oracle_n < 0.6 * len(rows)  # systemd swallows about half
    assert all(p.calsim <= q.due for p, q in zip(rows, rows[1:]))      # calsim: capped at the next
    assert any(f.fired_us - f.elapse_us > run.period for f in run.fires)  # systemd: not capped
    assert {classify(p, run).name for p in run.pairs if not p.agrees} == {"delay_longer_than_period"}
    _note(run.case.preset(), "delay_longer_than_period")


def test_persistent_catch_up_at_boot_is_still_randomly_delayed():
    """man systemd.timer Persistent=: the catch-up "is nonetheless subject to the delay imposed by
    RandomizedDelaySec=" (timer.c:419-420 then 537: boot instant + delay). Boot at 10:07 after an hour
    off, 10 min delay: systemd starts the catch-up at 10:15 and the 10:15 elapse is swallowed (the next is
    computed from that trigger); calsim starts the catch-up at 10:08 and 10:15 at its own delay."""
    zone, t = "Europe/Berlin", _us(2026, 6, 1, 10, 7)
    start, end = t - 3 * HOUR - 11 * MIN, t + HOUR
    preset = presets.systemd(persistent=True, randomized_delay_sec="10min")
    sched = _schedule(EVERY15[0], zone, preset)
    delay_us = preset.policy.jitter_us
    cfg = oracle.TimerConfig(EVERY15[0], zone, persistent=True, randomized_delay_us=delay_us,
                             delay_for=_delay_for(sched, delay_us))
    fires = oracle.run_timer(cfg, start, end, [oracle.Outage(t - HOUR, t)])
    got, _ = _calsim_fires(sched, preset, start, end, [_outage(t - HOUR, t, "down")])
    want = [f.fired_us for f in fires]
    catchup = next(f for f in fires if f.why == "boot_catchup")
    assert catchup.fired_us == t + 8 * MIN                               # 10:15: boot + the drawn delay
    assert [u for u in want if t <= u < t + 20 * MIN] == [t + 8 * MIN]
    assert [u for u in got if t <= u < t + 20 * MIN] == [t + MIN, t + 18 * MIN]  # 10:08 and 10:15's own delay
    assert [u for u in want if u >= t + 20 * MIN] == [u for u in got if u >= t + 20 * MIN]
    _note(preset, "persistent_catch_up_delayed")


def test_accuracy_of_an_hour_fires_late_in_the_window_not_on_the_hour():
    """sd-event.c:3090-3099: sleep_between() takes the latest minute-aligned point of [elapse, elapse +
    accuracy], so AccuracySec=1h fires a 02:30 elapse at 03:29 (+ the boot's perturbation); calsim's
    tick='60min' fires it at 03:00 (epoch-aligned ticks)."""
    run = run_case(Case("accuracy", "Europe/Berlin", None, "*-*-* 02:30:00", "30 2 * * *", accuracy="1h",
                        at=_us(2026, 6, 1, 0, 7)))
    assert len(run.pairs) >= 3
    assert [(p.oracle[0] - p.due, p.calsim - p.due) for p in run.pairs] == [(59 * MIN, 30 * MIN)] * len(run.pairs)
    assert all(classify(p, run).name == "accuracy_point" for p in run.pairs)
    _note(run.case.preset(), "accuracy_point")


def test_persistent_catch_up_at_a_minute_aligned_boot_starts_once_at_boot_in_systemd_a_tick_later_in_calsim():
    """Persistent=yes, boot exactly at 10:00 after missed elapses: timer.c:413-420 moves the missed elapse
    to the boot instant, sleep_between(boot, boot + 1 min) is boot itself (sd-event.c:3090-3099: 10:01 is
    the window's end, excluded), the trigger sets last_trigger = boot (timer.c:607) and the 10:00 elapse
    (not strictly after it) never fires: one start, at 10:00. calsim: one start, at its first tick after
    the boot (recovery_wake=False), 10:01. A boot 30 s later (10:00:30) agrees: see
    test_persistent_catch_up_at_boot_is_placed_in_the_accuracy_window."""
    run = run_case(Case("outage", "Europe/Berlin", None, *EVERY15, True, "down", "1h", "at", at=_us(2026, 6, 1, 10)))
    t = run.outages[0][1]
    want = [f.fired_us for f in run.fires]
    got = sorted(p.calsim for p in run.pairs if p.calsim is not None)
    assert [u for u in want if t - HOUR <= u < t + 10 * MIN] == [t]
    assert [u for u in got if t - HOUR <= u < t + 10 * MIN] == [t + MIN]
    assert [u for u in want if u != t] == [u for u in got if u != t + MIN]
    bad = [p for p in run.pairs if not p.agrees]
    assert [(p.due, p.oracle, p.calsim) for p in bad] == [(t, (t,), t + MIN)]
    assert classify(bad[0], run).name == "persistent_catch_up_at_boot_on_accuracy_point"
    _note(run.case.preset(), "persistent_catch_up_at_boot_on_accuracy_point")


def test_persistent_elapse_exactly_at_a_minute_aligned_boot_fires_at_boot_in_systemd_a_tick_later_in_calsim():
    """Persistent=yes, off 30 s until exactly the 10:00 elapse: the base is the stamp (09:45, timer.c:645-660,
    402-403), the next elapse 10:00 is not before boot (not rebased) and fires at sleep_between(10:00,
    10:01) = 10:00. calsim: 10:00 is due at the come-back instant (down_is_missed), caught up at 10:01."""
    zone, t = "Europe/Berlin", _us(2026, 6, 1, 10, 0)
    start, end = t - 3 * HOUR - 7 * MIN, t + HOUR
    cfg = oracle.TimerConfig(EVERY15[0], zone, persistent=True)
    fires = oracle.run_timer(cfg, start, end, [oracle.Outage(t - 30 * US, t)])
    preset = presets.systemd(persistent=True)
    got, _ = _calsim_fires(_schedule(EVERY15[0], zone, preset), preset, start, end, [_outage(t - 30 * US, t, "down")])
    want = [f.fired_us for f in fires]
    assert [(f.elapse_us, f.fired_us, f.why) for f in fires if f.elapse_us == t] == [(t, t, "elapse")]
    assert t not in got and t + MIN in got
    assert [u for u in want if u != t] == [u for u in got if u != t + MIN]
    _note(preset, "persistent_catch_up_at_boot_on_accuracy_point")


# -- 4. agreement, pinned ---------------------------------------------------------------------------------

def test_machine_off_an_elapse_30s_before_boot_is_not_run_without_persistent():
    """timer.c:404-409: after boot the next elapse is computed strictly after the activation instant
    (calendarspec.c:1419), so an elapse missed by 30 s is not run (calsim: down_is_missed)."""
    zone, t = "Europe/Berlin", _us(2026, 6, 1, 10, 0)
    start, end = t - HOUR - 7 * MIN, t + HOUR
    want = [f.fired_us for f in oracle.run_timer(oracle.TimerConfig(EVERY15[0], zone), start, end,
                                                 [oracle.Outage(t - 10 * MIN, t + 30 * US)])]
    preset = presets.systemd()
    got, _ = _calsim_fires(_schedule(EVERY15[0], zone, preset), preset, start, end,
                           [_outage(t - 10 * MIN, t + 30 * US, "down")])
    assert t not in want
    assert got == want


def test_suspend_without_persistent_still_fires_once_on_resume():
    """man systemd.timer (OnCalendar=): elapses while asleep are processed on resume, several giving a single
    activation; timer_time_change (timer.c:812-835) recomputes from last_trigger and the past elapse fires at
    once. Persistent= plays no part (it only matters when the timer unit is started, timer.c:645-660)."""
    zone, t = "Europe/Berlin", _us(2026, 6, 1, 10, 5)
    start, end = t - 3 * HOUR - 11 * MIN, t + HOUR
    want = [f.fired_us for f in oracle.run_timer(oracle.TimerConfig(EVERY15[0], zone), start, end,
                                                 [oracle.Outage(t - HOUR, t, "suspend")])]
    preset = presets.systemd()
    got, _ = _calsim_fires(_schedule(EVERY15[0], zone, preset), preset, start, end, [_outage(t - HOUR, t, "suspend")])
    assert t in want
    assert got == want


def test_persistent_catch_up_at_boot_is_placed_in_the_accuracy_window():
    """timer.c:417-420 moves the missed elapse to the boot instant, then sd-event wakes at
    sleep_between(boot, boot + AccuracySec) (sd-event.c:3090-3099): a boot at 10:00:30 fires at 10:01:00
    (+ the boot's perturbation), not at 10:00:30."""
    zone, t = "Europe/Berlin", _us(2026, 6, 1, 10, 0, 30)
    start, end = t - 3 * HOUR - 11 * MIN, t + HOUR
    cfg = oracle.TimerConfig(EVERY15[0], zone, persistent=True)
    want = [f.fired_us for f in oracle.run_timer(cfg, start, end, [oracle.Outage(t - HOUR, t)])]
    preset = presets.systemd(persistent=True)
    got, _ = _calsim_fires(_schedule(EVERY15[0], zone, preset), preset, start, end, [_outage(t - HOUR, t, "down")])
    assert t + 30 * US in want
    assert got == want


@pytest.mark.parametrize("duration_min", [10, 40, 95])
def test_unit_still_active_is_not_started_again_and_runs_once_when_it_ends(duration_min):
    """timer_trigger_notify (timer.c:786-789): elapses while the unit runs give one start when it ends."""
    zone, t = "Europe/Berlin", _us(2026, 6, 1, 10, 0)
    start, end = t - 6 * HOUR - 7 * MIN, t + 6 * HOUR
    cfg = oracle.TimerConfig(EVERY15[0], zone, duration_us=duration_min * MIN)
    want = [f.fired_us for f in oracle.run_timer(cfg, start, end)]
    preset = presets.systemd()
    sched = _schedule(EVERY15[0], zone, preset, policy=calsim.Policy(duration=f"{duration_min}min"))
    got, _ = _calsim_fires(sched, preset, start, end)
    assert got == want


def test_an_elapse_exactly_at_boot_is_not_run_without_persistent():
    """timer_start -> timer_enter_waiting (timer.c:404-409): the base is the activation instant and
    calendar_spec_next_usec() returns the first elapse strictly after it (calendarspec.c:1419): an elapse at
    the boot instant itself never runs without Persistent=. calsim: due at the come-back instant counts as
    due while down (down_is_missed), catchup='skip'."""
    zone, t = "Europe/Berlin", _us(2026, 6, 1, 10, 0)
    start, end = t - HOUR - 7 * MIN, t + HOUR
    want = [f.fired_us for f in oracle.run_timer(oracle.TimerConfig(EVERY15[0], zone), start, end,
                                                 [oracle.Outage(t - 10 * MIN, t)])]
    preset = presets.systemd()
    got, _ = _calsim_fires(_schedule(EVERY15[0], zone, preset), preset, start, end, [_outage(t - 10 * MIN, t, "down")])
    assert [u for u in want if t - 10 * MIN <= u < t + 10 * MIN] == []
    assert got == want, _only(want, got)


def test_an_elapse_30s_after_boot_runs_on_time():
    """Boot at 09:59:30 after an hour off, no Persistent=: the first elapse strictly after boot is 10:00
    (timer.c:404-409) and it runs at 10:00. calsim: the wake-up's mode is catchup='skip', which does not
    coalesce, so the on-time 10:00 row does not join the missed rows' backlog and runs."""
    zone, t = "Europe/Berlin", _us(2026, 6, 1, 10, 0)
    start, end = t - 3 * HOUR - 7 * MIN, t + HOUR
    outage = (t - HOUR - 30 * US, t - 30 * US)
    want = [f.fired_us for f in oracle.run_timer(oracle.TimerConfig(EVERY15[0], zone), start, end,
                                                 [oracle.Outage(*outage)])]
    preset = presets.systemd()
    got, _ = _calsim_fires(_schedule(EVERY15[0], zone, preset), preset, start, end, [_outage(*outage, "down")])
    assert t in want
    assert got == want, _only(want, got)


def test_a_suspend_ending_exactly_on_an_elapse_fires_once_on_resume():
    """Asleep 09:00-10:00, no Persistent=: on resume timer_time_change (timer.c:812-835) re-arms from
    last_trigger (09:00), the 09:15 elapse is past and fires at once, 10:00 (not strictly after that trigger)
    is covered by it: one start at 10:00. calsim: the resume wake-up's mode is suspend_catchup='latest' and
    the on-time 10:00 row joins its backlog: one start, at 10:00."""
    zone, t = "Europe/Berlin", _us(2026, 6, 1, 10, 0)
    start, end = t - 3 * HOUR - 7 * MIN, t + HOUR
    want = [f.fired_us for f in oracle.run_timer(oracle.TimerConfig(EVERY15[0], zone), start, end,
                                                 [oracle.Outage(t - HOUR, t, "suspend")])]
    preset = presets.systemd()
    got, _ = _calsim_fires(_schedule(EVERY15[0], zone, preset), preset, start, end, [_outage(t - HOUR, t, "suspend")])
    assert [u for u in want if t - HOUR <= u <= t + MIN] == [t]
    assert got == want, _only(want, got)


# -- 5. disagreements no note states (kept failing until the engine or the notes change) ------------------

def test_an_elapse_at_boot_is_not_run_even_when_its_random_delay_ends_after_boot():
    """Agreement. RandomizedDelaySec=10min, no Persistent=, off 09:00-10:00 (Berlin, '*:00/15'): timer.c:404-409
    computes the first elapse strictly after the boot instant (10:15) and only then adds the random delay
    (timer.c:537, add_random L350-367): the 10:00 elapse never runs, whatever its delay. calsim decides "due
    while down" on the due instant, not the jittered one, so it does not run it either."""
    run = run_case(Case("delay", "Europe/Berlin", None, *EVERY15, False, "down", "1h", "at", delay="10min",
                        at=_us(2026, 6, 1, 10)))
    t = run.outages[0][1]
    assert not [f for f in run.fires if f.elapse_us == t]
    bad = [p for p in run.pairs if not p.agrees and classify(p, run) is None]
    assert not bad, _explain(bad)
