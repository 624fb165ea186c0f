"""The one ordered loop's rules decided when the event loop and the worker loop merged (issue 27, ADR 0002).

Each case is pinned by hand on the scheduler-level path (``capacity`` is the
scheduler's own slots) and checked equal on both settle paths.
"""

from __future__ import annotations

import datetime as dt

import polars as pl

import calsim

UTC = dt.timezone.utc


def at(text: str) -> dt.datetime:
    return dt.datetime.fromisoformat(text).replace(tzinfo=UTC)


def settled(sc: calsim.Scenario) -> pl.DataFrame:
    a = calsim.simulate(sc, progress=False).frame
    b = calsim.simulate(sc, progress=False, settle="events").frame
    assert a.equals(b)
    return a.filter(pl.col("kind") == "scheduled")


def one(f: pl.DataFrame, schedule: str, nominal: str) -> dict:
    return f.filter((pl.col("schedule_id") == schedule)
                    & (pl.col("nominal_local") == dt.datetime.fromisoformat(nominal))).row(0, named=True)


def daily(id: str, **policy) -> calsim.Schedule:
    return calsim.Schedule(id, "UTC", "2026-01-01T00:00", "FREQ=DAILY;COUNT=1", policy=calsim.Policy(**policy))


def test_a_run_waiting_for_a_slot_past_its_max_lateness_expires_when_it_gets_one():
    """APScheduler checks misfire_grace_time when an executor runs the job (executors/base.py run_job)."""
    sc = calsim.Scenario("x", [daily("a", duration="2h"), daily("b", duration="5min", max_lateness="1h")],
                         "2026-01-01T00:00Z", "2026-01-02T00:00Z", capacity=1)
    f = settled(sc)
    assert one(f, "a", "2026-01-01T00:00")["started_utc"] == at("2026-01-01T00:00")
    b = one(f, "b", "2026-01-01T00:00")
    assert (b["state"], b["reason"], b["started_utc"]) == ("expired", "max_lateness", None)


def test_the_same_run_within_its_max_lateness_starts_when_it_gets_a_slot():
    sc = calsim.Scenario("x", [daily("a", duration="2h"), daily("b", duration="5min", max_lateness="3h")],
                         "2026-01-01T00:00Z", "2026-01-02T00:00Z", capacity=1)
    b = one(settled(sc), "b", "2026-01-01T00:00")
    assert (b["state"], b["started_utc"]) == ("done", at("2026-01-01T02:00"))


def test_a_buffered_run_released_past_its_max_lateness_still_starts():
    """Temporal checks the catch-up window only when a time is buffered: a buffered start always goes."""
    s = calsim.Schedule("h", "UTC", "2026-01-01T00:00", "FREQ=HOURLY;COUNT=3",
                        policy=calsim.Policy(duration="3h", overlap="buffer_one", max_lateness="1h"))
    f = settled(calsim.Scenario("x", [s], "2026-01-01T00:00Z", "2026-01-02T00:00Z", capacity=2))
    first = one(f, "h", "2026-01-01T01:00")
    assert (first["state"], first["started_utc"]) == ("done", at("2026-01-01T03:00"))
    assert (one(f, "h", "2026-01-01T02:00")["state"], one(f, "h", "2026-01-01T02:00")["reason"]) == \
        ("skipped", "overlap")


def test_the_schedulers_slots_serve_their_queue_when_it_is_up_again():
    """A run ending while the scheduler is down frees its slot; the queued run starts at the come-back."""
    sc = calsim.Scenario("x", [daily("a", duration="1h"), daily("b", duration="5min")],
                         "2026-01-01T00:00Z", "2026-01-02T00:00Z", capacity=1,
                         outages=[calsim.Outage("2026-01-01T00:30Z", "2026-01-01T02:00Z")])
    b = one(settled(sc), "b", "2026-01-01T00:00")
    assert (b["state"], b["started_utc"]) == ("done", at("2026-01-01T02:00"))


def test_equal_aged_priorities_go_first_queued_first():
    """The queue for a slot is a FIFO per priority level: queued at 00:00 goes before queued at 00:30."""
    late = calsim.Schedule("late", "UTC", "2026-01-01T00:30", "FREQ=DAILY;COUNT=1",
                           policy=calsim.Policy(duration="5min"))
    sc = calsim.Scenario("x", [daily("a", duration="2h"), daily("z", duration="5min"), late],
                         "2026-01-01T00:00Z", "2026-01-02T00:00Z", capacity=1)
    f = settled(sc)
    assert one(f, "z", "2026-01-01T00:00")["started_utc"] == at("2026-01-01T02:00")
    assert one(f, "late", "2026-01-01T00:30")["started_utc"] == at("2026-01-01T02:05")


def test_at_one_instant_runs_arrive_by_schedule_then_due():
    """A wake-up submits each schedule's backlog together: with one slot, the first schedule's whole backlog
    (zero-length runs) goes before the second schedule's first run."""
    fleet = [calsim.Schedule(k, "UTC", "2026-01-01T00:00", "FREQ=MINUTELY;INTERVAL=20;COUNT=3",
                             policy=calsim.Policy(duration=d)) for k, d in (("a", "0s"), ("b", "30min"))]
    sc = calsim.Scenario("x", fleet, "2026-01-01T00:00Z", "2026-01-02T00:00Z", capacity=1,
                         outages=[calsim.Outage("2026-01-01T00:01Z", "2026-01-01T01:00Z")])
    f = settled(sc)
    assert f.filter(pl.col("schedule_id") == "a")["started_utc"].to_list() == [at("2026-01-01T00:00"),
                                                                           *[at("2026-01-01T01:00")] * 2]
    assert one(f, "b", "2026-01-01T00:20")["started_utc"] == at("2026-01-01T01:00")


