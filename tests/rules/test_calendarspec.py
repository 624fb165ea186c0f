"""calsim's ``OnCalendar=`` expansion under ``presets.systemd()`` against systemd's own ``systemd-analyze calendar``.

The real thing decides: ``systemd-analyze calendar --iterations=N
--base-time=@<epoch> <expr>...`` (systemd 252.38 here, the code ``timer.c``
calls; one process answers many expressions) reading the zone from calsim's
release ``2026f`` (``TZ=:<file>``, :mod:`oracles.systemd`), beside
``calsim.expand`` of the same expression with ``presets.systemd()``
(``gap``/``fold="scheduler"``: the port of ``calendar_spec_next_usec`` over
glibc's ``mktime``, :mod:`calsim.rules.calendarspec`).

* **the grid**: every expression of :data:`EXPRESSIONS` (weekdays, ranges,
  repetitions, lists, seconds, years, ``~``, zone suffixes, shorthands) in
  each zone of :data:`ZONES` over ``[change - 2 days, change + 2 days)`` of
  each of its 2026 changes; a pair is one instant either side has, and it
  agrees when both have it (as often). ``CALSIM_LONG=1`` adds random
  expressions (:func:`random_expressions`);
* **bases**: the walk from a base inside or next to each change (a timer
  that boots, resumes or triggers there): ``OnCalendar.next_after`` chained
  from each base against ``--base-time``;
* **glibc**: the port of ``mktime`` against glibc's own, a C line protocol
  built here (``oracles/glibc/mktime.c``), on call sequences that carry its
  remembered offset.

* **UTC**: random expressions' wall times against systemd-analyze in a
  zone without changes (the walk steps over times at some rollovers:
  ``OnCalendar.wall_times`` leaves them out too).

A disagreement is allowed only where :data:`STATED` says so, with the text
of a ``Difference`` of the preset: rules the walk is not ported for (the
sub-second ones) get the preset's fallback; a walk that reads the clock
past its next elapse across a change (``OnCalendar.walk_lookahead``) is
not run by ``calsim.emulation`` there; which pass of a repeated hour whose
passes share ``tm_isdst`` the walk reads depends on the process's previous
``mktime``.
"""

from __future__ import annotations

import datetime as dt
import functools
import os
import random
from collections import Counter
from dataclasses import dataclass
from typing import Callable

import pytest

import calsim
from calsim import presets
from calsim.rules.calendarspec import local_time, next_usec
from calsim.rules.days import day_table_wall_times
from calsim.rules.oncalendar import OnCalendar, _rollovers
from calsim.tz.clock import ZoneClock
from calsim.tz.glibc import LocalTime
from calsim.tz.release import release as tz_release
from oracles import systemd as oracle

US = oracle.US
DAY = 86400
RELEASE = oracle.RELEASE
LONG = os.environ.get("CALSIM_LONG") == "1"

ZONES = ["America/New_York", "Europe/Berlin", "Europe/Dublin", "Australia/Lord_Howe", "Pacific/Chatham",
         "Asia/Beirut", "Africa/Cairo", "America/Santiago", "Australia/Sydney",
         "Africa/Casablanca"]  # Morocco: "negative DST" like Dublin, and a change of standard time in 2026f


def _changes() -> list[tuple[str, int]]:
    """(zone, UTC second of each of its 2026 changes), from the release both sides read."""
    out = []
    for zone in ZONES:
        clock = ZoneClock(tz_release(RELEASE).table(zone))
        out += [(zone, t) for t in clock.transitions(1767225600, 1798761600)]
    return out


CHANGES = _changes()

