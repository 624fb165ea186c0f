"""``calsim.emulation`` and ``calsim.tz.clock`` unit by unit: the clock a ported walk reads, and the shortcut
that fires a scheduler's walk in columns except next to transitions.

The reference for the clock is Python's own calendar (``datetime``) and ``zoneinfo`` reading the same tz
release. The reference for the shortcut is the walk called at every step: :func:`fire_chain` and
:func:`calsim.expand` of a ``gap``/``fold="scheduler"`` schedule must give exactly the fires a scheduler gets
by asking its ``next_after`` again and again. The walk used is the robfig port (``calsim.rules.robfig``,
compared with the real robfig/cron in ``tests/rules/test_robfig.py``), or a fake one where the shortcut's own
bookkeeping (stall, rejoin, extra fires) is what is pinned.
"""

from __future__ import annotations

import datetime as dt
import functools
import types

import numpy as np
import polars as pl
import pytest

import calsim
from calsim.emulation import EXTRA, FIRST_PASS, LOST, SECOND_PASS, STUCK, _Reach, emulated_rows, fire_chain, walk_start
from calsim.rules.cron import Cron
from calsim.rules.robfig import RobfigCron
from calsim.tz.clock import ZoneClock, civil, wall_seconds

RELEASE = "2026f"
UTC = dt.timezone.utc
US = 1_000_000
T2026 = int(dt.datetime(2026, 1, 1, tzinfo=UTC).timestamp())
T2027 = int(dt.datetime(2027, 1, 1, tzinfo=UTC).timestamp())
EPOCH = dt.datetime(1970, 1, 1)


def utc_s(text: str) -> int:
    """UTC seconds of an ISO instant (``...Z``)."""
    return int(dt.datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp())


def wall_us(text: str) -> int:
    """Wall-clock µs of a naive ISO time."""
    return int((dt.datetime.fromisoformat(text) - EPOCH) / dt.timedelta(microseconds=1))


@functools.cache
def table(zone: str):
    return calsim.release(RELEASE).table(zone)


def clock(zone: str) -> ZoneClock:
    return ZoneClock(table(zone))


def transitions_2026(zone: str) -> list[int]:
    utc = table(zone).utc
    return [int(t) for t in utc[(utc >= T2026) & (utc < T2027)]]