def test_a_newer_time_takes_the_blocked_ones_place_under_buffer_latest():
    """Kubernetes' Forbid: the sync after a Job ends starts the most recent unmet time. 90-min runs hourly: 01:00
    waits for 00:00 and runs 01:30-03:00; 02:00 waits for it, and 03:00, due when it ends, replaces 02:00."""
    s = calsim.Schedule("h", "UTC", "2026-01-01T00:00", "FREQ=HOURLY;COUNT=4",
                        policy=calsim.Policy(duration="90min", overlap="buffer_latest"))
    f = settled(calsim.Scenario("x", [s], "2026-01-01T00:00Z", "2026-01-02T00:00Z"))
    assert one(f, "h", "2026-01-01T01:00")["started_utc"] == at("2026-01-01T01:30")
    blocked = one(f, "h", "2026-01-01T02:00")
    assert (blocked["state"], blocked["reason"]) == ("skipped", "overlap")
    assert one(f, "h", "2026-01-01T03:00")["started_utc"] == at("2026-01-01T03:00")


def test_a_backlog_in_turn_whose_first_run_is_refused_is_refused_with_it():
    """Budget 1 a day, on_budget="skip": the 00:00 run spends it; the come-back's backlog (01:00, 02:00, run in
    turn) is one submission, refused for budget, so 02:00 is skipped for budget too (not left waiting its turn)."""
    s = calsim.Schedule("h", "UTC", "2026-01-01T00:00", "FREQ=HOURLY;COUNT=3",
                        policy=calsim.Policy(duration="5min", backlog="in_turn", account="t", cost=1.0,
                                             on_budget="skip"))
    f = settled(calsim.Scenario("x", [s], "2026-01-01T00:00Z", "2026-01-01T12:00Z",
                                budgets=[calsim.Budget("t", 1, "day", "UTC")],
                                outages=[calsim.Outage("2026-01-01T00:30Z", "2026-01-01T02:30Z")]))
    assert [(r["state"], r["reason"]) for r in f.sort("nominal_local").iter_rows(named=True)] == [
        ("done", None), ("skipped", "budget"), ("skipped", "budget")]


def test_every_run_ending_at_an_instant_frees_its_slot_before_the_queue_is_served():
    """Two slots. A (00:00-01:00) and B's 00:00 run (00:30-01:00, skip) end together at 01:00, when B's 00:10 run
    (queued at 00:10), Z (00:20) and W (00:25) wait. Both ends first: B's 00:10 run finds no B run going and
    starts with Z; served at A's end alone, it would find B's first run still going and lose its turn to W."""
    fleet = [daily("a", duration="60min"), daily("ab", duration="30min"),  # (ids in pick order: a, ab, b)
             calsim.Schedule("b", "UTC", "2026-01-01T00:00", "FREQ=MINUTELY;INTERVAL=10;COUNT=2",
                             policy=calsim.Policy(duration="30min", overlap="skip")),
             calsim.Schedule("z", "UTC", "2026-01-01T00:20", "FREQ=DAILY;COUNT=1",
                             policy=calsim.Policy(duration="30min")),
             calsim.Schedule("w", "UTC", "2026-01-01T00:25", "FREQ=DAILY;COUNT=1",
                             policy=calsim.Policy(duration="30min"))]
    f = settled(calsim.Scenario("x", fleet, "2026-01-01T00:00Z", "2026-01-02T00:00Z", capacity=2))
    assert one(f, "b", "2026-01-01T00:00")["started_utc"] == at("2026-01-01T00:30")
    assert one(f, "b", "2026-01-01T00:10")["started_utc"] == at("2026-01-01T01:00")
    assert one(f, "z", "2026-01-01T00:20")["started_utc"] == at("2026-01-01T01:00")
    assert one(f, "w", "2026-01-01T00:25")["started_utc"] == at("2026-01-01T01:30")


def test_a_zero_length_run_is_over_before_the_next_run_of_its_schedule_leaves_the_queue():
    """Capacity 1, held by ``a`` from 00:00 to 01:00. ``z`` (every 20 min, no duration, ``skip``) queues 00:00,
    00:20 and 00:40. At 01:00 the slot serves them in order: each is over at the instant it starts (a finish
    at t is over for the next pick at t), so none overlaps the one before it and all three start at 01:00."""
    z = calsim.Schedule("z", "UTC", "2026-01-01T00:00", "FREQ=MINUTELY;INTERVAL=20;COUNT=4",
                        policy=calsim.Policy(overlap="skip"))
    f = settled(calsim.Scenario("x", [daily("a", duration="1h"), z], "2026-01-01T00:00Z", "2026-01-02T00:00Z",
                                capacity=1))
    for nominal in ("00:00", "00:20", "00:40", "01:00"):
        row = one(f, "z", f"2026-01-01T{nominal}")
        assert (row["state"], row["started_utc"]) == ("done", at("2026-01-01T01:00")), nominal