EXPRESSIONS = [
    # times of day in and around the changes: ranges, repetitions, lists
    "*-*-* 1..3:30", "*-*-* 01:30", "*-*-* 02:30", "*-*-* 3:50", "*-*-* 02:00,59:00", "*-*-* 00:00,30",
    "*-*-* 23:30", "*-*-* 0/2:45", "*-*-* 00..23/5:10", "*-*-* 01..04:0/10", "*-*-* 02:00..59/7",
    "*-*-* 23,0,1:59", "*-*-* 00,01,02,03:00,30", "*-*-* 01:15,45",
    # repetitions run past their unit: a carry over two units steps over a time (00:07), a look ahead across a
    # change can make the walk fail
    "*:52,7/25", "*-*-* 0/14:00", "*-1/5-01 00:00", "*-*-* 0/5:30",
    # minutes and seconds
    "*:0/15", "*-*-* *:50", "*-*-* *:05", "*-*-* *:46", "*-*-* 01..03:*:30", "*-*-* 02:30:15",
    "*-*-* *:00/30:10..50/20",
    # weekdays (a date and a weekday must both match)
    "Mon..Fri *-*-* 01..03:15", "Sat,Sun 00:30", "Sun *-*-* 0..4:0/20", "monday,FRIDAY 3:00", "Sun 02:30",
    # days from the month's end, dates and years
    "*-*~01 *:30", "*-*~07/1 01,02:30", "*-*~01..03 02:15", "Sun *-*~07/1 02:00", "*-03,04,09,10~01 03:30",
    "*-03,04,09,10-* 02:30", "2026-*-* 01:30", "2026..2027-*-25..31 02:30", "*-*-1/5 00:30", "26-*-* 3:50",
    "2026-03-29,30 01..03:00", "2025-*-* 00:00",
    # zone suffixes: the expression's own zone, whatever the machine's
    "*-*-* 02:30 UTC", "*-*-* 01:30 Europe/Dublin", "*-*-* 03:50 Pacific/Chatham", "daily America/Santiago",
    "*-*-* 00..03:0/30 Africa/Casablanca",
    # shorthands
    "hourly", "daily", "weekly", "monthly", "yearly", "annually", "quarterly", "semiannually",
    # sub-second: not walked (the preset's fallback), compared to the second systemd prints
    "*-*-* 02,03:40..50:00/7.5",
]
BASE_EXPRESSIONS = ["*:0/15", "*-*-* 1..3:30", "*-*-* *:50", "*-*~07/1 01,02:30", "hourly", "daily",
                    "Sun *-*-* 0..4:0/20"]


def random_expressions(n: int, seed: int = 25) -> list[str]:
    """Valid expressions drawn over the whole grammar (CALSIM_LONG=1)."""
    rng = random.Random(seed)
    names = ["Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun", "monday", "FRIDAY"]

    def part(lo: int, hi: int, star: bool = True) -> str:
        if star and rng.random() < 0.3:
            return "*"
        items = []
        for _ in range(rng.choice([1, 1, 2, 3])):
            a, r = rng.randint(lo, hi), rng.random()
            items.append(f"{a}" if r < 0.4 else f"{a}..{rng.randint(a, hi)}" if r < 0.6
                         else f"{a}/{rng.randint(1, hi - lo)}" if r < 0.8
                         else f"{a}..{rng.randint(a, hi)}/{rng.randint(1, 6)}")
        return ",".join(items)

    out: list[str] = []
    while len(out) < n:
        e = rng.choice(["", "", rng.choice(names) + " ", f"{rng.choice(names[:3])}..{rng.choice(names[3:7])} "])
        if rng.random() < 0.6:
            sep = "~" if rng.random() < 0.25 else "-"
            day = part(1, 31) if sep == "-" else part(1, 7, star=False)
            e += f"{'2026-' if rng.random() < 0.3 else ''}{part(1, 12)}{sep}{day} "
        e += f"{part(0, 23)}:{part(0, 59)}" + (f":{part(0, 59)}" if rng.random() < 0.3 else "")
        try:
            rule = OnCalendar.parse(e.strip())
        except calsim.CalsimError:
            continue
        if rule.emulates and len(rule.times_of_day()) <= 300:
            out.append(e.strip())
    return out


# CALSIM_LONG=1: the elapse-every-few-seconds ones (thousands of systemd-analyze iterations per change), more
# zone suffixes (systemd forks a child per elapse for them) and random expressions.
LONG_EXPRESSIONS = ["minutely", "*:*:0/20", "*:0/30 Africa/Casablanca", "*:0/20 Europe/Dublin",
                    "Mon..Sun *-*-* *:0/5 Australia/Lord_Howe"]
GRID = list(dict.fromkeys(EXPRESSIONS + (LONG_EXPRESSIONS + random_expressions(200) if LONG else [])))