def _iso(t: int) -> str:
    return dt.datetime.fromtimestamp(t, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


# -- the clock -------------------------------------------------------------------------------------------------------

LENIENT = [  # (fields given, the calendar time they normalise to): Go's time.Date, Java's lenient calendar, mktime
    ((2026, 13, 1), dt.datetime(2027, 1, 1)),
    ((2026, 12, 1), dt.datetime(2026, 12, 1)),
    ((2026, 0, 1), dt.datetime(2025, 12, 1)),
    ((2026, -11, 1), dt.datetime(2025, 1, 1)),
    ((2026, 25, 1), dt.datetime(2028, 1, 1)),
    ((2026, 1, 32), dt.datetime(2026, 2, 1)),
    ((2026, 3, 0), dt.datetime(2026, 2, 28)),
    ((2024, 3, 0), dt.datetime(2024, 2, 29)),
    ((2026, 1, 1, 24), dt.datetime(2026, 1, 2)),
    ((2026, 1, 1, 0, -1), dt.datetime(2025, 12, 31, 23, 59)),
    ((2026, 12, 31, 23, 59, 60), dt.datetime(2027, 1, 1)),
    ((1969, 12, 31, 23, 59, 59), dt.datetime(1969, 12, 31, 23, 59, 59)),
]


@pytest.mark.parametrize("fields, want", LENIENT)
def test_wall_seconds_normalises_out_of_range_fields_leniently(fields, want):
    assert wall_seconds(*fields) == (want - EPOCH) // dt.timedelta(seconds=1)


def test_civil_gives_the_calendar_fields_and_crons_weekday_sunday_zero():
    for wall in range(-86400 * 800, 86400 * 25_000, 86400 * 13 + 3671):  # 1967 .. 2038, every hour of the day met
        d = EPOCH + dt.timedelta(seconds=wall)
        assert civil(wall) == (d.year, d.month, d.day, d.hour, d.minute, d.second, d.isoweekday() % 7), d
    assert civil(wall_seconds(2026, 3, 8))[6] == 0  # a Sunday


def test_civil_inverts_wall_seconds():
    for wall in range(-86400 * 400, 86400 * 20_000, 86400 * 7 + 59):
        assert wall_seconds(*civil(wall)[:6]) == wall


def test_a_period_begins_at_its_transition_and_ends_before_the_next():
    c = clock("America/New_York")
    spring, fall = utc_s("2026-03-08T07:00Z"), utc_s("2026-11-01T06:00Z")
    assert c.period(spring) == (-14400, spring, fall)
    assert c.period(fall - 1) == (-14400, spring, fall)
    assert c.period(spring - 1)[0] == -18000 and c.period(spring - 1)[2] == spring
    assert c.period(fall)[:2] == (-18000, fall)


def test_the_offset_and_fields_at_a_transition_instant_are_the_new_ones():
    c = clock("America/New_York")
    spring = utc_s("2026-03-08T07:00Z")
    assert c.offset(spring) == -14400 and c.offset(spring - 1) == -18000
    assert c.fields(spring) == (2026, 3, 8, 3, 0, 0, 0)
    assert c.fields(spring - 1) == (2026, 3, 8, 1, 59, 59, 0)


@pytest.mark.parametrize("zone", ["America/New_York", "Europe/Dublin", "Australia/Lord_Howe", "Pacific/Chatham",
                                  "Asia/Beirut", "America/Santiago"])
def test_offsets_and_fields_are_zoneinfos_around_every_2026_transition(zone):
    c, z = clock(zone), calsim.release(RELEASE).zone(zone)
    for tau in transitions_2026(zone):
        for d in (-3601, -3600, -1800, -1, 0, 1, 1799, 3599, 3600):
            local = dt.datetime.fromtimestamp(tau + d, z)
            assert c.offset(tau + d) == local.utcoffset() // dt.timedelta(seconds=1)
            assert c.fields(tau + d) == (local.year, local.month, local.day, local.hour, local.minute, local.second,
                                         local.isoweekday() % 7)


def test_a_zone_without_transitions_has_one_endless_period():
    c = clock("UTC")
    assert c.period(0) == (0, -2**62, 2**62)
    assert c.transitions(-2**40, 2**40) == []


def test_transitions_lists_those_in_a_half_open_span():
    c = clock("America/New_York")
    spring, fall = utc_s("2026-03-08T07:00Z"), utc_s("2026-11-01T06:00Z")
    assert c.transitions(spring, fall) == [spring]
    assert c.transitions(spring, fall + 1) == [spring, fall]
    assert c.transitions(spring + 1, fall) == []


# -- a transition's reach --------------------------------------------------------------------------------------------

def stub_table(utc: list[int], offsets: list[int]):
    return types.SimpleNamespace(utc=np.array(utc, np.int64), offsets=np.array(offsets, np.int64))


def test_a_transitions_reach_is_its_offset_change_either_side_of_it():
    T = 10**9
    reach = _Reach(stub_table([T], [0, 3600]))
    assert reach.meets(T - 3700, T - 3600)  # a step ending where the reach starts meets it
    assert not reach.meets(T - 3700, T - 3601)
    assert reach.meets(T + 3599, T + 9000)
    assert not reach.meets(T + 3600, T + 9000)  # a step from where the reach ends does not
    a = np.array([T - 3700, T - 3700, T + 3599, T + 3600])
    b = np.array([T - 3600, T - 3601, T + 9000, T + 9000])
    assert reach.meets(a, b).tolist() == [True, False, True, False]


def test_a_half_hour_change_reaches_half_an_hour():
    T = 10**9
    reach = _Reach(stub_table([T], [37800, 39600]))
    assert reach.meets(T - 1800, T - 1700) and not reach.meets(T - 3600, T - 1801)
    assert reach.meets(T + 1700, T + 1799) and not reach.meets(T + 1800, T + 3600)


def test_overlapping_reaches_keep_the_longest_one():
    # A one-hour change, then a one-minute one ten minutes later: a step 20 minutes after the first is still
    # within its reach, though after the second one's.
    T = 10**9
    reach = _Reach(stub_table([T, T + 600], [0, 3600, 3660]))
    assert reach.meets(T + 1200, T + 1300)
    assert reach.meets(np.array([T + 1200]), np.array([T + 1300])).tolist() == [True]


def test_a_zone_without_transitions_is_out_of_every_reach():
    reach = _Reach(stub_table([], [0]))
    assert reach.meets(0, 10**9) is False
    assert reach.meets(np.array([0, 1]), np.array([5, 6])).tolist() == [False, False]


# -- fire_chain, with a fake walk --------------------------------------------------------------------------------------

HOUR = 3600
T0 = 10**9 - 10**9 % HOUR
IDEAL = np.arange(T0, T0 + 48 * HOUR, HOUR, dtype=np.int64)  # hourly, 48 instants
TAU = T0 + 20 * HOUR + 1800  # one transition, an hour's change, between the 20th and 21st instants


class Walk:
    """A scheduler's walk: the next ideal instant, except where ``special`` says otherwise; counts its calls."""

    def __init__(self, special: dict[int, int | None] | None = None):
        self.special = special or {}
        self.calls: list[int] = []

    def __call__(self, t: int) -> int | None:
        self.calls.append(t)
        if t in self.special:
            return self.special[t]
        k = int(np.searchsorted(IDEAL, t, side="right"))
        return int(IDEAL[k]) if k < len(IDEAL) else None


def reach_one() -> _Reach:
    return _Reach(stub_table([TAU], [0, HOUR]))


def test_the_chain_calls_the_walk_only_for_steps_that_meet_a_reach():
    walk = Walk()
    fires, stalled = fire_chain(IDEAL, reach_one(), walk, int(IDEAL[0]) - 1, int(IDEAL[-1]) + 1)
    assert fires.tolist() == IDEAL.tolist() and stalled is None
    # The reach is [19:30, 21:30) (T0 + ...): the steps into 20:00, 21:00 and 22:00 meet it, asked from 19, 20, 21.
    assert walk.calls == [int(IDEAL[k]) for k in (19, 20, 21)]


def test_the_chain_takes_the_walks_own_times_next_to_a_transition_and_rejoins_the_calendar():
    lost, extra = int(IDEAL[21]), int(IDEAL[21]) + 1800  # the walk skips the 21st instant for a time of its own
    walk = Walk({int(IDEAL[20]): extra, extra: int(IDEAL[22])})
    fires, stalled = fire_chain(IDEAL, reach_one(), walk, int(IDEAL[0]) - 1, int(IDEAL[-1]) + 1)
    assert stalled is None
    assert fires.tolist() == [*IDEAL[:21].tolist(), extra, *IDEAL[22:].tolist()]
    assert lost not in fires.tolist()


def test_a_clear_step_from_the_walks_own_time_is_taken_without_the_walk():
    # A 10-minute change at 20:10 reaches [20:00, 20:20): the calendar steps into 20:00 and 21:00 both meet it.
    # The walk from 19:00 gives a time of its own, 20:50; the step from there to 21:00 is clear: no call.
    tau = T0 + 20 * HOUR + 600
    reach = _Reach(stub_table([tau], [0, 600]))
    own = int(IDEAL[20]) + 3000  # 20:50, after the reach
    walk = Walk({int(IDEAL[19]): own})
    fires, _ = fire_chain(IDEAL, reach, walk, int(IDEAL[0]) - 1, int(IDEAL[-1]) + 1)
    assert fires.tolist() == [*IDEAL[:20].tolist(), own, *IDEAL[21:].tolist()]
    assert walk.calls == [int(IDEAL[19])]


def test_a_walk_that_stops_moving_stalls_the_chain_and_that_time_is_no_fire():
    x = int(IDEAL[21])
    walk = Walk({x: x})  # Next(X) == X
    fires, stalled = fire_chain(IDEAL, reach_one(), walk, int(IDEAL[0]) - 1, int(IDEAL[-1]) + 1)
    assert stalled == x
    assert fires.tolist() == IDEAL[:21].tolist()


def test_a_walk_that_gives_up_stalls_the_chain_just_after_its_last_fire():
    walk = Walk({int(IDEAL[20]): None})  # robfig's zero time, systemd's "Infinite loop in calendar calculation"
    fires, stalled = fire_chain(IDEAL, reach_one(), walk, int(IDEAL[0]) - 1, int(IDEAL[-1]) + 1)
    assert fires.tolist() == IDEAL[:21].tolist() and stalled == int(IDEAL[20]) + 1


def test_a_walk_that_reads_past_its_answer_is_asked_when_a_transition_lies_within_that_look_ahead():
    # The reach [19:30, 21:30) lies after the steps into 10:00 .. 19:00; a walk that reads the clock 3 h past its
    # answer (systemd's probe of a repetition past its unit) is asked from 16:00 on, one that does not from 19:00.
    plain, ahead = Walk(), Walk()
    for walk, lookahead in ((plain, 0), (ahead, 3 * HOUR)):
        fires, _ = fire_chain(IDEAL, reach_one(), walk, int(IDEAL[0]) - 1, int(IDEAL[-1]) + 1, lookahead)
        assert fires.tolist() == IDEAL.tolist()
    assert plain.calls == [int(IDEAL[k]) for k in (19, 20, 21)]
    assert ahead.calls == [int(IDEAL[k]) for k in range(16, 22)]


def test_the_first_step_from_the_walks_start_is_checked_too():
    # The walk starts just before the reach: its first step is the walk's own.
    start = TAU - HOUR - 1
    first = int(IDEAL[21]) + 900
    walk = Walk({start: first})
    fires, _ = fire_chain(IDEAL, reach_one(), walk, start, int(IDEAL[-1]) + 1)
    assert fires.tolist()[:2] == [first, int(IDEAL[22])]
    assert walk.calls[0] == start


# -- emulated_rows, with a fake rule -----------------------------------------------------------------------------------

OCTOBER = [utc_s(f"2026-10-{d:02d}T05:00Z") for d in range(1, 32)]  # 01:00 EDT
NOVEMBER = [utc_s(f"2026-11-{d:02d}T06:00Z") for d in range(2, 20)]  # 01:00 EST
FIRST, SECOND = utc_s("2026-11-01T05:00Z"), utc_s("2026-11-01T06:00Z")  # 01:00 on the fall-back day, both passes


class FakeRule:
    """``0 1 * * *`` in New York whose walk fires ``fires`` (UTC seconds), whatever the calendar says."""

    emulates = "fake"
    cron = Cron.parse("0 1 * * *")

    def __init__(self, fires):
        self.fires = sorted(fires)

    def wall_times(self, lo, hi):
        return self.cron.wall_times(lo, hi)

    def next_after(self, clk, t):
        k = int(np.searchsorted(self.fires, t, side="right"))
        return self.fires[k] if k < len(self.fires) else None


class StallingRule(FakeRule):
    """:class:`FakeRule` whose walk stops moving at ``stall``: ``next_after(stall) == stall``."""

    def __init__(self, fires, stall):
        super().__init__(fires)
        self.stall = stall

    def next_after(self, clk, t):
        return t if t == self.stall else super().next_after(clk, t)


def fake_rows(fires, rule=None) -> list[tuple[str, int, int, int | None]]:
    """(wall time, fold, kind, UTC seconds or None) of the rows of 2026-10-31 .. 11-02 01:00 as ``fires`` walk."""
    walls = Cron.parse("0 1 * * *").wall_times(wall_us("2026-10-31T00:00"), wall_us("2026-11-03T00:00"))
    r = emulated_rows(rule or FakeRule(fires), table("America/New_York"), walls, wall_us("2026-10-31T00:00"),
                      utc_s("2026-11-02T12:00Z") * US, None)
    n = len(r.due)
    fold = np.zeros(n, int) if r.fold is None else r.fold
    has = np.ones(n, bool) if r.has_due is None else r.has_due
    assert r.note_vocab[LOST - 1:EXTRA] == ("dst_lost:fake", "dst_extra:fake")  # kind k's note is note_vocab[k - 1]
    assert r.note_vocab[FIRST_PASS - 1:SECOND_PASS] == ("dst_fold_first", "dst_fold_second")
    return [(str(np.datetime64(int(w), "us").astype("datetime64[m]")), int(f), int(k), int(d // US) if h else None)
            for w, f, k, d, h in zip(r.wall, fold, r.kind, r.due, has)]


def test_an_extra_fire_gets_a_row_of_its_own_with_its_wall_time_and_fold():
    # The walk skips both passes of 01:00 on the fall-back day and fires 01:30 EST (the second pass) instead.
    got = fake_rows(OCTOBER + [utc_s("2026-11-01T06:30Z")] + NOVEMBER)
    assert got == [
        ("2026-10-31T01:00", 0, 0, utc_s("2026-10-31T05:00Z")),
        ("2026-11-01T01:00", 0, LOST, None),
        ("2026-11-01T01:00", 1, LOST, None),
        ("2026-11-02T01:00", 0, 0, utc_s("2026-11-02T06:00Z")),
        ("2026-11-01T01:30", 1, EXTRA, utc_s("2026-11-01T06:30Z")),
    ]


def test_a_repeated_time_fired_in_its_first_pass_only_says_so():
    got = fake_rows(OCTOBER + [FIRST] + NOVEMBER)
    assert got[1:3] == [("2026-11-01T01:00", 0, FIRST_PASS, FIRST), ("2026-11-01T01:00", 1, LOST, None)]


def test_a_repeated_time_fired_in_its_second_pass_only_says_so():
    got = fake_rows(OCTOBER + [SECOND] + NOVEMBER)
    assert got[1:3] == [("2026-11-01T01:00", 0, LOST, None), ("2026-11-01T01:00", 1, SECOND_PASS, SECOND)]


def test_the_instant_a_walk_stalls_at_is_stuck_itself_and_so_is_every_row_after_it():
    # Next(FIRST) == FIRST: FIRST is no fire (the scheduler never gets past it), and it is the first stuck row.
    fires = OCTOBER + [FIRST, SECOND] + NOVEMBER
    got = fake_rows(fires, StallingRule(fires, FIRST))
    assert got[0][2:] == (0, utc_s("2026-10-31T05:00Z"))
    assert [row[2:] for row in got[1:]] == [(STUCK, None)] * 3


def test_a_repeated_time_fired_in_both_passes_keeps_its_fold_rows():
    got = fake_rows(OCTOBER + [FIRST, SECOND] + NOVEMBER)
    assert got[1:3] == [("2026-11-01T01:00", 0, 2, FIRST), ("2026-11-01T01:00", 1, 2, SECOND)]


# -- the walk's start and the expansion, against the walk called at every step ---------------------------------------

def robfig(spec: str) -> RobfigCron:
    return RobfigCron.parse(spec)


def test_the_walk_starts_at_the_latest_time_two_clean_steps_reach():
    # 0 2 * * * in New York: 03-07 02:00 EST -> 03-09 02:00 EDT crosses the spring change (no 03-08 02:00); the
    # step 03-09 -> 03-10 is clean but one clean step after a perturbed one is not enough: 03-07 it is.
    tab = table("America/New_York")
    start = walk_start(robfig("0 2 * * *"), tab, _Reach(tab), wall_us("2026-03-11T00:00"), None)
    assert start == utc_s("2026-03-07T07:00Z")


def test_the_walk_starts_at_the_last_time_when_the_steps_before_it_are_clean():
    tab = table("America/New_York")
    start = walk_start(robfig("0 2 * * *"), tab, _Reach(tab), wall_us("2026-03-20T00:00"), None)
    assert start == utc_s("2026-03-19T06:00Z")


def test_a_schedule_starting_at_a_fire_next_to_a_transition_fires_it():
    # Lord Howe 2026-10-04: 02:00 -> 02:30. The walk of a schedule starting at 00:00 begins just before it.
    s = calsim.Schedule("j", "Australia/Lord_Howe", "2026-10-04T00:00", "robfig:0 0 * * *", gap="scheduler",
                        fold="scheduler")
    f = calsim.expand(s, "2026-10-02T00:00Z", "2026-10-07T00:00Z", release=RELEASE)
    got = [(r["nominal_local"].strftime("%m-%d"), r["due_utc"] is not None, r["notes"])
           for r in f.iter_rows(named=True)]
    assert got == [("10-04", True, []), ("10-05", False, ["dst_lost:robfig"]), ("10-06", True, []),
                   ("10-07", True, [])]


def test_rows_from_a_stall_on_are_stuck_and_have_no_instant():
    # Chatham 2026-04-05, 03:45 -> 02:45: Next() from 03:50 of the first pass returns that same instant.
    s = calsim.Schedule("j", "Pacific/Chatham", "2026-03-01T00:00", "robfig:50 3 * * *", gap="scheduler",
                        fold="scheduler")
    f = calsim.expand(s, "2026-04-02T00:00Z", "2026-04-08T00:00Z", release=RELEASE)
    got = [(r["nominal_local"].strftime("%m-%d"), r["fold"], r["due_utc"] is not None, r["notes"])
           for r in f.iter_rows(named=True)]
    i = next(k for k, row in enumerate(got) if row[3] != [])
    assert got[i][0] == "04-05" and all(row[2] is False and row[3] == ["dst_stuck:robfig"] for row in got[i:])
    assert all(row[2] and row[3] == [] for row in got[:i])


def test_a_window_after_a_stall_sees_it():
    s = calsim.Schedule("j", "Pacific/Chatham", "2026-03-01T00:00", "robfig:50 3 * * *", gap="scheduler",
                        fold="scheduler")
    f = calsim.expand(s, "2026-05-01T00:00Z", "2026-05-03T00:00Z", release=RELEASE)
    assert f["due_utc"].null_count() == len(f) > 0
    assert set(f["notes"].list.first().to_list()) == {"dst_stuck:robfig"}


def walk_chain(rule: RobfigCron, zone: str, start: int, until: int) -> list[int]:
    """The fires a scheduler running since ``start`` gets by calling ``next_after`` at every step (a stall ends it)."""
    c, out, t = clock(zone), [], start
    while True:
        x = rule.next_after(c, t)
        if x is None or x >= until:
            return out
        if x <= t:  # stalled at t: no fire there, nothing after
            return out[:-1] if out and out[-1] == t else out
        out.append(x)
        t = x


def calsim_fires(spec: str, zone: str, lo: int, hi: int, since: int) -> list[int]:
    s = calsim.Schedule("j", zone, _iso(since), "robfig:" + spec, gap="scheduler", fold="scheduler")
    f = calsim.expand(s, _iso(lo), _iso(hi), release=RELEASE)
    return f.filter(pl.col("due_utc").is_not_null())["due_utc"].dt.epoch("s").to_list()


SPECS = ("0 0 * * *", "30 1 * * *", "45 2 * * *", "50 3 * * *", "30,45 1 * * *", "*/20 1-3 * * *", "0 12 29 * *",
         "0 12 * * 0")


@pytest.mark.parametrize("zone", ["Australia/Lord_Howe", "Asia/Beirut", "Pacific/Chatham", "America/New_York"])
def test_expansion_is_the_walk_called_at_every_step_in_windows_next_to_each_transition(zone, report):
    n = 0
    for spec in SPECS:
        rule = robfig(spec)
        for tau in transitions_2026(zone):
            since = tau - 86400 * 40
            want_all = walk_chain(rule, zone, since, tau + 86400 * 3)
            for lo in (tau - 3600, tau + 1800):
                want = [t for t in want_all if lo <= t < lo + 2 * 86400]
                got = calsim_fires(spec, zone, lo, lo + 2 * 86400, since + 1)
                assert got == want, (spec, zone, _iso(lo), [_iso(t) for t in sorted(set(got) ^ set(want))])
                n += len(want)
    report.append(f"emulation shortcut vs the robfig port called at every step ({zone}): {n} fires, 0 disagreements")