@pytest.fixture(scope="module", autouse=True)
def _needs_systemd_analyze():
    oracle.require()


def _iso(us: int) -> dt.datetime:
    return dt.datetime.fromtimestamp(us / US, dt.timezone.utc)


def _hm(us: int, zone: str) -> str:
    return _iso(us).astimezone(oracle._zone(zone)).strftime("%m-%d %H:%M:%S%z")


# -- the grid -----------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Pair:
    """One instant (UTC µs, to the second) of one expression in one change's window, as each side has it."""

    expr: str
    zone: str
    change: int
    at: int
    systemd: int   # how many elapses systemd has at that second (sub-second rules: several)
    calsim: int

    @property
    def agrees(self) -> bool:
        return self.systemd == self.calsim

    def __str__(self) -> str:
        return (f"{self.expr!r} in {self.zone} (change {_hm(self.change * US, self.zone)}): "
                f"{_hm(self.at, self.zone)} systemd x{self.systemd}, calsim x{self.calsim}")


@dataclass(frozen=True)
class Stated:
    """A difference a ``Difference`` of ``presets.systemd()`` states; ``applies(pair)`` recognises its pairs."""

    name: str
    note: str
    applies: Callable[[Pair], bool]


def _lead(expr: str) -> int:
    """How long before a window systemd's walk starts (µs): a walk started right after a rollover where the
    expression's repetition carries over (``*:07/25`` at midnight, see OnCalendar.wall_times) elapses at a time
    that a timer running all along steps over, so the walk starts one rollover span earlier."""
    return _rollovers(OnCalendar.parse(expr))[1]


@functools.lru_cache(maxsize=None)
def _walked_us(expr: str, zone: str, lo: int, hi: int) -> Counter:
    """The seconds of the elapses in ``[lo, hi)`` of systemd's walk as ported, in µs (not as calsim fires it),
    from the base systemd-analyze is given."""
    rule = OnCalendar.parse(expr)
    clock = ZoneClock(tz_release(RELEASE).table(rule.zone or zone))
    out, b = Counter(), lo - 1 - _lead(expr)
    while (b := next_usec(rule, clock, b)) is not None and b < hi:
        if b >= lo:
            out[b // US * US] += 1
    return out


def _not_walked(p: Pair) -> bool:
    """A rule the walk is not ported for (sub-second elapses) gets the fallback gap='skip', fold='first': the pair
    is one where the port of the walk, run in µs, gives systemd's count and calsim's fallback does not."""
    if OnCalendar.parse(p.expr).emulates is not None:
        return False
    lo, hi = (p.change - 2 * DAY) * US, (p.change + 2 * DAY) * US
    return _walked_us(p.expr, p.zone, lo, hi)[p.at] == p.systemd


def _look_ahead(p: Pair) -> bool:
    """The walk read the clock past its next elapse (OnCalendar.walk_lookahead: a repetition run past its unit)
    and across the change, where calsim.emulation, looking only between elapses, took the calendar's next time:
    the pair is one where the port, walked from systemd-analyze's base, gives systemd's count and calsim does not."""
    rule = OnCalendar.parse(p.expr)
    if rule.emulates is None or rule.walk_lookahead <= 0:
        return False
    lo, hi = (p.change - 2 * DAY) * US, (p.change + 2 * DAY) * US
    return _walked_us(p.expr, p.zone, lo, hi)[p.at] == p.systemd


def _same_isdst_folds(zone: str) -> list[tuple[int, int]]:
    """``[T - r, T + r)`` around each fall-back by ``r`` whose two passes have the same tm_isdst (a change of
    standard time: Africa/Casablanca 2026-09-20 in 2026f)."""
    g = LocalTime(tz_release(RELEASE).table(zone))
    out = []
    for i, t in enumerate(g._utc):
        r = g._off[i] - g._off[i + 1]
        if r > 0 and g._dst[i] == g._dst[i + 1]:
            out.append((t - r, t + r))
    return out


def _shared_mktime_memory(p: Pair) -> bool:
    """The pair lies in a repeated hour whose passes have the same tm_isdst: which pass the walk reads there is
    decided by glibc's remembered mktime offset, i.e. by the process's previous mktime call (in systemd-analyze
    the previous expression's, in a child forked for a zone suffix the parent's; in PID 1 any timer's)."""
    zone = OnCalendar.parse(p.expr).zone or p.zone
    return any(a <= p.at // US < b for a, b in _same_isdst_folds(zone))


STATED = [
    Stated("not_walked", "rules systemd's walk is not ported for (sub-second OnCalendar= elapses", _not_walked),
    Stated("look_ahead", "systemd's walk reads the clock past its next elapse", _look_ahead),
    Stated("shared_mktime_memory", "it decides the pass of a repeated hour whose two passes have the same tm_isdst",
           _shared_mktime_memory),
]


def _calsim(exprs: list[str], zone: str, lo: int, hi: int) -> tuple[dict[str, Counter], Counter, int]:
    """calsim's elapses (to the second) in ``[lo, hi)`` of each expression, its row counts (an upper bound of
    systemd's elapses: every matching instant, both passes of a repeated hour) and how many rows say
    ``dst_lost:systemd`` (a matching instant systemd's walk does not reach)."""
    preset = presets.systemd()
    scheds = [preset.apply(calsim.Schedule(f"e{i}", zone, "2025-12-01T00:00", "OnCalendar=" + e))
              for i, e in enumerate(exprs)]
    f = calsim.expand(scheds, _iso(lo), _iso(hi), release=RELEASE)
    fires = {e: Counter() for e in exprs}
    rows: Counter = Counter()
    ids = f["schedule_id"].cast(str).to_list()
    due = f["due_utc"].dt.epoch("us").to_list()
    lost = sum("dst_lost:systemd" in n for n in f["notes"].to_list())
    for sid, d in zip(ids, due):
        e = exprs[int(sid[1:])]
        rows[e] += 1
        if d is not None:
            fires[e][d // US * US] += 1
    return fires, rows, lost


def _systemd(exprs: list[str], zone: str, lo: int, hi: int) -> dict[str, Counter]:
    """systemd's elapses in ``[lo, hi)``, walked from :func:`_lead` before ``lo``: enough iterations to pass
    ``hi`` (every matching wall time a day around, which also covers a repeated hour's second pass), batched by
    base and by a power of two."""
    groups: dict[tuple[int, int], list[str]] = {}
    for e in exprs:
        base = lo - 1 - _lead(e)
        need = len(day_table_wall_times(OnCalendar.parse(e), base - DAY * US, hi + DAY * US)) + 2
        n = 4
        while n < need:
            n *= 2
        groups.setdefault((base, n), []).append(e)
    out = {}
    for (base, n), part in groups.items():
        got = oracle.calendar_many(part, zone, base, n)
        for e in part:
            if len(got[e]) == n and got[e][-1] < hi:  # pragma: no cover - the bound above is wrong
                raise AssertionError(f"{e!r} in {zone}: {n} iterations end before the window does")
            out[e] = Counter(t // US * US for t in got[e] if lo <= t < hi)
    return out


def _has_wall_times(expr: str, lo: int, hi: int) -> bool:
    """Whether the expression names a wall time within a day of ``[lo, hi)`` (else neither side has an elapse)."""
    return len(OnCalendar.parse(expr).wall_times(lo - DAY * US, hi + DAY * US)) > 0


def _change_pairs(zone: str, change: int, exprs: list[str]) -> tuple[list[Pair], int]:
    lo, hi = (change - 2 * DAY) * US, (change + 2 * DAY) * US
    # A window where an expression names no time has no pair to compare (systemd only ever fires a matching
    # time), and calsim.emulation would walk the rule there from 1970 (thousands of port calls).
    exprs = [e for e in exprs if _has_wall_times(e, lo, hi)]
    ours, _, lost = _calsim(exprs, zone, lo, hi)
    theirs = _systemd(exprs, zone, lo, hi)
    pairs = []
    for e in exprs:
        for at in sorted(set(ours[e]) | set(theirs[e])):
            pairs.append(Pair(e, zone, change, at, theirs[e][at], ours[e][at]))
    return pairs, lost


_GRID: dict = {}


def grid() -> dict:
    """Every pair of the grid, and how many calsim rows say dst_lost:systemd (computed once per run)."""
    if not _GRID:
        runs = oracle.RUNS[0]
        pairs, lost = [], 0
        for zone, t in CHANGES:
            p, n = _change_pairs(zone, t, GRID)
            pairs += p
            lost += n
        _GRID.update(pairs=pairs, lost=lost, runs=oracle.RUNS[0] - runs)
    return _GRID


def _classify(p: Pair) -> Stated | None:
    return next((s for s in STATED if s.applies(p)), None)


@pytest.mark.parametrize("expr", ["*-*-* 02:30:00", "*:0/15", "Mon *-*-* 09:00"])
def test_the_next_elapse_from_an_elapse_is_strictly_after_it(expr):
    # calendar_spec_next_usec searches from usec + 1: a timer that elapsed at X is next due after X, never at X
    # (a walk that gave X again would never move on). systemd-analyze, from X, says the same.
    clock = ZoneClock(tz_release(RELEASE).table("UTC"))
    rule = OnCalendar.parse(expr)
    first = next_usec(rule, clock, 1775001600 * US, offset=0)  # after 2026-04-01 00:00Z
    second = next_usec(rule, clock, first, offset=0)
    assert second > first
    assert oracle.calendar(expr, "UTC", first, 1) == (second,)


def test_a_quarter_hourly_walk_moves_on_through_dublins_spring_change_as_systemd_analyze_does():
    # Dublin's "negative DST": mktime moves 01:00 back before the start, and systemd >= 252.31 (PR #36897) skips
    # such a match instead of taking it. Taken, the walk from 01:45 GMT would answer 01:00 and never move on.
    clock = ZoneClock(tz_release(RELEASE).table("Europe/Dublin"))
    rule, t = OnCalendar.parse("*:0/15"), 1774738800 * US  # 2026-03-28 23:00Z
    chain = []
    for _ in range(12):
        t = next_usec(rule, clock, t)
        chain.append(t)
    assert all(b > a for a, b in zip(chain, chain[1:]))
    assert oracle.calendar("*:0/15", "Europe/Dublin", 1774738800 * US, 12) == tuple(chain)


def test_grid_covers_every_zone_both_changes_and_the_grammar():
    assert {z for z, _ in CHANGES} == set(ZONES) and all(sum(z == x for x, _ in CHANGES) >= 2 for z in ZONES)
    text = " ".join(EXPRESSIONS)
    for token in ("Mon..Fri", "Sat,Sun", "~", "..", "/", ",", "UTC", "Europe/Dublin", "2026-", "26-", "hourly",
                  "daily", "weekly", "monthly", "yearly", "quarterly", "semiannually", ":30:15", "/7.5"):
        assert token in text, token


def test_oncalendar_grid_equals_systemd_analyze_but_for_stated_differences(report):
    g = grid()
    pairs = g["pairs"]
    bad = [p for p in pairs if not p.agrees]
    stated = Counter()
    unstated = []
    for p in bad:
        s = _classify(p)
        if s is None:
            unstated.append(p)
        else:
            stated[s.name] += 1
    notes = presets.systemd().notes
    for s in STATED:
        assert any(s.note in n for n in notes), f"stated difference {s.name!r}: no such note in presets.systemd()"
    line = (f"systemd OnCalendar=: {len(pairs):,} (expression, instant) pairs compared ({len(GRID)} expressions x "
            f"{len(CHANGES)} changes in {len(ZONES)} zones, {g['runs']} systemd-analyze runs, {oracle.version()}, "
            f"zones of {RELEASE}; {g['lost']} matching instants systemd's walk loses, dst_lost:systemd in calsim), "
            f"{len(unstated)} unstated disagreements, stated: {dict(stated)}")
    print("\n" + line)
    report.append(line)
    assert len(pairs) > 20_000
    assert not unstated, "\n".join(str(p) for p in unstated[:10])


def test_dst_changes_do_cost_elapses_that_calsim_marks_lost():
    """The grid is not trivially equal: systemd's walk loses matching times next to the changes, calsim's rows
    say so (dst_lost:systemd), and the two still agree."""
    assert grid()["lost"] > 100
    s = presets.systemd().apply(calsim.Schedule("d", "Europe/Dublin", "2026-03-01T00:00",
                                                 "OnCalendar=*-*-* 1..3:30"))
    f = calsim.expand(s, "2026-03-28T00:00Z", "2026-03-31T00:00Z", release=RELEASE)
    notes = {str(r["nominal_local"]): r["notes"] for r in f.iter_rows(named=True)}
    assert notes["2026-03-29 02:30:00"] == ["dst_lost:systemd"] and notes["2026-03-29 03:30:00"] == ["dst_lost:systemd"]
    assert notes["2026-03-29 01:30:00"] == ["dst_gap_skipped"] and notes["2026-03-30 02:30:00"] == []


# -- what systemd does, pinned (each also in the grid) --------------------------------------------------------

def _elapses(expr: str, zone: str, start: str, n: int) -> list[str]:
    base = int(dt.datetime.fromisoformat(start).timestamp()) * US
    return [_hm(t, zone) for t in oracle.calendar(expr, zone, base, n)]


def test_dublin_spring_change_loses_0230_and_0330_ist_for_1_to_3_30():
    """glibc moves 01:30 (in the gap) back to 00:30 GMT (GMT has isdst=1), find_next refuses going backward
    (-EDEADLK) and moves on to the next day."""
    assert _elapses("*-*-* 1..3:30", "Europe/Dublin", "2026-03-29T00:00:00+00:00", 3) == [
        "03-30 01:30:00+0100", "03-30 02:30:00+0100", "03-30 03:30:00+0100"]


def test_chatham_walk_fails_at_the_spring_change_and_the_timer_stops():
    """*:50 in Chatham's 02:45 -> 03:45 change: systemd-analyze says "Infinite loop in calendar calculation";
    a timer gets no next elapse (timer.c) and stops. calsim's rows after it: dst_stuck:systemd (reason 'stuck')."""
    assert _elapses("*-*-* *:50", "Pacific/Chatham", "2026-09-27T01:00:00+12:45", 40) == ["09-27 01:50:00+1245"]
    s = presets.systemd().apply(calsim.Schedule("c", "Pacific/Chatham", "2026-09-01T00:00", "OnCalendar=*-*-* *:50"))
    f = calsim.expand(s, "2026-09-26T12:00Z", "2026-09-26T20:00Z", release=RELEASE)
    got = {str(r["nominal_local"].time()): r["notes"] for r in f.iter_rows(named=True)}
    assert got.pop("00:50:00") == [] and got.pop("01:50:00") == [] and got.pop("02:50:00") == ["dst_gap_skipped"]
    assert set(map(tuple, got.values())) == {("dst_stuck:systemd",)} and len(got) >= 5


def test_berlin_tilde_rule_reads_the_repeated_hour_in_its_second_pass():
    """'~' looks at the month's last days with mktime, which leaves glibc on CET: 02:30 of the fall-back day
    is read after the change (00:30Z is 02:30 CEST, 01:30Z is 02:30 CET)."""
    assert _elapses("*-*~07/1 01,02:30", "Europe/Berlin", "2026-10-24T12:00:00+00:00", 3) == [
        "10-25 01:30:00+0200", "10-25 02:30:00+0100", "10-26 01:30:00+0100"]


def test_carry_over_two_units_steps_over_a_time_as_systemd_analyze_does():
    """*:07/25,52 from 23:57: minute 82 is the next day's 00:22, tm_within_bounds() resets only the hour, and
    00:07 never elapses (systemd 252); OnCalendar.wall_times leaves it out (a walk from 00:00 itself has it)."""
    assert _elapses("*:52,7/25", "UTC", "2026-06-01T23:50:00+00:00", 3) == [
        "06-01 23:52:00+0000", "06-01 23:57:00+0000", "06-02 00:32:00+0000"]
    rule = OnCalendar.parse("*:52,7/25")
    lo = int(dt.datetime(2026, 6, 1, 23, 50).replace(tzinfo=dt.timezone.utc).timestamp()) * US
    got = [_hm(int(t), "UTC") for t in rule.wall_times(lo, lo + 45 * 60 * US)]
    assert got == ["06-01 23:52:00+0000", "06-01 23:57:00+0000", "06-02 00:32:00+0000"]


def test_wall_times_equal_systemd_analyze_in_utc_for_random_expressions(report):
    """In a zone without DST changes calsim's wall times are systemd's elapses (rollover skips included), from
    a month after the base on (a walk started at the base elapses at what a running one steps over)."""
    exprs = random_expressions(400 if LONG else 120, seed=7)
    base = 1750000000 * US  # 2025-06-15
    warm = base + 40 * DAY * US
    got = oracle.calendar_many(exprs, "UTC", base, 1000)
    bad, n = [], 0
    for e in exprs:
        theirs = tuple(t for t in got[e] if t >= warm)
        if not theirs:
            continue
        ours = tuple(OnCalendar.parse(e).wall_times(warm, theirs[-1] + 1).tolist())
        n += len(theirs)
        if ours != theirs:
            bad.append(e)
    report.append(f"systemd OnCalendar= in UTC: {len(exprs)} random expressions, {n:,} elapses compared, "
                  f"{len(bad)} differ")
    assert not bad, bad[:5]


def test_a_walk_that_looks_ahead_across_a_change_fails_and_the_timer_stops_as_in_systemd():
    """*-*-* 0/14:00 in New York from 2026-03-07 14:00 EST: hour 28 is 03-08 04:00 EDT, its tm_isdst=1 then
    makes 00:00 normalise back to 23:00, and the walk fails ("Infinite loop"); the port agrees, and calsim.emulation
    walks it because the change lies within the walk's look-ahead (OnCalendar.walk_lookahead): every later time is
    dst_stuck:systemd, the timer has no next elapse."""
    zone = "America/New_York"
    assert _elapses("*-*-* 0/14:00", zone, "2026-03-07T12:00:00-05:00", 5) == ["03-07 14:00:00-0500"]
    clock = ZoneClock(tz_release(RELEASE).table(zone))
    rule = OnCalendar.parse("*-*-* 0/14:00")
    assert rule.walk_lookahead == 14 * 3600 and rule.next_after(clock, 1772910000) is None  # from 14:00 EST
    s = presets.systemd().apply(calsim.Schedule("l", zone, "2026-03-01T00:00", "OnCalendar=*-*-* 0/14:00"))
    f = calsim.expand(s, "2026-03-07T18:00Z", "2026-03-08T20:00Z", release=RELEASE)
    assert [(str(r["nominal_local"]), r["due_utc"] is not None, r["notes"]) for r in f.iter_rows(named=True)] == [
        ("2026-03-07 14:00:00", True, []), ("2026-03-08 00:00:00", False, ["dst_stuck:systemd"]),
        ("2026-03-08 14:00:00", False, ["dst_stuck:systemd"])]


# -- the walk from bases next to each change ------------------------------------------------------------------

def _bases(change: int) -> list[int]:
    step = 600 if LONG else 3600
    return list(range(change - 2 * 3600, change + 2 * 3600 + 1, step))


def _as_systemd_analyze(exprs: list[str], zone: str, base: int, n: int) -> dict[str, tuple[int, ...]]:
    """What one ``systemd-analyze calendar --iterations=n --base-time=@base exprs...`` process prints, as the
    port computes it: glibc's remembered mktime offset starts at 0 and passes from call to call and from one
    expression to the next; a zone suffix is computed in a child forked per call, which starts from the
    parent's offset and leaves it alone (calendarspec.c calendar_spec_next_usec)."""
    state, out = 0, {}
    for e in exprs:
        rule = OnCalendar.parse(e)
        clock = ZoneClock(tz_release(RELEASE).table(rule.zone or zone))
        got, t = [], base * US
        for _ in range(n):
            t = next_usec(rule, clock, t, offset=0 if rule.zone == "UTC" else state)
            if rule.zone is None:
                state = local_time(clock).offset
            if t is None:
                break
            got.append(t)
        out[e] = tuple(got)
    return out


def test_walk_from_bases_next_to_each_change_equals_systemd_analyze(report):
    """The walk from a base inside or next to a change (a timer that boots, resumes or triggers there) against
    systemd-analyze --base-time: 8 elapses of each expression, both passes of repeated hours included."""
    n, compared, bad = 8, 0, []
    for zone, change in CHANGES:
        for base in _bases(change):
            theirs = oracle.calendar_many(BASE_EXPRESSIONS, zone, base * US, n)
            ours = _as_systemd_analyze(BASE_EXPRESSIONS, zone, base, n)
            for e in BASE_EXPRESSIONS:
                compared += max(len(ours[e]), len(theirs[e]))
                if ours[e] != theirs[e]:
                    bad.append((zone, base, e, [_hm(t, zone) for t in ours[e]], [_hm(t, zone) for t in theirs[e]]))
    line = f"systemd OnCalendar= from bases next to the changes: {compared:,} elapses compared, {len(bad)} disagree"
    print("\n" + line)
    report.append(line)
    assert not bad, bad[:3]


def test_next_after_starts_from_the_offset_of_the_timers_own_previous_elapse():
    """OnCalendar.next_after (what calsim's expansion chains) assumes glibc last answered the base itself: from
    01:00 +01 on Casablanca's 2026-09-20 (a fall-back whose passes are both isdst=0) it stays in the first pass;
    a process whose mktime last answered a +00 time (systemd-analyze's first call) reads the second."""
    clock = ZoneClock(tz_release(RELEASE).table("Africa/Casablanca"))
    rule, base = OnCalendar.parse("*:0/15"), 1789862400  # 2026-09-20 00:00Z, 01:00 +01
    assert _hm(rule.next_after(clock, base) * US, "Africa/Casablanca") == "09-20 01:15:00+0100"
    assert _hm(next_usec(rule, clock, base * US, offset=0), "Africa/Casablanca") == "09-20 01:15:00+0000"
    assert oracle.calendar("*:0/15", "Africa/Casablanca", base * US, 1) == (
        next_usec(rule, clock, base * US, offset=0),)


# -- glibc's mktime, the clock the walk reads -----------------------------------------------------------------

def test_mktime_port_equals_glibc_on_call_sequences_that_carry_its_offset(report):
    """Random tm's near each change (fields out of range, tm_isdst -1, 0, 1) through one glibc process per zone
    and through calsim.tz.glibc.LocalTime, in the same order: the same answers, field for field."""
    rng = random.Random(36897)
    count = 0
    for zone in ZONES:
        g = LocalTime(tz_release(RELEASE).table(zone))
        near = [t for z, t in CHANGES if z == zone]
        lines, asked = [], []
        for _ in range(3000 if LONG else 600):
            tm = g.localtime(rng.choice(near) + rng.randint(-3 * 3600, 3 * 3600))[:6]
            k = rng.randrange(6)
            tm[k] += rng.choice([0, 0, 1, -1, 60, -60, 24, 13])
            tm.append(rng.choice([-1, -1, 0, 1]))
            lines.append("M " + " ".join(map(str, tm)))
            asked.append(tm)
        got = oracle.glibc_calls(lines, zone)
        for tm, real in zip(asked, got):
            r = g.mktime(list(tm))
            ours = [-1] if r is None else [r[0], *r[1]]
            assert ours == (real if real[0] != -1 else [-1]), f"{zone} mktime({tm}): calsim {ours}, glibc {real}"
            count += 1
    report.append(f"glibc mktime: {count:,} calls compared with calsim.tz.glibc ({oracle.glibc_version()})")


@pytest.mark.parametrize("zone", ["America/New_York", "Europe/Dublin", "Australia/Lord_Howe", "Pacific/Chatham"])
def test_the_period_in_force_at_a_transition_instant_is_the_new_one(zone):
    # mktime's guess (LocalTime.guess_for) and localtime read the period of an instant: at a transition's own
    # instant the new offset is in force (as zoneinfo, glibc's localtime_r and TZif say), one second before the old.
    from zoneinfo import ZoneInfo

    table = tz_release(RELEASE).table(zone)
    g, z = LocalTime(table), ZoneInfo(zone)
    changes = [t for t in table.utc.tolist() if 1767225600 <= t < 1798761600]  # 2026
    assert len(changes) == 2
    for t in changes:
        for s in (t - 1, t):
            want = dt.datetime.fromtimestamp(s, z)
            assert g.period(s) == (int(want.utcoffset().total_seconds()), int(bool(want.dst()))), (zone, s)
